// Score and mask functions on the GPU: the CUDA-core kernel evaluates them
// per thread (ModFunctions.h, one lane), the tensor-core kernel says it
// does not take them yet. The schedule, emulated on the CPU
// (gpu-schedule), gives the reference lowering's result.
// RUN: attn-run %s --random-inputs --pipeline=gpu-schedule --compare-with=reference --quiet \
// RUN:   | FileCheck %s --check-prefix=EMU
// EMU: result #0 vs reference: max_abs_error {{[0-9]\.[0-9]+e-(0[3-9]|[1-9][0-9])}}
// RUN: attn-opt %s --convert-attn-to-gpu="report-kernel=true" -verify-diagnostics -o /dev/null

func.func @functions(%q: tensor<1x4x70x64xf16>, %k: tensor<1x4x70x64xf16>, %v: tensor<1x4x70x64xf16>,
                     %bias: tensor<4x139xf32>) -> tensor<1x4x70x64xf16> {
  // expected-remark @+1 {{attn.sdpa takes the CUDA-core GPU kernel, not the tensor-core one: the tensor-core kernel does not take score or mask functions yet}}
  %o = attn.sdpa %q, %k, %v captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<4x139xf32>):
    %c69 = arith.constant 69 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c69 : index
    %x = tensor.extract %t[%h, %r] : tensor<4x139xf32>
    %n = arith.addf %s, %x : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<4x139xf32>):
    %c20 = arith.constant 20 : index
    %d = arith.subi %i, %j : index
    %causal = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi slt, %d, %c20 : index
    %keep = arith.andi %causal, %near : i1
    attn.yield %keep : i1
  } : (tensor<1x4x70x64xf16>, tensor<1x4x70x64xf16>, tensor<1x4x70x64xf16>, tensor<4x139xf32>)
      -> tensor<1x4x70x64xf16>
  return %o : tensor<1x4x70x64xf16>
}
