// convert-attn-to-loops on the partial ops: sdpa_partial takes the fused
// kernel and also stores each row's lse = ln2·m + ln l; merge_partial is one
// parallel loop over the rows (weights per row, vector FMAs over Dv, a
// scalar tail for Dv not a multiple of the width).
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8 tile-k=16" -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @partial
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x37x64xf32>
// CHECK: %[[LSE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x37xf32>
// CHECK: scf.parallel
// CHECK: %[[LN:.*]] = math.log
// CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %cst{{.*}} fastmath<contract>
// CHECK: %[[V:.*]] = arith.addf %[[M]], %[[LN]] fastmath<contract>
// CHECK: memref.store %[[V]], %[[LSE]]
// CHECK: bufferization.to_tensor %[[OUT]]
// CHECK: bufferization.to_tensor %[[LSE]]
func.func @partial(%q: tensor<1x4x37x64xf32>, %k: tensor<1x2x53x64xf32>, %v: tensor<1x2x53x64xf32>)
    -> (tensor<1x4x37x64xf32>, tensor<1x4x37xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x4x37x64xf32>, tensor<1x2x53x64xf32>, tensor<1x2x53x64xf32>)
        -> (tensor<1x4x37x64xf32>, tensor<1x4x37xf32>)
  return %o, %l : tensor<1x4x37x64xf32>, tensor<1x4x37xf32>
}

// -----

// CHECK-LABEL: func.func @merge
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x5x20xf32>
// CHECK: %[[LSE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x5xf32>
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[T:.*]]) =
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %[[LSE]][%[[B]], %[[H]], %[[T]]]
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %c8
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[T]], %[[C]]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: attn.merge_partial
func.func @merge(%o1: tensor<2x3x5x20xf32>, %l1: tensor<2x3x5xf32>,
                 %o2: tensor<2x3x5x20xf32>, %l2: tensor<2x3x5xf32>)
    -> (tensor<2x3x5x20xf32>, tensor<2x3x5xf32>) {
  %o, %l = attn.merge_partial %o1, %l1, %o2, %l2 : tensor<2x3x5x20xf32>, tensor<2x3x5xf32>
  return %o, %l : tensor<2x3x5x20xf32>, tensor<2x3x5xf32>
}
