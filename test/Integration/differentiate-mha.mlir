// attn-differentiate on a causal GQA attention block with biases: the
// gradient function @block_grad (x used as query and key/value input, so
// its adjoint sums three projections' contributions) through the
// reference and cpu pipelines, against torch.autograd of the plain
// formula in float64 (Inputs/differentiate_mha_case.py).
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/differentiate_mha_case.py %t
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: for p in "reference" "cpu" "cpu --vector-width=4 --tile-q=4 --tile-k=8"; do \
// RUN:   attn-run %t/grad.mlir --entry=block_grad --pipeline=$p --quiet \
// RUN:     --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy \
// RUN:     --input=%t/bq.npy --input=%t/bk.npy --input=%t/bv.npy --input=%t/bo.npy --input=%t/dy.npy \
// RUN:     --expect=%t/dx.npy --expect=%t/dwq.npy --expect=%t/dwk.npy --expect=%t/dwv.npy \
// RUN:     --expect=%t/dwo.npy --expect=%t/dbq.npy --expect=%t/dbk.npy --expect=%t/dbv.npy \
// RUN:     --expect=%t/dbo.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-27: result #{{[0-8]}} vs {{.*}}: {{.*}}, ok

func.func @block(%x: tensor<2x9x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
                 %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>, %bq: tensor<32xf32>,
                 %bk: tensor<16xf32>, %bv: tensor<16xf32>, %bo: tensor<32xf32>)
    -> tensor<2x9x32xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv) out_bias(%bo)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>}
      : (tensor<2x9x32xf32>, tensor<2x9x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>,
         tensor<16x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<32xf32>)
        -> tensor<2x9x32xf32>
  return %y : tensor<2x9x32xf32>
}
