// convert-attn-to-loops with the wave-2 features (softcap, sliding window,
// ALiBi, key lengths): the same fused loop nest; the window and the key
// lengths bound the K/V tile loop, the softcap and the ALiBi bias are
// applied to the score registers, and no buffer depends on Tq or Tk other
// than the output (and, for static shapes, the keys transposed once per
// call: at most 32 MiB).
// RUN: attn-opt %s -convert-attn-to-loops -split-input-file | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-loops -split-input-file | FileCheck %s --check-prefix=ALLOCS
// RUN: attn-opt %s -convert-attn-to-loops=report-unfused -split-input-file 2>&1 | FileCheck %s --check-prefix=REMARK

// None of these takes the unfused route, dropout (last) included.
// REMARK-NOT: not fused

// Mistral: bottom-right causal with a window of 100 keys to the left. The
// K/V tile loop of Q tile [q0, q0 + rows) runs over the tiles holding keys
// [max(0, q0 + Tk - Tq - 100), min(Tk, q0 + rows - 1 + Tk - Tq + 1)):
// from the first tile with a key in the window to the last one below the
// diagonal.
// CHECK-LABEL: func.func @window_causal
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x2x?x16xf32>, %[[K:[^:]*]]: tensor<1x2x?x16xf32>)
// CHECK-DAG: %[[QB:.*]] = bufferization.to_buffer %[[Q]]
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[K]]
// CHECK-DAG: %[[TQ:.*]] = memref.dim %[[QB]], %c2
// CHECK-DAG: %[[TK:.*]] = memref.dim %[[KB]], %c2
// (The loop that prepacks the keys first.)
// CHECK: scf.parallel
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %[[QT:.*]]) =
// CHECK: %[[Q0:.*]] = arith.muli %[[QT]], %c64
// CHECK: %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]] : index
// Upper bound: one past the diagonal of the tile's last row, in [0, Tk].
// CHECK: %[[LAST:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK: %[[DLAST:.*]] = arith.addi %[[LAST]], %[[OFF]] : index
// CHECK: %[[E0:.*]] = arith.addi %[[DLAST]], %c1 : index
// CHECK: %[[E1:.*]] = arith.minsi %[[E0]], %[[TK]] : index
// CHECK: %[[END:.*]] = arith.maxsi %[[E1]], %c0 : index
// Lower bound: the window's left edge for the tile's first row.
// CHECK: %[[D0:.*]] = arith.addi %[[Q0]], %[[OFF]] : index
// CHECK: %[[F0:.*]] = arith.subi %[[D0]], %c100 : index
// CHECK: %[[F1:.*]] = arith.maxsi %[[F0]], %c0 : index
// CHECK: %[[BEGIN:.*]] = arith.minsi %[[F1]], %[[END]] : index
// CHECK: %[[TEND:.*]] = arith.ceildivsi %[[END]], %c64 : index
// CHECK: %[[TBEGIN:.*]] = arith.divui %[[BEGIN]], %c64 : index
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi slt, %[[BEGIN]], %[[END]] : index
// CHECK: %[[UB:.*]] = arith.select %[[NONEMPTY]], %[[TEND]], %[[TBEGIN]] : index
// CHECK: scf.for %[[KT:.*]] = %[[TBEGIN]] to %[[UB]] step %c1
// CHECK: %[[K0:.*]] = arith.muli %[[KT]], %c64
// CHECK-COUNT-8: vector.fma
// Per-element keep rules only on a tile some row does not see whole: its
// end beyond the first row's limit or its start before the last row's
// window edge.
// CHECK: %[[INSIDE:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[NEED:.*]] = arith.xori %[[INSIDE]], %true : i1
// CHECK: scf.if %[[NEED]] {
// Lane keys against [lo, hi] of the row: both sides of the window.
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.ori %{{.*}}, %{{.*}} : vector<8xi1>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: vector.shuffle
// ALLOCS-LABEL: func.func @window_causal
// The output, and the keys prepacked at run time (tiles only where they
// fit prepack-limit-mib): nothing else sized by Tq or Tk.
// ALLOCS: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x2x?x16xf32>
// ALLOCS: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x2x?x16x64xf32>
// ALLOCS-NOT: memref.alloc(
// ALLOCS-NOT: memref<?x?xf32
// ALLOCS-NOT: memref<{{[0-9]+}}x?xf32
// ALLOCS-LABEL: func.func @key_lengths
func.func @window_causal(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>, window = #attn.window<left = 100>}
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

// Key lengths (i64): L = len[b] clamped to [0, Tk] bounds the tile loop
// and the keys each tile loads (min(64, L - k0)); the bottom-right diagonal
// of the window uses L: d(i) = i + L - Tq. A window with only a right side
// keeps the tile loop's start at 0.
// CHECK-LABEL: func.func @key_lengths
// CHECK-SAME: %[[LEN:[^:]*]]: tensor<2xi64>
// CHECK-DAG: %[[QB:.*]] = bufferization.to_buffer %{{.*}}
// CHECK-DAG: %[[LB:.*]] = bufferization.to_buffer %[[LEN]] read_only : tensor<2xi64> to memref<2xi64
// CHECK-DAG: %[[TQ:.*]] = memref.dim %[[QB]], %c2
// CHECK-DAG: %[[TK:.*]] = memref.dim %{{.*}}, %c2
// CHECK: scf.parallel (%{{.*}}, %[[B:.*]], %{{.*}}, %{{.*}}) =
// CHECK: %[[LENB:.*]] = memref.load %[[LB]][%[[B]]] : memref<2xi64
// CHECK: %[[LI:.*]] = arith.index_cast %[[LENB]] : i64 to index
// CHECK: %[[LMIN:.*]] = arith.minsi %[[LI]], %[[TK]] : index
// CHECK: %[[L:.*]] = arith.maxsi %[[LMIN]], %c0 : index
// CHECK: %[[OFF:.*]] = arith.subi %[[L]], %[[TQ]] : index
// CHECK: %[[D:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[E0:.*]] = arith.addi %[[D]], %c9 : index
// CHECK: %[[E1:.*]] = arith.minsi %[[E0]], %[[L]] : index
// CHECK: %[[END:.*]] = arith.maxsi %[[E1]], %c0 : index
// CHECK: %[[NT:.*]] = arith.ceildivsi %[[END]], %c64 : index
// CHECK: scf.for %[[KT:.*]] = %c0 to %[[NT]] step %c1
// CHECK: %[[K0:.*]] = arith.muli %[[KT]], %c64
// CHECK: %[[REST:.*]] = arith.subi %[[L]], %[[K0]] : index
// CHECK: %[[KROWS:.*]] = arith.minsi %[[REST]], %c64 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[KROWS]] step %c1
func.func @key_lengths(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %len: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %k key_lengths(%len) {window = #attn.window<right = 8>}
      : (tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2xi64>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// Key lengths alone: the tile loop stops at ceil(L / 64).
// CHECK-LABEL: func.func @key_lengths_only
// CHECK: %[[LENB:.*]] = memref.load %{{.*}} : memref<2xi32
// CHECK: %[[LI:.*]] = arith.index_cast %[[LENB]] : i32 to index
// CHECK: %[[LMIN:.*]] = arith.minsi %[[LI]], %c{{[0-9]+}} : index
// CHECK: %[[L:.*]] = arith.maxsi %[[LMIN]], %c0 : index
// CHECK: %[[NT:.*]] = arith.ceildivsi %[[L]], %c64 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[NT]] step %c1
func.func @key_lengths_only(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x300x16xf32>, %len: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
  %o = attn.sdpa %q, %k, %k key_lengths(%len)
      : (tensor<2x4x1x16xf32>, tensor<2x4x300x16xf32>, tensor<2x4x300x16xf32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// softcap 30 and [H] ALiBi slopes, on the score registers right after the
// Q·Kᵀ FMAs and before they are stored: in log2 units, c' = 30·log2(e) =
// 43.28; x/c' (0.0231), math.tanh (attn-expand-math expands it later),
// times c'; then -log2(e)·slope[h]·|i + Tk - Tq - j|.
// CHECK-LABEL: func.func @softcap_alibi
// CHECK-SAME: %[[S:[^:]*]]: tensor<4xf32>
// CHECK-DAG: %[[CAP:.*]] = arith.constant dense<43.2808495> : vector<8xf32>
// CHECK-DAG: %[[INVCAP:.*]] = arith.constant dense<0.0231049061> : vector<8xf32>
// CHECK-DAG: %[[NEGLOG2E:.*]] = arith.constant -1.44269502 : f32
// CHECK-DAG: %[[SB:.*]] = bufferization.to_buffer %[[S]]
// CHECK: scf.parallel (%[[KVH:.*]], %{{.*}}, %[[G:.*]], %{{.*}}) =
// CHECK: %[[H:.*]] = arith.addi %{{.*}}, %[[G]]
// CHECK: %[[SLOPE:.*]] = memref.load %[[SB]][%[[H]]] : memref<4xf32
// CHECK: %[[NEGSLOPE:.*]] = arith.mulf %[[SLOPE]], %[[NEGLOG2E]] : f32
// CHECK: %[[ACC:.*]]:8 = scf.for
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK: %[[X:.*]] = arith.mulf %[[ACC]]#0, %[[INVCAP]] : vector<8xf32>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[X]] : vector<8xf32>
// CHECK-NEXT: %[[CAPPED:.*]] = arith.mulf %[[T]], %[[CAP]] : vector<8xf32>
// CHECK: %[[DIST:.*]] = arith.maxsi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: %[[DISTF:.*]] = arith.sitofp %[[DIST]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[SLOPEV:.*]] = vector.broadcast %[[NEGSLOPE]] : f32 to vector<8xf32>
// CHECK: %[[BIAS:.*]] = arith.mulf %[[SLOPEV]], %[[DISTF]] : vector<8xf32>
// CHECK: %[[SC:.*]] = arith.addf %[[CAPPED]], %[[BIAS]] : vector<8xf32>
// CHECK: vector.store %[[SC]]
// ALLOCS-LABEL: func.func @softcap_alibi
// ALLOCS: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x4x?x16xf32>
// ALLOCS: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x4x?x16x64xf32>
// ALLOCS-NOT: memref.alloc(
// ALLOCS-NOT: memref<?x?xf32
func.func @softcap_alibi(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %s: tensor<4xf32>) -> tensor<2x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %k alibi(%s) {softcap = 30.0 : f32}
      : (tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<4xf32>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// [B,H] slopes are read at [b, h]; a top-left window (no causal) bounds
// both ends of the tile loop with d(i) = i.
// CHECK-LABEL: func.func @window_top_left_alibi_bh
// CHECK: scf.parallel (%[[KVH:.*]], %[[B:.*]], %[[G:.*]], %[[QT:.*]]) =
// CHECK: %[[H:.*]] = arith.addi %{{.*}}, %[[G]]
// CHECK: %[[Q0:.*]] = arith.muli %[[QT]], %c64
// CHECK: memref.load %{{.*}}[%[[B]], %[[H]]] : memref<2x4xf32
// CHECK: %[[F0:.*]] = arith.subi %[[Q0]], %c200 : index
// CHECK: %[[F1:.*]] = arith.maxsi %[[F0]], %c0 : index
// CHECK: arith.divui %{{.*}}, %c64 : index
// CHECK: scf.for
// Static shapes, Tq above tile-q: besides the output the one heap buffer is
// the keys transposed once per call, [B, Hkv, K/V tiles, D, tile-k].
// ALLOCS-LABEL: func.func @window_top_left_alibi_bh
// ALLOCS: memref.alloc() {alignment = 64 : i64} : memref<2x4x512x16xf32>
// ALLOCS-NEXT: memref.alloc() {alignment = 64 : i64} : memref<2x4x8x16x64xf32>
// ALLOCS-NOT: memref.alloc(
func.func @window_top_left_alibi_bh(%q: tensor<2x4x512x16xf32>, %k: tensor<2x4x512x16xf32>, %s: tensor<2x4xf32>) -> tensor<2x4x512x16xf32> {
  %o = attn.sdpa %q, %k, %k alibi(%s) {window = #attn.window<left = 200, right = 50, align = top_left>}
      : (tensor<2x4x512x16xf32>, tensor<2x4x512x16xf32>, tensor<2x4x512x16xf32>, tensor<2x4xf32>) -> tensor<2x4x512x16xf32>
  return %o : tensor<2x4x512x16xf32>
}

// -----

// Dropout in the fused kernel: each probability's row-major flat index
// ((b·H + h)·Tq + q)·Tk + key goes through attn.dropout's generator
// (z = seed + (n + 1)·0x9E3779B97F4A7C15, the splitmix64 finaliser, keep
// when z >> 40 >= ceil(rate·2^24)), lane-wide in i64; kept probabilities
// are scaled by 1/(1 - rate) for P·V, the row sum keeps the undropped ones.
// CHECK-LABEL: func.func @dropout_fused
// ALLOCS-LABEL: func.func @dropout_fused
// CHECK-NOT: attn.sdpa
// CHECK: scf.parallel
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: arith.muli %{{.*}}, %{{.*}} : vector<{{8|16}}xi64>
// CHECK: arith.shrui %{{.*}}, %{{.*}} : vector<{{8|16}}xi64>
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : vector<{{8|16}}xi64>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<{{8|16}}xi1>, vector<{{8|16}}xf32>
func.func @dropout_fused(%q: tensor<1x2x8x16xf32>, %len: tensor<1xi32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q key_lengths(%len) {dropout_rate = 0.1 : f32, softcap = 5.0 : f32}
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1xi32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
