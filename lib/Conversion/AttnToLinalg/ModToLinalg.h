//===- ModToLinalg.h - score and mask functions to linalg -------*- C++ -*-===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLINALG_MODTOLINALG_H
#define ATTN_LIB_CONVERSION_ATTNTOLINALG_MODTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
/// attn.score_mod and attn.mask_mod to one elementwise linalg.generic each,
/// the function's body inlined with linalg.index for the positions.
void populateModToLinalgPatterns(RewritePatternSet &patterns);
} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOLINALG_MODTOLINALG_H
