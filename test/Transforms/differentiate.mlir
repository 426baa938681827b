// attn-differentiate: the gradient function's signature and the rules it
// is built from; each refusal with its message.
// RUN: attn-opt %s -split-input-file --attn-differentiate -verify-diagnostics | FileCheck %s

// An sdpa: its forward recomputed with the log-sum-exp (f32: it replaces
// the original), its backward; mask and key lengths get no gradient.
// CHECK-LABEL: func.func @attention(
// CHECK-LABEL: func.func @attention_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x4x16x8xf32>, %[[K:[^:]*]]: tensor<2x2x16x8xf32>, %[[V:[^:]*]]: tensor<2x2x16x8xf32>, %[[M:[^:]*]]: tensor<16x16xi1>, %[[L:[^:]*]]: tensor<2xi32>, %[[DO:[^:]*]]: tensor<2x4x16x8xf32>)
// CHECK-SAME: -> (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>)
// CHECK-NOT: attn.sdpa %
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa_partial %[[Q]], %[[K]], %[[V]], %[[M]] key_lengths(%[[L]]) {causal = #attn.causal<bottom_right>, scale = 5.000000e-01 : f32}
// CHECK: %[[DQ:[^,]*]], %[[DK:[^,]*]], %[[DV:[^ ]*]] = attn.sdpa_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[DO]], %[[LSE]], %[[M]] key_lengths(%[[L]]) {causal = #attn.causal<bottom_right>, scale = 5.000000e-01 : f32}
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @attention(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<2x2x16x8xf32>,
                     %m: tensor<16x16xi1>, %len: tensor<2xi32>) -> tensor<2x4x16x8xf32> {
  %o = attn.sdpa %q, %k, %v, %m key_lengths(%len)
      {causal = #attn.causal<bottom_right>, scale = 0.5 : f32}
      : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<16x16xi1>,
         tensor<2xi32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// An additive mask argument gets its adjoint from attn.sdpa_grad's
// grad_mask; an additive mask built inside the function (no argument
// reaches it) asks for none.
// CHECK-LABEL: func.func @additive_mask_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xf32>, %[[M:[^:]*]]: tensor<4x4xf32>, %[[DO:[^:]*]]: tensor<1x2x4x8xf32>)
// CHECK-SAME: -> (tensor<1x2x4x8xf32>, tensor<4x4xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa_partial %[[Q]], %[[Q]], %[[Q]], %[[M]]
// CHECK: %[[DQ:[^,]*]], %[[DK:[^,]*]], %[[DV:[^,]*]], %[[DM:[^ ]*]] = attn.sdpa_grad %[[Q]], %[[Q]], %[[Q]], %[[O]], %[[DO]], %[[LSE]], %[[M]]
// CHECK: return %{{.*}}, %[[DM]]
func.func @additive_mask(%q: tensor<1x2x4x8xf32>, %m: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %q, %q, %m
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xf32>)
        -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @constant_mask_grad(
// CHECK: %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} = attn.sdpa_grad
// CHECK-SAME: -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
func.func @constant_mask(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %m = arith.constant dense<0.5> : tensor<4x4xf32>
  %o = attn.sdpa %q, %q, %q, %m
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xf32>)
        -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A projection: dx by the projection with the other layout, dW and db by
// sums over the rows; an argument used twice adds its adjoints; an unused
// argument gets zeros.
// CHECK-LABEL: func.func @two_projections_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3x5x4xf32>, %[[W:[^:]*]]: tensor<6x4xf32>, %[[B:[^:]*]]: tensor<6xf32>, %[[U:[^:]*]]: tensor<2xf32>, %[[D1:[^:]*]]: tensor<3x5x6xf32>, %[[D2:[^:]*]]: tensor<3x5x6xf32>)
// CHECK-DAG: attn.project %[[D2]], %[[W]] {layout = #attn.layout<in_out>}
// CHECK-DAG: attn.project %[[D1]], %[[W]] {layout = #attn.layout<in_out>}
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]] : tensor<3x5x4xf32>, tensor<6x4xf32>, tensor<6xf32>, tensor<2xf32>
func.func @two_projections(%x: tensor<3x5x4xf32>, %w: tensor<6x4xf32>, %b: tensor<6xf32>,
                           %unused: tensor<2xf32>) -> (tensor<3x5x6xf32>, tensor<3x5x6xf32>) {
  %y1 = attn.project %x, %w, %b : (tensor<3x5x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<3x5x6xf32>
  %y2 = attn.project %x, %w : (tensor<3x5x4xf32>, tensor<6x4xf32>) -> tensor<3x5x6xf32>
  return %y1, %y2 : tensor<3x5x6xf32>, tensor<3x5x6xf32>
}

// -----

// Heads: split and merge are each other's adjoint; scale scales; the
// forward ops nothing reads are gone.
// CHECK-LABEL: func.func @heads_grad(
// CHECK-SAME: %{{[^:]*}}: tensor<1x3x8xf32>, %[[D:[^:]*]]: tensor<1x3x8xf32>)
// CHECK-NEXT: %[[H:.*]] = attn.split_heads %[[D]] {num_heads = 2 : i64}
// CHECK-NEXT: %[[S:.*]] = attn.scale %[[H]] {scale = 2.500000e-01 : f32}
// CHECK-NEXT: %[[X:.*]] = attn.merge_heads %[[S]]
// CHECK-NEXT: return %[[X]]
func.func @heads(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %h = attn.split_heads %x {num_heads = 2 : i64} : (tensor<1x3x8xf32>) -> tensor<1x2x3x4xf32>
  %s = attn.scale %h {scale = 0.25 : f32} : tensor<1x2x3x4xf32>
  %m = attn.merge_heads %s : (tensor<1x2x3x4xf32>) -> tensor<1x3x8xf32>
  return %m : tensor<1x3x8xf32>
}

// -----

// An sdpa with dropout: its forward sdpa_partial and its sdpa_grad carry
// the rate and seed (the backward regenerates the forward's mask).
// CHECK-LABEL: func.func @dropout_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xf32>, %[[D:[^:]*]]: tensor<1x2x4x8xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa_partial %[[Q]], %[[Q]], %[[Q]] {dropout_rate = 1.000000e-01 : f32, dropout_seed = 3 : i64}
// CHECK: attn.sdpa_grad %[[Q]], %[[Q]], %[[Q]], %[[O]], %[[D]], %[[LSE]] {dropout_rate = 1.000000e-01 : f32, dropout_seed = 3 : i64}
// CHECK: return
func.func @dropout(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %q, %q {dropout_rate = 0.1 : f32, dropout_seed = 3 : i64}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// With a run-time seed (an integer argument: no adjoint of its own), both
// take the same seed operand; a primitive attn.dropout's rule drops dy
// with it.
// CHECK-LABEL: func.func @runtime_seed_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xf32>, %[[S:[^:]*]]: tensor<i64>, %[[D:[^:]*]]: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa_partial %[[Q]], %[[Q]], %[[Q]] seed(%[[S]]) {dropout_rate = 1.000000e-01 : f32}
// CHECK: attn.sdpa_grad %[[Q]], %[[Q]], %[[Q]], %[[O]], %[[D]], %[[LSE]] seed(%[[S]]) {dropout_rate = 1.000000e-01 : f32}
// CHECK-LABEL: func.func @runtime_seed_dropout_grad(
// CHECK-SAME: %{{[^:]*}}: tensor<1x2x4x4xf32>, %[[S2:[^:]*]]: tensor<i64>, %[[DY:[^:]*]]: tensor<1x2x4x4xf32>)
// CHECK: attn.dropout %[[DY]] seed(%[[S2]]) {rate = 2.500000e-01 : f32}
func.func @runtime_seed(%q: tensor<1x2x4x8xf32>, %s: tensor<i64>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %q, %q seed(%s) {dropout_rate = 0.1 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>)
        -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

func.func @runtime_seed_dropout(%p: tensor<1x2x4x4xf32>, %s: tensor<i64>) -> tensor<1x2x4x4xf32> {
  %d = attn.dropout %p seed(%s) {rate = 0.25 : f32} : tensor<1x2x4x4xf32>
  return %d : tensor<1x2x4x4xf32>
}

// -----

// attn.mha with a run-time seed: decomposed, its sdpa takes the seed, so
// the forward partial and the backward both draw the same mask from it.
// CHECK-LABEL: func.func @runtime_seed_mha_grad(
// CHECK-SAME: %{{[^:]*}}: tensor<1x4x8xf32>, %{{[^:]*}}: tensor<8x8xf32>, %[[S:[^:]*]]: tensor<i64>, %{{[^:]*}}: tensor<1x4x8xf32>)
// CHECK: attn.sdpa_partial {{.*}} seed(%[[S]]) {dropout_rate = 1.000000e-01 : f32
// CHECK: attn.sdpa_grad {{.*}} seed(%[[S]]) {dropout_rate = 1.000000e-01 : f32
func.func @runtime_seed_mha(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<i64>)
    -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %w, %w, %w, %w seed(%s) {num_heads = 2 : i64, dropout_rate = 0.1 : f32}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<i64>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// The primitives' rules (values: Integration/differentiate-chain.mlir):
// weighted_sum → scores(dO, V) and a group sum for dV; softmax →
// P·(dP − rowdot); mask → dy where the result is not −inf, the additive
// mask's adjoint summed over its broadcast dims and expanded back;
// softcap through tanh; scores → weighted_sum(dS, K) and a group sum;
// rope → rope with −sin, the tables' adjoints from the pair slices.
// CHECK-LABEL: func.func @chain_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x6x8xf32>, %[[K:[^:]*]]: tensor<1x2x6x8xf32>, %[[V:[^:]*]]: tensor<1x2x6x8xf32>, %[[COS:[^:]*]]: tensor<6x4xf32>, %[[SIN:[^:]*]]: tensor<6x4xf32>, %[[M:[^:]*]]: tensor<1x1x6x6xf32>, %[[DO:[^:]*]]: tensor<1x4x6x8xf32>)
// CHECK-SAME: -> (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<1x1x6x6xf32>)
// CHECK: %[[QR:.*]] = attn.rope %[[Q]], %[[COS]], %[[SIN]]
// CHECK: %[[KR:.*]] = attn.rope %[[K]], %[[COS]], %[[SIN]] {style = #attn.rope<interleaved>}
// CHECK: %[[P:.*]] = attn.softmax
// CHECK: %[[DP:.*]] = attn.scores %[[DO]], %[[V]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[DP]], %[[P]] :
// CHECK: math.tanh
// CHECK: %[[DQR:.*]] = attn.weighted_sum %{{.*}}, %[[KR]]
// CHECK: attn.rope %{{.*}}, %[[COS]], %{{.*}} {style = #attn.rope<interleaved>}
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 1] [1, 2, 6, 4] [1, 1, 1, 2]
// CHECK: %[[DQ:.*]] = attn.rope %[[DQR]], %[[COS]], %{{.*}} :
// CHECK: tensor.extract_slice %[[DQR]][0, 0, 0, 4] [1, 4, 6, 4] [1, 1, 1, 1]
// CHECK: return %[[DQ]], {{.*}} : tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<1x1x6x6xf32>
func.func @chain(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>,
                 %cos: tensor<6x4xf32>, %sin: tensor<6x4xf32>, %m: tensor<1x1x6x6xf32>)
    -> tensor<1x4x6x8xf32> {
  %qr = attn.rope %q, %cos, %sin : tensor<1x4x6x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>
  %kr = attn.rope %k, %cos, %sin {style = #attn.rope<interleaved>}
      : tensor<1x2x6x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x6xf32>
  %t = attn.scale %s {scale = 0.35 : f32} : tensor<1x4x6x6xf32>
  %c = attn.softcap %t {cap = 2.0 : f32} : tensor<1x4x6x6xf32>
  %x = attn.mask %c, %m {causal = #attn.causal<top_left>} : tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>
  %p = attn.softmax %x : tensor<1x4x6x6xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x4x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

// -----

func.func @no_rule(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'arith.addf' op cannot be differentiated by attn-differentiate: it has no vector-Jacobian rule}}
  %a = arith.addf %s, %s : tensor<1x2x4x4xf32>
  %p = attn.scale %a {scale = 0.5 : f32} : tensor<1x2x4x4xf32>
  return %p : tensor<1x2x4x4xf32>
}

// -----

func.func @dynamic_mask(%s: tensor<1x2x4x4xf32>, %m: tensor<?x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'attn.mask' op cannot differentiate an additive mask with dynamic dims}}
  %x = attn.mask %s, %m : tensor<1x2x4x4xf32>, tensor<?x4xf32>
  return %x : tensor<1x2x4x4xf32>
}

// -----

// A score function's derivative is a score function: the body cloned, the
// tangents beside it (tanh: t·(1 − y²)), yielding the tangent; the
// adjoint is dY times it.
// CHECK-LABEL: func.func @score_mod_grad(
// CHECK-SAME: %[[S:[^:]*]]: tensor<1x2x4x4xf32>, %[[DY:[^:]*]]: tensor<1x2x4x4xf32>)
// CHECK: %[[SLOPE:.*]] = attn.score_mod %[[S]] {
// CHECK: ^bb0(%[[X:[^:]*]]: f32,
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[Y:.*]] = math.tanh %[[X]] : f32
// CHECK: %[[YY:.*]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[YY]] : f32
// CHECK: %[[T:.*]] = arith.mulf %[[ONE]], %[[D]] : f32
// CHECK: attn.yield %[[T]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[DY]], %[[SLOPE]] :
// CHECK: arith.mulf
func.func @score_mod(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.tanh %x : f32
    attn.yield %t : f32
  } : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

func.func @score_mod_no_rule(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'math.atan' op in a score function has no derivative rule}}
    %t = math.atan %x : f32
    attn.yield %t : f32
  } : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A float capture computed from the arguments (a learned table) gets its
