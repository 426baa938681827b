// attn.block_mask on the CPU: one scf.parallel over (b, h, Q block) that
// walks the row's KV blocks in order. A tile is first bounded over the
// mask function (here the scan of the document ids over the tile's rows
// and keys); only where the bounds do not decide is the function evaluated,
// vector-width keys at a time, reduced with or/and. The lists are written
// in place, the slots past each count zeroed.
// RUN: attn-opt %s -convert-attn-to-loops="vector-width=8" | FileCheck %s

// CHECK-LABEL: func.func @block_mask_documents
// CHECK-SAME: %[[DOC:[^:]*]]: tensor<12xi32>
// CHECK: %[[IDS:.*]] = bufferization.to_buffer %[[DOC]] read_only
// CHECK: %[[KN:.*]] = memref.alloc() : memref<1x2x3xi32>
// CHECK: %[[KI:.*]] = memref.alloc() : memref<1x2x3x4xi32>
// CHECK: %[[FN:.*]] = memref.alloc() : memref<1x2x3xi32>
// CHECK: %[[FI:.*]] = memref.alloc() : memref<1x2x3x4xi32>
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[M:.*]]) = (%c0, %c0, %c0) to (%c1, %c2, %c3)
// CHECK: %[[COUNTS:.*]]:2 = scf.for %[[N:.*]] = %c0 to %c4 step %c1 iter_args({{.*}}) -> (index, index)
// The bounds: the min and max of the ids over the tile's rows, then keys.
// CHECK: memref.load %[[IDS]]
// CHECK: memref.load %[[IDS]]
// CHECK: %[[DECIDED:.*]]:2 = scf.if %{{.*}} -> (i1, i1)
// CHECK: } else {
// CHECK: scf.for {{.*}} -> (vector<8xi1>, vector<8xi1>)
// CHECK: scf.for {{.*}} step %c8 {{.*}} -> (vector<8xi1>, vector<8xi1>)
// CHECK: vector.load %[[IDS]]{{.*}} vector<8xi32>
// CHECK: arith.cmpi eq, {{.*}} : vector<8xi32>
// CHECK: vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// CHECK: vector.reduction <and>, %{{.*}} : vector<8xi1> into i1
// CHECK: memref.store %{{.*}}, %[[KI]][%[[B]], %[[H]], %[[M]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[FI]][%[[B]], %[[H]], %[[M]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[KN]][%[[B]], %[[H]], %[[M]]]
// CHECK: scf.for %[[S:.*]] = %[[COUNTS]]#0 to %c4
// CHECK: memref.store %c0_i32, %[[KI]][%[[B]], %[[H]], %[[M]], %[[S]]]
// CHECK: memref.store %{{.*}}, %[[FN]][%[[B]], %[[H]], %[[M]]]
// CHECK: bufferization.to_tensor %[[KN]] restrict writable
func.func @block_mask_documents(%doc: tensor<12xi32>)
    -> (tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>) {
  %kn, %ki, %fn, %fi = attn.block_mask captures(%doc : tensor<12xi32>) {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<12xi32>):
    %di = tensor.extract %d[%i] : tensor<12xi32>
    %dj = tensor.extract %d[%j] : tensor<12xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } {q_len = 12 : i64, kv_len = 12 : i64, block_size = array<i64: 4, 3>}
    : tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>
  return %kn, %ki, %fn, %fi : tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>
}
