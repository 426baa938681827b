// capi.test's reference for @built (capi-test.c, made through the C API's
// score and mask function builders): the same attention with the bias as a
// named additive mask over the keys and top-left causal.
func.func @named(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x7x8xf32>,
                 %bias: tensor<7xf32>) -> tensor<1x2x5x8xf32> {
  %o = attn.sdpa %q, %k, %v, %bias {causal = #attn.causal<top_left>}
      : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>, tensor<7xf32>)
      -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}
