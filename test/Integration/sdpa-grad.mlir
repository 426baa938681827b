// attn.sdpa_grad through the reference and cpu pipelines against
// torch.autograd of the plain formula in float64 (Inputs/sdpa_grad_case.py),
// the cpu pipeline's fused backward at 4, 8 and the host's lanes and with
// small tiles (several Q and K/V tiles, partial edge tiles; a head dim that
// is not a multiple of the lanes takes the reference route):
// GQA and MQA (dK, dV summed over each group), Tq != Tk, Dv != D, both
// causal kinds, softcap, key lengths, an additive and a boolean mask,
// ALiBi, a window, rows that keep no key (zero gradients, not NaN), f16.
// The reference and the default cpu pipeline run every function; the
// 4-lane small tiles two of them, the 8-lane ones the other two (the
// kernel is the same code at every width: bench/NOTES.md, "Test suite
// time"). gpu-schedule (the GPU backward's two kernels, emulated) runs
// every function with 16 threads a block and steps of 4 rows or keys.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t/a %t/b %t/c %t/d
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/a gqa_causal_softcap_lengths
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/b additive_alibi_window
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/c bool_mask_mqa
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t/d half
// RUN: for p in "reference" "cpu" "cpu --vector-width=4 --tile-q=8 --tile-k=8" \
// RUN:          "cpu --vector-width=8 --tile-q=16 --tile-k=16" "gpu-schedule --tile-q=16 --tile-k=4"; do \
// RUN:   if [ "${p#*width=8}" = "$p" ]; then \
// RUN:   attn-run %s --entry=gqa_causal_softcap_lengths --pipeline=$p --quiet \
// RUN:     --input=%t/a/q.npy --input=%t/a/k.npy --input=%t/a/v.npy --input=%t/a/o.npy \
// RUN:     --input=%t/a/do.npy --input=%t/a/lse.npy --input=%t/a/lens.npy \
// RUN:     --expect=%t/a/dq.npy --expect=%t/a/dk.npy --expect=%t/a/dv.npy || exit 1; fi; \
// RUN:   if [ "${p#*width=4}" = "$p" ]; then \
// RUN:   attn-run %s --entry=additive_alibi_window --pipeline=$p --quiet \
// RUN:     --input=%t/b/q.npy --input=%t/b/k.npy --input=%t/b/v.npy --input=%t/b/o.npy \
// RUN:     --input=%t/b/do.npy --input=%t/b/lse.npy --input=%t/b/mask.npy --input=%t/b/slopes.npy \
// RUN:     --expect=%t/b/dq.npy --expect=%t/b/dk.npy --expect=%t/b/dv.npy || exit 1; fi; \
// RUN:   if [ "${p#*width=8}" = "$p" ]; then \
// RUN:   attn-run %s --entry=bool_mask_mqa --pipeline=$p --quiet \
// RUN:     --input=%t/c/q.npy --input=%t/c/k.npy --input=%t/c/v.npy --input=%t/c/o.npy \
// RUN:     --input=%t/c/do.npy --input=%t/c/lse.npy --input=%t/c/mask.npy \
// RUN:     --expect=%t/c/dq.npy --expect=%t/c/dk.npy --expect=%t/c/dv.npy || exit 1; fi; \
// RUN:   if [ "${p#*width=4}" = "$p" ]; then \
// RUN:   attn-run %s --entry=half --pipeline=$p --quiet \
// RUN:     --input=%t/d/q.npy --input=%t/d/k.npy --input=%t/d/v.npy --input=%t/d/o.npy \
// RUN:     --input=%t/d/do.npy --input=%t/d/lse.npy \
// RUN:     --expect=%t/d/dq.npy --expect=%t/d/dk.npy --expect=%t/d/dv.npy --atol=5e-3 --rtol=5e-3 || exit 1; fi; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-48: result #{{[0-2]}} vs {{.*}}: {{.*}}, ok
//
// Deterministic: 1 and 2 threads give the same bits.
// RUN: for n in 1 2; do \
// RUN:   attn-run %s --entry=additive_alibi_window --pipeline=cpu --vector-width=8 --tile-q=8 --tile-k=16 \
// RUN:     --num-threads=$n --quiet --input=%t/b/q.npy --input=%t/b/k.npy --input=%t/b/v.npy \
// RUN:     --input=%t/b/o.npy --input=%t/b/do.npy --input=%t/b/lse.npy --input=%t/b/mask.npy \
// RUN:     --input=%t/b/slopes.npy --output=%t/dq$n.npy --output=%t/dk$n.npy --output=%t/dv$n.npy || exit 1; \
// RUN: done
// RUN: cmp %t/dq1.npy %t/dq2.npy && cmp %t/dk1.npy %t/dk2.npy && cmp %t/dv1.npy %t/dv2.npy
//
// Which sdpa_grad the fused backward takes (the others are named).
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=16 report-unfused" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FUSED
// FUSED: sdpa-grad.mlir:[[@LINE+9]]:{{.*}} remark: attn.sdpa_grad not fused: the fused backward needs head dims that are multiples of the vector width 16, got D = 16, Dv = 24
// FUSED: sdpa-grad.mlir:[[@LINE+35]]:{{.*}} remark: attn.sdpa_grad not fused: {{.*}} got D = 8, Dv = 8
// FUSED-NOT: attn.sdpa_grad not fused

