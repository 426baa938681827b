//===- AttnConversion.td - attn lowering passes -------------*- tablegen -*-===//
#ifndef ATTN_CONVERSION_TD
#define ATTN_CONVERSION_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower the primitive attn ops to linalg on tensors (the reference)";
  let description = [{
    The deliberately unfused reference lowering: every primitive op becomes
    one or more `linalg` ops on tensors, and the scores are materialised as
    a `[B,H,Tq,Tk]` tensor. Dynamic dims come from `tensor.dim` (through
    the ops' shape reification). Composite ops (`sdpa`, `mha`) must be
    decomposed first (`attn-decompose`); the pass fails on any attn op left
    over. f16/bf16 ops compute and accumulate in f32 and round once at the
    end of each op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def ConvertAttnToLoops : Pass<"convert-attn-to-loops"> {
  let summary = "Lower attn.sdpa to fused FlashAttention-2 loops and attn.project to tiled matmuls (CPU)";
  let description = [{
    Each f32 `attn.sdpa` with static head dims and no dropout becomes one
    fused loop nest on buffers: an `scf.parallel` over (batch, head, Q
    tile), and inside it a loop over K/V tiles with the online softmax
    (running max, running sum, rescaled accumulator, one division at the
    end). `scale·log2(e)` is folded into Q and the exponentials are
    `exp2` through a vectorised polynomial. Causal tiles entirely above the
    diagonal are never visited; only tiles crossing the diagonal, the last
    (partial) K tile and masked tiles pay for masking. GQA reads the shared
    K/V head in place. No `Tq×Tk` buffer exists: the per-thread scratch is
    `O(tile-q·tile-k + tile-q·Dv + D·tile-k)`.

    Each f32 `attn.project` whose output width is a multiple of
    2 x vector-width (and with at most one dynamic leading dim) becomes a
    tiled matmul: W packed once as Wt[i][o], 4 rows x 2 vectors of outputs
    in registers, rows in parallel.

    Any other `attn.sdpa` or `attn.project` (f16/bf16, dropout, dynamic head
    dims, other widths) is left alone for the reference lowering.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per tile (a multiple of 4)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"64",
           "Keys per tile (a multiple of 2 x vector-width)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "f32 lanes per vector (8 for AVX2)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}


def ConvertAttnToGpu : Pass<"convert-attn-to-gpu"> {
  let summary = "Lower attn.sdpa to a GPU kernel schedule (scf.forall over blocks and threads)";
  let description = [{
    Each `attn.sdpa` (f32, f16 or bf16 operands, static head counts and head
    dims, no dropout) becomes one kernel schedule on buffers, written with
    `scf.forall` loops carrying GPU mappings:

    - an outer `scf.forall` over (batch·head, Q tile) mapped to
      `[#gpu.block<x>, #gpu.block<y>]` (one thread block per pair);
    - inside it, workgroup buffers (`#gpu.address_space<workgroup>`) for
      the K tile, the V tile, the per-row running max and sum and the
      transposed accumulator, and a sequential loop over K/V tiles that
      stops at the causal limit of the Q tile (tiles above the diagonal are
      never loaded);
    - in every step, `scf.forall` loops over `tile-q` threads
      (`#gpu.thread<x>`): cooperative loads of the K/V tile, then one query
      row per thread: scores, mask, online softmax update, `P·V` into the
      accumulator; finally one normalisation per row.

    A thread-level `scf.forall` completes before the next one starts, which
    is exactly the semantics of a barrier between them: the same IR runs on
    the CPU (`attn-emulate-gpu-schedule`) and maps to `gpu.launch` with
    `gpu.barrier` (`attn-map-schedule-to-gpu`). `tile-k` is halved until
    the workgroup buffers fit in 48 KiB of static shared memory. No `Tq×Tk`
    buffer exists. Any other sdpa (dropout, dynamic head dims) is refused
    with a diagnostic.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per block = threads per block (1..1024)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"32",
           "Keys per K/V tile staged in shared memory (halved to fit 48 KiB)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnEmulateGpuSchedule : Pass<"attn-emulate-gpu-schedule"> {
  let summary = "Run a GPU kernel schedule on the CPU: blocks in parallel, threads in order";
  let description = [{
    For testing the GPU schedule without a GPU: workgroup and private
    address spaces are dropped from memref types, `scf.forall` loops mapped
    to threads become sequential `scf.for` loops (so each one completes
    before the next, as after a barrier) and those mapped to blocks become
    `scf.parallel` loops (OpenMP threads on the CPU).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnMapScheduleToGpu : Pass<"attn-map-schedule-to-gpu"> {
  let summary = "Map a GPU kernel schedule to gpu.launch with barriers and device buffers";
  let description = [{
    Each `scf.forall` mapped to `#gpu.block` becomes a `gpu.launch` whose
    grid is the loop's (possibly dynamic) trip counts and whose block size
    is the largest thread-level trip count inside. Each thread-level
    `scf.forall` becomes its body under `if (thread_id < trip count)`
    followed by `gpu.barrier`; workgroup allocations become workgroup
    attributions of the launch; private allocations move to the top of the
    kernel. Around the launch, every buffer the kernel touches gets a
    device copy (`gpu.alloc`, `gpu.memcpy` in for buffers it reads, out for
    buffers it writes, `gpu.dealloc`).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // ATTN_CONVERSION_TD
