// A decode step on an fp8 e4m3 KV cache (f8E4M3FN, vLLM's fp8 caches): one
// f32 scale per tensor (attn.dequantize of a rank-0 scale), batch B and key
// length Tk given at call time, 8 query heads on 2 K/V heads. The decode
// tile reads the fp8 rows in place. Compiled ahead of time by attn-aot in
// examples/aot/CMakeLists.txt and called from sdpa_app.c, which passes
// the caches as bytes (the e4m3 codes).
func.func @fp8_decode(%q: tensor<?x8x1x64xf32>, %kq: tensor<?x2x?x64xf8E4M3FN>,
                      %ks: tensor<f32>, %vq: tensor<?x2x?x64xf8E4M3FN>,
                      %vs: tensor<f32>) -> tensor<?x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks
      : (tensor<?x2x?x64xf8E4M3FN>, tensor<f32>) -> tensor<?x2x?x64xf32>
  %v = attn.dequantize %vq, %vs
      : (tensor<?x2x?x64xf8E4M3FN>, tensor<f32>) -> tensor<?x2x?x64xf32>
  %o = attn.sdpa %q, %k, %v
      : (tensor<?x8x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>)
        -> tensor<?x8x1x64xf32>
  return %o : tensor<?x8x1x64xf32>
}
