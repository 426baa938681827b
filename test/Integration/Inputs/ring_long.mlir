// A causal ring large enough that --repeat keeps every rank busy for a
// while (ring-lost-rank.test kills one of them mid-run).
func.func @ring(%q: tensor<1x2x384x64xf32>, %k: tensor<1x2x384x64xf32>,
                %v: tensor<1x2x384x64xf32>) -> tensor<1x2x384x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x2x384x64xf32>, tensor<1x2x384x64xf32>, tensor<1x2x384x64xf32>)
        -> tensor<1x2x384x64xf32>
  return %o : tensor<1x2x384x64xf32>
}
