// f32 kernels that the tensor-core schedule takes with tf32=true (TF32
// operands, mma.sync m16n8k8) and keeps on the CUDA-core kernel without it.
func.func @f32_d64_causal(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x130x64xf32>,
                          %v: tensor<2x4x130x64xf32>) -> tensor<2x4x100x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<2x4x100x64xf32>, tensor<2x4x130x64xf32>, tensor<2x4x130x64xf32>) -> tensor<2x4x100x64xf32>
  return %o : tensor<2x4x100x64xf32>
}
func.func @f32_d128_gqa_mask(%q: tensor<1x8x70x128xf32>, %k: tensor<1x2x90x128xf32>,
                             %v: tensor<1x2x90x64xf32>, %m: tensor<1x1x70x90xi1>)
    -> tensor<1x8x70x64xf32> {
  %o = attn.sdpa %q, %k, %v, %m
      : (tensor<1x8x70x128xf32>, tensor<1x2x90x128xf32>, tensor<1x2x90x64xf32>, tensor<1x1x70x90xi1>)
        -> tensor<1x8x70x64xf32>
  return %o : tensor<1x8x70x64xf32>
}
func.func @f32_dynamic(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>,
                       %v: tensor<?x4x?x128xf32>) -> tensor<?x4x?x128xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>) -> tensor<?x4x?x128xf32>
  return %o : tensor<?x4x?x128xf32>
}
