func.func @f(%q: tensor<1x12x4096x64xf32>, %k: tensor<1x12x4096x64xf32>, %v: tensor<1x12x4096x64xf32>) -> tensor<1x12x4096x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : (tensor<1x12x4096x64xf32>, tensor<1x12x4096x64xf32>, tensor<1x12x4096x64xf32>) -> tensor<1x12x4096x64xf32>
  return %o : tensor<1x12x4096x64xf32>
}
