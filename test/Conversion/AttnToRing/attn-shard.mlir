// attn-shard: a sequence-sharded sdpa becomes the ring. The signature turns
// into one rank's share, K/V travel in two buffers, each step posts the next
// block's isend/irecv before its compute and waits after it, and every
// (query block, key block) pair calls the ring's one kernel, with the
// causal diagonal shift that follows from the layout (outline.mlir pins the
// kernel's structure).
// RUN: attn-opt %s --attn-shard=ranks=4 -split-input-file | FileCheck %s

// Zigzag (the default for causal): 2P = 8 chunks of 32; rank r holds query
// chunks r and 7 - r and receives key chunks src and 7 - src per step: a
// loop over 4 pairs, query block qi = pair / 2, key block kj = pair % 2,
// shift = (gq - gk)·32 (j <= i + shift), skipped when <= -32 (a later
// chunk).
// CHECK-LABEL: func.func @zigzag
// CHECK-SAME: %{{.*}}: tensor<1x8x64x64xf32> {attn.shard = {dim = 2 : i64, layout = #attn.ring<zigzag>}}
// CHECK-SAME: %{{.*}}: tensor<1x2x64x64xf32> {attn.shard = {dim = 2 : i64, layout = #attn.ring<zigzag>}}
// CHECK-SAME: -> (tensor<1x8x64x64xf32> {attn.shard = {dim = 2 : i64, layout = #attn.ring<zigzag>}})
// CHECK-SAME: attn.ring_ranks = 4 : i64
// CHECK: %[[COMM:.*]] = mpi.comm_world
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[COMM]])
// CHECK: %[[SIZE:.*]] = mpi.comm_size(%[[COMM]])
// CHECK: cf.assert %{{.*}}, "attn-shard: this ring was compiled for P = 4 ranks
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]]
// The running (O, lse) of the rank's 64 rows: a slab per query chunk.
// CHECK-DAG: %[[AO:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x8x32x64xf32>
// CHECK-DAG: %[[AL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x8x32xf32>
// CHECK: %[[KB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x2x64x64xf32>
// CHECK: memref.copy
// CHECK: %[[VB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x2x64x64xf32>
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %c3{{.*}} step
// CHECK: mpi.isend(%{{.*}}, %c0_i32{{.*}}, %[[NEXT:[^,]*]], %[[COMM]])
// CHECK: mpi.isend
// CHECK: mpi.irecv(%{{.*}}, %c0_i32{{.*}}, %[[PREV:[^,]*]], %[[COMM]])
// CHECK: mpi.irecv
// CHECK: %[[SRC:.*]] = arith.remui %{{.*}}, %c4
// CHECK: %[[FIRSTSTEP:.*]] = arith.cmpi eq, %[[STEP]], %c0
// CHECK: scf.for %[[PAIR:[^ ]*]] = %{{.*}} to %c4
// CHECK-DAG: %[[QI:.*]] = arith.divui %[[PAIR]], %c2
// CHECK-DAG: %[[KJ:.*]] = arith.remui %[[PAIR]], %c2
// CHECK-DAG: %[[MK:.*]] = arith.subi %c7{{.*}}, %[[SRC]]
// CHECK-DAG: %[[K0:.*]] = arith.cmpi eq, %[[KJ]], %c0
// CHECK-DAG: %[[GK:.*]] = arith.select %[[K0]], %[[SRC]], %[[MK]]
// CHECK-DAG: %[[MQ:.*]] = arith.subi %c7{{.*}}, %[[R]]
// CHECK-DAG: %[[Q0:.*]] = arith.cmpi eq, %[[QI]], %c0
// CHECK-DAG: %[[GQ:.*]] = arith.select %[[Q0]], %[[R]], %[[MQ]]
// CHECK-DAG: %[[DG:.*]] = arith.subi %[[GQ]], %[[GK]]
// CHECK-DAG: %[[SHIFT:.*]] = arith.muli %[[DG]], %c32
// CHECK-DAG: %[[KOFF:.*]] = arith.muli %[[KJ]], %c32
// CHECK-DAG: %[[NONE:.*]] = arith.cmpi sle, %[[SHIFT]], %c-32
// CHECK: scf.if %[[NONE]] {
// CHECK-NEXT: } else {
// CHECK: %[[FIRST:.*]] = arith.andi %[[FIRSTSTEP]]
// CHECK: call @zigzag__ring_block(%arg0, %[[QI]], %{{.*}}, %{{.*}}, %{{.*}}, %[[KOFF]], %[[SHIFT]], %[[FIRST]], %[[AO]], %[[AL]])
// CHECK: mpi.wait
// CHECK: mpi.wait
// CHECK: mpi.wait
// CHECK: mpi.wait
// The last block, without a transfer: the same pair loop on buffer 1.
// CHECK-NOT: mpi.isend
// CHECK: scf.for
// CHECK: call @zigzag__ring_block(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{.*}}, %{{.*}}, %{{.*}}, %false, %[[AO]], %[[AL]])
// CHECK-NOT: attn.sdpa %
// CHECK: return
// The kernel: a causal sdpa_partial with the run-time diagonal, stored or
// merged into the query block's slabs of the running state.
// CHECK: func.func private @zigzag__ring_block(
// CHECK: attn.sdpa_partial {{.*}} diagonal(%arg6) {causal = #attn.causal<top_left>{{.*}} : (tensor<1x8x32x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>, index)
// CHECK: attn.merge_partial
func.func @zigzag(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                  %v: tensor<1x2x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>)
        -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}

