// convert-attn-to-loops amx: a bf16 prefill tile multiplies on AMX tiles
// (docs/cpu.md, "AMX tiles") on the pair layouts of bf16-dot: S as
// 16 x 16 f32 tiles of Q pairs [16 x 32 bf16] times K pairs, stored into
// the score buffer; acc rescaled in vectors, then loaded as a tile, the
// products of P pairs and V pairs added, stored back. The steps over D/32
// (scores) and tile-k/32 (P·V) are unrolled: here 2 and 2. Everything
// else keeps its path: the option off, 8 lanes, tile-q not a multiple of
// 16, D not a multiple of 32, f16 (without amx-fp16), a decode tile.
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 amx=1" | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=8 amx=1" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 tile-q=24 amx=1" | FileCheck %s --check-prefix=OFF
// With amx-fp16, the f16 tile takes f16 pair tiles (tdpfp16ps).
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 amx=1 amx-fp16=1" | FileCheck %s --check-prefix=FP16
// FP16-LABEL: func.func @f16
// FP16: amx.tile_load %{{.*}} into !amx.tile<16x32xf16>
// FP16: amx.tile_mulf %{{.*}} : !amx.tile<16x32xf16>, !amx.tile<16x32xf16>, !amx.tile<16x16xf32>
// FP16: arith.truncf %{{.*}} : vector<16xf32> to vector<16xf16>
// FP16: return
// With amx, bf16-dot's x86vector dots are gone from the prefill tile.
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 amx=1 bf16-dot=1" | FileCheck %s --check-prefix=NODOT
// OFF-NOT: amx.
// NODOT-LABEL: func.func @prefill
// NODOT-NOT: x86vector
// NODOT: return

// CHECK-LABEL: func.func @prefill
// CHECK-DAG: memref.alloca() {{.*}} : memref<64x32xi32>
// CHECK-DAG: memref.alloca() {{.*}} : memref<32x64xi32>
// Scores: two steps over D's 64 = 2 x 32.
// CHECK: %[[Z:.*]] = amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: %[[Q0:.*]] = amx.tile_load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x32xi32> into !amx.tile<16x32xbf16>
// CHECK: %[[K0:.*]] = amx.tile_load %{{.*}} into !amx.tile<16x32xbf16>
// CHECK: %[[S0:.*]] = amx.tile_mulf %[[Q0]], %[[K0]], %[[Z]]
// CHECK: %[[S1:.*]] = amx.tile_mulf %{{.*}}, %{{.*}}, %[[S0]]
// CHECK: amx.tile_store %{{.*}}[%{{.*}}, %{{.*}}], %[[S1]] : memref<64x64xf32>, !amx.tile<16x16xf32>
// P·V: acc as the accumulator tile, two steps over tile-k's 64 keys.
// CHECK: %[[A:.*]] = amx.tile_load %{{.*}} : memref<64x64xf32> into !amx.tile<16x16xf32>
// CHECK: %[[P0:.*]] = amx.tile_mulf %{{.*}}, %{{.*}}, %[[A]]
// CHECK: %[[P1:.*]] = amx.tile_mulf %{{.*}}, %{{.*}}, %[[P0]]
// CHECK: amx.tile_store %{{.*}}, %[[P1]] : memref<64x64xf32>, !amx.tile<16x16xf32>
// CHECK-NOT: amx.tile_mulf
// CHECK: return
func.func @prefill(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : (tensor<1x4x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x4x128x64xbf16>
  return %o : tensor<1x4x128x64xbf16>
}

// CHECK-LABEL: func.func @d48
// CHECK-NOT: amx.
// CHECK: return
func.func @d48(%q: tensor<1x2x128x48xbf16>) -> tensor<1x2x128x48xbf16> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x128x48xbf16>, tensor<1x2x128x48xbf16>, tensor<1x2x128x48xbf16>) -> tensor<1x2x128x48xbf16>
  return %o : tensor<1x2x128x48xbf16>
}

// CHECK-LABEL: func.func @f16
// CHECK-NOT: amx.
// CHECK: return
func.func @f16(%q: tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16>
  return %o : tensor<1x2x128x64xf16>
}

// CHECK-LABEL: func.func @decode
// CHECK-NOT: amx.
// CHECK: return
func.func @decode(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x512x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x8x1x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>) -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}
