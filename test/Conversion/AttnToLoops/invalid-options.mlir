// Tile sizes the microkernels cannot use are rejected with a diagnostic.
// RUN: not attn-opt %s -convert-attn-to-loops="tile-q=6" 2>&1 | FileCheck %s --check-prefix=Q
// RUN: not attn-opt %s -convert-attn-to-loops="tile-k=24" 2>&1 | FileCheck %s --check-prefix=K
// Q: convert-attn-to-loops: tile-q must be a positive multiple of 4 and tile-k a positive multiple of 2 x vector-width, got tile-q=6 tile-k=64 vector-width=8
// K: convert-attn-to-loops: tile-q must be a positive multiple of 4 and tile-k a positive multiple of 2 x vector-width, got tile-q=64 tile-k=24 vector-width=8
func.func @f(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
