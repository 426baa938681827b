// Tile sizes the microkernels cannot use are rejected with a diagnostic.
// RUN: not attn-opt %s -convert-attn-to-loops="tile-q=6" 2>&1 | FileCheck %s
// RUN: not attn-opt %s -convert-attn-to-loops="tile-k=24" 2>&1 | FileCheck %s
// CHECK: convert-attn-to-loops: tile-q must be a positive multiple of 4 and tile-k a positive multiple of 2 x vector-width
func.func @f(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
