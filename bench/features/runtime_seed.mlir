// Dropout with a compiled seed (@seeded) and a run-time seed operand
// (@runtime): bench/NOTES.md "2026-12-05: Run-time dropout seeds".
func.func @seeded(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>)
    -> tensor<1x8x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, dropout_rate = 0.1 : f32, dropout_seed = 77 : i64}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}
func.func @runtime(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>,
                   %s: tensor<i64>) -> tensor<1x8x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v seed(%s) {causal = #attn.causal<top_left>, dropout_rate = 0.1 : f32}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<i64>) -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}
