// Kernels for the ptxas test: every feature of the GPU schedule.
func.func @dynamic_bottom_right(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                                %v: tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}
func.func @static_noncausal_d128(%q: tensor<2x8x100x128xf32>, %k: tensor<2x8x77x128xf32>,
                                 %v: tensor<2x8x77x128xf32>) -> tensor<2x8x100x128xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 0.1 : f32}
      : (tensor<2x8x100x128xf32>, tensor<2x8x77x128xf32>, tensor<2x8x77x128xf32>) -> tensor<2x8x100x128xf32>
  return %o : tensor<2x8x100x128xf32>
}
func.func @keep_mask(%q: tensor<2x4x31x32xf32>, %k: tensor<2x4x129x32xf32>,
                     %v: tensor<2x4x129x32xf32>, %m: tensor<2x1x1x129xi1>) -> tensor<2x4x31x32xf32> {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<top_left>}
      : (tensor<2x4x31x32xf32>, tensor<2x4x129x32xf32>, tensor<2x4x129x32xf32>, tensor<2x1x1x129xi1>) -> tensor<2x4x31x32xf32>
  return %o : tensor<2x4x31x32xf32>
}
func.func @additive_mask_f16(%q: tensor<1x2x?x16xf16>, %k: tensor<1x2x?x16xf16>,
                             %v: tensor<1x2x?x24xf16>, %m: tensor<?x?xf16>) -> tensor<1x2x?x24xf16> {
  %o = attn.sdpa %q, %k, %v, %m
      : (tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x24xf16>, tensor<?x?xf16>) -> tensor<1x2x?x24xf16>
  return %o : tensor<1x2x?x24xf16>
}

// The attention variants: softcap, ALiBi [B,H], a sliding window and key
// lengths (bounding the K/V tile loop), GQA, dynamic lengths.
func.func @features(%q: tensor<2x8x?x64xf32>, %k: tensor<2x2x?x64xf32>, %v: tensor<2x2x?x64xf32>,
                    %slopes: tensor<2x8xf32>, %len: tensor<2xi32>) -> tensor<2x8x?x64xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 100>, softcap = 30.0 : f32}
      : (tensor<2x8x?x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x64xf32>, tensor<2x8xf32>, tensor<2xi32>)
        -> tensor<2x8x?x64xf32>
  return %o : tensor<2x8x?x64xf32>
}
