// Gemma-2-2B-shaped attention with logit soft-capping, on already-projected
// (and rotated) heads: 8 query heads share 4 key/value heads (GQA), head
// dim 256, T 128 tokens of a prefill (batch 1), causal. Gemma 2 scales by
// query_pre_attn_scalar^-0.5 = 256^-0.5 = 0.0625, then caps the scores with
// attn_logit_softcapping = 50: s = 50 * tanh(s / 50) (Hugging Face:
// torch.tanh(s / c) * c; FlashAttention: softcap=50.0), before the causal
// mask. (Gemma 2's local layers add window = #attn.window<left = 4095>.)
// docs/pytorch.md, recipe 7, has the PyTorch code.
func.func @gemma2_softcap(%q: tensor<1x8x128x256xf32>, %k: tensor<1x4x128x256xf32>,
                          %v: tensor<1x4x128x256xf32>) -> tensor<1x8x128x256xf32> {
  %o = attn.sdpa %q, %k, %v
      {scale = 0.0625 : f32, softcap = 50.0 : f32, causal = #attn.causal<top_left>}
      : (tensor<1x8x128x256xf32>, tensor<1x4x128x256xf32>, tensor<1x4x128x256xf32>)
        -> tensor<1x8x128x256xf32>
  return %o : tensor<1x8x128x256xf32>
}
