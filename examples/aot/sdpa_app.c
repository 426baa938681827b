/* A C program that calls attention kernels compiled ahead of time by
 * attn-aot (gqa_causal.mlir, masked_f16.mlir, mha_gqa.mlir, int8_decode.mlir,
 * fp8_decode.mlir in this folder)
 * and checks them against a plain double-precision attention written here,
 * and that calls whose shapes do not fit are refused before any read. It links
 * the two objects, libattn_aot and libomp: no MLIR, no LLVM.
 *
 *   sdpa_app            run the checks, print PASS or FAIL (exit 1)
 *
 * CMake builds it as aot-sdpa-app; ctest runs it (aot-example). */
#include "fp8_decode.h"
#include "gqa_causal.h"
#include "int8_decode.h"
#include "masked_f16.h"
#include "mha_gqa.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok)
    failures++;
}

/* A deterministic generator in [-1, 1). */
static uint64_t state = 0x9E3779B97F4A7C15ull;
static float next_value(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((state >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

/* IEEE half <-> float (round to nearest even; no NaN inputs here). */
static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFFu;
  if (exp <= 0) { /* subnormal or zero */
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
      h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
    h++;
  if (h >= 0x7C00u)
    h = 0x7C00u;
  return (uint16_t)(sign | h);
}
static float from_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  float v;
  if (exp == 0)
    v = ldexpf((float)mant, -24);
  else if (exp == 31)
    v = INFINITY;
  else
    v = ldexpf((float)(mant | 0x400u), (int)exp - 25);
  uint32_t bits;
  memcpy(&bits, &v, 4);
  bits |= sign;
  memcpy(&v, &bits, 4);
  return v;
}

/* out[b,h,i,:] = softmax_j(q·k / sqrt(D), visible keys only) · v, in double;
 * K/V head h / (H / Hkv); visible(b, i, j) decides which keys take part. A
 * row with no visible key is 0 (the kernels' convention). */
typedef int (*visible_fn)(const void *ctx, int64_t b, int64_t i, int64_t j);
static void reference(const float *q, const float *k, const float *v, double *out,
                      int64_t B, int64_t H, int64_t Hkv, int64_t Tq, int64_t Tk,
                      int64_t D, visible_fn visible, const void *ctx, double scale) {
  double *s = malloc(sizeof(double) * (Tk ? Tk : 1));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      int64_t hk = h / (H / Hkv);
      for (int64_t i = 0; i < Tq; i++) {
        const float *qi = q + ((b * H + h) * Tq + i) * D;
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < Tk; j++) {
          s[j] = -INFINITY;
          if (!visible(ctx, b, i, j))
            continue;
          const float *kj = k + ((b * Hkv + hk) * Tk + j) * D;
          double dot = 0;
          for (int64_t d = 0; d < D; d++)
            dot += (double)qi[d] * kj[d];
          s[j] = dot * scale;
          if (s[j] > m)
            m = s[j];
        }
        double *o = out + ((b * H + h) * Tq + i) * D;
        for (int64_t d = 0; d < D; d++)
          o[d] = 0;
        if (m == -INFINITY)
          continue;
        for (int64_t j = 0; j < Tk; j++) {
          if (s[j] == -INFINITY)
            continue;
          double p = exp(s[j] - m);
          l += p;
          const float *vj = v + ((b * Hkv + hk) * Tk + j) * D;
          for (int64_t d = 0; d < D; d++)
            o[d] += p * vj[d];
        }
        for (int64_t d = 0; d < D; d++)
          o[d] /= l;
      }
    }
  free(s);
}

