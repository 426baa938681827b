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
// attn-fma-peak --kind=bf16-dot|f16|amx-bf16 measures the peak of a
// half-precision instruction instead, on 512-bit vectors: vdpbf16ps
// (AVX512-BF16: 32 bf16 products summed pairwise into 16 f32 lanes),
// vfmadd…ph (AVX512-FP16: 32 f16 lanes), or tdpbf16ps (AMX-BF16: a 16×32
// bf16 tile times a 32×16 one into a 16×16 f32 tile, after the Linux
// permission request for the tile state). A multiply-add counts two flops
// in every kind, so the figures compare directly; a kind the CPU lacks
// prints "supported": false and exits 0. The CPU suite quotes each
// half-precision row against the peak of the instruction it runs on.
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
#include <sys/syscall.h>
#include <unistd.h>
#include <cpuid.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

// Twelve independent accumulators in registers (written out, so no
// compiler keeps them in memory), for one instruction: the accumulators'
// type ACC, the operands' OPND (built by MKOP from a float), c = STEP(c, a,
// b) the multiply-add. NAME(iters) returns a lane of the sum, which keeps
// the loop alive.
#define ATTN_PEAK_LOOP(NAME, TARGET, ACC, SET1ACC, OPND, MKOP, STEP, ADD, LANES)   \
  __attribute__((target(TARGET))) static double NAME(long iters) {               \
    const OPND a = MKOP(0.999f), b = MKOP(1e-3f);                                \
    ACC c0 = SET1ACC(0.01f), c1 = SET1ACC(0.02f), c2 = SET1ACC(0.03f),           \
        c3 = SET1ACC(0.04f), c4 = SET1ACC(0.05f), c5 = SET1ACC(0.06f),           \
        c6 = SET1ACC(0.07f), c7 = SET1ACC(0.08f), c8 = SET1ACC(0.09f),           \
        c9 = SET1ACC(0.10f), c10 = SET1ACC(0.11f), c11 = SET1ACC(0.12f);         \
    for (long n = 0; n < iters; ++n) {                                           \
      c0 = STEP(c0, a, b);                                                       \
      c1 = STEP(c1, a, b);                                                       \
      c2 = STEP(c2, a, b);                                                       \
      c3 = STEP(c3, a, b);                                                       \
      c4 = STEP(c4, a, b);                                                       \
      c5 = STEP(c5, a, b);                                                       \
      c6 = STEP(c6, a, b);                                                       \
      c7 = STEP(c7, a, b);                                                       \
      c8 = STEP(c8, a, b);                                                       \
      c9 = STEP(c9, a, b);                                                       \
      c10 = STEP(c10, a, b);                                                     \
      c11 = STEP(c11, a, b);                                                     \
    }                                                                            \
    ACC s = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7)));   \
    s = ADD(s, ADD(ADD(c8, c9), ADD(c10, c11)));                                 \
    float out[LANES];                                                            \
    std::memcpy(out, &s, sizeof(out));                                           \
    return out[0];                                                               \
  }

#define ATTN_BF16_PAIR(x) _mm512_cvtne2ps_pbh(_mm512_set1_ps(x), _mm512_set1_ps(x))
#define ATTN_F16_ACC(x) _mm512_set1_ph(static_cast<_Float16>(x))
ATTN_PEAK_LOOP(fmaLoopYmm, "avx2,fma", __m256, _mm256_set1_ps, __m256, _mm256_set1_ps,
               _mm256_fmadd_ps, _mm256_add_ps, 8)
ATTN_PEAK_LOOP(fmaLoopZmm, "avx512f", __m512, _mm512_set1_ps, __m512, _mm512_set1_ps,
               _mm512_fmadd_ps, _mm512_add_ps, 16)
ATTN_PEAK_LOOP(bf16DotLoop, "avx512f,avx512bf16", __m512, _mm512_set1_ps, __m512bh,
               ATTN_BF16_PAIR, _mm512_dpbf16_ps, _mm512_add_ps, 16)
