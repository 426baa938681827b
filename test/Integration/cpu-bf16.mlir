// The fused CPU kernel takes f16 and bf16 operands (converted to f32 as the
// tiles are packed, output rounded once) and agrees with the reference
// lowering. bf16 cannot be exchanged through .npy, so the function converts
// f32 inputs to bf16 and its result back with linalg.generic.
// RUN: attn-run %s --pipeline=cpu --random-inputs --compare-with=reference | FileCheck %s
// RUN: attn-run %s --entry=half --pipeline=cpu --random-inputs --compare-with=reference | FileCheck %s --check-prefix=HALF
// CHECK-NOT: not fused
// CHECK: result #0 vs reference: max_abs_error {{[0-9.]+}}e-{{0[3-9]|[1-9][0-9]}}
// HALF-NOT: not fused
// HALF: result #0 vs reference: max_abs_error {{[0-9.]+}}e-{{0[3-9]|[1-9][0-9]}}
#id = affine_map<(b, h, t, d) -> (b, h, t, d)>
func.func @bf16(%q: tensor<2x4x37x64xf32>, %k: tensor<2x2x53x64xf32>, %v: tensor<2x2x53x64xf32>)
    -> tensor<2x4x37x64xf32> {
  %q16 = call @to_bf16_q(%q) : (tensor<2x4x37x64xf32>) -> tensor<2x4x37x64xbf16>
  %k16 = call @to_bf16_k(%k) : (tensor<2x2x53x64xf32>) -> tensor<2x2x53x64xbf16>
  %v16 = call @to_bf16_k(%v) : (tensor<2x2x53x64xf32>) -> tensor<2x2x53x64xbf16>
  %o = attn.sdpa %q16, %k16, %v16 {causal = #attn.causal<bottom_right>, window = #attn.window<left = 20>}
      : (tensor<2x4x37x64xbf16>, tensor<2x2x53x64xbf16>, tensor<2x2x53x64xbf16>) -> tensor<2x4x37x64xbf16>
  %e = tensor.empty() : tensor<2x4x37x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : tensor<2x4x37x64xbf16>) outs(%e : tensor<2x4x37x64xf32>) {
  ^bb0(%x: bf16, %y: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4x37x64xf32>
  return %r : tensor<2x4x37x64xf32>
}
func.func private @to_bf16_q(%x: tensor<2x4x37x64xf32>) -> tensor<2x4x37x64xbf16> {
  %e = tensor.empty() : tensor<2x4x37x64xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x37x64xf32>) outs(%e : tensor<2x4x37x64xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x37x64xbf16>
  return %r : tensor<2x4x37x64xbf16>
}
func.func private @to_bf16_k(%x: tensor<2x2x53x64xf32>) -> tensor<2x2x53x64xbf16> {
  %e = tensor.empty() : tensor<2x2x53x64xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x2x53x64xf32>) outs(%e : tensor<2x2x53x64xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x2x53x64xbf16>
  return %r : tensor<2x2x53x64xbf16>
}
func.func @half(%q: tensor<1x4x33x80xf16>, %k: tensor<1x4x47x80xf16>, %v: tensor<1x4x47x80xf16>)
    -> tensor<1x4x33x80xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, softcap = 20.0 : f32}
      : (tensor<1x4x33x80xf16>, tensor<1x4x47x80xf16>, tensor<1x4x47x80xf16>) -> tensor<1x4x33x80xf16>
  return %o : tensor<1x4x33x80xf16>
}
