// Causal grouped-query attention in bf16 with head dim 128 (a Llama-style
// layer: 8 query heads sharing 2 K/V heads), as in PyTorch
// F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).
// attn-gpu-pipeline compiles it to the tensor-core FlashAttention-2 kernel
// (mma.sync m16n8k16, ldmatrix, cp.async; docs/gpu.md);
// attn-run --pipeline=gpu-schedule runs that kernel on the CPU.
func.func @tensor_core_sdpa(%q: tensor<1x8x256x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                            %v: tensor<1x2x256x128xbf16>) -> tensor<1x8x256x128xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x8x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>)
        -> tensor<1x8x256x128xbf16>
  return %o : tensor<1x8x256x128xbf16>
}
