// attn.sdpa_partial (O and the row log-sum-exp: a training step's forward)
// through the GPU's CUDA-core kernel (and, for @half_d64 below, the
// tensor-core one), emulated on the CPU (gpu-schedule,
// small tiles: several Q and K/V tiles, partial edge tiles), against the
// float64 forward of Inputs/sdpa_grad_case.py (torch, the plain formula):
// GQA, bottom-right causal, softcap, key lengths (rows that keep no key:
// O = 0, lse = -inf), an additive mask with ALiBi and a window, a bool
// mask with MQA, f16 operands (O in f32: the expected O is rounded to
// f16, hence the tolerance). The lse is ln2·m + ln l with ln written as a
// polynomial (KernelBuilder::logPolynomial: no libm or libdevice call).
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t/a %t/b %t/c %t/d
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/a gqa_causal_softcap_lengths
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/b additive_alibi_window
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/c bool_mask_mqa
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/d half
// RUN: for p in "gpu-schedule --tile-q=16 --tile-k=8"; do \
// RUN:   attn-run %s --entry=gqa_causal_softcap_lengths --pipeline=$p --quiet \
// RUN:     --input=%t/a/q.npy --input=%t/a/k.npy --input=%t/a/v.npy --input=%t/a/lens.npy \
// RUN:     --expect=%t/a/o.npy --expect=%t/a/lse.npy || exit 1; \
// RUN:   attn-run %s --entry=additive_alibi_window --pipeline=$p --quiet \
// RUN:     --input=%t/b/q.npy --input=%t/b/k.npy --input=%t/b/v.npy --input=%t/b/mask.npy \
// RUN:     --input=%t/b/slopes.npy --expect=%t/b/o.npy --expect=%t/b/lse.npy || exit 1; \
// RUN:   attn-run %s --entry=bool_mask_mqa --pipeline=$p --quiet \
// RUN:     --input=%t/c/q.npy --input=%t/c/k.npy --input=%t/c/v.npy --input=%t/c/mask.npy \
// RUN:     --expect=%t/c/o.npy --expect=%t/c/lse.npy || exit 1; \
// RUN:   attn-run %s --entry=half --pipeline=$p --quiet \
// RUN:     --input=%t/d/q.npy --input=%t/d/k.npy --input=%t/d/v.npy \
// RUN:     --expect=%t/d/o.npy --expect=%t/d/lse.npy --atol=5e-3 --rtol=5e-3 || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-8: result #{{[01]}} vs {{.*}}: {{.*}}, ok
//
// f16 at D 64 takes the tensor-core kernel, which writes the lse too
// (from its quad's first lane): GQA, Tq 77, key lengths 90 and 40 (rows
// with no key: O = 0, lse = -inf).
// RUN: mkdir -p %t/e && %torch_python %S/Inputs/sdpa_grad_case.py %t/e half_d64
// RUN: attn-run %s --entry=half_d64 --pipeline=gpu-schedule --quiet \
// RUN:   --input=%t/e/q.npy --input=%t/e/k.npy --input=%t/e/v.npy --input=%t/e/lens.npy \
// RUN:   --expect=%t/e/o.npy --expect=%t/e/lse.npy --atol=5e-3 --rtol=5e-3 | FileCheck %s --check-prefix=TC
// TC-COUNT-2: result #{{[01]}} vs {{.*}}: {{.*}}, ok
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=MMA
// MMA-LABEL: func.func @half_d64
// MMA: nvgpu.mma.sync
//
// Every sdpa_partial here takes a GPU kernel (none is left to the host);
// the f32 and D 16 ones the CUDA-core kernel, and the remark says why.
// RUN: attn-opt %s --convert-attn-to-gpu -o - | FileCheck %s --check-prefix=IR
// IR-NOT: attn.sdpa_partial
// RUN: attn-opt %s --convert-attn-to-gpu=report-kernel=true -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// REMARK: remark: attn.sdpa_partial takes the CUDA-core GPU kernel, not the tensor-core one: the tensor-core kernel takes f32 operands only as TF32
// REMARK: remark: attn.sdpa_partial takes the CUDA-core GPU kernel, not the tensor-core one: the tensor-core kernel takes head dims 64 and 128 only (D = 16, Dv = 16)

func.func @gqa_causal_softcap_lengths(
    %q: tensor<2x4x37x16xf32>, %k: tensor<2x2x53x16xf32>, %v: tensor<2x2x53x24xf32>,
    %len: tensor<2xi32>) -> (tensor<2x4x37x24xf32>, tensor<2x4x37xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v key_lengths(%len)
      {causal = #attn.causal<bottom_right>, scale = 0.3 : f32, softcap = 5.0 : f32}
      : (tensor<2x4x37x16xf32>, tensor<2x2x53x16xf32>, tensor<2x2x53x24xf32>, tensor<2xi32>)
        -> (tensor<2x4x37x24xf32>, tensor<2x4x37xf32>)
  return %o, %lse : tensor<2x4x37x24xf32>, tensor<2x4x37xf32>
}

func.func @additive_alibi_window(
    %q: tensor<1x2x29x32xf32>, %k: tensor<1x2x29x32xf32>, %v: tensor<1x2x29x32xf32>,
    %mask: tensor<29x29xf32>, %slopes: tensor<2xf32>)
    -> (tensor<1x2x29x32xf32>, tensor<1x2x29xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v, %mask alibi(%slopes)
      {causal = #attn.causal<top_left>, window = #attn.window<left = 7>}
      : (tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>,
         tensor<29x29xf32>, tensor<2xf32>)
        -> (tensor<1x2x29x32xf32>, tensor<1x2x29xf32>)
  return %o, %lse : tensor<1x2x29x32xf32>, tensor<1x2x29xf32>
}

func.func @bool_mask_mqa(
    %q: tensor<2x3x12x8xf32>, %k: tensor<2x1x19x8xf32>, %v: tensor<2x1x19x8xf32>,
    %mask: tensor<2x1x12x19xi1>) -> (tensor<2x3x12x8xf32>, tensor<2x3x12xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v, %mask
      : (tensor<2x3x12x8xf32>, tensor<2x1x19x8xf32>, tensor<2x1x19x8xf32>,
         tensor<2x1x12x19xi1>) -> (tensor<2x3x12x8xf32>, tensor<2x3x12xf32>)
  return %o, %lse : tensor<2x3x12x8xf32>, tensor<2x3x12xf32>
}

func.func @half(
    %q: tensor<1x2x33x16xf16>, %k: tensor<1x2x33x16xf16>, %v: tensor<1x2x33x16xf16>)
    -> (tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<top_left>, scale = 0.25 : f32}
      : (tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>)
        -> (tensor<1x2x33x16xf32>, tensor<1x2x33xf32>)
  return %o, %lse : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>
}

func.func @half_d64(
    %q: tensor<2x4x77x64xf16>, %k: tensor<2x2x90x64xf16>, %v: tensor<2x2x90x64xf16>,
    %len: tensor<2xi32>) -> (tensor<2x4x77x64xf32>, tensor<2x4x77xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v key_lengths(%len)
      {causal = #attn.causal<bottom_right>, scale = 0.125 : f32}
      : (tensor<2x4x77x64xf16>, tensor<2x2x90x64xf16>, tensor<2x2x90x64xf16>, tensor<2xi32>)
        -> (tensor<2x4x77x64xf32>, tensor<2x4x77xf32>)
  return %o, %lse : tensor<2x4x77x64xf32>, tensor<2x4x77xf32>
}
