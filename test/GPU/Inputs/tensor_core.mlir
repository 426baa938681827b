// Kernels the tensor-core schedule takes (f16/bf16, head dims 64/128) and
// one it does not (f32).
func.func @f16_d64_causal(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>,
                          %v: tensor<2x4x130x64xf16>) -> tensor<2x4x100x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}
func.func @bf16_d128_gqa_mask(%q: tensor<1x8x256x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                              %v: tensor<1x2x256x128xbf16>, %m: tensor<1x1x256x256xi1>)
    -> tensor<1x8x256x128xbf16> {
  %o = attn.sdpa %q, %k, %v, %m
      : (tensor<1x8x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x1x256x256xi1>)
        -> tensor<1x8x256x128xbf16>
  return %o : tensor<1x8x256x128xbf16>
}
func.func @f16_dynamic(%q: tensor<?x4x?x128xf16>, %k: tensor<?x4x?x128xf16>,
                       %v: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<?x4x?x128xf16>, tensor<?x4x?x128xf16>, tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

func.func @f16_d128_paged(%q: tensor<4x32x16x128xf16>, %kc: tensor<256x16x8x128xf16>,
                          %vc: tensor<256x16x8x128xf16>, %table: tensor<4x64xi32>,
                          %len: tensor<4xi32>, %sinks: tensor<32xf32>) -> tensor<4x32x16x128xf16> {
  %k = attn.gather_pages %kc, %table lengths(%len)
      : (tensor<256x16x8x128xf16>, tensor<4x64xi32>, tensor<4xi32>) -> tensor<4x8x1024x128xf16>
  %v = attn.gather_pages %vc, %table lengths(%len)
      : (tensor<256x16x8x128xf16>, tensor<4x64xi32>, tensor<4xi32>) -> tensor<4x8x1024x128xf16>
  %o = attn.sdpa %q, %k, %v key_lengths(%len) sinks(%sinks) {causal = #attn.causal<bottom_right>}
      : (tensor<4x32x16x128xf16>, tensor<4x8x1024x128xf16>, tensor<4x8x1024x128xf16>, tensor<4xi32>,
         tensor<32xf32>) -> tensor<4x32x16x128xf16>
  return %o : tensor<4x32x16x128xf16>
}

func.func @f16_d64_partial(%q: tensor<2x8x300x64xf16>, %k: tensor<2x2x300x64xf16>,
                           %v: tensor<2x2x300x64xf16>)
    -> (tensor<2x8x300x64xf32>, tensor<2x8x300xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<2x8x300x64xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x64xf16>)
        -> (tensor<2x8x300x64xf32>, tensor<2x8x300xf32>)
  return %o, %lse : tensor<2x8x300x64xf32>, tensor<2x8x300xf32>
}
