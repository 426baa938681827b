//===- Passes.h - attn lowering passes --------------------------*- C++ -*-===//
#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn/Dialect/AttnDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Dialect/AttnConversion.h.inc"

/// Each primitive attn op → linalg on tensors (the unfused reference).
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/AttnConversion.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
