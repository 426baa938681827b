// BLOOM-560m-shaped attention with ALiBi, on already-projected heads: 16
// heads of 64, a chunk of 16 new tokens attending to 128 keys (112 cached
// and the 16 new ones; batch 1), bottom-right causal. No position embedding:
// each head h adds -slopes[h] * |i + Tk - Tq - j| to the score of query i
// and key j, with slopes[h] = 2^(-8 (h + 1) / H) (1/sqrt(2), 1/2, ...,
// 1/256 for H = 16). BLOOM adds slopes[h] * j instead, which under the
// causal mask differs only by a constant per row (the same softmax);
// FlashAttention: alibi_slopes=slopes. docs/pytorch.md, recipe 7, has the
// PyTorch code.
func.func @bloom_alibi(%q: tensor<1x16x16x64xf32>, %k: tensor<1x16x128x64xf32>,
                       %v: tensor<1x16x128x64xf32>, %slopes: tensor<16xf32>)
    -> tensor<1x16x16x64xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%slopes) {causal = #attn.causal<bottom_right>}
      : (tensor<1x16x16x64xf32>, tensor<1x16x128x64xf32>, tensor<1x16x128x64xf32>,
         tensor<16xf32>) -> tensor<1x16x16x64xf32>
  return %o : tensor<1x16x16x64xf32>
}
