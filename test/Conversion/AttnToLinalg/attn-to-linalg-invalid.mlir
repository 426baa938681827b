// What convert-attn-to-linalg refuses, with a diagnostic.
// RUN: attn-opt %s -convert-attn-to-linalg -split-input-file -verify-diagnostics

func.func @sdpa_not_decomposed(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{must be decomposed before convert-attn-to-linalg (run attn-decompose first)}}
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x3x4xf32>, %k: tensor<1x?x5x4xf32>) -> tensor<1x?x3x5xf32> {
  // expected-error @+1 {{needs static head counts for convert-attn-to-linalg, got H = ?, Hkv = ?}}
  %s = attn.scores %q, %k : (tensor<1x?x3x4xf32>, tensor<1x?x5x4xf32>) -> tensor<1x?x3x5xf32>
  return %s : tensor<1x?x3x5xf32>
}
