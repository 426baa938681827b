//===- fma_peak.cpp - measure this machine's fp32 FMA peak ----------------===//
//
// attn-fma-peak [--threads=N] [--seconds=S] [--isa=avx2|avx512]: each
// thread runs independent chains of fused multiply-adds on the widest
// vectors the CPU has (512-bit with AVX-512F, else 256-bit; --isa picks
// one), 12 accumulators, enough to cover the FMA latency on two pipes, and
// the total rate is printed as GFLOP/s (one FMA on L lanes = 2·L flops),
// with the ISA used. The benchmark quotes its results as a fraction of this
// number, measured in the same run.
//
// attn-fma-peak --bandwidth[=MIB] [--threads=N] [--seconds=S] [--isa=...]
// measures the read bandwidth instead: a MIB-MiB buffer (default 1024),
// each thread first writes and then repeatedly sums its own slice with
// vector loads (8 accumulators) for about S seconds; it prints GB/s
// (1e9 bytes/s) of data read. bench/cpu_suite.py holds decode kernels,
// which read their K/V once per call, against this figure.
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

// Twelve independent accumulators in registers (written out, so no
// compiler keeps them in memory), for one vector ISA: NAME(iters) returns a
// lane of the sum, which keeps the loop alive.
#define ATTN_FMA_LOOP(NAME, TARGET, VEC, SET1, FMADD, ADD, LANES)                  \
  __attribute__((target(TARGET))) static double NAME(long iters) {               \
    const VEC a = SET1(0.999999f), b = SET1(1e-7f);                              \
    VEC c0 = SET1(0.01f), c1 = SET1(0.02f), c2 = SET1(0.03f), c3 = SET1(0.04f),  \
        c4 = SET1(0.05f), c5 = SET1(0.06f), c6 = SET1(0.07f), c7 = SET1(0.08f),  \
        c8 = SET1(0.09f), c9 = SET1(0.10f), c10 = SET1(0.11f), c11 = SET1(0.12f); \
    for (long n = 0; n < iters; ++n) {                                           \
      c0 = FMADD(c0, a, b);                                                      \
      c1 = FMADD(c1, a, b);                                                      \
      c2 = FMADD(c2, a, b);                                                      \
      c3 = FMADD(c3, a, b);                                                      \
      c4 = FMADD(c4, a, b);                                                      \
      c5 = FMADD(c5, a, b);                                                      \
      c6 = FMADD(c6, a, b);                                                      \
      c7 = FMADD(c7, a, b);                                                      \
      c8 = FMADD(c8, a, b);                                                      \
      c9 = FMADD(c9, a, b);                                                      \
      c10 = FMADD(c10, a, b);                                                    \
      c11 = FMADD(c11, a, b);                                                    \
    }                                                                            \
    VEC s = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7)));   \
    s = ADD(s, ADD(ADD(c8, c9), ADD(c10, c11)));                                 \
    float out[LANES];                                                            \
    std::memcpy(out, &s, sizeof(out));                                           \
    return out[0];                                                               \
  }

ATTN_FMA_LOOP(fmaLoopYmm, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps,
              _mm256_add_ps, 8)
ATTN_FMA_LOOP(fmaLoopZmm, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps,
              _mm512_add_ps, 16)

// Sums n floats (n a multiple of 128) with 8 vector accumulators.
#define ATTN_SUM_LOOP(NAME, TARGET, VEC, ZERO, LOAD, ADD, LANES)                   \
  __attribute__((target(TARGET))) static float NAME(const float *p, size_t n) {  \
    VEC a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO(), a4 = ZERO(),          \
        a5 = ZERO(), a6 = ZERO(), a7 = ZERO();                                   \
    for (size_t i = 0; i < n; i += 8 * LANES) {                                  \
      a0 = ADD(a0, LOAD(p + i));                                                 \
      a1 = ADD(a1, LOAD(p + i + LANES));                                         \
      a2 = ADD(a2, LOAD(p + i + 2 * LANES));                                     \
      a3 = ADD(a3, LOAD(p + i + 3 * LANES));                                     \
      a4 = ADD(a4, LOAD(p + i + 4 * LANES));                                     \
      a5 = ADD(a5, LOAD(p + i + 5 * LANES));                                     \
      a6 = ADD(a6, LOAD(p + i + 6 * LANES));                                     \
      a7 = ADD(a7, LOAD(p + i + 7 * LANES));                                     \
    }                                                                            \
    VEC s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));   \
    float out[LANES];                                                            \
    std::memcpy(out, &s, sizeof(out));                                           \
    return out[0];                                                               \
  }

ATTN_SUM_LOOP(sumYmm, "avx2", __m256, _mm256_setzero_ps, _mm256_load_ps, _mm256_add_ps, 8)
ATTN_SUM_LOOP(sumZmm, "avx512f", __m512, _mm512_setzero_ps, _mm512_load_ps, _mm512_add_ps, 16)

