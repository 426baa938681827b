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
//===----------------------------------------------------------------------===//
#include <immintrin.h>

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

int main(int argc, char **argv) {
  int threads = 1;
  double seconds = 1.0;
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
    else {
      std::fprintf(stderr, "usage: attn-fma-peak [--threads=N] [--seconds=S] "
                           "[--isa=avx2|avx512 (avx512 where the CPU has it)]\n");
      return 2;
    }
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "attn-fma-peak: this CPU has no AVX2/FMA\n");
    return 2;
  }
  bool zmm = !std::strcmp(isa, "avx512");
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
