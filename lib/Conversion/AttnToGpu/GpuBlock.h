//===- GpuBlock.h - what both GPU kernels know about their thread block -*- C++ -*-===//
//
// The CUDA-core kernel (AttnToGpu.cpp) and the tensor-core kernel
// (TensorCoreKernel.cpp) are both one thread block per (batch·head, Q tile);
// the backward's kernels (SdpaGradKernel.cpp) walk one (batch row, head) at
// a time too. The grid, the thread loops, the block's indices, its key
// visibility rules, ALiBi bias, K/V tile range and the score of one (row,
// key) are written once here.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_GPUBLOCK_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_GPUBLOCK_H

#include "Conversion/FlashCore/FlashCore.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <optional>

namespace mlir::attn {

/// One block's place in the problem: batch row, query head, its K/V head
/// (GQA) and first query row, with the rules that batch row's keys follow.
/// Both kernels derive from it.
struct GpuBlock {
  flash::KernelBuilder &g;
  const flash::SdpaProblem &p;
  const flash::SdpaBuffers &s;
  int64_t rows; ///< query rows per block
  Value bIdx, hIdx, hk, q0;
  std::optional<flash::KeyVisibility> keys; ///< of batch row bIdx
  std::optional<flash::AlibiBias> alibi;    ///< of (bIdx, hIdx)

  /// Emits the indices of block (bh, qTile) and the rules at g's insertion
  /// point.
  GpuBlock(flash::KernelBuilder &g, const flash::SdpaProblem &p,
           const flash::SdpaBuffers &s, int64_t rows, Value bh, Value qTile)
      : g(g), p(p), s(s), rows(rows) {
    hIdx = g.rem(bh, g.idx(p.heads));
    bIdx = g.div(bh, g.idx(p.heads));
    hk = g.div(hIdx, g.idx(p.group));
    q0 = g.mul(qTile, g.idx(rows));
    keys.emplace(g, p, s, bIdx);
    if (p.hasAlibi())
      alibi.emplace(g, p, s, *keys, bIdx, hIdx);
  }

  /// The rules of batch row `batch` and query head `head` for a kernel
  /// that walks several Q tiles (q0 stays null: no rowEnd/tileRange).
  GpuBlock(flash::KernelBuilder &g, const flash::SdpaProblem &p,
           const flash::SdpaBuffers &s, int64_t rows, Value batch, Value head, Value kvHead)
      : g(g), p(p), s(s), rows(rows), bIdx(batch), hIdx(head), hk(kvHead) {
    keys.emplace(g, p, s, bIdx);
    if (p.hasAlibi())
      alibi.emplace(g, p, s, *keys, bIdx, hIdx);
  }

  /// The factors the backward multiplies dP∘P by to reach the gradient of
  /// the scaled dot product: the softcap's 1 - tanh² and the score
  /// function's derivative (attn.sdpa_grad's score_mod_grad), each null
  /// where the problem has none.
  struct ScoreSlopes {
    Value softcap, scoreMod;
  };

  /// The score of query row `row` and key `kj` (index) of (bIdx, hIdx) in
  /// log2 units, from dot = q_row·k_kj (f32): scale·log2e, the softcap, the
  /// score function, the ALiBi bias and log2e·(additive mask); -inf where a
  /// keep rule hides the key (key visibility, the mask function, an i1
  /// mask). The mask operand is read at row and key clamped into [0, Tq)
  /// and [0, Tk) (padding rows and keys of a tile). With `slopes`, also the
  /// backward's factors at this score. Without `keepRules` (a tile every
  /// row sees whole, no mask) only the score, no keep rule.
  Value scoreAt(Value dot, Value row, Value kj, ScoreSlopes *slopes = nullptr,
                bool keepRules = true);

  /// One past the block's last query row: min(q0 + rows, Tq).
  Value rowEnd() { return g.minI(g.add(q0, g.idx(rows)), s.tq); }

  /// The K/V tiles of `tileSize` keys holding a key some row of the block
  /// sees (causal limit, window, key length).
  flash::KeyVisibility::Range tileRange(int64_t tileSize) {
    return keys->tileRange([&] { return q0; }, [&] { return rowEnd(); }, tileSize);
  }
};

/// Static shared memory a kernel may use without opting in.
inline constexpr int64_t kSharedBytes = 48 * 1024;

/// Threads per block and rows or keys per step whose workgroup buffers
/// (`bytes(threads, step)`) fit kSharedBytes, from (threads, step): the
/// step halved down to 8, then the threads down to 16, then the step
/// further; nullopt when even (16, 1) does not fit. All GPU kernels size
/// their tiles by this one rule.
inline std::optional<std::pair<int64_t, int64_t>>
fitShared(int64_t threads, int64_t step, function_ref<int64_t(int64_t, int64_t)> bytes) {
  while (step > 8 && bytes(threads, step) > kSharedBytes)
    step /= 2;
  while (threads > 16 && bytes(threads, step) > kSharedBytes)
    threads /= 2;
  while (step > 1 && bytes(threads, step) > kSharedBytes)
    step /= 2;
  if (bytes(threads, step) > kSharedBytes)
    return std::nullopt;
  return std::pair{threads, step};
}

/// A forall over `n` threads (`#gpu.thread<x>`); body(t) is emitted inside.
inline void forEachThread(flash::KernelBuilder &g, int64_t n, function_ref<void(Value)> body) {
  OpBuilder &b = g.b;
  auto mapping = b.getArrayAttr(
      {gpu::GPUThreadMappingAttr::get(b.getContext(), gpu::MappingId::DimX)});
  scf::ForallOp::create(b, g.loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n)}, ValueRange{},
                        mapping, [&](OpBuilder &nb, Location, ValueRange ivs) {
                          OpBuilder::InsertionGuard guard(b);
                          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                          body(ivs[0]);
                          scf::InParallelOp::create(b, g.loc);
                        });
}

/// forall (x, y) in (nx, ny) mapped to [#gpu.block<x>, #gpu.block<y>],
/// body(x, y) emitted inside: one thread block per pair.
inline void forEachBlockOf(flash::KernelBuilder &g, Value nx, Value ny,
                           function_ref<void(Value, Value)> body) {
  OpBuilder &b = g.b;
  auto mapping = b.getArrayAttr(
      {gpu::GPUBlockMappingAttr::get(b.getContext(), gpu::MappingId::DimX),
       gpu::GPUBlockMappingAttr::get(b.getContext(), gpu::MappingId::DimY)});
  scf::ForallOp::create(b, g.loc, ArrayRef<OpFoldResult>{nx, ny}, ValueRange{}, mapping,
                        [&](OpBuilder &nb, Location, ValueRange ivs) {
                          OpBuilder::InsertionGuard inner(b);
                          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                          body(ivs[0], ivs[1]);
                          scf::InParallelOp::create(b, g.loc);
                        });
}

/// forall (bh, qTile) in (B·H, ceil(Tq / rows)) as blocks, body(bh, qTile)
/// emitted inside.
inline void forEachBlock(flash::KernelBuilder &g, const flash::SdpaProblem &p,
                         const flash::SdpaBuffers &s, int64_t rows,
                         function_ref<void(Value, Value)> body) {
  Value bh = g.mul(s.batch, g.idx(p.heads));
  Value numQTiles = g.ceilDiv(s.tq, rows);
  forEachBlockOf(g, bh, numQTiles, body);
}

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_GPUBLOCK_H
