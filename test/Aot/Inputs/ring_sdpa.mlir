// The ring kernel of test/Aot/ring.test (and, compiled with --pipeline=cpu,
// which ignores attn.ring, its single-node reference).
func.func @ring_sdpa(%q: tensor<1x4x256x32xf32>, %k: tensor<1x4x256x32xf32>,
                     %v: tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring = #attn.ring<zigzag>}
      : (tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>)
        -> tensor<1x4x256x32xf32>
  return %o : tensor<1x4x256x32xf32>
}
