// convert-attn-to-loops, prefill tiles: the keys are transposed once per
// call when several Q tiles read each K/V head (static B, Tq, Tk; Tq above
// tile-q) and the f32 copy fits prepack-limit-mib (32 MiB by default); V
// is read in place when it is f32 and its rows are whole vectors
// (docs/cpu.md, *Prefill packing*).
// RUN: attn-opt %s -convert-attn-to-loops -split-input-file | FileCheck %s
// The limit is an option: 0 packs every tile per Q tile, 64 MiB takes the
// 32 MiB + 32 KiB keys of @over_budget; a negative limit is refused.
// RUN: attn-opt %s -convert-attn-to-loops="prepack-limit-mib=0" -split-input-file | FileCheck %s --check-prefix=LIMIT0
// RUN: attn-opt %s -convert-attn-to-loops="prepack-limit-mib=64" -split-input-file | FileCheck %s --check-prefix=LIMIT64
// RUN: attn-opt %s -attn-cpu-pipeline="prepack-limit-mib=0 lower-to-llvm=false" -split-input-file | FileCheck %s --check-prefix=LIMIT0
// RUN: not attn-opt %s -convert-attn-to-loops="prepack-limit-mib=-1" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: convert-attn-to-loops: prepack-limit-mib must be in [0, 2^30], got -1

// Tq 200 (4 Q tiles of 64), Tk 300 (5 K/V tiles, the last one 44 keys).
// CHECK-LABEL: func.func @prepacked
// CHECK-SAME: (%{{[^:]*}}: tensor<1x2x200x16xf32>, %[[K:[^:]*]]: tensor<1x2x300x16xf32>, %[[V:[^:]*]]: tensor<1x2x300x16xf32>)
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x2x200x16xf32>
// The keys' buffer: [B, Hkv, K/V tiles, D, tile-k].
// CHECK-NEXT: %[[KT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x16x64xf32>
// First a parallel loop over (K/V head, batch, K/V tile): each tile's keys,
// clamped to Tk - 1, transposed 8 x 8 in registers into the tile's slice.
// CHECK-NEXT: scf.parallel (%[[PH:.*]], %[[PB:.*]], %[[PT:.*]]) = (%c0, %c0, %c0) to (%c2, %c1, %c5)
// CHECK-NEXT: %[[PK0:.*]] = arith.muli %[[PT]], %c64 : index
// CHECK-NEXT: %[[PLEFT:.*]] = arith.subi %c300, %[[PK0]] : index
// CHECK-NEXT: %[[PROWS:.*]] = arith.minsi %[[PLEFT]], %c64 : index
// CHECK-NEXT: %[[PSLICE:.*]] = memref.subview %[[KT]][%[[PB]], %[[PH]], %[[PT]], 0, 0] [1, 1, 1, 16, 64] [1, 1, 1, 1, 1] : memref<1x2x5x16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
// CHECK-COUNT-8: vector.load %[[KB]][%[[PB]], %[[PH]], %{{.*}}, %{{.*}}]
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.*}}, %[[PSLICE]][%{{.*}}, %{{.*}}] : memref<16x64xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
// CHECK: scf.reduce
// Then the Q tiles: no Kt or Vt scratch (Qs [64, 16], S/P [64, 64], acc
// [64, 16], m, l, α).
// CHECK: scf.parallel (%[[KVH:.*]], %[[B:.*]], %{{.*}}, %{{.*}}) =
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-COUNT-3: memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NOT: memref.alloca
// CHECK-NOT: vector.shuffle
// Each K/V tile's scores read the tile's slice of the keys' buffer.
// CHECK: scf.for %[[TILE:.*]] = %c0 to %c5 step %c1 {
// CHECK: %[[KROWS:.*]] = arith.minsi %{{.*}}, %c64 : index
// CHECK-NEXT: %[[SLICE:.*]] = memref.subview %[[KT]][%[[B]], %[[KVH]], %[[TILE]], 0, 0] [1, 1, 1, 16, 64]
// CHECK: vector.load %[[SLICE]][%{{.*}}, %{{.*}}] : memref<16x64xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
// CHECK: vector.fma
// P·V over the tile's keys only, V's rows where they are.
// CHECK: scf.for %[[PJ:.*]] = %c0 to %[[KROWS]] step %c1 iter_args(
// CHECK: %[[VKEY:.*]] = arith.addi %{{.*}}, %[[PJ]] : index
// CHECK: vector.load %[[VB]][%[[B]], %[[KVH]], %[[VKEY]], %{{.*}}] : {{.*}}, vector<8xf32>
// CHECK: vector.fma
// LIMIT0-LABEL: func.func @prepacked
// LIMIT0-NOT: x16x64xf32>
// LIMIT0: memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// LIMIT0-LABEL: func.func @one_query_tile
func.func @prepacked(%q: tensor<1x2x200x16xf32>, %k: tensor<1x2x300x16xf32>, %v: tensor<1x2x300x16xf32>) -> tensor<1x2x200x16xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x200x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32>) -> tensor<1x2x200x16xf32>
  return %o : tensor<1x2x200x16xf32>
}

