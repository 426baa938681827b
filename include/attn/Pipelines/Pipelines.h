//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//
#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>
#include <string>

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

/// Options of `attn-cpu-pipeline`. The tiling defaults are
/// convert-attn-to-loops' (declared once, in its ODS).
template <typename Derived>
struct CpuPipelineOptionsBase : public PassPipelineOptions<Derived> {
  using PassOptions = mlir::detail::PassOptions;
  PassOptions::Option<bool> raise{
      *this, "raise",
      llvm::cl::desc("Raise linalg attention chains to attn.sdpa first "
                     "(attn-raise)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q", llvm::cl::desc("Query rows per tile"),
      llvm::cl::init(ConvertAttnToLoopsOptions().tileQ)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k", llvm::cl::desc("Keys per tile"),
      llvm::cl::init(ConvertAttnToLoopsOptions().tileK)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width", llvm::cl::desc("f32 lanes per vector"),
      llvm::cl::init(ConvertAttnToLoopsOptions().vectorWidth)};
  PassOptions::Option<int64_t> minWorkItems{
      *this, "min-work-items",
      llvm::cl::desc("Split each Q tile's keys across threads below this many "
                     "work items (0: never)"),
      llvm::cl::init(ConvertAttnToLoopsOptions().minWorkItems)};
  PassOptions::Option<int64_t> prepackLimitMiB{
      *this, "prepack-limit-mib",
      llvm::cl::desc("The most MiB the keys transposed once per call may take "
                     "(0: pack per tile)"),
      llvm::cl::init(ConvertAttnToLoopsOptions().prepackLimitMiB)};
  PassOptions::Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 prefill tiles and projections multiply on AVX512-BF16 dot products "
                     "(the JIT and attn-aot turn it on where the target has "
                     "them and they are faster: AMD Zen 4 and later)"),
      llvm::cl::init(ConvertAttnToLoopsOptions().bf16Dot)};
  PassOptions::Option<bool> amx{
      *this, "amx",
      llvm::cl::desc("bf16 prefill tiles multiply on Intel AMX tiles (the JIT turns it "
                     "on where the host has AMX-BF16 and Linux grants its state)"),
      llvm::cl::init(ConvertAttnToLoopsOptions().amx)};
  PassOptions::Option<bool> amxFp16{
      *this, "amx-fp16",
      llvm::cl::desc("With amx, f16 prefill tiles multiply on AMX-FP16 tiles too (the "
                     "JIT turns it on where the host has AMX-FP16)"),
      llvm::cl::init(ConvertAttnToLoopsOptions().amxFp16)};
  PassOptions::Option<bool> avx2{
      *this, "avx2",
      llvm::cl::desc("The target has AVX2: 8-lane transposes take x86vector's AVX2 "
                     "sequence (the JIT and attn-aot set it from the target CPU)"),
      llvm::cl::init(ConvertAttnToLoopsOptions().avx2)};
  PassOptions::Option<bool> emulateAmx{
      *this, "emulate-amx",
      llvm::cl::desc("Run the AMX tiles as vector code (attn-emulate-amx), on any CPU"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Worker threads (0: one per core, or OMP_NUM_THREADS)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> reportUnfused{
      *this, "report-unfused",
      llvm::cl::desc("Remark at each sdpa or primitive chain left to the "
                     "unfused reference lowering, with the reason"),
      llvm::cl::init(ConvertAttnToLoopsOptions().reportUnfused)};
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Lower all the way to the LLVM dialect"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> resultDestinations{
      *this, "result-destinations",
      llvm::cl::desc("Public functions take a destination buffer per result "
                     "(attn-result-destinations; the JIT's calling convention)"),
      llvm::cl::init(false)};

  /// convert-attn-to-loops' options as these set them: the one place the
  /// pipeline's options map onto the pass's (the pipeline builds the pass
  /// with them; the JIT checks them before anything runs).
  ConvertAttnToLoopsOptions loopOptions() const {
    ConvertAttnToLoopsOptions o;
    o.tileQ = tileQ;
    o.tileK = tileK;
    o.vectorWidth = vectorWidth;
    o.reportUnfused = reportUnfused;
    o.minWorkItems = minWorkItems;
    o.prepackLimitMiB = prepackLimitMiB;
    o.bf16Dot = bf16Dot;
    o.amx = amx;
    o.amxFp16 = amxFp16;
    o.avx2 = avx2;
    return o;
  }
};
struct CpuPipelineOptions : public CpuPipelineOptionsBase<CpuPipelineOptions> {};

