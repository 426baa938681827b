// Score and mask functions: the primitive ops and attn.sdpa's regions
// round-trip in the pretty and the generic form.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @relative_bias
// CHECK: attn.score_mod %{{.*}} captures(%{{.*}} : tensor<2x15xf32>) {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[T:.*]]: tensor<2x15xf32>):
// CHECK: tensor.extract %[[T]][%[[H]], %{{.*}}] : tensor<2x15xf32>
// CHECK: attn.yield %{{.*}} : f32
// CHECK: } : tensor<1x2x8x8xf32>
func.func @relative_bias(%s: tensor<1x2x8x8xf32>, %bias: tensor<2x15xf32>) -> tensor<1x2x8x8xf32> {
  %y = attn.score_mod %s captures(%bias : tensor<2x15xf32>) {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x15xf32>):
    %c7 = arith.constant 7 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c7 : index
    %v = tensor.extract %t[%h, %r] : tensor<2x15xf32>
    %n = arith.addf %x, %v : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @prefix_lm
// CHECK: attn.mask_mod %{{.*}} {
// CHECK: arith.ori
// CHECK: attn.yield %{{.*}} : i1
// CHECK: } : tensor<2x4x9x9xbf16>
func.func @prefix_lm(%s: tensor<2x4x9x9xbf16>) -> tensor<2x4x9x9xbf16> {
  %y = attn.mask_mod %s {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %causal = arith.cmpi ule, %j, %i : index
    %prefix = arith.cmpi ult, %j, %c3 : index
    %keep = arith.ori %causal, %prefix : i1
    attn.yield %keep : i1
  } : tensor<2x4x9x9xbf16>
  return %y : tensor<2x4x9x9xbf16>
}

// Both functions on an sdpa, sharing the captures; scf.if in a body.
// CHECK-LABEL: func.func @sdpa_functions
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} captures(%{{.*}}, %{{.*}}) {causal = #attn.causal<top_left>} score_mod {
// CHECK: scf.if
// CHECK: } mask_mod {
// CHECK: arith.cmpi eq
// CHECK: } : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>, tensor<8xi32>) -> tensor<1x2x8x4xf32>
func.func @sdpa_functions(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>,
                          %slopes: tensor<2xf32>, %doc: tensor<8xi32>) -> tensor<1x2x8x4xf32> {
  %o = attn.sdpa %q, %k, %v captures(%slopes, %doc) {causal = #attn.causal<top_left>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: tensor<2xf32>, %d: tensor<8xi32>):
    %near = arith.cmpi ult, %i, %j : index
    %r = scf.if %near -> f32 {
      scf.yield %s : f32
    } else {
      %m = tensor.extract %sl[%h] : tensor<2xf32>
      %dist = arith.subi %i, %j : index
      %di = arith.index_cast %dist : index to i64
      %df = arith.sitofp %di : i64 to f32
      %bias = arith.mulf %m, %df : f32
      %t = arith.subf %s, %bias : f32
      scf.yield %t : f32
    }
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %sl: tensor<2xf32>, %d: tensor<8xi32>):
    %di = tensor.extract %d[%i] : tensor<8xi32>
    %dj = tensor.extract %d[%j] : tensor<8xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>, tensor<8xi32>)
      -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// attn.block_mask with a capture: documents of packed sequences.
// CHECK-LABEL: func.func @block_mask_documents
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = attn.block_mask captures(%{{.*}} : tensor<12xi32>) {
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[D:.*]]: tensor<12xi32>):
// CHECK: tensor.extract %[[D]]
// CHECK: attn.yield %{{.*}} : i1
// CHECK: } {block_size = array<i64: 4, 3>, kv_len = 12 : i64, q_len = 12 : i64} : tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>
func.func @block_mask_documents(%doc: tensor<12xi32>)
    -> (tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>) {
  %kn, %ki, %fn, %fi = attn.block_mask captures(%doc : tensor<12xi32>) {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<12xi32>):
    %di = tensor.extract %d[%i] : tensor<12xi32>
    %dj = tensor.extract %d[%j] : tensor<12xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } {q_len = 12 : i64, kv_len = 12 : i64, block_size = array<i64: 4, 3>}
    : tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>
  return %kn, %ki, %fn, %fi : tensor<1x2x3xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3xi32>, tensor<1x2x3x4xi32>
}

// attn.mha carries the functions for its attention (and their captures).
// CHECK-LABEL: func.func @mha_functions
// CHECK: attn.mha %{{.*}} captures(%{{.*}}) {num_heads = 2 : i64} score_mod {
// CHECK: attn.yield %{{.*}} : f32
// CHECK: } mask_mod {
// CHECK: attn.yield %{{.*}} : i1
func.func @mha_functions(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %slopes: tensor<2xf32>)
    -> tensor<1x6x8xf32> {
  %y = attn.mha %x, %x, %w, %w, %w, %w captures(%slopes) {num_heads = 2 : i64} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: tensor<2xf32>):
    %slope = tensor.extract %m[%h] : tensor<2xf32>
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %p = arith.mulf %slope, %df : f32
    %n = arith.subf %s, %p : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %m: tensor<2xf32>):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
       tensor<8x8xf32>, tensor<2xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}