// adjoint: a loop nest over the scores that adds dY · ∂f/∂read at the
// read's clamped indices, summed in f32.
// CHECK-LABEL: func.func @score_mod_learned_table_grad(
// CHECK-SAME: -> (tensor<1x2x4x4xf32>, tensor<7xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<7xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (tensor<7xf32>)
// CHECK-COUNT-2: scf.for
// CHECK: scf.for {{.*}} iter_args(%[[ACC:[^ ]*]] = %{{.*}}) -> (tensor<7xf32>)
// CHECK: %[[I:.*]] = arith.minsi
// CHECK: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[I]]] : tensor<7xf32>
// CHECK: %[[TERM:.*]] = arith.mulf
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TERM]]
// CHECK: tensor.insert %[[NEW]] into %[[ACC]][%[[I]]]
func.func @score_mod_learned_table(%s: tensor<1x2x4x4xf32>, %t: tensor<7xf32>) -> tensor<1x2x4x4xf32> {
  %y = attn.score_mod %s captures(%t : tensor<7xf32>) {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %tab: tensor<7xf32>):
    %e = tensor.extract %tab[%i] : tensor<7xf32>
    %r = arith.addf %x, %e : f32
    attn.yield %r : f32
  } : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A capture computed from an argument by an op with no rule: that op is