func.func @gqa_causal_softcap_lengths(
    %q: tensor<2x4x37x16xf32>, %k: tensor<2x2x53x16xf32>, %v: tensor<2x2x53x24xf32>,
    %o: tensor<2x4x37x24xf32>, %do: tensor<2x4x37x24xf32>, %lse: tensor<2x4x37xf32>,
    %len: tensor<2xi32>)
    -> (tensor<2x4x37x16xf32>, tensor<2x2x53x16xf32>, tensor<2x2x53x24xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse key_lengths(%len)
      {causal = #attn.causal<bottom_right>, scale = 0.3 : f32, softcap = 5.0 : f32}
      : (tensor<2x4x37x16xf32>, tensor<2x2x53x16xf32>, tensor<2x2x53x24xf32>,
         tensor<2x4x37x24xf32>, tensor<2x4x37x24xf32>, tensor<2x4x37xf32>, tensor<2xi32>)
        -> (tensor<2x4x37x16xf32>, tensor<2x2x53x16xf32>, tensor<2x2x53x24xf32>)
  return %dq, %dk, %dv : tensor<2x4x37x16xf32>, tensor<2x2x53x16xf32>, tensor<2x2x53x24xf32>
}

func.func @additive_alibi_window(
    %q: tensor<1x2x29x32xf32>, %k: tensor<1x2x29x32xf32>, %v: tensor<1x2x29x32xf32>,
    %o: tensor<1x2x29x32xf32>, %do: tensor<1x2x29x32xf32>, %lse: tensor<1x2x29xf32>,
    %mask: tensor<29x29xf32>, %slopes: tensor<2xf32>)
    -> (tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse, %mask alibi(%slopes)
      {causal = #attn.causal<top_left>, window = #attn.window<left = 7>}
      : (tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>,
         tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>, tensor<1x2x29xf32>, tensor<29x29xf32>,
         tensor<2xf32>)
        -> (tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>)
  return %dq, %dk, %dv : tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>, tensor<1x2x29x32xf32>
}

func.func @bool_mask_mqa(
    %q: tensor<2x3x12x8xf32>, %k: tensor<2x1x19x8xf32>, %v: tensor<2x1x19x8xf32>,
    %o: tensor<2x3x12x8xf32>, %do: tensor<2x3x12x8xf32>, %lse: tensor<2x3x12xf32>,
    %mask: tensor<2x1x12x19xi1>)
    -> (tensor<2x3x12x8xf32>, tensor<2x1x19x8xf32>, tensor<2x1x19x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse, %mask
      : (tensor<2x3x12x8xf32>, tensor<2x1x19x8xf32>, tensor<2x1x19x8xf32>,
         tensor<2x3x12x8xf32>, tensor<2x3x12x8xf32>, tensor<2x3x12xf32>, tensor<2x1x12x19xi1>)
        -> (tensor<2x3x12x8xf32>, tensor<2x1x19x8xf32>, tensor<2x1x19x8xf32>)
  return %dq, %dk, %dv : tensor<2x3x12x8xf32>, tensor<2x1x19x8xf32>, tensor<2x1x19x8xf32>
}

func.func @half(
    %q: tensor<1x2x33x16xf16>, %k: tensor<1x2x33x16xf16>, %v: tensor<1x2x33x16xf16>,
    %o: tensor<1x2x33x16xf16>, %do: tensor<1x2x33x16xf16>, %lse: tensor<1x2x33xf32>)
    -> (tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
      {causal = #attn.causal<top_left>, scale = 0.25 : f32}
      : (tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>,
         tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>, tensor<1x2x33xf32>)
        -> (tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>)
  return %dq, %dk, %dv : tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>, tensor<1x2x33x16xf16>
}
