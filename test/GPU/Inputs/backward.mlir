// attn.sdpa_grad functions for the GPU backward's ptxas and codegen tests
// (test/GPU/backward.test): GQA causal with softcap and key lengths
// (static), dynamic shapes with an additive mask and ALiBi, f16 with a
// window, bf16 with a score function, its derivative and a mask function,
// and head dims of 128.

func.func @gqa_causal_softcap(
    %q: tensor<2x8x256x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x64xf32>,
    %o: tensor<2x8x256x64xf32>, %do: tensor<2x8x256x64xf32>, %lse: tensor<2x8x256xf32>,
    %len: tensor<2xi32>)
    -> (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse key_lengths(%len)
      {causal = #attn.causal<bottom_right>, softcap = 30.0 : f32}
      : (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>,
         tensor<2x8x256x64xf32>, tensor<2x8x256x64xf32>, tensor<2x8x256xf32>, tensor<2xi32>)
        -> (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>)
  return %dq, %dk, %dv : tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>
}

func.func @dynamic_mask_alibi(
    %q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>,
    %o: tensor<?x4x?x64xf32>, %do: tensor<?x4x?x64xf32>, %lse: tensor<?x4x?xf32>,
    %mask: tensor<?x1x?x?xf32>, %slopes: tensor<4xf32>)
    -> (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse, %mask alibi(%slopes)
      : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>,
         tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?xf32>,
         tensor<?x1x?x?xf32>, tensor<4xf32>)
        -> (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>)
  return %dq, %dk, %dv : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>
}

func.func @half_window(
    %q: tensor<1x4x512x64xf16>, %k: tensor<1x4x512x64xf16>, %v: tensor<1x4x512x64xf16>,
    %o: tensor<1x4x512x64xf16>, %do: tensor<1x4x512x64xf16>, %lse: tensor<1x4x512xf32>)
    -> (tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
      {causal = #attn.causal<top_left>, window = #attn.window<left = 127>}
      : (tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>,
         tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512xf32>)
        -> (tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>)
  return %dq, %dk, %dv : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
}

func.func @bf16_functions(
    %q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xbf16>, %v: tensor<1x4x128x64xbf16>,
    %o: tensor<1x4x128x64xbf16>, %do: tensor<1x4x128x64xbf16>, %lse: tensor<1x4x128xf32>,
    %bias: tensor<255xf32>)
    -> (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<255xf32>):
    %c8 = arith.constant 8.0 : f32
    %x = arith.divf %s, %c8 : f32
    %th = math.tanh %x : f32
    %y = arith.mulf %th, %c8 : f32
    %c127 = arith.constant 127 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c127 : index
    %bv = tensor.extract %t[%r] : tensor<255xf32>
    %z = arith.addf %y, %bv : f32
    attn.yield %z : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<255xf32>):
    %c8 = arith.constant 8.0 : f32
    %one = arith.constant 1.0 : f32
    %x = arith.divf %s, %c8 : f32
    %th = math.tanh %x : f32
    %sq = arith.mulf %th, %th : f32
    %g = arith.subf %one, %sq : f32
    attn.yield %g : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<255xf32>):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>,
       tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128xf32>, tensor<255xf32>)
      -> (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>
}

func.func @d128(
    %q: tensor<1x2x100x128xf32>, %k: tensor<1x2x100x128xf32>, %v: tensor<1x2x100x128xf32>,
    %o: tensor<1x2x100x128xf32>, %do: tensor<1x2x100x128xf32>, %lse: tensor<1x2x100xf32>)
    -> (tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>,
         tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>, tensor<1x2x100xf32>)
        -> (tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>)
  return %dq, %dk, %dv : tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>, tensor<1x2x100x128xf32>
}

// A training step's forward: O and the log-sum-exp (the CUDA-core kernel).
func.func @partial_causal(
    %q: tensor<2x8x256x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x64xf32>)
    -> (tensor<2x8x256x64xf32>, tensor<2x8x256xf32>) {
  %o, %lse = attn.sdpa_partial %q, %k, %v {causal = #attn.causal<top_left>}
      : (tensor<2x8x256x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>)
        -> (tensor<2x8x256x64xf32>, tensor<2x8x256xf32>)
  return %o, %lse : tensor<2x8x256x64xf32>, tensor<2x8x256xf32>
}
