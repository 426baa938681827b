//===- Lockstep.h - run a thread loop's threads in lockstep -----*- C++ -*-===//
#ifndef ATTN_LIB_GPU_LOCKSTEP_H
#define ATTN_LIB_GPU_LOCKSTEP_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// Whether a thread-mapped loop uses warp-wide instructions or barriers
/// inside (and so cannot run one thread after another).
bool needsLockstep(scf::ForallOp threadLoop);

/// Replaces the thread loop by its threads run in lockstep, lanes as vector
/// elements (Lockstep.cpp).
LogicalResult runInLockstep(RewriterBase &rewriter, scf::ForallOp threadLoop);

} // namespace mlir::attn

#endif // ATTN_LIB_GPU_LOCKSTEP_H
