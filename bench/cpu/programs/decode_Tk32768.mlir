func.func @f(%q: tensor<1x32x1x128xf32>, %k: tensor<1x8x32768x128xf32>, %v: tensor<1x8x32768x128xf32>) -> tensor<1x32x1x128xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<1x32x1x128xf32>, tensor<1x8x32768x128xf32>, tensor<1x8x32768x128xf32>) -> tensor<1x32x1x128xf32>
  return %o : tensor<1x32x1x128xf32>
}
