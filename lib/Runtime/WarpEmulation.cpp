//===- WarpEmulation.cpp - mma.sync and ldmatrix on the CPU ---------------===//
//
// The warp-wide instructions of the tensor-core kernel, evaluated for
// attn-emulate-gpu-schedule through the one fragment table
// (attn/GPU/FragmentLayout.h): which lane holds which element, which lane
// supplied which ldmatrix row.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/WarpEmulation.h"

#include "attn/GPU/FragmentLayout.h"
#include "attn/Runtime/HostTensor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace frag = attn::gpu::frag;

namespace {
double widen(uint16_t bits, bool bf16) {
  return bf16 ? attn::runtime::bfloat16ToFloat(bits) : attn::runtime::halfToFloat(bits);
}

/// One mma.sync m16n8kK per warp of `threads`: the warp's A (16 x K) and B
/// (K x 8) gathered through the table's maps (mapA/mapB, valuesA/valuesB
/// per lane; operand value v of lane l at index v·threads + lane, read by
/// `readA`/`readB` as a double), then D = A·B + C in double, rounded once.
template <int K, typename ReadA, typename ReadB>
void mmaWarps(int valuesA, frag::Coord (*mapA)(int, int), ReadA readA, int valuesB,
              frag::Coord (*mapB)(int, int), ReadB readB, const float *C, float *D,
              int threads) {
  for (int w = 0; w < threads / frag::kWarpSize; ++w) {
    int base = w * frag::kWarpSize;
    double am[frag::kMmaM][K], bm[K][frag::kMmaN];
    for (int lane = 0; lane < frag::kWarpSize; ++lane) {
      for (int v = 0; v < valuesA; ++v) {
        frag::Coord e = mapA(lane, v);
        am[e.row][e.col] = readA(v * threads + base + lane);
      }
      for (int v = 0; v < valuesB; ++v) {
        frag::Coord e = mapB(lane, v);
        bm[e.row][e.col] = readB(v * threads + base + lane);
      }
    }
    for (int lane = 0; lane < frag::kWarpSize; ++lane)
      for (int v = 0; v < frag::kValuesC; ++v) {
        frag::Coord e = frag::mmaC(lane, v);
        double sum = C[v * threads + base + lane];
        for (int k = 0; k < K; ++k)
          sum += am[e.row][k] * bm[k][e.col];
        D[v * threads + base + lane] = float(sum);
      }
  }
}

/// What the tensor core is taken to read of a 32-bit TF32 operand register:
/// sign, exponent and the top 10 mantissa bits (the low 13 ignored). The
/// kernel rounds every operand with cvt.rna.tf32.f32 first, so this only
/// matters for an operand that missed its rounding.
double tf32Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits &= frag::kTf32KeepMask;
  float y;
  std::memcpy(&y, &bits, 4);
  return y;
}
} // namespace

extern "C" void attn_emu_mma_m16n8k16(int64_t a, int64_t b, int64_t c, int64_t d,
                                      int32_t bf16, int32_t threads) {
  auto *A = reinterpret_cast<const uint16_t *>(a);
  auto *B = reinterpret_cast<const uint16_t *>(b);
  mmaWarps<frag::kMmaK>(
      frag::kValuesA, frag::mmaA<int>, [&](int i) { return widen(A[i], bf16); },
      frag::kValuesB, frag::mmaB<int>, [&](int i) { return widen(B[i], bf16); },
      reinterpret_cast<const float *>(c), reinterpret_cast<float *>(d), threads);
}

extern "C" void attn_emu_mma_m16n8k8_tf32(int64_t a, int64_t b, int64_t c, int64_t d,
                                          int32_t threads) {
  auto *A = reinterpret_cast<const float *>(a);
  auto *B = reinterpret_cast<const float *>(b);
  mmaWarps<frag::kMmaKTf32>(
      frag::kValuesATf32, frag::mmaATf32<int>, [&](int i) { return tf32Bits(A[i]); },
      frag::kValuesBTf32, frag::mmaBTf32<int>, [&](int i) { return tf32Bits(B[i]); },
      reinterpret_cast<const float *>(c), reinterpret_cast<float *>(d), threads);
}

extern "C" void attn_emu_ldmatrix(int64_t base, int64_t rows, int64_t cols, int64_t row,
                                  int64_t col, int64_t out, int32_t numTiles,
                                  int32_t transpose, int32_t elementBytes, int32_t threads) {
  auto *R = reinterpret_cast<const int64_t *>(row);
  auto *Cc = reinterpret_cast<const int64_t *>(col);
  bool wide = elementBytes == 4;
  if (wide && transpose) {
    std::fprintf(stderr, "attn-emulate-gpu-schedule: ldmatrix .trans of 32-bit data\n");
    std::abort();
  }
  int rowElements = wide ? frag::kLdmatrixRowB32 : frag::kLdmatrixRowB16;
  int perRegister = wide ? 1 : 2;
  for (int w = 0; w < threads / frag::kWarpSize; ++w) {
    int wb = w * frag::kWarpSize;
    for (int lane = 0; lane < frag::kWarpSize; ++lane)
      for (int j = 0; j < numTiles; ++j)
        for (int e = 0; e < perRegister; ++e) {
          frag::Coord at = wide ? frag::ldmatrixElementB32(lane)
                                : frag::ldmatrixElement(lane, e, transpose != 0);
          // Row `at.row` of matrix j was addressed by lane 8j + at.row.
          int src = wb + 8 * j + at.row;
          int64_t r = R[src], c0 = Cc[src];
          // A row address must also be 16-byte aligned (the GPU faults).
          if (r < 0 || r >= rows || c0 < 0 || c0 + rowElements > cols ||
              c0 % rowElements != 0) {
            std::fprintf(stderr,
                         "attn-emulate-gpu-schedule: ldmatrix address (%lld, %lld) of thread "
                         "%d outside the %lldx%lld shared buffer or not 16-byte aligned\n",
                         (long long)r, (long long)c0, src, (long long)rows, (long long)cols);
            std::abort();
          }
          int64_t from = r * cols + c0 + at.col;
          int64_t to = (perRegister * j + e) * threads + wb + lane;
          if (wide)
            reinterpret_cast<uint32_t *>(out)[to] = reinterpret_cast<const uint32_t *>(base)[from];
          else
            reinterpret_cast<uint16_t *>(out)[to] = reinterpret_cast<const uint16_t *>(base)[from];
        }
  }
}

std::vector<std::pair<const char *, void *>> attn::runtime::warpEmulationSymbols() {
  return {{"attn_emu_mma_m16n8k16", reinterpret_cast<void *>(&attn_emu_mma_m16n8k16)},
          {"attn_emu_mma_m16n8k8_tf32", reinterpret_cast<void *>(&attn_emu_mma_m16n8k8_tf32)},
          {"attn_emu_ldmatrix", reinterpret_cast<void *>(&attn_emu_ldmatrix)}};
}
