// attn.mha with attention sinks (its sinks operand, handed to the sdpa it
// decomposes into) through the reference, cpu and gpu-schedule (emulated)
// pipelines, against a NumPy float64 evaluation of the whole block
// (Inputs/mha_sinks_case.py): projections with biases, GQA, top-left causal,
// a sink larger than every score.
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/mha_sinks_case.py %t
// RUN: for p in reference cpu gpu-schedule; do attn-run %s --pipeline=$p --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/bq.npy --input=%t/bk.npy --input=%t/bv.npy --input=%t/bo.npy --input=%t/sinks.npy --expect=%t/expect.npy --quiet || exit 1; done | FileCheck %s
// CHECK-COUNT-3: result #0 vs {{.*}}expect.npy: {{.*}}, ok
//
// The backward: attn-differentiate decomposes the block and the sdpa's rule
// gives dsinks with the rest (its arithmetic is checked against torch in
// differentiate-sinks.mlir); here the ten gradients (one per argument) of the cpu pipeline
// agree with the reference pipeline's.
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: attn-run %t/grad.mlir --entry=mha_sinks_grad --pipeline=cpu --random-inputs --seed=2 --compare-with=reference | FileCheck %s --check-prefix=GRAD
// GRAD-COUNT-10: vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[4-9]|[1-9][0-9]))}}

func.func @mha_sinks(%x: tensor<2x9x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
                     %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>, %bq: tensor<32xf32>,
                     %bk: tensor<16xf32>, %bv: tensor<16xf32>, %bo: tensor<32xf32>,
                     %sinks: tensor<4xf32>) -> tensor<2x9x32xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv) out_bias(%bo) sinks(%sinks)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>}
      : (tensor<2x9x32xf32>, tensor<2x9x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>,
         tensor<16x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<32xf32>, tensor<4xf32>) -> tensor<2x9x32xf32>
  return %y : tensor<2x9x32xf32>
}
