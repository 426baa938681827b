//===- Pipelines.cpp - attn pass pipelines --------------------------------===//
#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/GPU/Passes.h"
#include "attn/Transforms/Passes.h"

// The conversions one by one, not mlir/Conversion/Passes.h: that header
// includes every upstream conversion and made this file the slowest of the
// build to compile (bench/NOTES.md, "Build time").
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // x86vector: the bf16 prefill's avx512.dot (convert-attn-to-loops
  // bf16-dot) becomes llvm.x86.avx512bf16.dpbf16ps.512; amx: its tiles
  // (convert-attn-to-loops amx) the llvm.x86 tile intrinsics.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  vectorToLLVM.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // Before scf-to-cf: the alloca scopes that scf-to-openmp creates must
  // keep a single block; those a collapsed loop left in an scf region get
  // an scf.execute_region to turn into blocks in.
  pm.addPass(mlir::attn::createAttnIsolateAllocaScopes());
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
  // A ring's step loop yields freshly merged (O, lse) tensors each step.
  buf.allowReturnAllocsFromLoops = true;
  buf.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(buf));
  bufferization::buildBufferDeallocationPipeline(pm);
  // The clones the deallocation pipeline leaves (a function that returns
  // one of its arguments, e.g. merge_heads(split_heads(x)) folded to x,
  // returns a copy of it) become an allocation and a copy here, for every
  // pipeline: no LLVM tail lowers bufferization.clone.
  pm.addPass(createConvertBufferizationToMemRefPass());
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

/// Primitive chains become sdpa; mha becomes projections around an sdpa:
/// what the fused lowerings (CPU and GPU) take.
static void addRaiseToSdpa(OpPassManager &pm) {
  pm.addPass(mlir::attn::createAttnFuse());
  mlir::attn::AttnDecomposeOptions keepSdpa;
  keepSdpa.keepSdpa = true;
  pm.addPass(mlir::attn::createAttnDecompose(keepSdpa));
}

/// The CPU pipeline's passes, for its own options or the ring pipeline's
/// (which share them).
template <typename Options>
static void addCpuLowering(OpPassManager &pm, const Options &options) {
  if (options.raise)
    pm.addPass(mlir::attn::createAttnRaise());
  addRaiseToSdpa(pm);
  pm.addPass(mlir::attn::createConvertAttnToLoops(options.loopOptions()));
  if (options.emulateAmx)
    pm.addPass(mlir::attn::createAttnEmulateAmx());
  // The kernels' math.exp2/tanh as the polynomials (vector code), before
  // the reference route adds math ops of its own.
  pm.addPass(mlir::attn::createAttnExpandMath());
  // What the fused lowering left (dropout, dynamic head counts or head dims,
  // projections it does not tile, attn.rope and other primitive ops) takes
  // the reference route.
  addReferenceLowering(pm);
  if (options.resultDestinations)
    pm.addPass(mlir::attn::createAttnResultDestinations());
  if (!options.lowerToLLVM)
    return;
  // Loops from the upstream tiling drivers (scf.forall, e.g. attn ops
  // tiled by the transform dialect) run on the threads too.
  pm.addPass(createForallToParallelLoopPass());
  ConvertSCFToOpenMPPassOptions omp;
  omp.numThreads = options.threads;
  pm.addPass(createConvertSCFToOpenMPPass(omp));
  // Guided chunks instead of static shares: a thread slowed by the host (or
  // given the costlier tiles) no longer holds the others at the loop's end.
  pm.addPass(mlir::attn::createAttnOpenMPSchedule());
  mlir::attn::buildLowerToLLVMPipeline(pm);
}

void mlir::attn::buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  addCpuLowering(pm, options);
}

void mlir::attn::buildRingPipeline(OpPassManager &pm, const RingPipelineOptions &options) {
  AttnShardOptions shard;
  shard.ranks = options.ranks;
  pm.addPass(createAttnShard(shard));
  // Before bufferisation: the buffer deallocation pipeline does not take ops
  // with unknown memory effects such as mpi.isend; calls taking addresses
  // it leaves alone.
  pm.addPass(createAttnLowerMpi());
  addCpuLowering(pm, options);
}

