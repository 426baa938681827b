/* Ring attention compiled ahead of time (attn-aot --pipeline=ring) and run
 * under mpirun: every rank makes the same whole inputs, passes its zigzag
 * share to the ring kernel, rank 0 gathers the output shares, puts them
 * back in order and compares them with the single-node kernel (attn-aot
 * --pipeline=cpu of the same function) run on the whole inputs.
 * Prints "max_abs_error E over N ranks" on rank 0; exit 1 on a mismatch. */
#include "ring_sdpa.h"
#include "single_sdpa.h"

#include <mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 1, H = 4, T = 256, D = 32 };

static float value(uint64_t i, uint64_t which) {
  uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull + which * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
  return (float)((z >> 40) & 0xFFFF) / 32768.0f - 1.0f;
}

/* Global row of local row j on rank r of p (zigzag: chunks r and 2p-1-r). */
static int global_row(int j, int n, int r, int p) {
  int c = n / 2;
  return j < c ? r * c + j : (2 * p - 1 - r) * c + (j - c);
}

/* Rows of [B,H,T,D] `whole` that rank r holds, as [B,H,n,D]. */
static void share(const float *whole, float *part, int n, int r, int p) {
  for (int bh = 0; bh < B * H; ++bh)
    for (int j = 0; j < n; ++j)
      memcpy(part + ((size_t)bh * n + j) * D,
             whole + ((size_t)bh * T + global_row(j, n, r, p)) * D, sizeof(float) * D);
}

int main(int argc, char **argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t whole = (size_t)B * H * T * D;
  float *q = malloc(whole * sizeof(float)), *k = malloc(whole * sizeof(float)),
        *v = malloc(whole * sizeof(float));
  for (size_t i = 0; i < whole; ++i) {
    q[i] = value(i, 1);
    k[i] = value(i, 2);
    v[i] = value(i, 3);
  }
  int n = T / size;
  size_t local = (size_t)B * H * n * D;
  float *ql = malloc(local * sizeof(float)), *kl = malloc(local * sizeof(float)),
        *vl = malloc(local * sizeof(float));
  share(q, ql, n, rank, size);
  share(k, kl, n, rank, size);
  share(v, vl, n, rank, size);
  attn_tensor in[3] = {{ql, 4, {B, H, n, D}}, {kl, 4, {B, H, n, D}}, {vl, 4, {B, H, n, D}}};
  attn_tensor out[1] = {{NULL, 0, {0}}}; /* NULL: the kernel allocates */
  if (ring_sdpa(in, out) != 0) {
    fprintf(stderr, "rank %d: %s\n", rank, attn_aot_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  float *all = rank == 0 ? malloc(whole * sizeof(float)) : NULL;
  MPI_Gather(out[0].data, (int)local, MPI_FLOAT, all, (int)local, MPI_FLOAT, 0, MPI_COMM_WORLD);
  attn_aot_free(out[0].data);
  int status = 0;
  if (rank == 0) {
    attn_tensor win[3] = {{q, 4, {B, H, T, D}}, {k, 4, {B, H, T, D}}, {v, 4, {B, H, T, D}}};
    attn_tensor want[1] = {{NULL, 0, {0}}};
    if (single_sdpa(win, want) != 0) {
      fprintf(stderr, "single: %s\n", attn_aot_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const float *w = want[0].data;
    double worst = 0;
    for (int src = 0; src < size; ++src)
      for (int bh = 0; bh < B * H; ++bh)
        for (int j = 0; j < n; ++j)
          for (int d = 0; d < D; ++d) {
            float got = all[(size_t)src * local + ((size_t)bh * n + j) * D + d];
            float ref = w[((size_t)bh * T + global_row(j, n, src, size)) * D + d];
            worst = fmax(worst, fabs((double)got - (double)ref));
          }
    printf("max_abs_error %.3g over %d ranks\n", worst, size);
    status = worst <= 1e-5 ? 0 : 1;
    attn_aot_free(want[0].data);
    free(all);
  }
  free(q), free(k), free(v), free(ql), free(kl), free(vl);
  MPI_Finalize();
  return status;
}
