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

/// Options of `attn-cpu-pipeline`.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<int64_t> tileQ{*this, "tile-q",
                                     llvm::cl::desc("Query rows per tile"),
                                     llvm::cl::init(64)};
  PassOptions::Option<int64_t> tileK{*this, "tile-k",
                                     llvm::cl::desc("Keys per tile"),
                                     llvm::cl::init(64)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width", llvm::cl::desc("f32 lanes per vector"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Worker threads (0: one per core, or OMP_NUM_THREADS)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Lower all the way to the LLVM dialect"),
      llvm::cl::init(true)};
};

/// attn → fused FlashAttention-2 loops for every f32 sdpa (mha through
/// decompose), the reference lowering for the rest (projections, other
/// element types, dropout) → bufferisation → OpenMP threads → LLVM.
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// attn → linalg (unfused, materialises Tq×Tk) → one-shot bufferisation at
/// function boundaries → buffer deallocation → loops → LLVM dialect.
void buildReferencePipeline(OpPassManager &pm,
                            const ReferencePipelineOptions &options);

/// The shared tail: bufferised loops (scf/vector/memref/arith/math/affine,
/// OpenMP) → LLVM.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// Registers `attn-reference-pipeline` (and later pipelines) by name.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