// named (its adjoint cannot reach the argument).
func.func @score_mod_reshaped_table(%s: tensor<1x2x4x4xf32>, %t: tensor<7x1xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op cannot be differentiated by attn-differentiate}}
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<7x1xf32> into tensor<7xf32>
  %y = attn.score_mod %s captures(%c : tensor<7xf32>) {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %tab: tensor<7xf32>):
    %e = tensor.extract %tab[%i] : tensor<7xf32>
    %r = arith.addf %x, %e : f32
    attn.yield %r : f32
  } : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// An argument marked attn.no_grad is a constant: no gradient result, and
// a score function may capture it.
// CHECK-LABEL: func.func @no_grad_table_grad(
// CHECK-SAME: %{{[^:]*}}: tensor<1x2x4x4xf32>, %{{[^:]*}}: tensor<7xf32> {attn.no_grad}, %{{[^:]*}}: tensor<1x2x4x4xf32>)
// CHECK-SAME: -> tensor<1x2x4x4xf32>
// CHECK: attn.score_mod
func.func @no_grad_table(%s: tensor<1x2x4x4xf32>, %t: tensor<7xf32> {attn.no_grad}) -> tensor<1x2x4x4xf32> {
  %y = attn.score_mod %s captures(%t : tensor<7xf32>) {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %tab: tensor<7xf32>):
    %e = tensor.extract %tab[%i] : tensor<7xf32>
    %r = arith.addf %x, %e : f32
    attn.yield %r : f32
  } : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A mask function alone takes the fused backward: the forward
