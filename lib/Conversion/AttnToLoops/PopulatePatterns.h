//===- PopulatePatterns.h - convert-attn-to-loops patterns ---- -*- C++ -*-===//
//
// One entry point per pattern file of lib/Conversion/AttnToLoops;
// populateAttnToLoopsPatterns (attn/Conversion/Passes.h) adds them all.
// Each takes `options` as checkAttnToLoopsOptions accepts them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLOOPS_POPULATEPATTERNS_H
#define ATTN_LIB_CONVERSION_ATTNTOLOOPS_POPULATEPATTERNS_H

#include "attn/Conversion/Passes.h"

#include <string>

namespace mlir::attn::loops {

/// attn.sdpa and attn.sdpa_partial → parallel FlashAttention-2 loops on
/// buffers, with key splits below min-work-items (SdpaToLoops.cpp).
void populateSdpaToLoopsPatterns(RewritePatternSet &patterns,
                                 const ConvertAttnToLoopsOptions &options);

/// attn.project → the packed-panel GEMM (ProjectToLoops.cpp).
void populateProjectToLoopsPatterns(RewritePatternSet &patterns,
                                    const ConvertAttnToLoopsOptions &options);

/// attn.merge_partial → one parallel loop over the rows
/// (MergePartialToLoops.cpp).
void populateMergePartialToLoopsPatterns(RewritePatternSet &patterns,
                                         const ConvertAttnToLoopsOptions &options);

/// attn.block_mask → one parallel loop over (b, h, Q block), tiles decided
/// by the mask function's bounds where they can be (BlockMaskToLoops.cpp).
void populateBlockMaskToLoopsPatterns(RewritePatternSet &patterns,
                                      const ConvertAttnToLoopsOptions &options);

/// attn.sdpa_grad → the two parallel loops of the deterministic fused
/// backward (SdpaGradToLoops.cpp).
void populateSdpaGradToLoopsPatterns(RewritePatternSet &patterns,
                                     const ConvertAttnToLoopsOptions &options);

/// Why the fused backward does not take `op` at `vectorWidth` lanes; empty
/// when it does.
std::string sdpaGradRefusal(SdpaGradOp op, int64_t vectorWidth);

/// Why the packed-panel projection does not take `op` at `w` lanes; empty
/// when it does.
std::string projectRefusal(ProjectOp op, int64_t w);

/// Whether the projection multiplies on AVX512-BF16 dot products: the
/// bf16-dot option at 16 lanes, bf16 x and W, In a multiple of 32.
bool projectTakesBf16Dot(ProjectOp op, const ConvertAttnToLoopsOptions &tiling);

/// Whether the projection multiplies on AMX tiles: the amx option at 16
/// lanes, bf16 x and W (or f16 ones with amx-fp16), In a multiple of 32.
bool projectTakesAmx(ProjectOp op, const ConvertAttnToLoopsOptions &tiling);

} // namespace mlir::attn::loops

#endif // ATTN_LIB_CONVERSION_ATTNTOLOOPS_POPULATEPATTERNS_H
