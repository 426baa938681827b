// convert-attn-to-loops amx: a bf16 projection multiplies on AMX tiles
// (docs/cpu.md, "Projections"). x is copied into whole blocks of 16 rows
// (zeros past the last row); W is packed in panels of bf16 pairs, as for
// bf16-dot; each block of 16 rows takes a panel of 32 outputs on two sum
// tiles, kept in a [16, 32] f32 buffer between runs of 8 steps of 32
// inputs (In = 320: one run of 8, then 2 more), then the bias is added in
// vectors. In not a multiple of 32, 8 lanes, the option off and f16
// without amx-fp16 keep the other paths; with amx-fp16, f16 takes f16
// pair tiles.
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 amx=1" | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=8 amx=1" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 amx=1 amx-fp16=1" | FileCheck %s --check-prefix=FP16
// OFF-NOT: amx.

// CHECK-LABEL: func.func @proj
// CHECK: %[[X:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x320xbf16>
// CHECK: vector.store %{{.*}}, %[[X]][%{{.*}}, %{{.*}}] : memref<?x320xbf16>, vector<32xbf16>
// CHECK: vector.store %{{.*}}, %[[X]][%{{.*}}, %{{.*}}] : memref<?x320xbf16>, vector<32xbf16>
// CHECK: %[[PANEL:.*]] = memref.alloca() {{.*}} : memref<160x32xi32>
// CHECK: %[[SUMS:.*]] = memref.alloca() {{.*}} : memref<16x32xf32>
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: amx.tile_store %[[SUMS]][%{{.*}}, %{{.*}}]
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: amx.tile_store %[[SUMS]][%{{.*}}, %{{.*}}]
// The run of 8 steps.
// CHECK: scf.for
// CHECK: %[[C0:.*]] = amx.tile_load %[[SUMS]][%{{.*}}, %{{.*}}] : memref<16x32xf32> into !amx.tile<16x16xf32>
// CHECK: %[[C1:.*]] = amx.tile_load %[[SUMS]][%{{.*}}, %{{.*}}] : memref<16x32xf32> into !amx.tile<16x16xf32>
// CHECK: %[[A:.*]] = amx.tile_load %[[X]][%{{.*}}, %{{.*}}] : memref<?x320xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[B0:.*]] = amx.tile_load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<160x32xi32> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf %[[A]], %[[B0]], %[[C0]]
// CHECK: %[[B1:.*]] = amx.tile_load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<160x32xi32> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf %[[A]], %[[B1]], %[[C1]]
// CHECK-COUNT-14: amx.tile_mulf
// CHECK: amx.tile_store %[[SUMS]]
// CHECK: amx.tile_store %[[SUMS]]
// CHECK: }
// The 2 steps left.
// CHECK: amx.tile_load %[[SUMS]]
// CHECK: amx.tile_load %[[SUMS]]
// CHECK-COUNT-4: amx.tile_mulf
// CHECK: amx.tile_store %[[SUMS]]
// CHECK: amx.tile_store %[[SUMS]]
// The bias, in vectors, on the block's rows.
// CHECK: vector.load %[[SUMS]]
// CHECK: arith.addf
// CHECK: return
func.func @proj(%x: tensor<2x40x320xbf16>, %w: tensor<32x320xbf16>, %b: tensor<32xbf16>) -> tensor<2x40x32xbf16> {
  %y = attn.project %x, %w, %b : (tensor<2x40x320xbf16>, tensor<32x320xbf16>, tensor<32xbf16>) -> tensor<2x40x32xbf16>
  return %y : tensor<2x40x32xbf16>
}

// CHECK-LABEL: func.func @in48
// CHECK-NOT: amx.
// CHECK: return
func.func @in48(%x: tensor<20x48xbf16>, %w: tensor<32x48xbf16>) -> tensor<20x32xbf16> {
  %y = attn.project %x, %w : (tensor<20x48xbf16>, tensor<32x48xbf16>) -> tensor<20x32xbf16>
  return %y : tensor<20x32xbf16>
}

// CHECK-LABEL: func.func @f16
// CHECK-NOT: amx.
// CHECK: return
// FP16-LABEL: func.func @f16
// FP16: amx.tile_load %{{.*}} : memref<?x64xf16> into !amx.tile<16x32xf16>
// FP16: amx.tile_mulf %{{.*}} : !amx.tile<16x32xf16>, !amx.tile<16x32xf16>, !amx.tile<16x16xf32>
// FP16: return
func.func @f16(%x: tensor<20x64xf16>, %w: tensor<64x32xf16>) -> tensor<20x32xf16> {
  %y = attn.project %x, %w {layout = #attn.layout<in_out>} : (tensor<20x64xf16>, tensor<64x32xf16>) -> tensor<20x32xf16>
  return %y : tensor<20x32xf16>
}