ATTN_PEAK_LOOP(f16FmaLoop, "avx512f,avx512fp16", __m512h, ATTN_F16_ACC, __m512h, ATTN_F16_ACC,
               _mm512_fmadd_ph, _mm512_add_ph, 16)

// AMX-BF16: tiles 0-3 accumulate (16 rows of 16 f32), tile 4 is A (16
// rows of 32 bf16), tile 5 B (16 rows of 16 bf16 pairs). Each thread loads
// its own tile configuration; the tiles' data never changes (the rate, not
// the values, is measured).
struct AmxTileConfig {
  unsigned char palette = 1, startRow = 0, reserved[14] = {};
  unsigned short colsb[16] = {};
  unsigned char rows[16] = {};
};

__attribute__((target("amx-tile,amx-bf16"))) static double amxLoop(long iters) {
  AmxTileConfig cfg;
  for (int t = 0; t < 6; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  alignas(64) static thread_local unsigned short data[16 * 32];
  alignas(64) static thread_local float out[16 * 16];
  for (unsigned short &x : data)
    x = 0x3f80; // bf16 1.0
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, data, 64);
  _tile_loadd(5, data, 64);
  for (long n = 0; n < iters; ++n) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  }
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

// Whether the CPU has AMX-TILE and AMX-BF16 (CPUID leaf 7: EDX bits 24 and
// 22) and Linux grants this process the tile data state (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, 18).
static bool amxUsable() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22)))
    return false;
  return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}

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
  const char *kind = "f32";
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], "--threads=", 10))
      threads = std::atoi(argv[i] + 10);
    else if (!std::strncmp(argv[i], "--seconds=", 10))
      seconds = std::atof(argv[i] + 10);
    else if (!std::strcmp(argv[i], "--isa=avx2"))
      isa = "avx2";
    else if (!std::strcmp(argv[i], "--isa=avx512") && hasAvx512)
      isa = "avx512";
    else if (!std::strcmp(argv[i], "--kind=f32") || !std::strcmp(argv[i], "--kind=bf16-dot") ||
             !std::strcmp(argv[i], "--kind=f16") || !std::strcmp(argv[i], "--kind=amx-bf16"))
      kind = argv[i] + 7;
    else if (!std::strcmp(argv[i], "--bandwidth"))
      bandwidthMib = 1024;
    else if (!std::strncmp(argv[i], "--bandwidth=", 12) && std::atol(argv[i] + 12) > 0)
      bandwidthMib = std::atol(argv[i] + 12);
    else {
      std::fprintf(stderr, "usage: attn-fma-peak [--threads=N] [--seconds=S] "
                           "[--isa=avx2|avx512 (avx512 where the CPU has it)] "
                           "[--kind=f32|bf16-dot|f16|amx-bf16] "
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
  // Flops of one step of the loop: 12 instructions on `lanes` lanes, or 4
  // tile multiplies of 16·16·32 products.
  double flopsPerIter = 2.0 * (zmm ? 16 : 8) * 12;
  if (std::strcmp(kind, "f32")) {
    bool supported = false;
    if (!std::strcmp(kind, "bf16-dot")) {
      supported = __builtin_cpu_supports("avx512bf16");
      fmaLoop = bf16DotLoop;
      flopsPerIter = 2.0 * 32 * 12;
    } else if (!std::strcmp(kind, "f16")) {
      supported = __builtin_cpu_supports("avx512fp16");
      fmaLoop = f16FmaLoop;
      flopsPerIter = 2.0 * 32 * 12;
    } else {
      supported = amxUsable();
      fmaLoop = amxLoop;
      flopsPerIter = 2.0 * 16 * 16 * 32 * 4;
    }
    if (!supported) {
      std::printf("{\"kind\": \"%s\", \"supported\": false}\n", kind);
      return 0;
    }
    isa = kind;
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
  double gflops = flopsPerIter * iters * threads / dt / 1e9;
  std::printf("{\"threads\": %d, \"isa\": \"%s\", \"kind\": \"%s\", \"supported\": true, "
              "\"seconds\": %.3f, \"gflops\": %.2f, \"sink\": %g}\n",
              threads, isa, kind, dt, gflops, sink.load());
  return 0;
}
