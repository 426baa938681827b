func.func @f(%q: tensor<1x12x2048x64xbf16>, %k: tensor<1x12x2048x64xbf16>, %v: tensor<1x12x2048x64xbf16>) -> tensor<1x12x2048x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x12x2048x64xbf16>, tensor<1x12x2048x64xbf16>, tensor<1x12x2048x64xbf16>) -> tensor<1x12x2048x64xbf16>
  return %o : tensor<1x12x2048x64xbf16>
}
