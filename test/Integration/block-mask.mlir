// attn.block_mask runs on every pipeline (the reference route: a tile
// reduction, then the compaction loops) and gives the lists of the mask
// evaluated on the whole index grid (Inputs/block_mask_case.py): a
// captured document-id table, causal, a bound that depends on the head,
// tail tiles in both directions. flex_attention's create_block_mask calls
// this op (test/Python/test_flex.py).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/block_mask_case.py %t
// RUN: attn-run %s --pipeline=reference --input=%t/doc.npy --expect=%t/kn.npy --expect=%t/ki.npy --expect=%t/fn.npy --expect=%t/fi.npy | FileCheck %s
// RUN: attn-run %s --pipeline=cpu --input=%t/doc.npy --expect=%t/kn.npy --expect=%t/ki.npy --expect=%t/fn.npy --expect=%t/fi.npy | FileCheck %s
// RUN: attn-run %s --pipeline=gpu-schedule --input=%t/doc.npy --expect=%t/kn.npy --expect=%t/ki.npy --expect=%t/fn.npy --expect=%t/fi.npy | FileCheck %s
// CHECK: result #0: int32[1,2,4]
// CHECK: result #1: int32[1,2,4,5]
// CHECK: result #2: int32[1,2,4]
// CHECK: result #3: int32[1,2,4,5]
// CHECK-COUNT-4: max_abs_error 0.000000e+00 max_rel_error 0.000000e+00, ok (atol 0, rtol 0)
func.func @documents(%doc: tensor<30xi32>)
    -> (tensor<1x2x4xi32>, tensor<1x2x4x5xi32>, tensor<1x2x4xi32>, tensor<1x2x4x5xi32>) {
  %kn, %ki, %fn, %fi = attn.block_mask captures(%doc : tensor<30xi32>) {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<30xi32>):
    %di = tensor.extract %d[%i] : tensor<30xi32>
    %dj = tensor.extract %d[%j] : tensor<30xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %causal = arith.cmpi sle, %j, %i : index
    %c3 = arith.constant 3 : index
    %c27 = arith.constant 27 : index
    %h3 = arith.muli %h, %c3 : index
    %end = arith.subi %c27, %h3 : index
    %below = arith.cmpi slt, %j, %end : index
    %a = arith.andi %same, %causal : i1
    %keep = arith.andi %a, %below : i1
    attn.yield %keep : i1
  } {q_len = 30 : i64, kv_len = 27 : i64, block_size = array<i64: 8, 6>}
    : tensor<1x2x4xi32>, tensor<1x2x4x5xi32>, tensor<1x2x4xi32>, tensor<1x2x4x5xi32>
  return %kn, %ki, %fn, %fi : tensor<1x2x4xi32>, tensor<1x2x4x5xi32>, tensor<1x2x4xi32>, tensor<1x2x4x5xi32>
}
