// One failing example for every rule of score and mask functions
// (AttnModFunctions.cpp), with its message.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @score_signature(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'body' region must take (score: f32, b, h, q, kv: index) followed by one argument per capture: expected (f32, index, index, index, index), got (f32, index, index, index)}}
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index):
    attn.yield %x : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @capture_argument_type(%s: tensor<1x2x8x8xf32>, %t: tensor<8xi32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{expected (index, index, index, index, tensor<8xi32>), got (index, index, index, index, tensor<8xi64>)}}
  %y = attn.mask_mod %s captures(%t : tensor<8xi32>) {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<8xi64>):
    %true = arith.constant true
    attn.yield %true : i1
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @score_yields_i1(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'body' function must yield 'f32' (the new score), got 'i1'}}
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    %true = arith.constant true
    attn.yield %true : i1
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @mask_yields_f32(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'body' function must yield 'i1' (true = keep the key), got 'f32'}}
  %y = attn.mask_mod %s {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @op_not_allowed(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'memref.alloca' op in the 'body' function of 'attn.score_mod': op 'memref.alloca' is not allowed (allowed: arith and math ops on scalars, scf.if, tensor.extract of a capture, attn.yield)}}
    %m = memref.alloca() : memref<4xf32>
    attn.yield %x : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @vector_value(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'arith.constant' op in the 'body' function of 'attn.score_mod' produces 'vector<4xf32>'; a function computes on scalars (integers, index, floats) lane by lane}}
    %c = arith.constant dense<1.0> : vector<4xf32>
    attn.yield %x : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @capture_element(%s: tensor<1x2x8x8xf32>, %t: tensor<8xcomplex<f32>>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{capture #0 has element type 'complex<f32>'; a capture holds i1, i8, i16, i32, i64, index, f16, bf16, f32 or f64}}
  %y = attn.mask_mod %s captures(%t : tensor<8xcomplex<f32>>) {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<8xcomplex<f32>>):
    %true = arith.constant true
    attn.yield %true : i1
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @capture_empty(%q: tensor<1x2x8x8xf32>, %t: tensor<2x0xi32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{capture #0 of type 'tensor<2x0xi32>' has no elements: a function's reads of it would fall outside it}}
  %o = attn.sdpa %q, %q, %q captures(%t) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<2x0xi32>):
    %x = tensor.extract %d[%h, %j] : tensor<2x0xi32>
    %c0 = arith.constant 0 : i32
    %keep = arith.cmpi eq, %x, %c0 : i32
    attn.yield %keep : i1
  } : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<2x0xi32>)
      -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}

// -----

func.func @scores_rank(%s: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{operand 'input' must have rank 4 [B,H,Tq,Tk], got rank 3}}
  %y = attn.mask_mod %s {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %true = arith.constant true
    attn.yield %true : i1
  } : tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

func.func @sdpa_captures_unused(%q: tensor<1x2x8x4xf32>, %t: tensor<8xi32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{has captures but no 'score_mod' or 'mask_mod' function to read them}}
  %o = attn.sdpa %q, %q, %q captures(%t)
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @sdpa_mask_signature(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'mask_mod' region must take (b, h, q, kv: index) followed by one argument per capture: expected (index, index, index, index), got (f32, index, index, index, index)}}
  %o = attn.sdpa %q, %q, %q mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %true = arith.constant true
    attn.yield %true : i1
  } : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

func.func @nested_yield(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    %true = arith.constant true
    %r = scf.if %true -> f32 {
      // expected-error @+1 {{'attn.yield' op in the 'body' function of 'attn.score_mod': 'attn.yield' may only end the function body}}
      attn.yield %x : f32
    } else {
      scf.yield %x : f32
    }
    attn.yield %r : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @outside_value(%s: tensor<1x2x8x8xf32>, %c: f32) -> tensor<1x2x8x8xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %y = attn.score_mod %s {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'arith.addf' op using value defined outside the region}}
    %n = arith.addf %x, %c : f32
    attn.yield %n : f32
  } : tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

