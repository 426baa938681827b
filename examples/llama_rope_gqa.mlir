// LLaMA-3-8B-shaped attention on already-projected heads: 32 query heads
// share 8 key/value heads (GQA, D 128), T 128 tokens of a prefill (batch 1),
// causal. attn.rope rotates Q and K first, as Hugging Face's
// apply_rotary_pos_emb(q, k, cos, sin) does (rotate_half pairing: x[k] with
// x[k + 64]); the tables cos, sin are [T, D/2] = [128, 64] — Hugging Face's
// [T, D] tables are these repeated twice along the last dim
// (emb = torch.cat((freqs, freqs), -1)). The default scale is 1/sqrt(128).
// docs/pytorch.md, recipe 5, has the PyTorch code.
func.func @llama_rope_gqa(%q: tensor<1x32x128x128xf32>, %k: tensor<1x8x128x128xf32>,
                          %v: tensor<1x8x128x128xf32>,
                          %cos: tensor<128x64xf32>, %sin: tensor<128x64xf32>)
    -> tensor<1x32x128x128xf32> {
  %qr = attn.rope %q, %cos, %sin
      : tensor<1x32x128x128xf32>, tensor<128x64xf32>, tensor<128x64xf32>
  %kr = attn.rope %k, %cos, %sin
      : tensor<1x8x128x128xf32>, tensor<128x64xf32>, tensor<128x64xf32>
  %o = attn.sdpa %qr, %kr, %v {causal = #attn.causal<top_left>}
      : (tensor<1x32x128x128xf32>, tensor<1x8x128x128xf32>, tensor<1x8x128x128xf32>)
        -> tensor<1x32x128x128xf32>
  return %o : tensor<1x32x128x128xf32>
}
