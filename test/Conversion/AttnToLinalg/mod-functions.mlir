// attn.score_mod and attn.mask_mod to one elementwise linalg.generic each:
// the positions are linalg.index 0..3, a capture is read with each index
// clamped into its shape, bf16 scores go through f32, the mask function
// selects -inf.
// RUN: attn-opt %s -convert-attn-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @relative_bias
// CHECK-SAME: %[[S:[^:]*]]: tensor<1x2x8x8xbf16>, %[[BIAS:[^:]*]]: tensor<2x15xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<1x2x8x8xbf16>)
// CHECK: ^bb0(%[[X:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: %[[H:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[I:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 3 : index
// CHECK-DAG: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[R:.*]] = arith.addi
// CHECK: tensor.dim %[[BIAS]], %c0
// CHECK: %[[HC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: tensor.dim %[[BIAS]], %c1
// CHECK: %[[RC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.extract %[[BIAS]][%[[HC]], %[[RC]]] : tensor<2x15xf32>
// CHECK: %[[N:.*]] = arith.addf %[[XF]], %[[E]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK: linalg.yield %[[T]] : bf16
func.func @relative_bias(%s: tensor<1x2x8x8xbf16>, %bias: tensor<2x15xf32>) -> tensor<1x2x8x8xbf16> {
  %y = attn.score_mod %s captures(%bias : tensor<2x15xf32>) {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x15xf32>):
    %c7 = arith.constant 7 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c7 : index
    %v = tensor.extract %t[%h, %r] : tensor<2x15xf32>
    %n = arith.addf %x, %v : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xbf16>
  return %y : tensor<1x2x8x8xbf16>
}

// -----

// CHECK-LABEL: func.func @prefix_lm
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[I:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[KEEP:.*]] = arith.ori
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[Y:.*]] = arith.select %[[KEEP]], %[[X]], %[[NINF]] : f32
// CHECK: linalg.yield %[[Y]] : f32
func.func @prefix_lm(%s: tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32> {
  %y = attn.mask_mod %s {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %causal = arith.cmpi ule, %j, %i : index
    %prefix = arith.cmpi ult, %j, %c3 : index
    %keep = arith.ori %causal, %prefix : i1
    attn.yield %keep : i1
  } : tensor<2x4x9x9xf32>
  return %y : tensor<2x4x9x9xf32>
}

// -----

// attn.block_mask: one generic over (b, h, Q block, KV block, row, key)
// reduces the function to any/all kept per tile (a tile's positions past
// q_len / kv_len do not count), then loops over (b, h, Q block) compact the
// partial and full KV blocks into the lists.
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[TILE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @block_mask_documents
// CHECK-SAME: %[[DOC:[^:]*]]: tensor<12xi32>
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<4x3xi1>
// CHECK: %[[ANY0:.*]] = linalg.fill ins(%false : i1) outs(%{{.*}} : tensor<1x2x3x4xi1>)
// CHECK: %[[ALL0:.*]] = linalg.fill ins(%true : i1) outs(%{{.*}} : tensor<1x2x3x4xi1>)
// CHECK: %[[TILES:.*]]:2 = linalg.generic {indexing_maps = [#[[WIN]], #[[TILE]], #[[TILE]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WINDOW]] : tensor<4x3xi1>) outs(%[[ANY0]], %[[ALL0]] : tensor<1x2x3x4xi1>, tensor<1x2x3x4xi1>)
// CHECK: ^bb0(%{{.*}}: i1, %[[ANY:.*]]: i1, %[[ALL:.*]]: i1):
// CHECK-DAG: %[[QB:.*]] = linalg.index 2 : index
// CHECK-DAG: %[[ROW:.*]] = linalg.index 4 : index
// CHECK-DAG: %[[Q:.*]] = arith.addi %{{.*}}, %[[ROW]] : index
// CHECK-DAG: %[[KEY:.*]] = linalg.index 5 : index
// CHECK-DAG: %[[KV:.*]] = arith.addi %{{.*}}, %[[KEY]] : index
// CHECK-DAG: %[[QIN:.*]] = arith.cmpi slt, %[[Q]], %c12
// CHECK-DAG: %[[KVIN:.*]] = arith.cmpi slt, %[[KV]], %c12
// CHECK: %[[INSIDE:.*]] = arith.andi %[[QIN]], %[[KVIN]] : i1
// CHECK: tensor.extract %[[DOC]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq
// CHECK: %[[KEPT:.*]] = arith.andi %[[SAME]], %[[INSIDE]] : i1
// CHECK: %[[ANY1:.*]] = arith.ori %[[ANY]], %[[KEPT]] : i1
// CHECK: %[[OUTSIDE:.*]] = arith.xori %[[INSIDE]], %true
// CHECK: %[[OK:.*]] = arith.ori %[[SAME]], %[[OUTSIDE]] : i1
// CHECK: %[[ALL1:.*]] = arith.andi %[[ALL]], %[[OK]] : i1
// CHECK: linalg.yield %[[ANY1]], %[[ALL1]] : i1, i1
// CHECK: scf.for %[[B:.*]] = %c0 to %c1
// CHECK: scf.for %[[H:.*]] = %c0 to %c2
// CHECK: scf.for %[[M:.*]] = %c0 to %c3
// CHECK: %[[LISTS:.*]]:4 = scf.for %[[N:.*]] = %c0 to %c4 {{.*}} -> (tensor<1x2x3x4xi32>, tensor<1x2x3x4xi32>, i32, i32)
// CHECK: tensor.extract %[[TILES]]#0[%[[B]], %[[H]], %[[M]], %[[N]]]
// CHECK: tensor.extract %[[TILES]]#1[%[[B]], %[[H]], %[[M]], %[[N]]]
// CHECK: scf.if
// CHECK: tensor.insert %{{.*}} into %{{.*}}[%[[B]], %[[H]], %[[M]], %{{.*}}] : tensor<1x2x3x4xi32>
// CHECK: tensor.insert %[[LISTS]]#2 into %{{.*}}[%[[B]], %[[H]], %[[M]]] : tensor<1x2x3xi32>
// CHECK: tensor.insert %[[LISTS]]#3 into %{{.*}}[%[[B]], %[[H]], %[[M]]] : tensor<1x2x3xi32>
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
