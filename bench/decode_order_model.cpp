// A C++ model of the CPU kernel's decode loop, to time how the order in
// which K and V are read affects a decode that streams them from memory
// (docs/cpu.md, "Decode: K and V read in place"). Not built with the
// project (it needs AVX-512F); build and run it by hand:
//
//   g++ -O3 -march=native -fopenmp bench/decode_order_model.cpp -o /tmp/decode-model
//   OMP_NUM_THREADS=2 /tmp/decode-model --tk=32768 --scores=keywise --keys=natural --pv=rows
//
// One tile step per 64 keys, as the kernel: 4 query rows (a GQA group of
// 4, Tq 1) against K/V heads of D = Dv = 128 f32, 8 K/V heads, heads in
// parallel. The scores of each run of 16 keys, then an online softmax,
// then P·V. What varies:
//   --scores=keywise      each key's row read front to back, one key after
//                         the other (the kernel since 2026-12-02)
//   --scores=interleaved  groups of 4 keys read line by line in step (the
//                         kernel before: 16 accumulators over D)
//   --keys=natural|bitrev the order of the keys within a run of 16 (bitrev:
//                         slot i holds key reverseBits(i), the kernel before)
//   --pv=rows             P·V in two passes of 2 rows, each reading the V
//                         rows whole (the kernel since 2026-12-02)
//   --pv=columns          two passes of 4 rows x half a row (the kernel before)
//   --prefetch=N          1: software prefetches of K and V 128 keys ahead,
//                         all of a run's 16 keys at once, as LLVM scheduled
//                         the kernel's before 2026-12-02; 2 ("cross", the
//                         kernel since 2026-12-02): the other array's rows
//                         into L2 (prefetcht1), one row per key as the loop
//                         reaches it -- the score loop asks for the same
//                         key's V row, the first P·V pass for the next
//                         tile's K row; 0: none
//   --read-only           no arithmetic: each tile's K rows, then its V rows,
//                         summed (what this read order reads at, the
//                         decode's roofline on the host)
// Prints the median of 10 calls and the K/V read rate; compare it with
// `attn-fma-peak --bandwidth` in the same session.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kHeads = 8, kRows = 4, kD = 128, kTile = 64, kRun = 16;

struct Options {
  long tk = 32768;
  bool keywise = true, natural = true, pvRows = true, readOnly = false;
  int prefetch = 0;
};

int slotKey(const Options &o, int slot) {
  if (o.natural)
    return slot;
  int r = 0;
  for (int b = 0; b < 4; ++b)
    r |= ((slot >> b) & 1) << (3 - b);
  return r;
}

// One prefetcht1 per 64-byte line of a K or V row.
inline void prefetchRowL2(const float *row) {
  for (int c = 0; c < kD * 4; c += 64)
    _mm_prefetch(reinterpret_cast<const char *>(row) + c, _MM_HINT_T1);
}

// --read-only: the K tile, then the V tile, summed.
void readHead(const Options &o, const float *k, const float *v, float *out) {
  __m512 a[kD / 16];
  for (int c = 0; c < kD / 16; ++c)
    a[c] = _mm512_setzero_ps();
  for (long j0 = 0; j0 < o.tk; j0 += kTile)
    for (const float *x : {k, v})
      for (long j = j0; j < j0 + kTile; ++j)
        for (int c = 0; c < kD / 16; ++c)
          a[c] = _mm512_add_ps(a[c], _mm512_loadu_ps(x + j * kD + 16 * c));
  for (int c = 0; c < kD / 16; ++c)
    _mm512_storeu_ps(out + 16 * c, a[c]);
}