// sdpa_partial and attn.sdpa_grad each carry the function (a copy of the
// region) and its captures; the captures get no gradient (a keep decision
// has none), so the gradient function returns dQ, dK, dV only.
// CHECK-LABEL: func.func @documents_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x8x4xf32>, %[[K:[^:]*]]: tensor<1x2x8x4xf32>, %[[V:[^:]*]]: tensor<1x2x8x4xf32>, %[[DOC:[^:]*]]: tensor<8xi32>, %[[DO:[^:]*]]: tensor<1x2x8x4xf32>)
// CHECK-SAME: -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa_partial %[[Q]], %[[K]], %[[V]] captures(%[[DOC]]) mask_mod {
// CHECK: arith.cmpi eq
// CHECK: attn.yield %{{.*}} : i1
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = attn.sdpa_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[DO]], %[[LSE]] captures(%[[DOC]]) mask_mod {
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[D:.*]]: tensor<8xi32>):
// CHECK: tensor.extract %[[D]]
// CHECK: arith.cmpi eq
// CHECK: attn.yield %{{.*}} : i1
// CHECK-NOT: attn.mask_mod
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @documents(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>,
                     %doc: tensor<8xi32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %k, %v captures(%doc) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<8xi32>):
    %di = tensor.extract %d[%i] : tensor<8xi32>
    %dj = tensor.extract %d[%j] : tensor<8xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi32>)
      -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
