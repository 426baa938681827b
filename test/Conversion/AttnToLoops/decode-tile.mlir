// RUN: attn-opt %s -convert-attn-to-loops -split-input-file | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-loops="min-work-items=64" -split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16 tile-k=64" -split-input-file | FileCheck %s --check-prefix=W16
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=16" -split-input-file | FileCheck %s --check-prefix=PF

// Only a decode tile that reads K and V in place issues software
// prefetches (of the other array's rows, into L2: docs/cpu.md); the
// kernels that pack K/V tiles and the projections issue none.
// PF-LABEL: func.func @decode
// PF: memref.prefetch {{.*}} read, locality<2>, data
// PF-LABEL: func.func @short
// PF-NOT: memref.prefetch
// PF-LABEL: func.func @dynamic
// PF-NOT: memref.prefetch
// PF-LABEL: func.func @prefill
// PF-NOT: memref.prefetch
// PF-LABEL: func.func @project16
// PF-NOT: memref.prefetch

// A static Tq below tile-q (decode) groups the G·Tq rows of the query heads
// that share one K/V head into one tile (G = 4, Tq = 1: 4 rows), so each
// K/V tile is loaded once per group, and the parallel loop runs over
// (K/V head, batch, 1, Q tiles = 1).
// Row r of the tile is query r mod Tq of head kvHead·G + r / Tq.
// So few rows (at most a row block: 4 at 8 lanes) read K and V in place:
// scratch is only Qs [4, D], the scores [4, tile-k], a run's per-key sums
// [8 keys, 4 rows x 8 lanes], the accumulator [4, Dv] and the three row
// vectors — no transposed K, no copy of V.
// CHECK-LABEL: func.func @decode
// CHECK: %[[KB:.*]] = bufferization.to_buffer %arg1
// CHECK: %[[VB:.*]] = bufferization.to_buffer %arg2
// CHECK: scf.parallel (%[[KVH:.*]], %[[B:.*]], %{{.*}}, %{{.*}}) = (%c0, %c0, %c0, %c0) to (%c8, %c1, %c1, %c1)
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<4x128xf32>
// CHECK-NEXT: %[[SP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x64xf32>
// CHECK-NEXT: %[[SUMS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8x32xf32>
// CHECK-NEXT: %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x128xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// Q rows: head kvHead·4 + r / 1 (= r), query r mod 1 (= 0).
// CHECK: %[[R:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[G4:.*]] = arith.muli %[[KVH]], %c4
// CHECK: %[[HEAD:.*]] = arith.addi %[[G4]], %[[R]]
// CHECK: vector.load %{{.*}}[%[[B]], %[[HEAD]], %c0, %{{.*}}]
// Scores, per run of 8 keys: a loop over the keys in order (slot i is key
// j + i), each key's K row read once, front to back, into 4 row vectors.
// The same key's V row is asked of L2 (one prefetcht1 per 64-byte line: 8
// for 128 floats), so P·V does not start the V stream cold,
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %[[J:.*]] = %c0 to %c64 step %c8 {
// CHECK-NEXT: scf.for %[[SLOT:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT: %[[JS:.*]] = arith.addi %[[J]], %[[SLOT]] : index
// CHECK-NEXT: %[[K0S:.*]] = arith.addi %{{.*}}, %[[JS]] : index
// CHECK-NEXT: %[[KEY:.*]] = arith.minsi %[[K0S]], %{{.*}} : index
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c0], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c16], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c32], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c48], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c64], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c80], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c96], read, locality<2>, data
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %[[KVH]], %[[KEY]], %c112], read, locality<2>, data
// and K's own row 8 KiB ahead (16 keys of 128 floats), clamped to the last
// key, non-temporal (locality 0: prefetchnta; read once, a few steps
// later): the hardware prefetchers follow K, not far enough ahead.
// CHECK-NEXT: %[[KNEXT:.*]] = arith.addi %[[KEY]], %c16 : index
// CHECK-NEXT: %[[KLAST:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT: %[[KAHEAD:.*]] = arith.minsi %[[KNEXT]], %[[KLAST]] : index
// CHECK-NEXT: memref.prefetch %[[KB]][%[[B]], %[[KVH]], %[[KAHEAD]], %c0], read, locality<0>, data
// CHECK-COUNT-7: memref.prefetch %[[KB]][%[[B]], %[[KVH]], %[[KAHEAD]], %c{{[0-9]+}}], read, locality<0>, data
// CHECK-NEXT: scf.for %[[D:.*]] = %c0 to %c128 step %c8 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-NEXT: vector.load %[[KB]][%[[B]], %[[KVH]], %[[KEY]], %[[D]]]
// CHECK-NEXT: vector.load %{{.*}}[%c0, %[[D]]]
// CHECK-NEXT: vector.fma
// CHECK: vector.store %{{.*}}, %[[SUMS]][%[[SLOT]], %c0]
// CHECK-NEXT: vector.store %{{.*}}, %[[SUMS]][%[[SLOT]], %c8]
// Keys 0 and 1 of row 0 folded at lane bit 4 (two shuffles and an add).
// CHECK: %[[S00:.*]] = vector.load %[[SUMS]][%c0, %c0]
// CHECK: %[[S10:.*]] = vector.load %[[SUMS]][%c1, %c0]
// CHECK-NEXT: vector.shuffle %[[S00]], %[[S10]] [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK-NEXT: vector.shuffle %[[S00]], %[[S10]] [4, 5, 6, 7, 12, 13, 14, 15]
// CHECK-NEXT: arith.addf
// The tree leaves key i in lane bitrev(i): one shuffle per row puts the
// run's scores in key order.
// CHECK: %[[F0:.*]] = vector.shuffle %[[T0:.*]], %[[T0]] [0, 4, 2, 6, 1, 5, 3, 7]
// CHECK-NEXT: vector.store %[[F0]], %[[SP]][%c0, %[[J]]]
// P·V at 8 lanes and Dv 128 (16 vectors a row, more than the 8
// accumulators): acc = α·acc in its stack scratch, then over the tile's
// keys only, in order, each key's V row read in place once, whole, into
// the acc rows of all 4 rows (load, fma, store). Each key j first asks L2
// for the K row of the next tile's key j (k0 + 64 + j, clamped to the
// last key): the hardware prefetchers follow V here.
// CHECK: scf.for %[[AC:.*]] = %c0 to %c128 step %c8 {
// CHECK-NEXT: vector.load %[[ACC]][%c0, %[[AC]]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: vector.store %{{.*}}, %[[ACC]][%c0, %[[AC]]]
// CHECK: scf.for %[[PJ:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[PJ]], %c64 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %{{.*}}, %[[AHEAD]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT: %[[NKEY:.*]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// CHECK-NEXT: memref.prefetch %[[KB]][%[[B]], %[[KVH]], %[[NKEY]], %c0], read, locality<2>, data
// CHECK-COUNT-7: memref.prefetch %[[KB]][%[[B]], %[[KVH]], %[[NKEY]], %c{{[0-9]+}}], read, locality<2>, data
// CHECK-NOT: memref.prefetch
// CHECK-COUNT-4: memref.load %[[SP]][%c{{[0-3]}}, %[[PJ]]]
// CHECK: %[[PKEY:.*]] = arith.addi %{{.*}}, %[[PJ]] : index
// CHECK-NEXT: scf.for %[[PC:.*]] = %c0 to %c128 step %c8 {
// CHECK-NEXT: vector.load %[[VB]][%[[B]], %[[KVH]], %[[PKEY]], %[[PC]]]
// CHECK-NEXT: vector.load %[[ACC]][%c0, %[[PC]]]
// CHECK-NEXT: vector.fma
// CHECK-NEXT: vector.store %{{.*}}, %[[ACC]][%c0, %[[PC]]]
// CHECK-COUNT-3: vector.fma
// CHECK-NOT: iter_args
// CHECK-NOT: memref.alloca
// No key split without min-work-items: no heap scratch but the output.
// CHECK-NOT: memref.alloc(
// CHECK: return
//
// With min-work-items = 64 (8 work items here), the keys of each tile are
// split into at most ceil(Tk / (4 tiles of 64)) runs: a fifth parallel
// dim; each split's (m, l, acc) is stored, then a second parallel loop
// merges them (max of m, 2^(m_s - m) weights) and writes O.
// SPLIT-LABEL: func.func @decode
// Splits = clamp(ceil(64 / 8 items) = 8, 1, ceil(Tk / 256)).
// SPLIT: %[[MOST:.*]] = arith.ceildivsi %{{.*}}, %c256 : index
// SPLIT: %[[MOST1:.*]] = arith.maxsi %[[MOST]], %c1 : index
// SPLIT: %[[S8:.*]] = arith.minsi %[[MOST1]], %c8 : index
// SPLIT: %[[S:.*]] = arith.maxsi %[[S8]], %c1 : index
// SPLIT: %[[ON:.*]] = arith.cmpi sgt, %[[S]], %c1 : index
// SPLIT: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// SPLIT: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xf32>
// SPLIT: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x128xf32>
// SPLIT: scf.parallel ({{.*}}) = (%c0, %c0, %c0, %c0, %c0) to (%c8, %c1, %c1, %c1, %[[S]])
// SPLIT: %[[CHUNK:.*]] = arith.ceildivsi %{{.*}}, %[[S]] : index
// SPLIT: scf.if %[[ON]] {
// SPLIT: } else {
// SPLIT: scf.if %[[ON]] {
// SPLIT-NEXT: scf.parallel ({{.*}}) = (%c0, %c0, %c0, %c0) to (%c8, %c1, %c1, %c1)
// SPLIT: arith.cmpf oeq, %{{.*}}, %cst{{.*}} : f32
// SPLIT: vector.fma
// At 16 lanes a row's Dv (128: 8 vectors) fits the accumulator budget, so
// P·V reads V's rows whole, key by key: two passes over the tile's keys,
// rows 0-1 then rows 2-3, each 2 rows x 8 vectors. The first pass asks L2
// for the next tile's K rows (8 lines each), the second asks nothing.
// W16-LABEL: func.func @decode
// W16: %[[KB:.*]] = bufferization.to_buffer %arg1
// W16: %[[VB:.*]] = bufferization.to_buffer %arg2
// The scores take 4 adjacent keys a step at 16 lanes (4 keys x 4 rows: the
// 16 accumulators of the budget; at 8 lanes, above, one key a step): per
// vector of D, the 4 keys' K vectors, then each query row's vector, loaded
// once, against all 4.
// W16: scf.for %{{.*}} = %c0 to %c16 step %c4 {
// W16: scf.for %{{.*}} = %c0 to %c128 step %c16 iter_args({{.*}}) -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// W16-COUNT-4: vector.load %[[KB]]
// W16-NEXT: vector.load
// W16-COUNT-4: vector.fma
// W16-NEXT: vector.load
// W16-COUNT-4: vector.fma
// W16: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args({{.*}}) -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// W16-COUNT-8: memref.prefetch %[[KB]]
// W16-NOT: memref.prefetch
// W16: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args({{.*}}) -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// W16-NOT: memref.prefetch
// W16: vector.load %[[VB]][%{{.*}}, %{{.*}}, %{{.*}}, %c0]
// W16: vector.load %[[VB]][%{{.*}}, %{{.*}}, %{{.*}}, %c16]
// W16: vector.load %[[VB]][%{{.*}}, %{{.*}}, %{{.*}}, %c112]
func.func @decode(%q: tensor<1x32x1x128xf32>, %k: tensor<1x8x?x128xf32>,
                  %v: tensor<1x8x?x128xf32>) -> tensor<1x32x1x128xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x32x1x128xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32>) -> tensor<1x32x1x128xf32>
  return %o : tensor<1x32x1x128xf32>
}

