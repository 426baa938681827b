// f64 attention (for checking: gradcheck, finite differences) through the
// reference and cpu pipelines: the fused kernels refuse f64, so both run
// the reference lowering, computed in f64. The forward, its log-sum-exp
// (attn.sdpa_partial) and the backward (attn.sdpa_grad) against
// torch.autograd of the plain formula in float64 (Inputs/sdpa_grad_case.py
// float64): GQA, bottom-right causal, softcap, an additive mask, within
// 1e-12 (f32 would be ~1e-7 away).
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t float64
// RUN: for p in reference cpu; do \
// RUN:   attn-run %s --entry=forward --pipeline=$p --quiet --atol=1e-12 --rtol=1e-12 \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mask.npy \
// RUN:     --expect=%t/o.npy || exit 1; \
// RUN:   attn-run %s --entry=partial --pipeline=$p --quiet --atol=1e-12 --rtol=1e-12 \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/mask.npy \
// RUN:     --expect=%t/o.npy --expect=%t/lse.npy || exit 1; \
// RUN:   attn-run %s --entry=backward --pipeline=$p --quiet --atol=1e-12 --rtol=1e-12 \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/o.npy \
// RUN:     --input=%t/do.npy --input=%t/lse.npy --input=%t/mask.npy \
// RUN:     --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-12: result #{{[0-2]}} vs {{.*}}: {{.*}}, ok
//
// The cpu pipeline says why the fused kernel did not take them.
// RUN: attn-opt %s --convert-attn-to-loops=report-unfused -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNFUSED
// UNFUSED-COUNT-3: f64 (for checking) takes the reference lowering

func.func @forward(%q: tensor<2x4x9x8xf64>, %k: tensor<2x2x13x8xf64>, %v: tensor<2x2x13x6xf64>,
                   %m: tensor<1x1x9x13xf64>) -> tensor<2x4x9x6xf64> {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<bottom_right>, scale = 0.375 : f32,
                                 softcap = 2.5 : f32}
      : (tensor<2x4x9x8xf64>, tensor<2x2x13x8xf64>, tensor<2x2x13x6xf64>, tensor<1x1x9x13xf64>)
        -> tensor<2x4x9x6xf64>
  return %o : tensor<2x4x9x6xf64>
}

func.func @partial(%q: tensor<2x4x9x8xf64>, %k: tensor<2x2x13x8xf64>, %v: tensor<2x2x13x6xf64>,
                   %m: tensor<1x1x9x13xf64>) -> (tensor<2x4x9x6xf64>, tensor<2x4x9xf64>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v, %m {causal = #attn.causal<bottom_right>,
                                               scale = 0.375 : f32, softcap = 2.5 : f32}
      : (tensor<2x4x9x8xf64>, tensor<2x2x13x8xf64>, tensor<2x2x13x6xf64>, tensor<1x1x9x13xf64>)
        -> (tensor<2x4x9x6xf64>, tensor<2x4x9xf64>)
  return %o, %lse : tensor<2x4x9x6xf64>, tensor<2x4x9xf64>
}

func.func @backward(%q: tensor<2x4x9x8xf64>, %k: tensor<2x2x13x8xf64>, %v: tensor<2x2x13x6xf64>,
                    %o: tensor<2x4x9x6xf64>, %do: tensor<2x4x9x6xf64>, %lse: tensor<2x4x9xf64>,
                    %m: tensor<1x1x9x13xf64>)
    -> (tensor<2x4x9x8xf64>, tensor<2x2x13x8xf64>, tensor<2x2x13x6xf64>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse, %m
      {causal = #attn.causal<bottom_right>, scale = 0.375 : f32, softcap = 2.5 : f32}
      : (tensor<2x4x9x8xf64>, tensor<2x2x13x8xf64>, tensor<2x2x13x6xf64>, tensor<2x4x9x6xf64>,
         tensor<2x4x9x6xf64>, tensor<2x4x9xf64>, tensor<1x1x9x13xf64>)
        -> (tensor<2x4x9x8xf64>, tensor<2x2x13x8xf64>, tensor<2x2x13x6xf64>)
  return %dq, %dk, %dv : tensor<2x4x9x8xf64>, tensor<2x2x13x8xf64>, tensor<2x2x13x6xf64>
}