static float *random_floats(int64_t n) {
  float *x = malloc(sizeof(float) * (n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    x[i] = next_value();
  return x;
}

static attn_tensor tensor4(void *data, int64_t a, int64_t b, int64_t c, int64_t d) {
  attn_tensor t = {data, 4, {a, b, c, d}};
  return t;
}

/* --- gqa_causal: f32, B/Tq/Tk dynamic, bottom-right causal ---------------- */

struct causal_ctx {
  int64_t tq, tk;
};
static int causal_visible(const void *ctx, int64_t b, int64_t i, int64_t j) {
  const struct causal_ctx *c = ctx;
  (void)b;
  return j <= i + c->tk - c->tq;
}

/* caller_buffer: 0, the runtime allocates the output; 1, the caller gives
 * one; 2, the output is V's buffer (H·Tq = Hkv·Tk): the kernel must not
 * write there while it still reads V, so the result is copied in after. */
static void check_gqa(int64_t B, int64_t Tq, int64_t Tk, int caller_buffer) {
  const int64_t H = 8, Hkv = 2, D = 64;
  float *q = random_floats(B * H * Tq * D), *k = random_floats(B * Hkv * Tk * D),
        *v = random_floats(B * Hkv * Tk * D);
  double *want = malloc(sizeof(double) * (B * H * Tq * D + 1));
  struct causal_ctx ctx = {Tq, Tk};
  reference(q, k, v, want, B, H, Hkv, Tq, Tk, D, causal_visible, &ctx, 1 / sqrt((double)D));
  attn_tensor in[3] = {tensor4(q, B, H, Tq, D), tensor4(k, B, Hkv, Tk, D),
                       tensor4(v, B, Hkv, Tk, D)};
  attn_tensor out[1] = {{NULL, 0, {0}}};
  float *mine = NULL;
  if (caller_buffer == 1) {
    mine = malloc(sizeof(float) * (B * H * Tq * D + 1));
    out[0] = tensor4(mine, B, H, Tq, D);
  } else if (caller_buffer == 2) {
    out[0] = tensor4(v, B, H, Tq, D);
  }
  int status = gqa_causal(in, out);
  char what[160];
  snprintf(what, sizeof what, "gqa_causal B %lld Tq %lld Tk %lld (%s buffer) runs: %s",
           (long long)B, (long long)Tq, (long long)Tk,
           caller_buffer == 2 ? "V's" : caller_buffer ? "caller's" : "runtime's",
           status ? attn_aot_last_error() : "status 0");
  expect(status == ATTN_AOT_OK, what);
  if (status == ATTN_AOT_OK) {
    int shape_ok = out[0].rank == 4 && out[0].shape[0] == B && out[0].shape[1] == H &&
                   out[0].shape[2] == Tq && out[0].shape[3] == D;
    double err = 0;
    const float *got = out[0].data;
    for (int64_t i = 0; shape_ok && i < B * H * Tq * D; i++)
      err = fmax(err, fabs(got[i] - want[i]));
    snprintf(what, sizeof what, "  max |aot - double reference| = %.3g (<= 2e-5), shape %s",
             err, shape_ok ? "[B,8,Tq,64]" : "WRONG");
    expect(shape_ok && err <= 2e-5, what);
    if (!caller_buffer)
      attn_aot_free(out[0].data);
  }
  free(mine);
  free(q);
  free(k);
  free(v);
  free(want);
}

static void check_errors(void) {
  float buf[2 * 8 * 4 * 64];
  char what[400];
  /* K of length 6, V of length 7: refused before the kernel runs. */
  attn_tensor in[3] = {tensor4(buf, 1, 8, 4, 64), tensor4(buf, 1, 2, 6, 64),
                       tensor4(buf, 1, 2, 7, 64)};
  attn_tensor out[1] = {{NULL, 0, {0}}};
  int status = gqa_causal(in, out);
  snprintf(what, sizeof what, "K/V lengths 6 vs 7 refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "input #2 dim 2 is 7"),
         what);
  /* A static dim wrong: 4 query heads where 8 are compiled in. */
  in[0] = tensor4(buf, 1, 4, 4, 64);
  in[2] = tensor4(buf, 1, 2, 6, 64);
  status = gqa_causal(in, out);
  snprintf(what, sizeof what, "4 heads for float32[?,8,?,64] refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "at dim 1"), what);
  /* Batch 1 against batch 2. */
  in[0] = tensor4(buf, 2, 8, 4, 64);
  status = gqa_causal(in, out);
  snprintf(what, sizeof what, "batch 2 vs 1 refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "dim 0"), what);
  /* A wrong rank, a wrong count. */
  in[0].rank = 3;
  status = gqa_causal(in, out);
  snprintf(what, sizeof what, "rank 3 refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "rank 3"), what);
  in[0] = tensor4(buf, 1, 8, 4, 64);
  status = attn_aot_call(&gqa_causal_kernel, in, 2, out, 1);
  snprintf(what, sizeof what, "2 inputs refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "takes 3 inputs"),
         what);
  /* The caller's output buffer has the wrong shape. */
  for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++)
    buf[i] = 0.25f;
  float small[8 * 4 * 64];
  out[0] = tensor4(small, 1, 8, 3, 64);
  status = gqa_causal(in, out);
  snprintf(what, sizeof what, "output buffer [1,8,3,64] for a [1,8,4,64] result refused: %s",
           attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "output #0"), what);
  /* The kernel record describes the function. */
  expect(gqa_causal_kernel.num_inputs == 3 && gqa_causal_kernel.num_outputs == 1 &&
             strcmp(gqa_causal_kernel.pipeline, "cpu") == 0 &&
             strcmp(attn_aot_selected_target(&gqa_causal_kernel), "cpu") == 0,
         "gqa_causal_kernel: 3 inputs, 1 output, pipeline cpu, variant cpu");
}

/* --- masked_f16: f16, boolean mask + key lengths --------------------------- */

struct masked_ctx {
  const uint8_t *mask;
  const int32_t *len;
  int64_t tq, tk;
};
static int masked_visible(const void *ctx, int64_t b, int64_t i, int64_t j) {
  const struct masked_ctx *c = ctx;
  return j < c->len[b] && c->mask[(b * c->tq + i) * c->tk + j];
}

static void check_masked(void) {
  const int64_t B = 3, H = 4, Tq = 9, Tk = 21, D = 32;
  int64_t nq = B * H * Tq * D, nk = B * H * Tk * D;
  float *q = random_floats(nq), *k = random_floats(nk), *v = random_floats(nk);
  uint16_t *qh = malloc(2 * nq), *kh = malloc(2 * nk), *vh = malloc(2 * nk);
  /* The reference sees the f16-rounded inputs. */
  for (int64_t i = 0; i < nq; i++)
    q[i] = from_half(qh[i] = to_half(q[i]));
  for (int64_t i = 0; i < nk; i++) {
    k[i] = from_half(kh[i] = to_half(k[i]));
    v[i] = from_half(vh[i] = to_half(v[i]));
  }
  uint8_t *mask = malloc(B * Tq * Tk);
  for (int64_t i = 0; i < B * Tq * Tk; i++)
    mask[i] = next_value() > -0.6f;
  int32_t len[3] = {21, 13, 0}; /* full, padded, empty (rows of zeros) */
  double *want = malloc(sizeof(double) * nq);
  struct masked_ctx ctx = {mask, len, Tq, Tk};
  reference(q, k, v, want, B, H, H, Tq, Tk, D, masked_visible, &ctx, 1 / sqrt((double)D));
  attn_tensor in[5] = {tensor4(qh, B, H, Tq, D), tensor4(kh, B, H, Tk, D),
                       tensor4(vh, B, H, Tk, D), tensor4(mask, B, 1, Tq, Tk),
                       {len, 1, {B}}};
  attn_tensor out[1] = {{NULL, 0, {0}}};
  int status = masked_f16(in, out);
  char what[300];
  snprintf(what, sizeof what, "masked_f16 B 3 Tq 9 Tk 21, lengths 21/13/0 runs: %s",
           status ? attn_aot_last_error() : "status 0");
  expect(status == ATTN_AOT_OK, what);
  if (status == ATTN_AOT_OK) {
    const uint16_t *got = out[0].data;
    double err = 0;
    for (int64_t i = 0; i < nq; i++)
      err = fmax(err, fabs(from_half(got[i]) - want[i]));
    snprintf(what, sizeof what,
             "  max |aot f16 - double reference| = %.3g (<= 2e-3: f16 output rounding)", err);
    expect(err <= 2e-3, what);
    attn_aot_free(out[0].data);
  }
  /* A key length past Tk: refused, naming the element. */
  len[1] = 22;
  out[0].data = NULL;
  status = masked_f16(in, out);
  snprintf(what, sizeof what, "key length 22 > Tk 21 refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT && strstr(attn_aot_last_error(), "element 1 is 22"),
         what);
  len[1] = -1;
  status = masked_f16(in, out);
  snprintf(what, sizeof what, "key length -1 refused: %s", attn_aot_last_error());
  expect(status == ATTN_AOT_ERROR_ARGUMENT, what);
  free(q), free(k), free(v), free(qh), free(kh), free(vh), free(mask), free(want);
}

/* --- mha_gqa: attn.mha, 6 query / 2 key-value heads, every width dynamic,
 * scale 0.25 (a dynamic head dim needs an explicit scale) --------------- */

/* y[r, o] = sum_i x[r, i] * w[o, i] (PyTorch's [Out, In] weights). */
static void project(const float *x, const float *w, float *y, int64_t rows, int64_t in,
                    int64_t out) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t o = 0; o < out; o++) {
      double acc = 0;
      for (int64_t i = 0; i < in; i++)
        acc += (double)x[r * in + i] * w[o * in + i];
      y[r * out + o] = (float)acc;
    }
}

/* [B, T, heads * D] -> [B, heads, T, D] and back. */
static void split_heads(const float *x, float *y, int64_t B, int64_t T, int64_t heads,
                        int64_t D, int merge) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++)
      for (int64_t h = 0; h < heads; h++)
        for (int64_t d = 0; d < D; d++) {
          int64_t flat = ((b * T + t) * heads + h) * D + d;
          int64_t split = ((b * heads + h) * T + t) * D + d;
          if (merge)
            y[flat] = x[split];
          else
            y[split] = x[flat];
        }
}

