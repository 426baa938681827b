//===- Passes.h - attn lowering passes --------------------------*- C++ -*-===//
#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Conversion/Passes.h.inc"

/// Each primitive attn op → linalg on tensors (the unfused reference).
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

/// The rule convert-attn-to-loops applies to its options (tile-q a positive
/// multiple of 4, tile-k a positive multiple of 2 x vector-width,
/// min-work-items >= 0, prepack-limit-mib in [0, 2^30]): empty when they
/// hold, else the message the pass reports.
std::string checkAttnToLoopsOptions(const ConvertAttnToLoopsOptions &options);

/// attn.sdpa and attn.sdpa_partial (f32, f16 or bf16) → fused
/// FlashAttention-2 loops on buffers, attn.merge_partial → a parallel loop,
/// attn.project → tiled matmuls; `options` must pass checkAttnToLoopsOptions.
void populateAttnToLoopsPatterns(RewritePatternSet &patterns,
                                 const ConvertAttnToLoopsOptions &options);

/// The rule convert-attn-to-gpu applies to its options (tile-q in
/// [1, 1024], tile-k positive): empty when they hold, else the message.
std::string checkAttnToGpuOptions(const ConvertAttnToGpuOptions &options);

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