std::optional<std::string> mlir::attn::ptxFeaturesForChip(llvm::StringRef chip) {
  llvm::StringRef digits = chip;
  unsigned sm;
  if (!digits.consume_front("sm_") || digits.getAsInteger(10, sm))
    return std::nullopt;
  // The PTX ISA version that introduced each target (an older one makes
  // LLVM abort).
  switch (sm) {
  case 80:
    return std::string("+ptx70");
  case 86:
    return std::string("+ptx71");
  case 89:
    return std::string("+ptx78");
  case 90:
    return std::string("+ptx80");
  default:
    return std::string();
  }
}

namespace {
/// Fails with a message: how a pipeline reports a bad option at run time.
struct ReportOptionErrorPass
    : public PassWrapper<ReportOptionErrorPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReportOptionErrorPass)
  explicit ReportOptionErrorPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "attn-report-option-error"; }
  void runOnOperation() override {
    getOperation()->emitError() << message;
    signalPassFailure();
  }
  std::string message;
};
} // namespace

/// The part both GPU pipelines share: attn → the kernel schedule (and the
/// reference route for everything else) → bufferised IR.
static void addGpuSchedule(OpPassManager &pm,
                           const mlir::attn::GpuPipelineOptions &options) {
  using namespace mlir::attn;
  addRaiseToSdpa(pm);
  pm.addPass(createConvertAttnToGpu(options.kernelOptions()));
  // The kernels' math.exp2/tanh as the polynomials (not libdevice calls).
  pm.addPass(createAttnExpandMath());
  // mha's projections (and any other attn op) run on the host.
  addReferenceLowering(pm);
}

void mlir::attn::buildGpuSchedulePipeline(OpPassManager &pm,
                                          const GpuPipelineOptions &options) {
  addGpuSchedule(pm, options);
  pm.addPass(createAttnEmulateGpuSchedule());
  if (!options.lowerToLLVM)
    return;
  pm.addPass(createConvertSCFToOpenMPPass());
  buildLowerToLLVMPipeline(pm);
}

void mlir::attn::buildGpuPipeline(OpPassManager &pm,
                                  const GpuPipelineOptions &options) {
  std::optional<std::string> features = ptxFeaturesForChip(options.chip);
  if (!features) {
    pm.addPass(std::make_unique<ReportOptionErrorPass>(
        "attn-gpu-pipeline: chip '" + options.chip +
        "' is not an NVIDIA target of the form sm_<number> (e.g. sm_90)"));
    return;
  }
  llvm::StringRef format = options.format;
  if (format != "isa" && format != "bin" && format != "fatbin") {
    pm.addPass(std::make_unique<ReportOptionErrorPass>(
        "attn-gpu-pipeline: format '" + options.format +
        "' is not one of isa, bin, fatbin"));
    return;
  }
  addGpuSchedule(pm, options);
  AttnMapScheduleToGpuOptions mapping;
  mapping.deviceResident = options.deviceResident;
  pm.addPass(createAttnMapScheduleToGpu(mapping));
  pm.addPass(createCanonicalizerPass());
  if (!options.lowerToLLVM)
    return;
  // Device ops become asynchronous on one stream per function (what
  // gpu-to-llvm lowers).
  // Constants and index arithmetic move into the launch body before it is
  // outlined: they stay constants in the kernel (unrolled loops, no run-time
  // divisions) instead of becoming kernel parameters.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // bf16 mma.sync, which upstream's nvgpu lowering does not take.
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnLegalizeMmaBf16());
  // The attn_ptx ops (cp.async groups, ex2.approx, TF32 rounding) as inline
  // PTX, now that bufferisation no longer needs their memory effects.
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnLowerPtxOps());
  // 16-byte aligned shared memory for cp.async and ldmatrix.
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnAlignWorkgroupBuffers());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = *features;
  nvvm.cubinFormat = options.format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
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
  PassPipelineRegistration<RingPipelineOptions>(
      "attn-ring-pipeline",
      "attn-shard (attn.ring sdpa → ring attention over MPI), then the CPU "
      "pipeline, the mpi ops lowered to calls of libattn_mpi",
      buildRingPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "attn-gpu-pipeline",
      "attn → GPU kernel (blocks × threads, K/V tiles in shared memory, "
      "online softmax) → NVVM → gpu.binary + host code calling mgpu*",
      buildGpuPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "attn-gpu-schedule-pipeline",
      "attn → the GPU kernel schedule, run on the CPU (blocks in parallel, "
      "threads in order) → LLVM",
      buildGpuSchedulePipeline);
}