static int top_left_visible(const void *ctx, int64_t b, int64_t i, int64_t j) {
  (void)ctx;
  (void)b;
  return j <= i;
}

static attn_tensor tensor2(void *data, int64_t a, int64_t b) {
  attn_tensor t = {data, 2, {a, b}};
  return t;
}
static attn_tensor tensor3(void *data, int64_t a, int64_t b, int64_t c) {
  attn_tensor t = {data, 3, {a, b, c}};
  return t;
}

static void check_mha_gqa(int64_t B, int64_t T, int64_t E, int64_t D, int64_t Eo) {
  const int64_t H = 6, Hkv = 2;
  float *x = random_floats(B * T * E), *wq = random_floats(H * D * E),
        *wk = random_floats(Hkv * D * E), *wv = random_floats(Hkv * D * E),
        *wo = random_floats(Eo * H * D);
  /* The reference: projections, heads, attention in double, merge, output. */
  float *pq = malloc(sizeof(float) * (B * T * H * D + 1)),
        *pk = malloc(sizeof(float) * (B * T * Hkv * D + 1)),
        *pv = malloc(sizeof(float) * (B * T * Hkv * D + 1)),
        *q = malloc(sizeof(float) * (B * T * H * D + 1)),
        *k = malloc(sizeof(float) * (B * T * Hkv * D + 1)),
        *v = malloc(sizeof(float) * (B * T * Hkv * D + 1)),
        *a = malloc(sizeof(float) * (B * T * H * D + 1)),
        *merged = malloc(sizeof(float) * (B * T * H * D + 1)),
        *want = malloc(sizeof(float) * (B * T * Eo + 1));
  double *ad = malloc(sizeof(double) * (B * T * H * D + 1));
  project(x, wq, pq, B * T, E, H * D);
  project(x, wk, pk, B * T, E, Hkv * D);
  project(x, wv, pv, B * T, E, Hkv * D);
  split_heads(pq, q, B, T, H, D, 0);
  split_heads(pk, k, B, T, Hkv, D, 0);
  split_heads(pv, v, B, T, Hkv, D, 0);
  reference(q, k, v, ad, B, H, Hkv, T, T, D, top_left_visible, NULL, 0.25);
  for (int64_t i = 0; i < B * T * H * D; i++)
    a[i] = (float)ad[i];
  split_heads(a, merged, B, T, H, D, 1);
  project(merged, wo, want, B * T, H * D, Eo);

  attn_tensor in[5] = {tensor3(x, B, T, E), tensor2(wq, H * D, E), tensor2(wk, Hkv * D, E),
                       tensor2(wv, Hkv * D, E), tensor2(wo, Eo, H * D)};
  attn_tensor out[1] = {{NULL, 0, {0}}};
  int status = mha_gqa(in, out);
  char what[200];
  snprintf(what, sizeof what, "mha_gqa x [%lld,%lld,%lld], D %lld, Eo %lld runs: %s",
           (long long)B, (long long)T, (long long)E, (long long)D, (long long)Eo,
           status ? attn_aot_last_error() : "status 0");
  expect(status == ATTN_AOT_OK, what);
  if (status == ATTN_AOT_OK) {
    int shape_ok = out[0].rank == 3 && out[0].shape[0] == B && out[0].shape[1] == T &&
                   out[0].shape[2] == Eo;
    double err = 0;
    const float *got = out[0].data;
    for (int64_t i = 0; shape_ok && i < B * T * Eo; i++)
      err = fmax(err, fabs(got[i] - want[i]));
    snprintf(what, sizeof what, "  max |aot - reference| = %.3g (<= 1e-4), shape %s", err,
             shape_ok ? "[B,T,Eo]" : "WRONG");
    expect(shape_ok && err <= 1e-4, what);
    attn_aot_free(out[0].data);
  }
  free(x), free(wq), free(wk), free(wv), free(wo), free(pq), free(pk), free(pv);
  free(q), free(k), free(v), free(a), free(merged), free(want), free(ad);
}

