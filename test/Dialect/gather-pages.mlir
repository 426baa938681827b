// attn.gather_pages: round trip, the inferred type, and one failing
// example for every verifier rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @round_trip
// CHECK: attn.gather_pages %{{.*}}, %{{.*}} : (tensor<64x16x2x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
// CHECK: attn.gather_pages %{{.*}}, %{{.*}} lengths(%{{.*}}) : (tensor<?x256x4x128xbf16>, tensor<?x?xi64>, tensor<?xi32>) -> tensor<?x4x?x128xbf16>
// CHECK: attn.gather_pages %{{.*}}, %{{.*}} {layout = #attn.kv_layout<hnd>} : (tensor<64x2x16x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
// CHECK-NOT: kv_layout<nhd>
func.func @round_trip(%kc: tensor<64x16x2x64xf32>, %t: tensor<2x8xi32>, %vc: tensor<?x256x4x128xbf16>,
                      %t2: tensor<?x?xi64>, %len: tensor<?xi32>, %kc2: tensor<64x2x16x64xf32>) {
  %k = attn.gather_pages %kc, %t : (tensor<64x16x2x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
  %v = attn.gather_pages %vc, %t2 lengths(%len)
      : (tensor<?x256x4x128xbf16>, tensor<?x?xi64>, tensor<?xi32>) -> tensor<?x4x?x128xbf16>
  %h = attn.gather_pages %kc2, %t {layout = #attn.kv_layout<hnd>}
      : (tensor<64x2x16x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
  %n = attn.gather_pages %kc, %t {layout = #attn.kv_layout<nhd>}
      : (tensor<64x16x2x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
  return
}

// -----

func.func @cache_rank(%kc: tensor<64x16x64xf32>, %t: tensor<2x8xi32>) {
  // expected-error @+1 {{operand 'cache' must have rank 4 [NB,BS,Hkv,D], got rank 3}}
  %k = attn.gather_pages %kc, %t : (tensor<64x16x64xf32>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
  return
}

// -----

func.func @table_rank(%kc: tensor<64x16x2x64xf32>, %t: tensor<16xi32>) {
  // expected-error @+1 {{operand 'table' must have rank 2 [B,MB], got rank 1}}
  %k = attn.gather_pages %kc, %t : (tensor<64x16x2x64xf32>, tensor<16xi32>) -> tensor<2x2x128x64xf32>
  return
}

// -----

func.func @table_type(%kc: tensor<64x16x2x64xf32>, %t: tensor<2x8xf32>) {
  // expected-error @+1 {{operand #1 must be block table: a ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %k = attn.gather_pages %kc, %t : (tensor<64x16x2x64xf32>, tensor<2x8xf32>) -> tensor<2x2x128x64xf32>
  return
}

// -----

func.func @lengths_batch(%kc: tensor<64x16x2x64xf32>, %t: tensor<2x8xi32>, %len: tensor<3xi32>) {
  // expected-error @+1 {{operand 'lengths' batch (dim 0) is 3, expected 2 (batch B, dim 0 of 'table')}}
  %k = attn.gather_pages %kc, %t lengths(%len)
      : (tensor<64x16x2x64xf32>, tensor<2x8xi32>, tensor<3xi32>) -> tensor<2x2x128x64xf32>
  return
}

// -----

func.func @lengths_rank(%kc: tensor<64x16x2x64xf32>, %t: tensor<2x8xi32>, %len: tensor<2x1xi32>) {
  // expected-error @+1 {{operand 'lengths' must have rank 1 [B], got rank 2}}
  %k = attn.gather_pages %kc, %t lengths(%len)
      : (tensor<64x16x2x64xf32>, tensor<2x8xi32>, tensor<2x1xi32>) -> tensor<2x2x128x64xf32>
  return
}

// -----

func.func @result_length(%kc: tensor<64x16x2x64xf32>, %t: tensor<2x8xi32>) {
  // expected-error @+1 {{result dim 2 is 64, expected 128 (inferred result type 'tensor<2x2x128x64xf32>')}}
  %k = attn.gather_pages %kc, %t : (tensor<64x16x2x64xf32>, tensor<2x8xi32>) -> tensor<2x2x64x64xf32>
  return
}

// -----

func.func @hnd_result_length(%kc: tensor<64x2x16x64xf32>, %t: tensor<2x8xi32>) {
  // expected-error @+1 {{result dim 1 is 16, expected 2 (inferred result type 'tensor<2x2x128x64xf32>')}}
  %k = attn.gather_pages %kc, %t {layout = #attn.kv_layout<hnd>}
      : (tensor<64x2x16x64xf32>, tensor<2x8xi32>) -> tensor<2x16x16x64xf32>
  return
}

// -----

func.func @result_type(%kc: tensor<64x16x2x64xf16>, %t: tensor<2x8xi32>) {
  // expected-error @+1 {{result element type 'f32' does not match the operands' element type 'f16'}}
  %k = attn.gather_pages %kc, %t : (tensor<64x16x2x64xf16>, tensor<2x8xi32>) -> tensor<2x2x128x64xf32>
  return
}