void head(const Options &o, const float *k, const float *v, const float *q, float *out) {
  float m[kRows], l[kRows];
  __m512 acc[kRows][kD / 16];
  for (int r = 0; r < kRows; ++r) {
    m[r] = -INFINITY;
    l[r] = 0;
    for (int c = 0; c < kD / 16; ++c)
      acc[r][c] = _mm512_setzero_ps();
  }
  alignas(64) float s[kRows][kTile];
  for (long j0 = 0; j0 < o.tk; j0 += kTile) {
    for (int run = 0; run < kTile; run += kRun) {
      if (o.prefetch == 1)
        for (int x = 0; x < kRun; ++x) {
          long ahead = std::min(j0 + run + x + 128, o.tk - 1);
          for (int c = 0; c < kD * 4; c += 64) {
            _mm_prefetch(reinterpret_cast<const char *>(k + ahead * kD) + c, _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char *>(v + ahead * kD) + c, _MM_HINT_T0);
          }
        }
      for (int g = 0; g < kRun; g += 4) {
        __m512 sum[kRows][4];
        for (int r = 0; r < kRows; ++r)
          for (int x = 0; x < 4; ++x)
            sum[r][x] = _mm512_setzero_ps();
        const float *row[4];
        for (int x = 0; x < 4; ++x)
          row[x] = k + (j0 + run + slotKey(o, g + x)) * kD;
        if (o.keywise) {
          for (int x = 0; x < 4; ++x) {
            if (o.prefetch == 2)
              prefetchRowL2(v + (j0 + run + slotKey(o, g + x)) * kD);
            for (int c = 0; c < kD / 16; ++c) {
              __m512 kv = _mm512_loadu_ps(row[x] + 16 * c);
              for (int r = 0; r < kRows; ++r)
                sum[r][x] = _mm512_fmadd_ps(_mm512_loadu_ps(q + r * kD + 16 * c), kv, sum[r][x]);
            }
          }
        } else {
          for (int c = 0; c < kD / 16; ++c) {
            __m512 kv[4];
            for (int x = 0; x < 4; ++x)
              kv[x] = _mm512_loadu_ps(row[x] + 16 * c);
            for (int r = 0; r < kRows; ++r) {
              __m512 qv = _mm512_loadu_ps(q + r * kD + 16 * c);
              for (int x = 0; x < 4; ++x)
                sum[r][x] = _mm512_fmadd_ps(qv, kv[x], sum[r][x]);
            }
          }
        }
        for (int r = 0; r < kRows; ++r)
          for (int x = 0; x < 4; ++x)
            s[r][run + slotKey(o, g + x)] = _mm512_reduce_add_ps(sum[r][x]);
      }
    }
    for (int r = 0; r < kRows; ++r) {
      float mx = m[r];
      for (int j = 0; j < kTile; ++j)
        mx = std::max(mx, s[r][j]);
      float alpha = std::exp(m[r] - mx);
      l[r] *= alpha;
      for (int c = 0; c < kD / 16; ++c)
        acc[r][c] = _mm512_mul_ps(acc[r][c], _mm512_set1_ps(alpha));
      for (int j = 0; j < kTile; ++j) {
        s[r][j] = std::exp(s[r][j] - mx);
        l[r] += s[r][j];
      }
      m[r] = mx;
    }
    // Two passes either way: rows 0-1 then 2-3 over whole V rows, or
    // columns 0-63 then 64-127 of all 4 rows.
    for (int pass = 0; pass < 2; ++pass)
      for (int j = 0; j < kTile; ++j) {
        const float *vr = v + (j0 + j) * kD;
        if (o.prefetch == 2 && pass == 0)
          prefetchRowL2(k + std::min(j0 + kTile + j, o.tk - 1) * kD);
        int r0 = o.pvRows ? 2 * pass : 0, r1 = o.pvRows ? r0 + 2 : kRows;
        int c0 = o.pvRows ? 0 : 4 * pass, c1 = o.pvRows ? kD / 16 : c0 + 4;
        for (int c = c0; c < c1; ++c) {
          __m512 vv = _mm512_loadu_ps(vr + 16 * c);
          for (int r = r0; r < r1; ++r)
            acc[r][c] = _mm512_fmadd_ps(_mm512_set1_ps(s[r][j]), vv, acc[r][c]);
        }
      }
  }
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kD / 16; ++c)
      _mm512_storeu_ps(out + r * kD + 16 * c,
                       _mm512_div_ps(acc[r][c], _mm512_set1_ps(l[r])));
}

bool option(const char *arg, const char *name, std::string &value) {
  size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=')
    return false;
  value = arg + n + 1;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (option(argv[i], "--tk", v) && std::atol(v.c_str()) >= kTile)
      o.tk = std::atol(v.c_str()) / kTile * kTile;
    else if (option(argv[i], "--scores", v) && (v == "keywise" || v == "interleaved"))
      o.keywise = v == "keywise";
    else if (option(argv[i], "--keys", v) && (v == "natural" || v == "bitrev"))
      o.natural = v == "natural";
    else if (option(argv[i], "--pv", v) && (v == "rows" || v == "columns"))
      o.pvRows = v == "rows";
    else if (!std::strcmp(argv[i], "--read-only"))
      o.readOnly = true;
    else if (option(argv[i], "--prefetch", v) && (v == "0" || v == "1" || v == "2"))
      o.prefetch = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "usage: %s [--tk=N] [--scores=keywise|interleaved] "
                           "[--keys=natural|bitrev] [--pv=rows|columns] [--prefetch=0|1|2] [--read-only]\n",
                   argv[0]);
      return 2;
    }
  }
  size_t n = size_t(kHeads) * o.tk * kD;
  std::vector<float> k(n), v(n), q(kHeads * kRows * kD), out(kHeads * kRows * kD);
  for (size_t i = 0; i < n; ++i) {
    k[i] = float(i % 97) * 1e-3f;
    v[i] = float(i % 89) * 1e-3f;
  }
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = float(i % 13) * 1e-2f;
  std::vector<double> times;
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(guided)
    for (int h = 0; h < kHeads; ++h)
      if (o.readOnly)
        readHead(o, k.data() + size_t(h) * o.tk * kD, v.data() + size_t(h) * o.tk * kD,
                 out.data() + h * kRows * kD);
      else
        head(o, k.data() + size_t(h) * o.tk * kD, v.data() + size_t(h) * o.tk * kD,
             q.data() + h * kRows * kD, out.data() + h * kRows * kD);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  double t = times[times.size() / 2];
  std::printf("{\"tk\": %ld, \"scores\": \"%s\", \"keys\": \"%s\", \"pv\": \"%s\", "
              "\"prefetch\": %d, \"read_only\": %d, \"threads\": %d, \"median_ms\": %.3f, \"gbps\": %.2f, "
              "\"check\": %.6f}\n",
              o.tk, o.keywise ? "keywise" : "interleaved", o.natural ? "natural" : "bitrev",
              o.pvRows ? "rows" : "columns", o.prefetch, int(o.readOnly), omp_get_max_threads(), t * 1e3,
              2.0 * n * 4 / t / 1e9, double(out[0]));
}