// Read bandwidth on `threads` threads over a buffer of `mib` MiB.
static int readBandwidth(int threads, double seconds, long mib, bool zmm, const char *isa) {
  size_t bytes = static_cast<size_t>(mib) << 20;
  size_t n = bytes / sizeof(float);
  float *buf = static_cast<float *>(std::aligned_alloc(64, bytes));
  if (!buf) {
    std::fprintf(stderr, "attn-fma-peak: cannot allocate %ld MiB\n", mib);
    return 1;
  }
  float (*sum)(const float *, size_t) = zmm ? sumZmm : sumYmm;
  // Slices in whole 512-byte blocks (128 floats), the last one takes the rest.
  size_t blocks = n / 128;
  auto slice = [&](int t, size_t &begin, size_t &count) {
    size_t b0 = blocks * t / threads, b1 = blocks * (t + 1) / threads;
    begin = b0 * 128;
    count = (b1 - b0) * 128;
  };
  std::atomic<double> sink{0};
  auto pass = [&](long passes, bool write) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        size_t begin, count;
        slice(t, begin, count);
        if (write) { // first touch by the thread that reads the slice
          for (size_t i = 0; i < count; ++i)
            buf[begin + i] = 1e-6f * static_cast<float>(i & 1023);
          return;
        }
        double r = 0;
        for (long k = 0; k < passes; ++k)
          r += sum(buf + begin, count);
        double cur = sink.load();
        while (!sink.compare_exchange_weak(cur, cur + r)) {
        }
      });
    for (auto &th : pool)
      th.join();
  };
  auto timed = [&](long passes) {
    auto t0 = std::chrono::steady_clock::now();
    pass(passes, false);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  pass(0, true);
  timed(1); // warm-up
  // Calibrate: double the passes until a run takes a fifth of `seconds`.
  long passes = 1;
  double dt = timed(passes);
  while (dt < 0.2 * seconds && passes < (1L << 30)) {
    passes *= 2;
    dt = timed(passes);
  }
  passes = std::max(1L, static_cast<long>(passes * seconds / std::max(dt, 1e-9)));
  dt = timed(passes);
  double readBytes = static_cast<double>(blocks * 128 * sizeof(float)) * passes;
  std::printf("{\"mode\": \"read_bandwidth\", \"threads\": %d, \"isa\": \"%s\", "
              "\"mib\": %ld, \"passes\": %ld, \"seconds\": %.3f, \"gbps\": %.2f, "
              "\"sink\": %g}\n",
              threads, isa, mib, passes, dt, readBytes / dt / 1e9, sink.load());
  std::free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int threads = 1;
  double seconds = 1.0;
  long bandwidthMib = 0; // > 0: measure the read bandwidth instead
  bool hasAvx512 = __builtin_cpu_supports("avx512f");
  const char *isa = hasAvx512 ? "avx512" : "avx2";
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], "--threads=", 10))
      threads = std::atoi(argv[i] + 10);
    else if (!std::strncmp(argv[i], "--seconds=", 10))
      seconds = std::atof(argv[i] + 10);
    else if (!std::strcmp(argv[i], "--isa=avx2"))
      isa = "avx2";
    else if (!std::strcmp(argv[i], "--isa=avx512") && hasAvx512)
      isa = "avx512";
    else if (!std::strcmp(argv[i], "--bandwidth"))
      bandwidthMib = 1024;
    else if (!std::strncmp(argv[i], "--bandwidth=", 12) && std::atol(argv[i] + 12) > 0)
      bandwidthMib = std::atol(argv[i] + 12);
    else {
      std::fprintf(stderr, "usage: attn-fma-peak [--threads=N] [--seconds=S] "
                           "[--isa=avx2|avx512 (avx512 where the CPU has it)] "
                           "[--bandwidth[=MIB] (read bandwidth over MIB MiB, default "
                           "1024, instead of the FMA peak)]\n");
      return 2;
    }
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "attn-fma-peak: this CPU has no AVX2/FMA\n");
    return 2;
  }
  bool zmm = !std::strcmp(isa, "avx512");
  if (threads < 1)
    threads = 1;
  if (bandwidthMib > 0)
    return readBandwidth(threads, seconds, bandwidthMib, zmm, isa);
  double (*fmaLoop)(long) = zmm ? fmaLoopZmm : fmaLoopYmm;
  int lanes = zmm ? 16 : 8;
  // Calibrate iterations to about `seconds` on one thread.
  long iters = 1 << 16;
  volatile double keep = 0; // the calls must not be optimised away
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    keep = keep + fmaLoop(iters);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt > 0.1) {
      iters = static_cast<long>(iters * seconds / dt);
      break;
    }
    if (iters > (1L << 40)) {
      std::fprintf(stderr, "attn-fma-peak: calibration failed\n");
      return 1;
    }
    iters *= 4;
  }
  std::atomic<double> sink{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      double r = fmaLoop(iters);
      double cur = sink.load();
      while (!sink.compare_exchange_weak(cur, cur + r)) {
      }
    });
  for (auto &th : pool)
    th.join();
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double gflops = 2.0 * lanes * 12.0 * iters * threads / dt / 1e9;
  std::printf("{\"threads\": %d, \"isa\": \"%s\", \"seconds\": %.3f, \"gflops\": %.2f, "
              "\"sink\": %g}\n",
              threads, isa, dt, gflops, sink.load());
  return 0;
}
