// Attention sinks (attn.sdpa's sinks operand) through the reference, cpu
// and gpu-schedule (the CUDA-core kernel, emulated) pipelines, the
// cpu pipeline with a key split (min-work-items above the work items: the
// sink is counted once in the merge) and without, against a NumPy float64
// evaluation of the formula: a sink larger than every score, a batch row
// with no key (0), bottom-right causal, GQA.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/sinks_case.py %t
// RUN: attn-run %s --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --tile-q=8 --tile-k=16 --vector-width=8 --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --pipeline=gpu-schedule --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
//
// The split: the kernel's IR with min-work-items 64 stores the splits'
// states and merges them, and the sink is loaded only for split 0.
// RUN: attn-opt %s --convert-attn-to-loops="min-work-items=64" | FileCheck %s --check-prefix=SPLIT
// SPLIT: arith.cmpi eq, %{{.*}}, %c0
// SPLIT-NEXT: scf.if
// SPLIT: memref.load %{{.*}} : memref<4xf32
// RUN: attn-opt %s --convert-attn-to-loops="min-work-items=64" -o %t/split.mlir
// RUN: attn-run %t/split.mlir --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --quiet | FileCheck %s
//
// f16 at D 64 takes the GPU's tensor-core kernel, sinks and all (each
// row's sink joins its sum after the keys): Tq 70 (two Q blocks), Tk 150,
// the same sinks, through gpu-schedule and the cpu pipeline.
// RUN: %torch_python %S/Inputs/sinks_case.py %t tensor-core
// RUN: attn-run %s --entry=sinks_f16 --pipeline=gpu-schedule --input=%t/tc_q.npy --input=%t/tc_k.npy --input=%t/tc_v.npy --input=%t/tc_lens.npy --input=%t/tc_sinks.npy --expect=%t/tc_expect.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=sinks_f16 --pipeline=cpu --input=%t/tc_q.npy --input=%t/tc_k.npy --input=%t/tc_v.npy --input=%t/tc_lens.npy --input=%t/tc_sinks.npy --expect=%t/tc_expect.npy --quiet | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=TC
// TC-LABEL: func.func @sinks_f16
// TC: nvgpu.mma.sync

func.func @sinks(%q: tensor<2x4x5x32xf32>, %k: tensor<2x2x300x32xf32>, %v: tensor<2x2x300x32xf32>,
                 %len: tensor<2xi32>, %sinks: tensor<4xf32>) -> tensor<2x4x5x32xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) sinks(%sinks) {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x5x32xf32>, tensor<2x2x300x32xf32>, tensor<2x2x300x32xf32>, tensor<2xi32>, tensor<4xf32>)
        -> tensor<2x4x5x32xf32>
  return %o : tensor<2x4x5x32xf32>
}

func.func @sinks_f16(%q: tensor<2x4x70x64xf16>, %k: tensor<2x2x150x64xf16>, %v: tensor<2x2x150x64xf16>,
                     %len: tensor<2xi32>, %sinks: tensor<4xf32>) -> tensor<2x4x70x64xf16> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) sinks(%sinks) {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x70x64xf16>, tensor<2x2x150x64xf16>, tensor<2x2x150x64xf16>, tensor<2xi32>, tensor<4xf32>)
        -> tensor<2x4x70x64xf16>
  return %o : tensor<2x4x70x64xf16>
}
