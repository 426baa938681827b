// Dropout with a run-time seed (`seed(%s)`, a tensor<i64> input) drops
// exactly the elements the same seed as an attribute drops, on both
// pipelines, in the forward (the fused CPU kernel and the reference
// chain) and the backward: the seeded function's output is the expected
// value of the run-time one (atol 0 on the same pipeline), and the two
// pipelines agree. A different seed gives a different output. Values
// against an independent float64 implementation of the generator:
// test/Python/test_training.py::test_dropout_fresh_seed_per_call.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npytool.py make %t/q.npy --shape 1,2,9,16 --fill rand:1
// RUN: %python %S/Inputs/npytool.py make %t/k.npy --shape 1,2,40,16 --fill rand:2
// RUN: %python %S/Inputs/npytool.py make %t/v.npy --shape 1,2,40,16 --fill rand:3
// RUN: %python %S/Inputs/npytool.py make %t/do.npy --shape 1,2,9,16 --fill rand:4
// RUN: %python %S/Inputs/npytool.py make %t/seed.npy --dtype i8 --fill values:-987654321
// RUN: %python %S/Inputs/npytool.py make %t/seed2.npy --dtype i8 --fill values:5
// RUN: for p in cpu reference; do attn-run %s --entry=seeded --pipeline=$p --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --output=%t/seeded_$p.npy --quiet; done
// RUN: attn-run %s --entry=runtime --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/seed.npy --expect=%t/seeded_cpu.npy --atol=0 --rtol=0 --quiet | FileCheck %s
// RUN: attn-run %s --entry=runtime --pipeline=reference --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/seed.npy --expect=%t/seeded_reference.npy --atol=0 --rtol=0 --quiet | FileCheck %s
// RUN: attn-run %s --entry=runtime --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/seed.npy --compare-with=reference | FileCheck %s --check-prefix=CMP
// RUN: %python %S/Inputs/expect_exit.py 1 attn-run %s --entry=runtime --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/seed2.npy --expect=%t/seeded_cpu.npy --quiet | FileCheck %s --check-prefix=OTHER
// --random-inputs draws a seed for a seed operand (uniform in [0, 2^24)).
// RUN: attn-run %s --entry=runtime --pipeline=cpu --random-inputs --seed=4 --compare-with=reference | FileCheck %s --check-prefix=CMP
// CHECK: result #0 vs {{.*}}seeded_{{.*}}.npy: {{.*}}, ok
// CMP: result #0 vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[5-9]|[1-9][0-9]))}}
// OTHER: result #0 vs {{.*}}seeded_cpu.npy: {{.*}}MISMATCH

// The backward: sdpa_grad regenerates the forward's mask from the seed.
// RUN: attn-run %s --entry=grad_seeded --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do.npy --output=%t/dq.npy --output=%t/dk.npy --output=%t/dv.npy --quiet
// RUN: attn-run %s --entry=grad_runtime --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do.npy --input=%t/seed.npy --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy --atol=0 --rtol=0 --quiet | FileCheck %s --check-prefix=GRAD
// RUN: attn-run %s --entry=grad_runtime --pipeline=cpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do.npy --input=%t/seed.npy --compare-with=reference | FileCheck %s --check-prefix=GRADCMP
// GRAD-COUNT-3: vs {{.*}}.npy: {{.*}}, ok
// GRADCMP-COUNT-3: vs reference: max_abs_error {{.*}} max_rel_error {{(0\.0+e\+00|[0-9.]+e-(0[4-9]|[1-9][0-9]))}}

func.func @seeded(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>)
    -> tensor<1x2x9x16xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>, dropout_rate = 0.3 : f32,
                             dropout_seed = -987654321 : i64}
      : (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>) -> tensor<1x2x9x16xf32>
  return %o : tensor<1x2x9x16xf32>
}

func.func @runtime(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>,
                   %s: tensor<i64>) -> tensor<1x2x9x16xf32> {
  %o = attn.sdpa %q, %k, %v seed(%s) {causal = #attn.causal<bottom_right>, dropout_rate = 0.3 : f32}
      : (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<i64>)
        -> tensor<1x2x9x16xf32>
  return %o : tensor<1x2x9x16xf32>
}

func.func @grad_seeded(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>,
                       %do: tensor<1x2x9x16xf32>)
    -> (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<top_left>, dropout_rate = 0.3 : f32,
                                           dropout_seed = -987654321 : i64}
      : (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>)
        -> (tensor<1x2x9x16xf32>, tensor<1x2x9xf32>)
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
      {causal = #attn.causal<top_left>, dropout_rate = 0.3 : f32, dropout_seed = -987654321 : i64}
      : (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x9x16xf32>,
         tensor<1x2x9x16xf32>, tensor<1x2x9xf32>)
        -> (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>)
  return %dq, %dk, %dv : tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>
}

func.func @grad_runtime(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>,
                        %do: tensor<1x2x9x16xf32>, %s: tensor<i64>)
    -> (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v seed(%s) {causal = #attn.causal<top_left>, dropout_rate = 0.3 : f32}
      : (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<i64>)
        -> (tensor<1x2x9x16xf32>, tensor<1x2x9xf32>)
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse seed(%s)
      {causal = #attn.causal<top_left>, dropout_rate = 0.3 : f32}
      : (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x9x16xf32>,
         tensor<1x2x9x16xf32>, tensor<1x2x9xf32>, tensor<i64>)
        -> (tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>)
  return %dq, %dk, %dv : tensor<1x2x9x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>
}
