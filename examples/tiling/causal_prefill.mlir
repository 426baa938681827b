// A causal attention layer (bottom-right, GQA 8:2) for tiling with the
// transform dialect: see docs/tiling.md and schedule.mlir.
func.func @causal_prefill(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x384x64xf32>,
                          %v: tensor<1x2x384x64xf32>)
    -> (tensor<1x8x256x64xf32>, tensor<1x8x256xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x256x64xf32>, tensor<1x2x384x64xf32>, tensor<1x2x384x64xf32>)
        -> (tensor<1x8x256x64xf32>, tensor<1x8x256xf32>)
  return %o, %lse : tensor<1x8x256x64xf32>, tensor<1x8x256xf32>
}