// -----

// One Q tile per head (Tq = tile-q): nothing to share, the tile packs its
// own Kt.
// CHECK-LABEL: func.func @one_query_tile
// CHECK-NOT: memref<1x2x5x16x64xf32>
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK: return
func.func @one_query_tile(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x300x16xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x64x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32>) -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// -----

// A dynamic Tk: the same choice at run time (FlashKernel::mayPrepackKeys).
// The buffer has K/V tiles only when the keys fit the limit (and the
// prepack loop none otherwise); each K/V tile then reads its slice, or
// packs into the tile's own Kt, by that flag.
// CHECK-LABEL: func.func @dynamic_keys
// CHECK: %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %c33554432 : index
// CHECK-NEXT: %[[TILES:.*]] = arith.select %[[FITS]], %{{.*}}, %c0 : index
// CHECK-NEXT: %[[KT:.*]] = memref.alloc(%[[TILES]]) {alignment = 64 : i64} : memref<1x2x?x16x64xf32>
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c2, %c1, %[[TILES]])
// CHECK: scf.parallel
// CHECK: %[[OWN:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK: scf.if %[[FITS]] -> (memref<16x64xf32, strided<[64, 1], offset: ?>>) {
// CHECK-NEXT: %[[SLICE:.*]] = memref.subview %[[KT]]
// CHECK-NEXT: scf.yield %[[SLICE]]
// CHECK-NEXT: } else {
// CHECK: vector.store %{{.*}}, %[[OWN]]
// CHECK: %[[CAST:.*]] = memref.cast %[[OWN]] : memref<16x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
// CHECK-NEXT: scf.yield %[[CAST]]
// LIMIT0-LABEL: func.func @dynamic_keys
// LIMIT0-NOT: x16x64xf32>
// LIMIT0: memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// LIMIT0-NOT: x16x64xf32>
// LIMIT0: return
func.func @dynamic_keys(%q: tensor<1x2x200x16xf32>, %k: tensor<1x2x?x16xf32>) -> tensor<1x2x200x16xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x200x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x200x16xf32>
  return %o : tensor<1x2x200x16xf32>
}

// -----

// The budget's edge: Tk 65536 at D 128 is 1024 tiles of 32 KiB, exactly
// 32 MiB: prepacked.
// CHECK-LABEL: func.func @budget_edge
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x1x1024x128x64xf32>
func.func @budget_edge(%q: tensor<1x1x128x128xf32>, %k: tensor<1x1x65536x128xf32>) -> tensor<1x1x128x128xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x1x128x128xf32>, tensor<1x1x65536x128xf32>, tensor<1x1x65536x128xf32>) -> tensor<1x1x128x128xf32>
  return %o : tensor<1x1x128x128xf32>
}

// -----

// One key more is one tile more, past 32 MiB: per-tile packing.
// CHECK-LABEL: func.func @over_budget
// CHECK-NOT: x128x64xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<128x64xf32>
// LIMIT64-LABEL: func.func @over_budget
// LIMIT64: memref.alloc() {alignment = 64 : i64} : memref<1x1x1025x128x64xf32>
func.func @over_budget(%q: tensor<1x1x128x128xf32>, %k: tensor<1x1x65537x128xf32>) -> tensor<1x1x128x128xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x1x128x128xf32>, tensor<1x1x65537x128xf32>, tensor<1x1x65537x128xf32>) -> tensor<1x1x128x128xf32>
  return %o : tensor<1x1x128x128xf32>
}

// -----

// f16 V (converted while packing) and a Dv that is not whole vectors keep
// the Vt copy ([tile-k, Dv padded]); the keys are still prepacked, in f32.
// CHECK-LABEL: func.func @f16_values
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x2x5x16x64xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
func.func @f16_values(%q: tensor<1x2x200x16xf16>, %k: tensor<1x2x300x16xf16>) -> tensor<1x2x200x16xf16> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x200x16xf16>, tensor<1x2x300x16xf16>, tensor<1x2x300x16xf16>) -> tensor<1x2x200x16xf16>
  return %o : tensor<1x2x200x16xf16>
}

// -----

// CHECK-LABEL: func.func @ragged_dv
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
func.func @ragged_dv(%q: tensor<1x2x200x16xf32>, %k: tensor<1x2x300x16xf32>, %v: tensor<1x2x300x12xf32>) -> tensor<1x2x200x12xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x200x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x12xf32>) -> tensor<1x2x200x12xf32>
  return %o : tensor<1x2x200x12xf32>
}
