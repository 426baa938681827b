// attn-differentiate on attention sinks, through the reference and cpu
// pipelines, against torch.autograd in float64
// (Inputs/differentiate_sinks_case.py): @fused, an attn.sdpa with sinks
// (an sdpa_partial whose lse counts the sinks, the fused sdpa_grad, and
// dsinks[h] = −Σ_{b,i} exp(sink_h − lse)·rowsum(dO ⊙ O)), with GQA, key
// lengths (one batch row has no key) and bottom-right causal; @chain, the
// primitive chain, whose attn.softmax with sinks has the same rule from P
// and dP.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/differentiate_sinks_case.py %t
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: FileCheck %s --check-prefix=IR < %t/grad.mlir
// RUN: for p in reference cpu; do \
// RUN:   attn-run %t/grad.mlir --entry=fused_grad --pipeline=$p --quiet \
// RUN:     --input=%t/f_q.npy --input=%t/f_k.npy --input=%t/f_v.npy --input=%t/f_lens.npy \
// RUN:     --input=%t/f_sinks.npy --input=%t/f_dout.npy \
// RUN:     --expect=%t/f_dq.npy --expect=%t/f_dk.npy --expect=%t/f_dv.npy --expect=%t/f_dsinks.npy || exit 1; \
// RUN:   attn-run %t/grad.mlir --entry=chain_grad --pipeline=$p --quiet \
// RUN:     --input=%t/c_q.npy --input=%t/c_k.npy --input=%t/c_v.npy --input=%t/c_sinks.npy \
// RUN:     --input=%t/c_dout.npy \
// RUN:     --expect=%t/c_dq.npy --expect=%t/c_dk.npy --expect=%t/c_dv.npy --expect=%t/c_dsinks.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-16: result #{{[0-3]}} vs {{.*}}: {{.*}}, ok
//
// The fused route: no primitive chain, the forward's lse counts the sinks.
// IR-LABEL: func.func @fused_grad
// IR-NOT: attn.softmax
// IR: attn.sdpa_partial {{.*}} key_lengths(%{{.*}}) sinks(%{{.*}})
// IR: attn.sdpa_grad
// IR-LABEL: func.func @chain_grad
// IR: attn.logsumexp %{{.*}} sinks(%{{.*}} : tensor<2xf32>)

func.func @fused(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x20x16xf32>, %v: tensor<2x2x20x16xf32>,
                 %len: tensor<2xi32>, %sinks: tensor<4xf32>) -> tensor<2x4x3x16xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) sinks(%sinks) {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x3x16xf32>, tensor<2x2x20x16xf32>, tensor<2x2x20x16xf32>, tensor<2xi32>, tensor<4xf32>)
        -> tensor<2x4x3x16xf32>
  return %o : tensor<2x4x3x16xf32>
}

func.func @chain(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>,
                 %sinks: tensor<2xf32>) -> tensor<1x2x6x8xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x6xf32>
  %t = attn.scale %s {scale = 0.35 : f32} : tensor<1x2x6x6xf32>
  %m = attn.mask %t {causal = #attn.causal<top_left>} : tensor<1x2x6x6xf32>
  %p = attn.softmax %m sinks(%sinks : tensor<2xf32>) : tensor<1x2x6x6xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  return %o : tensor<1x2x6x8xf32>
}
