// attn.dequantize: round trip and one failing example for every verifier
// rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @round_trip
// CHECK: attn.dequantize %{{.*}}, %{{.*}} : (tensor<1x2x128x64xi8>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xf32>
// CHECK: attn.dequantize %{{.*}}, %{{.*}} : (tensor<?x4x?x128xi8>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16>
func.func @round_trip(%x: tensor<1x2x128x64xi8>, %s: tensor<1x2x128xf32>,
                      %y: tensor<?x4x?x128xi8>, %t: tensor<?x4x?xf32>) {
  %a = attn.dequantize %x, %s : (tensor<1x2x128x64xi8>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xf32>
  %b = attn.dequantize %y, %t : (tensor<?x4x?x128xi8>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16>
  return
}

// fp8 e4m3 input; one scale for the tensor (rank 0), with either input.
// CHECK-LABEL: func @fp8_and_tensor_scale
// CHECK: attn.dequantize %{{.*}}, %{{.*}} : (tensor<1x2x128x64xf8E4M3FN>, tensor<f32>) -> tensor<1x2x128x64xf32>
// CHECK: attn.dequantize %{{.*}}, %{{.*}} : (tensor<?x4x?x128xf8E4M3FN>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xf16>
// CHECK: attn.dequantize %{{.*}}, %{{.*}} : (tensor<1x2x128x64xi8>, tensor<f32>) -> tensor<1x2x128x64xf32>
func.func @fp8_and_tensor_scale(%x: tensor<1x2x128x64xf8E4M3FN>, %s: tensor<f32>,
                                %y: tensor<?x4x?x128xf8E4M3FN>, %t: tensor<?x4x?xf32>,
                                %z: tensor<1x2x128x64xi8>) {
  %a = attn.dequantize %x, %s : (tensor<1x2x128x64xf8E4M3FN>, tensor<f32>) -> tensor<1x2x128x64xf32>
  %b = attn.dequantize %y, %t : (tensor<?x4x?x128xf8E4M3FN>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xf16>
  %c = attn.dequantize %z, %s : (tensor<1x2x128x64xi8>, tensor<f32>) -> tensor<1x2x128x64xf32>
  return
}

// -----

func.func @fp8_other_kind(%x: tensor<1x2x8x4xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 8-bit signless integer or f8E4M3FN type values}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xf8E5M2>, tensor<f32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @input_type(%x: tensor<1x2x8x4xi32>, %s: tensor<1x2x8xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 8-bit signless integer or f8E4M3FN type values}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi32>, tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @input_rank(%x: tensor<2x8x4xi8>, %s: tensor<1x2x8xf32>) {
  // expected-error @+1 {{operand 'input' must have rank 4 [B,Hkv,T,D], got rank 3}}
  %a = attn.dequantize %x, %s : (tensor<2x8x4xi8>, tensor<1x2x8xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @scale_rank(%x: tensor<1x2x8x4xi8>, %s: tensor<1x2x8x1xf32>) {
  // expected-error @+1 {{operand 'scale' must have rank 3 [B,Hkv,T] or rank 0, got rank 4}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @scale_type(%x: tensor<1x2x8x4xi8>, %s: tensor<1x2x8xf16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit float values}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x2x8xf16>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @scale_tokens(%x: tensor<1x2x8x4xi8>, %s: tensor<1x2x7xf32>) {
  // expected-error @+1 {{operand 'scale' tokens (dim 2) is 7, expected 8 (dim 2 of 'input')}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x2x7xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @scale_heads(%x: tensor<1x2x8x4xi8>, %s: tensor<1x3x8xf32>) {
  // expected-error @+1 {{operand 'scale' heads (dim 1) is 3, expected 2 (dim 1 of 'input')}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x3x8xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @result_shape(%x: tensor<1x2x8x4xi8>, %s: tensor<1x2x8xf32>) {
  // expected-error @+1 {{result dim 3 is 5, expected 4 (dim 3 of 'input')}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x2x8xf32>) -> tensor<1x2x8x5xf32>
  return
}

// -----

func.func @result_type(%x: tensor<1x2x8x4xi8>, %s: tensor<1x2x8xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x2x8xf32>) -> tensor<1x2x8x4xi8>
  return
}

// -----

func.func @result_rank(%x: tensor<1x2x8x4xi8>, %s: tensor<1x2x8xf32>) {
  // expected-error @+1 {{result rank is 3, expected 4 ([B,Hkv,T,D])}}
  %a = attn.dequantize %x, %s : (tensor<1x2x8x4xi8>, tensor<1x2x8xf32>) -> tensor<2x8x4xf32>
  return
}
