// Grouped-query causal attention with every length dynamic: batch B, query
// length Tq and key length Tk are given at call time; 8 query heads share
// 2 K/V heads; causal aligned bottom-right (the last query sees every key,
// as in decode with a KV cache). Compiled ahead of time by attn-aot in
// examples/aot/CMakeLists.txt and called from sdpa_app.c.
func.func @gqa_causal(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                      %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>)
        -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
