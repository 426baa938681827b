// Causal self-attention on already-split heads, as in PyTorch
// F.scaled_dot_product_attention(q, k, v, is_causal=True): B 1, H 12,
// T 256, D 64; the scale defaults to 1/sqrt(64).
func.func @causal_sdpa(%q: tensor<1x12x256x64xf32>, %k: tensor<1x12x256x64xf32>,
                       %v: tensor<1x12x256x64xf32>) -> tensor<1x12x256x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x12x256x64xf32>, tensor<1x12x256x64xf32>, tensor<1x12x256x64xf32>)
        -> tensor<1x12x256x64xf32>
  return %o : tensor<1x12x256x64xf32>
}
