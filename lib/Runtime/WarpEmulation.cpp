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

namespace frag = attn::gpu::frag;

namespace {
double widen(uint16_t bits, bool bf16) {
  return bf16 ? attn::runtime::bfloat16ToFloat(bits) : attn::runtime::halfToFloat(bits);
}
} // namespace

extern "C" void attn_emu_mma_m16n8k16(int64_t a, int64_t b, int64_t c, int64_t d,
                                      int32_t bf16, int32_t threads) {
  auto *A = reinterpret_cast<const uint16_t *>(a);
  auto *B = reinterpret_cast<const uint16_t *>(b);
  auto *C = reinterpret_cast<const float *>(c);
  auto *D = reinterpret_cast<float *>(d);
  for (int w = 0; w < threads / frag::kWarpSize; ++w) {
    int base = w * frag::kWarpSize;
    // The warp's matrices, gathered through the table.
    double am[frag::kMmaM][frag::kMmaK], bm[frag::kMmaK][frag::kMmaN];
    for (int lane = 0; lane < frag::kWarpSize; ++lane) {
      for (int v = 0; v < frag::kValuesA; ++v) {
        frag::Coord e = frag::mmaA(lane, v);
        am[e.row][e.col] = widen(A[v * threads + base + lane], bf16);
      }
      for (int v = 0; v < frag::kValuesB; ++v) {
        frag::Coord e = frag::mmaB(lane, v);
        bm[e.row][e.col] = widen(B[v * threads + base + lane], bf16);
      }
    }
    for (int lane = 0; lane < frag::kWarpSize; ++lane)
      for (int v = 0; v < frag::kValuesC; ++v) {
        frag::Coord e = frag::mmaC(lane, v);
        double sum = C[v * threads + base + lane];
        for (int k = 0; k < frag::kMmaK; ++k)
          sum += am[e.row][k] * bm[k][e.col];
        D[v * threads + base + lane] = float(sum);
      }
  }
}

extern "C" void attn_emu_ldmatrix(int64_t base, int64_t rows, int64_t cols, int64_t row,
                                  int64_t col, int64_t out, int32_t numTiles,
                                  int32_t transpose, int32_t threads) {
  auto *M = reinterpret_cast<const uint16_t *>(base);
  auto *R = reinterpret_cast<const int64_t *>(row);
  auto *Cc = reinterpret_cast<const int64_t *>(col);
  auto *O = reinterpret_cast<uint16_t *>(out);
  for (int w = 0; w < threads / frag::kWarpSize; ++w) {
    int wb = w * frag::kWarpSize;
    for (int lane = 0; lane < frag::kWarpSize; ++lane)
      for (int j = 0; j < numTiles; ++j)
        for (int e = 0; e < 2; ++e) {
          frag::Coord at = frag::ldmatrixElement(lane, e, transpose != 0);
          // Row `at.row` of matrix j was addressed by lane 8j + at.row.
          int src = wb + 8 * j + at.row;
          int64_t r = R[src], c0 = Cc[src];
          if (r < 0 || r >= rows || c0 < 0 || c0 + 8 > cols) {
            std::fprintf(stderr,
                         "attn-emulate-gpu-schedule: ldmatrix address (%lld, %lld) of thread "
                         "%d outside the %lldx%lld shared buffer\n",
                         (long long)r, (long long)c0, src, (long long)rows, (long long)cols);
            std::abort();
          }
          O[(2 * j + e) * threads + wb + lane] = M[r * cols + c0 + at.col];
        }
  }
}

std::vector<std::pair<const char *, void *>> attn::runtime::warpEmulationSymbols() {
  return {{"attn_emu_mma_m16n8k16", reinterpret_cast<void *>(&attn_emu_mma_m16n8k16)},
          {"attn_emu_ldmatrix", reinterpret_cast<void *>(&attn_emu_ldmatrix)}};
}
