// attn.mha with a score function (a per-head relative-position bias from a
// captured table) and a mask function (documents of packed sequences from
// captured ids, causal within each): every pipeline against NumPy's float64
// (Inputs/mha_functions_case.py). attn-decompose gives the functions and
// their captures to the block's attn.sdpa, so the fused kernels take them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mha_functions_case.py %t
// RUN: for p in reference cpu gpu-schedule; do attn-run %s --pipeline=$p --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/bq.npy --input=%t/bk.npy --input=%t/bv.npy --input=%t/bo.npy --input=%t/table.npy --input=%t/doc.npy --expect=%t/expect.npy --quiet || exit 1; done | FileCheck %s
// CHECK-COUNT-3: ok (atol
//
// Its gradient function (a score function: the sdpa's backward goes
// through the primitive chain, test/Transforms/differentiate.mlir); the CPU pipeline
// against the reference route (absolute errors: dbk is 0 in exact
// arithmetic, a row's scores all shift by q·bk, so its relative error is
// rounding noise).
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: attn-run %t/grad.mlir --entry=mha_functions_grad --pipeline=cpu --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/bq.npy --input=%t/bk.npy --input=%t/bv.npy --input=%t/bo.npy --input=%t/table.npy --input=%t/doc.npy --input=%t/expect.npy --compare-with=reference --quiet | FileCheck %s --check-prefix=GRAD
// GRAD-COUNT-9: vs reference: max_abs_error {{(0\.0+e\+00|[0-9]\.[0-9]+e-(0[4-9]|[1-9][0-9]))}}
func.func @mha_functions(%x: tensor<2x11x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
                         %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>, %bq: tensor<32xf32>,
                         %bk: tensor<16xf32>, %bv: tensor<16xf32>, %bo: tensor<32xf32>,
                         %table: tensor<4x21xf32> {attn.no_grad}, %doc: tensor<11xi32> {attn.no_grad})
    -> tensor<2x11x32xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv) out_bias(%bo)
      captures(%table, %doc) {num_heads = 4 : i64, num_kv_heads = 2 : i64} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<4x21xf32>, %d: tensor<11xi32>):
    %c10 = arith.constant 10 : index
    %r = arith.subi %i, %j : index
    %r10 = arith.addi %r, %c10 : index
    %bias = tensor.extract %t[%h, %r10] : tensor<4x21xf32>
    %n = arith.addf %s, %bias : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<4x21xf32>, %d: tensor<11xi32>):
    %di = tensor.extract %d[%i] : tensor<11xi32>
    %dj = tensor.extract %d[%j] : tensor<11xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %same, %causal : i1
    attn.yield %keep : i1
  } : (tensor<2x11x32xf32>, tensor<2x11x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>,
       tensor<16x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<16xf32>, tensor<16xf32>,
       tensor<32xf32>, tensor<4x21xf32>, tensor<11xi32>) -> tensor<2x11x32xf32>
  return %y : tensor<2x11x32xf32>
}
