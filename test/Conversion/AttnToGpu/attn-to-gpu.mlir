// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=32 tile-k=16" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=32 tile-k=16" | FileCheck %s --check-prefix=ALLOCS

// The kernel schedule: a forall over (batch·head, Q tile) mapped to blocks;
// workgroup buffers for the K and V tiles [TK, D], the transposed
// accumulator [Dv, TQ] and the running max and sum [TQ]; thread-level
// foralls for the initialisation, the cooperative K/V loads, the per-row
// update and the final normalisation; the K/V loop stops at the causal
// limit of the Q tile.

// CHECK-LABEL: func.func @causal
// CHECK:       %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x4x?x16xf32>
// CHECK:       scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) {
// CHECK:         arith.constant 4 : index
// CHECK:         memref.alloca() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK:         scf.forall (%{{.*}}) in (32) {
// CHECK:         } {mapping = [#gpu.thread<x>]}
//                Causal: the last row of the tile, clamped to [0, Tk].
// CHECK:         arith.minsi
// CHECK:         arith.minsi
// CHECK:         %[[LIMIT:.*]] = arith.maxsi
// CHECK:         %[[NKT:.*]] = arith.ceildivsi %[[LIMIT]], %{{.*}} : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[NKT]] step
// CHECK:           scf.forall (%{{.*}}) in (32) {
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:           scf.forall (%{{.*}}) in (32) {
// CHECK:             memref.alloca() : memref<16xf32>
// CHECK:           } {mapping = [#gpu.thread<x>]}
// CHECK:         scf.forall (%{{.*}}) in (32) {
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK:         } {mapping = [#gpu.thread<x>]}
// CHECK:       } {mapping = [#gpu.block<x>, #gpu.block<y>]}
// CHECK:       bufferization.to_tensor %[[OUT]]

// No Tq×Tk buffer: the output is the only heap buffer; the rest are the
// fixed-size tiles above.
// ALLOCS-LABEL: func.func @causal
// ALLOCS-COUNT-1: memref.alloc(
// ALLOCS-NOT: memref.alloc(
// ALLOCS-NOT: memref<?x?xf32
// ALLOCS-LABEL: func.func @noncausal
func.func @causal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                  %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// Without causality every K tile is visited: the loop runs to ceil(Tk/TK).
// CHECK-LABEL: func.func @noncausal
// CHECK:       scf.forall
// CHECK-NOT:     arith.minsi
// CHECK:         %[[N:.*]] = arith.ceildivsi %dim_{{[0-9]+}}, %{{.*}} : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[N]] step
func.func @noncausal(%q: tensor<2x2x?x8xf32>, %k: tensor<2x2x?x8xf32>,
                     %v: tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  return %o : tensor<2x2x?x8xf32>
}

// D = 128 with tile-q 64: tile-k is halved from 64 to 8 so
// that K, V, the accumulator and the row state fit in 48 KiB.
// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=64 tile-k=64" | FileCheck %s --check-prefix=WIDE
// WIDE-LABEL: func.func @wide
// WIDE: memref.alloca() : memref<8x128xf32, #gpu.address_space<workgroup>>
// WIDE: memref.alloca() : memref<8x128xf32, #gpu.address_space<workgroup>>
// WIDE: memref.alloca() : memref<128x64xf32, #gpu.address_space<workgroup>>
func.func @wide(%q: tensor<1x1x300x128xf32>, %k: tensor<1x1x300x128xf32>,
                %v: tensor<1x1x300x128xf32>) -> tensor<1x1x300x128xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x300x128xf32>, tensor<1x1x300x128xf32>, tensor<1x1x300x128xf32>) -> tensor<1x1x300x128xf32>
  return %o : tensor<1x1x300x128xf32>
}
