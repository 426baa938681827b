func.func @bad(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x2x3x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x3x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x3x8xf32>
  return %o : tensor<1x2x3x8xf32>
}
