// attn.sdpa_varlen: round trip and one failing example for every verifier
// rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @round_trip
// CHECK: attn.sdpa_varlen %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>} : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<1x8x?x32xf32>
// CHECK: attn.sdpa_varlen %{{.*}} alibi(%{{.*}}) sinks(%{{.*}}) {scale = 1.250000e-01 : f32, softcap = 2.000000e+01 : f32, window = #attn.window<left = 4>} : (tensor<1x8x10x64xf16>, tensor<1x8x12x64xf16>, tensor<1x8x12x64xf16>, tensor<3xi32>, tensor<3xi32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x10x64xf16>
func.func @round_trip(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x32xf32>,
                      %cu: tensor<?xi32>, %q2: tensor<1x8x10x64xf16>, %k2: tensor<1x8x12x64xf16>,
                      %cu2: tensor<3xi32>, %s: tensor<8xf32>) {
  %a = attn.sdpa_varlen %q, %k, %v, %cu, %cu {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x32xf32>, tensor<?xi32>, tensor<?xi32>)
        -> tensor<1x8x?x32xf32>
  %b = attn.sdpa_varlen %q2, %k2, %k2, %cu2, %cu2 alibi(%s) sinks(%s)
      {scale = 0.125 : f32, softcap = 20.0 : f32, window = #attn.window<left = 4>}
      : (tensor<1x8x10x64xf16>, tensor<1x8x12x64xf16>, tensor<1x8x12x64xf16>, tensor<3xi32>,
         tensor<3xi32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x10x64xf16>
  return
}

// -----

func.func @batch(%q: tensor<2x8x10x64xf32>, %k: tensor<2x2x12x64xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{operand 'query' batch (dim 0) is 2, expected 1 (the sequences lie along the rows)}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu
      : (tensor<2x8x10x64xf32>, tensor<2x2x12x64xf32>, tensor<2x2x12x64xf32>, tensor<3xi32>, tensor<3xi32>)
        -> tensor<2x8x10x64xf32>
  return
}

// -----

func.func @heads(%q: tensor<1x6x10x64xf32>, %k: tensor<1x4x12x64xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{'query' heads H = 6 is not a multiple of 'key' heads Hkv = 4}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu
      : (tensor<1x6x10x64xf32>, tensor<1x4x12x64xf32>, tensor<1x4x12x64xf32>, tensor<3xi32>, tensor<3xi32>)
        -> tensor<1x6x10x64xf32>
  return
}

// -----

func.func @value_length(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %v: tensor<1x2x11x64xf32>,
                        %cu: tensor<3xi32>) {
  // expected-error @+1 {{operand 'value' length (dim 2) is 11, expected 12 (length Tk of 'key')}}
  %a = attn.sdpa_varlen %q, %k, %v, %cu, %cu
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x11x64xf32>, tensor<3xi32>, tensor<3xi32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @offsets_rank(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<3x1xi32>) {
  // expected-error @+1 {{operand 'cu_seqlens_q' must have rank 1 [B+1], got rank 2}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3x1xi32>, tensor<3x1xi32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @offsets_size(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cq: tensor<3xi32>,
                        %ck: tensor<4xi32>) {
  // expected-error @+1 {{operand 'cu_seqlens_k' size (dim 0) is 4, expected 3 (B+1, the size of 'cu_seqlens_q')}}
  %a = attn.sdpa_varlen %q, %k, %k, %cq, %ck
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3xi32>, tensor<4xi32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @offsets_empty(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<0xi32>) {
  // expected-error @+1 {{operand 'cu_seqlens_q' is empty: it holds B+1 >= 1 offsets}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<0xi32>, tensor<0xi32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @offsets_type(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<3xi64>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer values}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3xi64>, tensor<3xi64>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @sinks(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<3xi32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{operand 'sinks' heads (dim 0) is 4, expected 8 (query heads H)}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu sinks(%s)
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3xi32>, tensor<3xi32>, tensor<4xf32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @scale(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{'scale'}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu {scale = -1.0 : f32}
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3xi32>, tensor<3xi32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @result(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{result}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3xi32>, tensor<3xi32>)
        -> tensor<1x8x12x64xf32>
  return
}

// -----

// CHECK-LABEL: func @paged_round_trip
// CHECK: attn.sdpa_varlen %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}}) {causal = #attn.causal<bottom_right>} : (tensor<1x8x?x64xf32>, tensor<40x16x2x64xf32>, tensor<40x16x2x32xf32>, tensor<4xi32>, tensor<4xi32>, tensor<3x8xi32>) -> tensor<1x8x?x32xf32>
// CHECK: attn.sdpa_varlen %{{.*}} block_table(%{{.*}}) sinks(%{{.*}}) {layout = #attn.kv_layout<hnd>} : (tensor<1x8x?x64xf32>, tensor<40x2x16x64xf32>, tensor<40x2x16x64xf32>, tensor<?xi32>, tensor<?xi32>, tensor<?x?xi64>, tensor<8xf32>) -> tensor<1x8x?x64xf32>
func.func @paged_round_trip(%q: tensor<1x8x?x64xf32>, %kc: tensor<40x16x2x64xf32>,
                            %vc: tensor<40x16x2x32xf32>, %cu: tensor<4xi32>, %t: tensor<3x8xi32>,
                            %kh: tensor<40x2x16x64xf32>, %cud: tensor<?xi32>,
                            %t64: tensor<?x?xi64>, %s: tensor<8xf32>) {
  %a = attn.sdpa_varlen %q, %kc, %vc, %cu, %cu block_table(%t) {causal = #attn.causal<bottom_right>}
      : (tensor<1x8x?x64xf32>, tensor<40x16x2x64xf32>, tensor<40x16x2x32xf32>, tensor<4xi32>,
         tensor<4xi32>, tensor<3x8xi32>) -> tensor<1x8x?x32xf32>
  %b = attn.sdpa_varlen %q, %kh, %kh, %cud, %cud block_table(%t64) sinks(%s)
      {layout = #attn.kv_layout<hnd>}
      : (tensor<1x8x?x64xf32>, tensor<40x2x16x64xf32>, tensor<40x2x16x64xf32>, tensor<?xi32>,
         tensor<?xi32>, tensor<?x?xi64>, tensor<8xf32>) -> tensor<1x8x?x64xf32>
  return
}

// -----

func.func @layout_without_table(%q: tensor<1x8x10x64xf32>, %k: tensor<1x2x12x64xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{attribute 'layout' describes paged caches: it needs a 'block_table'}}
  %a = attn.sdpa_varlen %q, %k, %k, %cu, %cu {layout = #attn.kv_layout<hnd>}
      : (tensor<1x8x10x64xf32>, tensor<1x2x12x64xf32>, tensor<1x2x12x64xf32>, tensor<3xi32>, tensor<3xi32>)
        -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @table_batch(%q: tensor<1x8x10x64xf32>, %kc: tensor<40x16x2x64xf32>, %cu: tensor<3xi32>,
                       %t: tensor<3x8xi32>) {
  // expected-error @+1 {{operand 'block_table' batch (dim 0) is 3, expected 2 (B, one less than the size of 'cu_seqlens_q')}}
  %a = attn.sdpa_varlen %q, %kc, %kc, %cu, %cu block_table(%t)
      : (tensor<1x8x10x64xf32>, tensor<40x16x2x64xf32>, tensor<40x16x2x64xf32>, tensor<3xi32>,
         tensor<3xi32>, tensor<3x8xi32>) -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @table_rank(%q: tensor<1x8x10x64xf32>, %kc: tensor<40x16x2x64xf32>, %cu: tensor<3xi32>,
                      %t: tensor<16xi32>) {
  // expected-error @+1 {{operand 'block_table' must have rank 2 [B,MB], got rank 1}}
  %a = attn.sdpa_varlen %q, %kc, %kc, %cu, %cu block_table(%t)
      : (tensor<1x8x10x64xf32>, tensor<40x16x2x64xf32>, tensor<40x16x2x64xf32>, tensor<3xi32>,
         tensor<3xi32>, tensor<16xi32>) -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @cache_heads(%q: tensor<1x8x10x64xf32>, %kc: tensor<40x16x3x64xf32>, %cu: tensor<3xi32>,
                       %t: tensor<2x8xi32>) {
  // expected-error @+1 {{'query' heads H = 8 is not a multiple of 'key' heads Hkv = 3}}
  %a = attn.sdpa_varlen %q, %kc, %kc, %cu, %cu block_table(%t)
      : (tensor<1x8x10x64xf32>, tensor<40x16x3x64xf32>, tensor<40x16x3x64xf32>, tensor<3xi32>,
         tensor<3xi32>, tensor<2x8xi32>) -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @cache_blocks(%q: tensor<1x8x10x64xf32>, %kc: tensor<40x16x2x64xf32>,
                        %vc: tensor<40x8x2x64xf32>, %cu: tensor<3xi32>, %t: tensor<2x8xi32>) {
  // expected-error @+1 {{operand 'value' block size (dim 1) is 8, expected 16 (block size BS of 'key')}}
  %a = attn.sdpa_varlen %q, %kc, %vc, %cu, %cu block_table(%t)
      : (tensor<1x8x10x64xf32>, tensor<40x16x2x64xf32>, tensor<40x8x2x64xf32>, tensor<3xi32>,
         tensor<3xi32>, tensor<2x8xi32>) -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @cache_hnd_heads(%q: tensor<1x8x10x64xf32>, %kc: tensor<40x2x16x64xf32>,
                           %vc: tensor<40x4x16x64xf32>, %cu: tensor<3xi32>, %t: tensor<2x8xi32>) {
  // expected-error @+1 {{operand 'value' heads (dim 1) is 4, expected 2 (heads Hkv of 'key')}}
  %a = attn.sdpa_varlen %q, %kc, %vc, %cu, %cu block_table(%t) {layout = #attn.kv_layout<hnd>}
      : (tensor<1x8x10x64xf32>, tensor<40x2x16x64xf32>, tensor<40x4x16x64xf32>, tensor<3xi32>,
         tensor<3xi32>, tensor<2x8xi32>) -> tensor<1x8x10x64xf32>
  return
}

// -----

func.func @cache_head_dim(%q: tensor<1x8x10x64xf32>, %kc: tensor<40x16x2x32xf32>, %cu: tensor<3xi32>,
                          %t: tensor<2x8xi32>) {
  // expected-error @+1 {{operand 'key' head dim (dim 3) is 32, expected 64 (head dim D of 'query')}}
  %a = attn.sdpa_varlen %q, %kc, %kc, %cu, %cu block_table(%t)
      : (tensor<1x8x10x64xf32>, tensor<40x16x2x32xf32>, tensor<40x16x2x32xf32>, tensor<3xi32>,
         tensor<3xi32>, tensor<2x8xi32>) -> tensor<1x8x10x64xf32>
  return
}
