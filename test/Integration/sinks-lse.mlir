// Attention sinks with the log-sum-exp: attn.sdpa_partial's sinks operand
// through the reference and cpu pipelines against a NumPy float64
// evaluation (Inputs/sinks_case.py: the output, and the log of each row's
// denominator with the sink in it; a sink larger than every score, a batch
// row with no key, whose output is 0 and lse the sink, bottom-right
// causal, GQA). Then an attn.sdpa with sinks tiled by query rows (causal:
// each tile an sdpa_partial with a shifted diagonal and its heads' sinks)
// on the cpu pipeline against the untiled op on the reference pipeline.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/sinks_case.py %t
// RUN: attn-run %s --entry=partial --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --expect=%t/expect_lse.npy --quiet | FileCheck %s
// RUN: attn-run %s --entry=partial --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/lens.npy --input=%t/sinks.npy --expect=%t/expect.npy --expect=%t/expect_lse.npy --quiet | FileCheck %s
// CHECK: result #0 vs {{.*}}expect.npy: {{.*}}, ok
// CHECK: result #1 vs {{.*}}expect_lse.npy: {{.*}}, ok
//
// f16 at D 64: the GPU's tensor-core kernel, the sink in each row's max,
// sum and lse (Tq 70, Tk 150; gpu-schedule, emulated; P rounded to f16
// for P·V, as the kernel does, hence the tolerance).
// RUN: %torch_python %S/Inputs/sinks_case.py %t tensor-core
// RUN: attn-run %s --entry=partial_f16 --pipeline=gpu-schedule --input=%t/tc_q.npy --input=%t/tc_k.npy --input=%t/tc_v.npy --input=%t/tc_lens.npy --input=%t/tc_sinks.npy --expect=%t/tc_expect.npy --expect=%t/tc_expect_lse.npy --atol=5e-3 --rtol=5e-3 --quiet | FileCheck %s
//
// Sinks 12 to 18 above every score (Inputs/sinks_case.py far-sinks): the
// kernel adds the sink to each row's sum after the keys, so P = 2^(s - m)
// stays at f16's precision; with m the sink, P was an f16 subnormal or 0
// (max abs error 7.7e-7 on outputs up to 1.5e-5; now 1.7e-9).
// RUN: %torch_python %S/Inputs/sinks_case.py %t far-sinks
// RUN: attn-run %s --entry=partial_f16 --pipeline=gpu-schedule --input=%t/far_q.npy --input=%t/far_k.npy --input=%t/far_v.npy --input=%t/far_lens.npy --input=%t/far_sinks.npy --expect=%t/far_expect.npy --expect=%t/far_expect_lse.npy --atol=2e-8 --rtol=1e-2 --quiet | FileCheck %s
// The same in f32 with tf32 (the f16 values, exact in TF32): sinks and
// lse on the TF32 kernel.
// RUN: attn-run %s --entry=partial_tf32 --pipeline=gpu-schedule --tf32 --input=%t/far_q32.npy --input=%t/far_k32.npy --input=%t/far_v32.npy --input=%t/far_lens.npy --input=%t/far_sinks.npy --expect=%t/far_expect.npy --expect=%t/far_expect_lse.npy --atol=2e-8 --rtol=1e-2 --quiet | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu=tf32=true | FileCheck %s --check-prefix=TF32
// TF32-LABEL: func.func @partial_tf32
// TF32: tf32Enabled
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=TC
// TC-LABEL: func.func @partial_f16
// TC: nvgpu.mma.sync
//
// RUN: attn-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/sinks-rows-schedule.mlir \
// RUN:   --transform-interpreter --canonicalize -o %t/tiled.mlir
// RUN: FileCheck %s --check-prefix=TILED < %t/tiled.mlir
// RUN: attn-run %s --entry=rows --pipeline=reference --random-inputs --seed=5 --quiet --output=%t/rows.npy
// RUN: attn-run %t/tiled.mlir --entry=rows --pipeline=cpu --random-inputs --seed=5 --quiet --expect=%t/rows.npy | FileCheck %s --check-prefix=ROWS
// ROWS: result #0 vs {{.*}}rows.npy: {{.*}}, ok
// TILED-LABEL: func.func @rows
// TILED: scf.forall
// TILED: tensor.extract_slice %{{.*}}[%{{.*}}] [2] [1] : tensor<4xf32> to tensor<2xf32>
// TILED: attn.sdpa_partial {{.*}} sinks(%{{.*}}) diagonal(%{{.*}}) {causal = #attn.causal<top_left>

func.func @partial(%q: tensor<2x4x5x32xf32>, %k: tensor<2x2x300x32xf32>, %v: tensor<2x2x300x32xf32>,
                   %len: tensor<2xi32>, %sinks: tensor<4xf32>)
    -> (tensor<2x4x5x32xf32>, tensor<2x4x5xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v key_lengths(%len) sinks(%sinks)
      {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x5x32xf32>, tensor<2x2x300x32xf32>, tensor<2x2x300x32xf32>, tensor<2xi32>, tensor<4xf32>)
        -> (tensor<2x4x5x32xf32>, tensor<2x4x5xf32>)
  return %o, %lse : tensor<2x4x5x32xf32>, tensor<2x4x5xf32>
}

func.func @partial_f16(%q: tensor<2x4x70x64xf16>, %k: tensor<2x2x150x64xf16>,
                       %v: tensor<2x2x150x64xf16>, %len: tensor<2xi32>, %sinks: tensor<4xf32>)
    -> (tensor<2x4x70x64xf32>, tensor<2x4x70xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v key_lengths(%len) sinks(%sinks)
      {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x70x64xf16>, tensor<2x2x150x64xf16>, tensor<2x2x150x64xf16>, tensor<2xi32>, tensor<4xf32>)
        -> (tensor<2x4x70x64xf32>, tensor<2x4x70xf32>)
  return %o, %lse : tensor<2x4x70x64xf32>, tensor<2x4x70xf32>
}

func.func @partial_tf32(%q: tensor<2x4x70x64xf32>, %k: tensor<2x2x150x64xf32>,
                        %v: tensor<2x2x150x64xf32>, %len: tensor<2xi32>, %sinks: tensor<4xf32>)
    -> (tensor<2x4x70x64xf32>, tensor<2x4x70xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v key_lengths(%len) sinks(%sinks)
      {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x70x64xf32>, tensor<2x2x150x64xf32>, tensor<2x2x150x64xf32>, tensor<2xi32>, tensor<4xf32>)
        -> (tensor<2x4x70x64xf32>, tensor<2x4x70xf32>)
  return %o, %lse : tensor<2x4x70x64xf32>, tensor<2x4x70xf32>
}

func.func @rows(%q: tensor<1x4x12x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>,
                %sinks: tensor<4xf32>) -> tensor<1x4x12x16xf32> {
  %o = attn.sdpa %q, %k, %v sinks(%sinks) {causal = #attn.causal<top_left>}
      : (tensor<1x4x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<4xf32>)
        -> tensor<1x4x12x16xf32>
  return %o : tensor<1x4x12x16xf32>
}
