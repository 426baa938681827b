// attn.gather_pages to one linalg.generic: the row j of sequence b is read
// from block table[b, j / BS] (clamped into [0, NB)), row j mod BS, and
// only where j < len[b] and the cache has a block (else 0, nothing read).
// RUN: attn-opt %s --convert-attn-to-linalg | FileCheck %s

// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[CACHE:.*]]: tensor<64x16x2x64xf32>, %[[TABLE:.*]]: tensor<2x8xi32>, %[[LEN:.*]]: tensor<2xi64>)
// CHECK-DAG: %[[BS:.*]] = tensor.dim %[[CACHE]], %c1
// CHECK-DAG: %[[NB:.*]] = tensor.dim %[[CACHE]], %c0
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-DAG: %[[B:.*]] = linalg.index 0
// CHECK-DAG: %[[H:.*]] = linalg.index 1
// CHECK-DAG: %[[J:.*]] = linalg.index 2
// CHECK-DAG: %[[D:.*]] = linalg.index 3
// CHECK-DAG: %[[HAS:.*]] = arith.cmpi sgt, %[[NB]]
// CHECK-DAG: %[[L:.*]] = tensor.extract %[[LEN]][%[[B]]]
// CHECK-DAG: %[[LI:.*]] = arith.index_cast %[[L]] : i64 to index
// CHECK-DAG: %[[IN:.*]] = arith.cmpi slt, %[[J]], %[[LI]]
// CHECK: %[[USED:.*]] = arith.andi
// CHECK: scf.if %[[USED]] -> (f32)
// CHECK-DAG: %[[BLK:.*]] = arith.divui %[[J]], %[[BS]]
// CHECK-DAG: %[[ROW:.*]] = arith.remui %[[J]], %[[BS]]
// CHECK-DAG: %[[ID:.*]] = tensor.extract %[[TABLE]][%[[B]], %[[BLK]]]
// CHECK-DAG: %[[IDX:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-DAG: %[[LO:.*]] = arith.minsi %[[IDX]]
// CHECK-DAG: %[[PAGE:.*]] = arith.maxsi %{{.*}}, %[[LO]]
// CHECK: %[[X:.*]] = tensor.extract %[[CACHE]][%[[PAGE]], %[[ROW]], %[[H]], %[[D]]]
// CHECK: scf.yield %[[X]]
// CHECK: } else {
// CHECK: arith.constant 0.0
// CHECK: -> tensor<2x2x128x64xf32>
func.func @gather(%kc: tensor<64x16x2x64xf32>, %t: tensor<2x8xi32>, %len: tensor<2xi64>)
    -> tensor<2x2x128x64xf32> {
  %k = attn.gather_pages %kc, %t lengths(%len)
      : (tensor<64x16x2x64xf32>, tensor<2x8xi32>, tensor<2xi64>) -> tensor<2x2x128x64xf32>
  return %k : tensor<2x2x128x64xf32>
}

// The hnd layout reads [block, head, row, d], the block size from dim 2.
// CHECK-LABEL: func @gather_hnd
// CHECK-SAME: (%[[CACHE:.*]]: tensor<10x2x4x8xf32>
// CHECK: %[[BS:.*]] = tensor.dim %[[CACHE]], %c2
// CHECK-DAG: %[[H:.*]] = linalg.index 1
// CHECK-DAG: %[[J:.*]] = linalg.index 2
// CHECK-DAG: %[[D:.*]] = linalg.index 3
// CHECK: %[[ROW:.*]] = arith.remui %[[J]], %[[BS]]
// CHECK: %[[PAGE:.*]] = arith.maxsi
// CHECK: tensor.extract %[[CACHE]][%[[PAGE]], %[[H]], %[[ROW]], %[[D]]]
func.func @gather_hnd(%kc: tensor<10x2x4x8xf32>, %t: tensor<3x2xi32>) -> tensor<3x2x8x8xf32> {
  %k = attn.gather_pages %kc, %t {layout = #attn.kv_layout<hnd>}
      : (tensor<10x2x4x8xf32>, tensor<3x2xi32>) -> tensor<3x2x8x8xf32>
  return %k : tensor<3x2x8x8xf32>
}

// Without lengths every row is read; dynamic dims come from tensor.dim.
// CHECK-LABEL: func @gather_dynamic
// CHECK-NOT: tensor.extract %{{.*}}[%{{[^,]*}}] : tensor<?xi32>
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x4x?x128xf16>
// CHECK: linalg.generic
// CHECK: scf.if
// CHECK: tensor.extract %{{.*}} : tensor<?x?xi32>
// CHECK: tensor.extract %{{.*}} : tensor<?x?x4x128xf16>
func.func @gather_dynamic(%kc: tensor<?x?x4x128xf16>, %t: tensor<?x?xi32>) -> tensor<?x4x?x128xf16> {
  %k = attn.gather_pages %kc, %t : (tensor<?x?x4x128xf16>, tensor<?x?xi32>) -> tensor<?x4x?x128xf16>
  return %k : tensor<?x4x?x128xf16>
}