/// Options of `attn-ring-pipeline`: the CPU pipeline's, plus the ranks.
struct RingPipelineOptions : public CpuPipelineOptionsBase<RingPipelineOptions> {
  PassOptions::Option<int64_t> ranks{
      *this, "ranks",
      llvm::cl::desc("Ranks P the sequence of each attn.ring sdpa is sharded over"),
      llvm::cl::init(1)};
};

/// Options of `attn-gpu-pipeline` and `attn-gpu-schedule-pipeline`. The
/// tiling defaults are convert-attn-to-gpu's (declared once, in its ODS).
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA target: sm_80, sm_86, sm_89, sm_90 (or another "
                     "sm_N, with LLVM's default PTX version)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the gpu.binary holds: isa (PTX text), bin (cubin, "
                     "needs ptxas) or fatbin (needs ptxas and fatbinary)"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q",
      llvm::cl::desc("Query rows per block = threads per block"),
      llvm::cl::init(ConvertAttnToGpuOptions().tileQ)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k",
      llvm::cl::desc("Keys per shared-memory K/V tile (halved to fit 48 KiB)"),
      llvm::cl::init(ConvertAttnToGpuOptions().tileK)};
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Lower to LLVM (otherwise stop after mapping to "
                     "gpu.launch, or, for the schedule pipeline, after the "
                     "CPU emulation loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("f16/bf16 sdpa with head dims 64/128 take the mma.sync "
                     "FlashAttention-2 kernel (convert-attn-to-gpu tensor-cores)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("f32 sdpa with head dims 64/128 take the tensor-core "
                     "kernel with TF32 operands (convert-attn-to-gpu tf32)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> reportKernel{
      *this, "report-kernel",
      llvm::cl::desc("A remark at every sdpa that takes the CUDA-core kernel "
                     "(convert-attn-to-gpu report-kernel)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deviceResident{
      *this, "device-resident",
      llvm::cl::desc("attn-gpu-pipeline: the function's arguments and results "
                     "are device buffers (attn-map-schedule-to-gpu "
                     "device-resident): no host copies"),
      llvm::cl::init(false)};

  /// convert-attn-to-gpu's options as these set them (the one place they
  /// map onto the pass's).
  ConvertAttnToGpuOptions kernelOptions() const {
    ConvertAttnToGpuOptions o;
    o.tileQ = tileQ;
    o.tileK = tileK;
    o.tensorCores = tensorCores;
    o.tf32 = tf32;
    o.reportKernel = reportKernel;
    return o;
  }
};

/// The PTX feature LLVM needs for `chip` ("+ptx80" for sm_90, ...); empty
/// for other sm_N (LLVM's default); nullopt if `chip` is not sm_N.
std::optional<std::string> ptxFeaturesForChip(llvm::StringRef chip);

/// attn → GPU kernel schedule for every sdpa (mha through decompose; its
/// projections on the host) → gpu.launch with workgroup buffers and barriers
/// → NVVM → gpu.binary (PTX or cubin) + host code calling the mgpu* runtime.
void buildGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// The same kernel schedule, run on the CPU (blocks in parallel, threads in
/// order): what the numerics tests check without a GPU.
void buildGpuSchedulePipeline(OpPassManager &pm,
                              const GpuPipelineOptions &options);

/// attn → fused FlashAttention-2 loops for every sdpa the CPU kernel takes
/// (f32, f16 or bf16; mha through decompose, its projections as tiled
/// matmuls), the reference lowering for the rest (dropout, dynamic head
/// counts or head dims, projections of other widths, attn.rope and any other
/// primitive op) → bufferisation → OpenMP threads → LLVM.
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// attn-shard{ranks} (each attn.ring sdpa becomes ring attention over MPI),
/// attn-lower-mpi (the mpi ops become calls of libattn_mpi), then the CPU
/// pipeline.
void buildRingPipeline(OpPassManager &pm, const RingPipelineOptions &options);

/// attn → linalg (unfused, materialises Tq×Tk) → one-shot bufferisation at
/// function boundaries → buffer deallocation → loops → LLVM dialect.
void buildReferencePipeline(OpPassManager &pm,
                            const ReferencePipelineOptions &options);

/// The shared tail: bufferised loops (scf/vector/memref/arith/math/affine,
/// OpenMP) → LLVM.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// Registers attn-reference-pipeline, attn-cpu-pipeline, attn-ring-pipeline,
/// attn-gpu-pipeline and attn-gpu-schedule-pipeline by name.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
