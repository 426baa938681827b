// Functions the cpu pipeline leaves (partly) to the reference lowering:
// a backward whose head dim is not a multiple of the vector width and a
// chain whose weights are also returned (@half is fused).
func.func @drop(%q: tensor<1x2x8x12xf32>, %k: tensor<1x2x8x12xf32>, %v: tensor<1x2x8x12xf32>, %o: tensor<1x2x8x12xf32>, %do: tensor<1x2x8x12xf32>, %lse: tensor<1x2x8xf32>) -> (tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse : (tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>)
  return %dq, %dk, %dv : tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>, tensor<1x2x8x12xf32>
}
func.func @half(%q: tensor<1x2x8x8xf16>, %k: tensor<1x2x8x8xf16>, %v: tensor<1x2x8x8xf16>) -> tensor<1x2x8x8xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x8x8xf16>, tensor<1x2x8x8xf16>, tensor<1x2x8x8xf16>) -> tensor<1x2x8x8xf16>
  return %o : tensor<1x2x8x8xf16>
}
func.func @weights(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %o, %p : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// A projection whose output width (12) is not a multiple of 2 vectors.
func.func @narrow(%x: tensor<2x5x16xf32>, %w: tensor<12x16xf32>) -> tensor<2x5x12xf32> {
  %y = attn.project %x, %w : (tensor<2x5x16xf32>, tensor<12x16xf32>) -> tensor<2x5x12xf32>
  return %y : tensor<2x5x12xf32>
}
func.func @dmask(%q: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>, %m: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %dq, %dk, %dv, %dm = attn.sdpa_grad %q, %q, %q, %o, %o, %lse, %m : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<8x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x8xf32>)
  return %dm : tensor<8x8xf32>
}