// -----

// G·Tq = 1·10 rounds up to 12 rows; a dynamic Tq keeps tile-q (64) per head.
// CHECK-LABEL: func.func @short
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<12x16xf32>
// CHECK-LABEL: func.func @dynamic
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
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

// -----

// 16 lanes (AVX-512: 32 registers): 8 rows x 2 vectors of score
// accumulators, K transposed 16 x 16 in registers (4 x 16 shuffles).
// W16-LABEL: func.func @prefill
// W16-COUNT-16: vector.load %{{.*}} : memref<1x2x256x64xf32, {{.*}}>, vector<16xf32>
// W16-COUNT-64: vector.shuffle
// W16: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// W16-COUNT-16: vector.fma
func.func @prefill(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                   %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}

// -----

// Projections at 16 lanes: 12 rows x 2 vectors of accumulators (24 of
// AVX-512's 32 registers), 21 blocks (252 rows) per chunk at most.
// W16-LABEL: func.func @project16
// W16: %[[NB:.*]] = arith.ceildivsi %{{.*}}, %c12
// W16: arith.ceildivsi %[[NB]], %c21
// W16: scf.for {{.*}} iter_args({{.*}}) -> ({{(vector<16xf32>, ){23}vector<16xf32>}})
// W16-COUNT-24: vector.fma
func.func @project16(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %y = attn.project %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Static rows that fit one chunk: each (chunk, panel) item packs its panel
// on its stack ([In, 2 vectors], 64 x 32 here) and no packed copy of W is
// allocated.
// W16-LABEL: func.func @project16_static
// W16-NOT: memref.alloc() {{.*}} : memref<2x64x32xf32>
// W16: scf.parallel (%{{.*}}, %[[P:.*]]) = (%c0, %c0) to (%c1, %c2)
// W16: memref.alloca_scope
// W16: %[[PANEL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>
// W16-COUNT-16: vector.shuffle
// W16: vector.store %{{.*}}, %[[PANEL]]
// W16: vector.load %[[PANEL]]
func.func @project16_static(%x: tensor<100x64xf32>, %w: tensor<64x64xf32>) -> tensor<100x64xf32> {
  %y = attn.project %x, %w : (tensor<100x64xf32>, tensor<64x64xf32>) -> tensor<100x64xf32>
  return %y : tensor<100x64xf32>
}
