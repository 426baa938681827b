// attn.sdpa_grad: it parses and prints back, and each of its own verifier
// rules fails with its message (the rules it shares with attn.sdpa are in
// invalid.mlir).
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
// CHECK: attn.sdpa_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) key_lengths(%{{.*}}) {causal = #attn.causal<bottom_right>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, window = #attn.window<left = 8>}
func.func @roundtrip(%q: tensor<2x4x5x16xf16>, %k: tensor<2x2x7x16xf16>, %v: tensor<2x2x7x8xf16>,
                     %o: tensor<2x4x5x8xf32>, %do: tensor<2x4x5x8xf16>, %lse: tensor<2x4x5xf32>,
                     %m: tensor<5x7xi1>, %s: tensor<4xf32>, %len: tensor<2xi32>)
    -> (tensor<2x4x5x16xf16>, tensor<2x2x7x16xf16>, tensor<2x2x7x8xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse, %m alibi(%s) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, scale = 0.125 : f32, softcap = 30.0 : f32,
       window = #attn.window<left = 8>}
      : (tensor<2x4x5x16xf16>, tensor<2x2x7x16xf16>, tensor<2x2x7x8xf16>, tensor<2x4x5x8xf32>,
         tensor<2x4x5x8xf16>, tensor<2x4x5xf32>, tensor<5x7xi1>, tensor<4xf32>, tensor<2xi32>)
        -> (tensor<2x4x5x16xf16>, tensor<2x2x7x16xf16>, tensor<2x2x7x8xf16>)
  return %dq, %dk, %dv : tensor<2x4x5x16xf16>, tensor<2x2x7x16xf16>, tensor<2x2x7x8xf16>
}

// -----

func.func @out_type(%q: tensor<1x2x3x4xf16>, %k: tensor<1x2x5x4xf16>, %v: tensor<1x2x5x4xf16>,
                    %o: tensor<1x2x3x4xbf16>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{operand 'out' element type 'bf16' must be the query's ('f16') or f32}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %o, %lse
      : (tensor<1x2x3x4xf16>, tensor<1x2x5x4xf16>, tensor<1x2x5x4xf16>, tensor<1x2x3x4xbf16>,
         tensor<1x2x3x4xbf16>, tensor<1x2x3xf32>)
        -> (tensor<1x2x3x4xf16>, tensor<1x2x5x4xf16>, tensor<1x2x5x4xf16>)
  return
}

// -----

func.func @grad_out_dim(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x6xf32>,
                        %o: tensor<1x2x3x6xf32>, %do: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{operand 'grad_out' value dim (dim 3) is 4, expected 6 (value dim Dv of 'value')}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x6xf32>, tensor<1x2x3x6xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x6xf32>)
  return
}

// -----

func.func @out_rank(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>,
                    %o: tensor<2x3x4xf32>, %do: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{operand 'out' must have rank 4 [B,H,Tq,Dv], got rank 3}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>)
  return
}

// -----

func.func @lse_length(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>,
                      %o: tensor<1x2x3x4xf32>, %lse: tensor<1x2x5xf32>) {
  // expected-error @+1 {{operand 'lse' length (dim 2) is 5, expected 3 (length Tq of 'query')}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %o, %lse
      : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x5xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>)
  return
}

// -----

func.func @gqa_heads(%q: tensor<1x3x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>,
                     %o: tensor<1x3x3x4xf32>, %lse: tensor<1x3x3xf32>) {
  // expected-error @+1 {{'query' heads H = 3 is not a multiple of 'key' heads Hkv = 2}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %o, %lse
      : (tensor<1x3x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x3x3x4xf32>,
         tensor<1x3x3x4xf32>, tensor<1x3x3xf32>)
        -> (tensor<1x3x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>)
  return
}

// -----

func.func @result_type(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>,
                       %o: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{all of {key, grad_key} have same type}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %o, %lse
      : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>)
  return
}

// -----

