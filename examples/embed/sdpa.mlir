// Input for my-opt (examples/embed): causal attention, dynamic lengths.
func.func @sdpa(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>,
                %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>)
        -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}