// attn.block_mask: the lists' shapes follow the lengths and block sizes.
func.func @block_mask_wrong_blocks() -> (tensor<1x1x2xi32>, tensor<1x1x2x3xi32>, tensor<1x1x2xi32>, tensor<1x1x2x3xi32>) {
  // expected-error @+1 {{'attn.block_mask' op result 'kv_num_blocks' must be 'tensor<1x1x3xi32>' (B = 1, H = 1, NQ = ceil(10 / 4), NK = ceil(10 / 4)), got 'tensor<1x1x2xi32>'}}
  %kn, %ki, %fn, %fi = attn.block_mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4, 4>}
    : tensor<1x1x2xi32>, tensor<1x1x2x3xi32>, tensor<1x1x2xi32>, tensor<1x1x2x3xi32>
  return %kn, %ki, %fn, %fi : tensor<1x1x2xi32>, tensor<1x1x2x3xi32>, tensor<1x1x2xi32>, tensor<1x1x2x3xi32>
}

// -----

func.func @block_mask_full_lists_differ() -> (tensor<2x1x3xi32>, tensor<2x1x3x3xi32>, tensor<2x1x3xi32>, tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{result 'full_kv_indices' must be 'tensor<2x1x3x3xi32>' (B = 2, H = 1, NQ = ceil(10 / 4), NK = ceil(10 / 4)), got 'tensor<1x1x3x3xi32>'}}
  %kn, %ki, %fn, %fi = attn.block_mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4, 4>}
    : tensor<2x1x3xi32>, tensor<2x1x3x3xi32>, tensor<2x1x3xi32>, tensor<1x1x3x3xi32>
  return %kn, %ki, %fn, %fi : tensor<2x1x3xi32>, tensor<2x1x3x3xi32>, tensor<2x1x3xi32>, tensor<1x1x3x3xi32>
}

// -----

func.func @block_mask_dynamic() -> (tensor<?x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{result 'kv_num_blocks' must be a static [B,H,NQ] tensor, got 'tensor<?x1x3xi32>'}}
  %kn, %ki, %fn, %fi = attn.block_mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4, 4>}
    : tensor<?x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
  return %kn, %ki, %fn, %fi : tensor<?x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
}

// -----

func.func @block_mask_no_keys() -> (tensor<1x1x3xi32>, tensor<1x1x3x0xi32>, tensor<1x1x3xi32>, tensor<1x1x3x0xi32>) {
  // expected-error @+1 {{needs q_len and kv_len of at least 1, got 10 and 0}}
  %kn, %ki, %fn, %fi = attn.block_mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } {q_len = 10 : i64, kv_len = 0 : i64, block_size = array<i64: 4, 4>}
    : tensor<1x1x3xi32>, tensor<1x1x3x0xi32>, tensor<1x1x3xi32>, tensor<1x1x3x0xi32>
  return %kn, %ki, %fn, %fi : tensor<1x1x3xi32>, tensor<1x1x3x0xi32>, tensor<1x1x3xi32>, tensor<1x1x3x0xi32>
}

// -----

func.func @block_mask_one_block_size() -> (tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{block_size must be two sizes [BQ, BK] of at least 1, got [4]}}
  %kn, %ki, %fn, %fi = attn.block_mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4>}
    : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
  return %kn, %ki, %fn, %fi : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
}

// -----

func.func @block_mask_yields_a_score() -> (tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{'attn.block_mask' op 'body' function must yield 'i1' (true = keep the key), got 'f32'}}
  %kn, %ki, %fn, %fi = attn.block_mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1.0 : f32
    attn.yield %one : f32
  } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4, 4>}
    : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
  return %kn, %ki, %fn, %fi : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
}

// -----

func.func @block_mask_capture_argument(%doc: tensor<10xi32>) -> (tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{'attn.block_mask' op 'body' region must take (b, h, q, kv: index) followed by one argument per capture: expected (index, index, index, index, tensor<10xi32>), got (index, index, index, index)}}
  %kn, %ki, %fn, %fi = attn.block_mask captures(%doc : tensor<10xi32>) {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sge, %i, %j : index
    attn.yield %keep : i1
  } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4, 4>}
    : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
  return %kn, %ki, %fn, %fi : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
}

// -----

func.func @mha_captures_without_function(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>,
                                         %t: tensor<2xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{has captures but no 'score_mod' or 'mask_mod' function to read them}}
  %y = attn.mha %x, %x, %w, %w, %w, %w captures(%t) {num_heads = 2 : i64}
      : (tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<2xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}

// -----

func.func @mha_mask_takes_a_score(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{'attn.mha' op 'mask_mod' region must take (b, h, q, kv: index) followed by one argument per capture: expected (index, index, index, index), got (f32, index, index, index, index)}}
  %y = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 2 : i64} mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
       tensor<8x8xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}
