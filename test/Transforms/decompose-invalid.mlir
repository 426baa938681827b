// An sdpa whose head dim is dynamic needs an explicit scale to decompose.
// RUN: attn-opt %s -attn-decompose -verify-diagnostics -split-input-file

func.func @dynamic_d(%q: tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32> {
  // expected-error @+1 {{cannot be decomposed: head dim is dynamic and no 'scale' is given}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32>
  return %o : tensor<1x2x3x?xf32>
}
