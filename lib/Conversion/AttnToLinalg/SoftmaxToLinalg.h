//===- SoftmaxToLinalg.h - the softmax family to linalg ---------*- C++ -*-===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLINALG_SOFTMAXTOLINALG_H
#define ATTN_LIB_CONVERSION_ATTNTOLINALG_SOFTMAXTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
/// attn.softmax, attn.dropout, attn.logsumexp and attn.merge_partial to
/// linalg on tensors (the reference lowering's row reductions).
void populateSoftmaxToLinalgPatterns(RewritePatternSet &patterns);
} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOLINALG_SOFTMAXTOLINALG_H
