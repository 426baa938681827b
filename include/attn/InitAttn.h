//===- InitAttn.h - everything an embedding compiler registers --*- C++ -*-===//
//
// The one header an MLIR-based compiler includes to use attn: register the
// dialect (and what its lowerings need) into a DialectRegistry, register the
// passes and pipelines by name (for textual pipelines and mlir-opt-like
// drivers), and build a pipeline into an OpPassManager from typed options.
//
//   mlir::DialectRegistry registry;
//   mlir::attn::registerAttnDialect(registry);            // parse/print attn
//   mlir::attn::registerAttnLoweringDependencies(registry); // run pipelines
//   mlir::attn::registerAttnPasses();
//   mlir::attn::registerAttnPipelines();
//
//   mlir::PassManager pm(&context);
//   mlir::attn::CpuPipelineOptions options;
//   options.tileQ = 32;
//   mlir::attn::buildCpuPipeline(pm, options);
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_INITATTN_H
#define ATTN_INITATTN_H

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/GPU/Passes.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

namespace mlir {
class DialectRegistry;

namespace attn {

/// Adds the attn dialect to `registry`.
void registerAttnDialect(DialectRegistry &registry);

/// Adds every dialect, interface implementation and extension that the attn
/// lowerings and pipelines create or need (linalg, bufferisation models,
/// scf, vector, memref, OpenMP, LLVM, ...), and the upstream tiling
/// interfaces of attn.sdpa / attn.sdpa_partial
/// (attn/Transforms/TilingInterfaceImpl.h). Without these, a pipeline run
/// fails with a diagnostic naming the missing dialect or interface.
void registerAttnLoweringDependencies(DialectRegistry &registry);

/// Registers all 15 attn passes by name:
///   attn/Transforms/Passes.h  attn-decompose, attn-fuse, attn-raise,
///                             attn-differentiate, attn-expand-math,
///                             attn-openmp-schedule;
///   attn/Conversion/Passes.h  convert-attn-to-linalg, convert-attn-to-loops,
///                             convert-attn-to-gpu, attn-shard, attn-lower-mpi;
///   attn/GPU/Passes.h         attn-emulate-gpu-schedule,
///                             attn-map-schedule-to-gpu, attn-legalize-mma-bf16,
///                             attn-align-workgroup-buffers.
void registerAttnPasses();

// registerAttnPipelines() (the 5 pipelines: attn-reference-pipeline,
// attn-cpu-pipeline, attn-ring-pipeline, attn-gpu-pipeline,
// attn-gpu-schedule-pipeline) and the typed builders buildReferencePipeline /
// buildCpuPipeline / buildRingPipeline / buildGpuPipeline /
// buildGpuSchedulePipeline / buildLowerToLLVMPipeline come from
// attn/Pipelines/Pipelines.h.

/// All of the above: dialect, lowering dependencies, passes and pipelines.
void registerAllAttn(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_INITATTN_H
