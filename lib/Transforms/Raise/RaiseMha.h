//===- RaiseMha.h - attn-raise's attn.mha step -------------------*- C++ -*-===//
#ifndef ATTN_TRANSFORMS_RAISE_RAISEMHA_H
#define ATTN_TRANSFORMS_RAISE_RAISEMHA_H

#include "attn/Dialect/AttnDialect.h"
#include "mlir/IR/PatternMatch.h"
#include <string>

namespace mlir::attn::raise {

/// Replaces the block around `sdpa` — Q, K and V each
/// split_heads(slice(project(x, W) (+ b))), the output projection reading
/// merge_heads(sdpa) — by one attn.mha, and returns the output projection
/// it made dead (the caller erases it with its dead producers). Failure
/// leaves the IR alone and says why in `why` (empty where no projection is
/// next to the attention: no block to raise, nothing to report).
FailureOr<Operation *> raiseBlockToMha(RewriterBase &rewriter, SdpaOp sdpa, std::string &why);

} // namespace mlir::attn::raise

#endif // ATTN_TRANSFORMS_RAISE_RAISEMHA_H
