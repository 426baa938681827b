// A decode step on an int8 KV cache: one f32 scale per token and K/V head
// (attn.dequantize), batch B and key length Tk given at call time, 8 query
// heads on 2 K/V heads. The decode tile reads the int8 rows in place.
// Compiled ahead of time by attn-aot in examples/aot/CMakeLists.txt and
// called from sdpa_app.c.
func.func @int8_decode(%q: tensor<?x8x1x64xf32>, %kq: tensor<?x2x?x64xi8>,
                       %ks: tensor<?x2x?xf32>, %vq: tensor<?x2x?x64xi8>,
                       %vs: tensor<?x2x?xf32>) -> tensor<?x8x1x64xf32> {
  %k = attn.dequantize %kq, %ks
      : (tensor<?x2x?x64xi8>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xf32>
  %v = attn.dequantize %vq, %vs
      : (tensor<?x2x?x64xi8>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xf32>
  %o = attn.sdpa %q, %k, %v
      : (tensor<?x8x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>)
        -> tensor<?x8x1x64xf32>
  return %o : tensor<?x8x1x64xf32>
}