/* Weights that do not fit x (the kernel would read past them): refused, and
 * nothing is read (every buffer is exactly its shape's size, so ASan or
 * valgrind would see a read past it). */
static void check_mha_gqa_refusals(void) {
  struct {
    int64_t wq[2], wk[2], wv[2], wo[2];
    const char *what;
  } cases[] = {
      {{48, 48}, {16, 40}, {16, 48}, {48, 48}, "Wk width 40 for E 48"},
      {{4800, 48}, {16, 48}, {16, 48}, {48, 48}, "Wq with 4800 rows for Wk's 16"},
      {{48, 48}, {16, 48}, {16, 48}, {48, 40}, "Wo width 40 for 6 heads of Wv's 8"},
      {{48, 48}, {16, 48}, {15, 48}, {48, 48}, "Wv with 15 rows for 2 K/V heads"},
      {{36, 48}, {16, 48}, {16, 48}, {48, 48}, "Wq 36 rows (6 heads of 6) for Wk 16 (2 of 8)"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    float *x = random_floats(2 * 7 * 48);
    float *w[4];
    const int64_t *dims[4] = {cases[c].wq, cases[c].wk, cases[c].wv, cases[c].wo};
    attn_tensor in[5] = {tensor3(x, 2, 7, 48)};
    for (int i = 0; i < 4; i++) {
      w[i] = random_floats(dims[i][0] * dims[i][1]);
      in[i + 1] = tensor2(w[i], dims[i][0], dims[i][1]);
    }
    attn_tensor out[1] = {{NULL, 0, {0}}};
    int status = mha_gqa(in, out);
    char what[300];
    snprintf(what, sizeof what, "mha_gqa %s refused: %s", cases[c].what,
             status == ATTN_AOT_ERROR_ARGUMENT ? attn_aot_last_error() : "NOT REFUSED");
    expect(status == ATTN_AOT_ERROR_ARGUMENT &&
               strstr(attn_aot_last_error(), "do not fit together") != NULL,
           what);
    if (status == ATTN_AOT_OK)
      attn_aot_free(out[0].data);
    free(x);
    for (int i = 0; i < 4; i++)
      free(w[i]);
  }
}

/* --- int8_decode: an int8 cache with per-token scales ------------------- */

static int all_visible(const void *ctx, int64_t b, int64_t i, int64_t j) {
  (void)ctx, (void)b, (void)i, (void)j;
  return 1;
}

/* x [n rows of D] -> int8 rows and one scale per row (max |x| -> 127), and
 * the dequantised floats the reference reads. */
static void quantize_rows(const float *x, int64_t rows, int64_t D, int8_t *q, float *scale,
                          float *dequantized) {
  for (int64_t r = 0; r < rows; r++) {
    float m = 0;
    for (int64_t d = 0; d < D; d++)
      m = fmaxf(m, fabsf(x[r * D + d]));
    scale[r] = m > 0 ? m / 127.0f : 1.0f;
    for (int64_t d = 0; d < D; d++) {
      q[r * D + d] = (int8_t)lrintf(x[r * D + d] / scale[r]);
      dequantized[r * D + d] = (float)q[r * D + d] * scale[r];
    }
  }
}

/* A quantised decode's call: it ran, and its n outputs are within 2e-5 of
 * the double reference on the dequantised cache. */
static void expect_decode(const char *name, int64_t B, int64_t Tk, int status,
                          attn_tensor out[1], const double *want, int64_t n) {
  char what[160];
  snprintf(what, sizeof what, "%s B %lld Tk %lld runs: %s", name, (long long)B, (long long)Tk,
           status ? attn_aot_last_error() : "status 0");
  expect(status == ATTN_AOT_OK, what);
  if (status != ATTN_AOT_OK)
    return;
  double err = 0;
  const float *got = out[0].data;
  for (int64_t i = 0; i < n; i++)
    err = fmax(err, fabs(got[i] - want[i]));
  snprintf(what, sizeof what,
           "  max |aot - double reference on the dequantised cache| = %.3g (<= 2e-5)", err);
  expect(err <= 2e-5, what);
  attn_aot_free(out[0].data);
}

static void check_int8_decode(int64_t B, int64_t Tk) {
  const int64_t H = 8, Hkv = 2, D = 64, rows = B * Hkv * Tk;
  float *q = random_floats(B * H * D), *k = random_floats(rows * D),
        *v = random_floats(rows * D);
  int8_t *kq = malloc(rows * D + 1), *vq = malloc(rows * D + 1);
  float *ks = malloc(sizeof(float) * (rows + 1)), *vs = malloc(sizeof(float) * (rows + 1));
  float *kd = malloc(sizeof(float) * (rows * D + 1)), *vd = malloc(sizeof(float) * (rows * D + 1));
  quantize_rows(k, rows, D, kq, ks, kd);
  quantize_rows(v, rows, D, vq, vs, vd);
  double *want = malloc(sizeof(double) * (B * H * D + 1));
  reference(q, kd, vd, want, B, H, Hkv, 1, Tk, D, all_visible, NULL, 1 / sqrt((double)D));
  attn_tensor scale_k = {ks, 3, {B, Hkv, Tk}}, scale_v = {vs, 3, {B, Hkv, Tk}};
  attn_tensor in[5] = {tensor4(q, B, H, 1, D), tensor4(kq, B, Hkv, Tk, D), scale_k,
                       tensor4(vq, B, Hkv, Tk, D), scale_v};
  attn_tensor out[1] = {{NULL, 0, {0}}};
  expect_decode("int8_decode", B, Tk, int8_decode(in, out), out, want, B * H * D);
  free(q), free(k), free(v), free(kq), free(vq), free(ks), free(vs), free(kd), free(vd);
  free(want);
}

/* --- fp8_decode: an fp8 e4m3 cache with one scale per tensor ----------- */

/* The value of e4m3 code c, from the format (OCP E4M3FN): (1 + m/8)·2^(e−7),
 * subnormals (m/8)·2^−6; no NaN codes are written here. */
static double e4m3_value(uint8_t c) {
  int e = (c >> 3) & 15, m = c & 7;
  double mag = e == 0 ? m / 8.0 * ldexp(1.0, -6) : (1 + m / 8.0) * ldexp(1.0, e - 7);
  return (c & 0x80) ? -mag : mag;
}

/* The nearest finite code to x (by search over the 127 magnitudes). */
static uint8_t e4m3_code(double x) {
  uint8_t best = 0;
  for (int c = 1; c < 0x7F; c++)
    if (fabs(fabs(x) - e4m3_value((uint8_t)c)) < fabs(fabs(x) - e4m3_value(best)))
      best = (uint8_t)c;
  return (uint8_t)(best | (x < 0 ? 0x80 : 0));
}

static void check_fp8_decode(int64_t B, int64_t Tk) {
  const int64_t H = 8, Hkv = 2, D = 64, n = B * Hkv * Tk * D;
  float *q = random_floats(B * H * D);
  uint8_t *kq = malloc(n + 1), *vq = malloc(n + 1);
  float *kd = malloc(sizeof(float) * (n + 1)), *vd = malloc(sizeof(float) * (n + 1));
  float ks = 1.0f / 256, vs = 1.0f / 128; /* codes of values up to 256 / 128 */
  for (int64_t i = 0; i < n; i++) {
    kq[i] = e4m3_code(next_value() * 256);
    vq[i] = e4m3_code(next_value() * 128);
    kd[i] = (float)(e4m3_value(kq[i]) * ks);
    vd[i] = (float)(e4m3_value(vq[i]) * vs);
  }
  double *want = malloc(sizeof(double) * (B * H * D + 1));
  reference(q, kd, vd, want, B, H, Hkv, 1, Tk, D, all_visible, NULL, 1 / sqrt((double)D));
  attn_tensor scale_k = {&ks, 0, {0}}, scale_v = {&vs, 0, {0}};
  attn_tensor in[5] = {tensor4(q, B, H, 1, D), tensor4(kq, B, Hkv, Tk, D), scale_k,
                       tensor4(vq, B, Hkv, Tk, D), scale_v};
  attn_tensor out[1] = {{NULL, 0, {0}}};
  expect_decode("fp8_decode", B, Tk, fp8_decode(in, out), out, want, B * H * D);
  free(q), free(kq), free(vq), free(kd), free(vd), free(want);
}

int main(void) {
  check_gqa(2, 5, 37, 0);  /* decode-like: few queries, more keys */
  check_gqa(1, 70, 70, 1); /* square, T not a multiple of the tile */
  check_gqa(1, 32, 128, 2); /* the output is V's buffer */
  check_gqa(3, 1, 129, 0); /* one query: the key split (flash-decoding) */
  check_gqa(2, 0, 16, 0);  /* no queries: an empty result */
  check_errors();
  check_masked();
  check_mha_gqa(2, 7, 48, 8, 48); /* the shapes: x [2,7,48] */
  check_mha_gqa(1, 5, 24, 4, 20); /* other widths, Eo != E */
  check_mha_gqa(1, 3, 10, 7, 9);  /* an odd head dim */
  check_mha_gqa_refusals();
  check_int8_decode(2, 77);   /* a tail tile of keys */
  check_int8_decode(1, 1000); /* the key split (flash-decoding) */
  check_fp8_decode(2, 77);
  check_fp8_decode(1, 1000);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
