// attn.mha with a run-time dropout seed (`seed(%s)`): its output equals
// that of the same block with the seed as the `dropout_seed` attribute
// (atol 0, on the fused CPU pipeline and on the reference chain), the two
// pipelines agree, another seed gives another output, and --random-inputs
// draws the seed. The block's gradient function (attn-differentiate) with
// the run-time seed equals the seeded one's, bit for bit, on both
// pipelines. Values against an independent float64 generator:
// test/Python/test_training.py (per-call seeds through sdpa).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/x.npy --shape 1,9,32 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/wq.npy --shape 32,32 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/wk.npy --shape 16,32 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/wv.npy --shape 16,32 --fill rand:4
// RUN: %python %S/Inputs/npytool.py make %t/wo.npy --shape 32,32 --fill rand:5
// RUN: %python %S/Inputs/npytool.py make %t/dy.npy --shape 1,9,32 --fill rand:6
// RUN: %python %S/Inputs/npytool.py make %t/seed.npy --dtype i8 --fill values:-987654321
// RUN: %python %S/Inputs/npytool.py make %t/seed2.npy --dtype i8 --fill values:5
// RUN: for p in cpu reference; do attn-run %s --entry=seeded --pipeline=$p --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --output=%t/seeded_$p.npy --quiet || exit 1; done
// RUN: for p in cpu reference; do attn-run %s --entry=runtime --pipeline=$p --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/seed.npy --expect=%t/seeded_$p.npy --atol=0 --rtol=0 --quiet || exit 1; done | FileCheck %s
// RUN: attn-run %s --entry=runtime --pipeline=cpu --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/seed.npy --compare-with=reference | FileCheck %s --check-prefix=CMP
// RUN: %python %S/Inputs/expect_exit.py 1 attn-run %s --entry=runtime --pipeline=cpu --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/seed2.npy --expect=%t/seeded_cpu.npy --quiet | FileCheck %s --check-prefix=OTHER
// RUN: attn-run %s --entry=runtime --pipeline=cpu --random-inputs --seed=4 --compare-with=reference | FileCheck %s --check-prefix=CMP
// CHECK-COUNT-2: result #0 vs {{.*}}seeded_{{.*}}.npy: {{.*}}, ok
// CMP: result #0 vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[5-9]|[1-9][0-9]))}}
// OTHER: result #0 vs {{.*}}seeded_cpu.npy: {{.*}}MISMATCH

// The backward, through attn-differentiate (dx, dwq, dwk, dwv, dwo).
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: for p in cpu reference; do attn-run %t/grad.mlir --entry=seeded_grad --pipeline=$p --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/dy.npy --output=%t/dx_$p.npy --output=%t/dwq_$p.npy --output=%t/dwk_$p.npy --output=%t/dwv_$p.npy --output=%t/dwo_$p.npy --quiet || exit 1; done
// RUN: for p in cpu reference; do attn-run %t/grad.mlir --entry=runtime_grad --pipeline=$p --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/seed.npy --input=%t/dy.npy --expect=%t/dx_$p.npy --expect=%t/dwq_$p.npy --expect=%t/dwk_$p.npy --expect=%t/dwv_$p.npy --expect=%t/dwo_$p.npy --atol=0 --rtol=0 --quiet || exit 1; done | FileCheck %s --check-prefix=GRAD
// RUN: attn-run %t/grad.mlir --entry=runtime_grad --pipeline=cpu --input=%t/x.npy --input=%t/wq.npy --input=%t/wk.npy --input=%t/wv.npy --input=%t/wo.npy --input=%t/seed.npy --input=%t/dy.npy --compare-with=reference | FileCheck %s --check-prefix=GRADCMP
// GRAD-COUNT-10: vs {{.*}}.npy: {{.*}}, ok
// GRADCMP-COUNT-5: vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[3-9]|[1-9][0-9]))}}

func.func @seeded(%x: tensor<1x9x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
                  %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>) -> tensor<1x9x32xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>,
       dropout_rate = 0.3 : f32, dropout_seed = -987654321 : i64}
      : (tensor<1x9x32xf32>, tensor<1x9x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>,
         tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<1x9x32xf32>
  return %y : tensor<1x9x32xf32>
}

func.func @runtime(%x: tensor<1x9x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
                   %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>, %s: tensor<i64>)
    -> tensor<1x9x32xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo seed(%s)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>,
       dropout_rate = 0.3 : f32}
      : (tensor<1x9x32xf32>, tensor<1x9x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>,
         tensor<16x32xf32>, tensor<32x32xf32>, tensor<i64>) -> tensor<1x9x32xf32>
  return %y : tensor<1x9x32xf32>
}
