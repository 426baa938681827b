// One failing example for every verifier rule, with its message.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

//===-- project ---------------------------------------------------------===//

func.func @project_input_rank0(%x: tensor<f32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{operand 'input' must have rank >= 1 [..., In], got rank 0}}
  %0 = attn.project %x, %w : (tensor<f32>, tensor<4x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @project_weight_rank(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{operand 'weight' must have rank 2 [Out,In], got rank 1}}
  %0 = attn.project %x, %w : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @project_weight_type(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf16>) {
  // expected-error @+1 {{operand 'weight' element type 'f16' does not match 'input' element type 'f32'}}
  %0 = attn.project %x, %w : (tensor<2x3x4xf32>, tensor<8x4xf16>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @project_weight_width_out_in(%x: tensor<2x3x4xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{operand 'weight' input width (dim 1) is 8, expected 4 (last dim of 'input', weight layout out_in)}}
  %0 = attn.project %x, %w : (tensor<2x3x4xf32>, tensor<4x8xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @project_weight_width_in_out(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{operand 'weight' input width (dim 0) is 8, expected 4 (last dim of 'input', weight layout in_out)}}
  %0 = attn.project %x, %w {layout = #attn.layout<in_out>} : (tensor<2x3x4xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @project_bias_rank(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{operand 'bias' must have rank 1 [Out], got rank 2}}
  %0 = attn.project %x, %w, %b : (tensor<2x3x4xf32>, tensor<8x4xf32>, tensor<1x8xf32>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @project_bias_type(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{operand 'bias' element type 'bf16' does not match 'input' element type 'f32'}}
  %0 = attn.project %x, %w, %b : (tensor<2x3x4xf32>, tensor<8x4xf32>, tensor<8xbf16>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @project_bias_length(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf32>, %b: tensor<7xf32>) {
  // expected-error @+1 {{operand 'bias' length (dim 0) is 7, expected 8 (output width of 'weight')}}
  %0 = attn.project %x, %w, %b : (tensor<2x3x4xf32>, tensor<8x4xf32>, tensor<7xf32>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @project_result_dim(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{result dim 2 is 4, expected 8 (inferred result type 'tensor<2x3x8xf32>')}}
  %0 = attn.project %x, %w : (tensor<2x3x4xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @project_result_type(%x: tensor<2x3x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{result element type 'f16' does not match the operands' element type 'f32'}}
  %0 = attn.project %x, %w : (tensor<2x3x4xf32>, tensor<8x4xf32>) -> tensor<2x3x8xf16>
  return
}

// -----

func.func @project_dynamic_static_result(%x: tensor<2x?x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{result dim 1 is 3, expected ? (inferred result type 'tensor<2x?x8xf32>')}}
  %0 = attn.project %x, %w : (tensor<2x?x4xf32>, tensor<8x4xf32>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @project_int_input(%x: tensor<2x3x4xi32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = attn.project %x, %w : (tensor<2x3x4xi32>, tensor<8x4xf32>) -> tensor<2x3x8xf32>
  return
}

//===-- split_heads / merge_heads ---------------------------------------===//

// -----

func.func @split_num_heads(%x: tensor<2x3x64xf32>) {
  // expected-error @+1 {{attribute 'num_heads' must be positive, got 0}}
  %0 = attn.split_heads %x {num_heads = 0 : i64} : (tensor<2x3x64xf32>) -> tensor<2x0x3x0xf32>
  return
}

// -----

func.func @split_rank(%x: tensor<3x64xf32>) {
  // expected-error @+1 {{operand 'input' must have rank 3 [B,T,h*D], got rank 2}}
  %0 = attn.split_heads %x {num_heads = 8 : i64} : (tensor<3x64xf32>) -> tensor<1x8x3x8xf32>
  return
}

// -----

func.func @split_not_divisible(%x: tensor<2x10x65xf32>) {
  // expected-error @+1 {{operand 'input' width (dim 2) 65 is not divisible by num_heads 8 (d_model must be divisible by n_heads)}}
  %0 = attn.split_heads %x {num_heads = 8 : i64} : (tensor<2x10x65xf32>) -> tensor<2x8x10x8xf32>
  return
}

// -----

func.func @split_result(%x: tensor<2x10x64xf32>) {
  // expected-error @+1 {{result dim 3 is 16, expected 8 (inferred result type 'tensor<2x8x10x8xf32>')}}
  %0 = attn.split_heads %x {num_heads = 8 : i64} : (tensor<2x10x64xf32>) -> tensor<2x8x10x16xf32>
  return
}

// -----

func.func @merge_rank(%x: tensor<2x10x64xf32>) {
  // expected-error @+1 {{operand 'input' must have rank 4 [B,h,T,D], got rank 3}}
  %0 = attn.merge_heads %x : (tensor<2x10x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @merge_result(%x: tensor<2x8x10x8xf32>) {
  // expected-error @+1 {{result dim 1 is 8, expected 10 (inferred result type 'tensor<2x10x64xf32>')}}
  %0 = attn.merge_heads %x : (tensor<2x8x10x8xf32>) -> tensor<2x8x80xf32>
  return
}

// -----

func.func @merge_result_rank(%x: tensor<2x8x10x8xf32>) {
  // expected-error @+1 {{result rank is 4, expected 3 (inferred result type 'tensor<2x10x64xf32>')}}
  %0 = attn.merge_heads %x : (tensor<2x8x10x8xf32>) -> tensor<2x10x8x8xf32>
  return
}

//===-- scores / weighted_sum -------------------------------------------===//

// -----

func.func @scores_query_rank(%q: tensor<4x7x16xf32>, %k: tensor<1x4x9x16xf32>) {
  // expected-error @+1 {{operand 'query' must have rank 4 [B,H,Tq,D], got rank 3}}
  %0 = attn.scores %q, %k : (tensor<4x7x16xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scores_key_rank(%q: tensor<1x4x7x16xf32>, %k: tensor<4x9x16xf32>) {
  // expected-error @+1 {{operand 'key' must have rank 4 [B,Hkv,Tk,D], got rank 3}}
  %0 = attn.scores %q, %k : (tensor<1x4x7x16xf32>, tensor<4x9x16xf32>) -> tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scores_types(%q: tensor<1x4x7x16xf32>, %k: tensor<1x4x9x16xf16>) {
  // expected-error @+1 {{operand 'key' element type 'f16' does not match 'query' element type 'f32'}}
  %0 = attn.scores %q, %k : (tensor<1x4x7x16xf32>, tensor<1x4x9x16xf16>) -> tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scores_batch(%q: tensor<1x4x7x16xf32>, %k: tensor<2x4x9x16xf32>) {
  // expected-error @+1 {{operand 'key' batch (dim 0) is 2, expected 1 (batch B of 'query')}}
  %0 = attn.scores %q, %k : (tensor<1x4x7x16xf32>, tensor<2x4x9x16xf32>) -> tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scores_gqa_heads(%q: tensor<1x4x7x16xf32>, %k: tensor<1x3x9x16xf32>) {
  // expected-error @+1 {{'query' heads H = 4 is not a multiple of 'key' heads Hkv = 3 (H % Hkv must be 0)}}
  %0 = attn.scores %q, %k : (tensor<1x4x7x16xf32>, tensor<1x3x9x16xf32>) -> tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scores_head_dim(%q: tensor<1x4x7x16xf32>, %k: tensor<1x4x9x32xf32>) {
  // expected-error @+1 {{operand 'key' head dim (dim 3) is 32, expected 16 (head dim D of 'query')}}
  %0 = attn.scores %q, %k : (tensor<1x4x7x16xf32>, tensor<1x4x9x32xf32>) -> tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scores_result(%q: tensor<1x4x7x16xf32>, %k: tensor<1x4x9x16xf32>) {
  // expected-error @+1 {{result dim 3 is 7, expected 9 (inferred result type 'tensor<1x4x7x9xf32>')}}
  %0 = attn.scores %q, %k : (tensor<1x4x7x16xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x7x7xf32>
  return
}

// -----

func.func @wsum_probs_rank(%p: tensor<4x7x9xf32>, %v: tensor<1x4x9x16xf32>) {
  // expected-error @+1 {{operand 'probs' must have rank 4 [B,H,Tq,Tk], got rank 3}}
  %0 = attn.weighted_sum %p, %v : (tensor<4x7x9xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x7x16xf32>
  return
}

// -----

func.func @wsum_value_rank(%p: tensor<1x4x7x9xf32>, %v: tensor<4x9x16xf32>) {
  // expected-error @+1 {{operand 'value' must have rank 4 [B,Hkv,Tk,Dv], got rank 3}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x7x9xf32>, tensor<4x9x16xf32>) -> tensor<1x4x7x16xf32>
  return
}

// -----

func.func @wsum_types(%p: tensor<1x4x7x9xf32>, %v: tensor<1x4x9x16xbf16>) {
  // expected-error @+1 {{operand 'value' element type 'bf16' does not match 'probs' element type 'f32'}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x7x9xf32>, tensor<1x4x9x16xbf16>) -> tensor<1x4x7x16xf32>
  return
}

// -----

func.func @wsum_batch(%p: tensor<1x4x7x9xf32>, %v: tensor<3x4x9x16xf32>) {
  // expected-error @+1 {{operand 'value' batch (dim 0) is 3, expected 1 (batch B of 'probs')}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x7x9xf32>, tensor<3x4x9x16xf32>) -> tensor<1x4x7x16xf32>
  return
}

// -----

func.func @wsum_heads(%p: tensor<1x4x7x9xf32>, %v: tensor<1x8x9x16xf32>) {
  // expected-error @+1 {{'probs' heads H = 4 is not a multiple of 'value' heads Hkv = 8 (H % Hkv must be 0)}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x7x9xf32>, tensor<1x8x9x16xf32>) -> tensor<1x4x7x16xf32>
  return
}

// -----

func.func @wsum_length(%p: tensor<1x4x7x9xf32>, %v: tensor<1x4x10x16xf32>) {
  // expected-error @+1 {{operand 'value' length (dim 2) is 10, expected 9 (key length Tk, dim 3 of 'probs')}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x7x9xf32>, tensor<1x4x10x16xf32>) -> tensor<1x4x7x16xf32>
  return
}

// -----

func.func @wsum_result(%p: tensor<1x4x7x9xf32>, %v: tensor<1x4x9x16xf32>) {
  // expected-error @+1 {{result dim 3 is 9, expected 16 (inferred result type 'tensor<1x4x7x16xf32>')}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x7x9xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x7x9xf32>
  return
}

//===-- scale / mask / softmax / dropout ---------------------------------===//

// -----

func.func @scale_zero(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive finite number, got 0}}
  %0 = attn.scale %s {scale = 0.0 : f32} : tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scale_negative(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive finite number, got -0.5}}
  %0 = attn.scale %s {scale = -0.5 : f32} : tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scale_inf(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive finite number, got inf}}
  %0 = attn.scale %s {scale = 0x7F800000 : f32} : tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scale_nan(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive finite number, got nan}}
  %0 = attn.scale %s {scale = 0x7FC00000 : f32} : tensor<1x4x7x9xf32>
  return
}

// -----

func.func @scale_result_type(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "attn.scale"(%s) {scale = 2.0 : f32} : (tensor<1x4x7x9xf32>) -> tensor<1x4x7x9xf16>
  return
}

// -----

func.func @mask_input_rank(%s: tensor<4x7x9xf32>) {
  // expected-error @+1 {{operand 'input' must have rank 4 [B,H,Tq,Tk], got rank 3}}
  %0 = attn.mask %s {causal = #attn.causal<top_left>} : tensor<4x7x9xf32>
  return
}

// -----

func.func @mask_type(%s: tensor<1x4x7x9xf32>, %m: tensor<7x9xf16>) {
  // expected-error @+1 {{operand 'mask' element type 'f16' must be i1 (keep mask) or the scores' element type 'f32' (additive mask)}}
  %0 = attn.mask %s, %m : tensor<1x4x7x9xf32>, tensor<7x9xf16>
  return
}

// -----

func.func @mask_int_type(%s: tensor<1x4x7x9xf32>, %m: tensor<7x9xi8>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 1-bit signless integer or 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = attn.mask %s, %m : tensor<1x4x7x9xf32>, tensor<7x9xi8>
  return
}

// -----

func.func @mask_rank(%s: tensor<1x4x7x9xf32>, %m: tensor<1x1x1x7x9xi1>) {
  // expected-error @+1 {{operand 'mask' has rank 5, expected at most 4 to broadcast to [B,H,Tq,Tk]}}
  %0 = attn.mask %s, %m : tensor<1x4x7x9xf32>, tensor<1x1x1x7x9xi1>
  return
}

// -----

func.func @mask_broadcast(%s: tensor<1x4x7x9xf32>, %m: tensor<1x2x1x9xi1>) {
  // expected-error @+1 {{operand 'mask' dim 1 is 2, not broadcastable to H = 4 (the mask must broadcast to [B,H,Tq,Tk] = [1,4,7,9])}}
  %0 = attn.mask %s, %m : tensor<1x4x7x9xf32>, tensor<1x2x1x9xi1>
  return
}

// -----

func.func @mask_broadcast_trailing(%s: tensor<1x4x7x9xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{operand 'mask' dim 0 is 8, not broadcastable to Tk = 9}}
  %0 = attn.mask %s, %m : tensor<1x4x7x9xf32>, tensor<8xf32>
  return
}

// -----

func.func @mask_result_type(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "attn.mask"(%s) <{causal = #attn.causal<top_left>, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>}> : (tensor<1x4x7x9xf32>) -> tensor<1x4x7x8xf32>
  return
}

// -----

func.func @mask_bad_causal_kind(%s: tensor<1x4x7x9xf32>) {
  // expected-error @+2 {{expected ::mlir::attn::CausalKind to be one of: top_left, bottom_right}}
  // expected-error @+1 {{failed to parse Attn_CausalKindAttr parameter 'value' which is to be a `::mlir::attn::CausalKind`}}
  %0 = attn.mask %s {causal = #attn.causal<upper>} : tensor<1x4x7x9xf32>
  return
}

// -----

func.func @softmax_rank0(%s: tensor<f32>) {
  // expected-error @+1 {{operand 'input' must have rank >= 1, got rank 0}}
  %0 = attn.softmax %s : tensor<f32>
  return
}

// -----

func.func @dropout_rate_one(%p: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{attribute 'rate' must be in [0, 1), got 1}}
  %0 = attn.dropout %p {rate = 1.0 : f32} : tensor<1x4x7x9xf32>
  return
}

// -----

func.func @dropout_rate_negative(%p: tensor<1x4x7x9xf32>) {
  // expected-error @+1 {{attribute 'rate' must be in [0, 1), got -0.25}}
  %0 = attn.dropout %p {rate = -0.25 : f32} : tensor<1x4x7x9xf32>
  return
}

//===-- sdpa -------------------------------------------------------------===//

// -----

func.func @sdpa_head_dim(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x32xf32>, %v: tensor<2x4x129x64xf32>) {
  // expected-error @+1 {{operand 'key' head dim (dim 3) is 32, expected 64 (head dim D of 'query')}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x32xf32>, tensor<2x4x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_gqa(%q: tensor<2x6x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x64xf32>) {
  // expected-error @+1 {{'query' heads H = 6 is not a multiple of 'key' heads Hkv = 4 (H % Hkv must be 0)}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x6x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>) -> tensor<2x6x31x64xf32>
  return
}

// -----

func.func @sdpa_value_rank(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<8x129x64xf32>) {
  // expected-error @+1 {{operand 'value' must have rank 4 [B,Hkv,Tk,Dv], got rank 3}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<8x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_value_type(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x64xf16>) {
  // expected-error @+1 {{operand 'value' element type 'f16' does not match 'query' element type 'f32'}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf16>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_value_batch(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<1x4x129x64xf32>) {
  // expected-error @+1 {{operand 'value' batch (dim 0) is 1, expected 2 (batch B of 'query')}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<1x4x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_value_heads(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x2x129x64xf32>) {
  // expected-error @+1 {{operand 'value' heads (dim 1) is 2, expected 4 (heads Hkv of 'key')}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x2x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_kv_length(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x128x64xf32>) {
  // expected-error @+1 {{operand 'value' length (dim 2) is 128, expected 129 (length Tk of 'key')}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x128x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_mask_broadcast(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %m: tensor<2x1x1x31xi1>) {
  // expected-error @+1 {{operand 'mask' dim 3 is 31, not broadcastable to Tk = 129 (the mask must broadcast to [B,H,Tq,Tk] = [2,4,31,129])}}
  %0 = attn.sdpa %q, %k, %k, %m : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>, tensor<2x1x1x31xi1>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_mask_type(%q: tensor<2x4x31x64xf16>, %k: tensor<2x4x129x64xf16>, %m: tensor<31x129xf32>) {
  // expected-error @+1 {{operand 'mask' element type 'f32' must be i1 (keep mask) or the scores' element type 'f16' (additive mask)}}
  %0 = attn.sdpa %q, %k, %k, %m : (tensor<2x4x31x64xf16>, tensor<2x4x129x64xf16>, tensor<2x4x129x64xf16>, tensor<31x129xf32>) -> tensor<2x4x31x64xf16>
  return
}

// -----

func.func @sdpa_scale(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive finite number, got -0.125}}
  %0 = attn.sdpa %q, %k, %k {scale = -0.125 : f32} : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_dropout(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>) {
  // expected-error @+1 {{attribute 'dropout_rate' must be in [0, 1), got 1.5}}
  %0 = attn.sdpa %q, %k, %k {dropout_rate = 1.5 : f32} : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_result(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x32xf32>) {
  // expected-error @+1 {{result dim 3 is 64, expected 32 (inferred result type 'tensor<2x4x31x32xf32>')}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x32xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @sdpa_dynamic_mismatch(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x32xf32>) {
  // expected-error @+1 {{operand 'key' head dim (dim 3) is 32, expected 64 (head dim D of 'query')}}
  %0 = attn.sdpa %q, %k, %k : (tensor<?x4x?x64xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  return
}

//===-- mha --------------------------------------------------------------===//

// -----

func.func @mha_num_heads(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{attribute 'num_heads' must be positive, got 0}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 0 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_num_kv_heads(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{attribute 'num_kv_heads' must be positive, got -1}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64, num_kv_heads = -1 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_gqa(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{num_heads H = 8 is not a multiple of num_kv_heads Hkv = 3 (H % Hkv must be 0)}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64, num_kv_heads = 3 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_input_rank(%x: tensor<10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{operand 'query_input' must have rank 3 [B,Tq,E], got rank 2}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<10x64xf32>, tensor<10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<10x64xf32>
  return
}

// -----

func.func @mha_kv_rank(%x: tensor<2x10x64xf32>, %y: tensor<10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{operand 'kv_input' must have rank 3 [B,Tk,Ekv], got rank 2}}
  %0 = attn.mha %x, %y, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_kv_batch(%x: tensor<2x10x64xf32>, %y: tensor<3x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{operand 'kv_input' batch (dim 0) is 3, expected 2 (batch B of 'query_input')}}
  %0 = attn.mha %x, %y, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<3x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_kv_type(%x: tensor<2x10x64xf32>, %y: tensor<2x10x64xf16>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{operand 'kv_input' element type 'f16' does not match 'query_input' element type 'f32'}}
  %0 = attn.mha %x, %y, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf16>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_weight_rank(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %w3: tensor<1x64x64xf32>) {
  // expected-error @+1 {{operand 'wv' must have rank 2 [Out,In], got rank 3}}
  %0 = attn.mha %x, %x, %w, %w, %w3, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_weight_type(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wh: tensor<64x64xbf16>) {
  // expected-error @+1 {{operand 'wo' element type 'bf16' does not match 'query_input' element type 'f32'}}
  %0 = attn.mha %x, %x, %w, %w, %w, %wh {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wq_in(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wq: tensor<64x32xf32>) {
  // expected-error @+1 {{operand 'wq' input width (dim 1) is 32, expected 64 (width E of 'query_input', weight layout out_in)}}
  %0 = attn.mha %x, %x, %wq, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x32xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wq_heads(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wq: tensor<60x64xf32>) {
  // expected-error @+1 {{operand 'wq' output width (dim 0) 60 is not divisible by num_heads 8 (d_model must be divisible by n_heads)}}
  %0 = attn.mha %x, %x, %wq, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<60x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wk_in(%x: tensor<2x10x64xf32>, %y: tensor<2x12x48xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{operand 'wk' input width (dim 1) is 64, expected 48 (width Ekv of 'kv_input', weight layout out_in)}}
  %0 = attn.mha %x, %y, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x12x48xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wk_out(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wk: tensor<32x64xf32>) {
  // expected-error @+1 {{operand 'wk' output width (dim 0) is 32, expected 64 (num_kv_heads * head dim = 8 * 8)}}
  %0 = attn.mha %x, %x, %w, %wk, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wv_in(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wv: tensor<64x32xf32>) {
  // expected-error @+1 {{operand 'wv' input width (dim 1) is 32, expected 64 (width Ekv of 'kv_input', weight layout out_in)}}
  %0 = attn.mha %x, %x, %w, %w, %wv, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wv_out(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wk: tensor<32x64xf32>, %wv: tensor<30x64xf32>) {
  // expected-error @+1 {{operand 'wv' output width (dim 0) 30 is not divisible by num_kv_heads 4}}
  %0 = attn.mha %x, %x, %w, %wk, %wv, %w {num_heads = 8 : i64, num_kv_heads = 4 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<30x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_wo_in(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %wo: tensor<64x32xf32>) {
  // expected-error @+1 {{operand 'wo' input width (dim 1) is 32, expected 64 (num_heads * value head dim = 8 * 8)}}
  %0 = attn.mha %x, %x, %w, %w, %w, %wo {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_partial_bias(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{operands 'bq', 'bk', 'bv' must be given together, got 1 of 3}}
  %0 = "attn.mha"(%x, %x, %w, %w, %w, %w, %b) <{num_heads = 8 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_bias_rank(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %b: tensor<1x64xf32>) {
  // expected-error @+1 {{operand 'bo' must have rank 1 [Out], got rank 2}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w out_bias(%b) {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<1x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_bias_length(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %bk: tensor<32xf32>) {
  // expected-error @+1 {{operand 'bk' length (dim 0) is 32, expected 64 (output width of 'wk')}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w qkv_bias(%b, %bk, %b) {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_mask(%x: tensor<2x10x64xf32>, %y: tensor<2x12x64xf32>, %w: tensor<64x64xf32>, %m: tensor<10x10xi1>) {
  // expected-error @+1 {{operand 'mask' dim 1 is 10, not broadcastable to Tk = 12 (the mask must broadcast to [B,H,Tq,Tk] = [2,8,10,12])}}
  %0 = attn.mha %x, %y, %w, %w, %w, %w mask(%m) {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x12x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<10x10xi1>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_scale(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{attribute 'scale' must be a positive finite number, got 0}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64, scale = 0.0 : f32} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_dropout(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{attribute 'dropout_rate' must be in [0, 1), got -0.5}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64, dropout_rate = -0.5 : f32} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

func.func @mha_result(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{result dim 1 is 12, expected 10 (inferred result type 'tensor<2x10x64xf32>')}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x12x64xf32>
  return
}

// -----

func.func @sdpa_seed_without_rate(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>) {
  // expected-error @+1 {{attribute 'dropout_seed' is given without 'dropout_rate'}}
  %0 = attn.sdpa %q, %k, %k {dropout_seed = 7 : i64} : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>) -> tensor<2x4x31x64xf32>
  return
}

// -----

func.func @mha_seed_without_rate(%x: tensor<2x10x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{attribute 'dropout_seed' is given without 'dropout_rate'}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 8 : i64, dropout_seed = 1 : i64} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return
}

// -----

// Attributes an op does not define are errors (they used to be ignored:
// {is_causal = true} ran non-causal), with the attn spelling of PyTorch's
// names and the closest name for typos.
func.func @is_causal(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op has no attribute 'is_causal'; write causal = #attn.causal<top_left> (PyTorch's is_causal=True), or causal = #attn.causal<bottom_right> for FlashAttention's alignment (KV-cache decoding)}}
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @casual(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op has no attribute 'casual'; did you mean 'causal'?}}
  %o = attn.sdpa %q, %q, %q {casual = #attn.causal<top_left>} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @sclae(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op has no attribute 'sclae'; did you mean 'scale'?}}
  %o = attn.sdpa %q, %q, %q {sclae = 0.5 : f32} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @dropout_p(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op has no attribute 'dropout_p'; write dropout_rate = <p> : f32 (with dropout_seed = <n> : i64)}}
  %o = attn.sdpa %q, %q, %q {dropout_p = 0.1} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @mha_typo(%x: tensor<2x5x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x5x16xf32> {
  // expected-error @+1 {{'attn.mha' op has no attribute 'num_head'; did you mean 'num_heads'?}}
  %y = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 4 : i64, num_head = 4 : i64} : (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

// -----

func.func @no_attributes(%s: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'attn.softmax' op has no attribute 'axis'; attn.softmax takes no attributes (a dialect-prefixed name, e.g. 'mytool.axis', is kept as a discardable attribute)}}
  %p = attn.softmax %s {axis = -1 : i64} : tensor<1x1x4x4xf32>
  return %p : tensor<1x1x4x4xf32>
}

// -----

// The constraint messages show the accepted spelling.
func.func @causal_bool(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{attribute 'causal' failed to satisfy constraint: causal mask alignment, written #attn.causal<top_left> (PyTorch's is_causal=True) or #attn.causal<bottom_right>}}
  %o = attn.sdpa %q, %q, %q {causal = true} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @scale_f64(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute, written with its type (e.g. `0.125 : f32`; a bare `0.125` is an f64)}}
  %o = attn.sdpa %q, %q, %q {scale = 0.125} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @layout_string(%x: tensor<2x5x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x5x16xf32> {
  // expected-error @+1 {{attribute 'layout' failed to satisfy constraint: projection weight layout, written #attn.layout<out_in> (nn.Linear's [Out,In], the default) or #attn.layout<in_out>}}
  %y = attn.project %x, %w {layout = "in_out"} : (tensor<2x5x16xf32>, tensor<16x16xf32>) -> tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

// -----

func.func @softcap_zero(%s: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{attribute 'cap' must be a positive finite number, got 0}}
  %0 = attn.softcap %s {cap = 0.0 : f32} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @softcap_inf(%q: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{attribute 'softcap' must be a positive finite number, got inf}}
  %0 = attn.sdpa %q, %q, %q {softcap = 0x7F800000 : f32} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @softcap_negative(%q: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{attribute 'softcap' must be a positive finite number, got -1}}
  %0 = attn.sdpa %q, %q, %q {softcap = -1.0 : f32} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @window_negative(%q: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{window bound 'left' must be >= 0 (leave it out for unbounded), got -3}}
  %0 = attn.sdpa %q, %q, %q {window = #attn.window<left = -3>} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @window_negative_right(%s: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{window bound 'right' must be >= 0 (leave it out for unbounded), got -1}}
  %0 = attn.mask %s {window = #attn.window<right = -1>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @window_unknown_param(%s: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{unknown window parameter 'size' (expected left, right or align)}}
  %0 = attn.mask %s {window = #attn.window<size = 4>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @window_bad_align(%s: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{window 'align' must be top_left or bottom_right, got 'center'}}
  %0 = attn.mask %s {window = #attn.window<left = 2, align = center>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @window_align_vs_causal(%q: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{window align = top_left differs from causal = bottom_right}}
  %0 = attn.sdpa %q, %q, %q {causal = #attn.causal<bottom_right>, window = #attn.window<left = 2, align = top_left>} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @alibi_wrong_heads(%q: tensor<1x4x8x16xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{operand 'alibi_slopes' heads (dim 0) is 8, expected 4 (query heads H)}}
  %0 = attn.sdpa %q, %q, %q alibi(%s) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<8xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @alibi_wrong_batch(%q: tensor<2x4x8x16xf32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{operand 'alibi_slopes' batch (dim 0) is 3, expected 2 (batch B)}}
  %0 = attn.sdpa %q, %q, %q alibi(%s) : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<3x4xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @alibi_rank(%s: tensor<1x4x8x8xf32>, %a: tensor<1x4x1xf32>) {
  // expected-error @+1 {{operand 'alibi_slopes' must have rank 1 [H] or 2 [B,H], got rank 3}}
  %0 = attn.mask %s alibi(%a : tensor<1x4x1xf32>) : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @alibi_type(%q: tensor<1x4x8x16xf16>, %s: tensor<4xf16>) {
  // expected-error @+1 {{must be ALiBi slopes: a ranked tensor of 32-bit float values, but got 'tensor<4xf16>'}}
  %0 = attn.sdpa %q, %q, %q alibi(%s) : (tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<4xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @key_lengths_batch(%q: tensor<2x4x8x16xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{operand 'key_lengths' length (dim 0) is 3, expected 2 (batch B)}}
  %0 = attn.sdpa %q, %q, %q key_lengths(%l) : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<3xi32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @key_lengths_rank(%s: tensor<2x4x8x8xf32>, %l: tensor<2x1xi32>) {
  // expected-error @+1 {{operand 'key_lengths' must have rank 1 [B], got rank 2}}
  %0 = attn.mask %s key_lengths(%l : tensor<2x1xi32>) : tensor<2x4x8x8xf32>
  return
}

// -----

func.func @key_lengths_float(%q: tensor<2x4x8x16xf32>, %l: tensor<2xf32>) {
  // expected-error @+1 {{must be key lengths: a ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = attn.sdpa %q, %q, %q key_lengths(%l) : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @rope_length(%x: tensor<1x4x8x16xf32>, %c: tensor<9x4xf32>) {
  // expected-error @+1 {{operand 'cos' length (dim 0) is 9, expected 8 (length T, dim 2 of 'input')}}
  %0 = attn.rope %x, %c, %c : tensor<1x4x8x16xf32>, tensor<9x4xf32>, tensor<9x4xf32>
  return
}

// -----

func.func @rope_too_wide(%x: tensor<1x4x8x16xf32>, %c: tensor<8x9xf32>) {
  // expected-error @+1 {{rotary dims R = 2 * 9 = 18 exceed the head dim D = 16 of 'input' (R must be <= D)}}
  %0 = attn.rope %x, %c, %c : tensor<1x4x8x16xf32>, tensor<8x9xf32>, tensor<8x9xf32>
  return
}

// -----

func.func @rope_empty(%x: tensor<1x4x8x16xf32>, %c: tensor<8x0xf32>) {
  // expected-error @+1 {{operand 'cos' rotary half-width (dim 1) is 0, expected >= 1}}
  %0 = attn.rope %x, %c, %c : tensor<1x4x8x16xf32>, tensor<8x0xf32>, tensor<8x0xf32>
  return
}

// -----

func.func @rope_sin_type(%x: tensor<1x4x8x16xf32>, %c: tensor<8x4xf32>, %s: tensor<8x8xf32>) {
  // expected-error @+1 {{operands 'cos' and 'sin' must have the same type}}
  %0 = attn.rope %x, %c, %s : tensor<1x4x8x16xf32>, tensor<8x4xf32>, tensor<8x8xf32>
  return
}

// -----

func.func @rope_batch(%x: tensor<2x4x8x16xf32>, %c: tensor<3x8x4xf32>) {
  // expected-error @+1 {{operand 'cos' batch (dim 0) is 3, expected 2 (batch B of 'input')}}
  %0 = attn.rope %x, %c, %c : tensor<2x4x8x16xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32>
  return
}

// -----

func.func @rope_table_type(%x: tensor<1x4x8x16xf16>, %c: tensor<8x4xbf16>) {
  // expected-error @+1 {{operand 'cos' element type 'bf16' must be f32 or the 'input' element type 'f16'}}
  %0 = attn.rope %x, %c, %c : tensor<1x4x8x16xf16>, tensor<8x4xbf16>, tensor<8x4xbf16>
  return
}

// -----

func.func @rope_dynamic_head_dim(%x: tensor<1x4x8x?xf32>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{operand 'input' head dim (dim 3) must be static for rope}}
  %0 = attn.rope %x, %c, %c : tensor<1x4x8x?xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @mha_rope_cross_length(%xq: tensor<2x5x32xf32>, %xkv: tensor<2x9x32xf32>,
                                 %w: tensor<32x32xf32>, %c: tensor<5x2xf32>) {
  // expected-error @+1 {{operand 'cos' length (dim 0) is 5, expected 9 (length T, dim 2 of 'key heads')}}
  %0 = attn.mha %xq, %xkv, %w, %w, %w, %w rope(%c, %c) {num_heads = 4 : i64}
      : (tensor<2x5x32xf32>, tensor<2x9x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

func.func @mha_rope_style_alone(%x: tensor<2x5x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{attribute 'rope_style' is given without rope(%cos, %sin)}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 4 : i64, rope_style = #attn.rope<interleaved>}
      : (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

func.func @mha_alibi_heads(%x: tensor<2x5x32xf32>, %w: tensor<32x32xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{operand 'alibi_slopes' heads (dim 0) is 2, expected 4 (query heads H)}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w alibi(%s) {num_heads = 4 : i64}
      : (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<2xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

func.func @mha_sinks_heads(%x: tensor<2x5x32xf32>, %w: tensor<32x32xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{operand 'sinks' heads (dim 0) is 2, expected 4 (query heads H)}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w sinks(%s) {num_heads = 4 : i64}
      : (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<2xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

func.func @mha_sinks_type(%x: tensor<2x5x32xf32>, %w: tensor<32x32xf32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{operand #6 must be attention sinks: a ranked tensor of 32-bit float values}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w sinks(%s) {num_heads = 4 : i64}
      : (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>, tensor<4xf16>) -> tensor<2x5x32xf32>
  return
}

// -----

func.func @mha_softcap(%x: tensor<2x5x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{attribute 'softcap' must be a positive finite number, got nan}}
  %0 = attn.mha %x, %x, %w, %w, %w, %w {num_heads = 4 : i64, softcap = 0x7FC00000 : f32}
      : (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
         tensor<32x32xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

//===-- sdpa_partial, logsumexp, merge_partial ------------------------===//

func.func @sdpa_partial_lse_shape(%q: tensor<1x4x32x64xf32>, %k: tensor<1x4x64x64xf32>) {
  // expected-error @+1 {{result dim 2 is 31, expected 32}}
  %o, %l = attn.sdpa_partial %q, %k, %k
      : (tensor<1x4x32x64xf32>, tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>)
        -> (tensor<1x4x32x64xf32>, tensor<1x4x31xf32>)
  return
}

// -----

func.func @sdpa_partial_result_f16(%q: tensor<1x4x32x64xf16>, %k: tensor<1x4x64x64xf16>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 64-bit float values, but got 'tensor<1x4x32x64xf16>'}}
  %o, %l = "attn.sdpa_partial"(%q, %k, %k) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x4x32x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>)
        -> (tensor<1x4x32x64xf16>, tensor<1x4x32xf32>)
  return
}

// -----

func.func @sdpa_partial_heads(%q: tensor<1x4x32x64xf32>, %k: tensor<1x3x64x64xf32>) {
  // expected-error @+1 {{'query' heads H = 4 is not a multiple of 'key' heads Hkv = 3}}
  %o, %l = attn.sdpa_partial %q, %k, %k
      : (tensor<1x4x32x64xf32>, tensor<1x3x64x64xf32>, tensor<1x3x64x64xf32>)
        -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>)
  return
}

// -----

func.func @sdpa_partial_dropout_rate(%q: tensor<1x4x32x64xf32>) {
  // expected-error @+1 {{attribute 'dropout_rate' must be in [0, 1), got -0.5}}
  %o, %l = attn.sdpa_partial %q, %q, %q {dropout_rate = -0.5 : f32}
      : (tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>)
        -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>)
  return
}

// -----

func.func @logsumexp_shape(%s: tensor<2x8xf32>) {
  // expected-error @+1 {{result dim 0 is 8, expected 2}}
  %r = attn.logsumexp %s : tensor<2x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @sdpa_partial_sinks_heads(%q: tensor<1x4x8x16xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{operand 'sinks' heads (dim 0) is 2, expected 4 (query heads H)}}
  %o, %l = attn.sdpa_partial %q, %q, %q sinks(%s)
      : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<2xf32>)
        -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
  return
}

// -----

func.func @logsumexp_sinks_rank(%x: tensor<4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{operand 'input' must have rank 4 [B,H,Tq,Tk] (with sinks), got rank 3}}
  %r = attn.logsumexp %x sinks(%s : tensor<4xf32>) : tensor<4x8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @logsumexp_sinks_heads(%x: tensor<1x4x8x16xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{operand 'sinks' heads (dim 0) is 3, expected 4 (query heads H)}}
  %r = attn.logsumexp %x sinks(%s : tensor<3xf32>) : tensor<1x4x8x16xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @merge_partial_lse_rank(%o: tensor<1x4x32x8xf32>, %l: tensor<1x4x32x8xf32>) {
  // expected-error @+1 {{operand 'lse1' must have rank 3 (the outputs' rank minus 1), got rank 4}}
  %r, %s = attn.merge_partial %o, %l, %o, %l : tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32>
  return
}

// -----

func.func @merge_partial_lse_dim(%o: tensor<1x4x32x8xf32>, %l: tensor<1x4x16xf32>) {
  // expected-error @+1 {{operand 'lse1' dim 2 is 16, expected 32 (dim 2 of 'out1')}}
  %r, %s = attn.merge_partial %o, %l, %o, %l : tensor<1x4x32x8xf32>, tensor<1x4x16xf32>
  return
}

// -----

func.func @diagonal_needs_causal(%s: tensor<1x4x8x16xf32>, %d: index) {
  // expected-error @+1 {{operand 'diagonal' needs a rule that uses the diagonal: causal = #attn.causal<top_left> or a bounded window (it moves that diagonal to i + diagonal), got neither}}
  %m = attn.mask %s diagonal(%d) : tensor<1x4x8x16xf32>
  return
}

// -----

func.func @diagonal_needs_top_left(%q: tensor<1x4x8x32xf32>, %k: tensor<1x4x16x32xf32>, %d: index) {
  // expected-error @+1 {{operand 'diagonal' moves the top-left diagonal, got causal = bottom_right}}
  %o, %l = attn.sdpa_partial %q, %k, %k diagonal(%d) {causal = #attn.causal<bottom_right>}
      : (tensor<1x4x8x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, index)
        -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>)
  return
}

// -----

func.func @diagonal_window_bottom_right(%q: tensor<1x4x8x32xf32>, %k: tensor<1x4x16x32xf32>, %d: index) {
  // expected-error @+1 {{operand 'diagonal' moves the top-left diagonal, got a window aligned bottom_right (write align = top_left)}}
  %o, %l = attn.sdpa_partial %q, %k, %k diagonal(%d) {window = #attn.window<left = 4>}
      : (tensor<1x4x8x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>, index)
        -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>)
  return
}

// -----

//===-- sinks ------------------------------------------------------------===//

func.func @sdpa_sinks_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{operand 'sinks' heads (dim 0) is 2, expected 4 (query heads H)}}
  %o = attn.sdpa %q, %k, %k sinks(%s)
      : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<2xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @sdpa_sinks_rank(%q: tensor<1x4x8x16xf32>, %s: tensor<1x4xf32>) {
  // expected-error @+1 {{operand 'sinks' must have rank 1 [H], got rank 2}}
  %o = attn.sdpa %q, %q, %q sinks(%s)
      : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @sdpa_sinks_type(%q: tensor<1x4x8x16xf16>, %s: tensor<4xf16>) {
  // expected-error @+1 {{operand #3 must be attention sinks: a ranked tensor of 32-bit float values, but got 'tensor<4xf16>'}}
  %o = attn.sdpa %q, %q, %q sinks(%s)
      : (tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<4xf16>) -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @softmax_sinks_rank(%x: tensor<4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{operand 'input' must have rank 4 [B,H,Tq,Tk] (with sinks), got rank 3}}
  %p = attn.softmax %x sinks(%s : tensor<4xf32>) : tensor<4x8x16xf32>
  return
}

// -----

func.func @softmax_sinks_heads(%x: tensor<1x4x8x16xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{operand 'sinks' heads (dim 0) is 8, expected 4 (query heads H)}}
  %p = attn.softmax %x sinks(%s : tensor<8xf32>) : tensor<1x4x8x16xf32>
  return
}
