//===- PtxOps.td - PTX instructions with their memory effects -*- tablegen -*-===//
//
// The `attn_ptx` dialect: the few PTX instructions the tensor-core kernel
// needs that upstream offers only as ops without memory effects
// (gpu.barrier, nvgpu.device_async_create_group / wait, nvvm intrinsics),
// which one-shot bufferisation's deallocation refuses. Each op here says
// what it does to memory; the kernel schedule is written with them, the
// lockstep emulation runs them by their type, attn-map-schedule-to-gpu
// turns the barrier into gpu.barrier, and attn-lower-ptx-ops writes the
// rest as llvm.inline_asm in the GPU module, after bufferisation.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_GPU_PTXOPS_TD
#define ATTN_GPU_PTXOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Ptx_Dialect : Dialect {
  let name = "attn_ptx";
  let cppNamespace = "::mlir::attn::ptx";
  let summary = "PTX instructions with declared memory effects, for GPU kernel schedules";
  let description = [{
    Ops for the PTX instructions a kernel schedule needs before
    bufferisation where upstream's ops declare no memory effects: a block
    barrier, cp.async group commit and wait, `ex2.approx` and the TF32
    rounding. They lower to `llvm.inline_asm` (`attn-lower-ptx-ops`) or, for
    the barrier, to `gpu.barrier` (`attn-map-schedule-to-gpu`), and run on
    the CPU in the lockstep emulation (`attn-emulate-gpu-schedule`).
  }];
}

class Ptx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ptx_Dialect, mnemonic, traits>;

def Ptx_BarSyncOp : Ptx_Op<"bar_sync", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Block barrier (bar.sync 0)";
  let description = [{
    Every thread of the block waits here; shared-memory writes before it
    are visible to every thread after it. Inside a lockstep thread loop (a
    schedule whose threads run together); `attn-map-schedule-to-gpu`
    replaces it with `gpu.barrier`.

    ```mlir
    attn_ptx.bar_sync
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Ptx_CpAsyncCommitGroupOp
    : Ptx_Op<"cp_async_commit_group", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Commit the cp.async copies issued so far as one group";
  let description = [{
    `cp.async.commit_group`: the copies (`nvgpu.device_async_copy`) issued
    by this thread since the last commit form one group, which
    `attn_ptx.cp_async_wait_group` waits for.

    ```mlir
    attn_ptx.cp_async_commit_group
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Ptx_CpAsyncWaitGroupOp
    : Ptx_Op<"cp_async_wait_group", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait until at most `pending` cp.async groups are in flight";
  let description = [{
    `cp.async.wait_group N`: the thread's committed groups but the newest
    `pending` have landed in shared memory (a barrier then makes them
    visible to the block).

    ```mlir
    attn_ptx.cp_async_wait_group 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def Ptx_Ex2ApproxOp : Ptx_Op<"ex2_approx", [Pure]> {
  let summary = "2^x with ex2.approx.ftz.f32";
  let description = [{
    The GPU's fast 2^x (about 2 ulp, denormals flushed); 0 for -inf, NaN
    for NaN. The emulation computes `math.exp2`.

    ```mlir
    %y = attn_ptx.ex2_approx %x
    ```
  }];
  let arguments = (ins F32:$x);
  let results = (outs F32:$result);
  let assemblyFormat = "$x attr-dict";
}

def Ptx_CvtRnaTf32Op : Ptx_Op<"cvt_rna_tf32", [Pure]> {
  let summary = "Round an f32 to TF32 (cvt.rna.tf32.f32): its 32-bit pattern";
  let description = [{
    f32 to TF32: 10 mantissa bits, rounded to nearest with ties away from
    zero; the result is the 32-bit pattern `mma.sync` `.tf32` reads.

    ```mlir
    %bits = attn_ptx.cvt_rna_tf32 %x
    ```
  }];
  let arguments = (ins F32:$x);
  let results = (outs I32:$result);
  let assemblyFormat = "$x attr-dict";
}

#endif // ATTN_GPU_PTXOPS_TD
