// Batched decode against a padded KV cache: 4 sequences of different
// lengths share a cache of 256 slots ([B, Hkv, 256, D]); sequence b holds
// len[b] keys in slots 0 .. len[b] - 1 (the new token's key and value
// included) and the slots after them are padding that is never read. One
// new query per sequence, LLaMA-3-8B heads (32 query heads over 8 key/value
// heads, D 128). With key lengths the bottom-right diagonal ends at key
// len[b] - 1: query i sees keys j <= i + len[b] - Tq (here every valid key).
// len is int32 (an int64 .npy is converted exactly); a length outside
// [0, 256] is an error. FlashAttention: flash_attn_with_kvcache(...,
// cache_seqlens=len, causal=True); ONNX Attention: nonpad_kv_seqlen.
// docs/pytorch.md, recipe 6, has the PyTorch code.
func.func @decode_key_lengths(%q: tensor<4x32x1x128xf32>, %k: tensor<4x8x256x128xf32>,
                              %v: tensor<4x8x256x128xf32>, %len: tensor<4xi32>)
    -> tensor<4x32x1x128xf32> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<4x32x1x128xf32>, tensor<4x8x256x128xf32>, tensor<4x8x256x128xf32>,
         tensor<4xi32>) -> tensor<4x32x1x128xf32>
  return %o : tensor<4x32x1x128xf32>
}
