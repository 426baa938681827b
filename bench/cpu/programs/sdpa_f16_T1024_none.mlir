func.func @f(%q: tensor<1x12x1024x64xf16>, %k: tensor<1x12x1024x64xf16>, %v: tensor<1x12x1024x64xf16>) -> tensor<1x12x1024x64xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>) -> tensor<1x12x1024x64xf16>
  return %o : tensor<1x12x1024x64xf16>
}