// -----

// Contiguous, not causal, with a key-padding mask: one block per step, no
// shift; the mask stays whole ([B,1,1,Tk]) and each block takes the columns
// of the key block it holds.
// CHECK-LABEL: func.func @contiguous_mask
// CHECK-SAME: %{{.*}}: tensor<2x4x25x32xf32> {attn.shard
// CHECK-SAME: %[[MASK:[^:]*]]: tensor<2x1x1x100xi1>)
// CHECK-SAME: -> (tensor<2x4x25x48xf32> {attn.shard
// CHECK: scf.for
// CHECK: %[[OFF:.*]] = arith.muli %{{.*}}, %c25
// CHECK-NOT: scf.if
// CHECK: call @contiguous_mask__ring_block(%{{.*}}, %[[MASK]], %[[OFF]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: func.func private @contiguous_mask__ring_block(
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x1x1x100xi1>, %[[MOFF:[^:]*]]: index,
// CHECK: tensor.extract_slice %[[M]][0, 0, 0, %[[MOFF]]] [2, 1, 1, 25] [1, 1, 1, 1]
// CHECK: attn.sdpa_partial
// CHECK-NOT: causal
// CHECK: return
func.func @contiguous_mask(%q: tensor<2x4x100x32xf32>, %k: tensor<2x4x100x32xf32>,
                           %v: tensor<2x4x100x48xf32>, %m: tensor<2x1x1x100xi1>)
    -> tensor<2x4x100x48xf32> {
  %o = attn.sdpa %q, %k, %v, %m {attn.ring = #attn.ring<contiguous>}
      : (tensor<2x4x100x32xf32>, tensor<2x4x100x32xf32>, tensor<2x4x100x48xf32>, tensor<2x1x1x100xi1>)
        -> tensor<2x4x100x48xf32>
  return %o : tensor<2x4x100x48xf32>
}

// -----

// Striped, causal: query i·P + r against key j·P + src sees j <= i when
// r >= src (shift 0), j < i otherwise (shift -1); no block is wholly later
// (16 rows each), none is skipped. A [Tq, Tk] f16 mask is sharded by rows
// and its columns taken with stride P. The output is rounded to f16.
// CHECK-LABEL: func.func @striped
// CHECK-SAME: %{{.*}}: tensor<16x64xf16> {attn.shard = {dim = 0 : i64, layout = #attn.ring<striped>}}
// CHECK: scf.for
// CHECK: %[[SRC:.*]] = arith.remui %{{.*}}, %c4
// CHECK: %[[OWN:.*]] = arith.cmpi uge, %{{.*}}, %[[SRC]]
// CHECK: %[[SHIFT:.*]] = arith.select %[[OWN]], %c0{{.*}}, %c-1
// CHECK-NOT: scf.if
// CHECK: call @striped__ring_block(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SHIFT]], %arg3, %[[SRC]],
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: func.func private @striped__ring_block(
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, %{{.*}}] [16, 16] [1, 4]
// CHECK-DAG: attn.sdpa_partial {{.*}} diagonal(%arg6) {causal = #attn.causal<top_left>
func.func @striped(%q: tensor<1x2x64x32xf16>, %k: tensor<1x2x64x32xf16>,
                   %v: tensor<1x2x64x32xf16>, %m: tensor<64x64xf16>) -> tensor<1x2x64x32xf16> {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<bottom_right>, attn.ring = #attn.ring<striped>}
      : (tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<64x64xf16>)
        -> tensor<1x2x64x32xf16>
  return %o : tensor<1x2x64x32xf16>
}

// -----

// An sdpa without attn.ring is left alone.
// CHECK-LABEL: func.func @unsharded
// CHECK-NOT: mpi.
// CHECK: attn.sdpa
func.func @unsharded(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
