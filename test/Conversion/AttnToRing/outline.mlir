// attn-shard emits one block kernel per ring: a private function that runs
// attn.sdpa_partial of one query block against one key block, with the
// causal diagonal shift as an operand (full, diagonal and strictly-lower
// blocks alike), and writes the result into the query block's slabs of the
// running (O, lse) buffers, in place: stored on the query block's first
// block, else merged. The step loop and the last step each call it from a
// loop over the block pairs: the ring compiles as one kernel, not steps x
// blocks x modes. The kernel takes the whole local Q, both K/V buffers and
// the running-state buffers, and slices them itself: no copy at the call
// (bufferisation gives function arguments identity layouts), no result
// crosses it, and no pass inlines it back.
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s --check-prefix=CALLS
// RUN: attn-opt %s --attn-ring-pipeline="ranks=2 lower-to-llvm=false" | FileCheck %s --check-prefix=BUF
// RUN: attn-opt %s --attn-ring-pipeline=ranks=2 | FileCheck %s --check-prefix=LLVM

// P = 2: 2 query chunks x 2 key chunks per step; 1 step in the loop, then
// the last. The running state: one [B, H, 64, ...] slab per query chunk.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x128x32xf32>
// CHECK-DAG: %[[AO:.*]] = memref.alloc() {{.*}} : memref<2x1x4x64x32xf32>
// CHECK-DAG: %[[AL:.*]] = memref.alloc() {{.*}} : memref<2x1x4x64xf32>
// CHECK: %[[KB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// CHECK: memref.copy
// CHECK: %[[VB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// CHECK: scf.for %[[STEP:[^ ]*]] =
// CHECK: %[[PARITY:.*]] = arith.remui %[[STEP]], %c2
// CHECK: mpi.irecv
// CHECK: %[[FIRSTSTEP:.*]] = arith.cmpi eq, %[[STEP]], %c0
// CHECK: %[[KT:.*]] = bufferization.to_tensor %[[KB]] restrict : memref<2x1x4x128x32xf32> to tensor<2x1x4x128x32xf32>
// CHECK: %[[VT:.*]] = bufferization.to_tensor %[[VB]] restrict
// CHECK-NOT: attn.sdpa_partial
// CHECK: scf.for %[[PAIR:[^ ]*]] =
// CHECK: %[[KJ:.*]] = arith.remui %[[PAIR]], %c2
// CHECK: scf.if
// CHECK: } else {
// CHECK: %[[K0:.*]] = arith.cmpi eq, %[[KJ]], %c0
// CHECK: %[[FIRST:.*]] = arith.andi %[[FIRSTSTEP]], %[[K0]]
// CHECK: call @ring__ring_block(%[[Q]], %{{.*}}, %[[KT]], %[[VT]], %[[PARITY]], %{{.*}}, %{{.*}}, %[[FIRST]], %[[AO]], %[[AL]]) : (tensor<1x4x128x32xf32>, index, tensor<2x1x4x128x32xf32>, tensor<2x1x4x128x32xf32>, index, index, index, i1, memref<2x1x4x64x32xf32>, memref<2x1x4x64xf32>) -> ()
// CHECK: mpi.wait
// The last step, without a transfer: the same kernel, buffer 1, never a
// first block.
// CHECK-NOT: mpi.isend
// CHECK: %[[KL:.*]] = bufferization.to_tensor %[[KB]] restrict
// CHECK: %[[VL:.*]] = bufferization.to_tensor %[[VB]] restrict
// CHECK-NOT: attn.sdpa_partial
// CHECK: call @ring__ring_block(%[[Q]], %{{.*}}, %[[KL]], %[[VL]], %c1{{.*}}, %{{.*}}, %{{.*}}, %false, %[[AO]], %[[AL]])
// The output: each query chunk's slab rounded into its rows.
// CHECK: %[[S0:.*]] = memref.subview %[[AO]][%c0{{.*}}, 0, 0, 0, 0] [1, 1, 4, 64, 32]
// CHECK: %[[O0:.*]] = bufferization.to_tensor %[[S0]] restrict
// CHECK: linalg.copy ins(%[[O0]]
// CHECK: %[[S1:.*]] = memref.subview %[[AO]][%c1{{.*}}, 0, 0, 0, 0] [1, 1, 4, 64, 32]
// CHECK: %[[O1:.*]] = bufferization.to_tensor %[[S1]] restrict
// CHECK: linalg.copy ins(%[[O1]]
// CHECK: return
// The kernel slices Q and the K/V block out of buffer `which`, and writes
// the block's state into its slabs.
// CHECK: func.func private @ring__ring_block(%{{.*}}: tensor<1x4x128x32xf32>, %[[QI:[^:]*]]: index, %{{.*}}: tensor<2x1x4x128x32xf32>, %{{.*}}: tensor<2x1x4x128x32xf32>, %[[WHICH:[^:]*]]: index, %[[KOFF:[^:]*]]: index, %[[SHIFT:[^:]*]]: index, %[[FIRSTARG:[^:]*]]: i1, %[[ACCO:[^:]*]]: memref<2x1x4x64x32xf32>, %[[ACCL:[^:]*]]: memref<2x1x4x64xf32>) {
// CHECK: %[[QOFF:.*]] = arith.muli %[[QI]], %c64
// CHECK-DAG: %[[QB:.*]] = tensor.extract_slice %arg0[0, 0, %[[QOFF]], 0] [1, 4, 64, 32] [1, 1, 1, 1] : tensor<1x4x128x32xf32> to tensor<1x4x64x32xf32>
// CHECK-DAG: %[[KBL:.*]] = tensor.extract_slice %arg2[%[[WHICH]], 0, 0, %[[KOFF]], 0] [1, 1, 4, 64, 32] [1, 1, 1, 1, 1] : tensor<2x1x4x128x32xf32> to tensor<1x4x64x32xf32>
// CHECK: %[[PO:.*]], %[[PL:.*]] = attn.sdpa_partial %[[QB]], %[[KBL]], %{{.*}} diagonal(%[[SHIFT]]) {causal = #attn.causal<top_left>, scale = {{.*}}}
// CHECK-DAG: %[[SO:.*]] = memref.subview %[[ACCO]][%[[QI]], 0, 0, 0, 0] [1, 1, 4, 64, 32]
// CHECK-DAG: %[[SL:.*]] = memref.subview %[[ACCL]][%[[QI]], 0, 0, 0] [1, 1, 4, 64]
// CHECK: scf.if %[[FIRSTARG]] {
// CHECK-DAG: bufferization.materialize_in_destination %[[PO]] in restrict writable %[[SO]]
// CHECK-DAG: bufferization.materialize_in_destination %[[PL]] in restrict writable %[[SL]]
// CHECK: } else {
// CHECK-DAG: %[[RO:.*]] = bufferization.to_tensor %[[SO]] restrict
// CHECK-DAG: %[[RL:.*]] = bufferization.to_tensor %[[SL]] restrict
// CHECK: %[[MO:.*]], %[[ML:.*]] = attn.merge_partial %[[RO]], %[[RL]], %[[PO]], %[[PL]]
// CHECK-DAG: bufferization.materialize_in_destination %[[MO]] in restrict writable %[[SO]]
// CHECK-DAG: bufferization.materialize_in_destination %[[ML]] in restrict writable %[[SL]]

