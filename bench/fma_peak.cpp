//===- fma_peak.cpp - measure this machine's fp32 FMA peak ----------------===//
//
// attn-fma-peak [--threads=N] [--seconds=S]: each thread runs independent
// chains of 256-bit fused multiply-adds (12 accumulators, enough to cover
// the FMA latency on two pipes) and the total rate is printed as GFLOP/s
// (one FMA on 8 lanes = 16 flops). The benchmark quotes its results as a
// fraction of this number, measured in the same run.
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
// compiler keeps them in memory).
__attribute__((target("avx2,fma"))) static double fmaLoop(long iters) {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  __m256 c0 = _mm256_set1_ps(0.01f), c1 = _mm256_set1_ps(0.02f), c2 = _mm256_set1_ps(0.03f),
         c3 = _mm256_set1_ps(0.04f), c4 = _mm256_set1_ps(0.05f), c5 = _mm256_set1_ps(0.06f),
         c6 = _mm256_set1_ps(0.07f), c7 = _mm256_set1_ps(0.08f), c8 = _mm256_set1_ps(0.09f),
         c9 = _mm256_set1_ps(0.10f), c10 = _mm256_set1_ps(0.11f), c11 = _mm256_set1_ps(0.12f);
  for (long n = 0; n < iters; ++n) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                           _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0]; // keeps the loop alive
}

int main(int argc, char **argv) {
  int threads = 1;
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], "--threads=", 10))
      threads = std::atoi(argv[i] + 10);
    else if (!std::strncmp(argv[i], "--seconds=", 10))
      seconds = std::atof(argv[i] + 10);
    else {
      std::fprintf(stderr, "usage: attn-fma-peak [--threads=N] [--seconds=S]\n");
      return 2;
    }
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "attn-fma-peak: this CPU has no AVX2/FMA\n");
    return 2;
  }
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
  double gflops = 16.0 * 12.0 * iters * threads / dt / 1e9;
  std::printf("{\"threads\": %d, \"seconds\": %.3f, \"gflops\": %.2f, \"sink\": %g}\n", threads, dt,
              gflops, sink.load());
  return 0;
}
