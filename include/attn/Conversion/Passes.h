//===- Passes.h - attn lowering passes --------------------------*- C++ -*-===//
#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn/Dialect/AttnDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Dialect/AttnConversion.h.inc"

/// Each primitive attn op → linalg on tensors (the unfused reference).
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

/// Tile sizes and vector width of the fused CPU lowering.
struct FlashTiling {
  int64_t tileQ = 64;
  int64_t tileK = 64;
  int64_t vectorWidth = 8;
};

/// f32 attn.sdpa → fused FlashAttention-2 loops on buffers.
void populateAttnToLoopsPatterns(RewritePatternSet &patterns,
                                 const FlashTiling &tiling);

/// Tile sizes of the GPU kernel schedule.
struct GpuTiling {
  int64_t tileQ = 64; ///< query rows per block = threads per block
  int64_t tileK = 32; ///< keys per shared-memory K/V tile
};

/// attn.sdpa → GPU kernel schedule (scf.forall over blocks and threads).
void populateAttnToGpuPatterns(RewritePatternSet &patterns,
                               const GpuTiling &tiling);

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/AttnConversion.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
