//===- Passes.td - GPU kernel-schedule passes ---------------*- tablegen -*-===//
//
// Passes on a GPU kernel schedule written as scf.forall loops with
// #gpu.block / #gpu.thread mappings. They know nothing of attention: any
// schedule of that form (convert-attn-to-gpu writes one) can use them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_GPU_PASSES_TD
#define ATTN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnEmulateGpuSchedule : Pass<"attn-emulate-gpu-schedule"> {
  let summary = "Run a GPU kernel schedule on the CPU: blocks in parallel, threads in order";
  let description = [{
    For testing the GPU schedule without a GPU: workgroup and private
    address spaces are dropped from memref types, `scf.forall` loops mapped
    to threads become sequential `scf.for` loops (so each one completes
    before the next, as after a barrier) and those mapped to blocks become
    `scf.parallel` loops (OpenMP threads on the CPU).

    A thread loop whose body uses warp-wide instructions (`nvgpu.ldmatrix`,
    `nvgpu.mma.sync`, `gpu.shuffle`) or `attn_ptx` ops (barriers, cp.async
    groups, ex2.approx) runs its threads in lockstep instead: a per-thread
    value becomes a vector with one element per thread; loads, stores and
    cp.async copies loop over the lanes; xor shuffles are vector shuffles;
    ldmatrix and mma.sync call `attn_emu_ldmatrix` and
    `attn_emu_mma_m16n8k16` (the JIT provides them,
    `attn/Runtime/WarpEmulation.h`), which follow the fragment table
    `attn/GPU/FragmentLayout.h`. A missing barrier or cp.async wait cannot
    show up this way.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
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
    buffers it writes, `gpu.dealloc`); a strided one (a subview) through a
    dense host buffer (`memref.copy`), as `gpu.memcpy` copies dense ones
    only.

    With `device-resident`, the function's arguments are device buffers
    and are used in place, and each buffer the function allocates for the
    kernel (its results) becomes a `gpu.alloc`: no copy either way, and
    the results the function returns are device buffers the caller frees
    (`attn_aot_device_free`, `cuMemFree`). A buffer the kernel touches that
    host code also reads or writes (an op left to the reference route, a
    copy) makes the pass fail with a diagnostic naming it.
  }];
  let options = [
    Option<"deviceResident", "device-resident", "bool", /*default=*/"false",
           "Arguments and results are device buffers: no host copies">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnLowerPtxOps : Pass<"attn-lower-ptx-ops"> {
  let summary = "Lower attn_ptx ops to llvm.inline_asm PTX";
  let description = [{
    Each `attn_ptx` op (PtxDialect.md) becomes the one PTX instruction it
    stands for, as `llvm.inline_asm` with side effects where the op has
    memory effects: `bar.sync 0;`, `cp.async.commit_group;`,
    `cp.async.wait_group N;`, `ex2.approx.ftz.f32`, `cvt.rna.tf32.f32`.
    Run it after bufferisation (the deallocation pass needs the ops'
    declared effects), on the GPU module before the NVVM lowering;
    `attn-gpu-pipeline` does.

    ```mlir
    func.func @fast_exp2(%x: f32) -> f32 {
      // becomes llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %x
      %y = attn_ptx.ex2_approx %x
      return %y : f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttnLegalizeMmaBf16 : Pass<"attn-legalize-mma-bf16"> {
  let summary = "Lower bf16 nvgpu.mma.sync to nvvm.mma.sync (upstream's lowering takes f16 only)";
  let description = [{
    Upstream's `convert-nvgpu-to-nvvm` fails on `nvgpu.mma.sync` with bf16
    operands ("failed to deduce operand PTX types"). This pass rewrites each
    m16n8k16 bf16 → f32 `nvgpu.mma.sync` into `nvvm.mma.sync` with the
    operands packed two bf16 per 32-bit register (A: 4, B: 2) and
    `multiplicandAPtxType = bf16`, the form the PTX ISA gives for
    `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`. Run it before
    the NVVM lowering.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnAlignWorkgroupBuffers : Pass<"attn-align-workgroup-buffers"> {
  let summary = "Align every gpu.func workgroup buffer (llvm.align) for 16-byte shared-memory accesses";
  let description = [{
    `convert-gpu-to-nvvm` gives a workgroup attribution the alignment of
    its element type unless the attribution carries `llvm.align` (an f16
    buffer becomes `.shared .align 2`), but cp.async of 16 bytes and
    ldmatrix need 16-byte aligned shared addresses. This pass sets
    `llvm.align = alignment` on every workgroup attribution of every
    `gpu.func` that has a smaller or no alignment. Run it after kernel
    outlining, before the NVVM lowering.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16",
           "Bytes (a power of two)">
  ];
}

#endif // ATTN_GPU_PASSES_TD
