//===- GpuBlock.h - what both GPU kernels know about their thread block -*- C++ -*-===//
//
// The CUDA-core kernel (AttnToGpu.cpp) and the tensor-core kernel
// (TensorCoreKernel.cpp) are both one thread block per (batch·head, Q tile):
// the grid, the thread loops, the block's indices, its key visibility rules,
// ALiBi bias and K/V tile range are written once here.
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

  /// One past the block's last query row: min(q0 + rows, Tq).
  Value rowEnd() { return g.minI(g.add(q0, g.idx(rows)), s.tq); }

  /// The K/V tiles of `tileSize` keys holding a key some row of the block
  /// sees (causal limit, window, key length).
  flash::KeyVisibility::Range tileRange(int64_t tileSize) {
    return keys->tileRange([&] { return q0; }, [&] { return rowEnd(); }, tileSize);
  }
};

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

/// forall (bh, qTile) in (B·H, ceil(Tq / rows)) mapped to
/// [#gpu.block<x>, #gpu.block<y>], body(bh, qTile) emitted inside.
inline void forEachBlock(flash::KernelBuilder &g, const flash::SdpaProblem &p,
                         const flash::SdpaBuffers &s, int64_t rows,
                         function_ref<void(Value, Value)> body) {
  OpBuilder &b = g.b;
  Value bh = g.mul(s.batch, g.idx(p.heads));
  Value numQTiles = g.ceilDiv(s.tq, rows);
  auto mapping = b.getArrayAttr(
      {gpu::GPUBlockMappingAttr::get(b.getContext(), gpu::MappingId::DimX),
       gpu::GPUBlockMappingAttr::get(b.getContext(), gpu::MappingId::DimY)});
  scf::ForallOp::create(b, g.loc, ArrayRef<OpFoldResult>{bh, numQTiles}, ValueRange{},
                        mapping, [&](OpBuilder &nb, Location, ValueRange ivs) {
                          OpBuilder::InsertionGuard inner(b);
                          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                          body(ivs[0], ivs[1]);
                          scf::InParallelOp::create(b, g.loc);
                        });
}

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_GPUBLOCK_H
