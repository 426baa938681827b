// Dynamic result dims are reifiable in terms of the operands' dims.
// RUN: attn-opt %s -resolve-ranked-shaped-type-result-dims -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @sdpa_dims
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x64xf32>, %[[K:.*]]: tensor<?x4x?x64xf32>, %[[V:.*]]: tensor<?x4x?x32xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[Q]], %[[C2]]
// CHECK: return %[[B]], %[[T]]
func.func @sdpa_dims(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x32xf32>) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %o = attn.sdpa %q, %k, %v : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  %b = tensor.dim %o, %c0 : tensor<?x4x?x32xf32>
  %t = tensor.dim %o, %c2 : tensor<?x4x?x32xf32>
  return %b, %t : index, index
}

// CHECK-LABEL: func.func @scores_dims
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x?x64xf32>, %[[K:.*]]: tensor<1x2x?x64xf32>)
// CHECK: %[[TK:.*]] = tensor.dim %[[K]], %{{.*}}
// CHECK: return %[[TK]]
func.func @scores_dims(%q: tensor<1x4x?x64xf32>, %k: tensor<1x2x?x64xf32>) -> index {
  %c3 = arith.constant 3 : index
  %s = attn.scores %q, %k : (tensor<1x4x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x4x?x?xf32>
  %d = tensor.dim %s, %c3 : tensor<1x4x?x?xf32>
  return %d : index
}

// split_heads of a dynamic width: D = W / h.
// CHECK-LABEL: func.func @split_dims
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x?xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[W:.*]] = tensor.dim %[[X]], %[[C2]]
// CHECK: %[[D:.*]] = arith.divsi %[[W]], %[[C8]]
// CHECK: return %[[D]]
func.func @split_dims(%x: tensor<2x?x?xf32>) -> index {
  %c3 = arith.constant 3 : index
  %s = attn.split_heads %x {num_heads = 8 : i64} : (tensor<2x?x?xf32>) -> tensor<2x8x?x?xf32>
  %d = tensor.dim %s, %c3 : tensor<2x8x?x?xf32>
  return %d : index
}

// merge_heads of a dynamic head dim: W = h * D.
// CHECK-LABEL: func.func @merge_dims
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x?x?xf32>)
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[W:.*]] = arith.muli %[[D]], %{{.*}}
// CHECK: return %[[W]]
func.func @merge_dims(%x: tensor<2x8x?x?xf32>) -> index {
  %c2 = arith.constant 2 : index
  %m = attn.merge_heads %x : (tensor<2x8x?x?xf32>) -> tensor<2x?x?xf32>
  %d = tensor.dim %m, %c2 : tensor<2x?x?xf32>
  return %d : index
}

// CHECK-LABEL: func.func @mha_dims
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>,
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: return %[[T]]
func.func @mha_dims(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) -> index {
  %c1 = arith.constant 1 : index
  %o = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %d = tensor.dim %o, %c1 : tensor<?x?x64xf32>
  return %d : index
}
