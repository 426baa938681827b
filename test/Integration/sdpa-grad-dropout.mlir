// attn.sdpa_grad with dropout through the fused CPU backward (the
// dropout factors regenerated from the seed at each element's flat index,
// SdpaGradToLoops.cpp) against the reference route (attn.dropout on the
// [B,H,Tq,Tk] tensors, SdpaGradToLinalg.cpp), its forward the fused
// sdpa_partial with the same rate and seed; GQA, bottom-right causal, at
// 16 and 8 lanes and small tiles. Values against torch: test_training.py
// (dropout_gqa_causal) and Integration/differentiate-chain.mlir.
// RUN: for o in "" "--vector-width=8" "--tile-q=16 --tile-k=32"; do \
// RUN:   attn-run %s --pipeline=cpu $o --random-inputs --seed=4 --compare-with=reference || exit 1; \
// RUN: done 2>&1 | FileCheck %s
// CHECK-NOT: not fused
// CHECK-COUNT-9: result #{{[0-2]}} vs reference: max_abs_error {{.*}} max_rel_error {{[0-9]\.[0-9]+e-(0[6-9]|[1-9][0-9])}}
// CHECK-NOT: not fused

func.func @g(%q: tensor<2x4x70x32xf32>, %k: tensor<2x2x150x32xf32>, %v: tensor<2x2x150x32xf32>, %do: tensor<2x4x70x32xf32>) -> (tensor<2x4x70x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<bottom_right>, dropout_rate = 0.4 : f32, dropout_seed = 99 : i64}
      : (tensor<2x4x70x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32>) -> (tensor<2x4x70x32xf32>, tensor<2x4x70xf32>)
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>, dropout_rate = 0.4 : f32, dropout_seed = 99 : i64}
      : (tensor<2x4x70x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32>, tensor<2x4x70x32xf32>, tensor<2x4x70x32xf32>, tensor<2x4x70xf32>) -> (tensor<2x4x70x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32>)
  return %dq, %dk, %dv : tensor<2x4x70x32xf32>, tensor<2x2x150x32xf32>, tensor<2x2x150x32xf32>
}
