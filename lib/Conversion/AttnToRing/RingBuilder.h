//===- RingBuilder.h - ring attention for one planned sdpa -----*- C++ -*-===//
//
// What attn-shard's check of a ring-sharded attn.sdpa found (AttnToRing.cpp),
// and the builder that turns it into the ring (RingBuilder.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTORING_RINGBUILDER_H
#define ATTN_LIB_CONVERSION_ATTNTORING_RINGBUILDER_H

#include "attn/Dialect/AttnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::ring {

/// What one sharded sdpa asks for, checked.
struct RingPlan {
  mutable SdpaOp op; // accessors are non-const
  func::FuncOp func;
  RingLayout layout = RingLayout::contiguous;
  int64_t ranks = 1;
  int64_t tq = 0, tk = 0;  ///< global lengths
  int64_t nq = 0, nk = 0;  ///< local lengths (T / P)
  int qChunks = 1, kChunks = 1; ///< blocks per rank on each side
  int64_t cq = 0, ck = 0;  ///< rows per block
  /// The mask's query / key dims (-1: absent or a broadcast 1).
  int64_t maskQueryDim = -1, maskKeyDim = -1;
  bool causal = false;

  /// Score or mask functions (they read global positions).
  bool hasMods() const { return op.hasScoreMod() || op.hasMaskMod(); }
};

/// Replaces plan.op by the ring: the step loop over the K/V blocks, the
/// sends and receives, the block kernel and the final merge.
void buildRing(OpBuilder &b, const RingPlan &plan);

} // namespace mlir::attn::ring

#endif // ATTN_LIB_CONVERSION_ATTNTORING_RINGBUILDER_H
