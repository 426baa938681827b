// The run-time dropout seed `seed(%s)` (a tensor<i64> operand) on
// attn.dropout, attn.sdpa, attn.mha, attn.sdpa_partial and attn.sdpa_grad: it parses
// and prints back, and replaces the seed attribute (both, or a seed
// without a dropout rate, is an error).
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
// CHECK: attn.dropout %{{.*}} seed(%[[S:.*]]) {rate = 1.000000e-01 : f32} : tensor<1x2x4x4xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}}) seed(%[[S]]) {dropout_rate = 2.000000e-01 : f32}
// CHECK: attn.sdpa_partial %{{.*}}, %{{.*}}, %{{.*}} seed(%[[S]]) {causal = #attn.causal<top_left>, dropout_rate = 2.000000e-01 : f32}
// CHECK: attn.sdpa_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} seed(%[[S]]) {dropout_rate = 2.000000e-01 : f32}
func.func @roundtrip(%p: tensor<1x2x4x4xf32>, %q: tensor<1x2x4x8xf32>, %len: tensor<1xi32>,
                     %s: tensor<i64>)
    -> (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>,
        tensor<1x2x4x8xf32>) {
  %d = attn.dropout %p seed(%s) {rate = 0.1 : f32} : tensor<1x2x4x4xf32>
  %o = attn.sdpa %q, %q, %q key_lengths(%len) seed(%s) {dropout_rate = 0.2 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1xi32>, tensor<i64>)
        -> tensor<1x2x4x8xf32>
  %po, %lse = attn.sdpa_partial %q, %q, %q seed(%s) {causal = #attn.causal<top_left>, dropout_rate = 0.2 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>)
        -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %po, %q, %lse seed(%s) {dropout_rate = 0.2 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
         tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<i64>)
        -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return %d, %o, %po, %lse, %dq : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
                                  tensor<1x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @dropout_both_seeds(%p: tensor<1x2x4x4xf32>, %s: tensor<i64>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'attn.dropout' op takes its seed either as 'seed(...)' or as attribute 'seed', not both}}
  %d = attn.dropout %p seed(%s) {rate = 0.1 : f32, seed = 7 : i64} : tensor<1x2x4x4xf32>
  return %d : tensor<1x2x4x4xf32>
}

// -----

func.func @sdpa_both_seeds(%q: tensor<1x2x4x8xf32>, %s: tensor<i64>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op takes its seed either as 'seed(...)' or as attribute 'dropout_seed', not both}}
  %o = attn.sdpa %q, %q, %q seed(%s) {dropout_rate = 0.2 : f32, dropout_seed = 3 : i64}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>)
        -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @partial_seed_without_rate(%q: tensor<1x2x4x8xf32>, %s: tensor<i64>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>) {
  // expected-error @+1 {{'attn.sdpa_partial' op 'seed(...)' is given without 'dropout_rate'}}
  %o, %l = attn.sdpa_partial %q, %q, %q seed(%s)
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>)
        -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  return %o, %l : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>
}

// -----

func.func @grad_seed_not_i64(%q: tensor<1x2x4x8xf32>, %lse: tensor<1x2x4xf32>, %s: tensor<i32>)
    -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa_grad' op operand #6 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %q, %lse seed(%s) {dropout_rate = 0.2 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
         tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<i32>)
        -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return %dq : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @mha_roundtrip
// CHECK: attn.mha %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}}) seed(%{{.*}}) {dropout_rate = 1.000000e-01 : f32, num_heads = 2 : i64}
func.func @mha_roundtrip(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %len: tensor<1xi32>,
                         %s: tensor<i64>) -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %w, %w, %w, %w key_lengths(%len) seed(%s)
      {num_heads = 2 : i64, dropout_rate = 0.1 : f32}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<1xi32>, tensor<i64>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

func.func @mha_seed_without_rate(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<i64>)
    -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op 'seed(...)' is given without 'dropout_rate'}}
  %y = attn.mha %x, %x, %w, %w, %w, %w seed(%s) {num_heads = 2 : i64}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<i64>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

func.func @mha_both_seeds(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<i64>)
    -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op takes its seed either as 'seed(...)' or as attribute 'dropout_seed', not both}}
  %y = attn.mha %x, %x, %w, %w, %w, %w seed(%s)
      {num_heads = 2 : i64, dropout_rate = 0.1 : f32, dropout_seed = 4 : i64}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<i64>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
