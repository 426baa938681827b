//===- Pipelines.cpp - attn pass pipelines --------------------------------===//
#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Before scf-to-cf: the alloca scopes that scf-to-openmp creates must
  // keep a single block.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// One-shot bufferisation at function boundaries (identity layouts), then
/// ownership-based deallocation.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions buf;
  buf.bufferizeFunctionBoundaries = true;
  buf.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(buf));
  bufferization::buildBufferDeallocationPipeline(pm);
}

/// The unfused reference route for every attn op still present: decompose,
/// linalg, bufferisation, loops.
static void addReferenceLowering(OpPassManager &pm) {
  pm.addPass(mlir::attn::createAttnDecompose());
  pm.addPass(mlir::attn::createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::buildCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options) {
  // Primitive chains become sdpa; mha becomes projections around an sdpa.
  pm.addPass(createAttnFuse());
  AttnDecomposeOptions keepSdpa;
  keepSdpa.keepSdpa = true;
  pm.addPass(createAttnDecompose(keepSdpa));
  ConvertAttnToLoopsOptions tiling;
  tiling.tileQ = options.tileQ;
  tiling.tileK = options.tileK;
  tiling.vectorWidth = options.vectorWidth;
  pm.addPass(createConvertAttnToLoops(tiling));
  // What the fused lowering left (projections, f16/bf16, dropout) takes the
  // reference route.
  addReferenceLowering(pm);
  if (!options.lowerToLLVM)
    return;
  ConvertSCFToOpenMPPassOptions omp;
  omp.numThreads = options.threads;
  pm.addPass(createConvertSCFToOpenMPPass(omp));
  buildLowerToLLVMPipeline(pm);
}

void mlir::attn::buildReferencePipeline(OpPassManager &pm,
                                        const ReferencePipelineOptions &options) {
  addReferenceLowering(pm);
  if (options.lowerToLLVM)
    buildLowerToLLVMPipeline(pm);
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<ReferencePipelineOptions>(
      "attn-reference-pipeline",
      "attn → linalg (unfused reference) → bufferisation → loops → LLVM",
      buildReferencePipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "attn-cpu-pipeline",
      "attn → fused FlashAttention-2 loops (sdpa), reference lowering for the "
      "rest → bufferisation → OpenMP → LLVM",
      buildCpuPipeline);
}
