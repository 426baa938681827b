// What attn-shard refuses, each with its message.
// RUN: attn-opt %s --attn-shard=ranks=3 -split-input-file -verify-diagnostics

func.func @zigzag_not_divisible(%q: tensor<1x2x1000x16xf32>) -> tensor<1x2x1000x16xf32> {
  // expected-error @+1 {{attn-shard: sequence length Tq = 1000 cannot be split over P = 3 ranks with the zigzag layout (it needs Tq to be a positive multiple of 2P = 6)}}
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>, attn.ring}
      : (tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32>) -> tensor<1x2x1000x16xf32>
  return %o : tensor<1x2x1000x16xf32>
}

// -----

func.func @contiguous_tk(%q: tensor<1x2x30x16xf32>, %k: tensor<1x2x31x16xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: sequence length Tk = 31 cannot be split over P = 3 ranks with the contiguous layout (it needs Tk to be a positive multiple of P = 3)}}
  %o = attn.sdpa %q, %k, %k {attn.ring}
      : (tensor<1x2x30x16xf32>, tensor<1x2x31x16xf32>, tensor<1x2x31x16xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}

// -----

func.func @causal_lengths(%q: tensor<1x2x30x16xf32>, %k: tensor<1x2x60x16xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: a causal ring needs Tq == Tk, got Tq = 30, Tk = 60}}
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>, attn.ring = #attn.ring<contiguous>}
      : (tensor<1x2x30x16xf32>, tensor<1x2x60x16xf32>, tensor<1x2x60x16xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}

// -----

func.func @dropout(%q: tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: dropout is not supported in ring attention}}
  %o = attn.sdpa %q, %q, %q {dropout_rate = 0.1 : f32, attn.ring}
      : (tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}

// -----

func.func @window(%q: tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: a sliding window is not supported in ring attention}}
  %o = attn.sdpa %q, %q, %q {window = #attn.window<left = 4>, attn.ring}
      : (tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}

// -----

func.func @alibi(%q: tensor<1x2x30x16xf32>, %s: tensor<2xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: ALiBi is not supported in ring attention}}
  %o = attn.sdpa %q, %q, %q alibi(%s) {attn.ring}
      : (tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<2xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}

// -----

func.func @dynamic(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  // expected-error @+1 {{attn-shard: ring attention needs static shapes, got 'tensor<1x2x?x16xf32>'}}
  %o = attn.sdpa %q, %q, %q {attn.ring}
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

func.func @not_an_argument(%q: tensor<1x2x30x16xf32>, %x: tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32> {
  %k = attn.scale %x {scale = 2.0 : f32} : tensor<1x2x30x16xf32>
  // expected-error @+1 {{attn-shard: operand 'key' of a ring-sharded sdpa must be an argument of its function used only by it}}
  %o = attn.sdpa %q, %k, %k {attn.ring}
      : (tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}

// -----

func.func @result_used(%q: tensor<1x2x30x16xf32>, %k: tensor<1x2x30x16xf32>, %v: tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: the result of a ring-sharded sdpa may only be returned}}
  %o = attn.sdpa %q, %k, %v {attn.ring}
      : (tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32>
  %p = attn.scale %o {scale = 2.0 : f32} : tensor<1x2x30x16xf32>
  return %p : tensor<1x2x30x16xf32>
}

// -----

func.func @bad_layout(%q: tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32> {
  // expected-error @+1 {{attn-shard: attribute 'attn.ring' must be #attn.ring<contiguous|striped|zigzag> or unit, got 3 : i64}}
  %o = attn.sdpa %q, %q, %q {attn.ring = 3}
      : (tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>) -> tensor<1x2x30x16xf32>
  return %o : tensor<1x2x30x16xf32>
}
