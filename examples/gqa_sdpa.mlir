// Grouped-query attention in a KV-cache decode step: 32 query heads share
// 8 key/value heads (4 query heads per group), 4 new tokens attend to a
// cache of 300 keys with the bottom-right causal alignment (new token i
// sees keys j <= i + Tk - Tq), D 128.
func.func @gqa_decode(%q: tensor<1x32x4x128xf32>, %k: tensor<1x8x300x128xf32>,
                      %v: tensor<1x8x300x128xf32>) -> tensor<1x32x4x128xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x32x4x128xf32>, tensor<1x8x300x128xf32>, tensor<1x8x300x128xf32>)
        -> tensor<1x32x4x128xf32>
  return %o : tensor<1x32x4x128xf32>
}