// Dropout: sdpa_grad and its forward sdpa_partial take sdpa's rate and
// seed, with sdpa's rules.
func.func @dropout_rate(%q: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{attribute 'dropout_rate' must be in [0, 1), got 1.5}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %lse {dropout_rate = 1.5 : f32}
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return
}

// -----

func.func @dropout_seed_alone(%q: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{attribute 'dropout_seed' is given without 'dropout_rate'}}
  %o, %lse = attn.sdpa_partial %q, %q, %q {dropout_seed = 3 : i64}
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @mask_gradient
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[DM:.*]] = attn.sdpa_grad {{.*}} -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<3x3xf32>)
// CHECK: return %[[DM]]
func.func @mask_gradient(%q: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>, %m: tensor<3x3xf32>)
    -> tensor<3x3xf32> {
  %dq, %dk, %dv, %dm = attn.sdpa_grad %q, %q, %q, %q, %q, %lse, %m
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<3x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<3x3xf32>)
  return %dm : tensor<3x3xf32>
}

// -----

func.func @mask_gradient_without_mask(%q: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>) {
  // expected-error @+1 {{result 'grad_mask' needs an additive (float) mask operand}}
  %dq, %dk, %dv, %dm = attn.sdpa_grad %q, %q, %q, %q, %q, %lse
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<3x3xf32>)
  return
}

// -----

func.func @mask_gradient_of_bool_mask(%q: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>,
                                      %m: tensor<3x3xi1>) {
  // expected-error @+1 {{result 'grad_mask' needs an additive (float) mask operand}}
  %dq, %dk, %dv, %dm = attn.sdpa_grad %q, %q, %q, %q, %q, %lse, %m
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<3x3xi1>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<3x3xf32>)
  return
}

// -----

func.func @mask_gradient_type(%q: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>,
                              %m: tensor<3x3xf32>) {
  // expected-error @+1 {{result 'grad_mask' has type 'tensor<1x3xf32>', expected the mask's 'tensor<3x3xf32>'}}
  %dq, %dk, %dv, %dm = attn.sdpa_grad %q, %q, %q, %q, %q, %lse, %m
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<3x3xf32>)
        -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3xf32>)
  return
}

// -----

// A mask function and its captures, as on attn.sdpa.
// CHECK-LABEL: func.func @roundtrip_mask_function
// CHECK: attn.sdpa_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} captures(%{{.*}}) mask_mod {
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: tensor<3xi32>):
// CHECK: attn.yield %{{.*}} : i1
func.func @roundtrip_mask_function(%q: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>,
                                   %lse: tensor<1x2x3xf32>, %doc: tensor<3xi32>)
    -> tensor<1x2x3x4xf32> {
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %lse captures(%doc) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<3xi32>):
    %di = tensor.extract %d[%i] : tensor<3xi32>
    %dj = tensor.extract %d[%j] : tensor<3xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
       tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<3xi32>)
      -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %dq : tensor<1x2x3x4xf32>
}

// -----

func.func @captures_without_function(%q: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>,
                                     %lse: tensor<1x2x3xf32>, %doc: tensor<3xi32>)
    -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{has captures but no 'score_mod' or 'mask_mod' function to read them}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %lse captures(%doc)
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
         tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<3xi32>)
      -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %dq : tensor<1x2x3x4xf32>
}

// -----

func.func @mask_function_yields_a_score(%q: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>,
                                        %lse: tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{'mask_mod' function must yield 'i1' (true = keep the key), got 'f32'}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %lse mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1.0 : f32
    attn.yield %one : f32
  } : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
       tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
      -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %dq : tensor<1x2x3x4xf32>
}

// -----

func.func @score_function_without_derivative(%q: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>,
                                             %lse: tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{needs 'score_mod' and its derivative 'score_mod_grad' together}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %o, %lse score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.tanh %s : f32
    attn.yield %t : f32
  } : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>,
       tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
      -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %dq : tensor<1x2x3x4xf32>
}
