// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=32 tile-k=16" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=32 tile-k=16" | FileCheck %s --check-prefix=ALLOCS

// The kernel schedule: a forall over (batch·head, Q tile) mapped to blocks;
// workgroup buffers for the transposed Q tile [D, TQ], the K and V tiles
// [TK, D], the transposed accumulator [Dv, TQ] and the running max and sum
// [TQ]; thread-level foralls for the initialisation, the Q tile load, the
// cooperative K/V loads, the per-row update and the final normalisation;
// the K/V loop stops at the causal limit of the Q tile.

// CHECK-LABEL: func.func @causal
// CHECK:       %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x4x?x16xf32>
// CHECK:       scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) {
// CHECK:         arith.constant 4 : index
// CHECK:         memref.alloca() : memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    memref.alloca() : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK:         scf.forall (%{{.*}}) in (32) {
// CHECK:         } {mapping = [#gpu.thread<x>]}
//                The Q tile, transposed, once per block.
// CHECK:         scf.forall (%{{.*}}) in (32) {
// CHECK:           memref.load
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x32xf32, #gpu.address_space<workgroup>>
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

// D = 128 with tile-q 64: tile-k is halved from 64 to 8, then tile-q to 32,
// so that Q, K, V, the accumulator and the row state fit in 48 KiB.
// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=64 tile-k=64" | FileCheck %s --check-prefix=WIDE
// WIDE-LABEL: func.func @wide
// WIDE: memref.alloca() : memref<128x32xf32, #gpu.address_space<workgroup>>
// WIDE-NEXT: memref.alloca() : memref<8x128xf32, #gpu.address_space<workgroup>>
// WIDE-NEXT: memref.alloca() : memref<8x128xf32, #gpu.address_space<workgroup>>
// WIDE-NEXT: memref.alloca() : memref<128x32xf32, #gpu.address_space<workgroup>>
// WIDE: scf.forall (%{{.*}}) in (32)
func.func @wide(%q: tensor<1x1x300x128xf32>, %k: tensor<1x1x300x128xf32>,
                %v: tensor<1x1x300x128xf32>) -> tensor<1x1x300x128xf32> {
  %o = attn.sdpa %q, %k, %v
      : (tensor<1x1x300x128xf32>, tensor<1x1x300x128xf32>, tensor<1x1x300x128xf32>) -> tensor<1x1x300x128xf32>
  return %o : tensor<1x1x300x128xf32>
}

// Softcap, a sliding window, ALiBi and key lengths, through the shared
// core's rules: L = len[b] clamped to [0, Tk]; the K/V tile loop runs from
// the tile of the first row's window edge to the tile of the last row's
// diagonal (both from d(i) = i + L - Tq); K/V rows past L are not read;
// each score is softcapped (tanh from exp2), gets -log2(e)·slope[h]·|i +
// L - Tq - j| and -inf outside the row's interval.
// CHECK-LABEL: func.func @features
// CHECK-SAME: %[[S:[^:]*]]: tensor<4xf32>, %[[LEN:[^:]*]]: tensor<2xi32>
// CHECK-DAG:   %[[SB:.*]] = bufferization.to_buffer %[[S]]
// CHECK-DAG:   %[[LB:.*]] = bufferization.to_buffer %[[LEN]]
// CHECK:       %[[TQ:.*]] = memref.dim %{{.*}}, %c2 :
// CHECK:       %[[TK:.*]] = memref.dim %{{.*}}, %c2_{{[0-9]+}} :
// CHECK:       scf.forall (%[[BH:.*]], %[[QT:.*]]) in
// CHECK:         %[[H:.*]] = arith.remui %[[BH]]
// CHECK:         %[[B:.*]] = arith.divui %[[BH]]
// CHECK:         %[[Q0:.*]] = arith.muli %[[QT]]
// CHECK:         %[[LENB:.*]] = memref.load %[[LB]][%[[B]]] : memref<2xi32>
// CHECK:         %[[LI:.*]] = arith.index_cast %[[LENB]] : i32 to index
// CHECK:         %[[LMIN:.*]] = arith.minsi %[[LI]], %[[TK]] : index
// CHECK:         %[[L:.*]] = arith.maxsi %{{.*}}, %[[LMIN]] : index
// CHECK:         %[[OFF:.*]] = arith.subi %[[L]], %[[TQ]] : index
// CHECK:         %[[SLOPE:.*]] = memref.load %[[SB]][%[[H]]] : memref<4xf32>
// CHECK:         %[[NEGSLOPE:.*]] = arith.mulf %[[SLOPE]], %{{.*}} : f32
// CHECK:         %[[E0:.*]] = arith.minsi %[[L1:.*]], %[[L]] : index
// CHECK:         %[[END:.*]] = arith.maxsi %{{.*}}, %[[E0]] : index
// CHECK:         %[[D0:.*]] = arith.addi %[[Q0]], %[[OFF]] : index
// CHECK:         %[[F0:.*]] = arith.subi %[[D0]], %c100 : index
// CHECK:         %[[F1:.*]] = arith.maxsi %{{.*}}, %[[F0]] : index
// CHECK:         %[[BEGIN:.*]] = arith.minsi %[[F1]], %[[END]] : index
// CHECK:         %[[TEND:.*]] = arith.ceildivsi %[[END]], %{{.*}} : index
// CHECK:         %[[TBEGIN:.*]] = arith.divui %[[BEGIN]], %{{.*}} : index
// CHECK:         %[[NONEMPTY:.*]] = arith.cmpi slt, %[[BEGIN]], %[[END]] : index
// CHECK:         %[[UB:.*]] = arith.select %[[NONEMPTY]], %[[TEND]], %[[TBEGIN]] : index
// CHECK:         scf.for %{{.*}} = %[[TBEGIN]] to %[[UB]] step
// CHECK:           arith.cmpi slt, %{{.*}}, %[[L]] : index
// CHECK:           scf.if
// CHECK:             memref.load
// CHECK:           scf.forall (%{{.*}}) in (32) {
//                    softcap: math.tanh (attn-expand-math expands it in
//                    the GPU pipelines), times c·log2(e)
// CHECK:               %[[TANH:.*]] = math.tanh %{{.*}} : f32
// CHECK:               %[[CAPPED:.*]] = arith.mulf %[[TANH]], %{{.*}} : f32
//                    ALiBi
// CHECK:               %[[DIST:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK:               %[[BIAS:.*]] = arith.mulf %[[NEGSLOPE]], %[[DIST]] : f32
// CHECK:               arith.addf %[[CAPPED]], %[[BIAS]] : f32
//                    the keep rules: j < keyEnd(row) and j >= firstKey(row)
// CHECK:               arith.cmpi slt
// CHECK:               arith.cmpi sle
// CHECK:               arith.andi
// CHECK:               arith.select
// ALLOCS-LABEL: func.func @features
// ALLOCS-COUNT-1: memref.alloc(
// ALLOCS-NOT: memref.alloc(
// ALLOCS-NOT: memref<?x?xf32
func.func @features(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x16xf32>,
                    %s: tensor<4xf32>, %len: tensor<2xi32>) -> tensor<2x4x?x16xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%s) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 100>, softcap = 30.0 : f32}
      : (tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32>, tensor<4xf32>, tensor<2xi32>) -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}
