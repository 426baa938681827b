// attn-shard with attention sinks: the [H] sinks stay whole on every rank
// (no attn.shard), the blocks are merged without them, and each query
// block's rows are merged with their head's sink once, after the last
// step: O · 1/(1 + exp(sink − lse)), 0 for a row whose lse is −inf.
// Values: test/Integration/ring-mpirun.test (mask=sinks cases).
// RUN: attn-opt %s --attn-shard=ranks=2 | FileCheck %s

// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %{{[^:]*}}: tensor<1x2x32x16xf32> {attn.shard = {{.*}}}, %{{[^:]*}}: tensor<1x2x32x16xf32> {attn.shard = {{.*}}}, %{{[^:]*}}: tensor<1x2x32x16xf32> {attn.shard = {{.*}}}, %[[S:[^:]*]]: tensor<2xf32>)
// CHECK-NOT: attn.sdpa_partial
// CHECK: %[[O:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<1x2x32x16xf32
// CHECK: %[[L:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<1x2x32xf32
// CHECK: linalg.generic {{.*}} ins(%[[O]], %[[L]], %[[S]] : tensor<1x2x32x16xf32>, tensor<1x2x32xf32>, tensor<2xf32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.cmpf oeq
// CHECK: return
// CHECK: func.func private @ring__ring_block
// CHECK: attn.sdpa_partial
// CHECK-NOT: sinks(
// CHECK: return
func.func @ring(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>,
                %s: tensor<2xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %v sinks(%s) {attn.ring = #attn.ring<contiguous>}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<2xf32>)
        -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}
