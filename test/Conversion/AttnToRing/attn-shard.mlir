// attn-shard: a sequence-sharded sdpa becomes the ring. The signature turns
// into one rank's share, K/V travel in two buffers, each step posts the next
// block's isend/irecv before its compute and waits after it, and the mask
// mode of each block follows the layout. Each block calls its mode's kernel,
// a private function (outline.mlir pins that structure).
// RUN: attn-opt %s --attn-shard=ranks=4 -split-input-file | FileCheck %s

// Zigzag (the default for causal): 2P = 8 chunks of 32; each rank holds
// 2 query chunks and receives 2 key chunks per step: 4 blocks per step,
// each full (earlier key chunk), causal (same chunk) or skipped (later).
// CHECK-LABEL: func.func @zigzag
// CHECK-SAME: %{{.*}}: tensor<1x8x64x64xf32> {attn.shard = {dim = 2 : i64, layout = #attn.ring<zigzag>}}
// CHECK-SAME: %{{.*}}: tensor<1x2x64x64xf32> {attn.shard = {dim = 2 : i64, layout = #attn.ring<zigzag>}}
// CHECK-SAME: -> (tensor<1x8x64x64xf32> {attn.shard = {dim = 2 : i64, layout = #attn.ring<zigzag>}})
// CHECK-SAME: attn.ring_ranks = 4 : i64
// CHECK: %[[COMM:.*]] = mpi.comm_world
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[COMM]])
// CHECK: %[[SIZE:.*]] = mpi.comm_size(%[[COMM]])
// CHECK: cf.assert %{{.*}}, "attn-shard: this ring was compiled for P = 4 ranks
// CHECK: %[[KB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x2x64x64xf32>
// CHECK: linalg.copy
// CHECK: %[[VB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x2x64x64xf32>
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %c3{{.*}} step
// CHECK: mpi.isend(%{{.*}}, %c0_i32{{.*}}, %[[NEXT:[^,]*]], %[[COMM]])
// CHECK: mpi.isend
// CHECK: mpi.irecv(%{{.*}}, %c0_i32{{.*}}, %[[PREV:[^,]*]], %[[COMM]])
// CHECK: mpi.irecv
// CHECK-COUNT-4: call @zigzag__ring_block_causal(
// CHECK: mpi.wait
// CHECK: mpi.wait
// CHECK: mpi.wait
// CHECK: mpi.wait
// CHECK: scf.yield
// The last block, without a transfer.
// CHECK-NOT: mpi.isend
// CHECK-COUNT-4: call @zigzag__ring_merge(
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
// CHECK-NOT: attn.sdpa %
// CHECK: return
// The kernels: a causal one for the same chunk, a full one for an earlier.
// CHECK-DAG: func.func private @zigzag__ring_block_causal(
// CHECK-DAG: attn.sdpa_partial {{.*}}causal = #attn.causal<top_left>{{.*}} : (tensor<1x8x32x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>)
// CHECK-DAG: func.func private @zigzag__ring_block_full(
// CHECK-DAG: attn.sdpa_partial %{{[^{]*}} {scale = 1.250000e-01 : f32} : (tensor<1x8x32x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>)
// CHECK-DAG: func.func private @zigzag__ring_merge(
func.func @zigzag(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                  %v: tensor<1x2x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>)
        -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}

// -----

// Contiguous, not causal, with a key-padding mask: one block per step; the
// mask stays whole ([B,1,1,Tk]) and each block takes the columns of the
// key block it holds.
// CHECK-LABEL: func.func @contiguous_mask
// CHECK-SAME: %{{.*}}: tensor<2x4x25x32xf32> {attn.shard
// CHECK-SAME: %[[MASK:[^:]*]]: tensor<2x1x1x100xi1>)
// CHECK-SAME: -> (tensor<2x4x25x48xf32> {attn.shard
// CHECK: scf.for
// CHECK: %[[OFF:.*]] = arith.muli %{{.*}}, %c25
// CHECK: call @contiguous_mask__ring_block_full(%{{.*}}, %[[MASK]], %[[OFF]])
// CHECK: call @contiguous_mask__ring_merge(
// CHECK: func.func private @contiguous_mask__ring_block_full(
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x1x1x100xi1>, %[[MOFF:[^:]*]]: index)
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

// Striped, causal: a block owned by a rank r' <= r is causal (j <= i); a
// later rank's is strictly lower (j < i): keys [0, n-1) with the
// bottom-right diagonal i - 1. A [Tq, Tk] f16 mask is sharded by rows and
// its columns taken with stride P. The output is rounded to f16.
// CHECK-LABEL: func.func @striped
// CHECK-SAME: %{{.*}}: tensor<16x64xf16> {attn.shard = {dim = 0 : i64, layout = #attn.ring<striped>}}
// CHECK: scf.for
// CHECK: %[[OWN:.*]] = arith.cmpi uge
// CHECK: scf.if %[[OWN]]
// CHECK: call @striped__ring_block_causal(
// CHECK: } else {
// CHECK: call @striped__ring_block_lower(
// CHECK: call @striped__ring_merge(
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-DAG: func.func private @striped__ring_block_causal(
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, %{{.*}}] [16, 16] [1, 4]
// CHECK-DAG: attn.sdpa_partial {{.*}}causal = #attn.causal<top_left>
// CHECK-DAG: func.func private @striped__ring_block_lower(
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, %{{.*}}] [16, 15] [1, 4]
// CHECK-DAG: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0, %{{.*}}, 0] [1, 1, 2, 15, 32] [1, 1, 1, 1, 1]
// CHECK-DAG: attn.sdpa_partial {{.*}}causal = #attn.causal<bottom_right>
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
