// f64 operands (for checking: gradcheck, finite differences): the float
// ops take them, and the partial results (sdpa_partial's O and lse,
// logsumexp, merge_partial, sdpa_grad's lse) are f64 where f32 would be
// for f32/f16/bf16. Mixing the two is an error naming the operand.
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @f64_ops
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>} : (tensor<1x4x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x6xf64>, tensor<1x1x5x7xf64>) -> tensor<1x4x5x6xf64>
// CHECK: attn.sdpa_partial {{.*}} -> (tensor<1x4x5x6xf64>, tensor<1x4x5xf64>)
// CHECK: attn.merge_partial {{.*}} : tensor<1x4x5x6xf64>, tensor<1x4x5xf64>
// CHECK: attn.sdpa_grad {{.*}} -> (tensor<1x4x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x6xf64>)
// CHECK: attn.logsumexp %{{.*}} : tensor<1x4x5x7xf64> -> tensor<1x4x5xf64>
func.func @f64_ops(%q: tensor<1x4x5x8xf64>, %k: tensor<1x2x7x8xf64>, %v: tensor<1x2x7x6xf64>,
                   %m: tensor<1x1x5x7xf64>, %do: tensor<1x4x5x6xf64>, %s: tensor<1x4x5x7xf64>) {
  %o = attn.sdpa %q, %k, %v, %m {causal = #attn.causal<bottom_right>}
      : (tensor<1x4x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x6xf64>, tensor<1x1x5x7xf64>)
        -> tensor<1x4x5x6xf64>
  %po, %pl = attn.sdpa_partial %q, %k, %v
      : (tensor<1x4x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x6xf64>)
        -> (tensor<1x4x5x6xf64>, tensor<1x4x5xf64>)
  %mo, %ml = attn.merge_partial %po, %pl, %po, %pl : tensor<1x4x5x6xf64>, tensor<1x4x5xf64>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %po, %do, %pl
      : (tensor<1x4x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x6xf64>, tensor<1x4x5x6xf64>,
         tensor<1x4x5x6xf64>, tensor<1x4x5xf64>)
        -> (tensor<1x4x5x8xf64>, tensor<1x2x7x8xf64>, tensor<1x2x7x6xf64>)
  %l = attn.logsumexp %s : tensor<1x4x5x7xf64> -> tensor<1x4x5xf64>
  return
}

// -----

func.func @partial_result_f32_for_f64(%q: tensor<1x4x5x8xf64>, %k: tensor<1x4x7x8xf64>) {
  // expected-error @+1 {{result element type 'f32' does not match the operands' element type 'f64'}}
  %o, %l = attn.sdpa_partial %q, %k, %k
      : (tensor<1x4x5x8xf64>, tensor<1x4x7x8xf64>, tensor<1x4x7x8xf64>)
        -> (tensor<1x4x5x8xf32>, tensor<1x4x5xf32>)
  return
}

// -----

func.func @grad_lse_f32_for_f64(%q: tensor<1x4x5x8xf64>, %k: tensor<1x4x7x8xf64>,
                                %o: tensor<1x4x5x8xf64>, %lse: tensor<1x4x5xf32>) {
  // expected-error @+1 {{operand 'lse' element type 'f32' must be 'f64' (the forward's, for a 'f64' query)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %k, %o, %o, %lse
      : (tensor<1x4x5x8xf64>, tensor<1x4x7x8xf64>, tensor<1x4x7x8xf64>, tensor<1x4x5x8xf64>,
         tensor<1x4x5x8xf64>, tensor<1x4x5xf32>)
        -> (tensor<1x4x5x8xf64>, tensor<1x4x7x8xf64>, tensor<1x4x7x8xf64>)
  return
}

// -----

func.func @merge_mixed(%o: tensor<1x4x5x8xf32>, %l: tensor<1x4x5xf64>) {
  // expected-error @+1 {{operand 'lse1' has element type 'f64', expected the outputs' ('f32')}}
  %r, %s = attn.merge_partial %o, %l, %o, %l : tensor<1x4x5x8xf32>, tensor<1x4x5xf64>
  return
}
