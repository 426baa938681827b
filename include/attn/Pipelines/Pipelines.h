//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//
#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

/// Options of `attn-reference-pipeline`.
struct ReferencePipelineOptions
    : public PassPipelineOptions<ReferencePipelineOptions> {
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Lower all the way to the LLVM dialect (otherwise stop "
                     "after bufferisation and loops)"),
      llvm::cl::init(true)};
};

/// attn → linalg (unfused, materialises Tq×Tk) → one-shot bufferisation at
/// function boundaries → buffer deallocation → loops → LLVM dialect.
void buildReferencePipeline(OpPassManager &pm,
                            const ReferencePipelineOptions &options);

/// The shared tail: bufferised loops (scf/memref/arith/math/affine) → LLVM.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// Registers `attn-reference-pipeline` (and later pipelines) by name.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
