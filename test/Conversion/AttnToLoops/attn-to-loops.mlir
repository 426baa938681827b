// convert-attn-to-loops: one fused FlashAttention-2 loop nest per f32 sdpa.
// RUN: attn-opt %s -convert-attn-to-loops -split-input-file | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-loops="tile-q=32 tile-k=32" -split-input-file | FileCheck %s --check-prefix=TILES

// Causal GQA with dynamic B, Tq, Tk.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x64xf32>, %[[K:.*]]: tensor<?x2x?x64xf32>, %[[V:.*]]: tensor<?x2x?x64xf32>)
// scale·log2(e) = 0.125·1.4427 is folded into Q.
// CHECK: %[[QSCALE:.*]] = arith.constant dense<0.180336878> : vector<8xf32>
// Inputs are read in place; the only heap buffer is the [B,H,Tq,Dv] output.
// CHECK-DAG: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x4x?x64xf32>
// Parallel over (K/V head, batch, query head of the group, Q tile): the
// group's query heads run back to back, every thread sees every batch row.
// CHECK: %[[NQT:.*]] = arith.ceildivsi %{{.*}}, %c64
// CHECK: scf.parallel (%[[KVH:.*]], %[[B:.*]], %[[G:.*]], %[[QT:.*]]) = (%c0, %c0, %c0, %c0) to (%c2, %{{.*}}, %c2, %[[NQT]])
// CHECK: memref.alloca_scope
// CHECK: %[[H2:.*]] = arith.muli %[[KVH]], %c2
// CHECK: %[[H:.*]] = arith.addi %[[H2]], %[[G]]
// Per-tile scratch only, on cache lines: fixed tile sizes, never Tq x Tk
// (Qs, Kt, S/P, acc; V is read in place).
// CHECK-COUNT-4: memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK-COUNT-3: memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK: arith.mulf %{{.*}}, %[[QSCALE]] : vector<8xf32>
// Causal: only K tiles below min(Tk, q0 + rows) are visited.
// CHECK: %[[KEND:.*]] = arith.maxsi %[[LIMIT:.*]], %c0 : index
// CHECK: %[[NKT:.*]] = arith.ceildivsi %[[KEND]], %c64
// CHECK: scf.for %{{.*}} = %c0 to %[[NKT]] step %c1
// GQA: K and V are read in place from K/V head KVH (no copy of K/V). K is
// transposed 8 x 8 in registers into Kt: 8 row loads, 3 x 8 shuffles.
// CHECK-COUNT-8: vector.load %[[KB]][%[[B]], %[[KVH]], %{{.*}}, %{{.*}}] : {{.*}}, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// S = Q·Kᵀ: 4 rows x 2 vectors of FMAs carried in registers over d.
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c4
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c16
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-8: vector.fma
// Masking only for tiles that cross the diagonal or end past Tk.
// CHECK: scf.if
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// Online softmax, 8 rows at a time with their (m, l, α) in vectors (lane
// r: row i0 + r): per row a max vector (one compare-select per vector of
// scores); the 8 rows' vectors folded into one by a shuffle tree whose
// last shuffle puts the rows in order; m' = max(m, it) for 8 rows at once.
// CHECK: scf.for %[[I0:.*]] = %c0 to %c64 step %c8 {
// CHECK: arith.cmpf ogt, {{.*}} : vector<8xf32>
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: %[[MOLD:.*]] = vector.load %[[MROW:.*]][%[[I0]]] : memref<64xf32>, vector<8xf32>
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK: %[[MAXES:.*]] = vector.shuffle %[[T:.*]], %[[T]] [0, 4, 2, 6, 1, 5, 3, 7]
// CHECK-NEXT: %[[MNEW:.*]] = arith.maximumf %[[MOLD]], %[[MAXES]] : vector<8xf32>
// Row r subtracts lane r of the safe max (0 while the row saw only -inf).
// CHECK: %[[MSAFE:.*]] = arith.select {{.*}}, %[[MNEW]] : vector<8xi1>, vector<8xf32>
// CHECK: vector.extract %[[MSAFE]][0] : f32 from vector<8xf32>
// CHECK: math.exp2 {{.*}} : vector<8xf32>
// CHECK: vector.extract %[[MSAFE]][7] : f32 from vector<8xf32>
// The sums by the same tree, one vector exp2 for the 8 α, l = α·l + Σ P.
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: %[[SUMS:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 4, 2, 6, 1, 5, 3, 7]
// CHECK: %[[ALPHA:.*]] = math.exp2 %{{.*}} : vector<8xf32>
// CHECK-NEXT: %[[LOLD:.*]] = vector.load %[[LROW:.*]][%[[I0]]]
// CHECK: %[[LA:.*]] = arith.mulf %[[LOLD]], %[[ALPHA]]
// CHECK: %[[LNEW:.*]] = arith.addf %[[LA]], %[[SUMS]]
// CHECK: vector.store %[[LNEW]], %[[LROW]][%[[I0]]]
// CHECK: vector.store %[[MNEW]], %[[MROW]][%[[I0]]]
// CHECK: vector.store %[[ALPHA]], %{{.*}}[%[[I0]]]
// acc = α·acc + P·V, over the tile's keys only (kRows), V's rows read where
// they are (f32, whole vectors: no Vt copy).
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: scf.for %[[PJ:.*]] = %c0 to %[[KROWS:.*]] step %c1 iter_args(
// CHECK: %[[VKEY:.*]] = arith.addi %{{.*}}, %[[PJ]] : index
// CHECK: vector.load %[[VB]][%[[B]], %[[KVH]], %[[VKEY]], %{{.*}}] : {{.*}}, vector<8xf32>
// CHECK: vector.fma
// One division per row at the end; rows that saw no key give 0.
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<?x4x?x64xf32>, vector<8xf32>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// TILES-LABEL: func.func @causal_gqa
// TILES: arith.ceildivsi %{{.*}}, %c32
// TILES-COUNT-4: memref.alloca() {alignment = 64 : i64} : memref<32x{{32|64}}xf32>
func.func @causal_gqa(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// -----

// Without a causal mask every K tile is visited: the bound is Tk itself.
// CHECK-LABEL: func.func @not_causal
// CHECK-SAME: (%{{[^:]*}}: tensor<1x2x?x16xf32>, %[[K:[^:]*]]: tensor<1x2x?x16xf32>)
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]]
// CHECK: %[[TK:.*]] = memref.dim %[[KB]], %c2
// (First the loop that prepacks the keys, then the Q tiles'.)
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: %[[NKT:.*]] = arith.ceildivsi %[[TK]], %c64
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %[[NKT]] step %c1
func.func @not_causal(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

// bottom_right: the limit is shifted by Tk - Tq.
// CHECK-LABEL: func.func @bottom_right
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x2x?x16xf32>, %[[K:[^:]*]]: tensor<1x2x?x16xf32>)
// CHECK-DAG: %[[QB:.*]] = bufferization.to_buffer %[[Q]]
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[K]]
// CHECK-DAG: %[[TQ:.*]] = memref.dim %[[QB]], %c2
// CHECK-DAG: %[[TK:.*]] = memref.dim %[[KB]], %c2
// CHECK: %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]] : index
// CHECK: arith.addi %{{.*}}, %[[OFF]]
func.func @bottom_right(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

// An i1 keep mask broadcast over heads is read at [b, 0, i, j] per element.
// CHECK-LABEL: func.func @keep_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x1x?x?xi1>
// CHECK: %[[MB:.*]] = bufferization.to_buffer %[[M]]
// CHECK: %[[KEEP:.*]] = memref.load %[[MB]][%{{.*}}, %c0, %{{.*}}, %{{.*}}] : memref<2x1x?x?xi1,
// CHECK: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32
func.func @keep_mask(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %m: tensor<2x1x?x?xi1>) -> tensor<2x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %k, %m : (tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x1x?x?xi1>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// Left alone for the reference lowering: a dynamic head dim. (Dropout is
// fused: features.mlir.)
// CHECK-LABEL: func.func @left_alone
// CHECK: attn.sdpa {{.*}} -> tensor<1x2x8x?xf32>
// CHECK-NOT: scf.parallel
func.func @left_alone(%d: tensor<1x2x8x?xf32>) -> tensor<1x2x8x?xf32> {
  %2 = attn.sdpa %d, %d, %d {scale = 0.5 : f32} : (tensor<1x2x8x?xf32>, tensor<1x2x8x?xf32>, tensor<1x2x8x?xf32>) -> tensor<1x2x8x?xf32>
  return %2 : tensor<1x2x8x?xf32>
}

// -----

// f16 and bf16: converted to f32 as the tiles are packed (vector loads of
// the narrow type, then arith.extf), the output rounded once (arith.truncf);
// the scratch and the arithmetic are f32.
// CHECK-LABEL: func.func @half_and_bfloat
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x2x8x16xf16>
// CHECK: scf.parallel
// CHECK: vector.load %{{.*}} : memref<1x2x8x16xf16, {{.*}}>, vector<8xf16>
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store %{{.*}} : memref<1x2x8x16xf16>, vector<8xf16>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x2x8x16xbf16>
// CHECK: scf.parallel
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK-NOT: attn.sdpa
func.func @half_and_bfloat(%h: tensor<1x2x8x16xf16>, %b: tensor<1x2x8x16xbf16>)
    -> (tensor<1x2x8x16xf16>, tensor<1x2x8x16xbf16>) {
  %0 = attn.sdpa %h, %h, %h {causal = #attn.causal<top_left>} : (tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16>
  %1 = attn.sdpa %b, %b, %b : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16>
  return %0, %1 : tensor<1x2x8x16xf16>, tensor<1x2x8x16xbf16>
}

// -----

// attn.project: W (out_in) packed once into panels of 2 vectors of
// outputs, Wp[p][i][0..16) = W[16p + j][i], 8 x 8 blocks transposed in
// registers, panels in parallel (the rows are dynamic: W is packed once for
// all chunks); then, in parallel over (chunk of rows, panel), the chunk's
// blocks of 4 rows in turn, 4 rows x 16 outputs of vector accumulators over
// i starting from the bias; leading dims collapsed and expanded back. The
// blocks are spread evenly over ceil(blocks / 64) chunks (256 rows at most).
// CHECK-LABEL: func.func @project
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x?x64xf32> into tensor<?x64xf32>
// CHECK: %[[WP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x64x16xf32>
// CHECK: scf.parallel (%[[P:.*]]) = (%c0) to (%c2)
// CHECK-COUNT-8: vector.load %{{.*}} : memref<32x64xf32, {{.*}}>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.*}}, %[[WP]][%[[P]], %{{.*}}, %c{{0|8}}]
// CHECK: %[[NB:.*]] = arith.ceildivsi %{{.*}}, %c4
// CHECK: %[[CHUNKS:.*]] = arith.ceildivsi %[[NB]], %c64
// CHECK: %[[NC1:.*]] = arith.maxsi %[[CHUNKS]], %c1
// CHECK: %[[PER:.*]] = arith.ceildivsi %[[NB]], %[[NC1]]
// CHECK: scf.parallel (%[[C:.*]], %{{.*}}) = (%c0, %c0) to (%[[CHUNKS]], %c2)
// CHECK: %[[FIRST:.*]] = arith.muli %[[C]], %[[PER]]
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %[[PER]]
// CHECK: %[[LAST:.*]] = arith.minsi %[[END]], %[[NB]]
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[LAST]] step %c1
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-8: vector.fma
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, %{{.*}}, 32] : tensor<?x32xf32> into tensor<2x?x32xf32>
// A width that is not a multiple of 16 is left for the reference lowering.
// CHECK: attn.project %{{.*}}, %{{.*}} : (tensor<2x?x64xf32>, tensor<12x64xf32>) -> tensor<2x?x12xf32>
// Two dynamic leading dims are not collapsed (MLIR 22's
// expand-strided-metadata crashes on that): rows are delinearised over
// [B, T] and the output is allocated [B, T, Out].
// CHECK-NOT: tensor.collapse_shape %arg4
// CHECK: %[[B:.*]] = memref.dim %{{.*}}, %c0 : memref<?x?x64xf32, {{.*}}>
// CHECK: %[[T:.*]] = memref.dim %{{.*}}, %c1 : memref<?x?x64xf32, {{.*}}>
// CHECK: %[[ROWS:.*]] = arith.muli %[[B]], %[[T]]
// CHECK: memref.alloc(%[[B]], %[[T]]) {alignment = 64 : i64} : memref<?x?x32xf32>
// CHECK: arith.ceildivsi %[[ROWS]], %c4
// CHECK: arith.remui %{{.*}}, %[[T]]
// CHECK: arith.divui %{{.*}}, %[[T]]
// CHECK: vector.fma
// CHECK: bufferization.to_tensor %{{.*}} : memref<?x?x32xf32> to tensor<?x?x32xf32>
// CHECK-NOT: attn.project
func.func @project(%x: tensor<2x?x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>, %w12: tensor<12x64xf32>,
                   %xd: tensor<?x?x64xf32>)
    -> (tensor<2x?x32xf32>, tensor<2x?x12xf32>, tensor<?x?x32xf32>) {
  %0 = attn.project %x, %w, %b : (tensor<2x?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<2x?x32xf32>
  %1 = attn.project %x, %w12 : (tensor<2x?x64xf32>, tensor<12x64xf32>) -> tensor<2x?x12xf32>
  %2 = attn.project %xd, %w : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
  return %0, %1, %2 : tensor<2x?x32xf32>, tensor<2x?x12xf32>, tensor<?x?x32xf32>
}
