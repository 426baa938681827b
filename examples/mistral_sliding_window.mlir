// A Mistral-style attention layer, scaled down: self-attention over T 256
// tokens (batch 1) of width E 512 with grouped-query attention (16 query
// heads share 4 key/value heads, D 32), rotary position embeddings on Q and
// K (LLaMA's rotate_half pairing, tables cos/sin [T, D/2]), and a sliding
// window of W 64: each token sees itself and the W - 1 = 63 tokens before it
// (Hugging Face sliding_window = 64, FlashAttention window_size = (63, 0)).
// Mistral 7B has E 4096, 32 heads over 8, D 128 and W 4096. Bias-free
// projections in nn.Linear layout (d_out, d_in): wq [H*D, E], wk and wv
// [Hkv*D, E], wo [E, H*D]. docs/pytorch.md, recipe 4, has the PyTorch code.
func.func @mistral_sliding_window(
    %x: tensor<1x256x512xf32>,
    %wq: tensor<512x512xf32>, %wk: tensor<128x512xf32>,
    %wv: tensor<128x512xf32>, %wo: tensor<512x512xf32>,
    %cos: tensor<256x16xf32>, %sin: tensor<256x16xf32>) -> tensor<1x256x512xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo rope(%cos, %sin)
         {num_heads = 16 : i64, num_kv_heads = 4 : i64,
          causal = #attn.causal<bottom_right>, window = #attn.window<left = 63>}
       : (tensor<1x256x512xf32>, tensor<1x256x512xf32>,
          tensor<512x512xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<512x512xf32>,
          tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<1x256x512xf32>
  return %y : tensor<1x256x512xf32>
}
