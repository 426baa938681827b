// attn-differentiate on attention written as the primitive chain (GQA,
// rope on Q and K, scores, scale, softcap, causal + additive mask,
// softmax, dropout, weighted sum: every primitive's rule, the tables' and
// the additive mask's adjoints included) and on an attn.sdpa with dropout
// (an sdpa_partial and an sdpa_grad with its rate and seed: the backward
// regenerates the forward's mask from the seed), through the reference and cpu pipelines,
// against torch.autograd in float64 with the dialect's dropout generator
// (Inputs/differentiate_chain_case.py). The sdpa's forward is checked too:
// the same dropout mask in the fused forward and in torch's. And an
// attn.sdpa with an additive mask argument, whose adjoint is
// attn.sdpa_grad's grad_mask.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/differentiate_chain_case.py %t
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: for p in reference cpu; do \
// RUN:   attn-run %t/grad.mlir --entry=chain_grad --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/cos.npy --input=%t/sin.npy \
// RUN:     --input=%t/m.npy --input=%t/dout.npy \
// RUN:     --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy --expect=%t/dcos.npy \
// RUN:     --expect=%t/dsin.npy --expect=%t/dm.npy || exit 1; \
// RUN:   attn-run %t/grad.mlir --entry=dropout_sdpa_grad --pipeline=$p --quiet \
// RUN:     --input=%t/q2.npy --input=%t/k2.npy --input=%t/v2.npy --input=%t/dout2.npy \
// RUN:     --expect=%t/dq2.npy --expect=%t/dk2.npy --expect=%t/dv2.npy || exit 1; \
// RUN:   attn-run %s --entry=dropout_sdpa --pipeline=$p --quiet \
// RUN:     --input=%t/q2.npy --input=%t/k2.npy --input=%t/v2.npy --expect=%t/o2.npy || exit 1; \
// RUN:   attn-run %t/grad.mlir --entry=masked_sdpa_grad --pipeline=$p --quiet \
// RUN:     --input=%t/q3.npy --input=%t/k3.npy --input=%t/v3.npy --input=%t/m3.npy --input=%t/dout3.npy \
// RUN:     --expect=%t/dq3.npy --expect=%t/dk3.npy --expect=%t/dv3.npy --expect=%t/dm3.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-28: result #{{[0-5]}} vs {{.*}}: {{.*}}, ok

func.func @chain(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>,
                 %cos: tensor<6x4xf32>, %sin: tensor<6x4xf32>, %m: tensor<1x1x6x6xf32>)
    -> tensor<1x4x6x8xf32> {
  %qr = attn.rope %q, %cos, %sin : tensor<1x4x6x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>
  %kr = attn.rope %k, %cos, %sin {style = #attn.rope<interleaved>}
      : tensor<1x2x6x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x6xf32>
  %t = attn.scale %s {scale = 0.35 : f32} : tensor<1x4x6x6xf32>
  %c = attn.softcap %t {cap = 2.0 : f32} : tensor<1x4x6x6xf32>
  %x = attn.mask %c, %m {causal = #attn.causal<top_left>} : tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>
  %p = attn.softmax %x : tensor<1x4x6x6xf32>
  %d = attn.dropout %p {rate = 0.25 : f32, seed = 7 : i64} : tensor<1x4x6x6xf32>
  %o = attn.weighted_sum %d, %v : (tensor<1x4x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

func.func @dropout_sdpa(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x9x8xf32>, %v: tensor<2x2x9x8xf32>)
    -> tensor<2x4x5x8xf32> {
  %o = attn.sdpa %q, %k, %v
      {causal = #attn.causal<bottom_right>, dropout_rate = 0.3 : f32, dropout_seed = 5 : i64}
      : (tensor<2x4x5x8xf32>, tensor<2x2x9x8xf32>, tensor<2x2x9x8xf32>) -> tensor<2x4x5x8xf32>
  return %o : tensor<2x4x5x8xf32>
}

func.func @masked_sdpa(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>,
                       %m: tensor<6x6xf32>) -> tensor<1x4x6x8xf32> {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<top_left>}
      : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<6x6xf32>)
        -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}
