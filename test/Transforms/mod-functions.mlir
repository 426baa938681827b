// attn-fuse and attn-decompose with score and mask functions: the chain
// scores → scale → score_mod → mask → mask_mod → softmax → weighted_sum is
// one sdpa with both regions (captures merged, each once), decompose gives
// it back; orders sdpa cannot express are left alone.
// RUN: attn-opt %s -attn-fuse -split-input-file | FileCheck %s
// RUN: attn-opt %s -attn-fuse -attn-decompose -split-input-file | FileCheck %s --check-prefix=ROUND

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%{{[^:]*}}: {{.*}}, %{{[^:]*}}: {{.*}}, %{{[^:]*}}: {{.*}}, %[[BIAS:[^:]*]]: tensor<2x15xf32>, %[[DOC:[^:]*]]: tensor<8xi32>)
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} captures(%[[BIAS]], %[[DOC]]) {causal = #attn.causal<top_left>, scale = 5.000000e-01 : f32} score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[T:.*]]: tensor<2x15xf32>, %{{.*}}: tensor<8xi32>):
// CHECK: tensor.extract %[[T]]
// CHECK: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: tensor<2x15xf32>, %[[D:.*]]: tensor<8xi32>):
// CHECK: tensor.extract %[[D]]
// CHECK-NOT: attn.softmax
// ROUND-LABEL: func.func @chain
// ROUND: attn.scores
// ROUND: attn.scale
// ROUND: attn.score_mod %{{.*}} captures(%{{.*}}, %{{.*}} : tensor<2x15xf32>, tensor<8xi32>)
// ROUND: attn.mask %{{.*}} {causal = #attn.causal<top_left>}
// ROUND: attn.mask_mod %{{.*}} captures(%{{.*}}, %{{.*}} : tensor<2x15xf32>, tensor<8xi32>)
// ROUND: attn.softmax
// ROUND: attn.weighted_sum
func.func @chain(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>,
                 %bias: tensor<2x15xf32>, %doc: tensor<8xi32>) -> tensor<1x2x8x4xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x8xf32>
  %t = attn.scale %s {scale = 0.5 : f32} : tensor<1x2x8x8xf32>
  %b = attn.score_mod %t captures(%bias : tensor<2x15xf32>) {
  ^bb0(%x: f32, %bb: index, %h: index, %i: index, %j: index, %tb: tensor<2x15xf32>):
    %c7 = arith.constant 7 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c7 : index
    %e = tensor.extract %tb[%h, %r] : tensor<2x15xf32>
    %n = arith.addf %x, %e : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xf32>
  %m = attn.mask %b {causal = #attn.causal<top_left>} : tensor<1x2x8x8xf32>
  %mm = attn.mask_mod %m captures(%doc, %bias : tensor<8xi32>, tensor<2x15xf32>) {
  ^bb0(%bb: index, %h: index, %i: index, %j: index, %d: tensor<8xi32>, %unused: tensor<2x15xf32>):
    %di = tensor.extract %d[%i] : tensor<8xi32>
    %dj = tensor.extract %d[%j] : tensor<8xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : tensor<1x2x8x8xf32>
  %p = attn.softmax %mm : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// A scale after the score function: a·f(s) is not f(a·s).
// CHECK-LABEL: func.func @scale_after_score_mod
// CHECK: attn.score_mod
// CHECK: attn.scale
// CHECK-NOT: attn.sdpa
func.func @scale_after_score_mod(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x8xf32>
  %b = attn.score_mod %s {
  ^bb0(%x: f32, %bb: index, %h: index, %i: index, %j: index):
    %c = arith.constant 1.0 : f32
    %n = arith.addf %x, %c : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xf32>
  %t = attn.scale %b {scale = 0.5 : f32} : tensor<1x2x8x8xf32>
  %p = attn.softmax %t : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// A mask function before the score function: f(-inf) need not be -inf.
// CHECK-LABEL: func.func @mask_mod_first
// CHECK: attn.mask_mod
// CHECK: attn.score_mod
// CHECK-NOT: attn.sdpa
func.func @mask_mod_first(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.mask_mod %s {
  ^bb0(%bb: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ule, %j, %i : index
    attn.yield %keep : i1
  } : tensor<1x2x8x8xf32>
  %b = attn.score_mod %m {
  ^bb0(%x: f32, %bb: index, %h: index, %i: index, %j: index):
    %c = arith.constant 1.0 : f32
    %n = arith.addf %x, %c : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xf32>
  %p = attn.softmax %b : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// attn.sdpa_partial takes the functions too: decompose puts them into the
// chain before the log-sum-exp.
// CHECK-LABEL: func.func @partial
// CHECK: attn.sdpa_partial %{{.*}}, %{{.*}}, %{{.*}} captures(%{{.*}}) {scale = 2.500000e-01 : f32} mask_mod {
// ROUND-LABEL: func.func @partial
// ROUND: %[[S:.*]] = attn.scale
// ROUND: %[[M:.*]] = attn.mask_mod %[[S]] captures(%{{.*}} : tensor<8xi32>)
// ROUND: attn.logsumexp %[[M]]
// ROUND-NOT: attn.sdpa_partial
func.func @partial(%q: tensor<1x2x8x4xf32>, %doc: tensor<8xi32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) {
  %o, %l = attn.sdpa_partial %q, %q, %q captures(%doc) {scale = 0.25 : f32} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<8xi32>):
    %di = tensor.extract %d[%i] : tensor<8xi32>
    %dj = tensor.extract %d[%j] : tensor<8xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o, %l : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
}
