// attn-shard emits each distinct block kernel once: a private function per
// block mode (here, causal zigzag: full and causal; a later chunk is
// skipped, no kernel) and one for the merge, called from the step loop and
// the last step. The ring compiles in proportion to its block modes, not to
// steps x blocks. Each kernel takes the whole local Q and both K/V buffers
// plus the offsets of its block, and slices them itself: no copy at the
// call (bufferisation gives function arguments identity layouts), and no
// pass inlines the kernels back.
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s --check-prefix=CALLS
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s --check-prefix=PARTIALS
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s --check-prefix=MERGES
// RUN: attn-opt %s --attn-ring-pipeline="ranks=2 lower-to-llvm=false" | FileCheck %s --check-prefix=BUF
// RUN: attn-opt %s --attn-ring-pipeline=ranks=2 | FileCheck %s --check-prefix=LLVM

// P = 2: 2 query chunks x 2 key chunks per step; 1 step in the loop, then
// the last; each block calls the full or the causal kernel (or neither).
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
// CHECK: scf.if
// CHECK: call @ring__ring_block_full(%[[Q]], %{{.*}}, %[[KT]], %[[VT]], %[[PARITY]], %{{.*}}) : (tensor<1x4x128x32xf32>, index, tensor<2x1x4x128x32xf32>, tensor<2x1x4x128x32xf32>, index, index) -> (tensor<1x4x64x32xf32>, tensor<1x4x64xf32>)
// CHECK: call @ring__ring_block_causal(%[[Q]], %{{.*}}, %[[KT]], %[[VT]], %[[PARITY]], %{{.*}})
// CHECK: call @ring__ring_merge(
// CHECK-COUNT-3: call @ring__ring_block_causal(
// CHECK-NOT: attn.sdpa_partial
// CHECK: mpi.wait
// CHECK: scf.yield
// The last step, without a transfer: the same kernels, buffer 1.
// CHECK-NOT: mpi.isend
// CHECK: %[[KL:.*]] = bufferization.to_tensor %[[KB]] restrict
// CHECK: %[[VL:.*]] = bufferization.to_tensor %[[VB]] restrict
// CHECK-NOT: attn.sdpa_partial
// CHECK: call @ring__ring_block_full(%[[Q]], %{{.*}}, %[[KL]], %[[VL]], %c1
// CHECK-COUNT-4: call @ring__ring_block_causal(
// CHECK-NOT: attn.sdpa_partial
// CHECK: return
// One kernel per mode: it slices Q, and the K/V block out of buffer
// `which`, as the inline code did.
// CHECK-DAG: func.func private @ring__ring_block_full(%{{.*}}: tensor<1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: tensor<2x1x4x128x32xf32>, %{{.*}}: tensor<2x1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: index) -> (tensor<1x4x64x32xf32>, tensor<1x4x64xf32>)
// CHECK-DAG: func.func private @ring__ring_block_causal(%{{.*}}: tensor<1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: tensor<2x1x4x128x32xf32>, %{{.*}}: tensor<2x1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: index) -> (tensor<1x4x64x32xf32>, tensor<1x4x64xf32>)
// CHECK-DAG: func.func private @ring__ring_merge(
// CHECK-DAG: tensor.extract_slice %arg0[0, 0, %arg1, 0] [1, 4, 64, 32] [1, 1, 1, 1] : tensor<1x4x128x32xf32> to tensor<1x4x64x32xf32>
// CHECK-DAG: tensor.extract_slice %arg2[%arg4, 0, 0, %arg5, 0] [1, 1, 4, 64, 32] [1, 1, 1, 1, 1] : tensor<2x1x4x128x32xf32> to tensor<1x4x64x32xf32>
// CHECK-DAG: attn.sdpa_partial %{{[^{]*}} {scale = {{[^}]*}}} :
// CHECK-DAG: attn.sdpa_partial %{{.*}} {causal = #attn.causal<top_left>, scale = {{.*}}}
// CHECK-DAG: attn.merge_partial

// 16 kernel calls (4 blocks x 2 modes x 2 steps) and 8 merges; exactly two
// sdpa_partial in the module (one per mode) and one merge_partial.
// CALLS: func.func @ring(
// CALLS-COUNT-16: call @ring__ring_block_{{(full|causal)}}(
// CALLS-NOT: call @ring__ring_block_
// CALLS: return
// MERGES: func.func @ring(
// MERGES-COUNT-8: call @ring__ring_merge(
// MERGES-NOT: call @ring__ring_merge(
// MERGES: return
// MERGES-COUNT-1: attn.merge_partial
// MERGES-NOT: attn.merge_partial
// PARTIALS-COUNT-2: attn.sdpa_partial
// PARTIALS-NOT: attn.sdpa_partial

// Bufferised: the calls take the K/V buffers as they are, nothing is copied.
// BUF-LABEL: func.func @ring(
// BUF-NOT: memref.copy
// BUF: %[[KB:.*]] = memref.alloc() {{.*}} : memref<2x1x4x128x32xf32>
// BUF-NOT: memref.copy
// BUF: call @ring__ring_block_{{(full|causal)}}(%arg0, %{{.*}}, %[[KB]], %{{.*}}) : (memref<1x4x128x32xf32>, index, memref<2x1x4x128x32xf32>, memref<2x1x4x128x32xf32>, index, index)
// BUF-NOT: memref.copy
// BUF: func.func private @ring__ring_block_{{(full|causal)}}(%{{.*}}: memref<1x4x128x32xf32>, %{{.*}}: index, %{{.*}}: memref<2x1x4x128x32xf32>
// BUF-NOT: memref.copy

// Through the LLVM lowering: still one function per kernel, called.
// LLVM-DAG: llvm.func @ring__ring_block_full(
// LLVM-DAG: llvm.func @ring__ring_block_causal(
// LLVM-DAG: llvm.func @ring__ring_merge(
// LLVM-DAG: llvm.call @ring__ring_block_full(
// LLVM-DAG: llvm.call @ring__ring_block_causal(
// LLVM-DAG: llvm.call @ring__ring_merge(
func.func @ring(%q: tensor<1x4x256x32xf32>, %k: tensor<1x4x256x32xf32>,
                %v: tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring = #attn.ring<zigzag>}
      : (tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>)
        -> tensor<1x4x256x32xf32>
  return %o : tensor<1x4x256x32xf32>
}