// Two calls (the loop's step and the last), one sdpa_partial and one
// merge_partial in the module.
// CALLS: func.func @ring(
// CALLS-COUNT-2: call @ring__ring_block(
// CALLS-NOT: call @
// CALLS: return
// CALLS: attn.sdpa_partial
// CALLS-NOT: attn.sdpa_partial
// CALLS: attn.merge_partial
// CALLS-NOT: attn.merge_partial
// CALLS-NOT: attn.sdpa_partial

// Bufferised: the calls take the K/V buffers and the running state as they
// are and return nothing; the slabs are written by memcpy (memref.copy of
// contiguous views); no strided copy, no clone.
// BUF-LABEL: func.func @ring(
// BUF: %[[KB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// BUF: call @ring__ring_block(%arg0, %{{.*}}, %[[KB]], %{{.*}}) : (memref<1x4x128x32xf32>, index, memref<2x1x4x128x32xf32>, memref<2x1x4x128x32xf32>, index, index, index, i1, memref<2x1x4x64x32xf32>, memref<2x1x4x64xf32>) -> ()
// BUF: func.func private @ring__ring_block(%{{.*}}: memref<1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: memref<2x1x4x128x32xf32>
// BUF-SAME: ) {
// BUF-NOT: bufferization.clone
// BUF: memref.copy %{{.*}}, %{{.*}} : memref<1x4x64x32xf32> to memref<1x4x64x32xf32, strided<[8192, 2048, 32, 1], offset: ?>>
// BUF-NOT: bufferization.clone

// Through the LLVM lowering: still one function, called twice, no
// buffer-ownership bookkeeping around the calls, and the slab writes are
// memcpy intrinsics, not calls of the memrefCopy runtime.
// LLVM: llvm.func @ring(
// LLVM-NOT: dealloc_helper
// LLVM-COUNT-2: llvm.call @ring__ring_block(
// LLVM-NOT: llvm.call @ring__ring_block(
// LLVM-NOT: dealloc_helper
// LLVM: llvm.func @ring__ring_block(
// LLVM-NOT: memrefCopy
// LLVM: "llvm.intr.memcpy"
// LLVM-NOT: memrefCopy
func.func @ring(%q: tensor<1x4x256x32xf32>, %k: tensor<1x4x256x32xf32>,
                %v: tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring = #attn.ring<zigzag>}
      : (tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>)
        -> tensor<1x4x256x32xf32>
  return %o : tensor<1x4x256x32xf32>
}
