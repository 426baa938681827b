// Examples moved out of the op descriptions (each keeps at most two): they
// parse, verify, and print back the same op.
// RUN: attn-opt %s -verify-each | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @mask_window_alibi_lengths
// CHECK: attn.mask
func.func @mask_window_alibi_lengths(%s: tensor<2x8x16x64xf32>, %slopes: tensor<8xf32>,
                                     %len: tensor<2xi32>) -> tensor<2x8x16x64xf32> {
  %y = attn.mask %s alibi(%slopes : tensor<8xf32>) key_lengths(%len : tensor<2xi32>)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 31>}
      : tensor<2x8x16x64xf32>
  return %y : tensor<2x8x16x64xf32>
}

// GQA (`num_heads = 8`, `num_kv_heads = 2`, `D = Dv = 32`) in bf16 with
// `in_out` weights and dynamic batch/sequence:
// CHECK-LABEL: func.func @mha_gqa_bf16_in_out
// CHECK: attn.mha
func.func @mha_gqa_bf16_in_out(%x: tensor<?x?x256xbf16>,
                               %wq: tensor<256x256xbf16>, %wk: tensor<256x64xbf16>,
                               %wv: tensor<256x64xbf16>, %wo: tensor<256x256xbf16>)
    -> tensor<?x?x256xbf16> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo
      {num_heads = 8 : i64, num_kv_heads = 2 : i64, layout = #attn.layout<in_out>,
       causal = #attn.causal<top_left>, dropout_rate = 0.1 : f32, dropout_seed = 7 : i64}
      : (tensor<?x?x256xbf16>, tensor<?x?x256xbf16>,
         tensor<256x256xbf16>, tensor<256x64xbf16>, tensor<256x64xbf16>, tensor<256x256xbf16>)
        -> tensor<?x?x256xbf16>
  return %y : tensor<?x?x256xbf16>
}

// Dynamic batch and sequence lengths (the result keeps `?` for `B` and `Tq`):
// CHECK-LABEL: func.func @sdpa_dynamic
// CHECK: attn.sdpa
func.func @sdpa_dynamic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>,
                        %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// GQA KV-cache decode step (`H = 8`, `Hkv = 2`, one new query against 512
// cached keys, bottom-right causal):
// CHECK-LABEL: func.func @sdpa_gqa_decode
// CHECK: attn.sdpa
func.func @sdpa_gqa_decode(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x512x128xf32>,
                           %v: tensor<1x2x512x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x1x128xf32>, tensor<1x2x512x128xf32>, tensor<1x2x512x128xf32>)
        -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// f16 with an additive `[Tq,Tk]` mask (same element type as Q) and dropout:
// CHECK-LABEL: func.func @sdpa_f16_additive_dropout
// CHECK: attn.sdpa
func.func @sdpa_f16_additive_dropout(%q: tensor<2x8x64x64xf16>, %k: tensor<2x8x64x64xf16>,
                                     %v: tensor<2x8x64x32xf16>, %bias: tensor<64x64xf16>)
    -> tensor<2x8x64x32xf16> {
  %o = attn.sdpa %q, %k, %v, %bias {dropout_rate = 0.1 : f32, dropout_seed = 1234 : i64}
      : (tensor<2x8x64x64xf16>, tensor<2x8x64x64xf16>, tensor<2x8x64x32xf16>, tensor<64x64xf16>)
        -> tensor<2x8x64x32xf16>
  return %o : tensor<2x8x64x32xf16>
}

// Mistral-style sliding-window GQA with softcap, ALiBi and per-sequence
// key lengths (a padded KV cache of 256 keys, 4 new queries):
// CHECK-LABEL: func.func @sdpa_window_features
// CHECK: attn.sdpa
func.func @sdpa_window_features(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x256x64xf32>,
                                %v: tensor<2x2x256x64xf32>, %slopes: tensor<8xf32>,
                                %len: tensor<2xi32>) -> tensor<2x8x4x64xf32> {
  %o = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>,
       softcap = 30.0 : f32}
      : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>,
         tensor<8xf32>, tensor<2xi32>) -> tensor<2x8x4x64xf32>
  return %o : tensor<2x8x4x64xf32>
}

// The same computation as the first example (at `T = 128`), written with
// the primitive ops (the chain `attn-decompose` produces):
// CHECK-LABEL: func.func @sdpa_as_primitives
// CHECK: attn.scores
func.func @sdpa_as_primitives(%q: tensor<1x12x128x64xf32>, %k: tensor<1x12x128x64xf32>,
                              %v: tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
  %s = attn.scores %q, %k : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x12x128x128xf32>
  %u = attn.mask %t {causal = #attn.causal<top_left>} : tensor<1x12x128x128xf32>
  %p = attn.softmax %u : tensor<1x12x128x128xf32>
  %r = attn.weighted_sum %p, %v : (tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
  return %r : tensor<1x12x128x64xf32>
}
