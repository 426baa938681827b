// One attention layer's training step, forward and backward, in attn IR
// (docs/training.md): the forward saves its output and each row's
// log-sum-exp (attn.sdpa_partial), the backward takes them with the
// output's gradient and returns dQ, dK, dV (attn.sdpa_grad). Causal GQA,
// 8 query heads over 2 key/value heads.
//
//   build/bin/attn-run examples/training/sdpa_backward.mlir --pipeline=cpu \
//       --random-inputs --compare-with=reference
func.func @train_step(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                      %v: tensor<1x2x256x64xf32>, %do: tensor<1x8x256x64xf32>)
    -> (tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>,
        tensor<1x2x256x64xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>)
        -> (tensor<1x8x256x64xf32>, tensor<1x8x256xf32>)
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<top_left>}
      : (tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>,
         tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>, tensor<1x8x256xf32>)
        -> (tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>)
  return %o, %dq, %dk, %dv : tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>,
      tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>
}
