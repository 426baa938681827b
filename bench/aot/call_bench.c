/* Per-call time of an attn-aot cpu kernel (sdpa f32, B 1, H 12, D 64,
 * Tq = Tk = T) with the output written in place (the caller's buffer is the
 * kernel's destination) against the output computed apart and copied in (the
 * output given aliases Q, so attn_aot_call passes no destination), the two
 * alternating in one process. Built and run by bench/aot/run_call_bench.sh. */
#include "sdpa.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int64_t T = argc > 1 ? atoll(argv[1]) : 512, n = 12 * T * 64;
  int rounds = argc > 2 ? atoi(argv[2]) : 7, calls = argc > 3 ? atoi(argv[3]) : 20;
  float *q = malloc(4 * n), *k = malloc(4 * n), *v = malloc(4 * n), *o = malloc(4 * n);
  for (int64_t i = 0; i < n; i++) {
    q[i] = (float)((i * 7919) % 1000) / 1000 - 0.5f;
    k[i] = (float)((i * 104729) % 1000) / 1000 - 0.5f;
    v[i] = (float)((i * 1299709) % 1000) / 1000 - 0.5f;
    o[i] = 0;
  }
  attn_tensor in[3] = {{q, 4, {1, 12, T, 64}}, {k, 4, {1, 12, T, 64}}, {v, 4, {1, 12, T, 64}}};
  double med[2][64];
  for (int r = 0; r < rounds && r < 64; r++)
    for (int mode = 0; mode < 2; mode++) {
      /* mode 0: into o (a destination); mode 1: into q (overlaps an input). */
      attn_tensor out[1] = {{mode ? q : o, 4, {1, 12, T, 64}}};
      double t[256];
      for (int c = 0; c < calls && c < 256; c++) {
        double t0 = now_ms();
        if (sdpa(in, out) != ATTN_AOT_OK) {
          fprintf(stderr, "call failed: %s\n", attn_aot_last_error());
          return 1;
        }
        t[c] = now_ms() - t0;
      }
      qsort(t, calls, sizeof t[0], cmp);
      med[mode][r] = t[calls / 2];
    }
  qsort(med[0], rounds, sizeof(double), cmp);
  qsort(med[1], rounds, sizeof(double), cmp);
  printf("T %lld: in place %.3f ms, copied %.3f ms, ratio %.3f (medians of %d rounds of %d calls)\n",
         (long long)T, med[0][rounds / 2], med[1][rounds / 2], med[0][rounds / 2] / med[1][rounds / 2],
         rounds, calls);
  return 0;
}
