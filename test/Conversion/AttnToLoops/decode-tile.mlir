// RUN: attn-opt %s -convert-attn-to-loops -split-input-file | FileCheck %s

// A static Tq below tile-q (decode) gets a Q tile of its own size rounded up
// to the 4-row microkernel block, not 64 padded rows: Qs is [4, D], the
// scores [4, tile-k], the accumulator [4, Dv], and one Q tile per (b, h).
// CHECK-LABEL: func.func @decode
// CHECK: scf.parallel {{.*}} to (%c8{{.*}}, %{{.*}}, %c4{{.*}}, %{{.*}})
// CHECK: memref.alloca() : memref<4x128xf32>
// CHECK: memref.alloca() : memref<128x64xf32>
// CHECK: memref.alloca() : memref<64x128xf32>
// CHECK: memref.alloca() : memref<4x64xf32>
// CHECK: memref.alloca() : memref<4x128xf32>
func.func @decode(%q: tensor<1x32x1x128xf32>, %k: tensor<1x8x?x128xf32>,
                  %v: tensor<1x8x?x128xf32>) -> tensor<1x32x1x128xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x32x1x128xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32>) -> tensor<1x32x1x128xf32>
  return %o : tensor<1x32x1x128xf32>
}

// -----

// Tq = 10 rounds up to 12; a dynamic Tq keeps tile-q (64).
// CHECK-LABEL: func.func @short
// CHECK: memref.alloca() : memref<12x16xf32>
// CHECK-LABEL: func.func @dynamic
// CHECK: memref.alloca() : memref<64x16xf32>
func.func @short(%q: tensor<2x2x10x16xf32>, %k: tensor<2x2x40x16xf32>,
                 %v: tensor<2x2x40x16xf32>) -> tensor<2x2x10x16xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<2x2x10x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>) -> tensor<2x2x10x16xf32>
  return %o : tensor<2x2x10x16xf32>
}
func.func @dynamic(%q: tensor<2x2x?x16xf32>, %k: tensor<2x2x40x16xf32>,
                   %v: tensor<2x2x40x16xf32>) -> tensor<2x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<2x2x?x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>) -> tensor<2x2x?x16xf32>
  return %o : tensor<2x2x?x16xf32>
}
