// attn-shard emits one block kernel per ring: a private function that runs
// attn.sdpa_partial of one query block against one key block, with the
// causal diagonal shift as an operand (full, diagonal and strictly-lower
// blocks alike), and merges it into those rows of the running (O, lse) in
// place. The step loop and the last step each call it from a loop over the
// block pairs: the ring compiles as one kernel, not steps x blocks x modes.
// The kernel takes the whole local Q, both K/V buffers and the running
// state, and slices them itself: no copy at the call (bufferisation gives
// function arguments identity layouts), no result crosses it (its results
// are its accumulators, dropped after bufferisation), and no pass inlines
// it back.
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s --check-prefix=CALLS
// RUN: attn-opt %s --attn-ring-pipeline="ranks=2 lower-to-llvm=false" | FileCheck %s --check-prefix=BUF
// RUN: attn-opt %s --attn-ring-pipeline=ranks=2 | FileCheck %s --check-prefix=LLVM

// P = 2: 2 query chunks x 2 key chunks per step; 1 step in the loop, then
// the last.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x128x32xf32>
// CHECK: %[[KB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// CHECK: %[[VB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// CHECK: scf.for %[[STEP:[^ ]*]] =
// CHECK: %[[PARITY:.*]] = arith.remui %[[STEP]], %c2
// CHECK: mpi.irecv
// CHECK: %[[KT:.*]] = bufferization.to_tensor %[[KB]] restrict : memref<2x1x4x128x32xf32> to tensor<2x1x4x128x32xf32>
// CHECK: %[[VT:.*]] = bufferization.to_tensor %[[VB]] restrict
// CHECK-NOT: attn.sdpa_partial
// CHECK: scf.for
// CHECK: scf.if
// CHECK: call @ring__ring_block(%[[Q]], %{{.*}}, %[[KT]], %[[VT]], %[[PARITY]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x4x128x32xf32>, index, tensor<2x1x4x128x32xf32>, tensor<2x1x4x128x32xf32>, index, index, index, tensor<1x4x128x32xf32>, tensor<1x4x128xf32>) -> (tensor<1x4x128x32xf32>, tensor<1x4x128xf32>)
// CHECK: mpi.wait
// CHECK: scf.yield
// The last step, without a transfer: the same kernel, buffer 1.
// CHECK-NOT: mpi.isend
// CHECK: %[[KL:.*]] = bufferization.to_tensor %[[KB]] restrict
// CHECK: %[[VL:.*]] = bufferization.to_tensor %[[VB]] restrict
// CHECK-NOT: attn.sdpa_partial
// CHECK: call @ring__ring_block(%[[Q]], %{{.*}}, %[[KL]], %[[VL]], %c1
// CHECK: return
// The kernel slices Q, the K/V block out of buffer `which` and the rows of
// the running state, and writes the merged rows back into their slice.
// CHECK: func.func private @ring__ring_block(%{{.*}}: tensor<1x4x128x32xf32>, %[[QOFF:[^:]*]]: index, %{{.*}}: tensor<2x1x4x128x32xf32>, %{{.*}}: tensor<2x1x4x128x32xf32>, %[[WHICH:[^:]*]]: index, %[[KOFF:[^:]*]]: index, %[[SHIFT:[^:]*]]: index, %[[O:[^:]*]]: tensor<1x4x128x32xf32>, %[[L:[^:]*]]: tensor<1x4x128xf32>) -> (tensor<1x4x128x32xf32>, tensor<1x4x128xf32>)
// CHECK-DAG: %[[QB:.*]] = tensor.extract_slice %arg0[0, 0, %[[QOFF]], 0] [1, 4, 64, 32] [1, 1, 1, 1] : tensor<1x4x128x32xf32> to tensor<1x4x64x32xf32>
// CHECK-DAG: %[[KBL:.*]] = tensor.extract_slice %arg2[%[[WHICH]], 0, 0, %[[KOFF]], 0] [1, 1, 4, 64, 32] [1, 1, 1, 1, 1] : tensor<2x1x4x128x32xf32> to tensor<1x4x64x32xf32>
// CHECK: %[[PO:.*]], %[[PL:.*]] = attn.sdpa_partial %[[QB]], %[[KBL]], %{{.*}} diagonal(%[[SHIFT]]) {causal = #attn.causal<top_left>, scale = {{.*}}}
// CHECK-DAG: %[[RO:.*]] = tensor.extract_slice %[[O]][0, 0, %[[QOFF]], 0] [1, 4, 64, 32]
// CHECK-DAG: %[[RL:.*]] = tensor.extract_slice %[[L]][0, 0, %[[QOFF]]] [1, 4, 64]
// CHECK: %[[MO:.*]], %[[ML:.*]] = attn.merge_partial %[[RO]], %[[RL]], %[[PO]], %[[PL]]
// CHECK: %[[WO:.*]] = linalg.copy ins(%[[MO]] : {{.*}}) outs(%[[RO]] : {{.*}})
// CHECK: tensor.insert_slice %[[WO]] into %[[O]][0, 0, %[[QOFF]], 0]

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
// are and return nothing; nothing is copied.
// BUF-LABEL: func.func @ring(
// BUF-NOT: memref.copy
// BUF: %[[KB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// BUF-NOT: memref.copy
// BUF: call @ring__ring_block(%arg0, %{{.*}}, %[[KB]], %{{.*}}) : (memref<1x4x128x32xf32>, index, memref<2x1x4x128x32xf32>, memref<2x1x4x128x32xf32>, index, index, index, memref<1x4x128x32xf32>, memref<1x4x128xf32>) -> ()
// BUF-NOT: memref.copy
// BUF: func.func private @ring__ring_block(%{{.*}}: memref<1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: memref<2x1x4x128x32xf32>
// BUF-SAME: ) {
// BUF-NOT: memref.copy

// Through the LLVM lowering: still one function, called twice, and no
// buffer-ownership bookkeeping around the calls.
// LLVM: llvm.func @ring(
// LLVM-NOT: dealloc_helper
// LLVM-COUNT-2: llvm.call @ring__ring_block(
// LLVM-NOT: llvm.call @ring__ring_block(
// LLVM-NOT: dealloc_helper
// LLVM: llvm.func @ring__ring_block(
func.func @ring(%q: tensor<1x4x256x32xf32>, %k: tensor<1x4x256x32xf32>,
                %v: tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring = #attn.ring<zigzag>}
      : (tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>)
        -> tensor<1x4x256x32xf32>
  return %o : tensor<1x4x256x32xf32>
}
