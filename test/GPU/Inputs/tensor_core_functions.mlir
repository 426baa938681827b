// Tensor-core kernels with score and mask functions (tensor-core-ptxas.test):
// a relative-bias table (minus its absolute value: math.absf, which
// attn-expand-math clears the sign bit of, so that no libdevice call is
// left to resolve) and a sliding window; document ids bounded per tile with
// a piecewise score function.
func.func @f16_d64_functions(%q: tensor<1x4x256x64xf16>, %k: tensor<1x4x256x64xf16>,
                             %v: tensor<1x4x256x64xf16>, %bias: tensor<4x511xf32>)
    -> tensor<1x4x256x64xf16> {
  %o = attn.sdpa %q, %k, %v captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<4x511xf32>):
    %c255 = arith.constant 255 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c255 : index
    %x = tensor.extract %t[%h, %r] : tensor<4x511xf32>
    %ax = math.absf %x : f32
    %n = arith.subf %s, %ax : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<4x511xf32>):
    %c64 = arith.constant 64 : index
    %d = arith.subi %i, %j : index
    %causal = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi slt, %d, %c64 : index
    %keep = arith.andi %causal, %near : i1
    attn.yield %keep : i1
  } : (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<4x511xf32>)
      -> tensor<1x4x256x64xf16>
  return %o : tensor<1x4x256x64xf16>
}
func.func @bf16_d128_documents(%q: tensor<1x8x256x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                               %v: tensor<1x2x256x128xbf16>, %doc: tensor<256xi32>)
    -> tensor<1x8x256x128xbf16> {
  %o = attn.sdpa %q, %k, %v captures(%doc) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %d: tensor<256xi32>):
    %c8 = arith.constant 8 : index
    %far = arith.subi %i, %j : index
    %isFar = arith.cmpi sgt, %far, %c8 : index
    %r = scf.if %isFar -> f32 {
      %half = arith.constant 0.5 : f32
      %y = arith.mulf %s, %half : f32
      scf.yield %y : f32
    } else {
      scf.yield %s : f32
    }
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<256xi32>):
    %di = tensor.extract %d[%i] : tensor<256xi32>
    %dj = tensor.extract %d[%j] : tensor<256xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : (tensor<1x8x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>,
       tensor<256xi32>) -> tensor<1x8x256x128xbf16>
  return %o : tensor<1x8x256x128xbf16>
}
