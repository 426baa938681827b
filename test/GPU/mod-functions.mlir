// Score and mask functions on the GPU. The tensor-core kernel (f16/bf16,
// head dims 64/128) evaluates them per accumulator element (ModFunctions.h,
// one lane); a K/V tile whose mask-function bounds say it keeps every key
// of the block skips the per-element rules (ModBounds.h). The CUDA-core
// kernel (other head dims) evaluates them per thread. The schedules,
// emulated on the CPU (gpu-schedule: the tensor-core kernel's threads in
// lockstep, an scf.if of a function on both branches then a per-lane
// select), give the reference lowering's result.
// RUN: attn-run %s --entry=functions --random-inputs --pipeline=gpu-schedule --compare-with=reference --quiet \
// RUN:   | FileCheck %s --check-prefix=EMU
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: %python %S/../Integration/Inputs/npytool.py make %t.d/q.npy --shape 2,4,150,128 --fill rand:1
// RUN: %python %S/../Integration/Inputs/npytool.py make %t.d/k.npy --shape 2,2,150,128 --fill rand:2
// RUN: %python %S/../Integration/Inputs/npytool.py make %t.d/v.npy --shape 2,2,150,128 --fill rand:3
// RUN: %python %S/../Integration/Inputs/npytool.py make %t.d/ids.npy --dtype i4 --shape 150 --fill arange
// RUN: attn-run %s --entry=documents_piecewise --input=%t.d/q.npy --input=%t.d/k.npy --input=%t.d/v.npy \
// RUN:   --input=%t.d/ids.npy --pipeline=gpu-schedule --compare-with=reference --quiet \
// RUN:   | FileCheck %s --check-prefix=EMU-BF16
// RUN: attn-run %s --entry=cuda_core --random-inputs --pipeline=gpu-schedule --compare-with=reference --quiet \
// RUN:   | FileCheck %s --check-prefix=EMU
// EMU: result #0 vs reference: max_abs_error {{[0-9]\.[0-9]+e-(0[3-9]|[1-9][0-9])}}
// EMU-BF16: result #0 vs reference: max_abs_error {{[0-9]\.[0-9]+e-(0[2-9]|[1-9][0-9])}}
// RUN: attn-opt %s --convert-attn-to-gpu="report-kernel=true" -verify-diagnostics -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
//
// The tensor-core kernel: mma.sync, the bias table read at the clamped
// relative position, the window's compare; the documents' kernel bounds
// each tile by scanning the ids (a loop of loads) and decides "whole"
// with it.
// IR-LABEL: func.func @functions
// IR: nvgpu.mma.sync
// IR: arith.subi
// IR: memref.load
// IR: arith.cmpi slt
// IR-LABEL: func.func @documents_piecewise
// IR: nvgpu.mma.sync
// IR: scf.for
// IR: memref.load
// IR: arith.andi
// IR: scf.if
// IR-LABEL: func.func @cuda_core
// IR-NOT: nvgpu.mma.sync
// IR: return

func.func @functions(%q: tensor<1x4x70x64xf16>, %k: tensor<1x4x70x64xf16>, %v: tensor<1x4x70x64xf16>,
                     %bias: tensor<4x139xf32>) -> tensor<1x4x70x64xf16> {
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

// Document masking read from captured positions (documents of 100: the
// first block's rows and keys are one document, its tiles "whole" by the
// bounds; the second block's straddle two), GQA, bf16, D 128, and a score
// function with an scf.if: halved scores for keys more than 8 behind.
func.func @documents_piecewise(%q: tensor<2x4x150x128xbf16>, %k: tensor<2x2x150x128xbf16>,
                               %v: tensor<2x2x150x128xbf16>, %doc: tensor<150xi32>)
    -> tensor<2x4x150x128xbf16> {
  %o = attn.sdpa %q, %k, %v captures(%doc) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %d: tensor<150xi32>):
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
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<150xi32>):
    %di = tensor.extract %d[%i] : tensor<150xi32>
    %dj = tensor.extract %d[%j] : tensor<150xi32>
    %c100 = arith.constant 100 : i32
    %qi = arith.divsi %di, %c100 : i32
    %kj = arith.divsi %dj, %c100 : i32
    %same = arith.cmpi eq, %qi, %kj : i32
    attn.yield %same : i1
  } : (tensor<2x4x150x128xbf16>, tensor<2x2x150x128xbf16>, tensor<2x2x150x128xbf16>,
       tensor<150xi32>) -> tensor<2x4x150x128xbf16>
  return %o : tensor<2x4x150x128xbf16>
}

func.func @cuda_core(%q: tensor<1x2x40x32xf16>, %k: tensor<1x2x40x32xf16>, %v: tensor<1x2x40x32xf16>)
    -> tensor<1x2x40x32xf16> {
  // expected-remark @+1 {{attn.sdpa takes the CUDA-core GPU kernel, not the tensor-core one: the tensor-core kernel takes head dims 64 and 128 only (D = 32, Dv = 32)}}
  %o = attn.sdpa %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>) -> tensor<1x2x40x32xf16>
  return %o : tensor<1x2x40x32xf16>
}
