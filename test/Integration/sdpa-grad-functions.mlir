// attn.sdpa_grad with a score function and its derivative (score_mod_grad)
// beside a mask function: @explicit writes the derivative by hand
// (d/ds 8·tanh(s/8) + bias = 1 - tanh²(s/8)); @forward is the same
// attention, whose gradient function attn-differentiate builds (the
// derivative from the body, the fused backward since the bias table gets no
// gradient). The reference route, the fused CPU backward (D 16) and small
// tiles, and the GPU backward's kernels (gpu-schedule, emulated), against
// torch.autograd in float64 (Inputs/sdpa_grad_case.py).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/sdpa_grad_case.py %t score_function
// RUN: attn-opt %s --attn-differentiate=functions=forward -o %t/grad.mlir
// RUN: for p in "reference" "cpu" "cpu --vector-width=8 --tile-q=8 --tile-k=16" \
// RUN:          "gpu-schedule --tile-q=16 --tile-k=8"; do \
// RUN:   attn-run %s --entry=explicit --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/o.npy \
// RUN:     --input=%t/do.npy --input=%t/lse.npy --input=%t/bias.npy \
// RUN:     --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy || exit 1; \
// RUN:   attn-run %t/grad.mlir --entry=forward_grad --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/bias.npy \
// RUN:     --input=%t/do.npy --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-24: ok (atol
//
// The fused backward takes both (no "not fused" remark), and the
// differentiated function holds the fused op, not the chain.
// RUN: attn-opt %s --convert-attn-to-loops="vector-width=8 report-unfused" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FUSED --allow-empty
// FUSED-NOT: not fused
// RUN: FileCheck %s --check-prefix=IR < %t/grad.mlir
// IR-LABEL: func.func @forward_grad
// IR: attn.sdpa_grad {{.*}} score_mod {
// IR: } score_mod_grad {
// IR: } mask_mod {
// IR-NOT: attn.softmax
func.func @explicit(%q: tensor<1x4x45x16xf32>, %k: tensor<1x2x45x16xf32>,
                    %v: tensor<1x2x45x16xf32>, %o: tensor<1x4x45x16xf32>,
                    %do: tensor<1x4x45x16xf32>, %lse: tensor<1x4x45xf32>,
                    %bias: tensor<89xf32>)
    -> (tensor<1x4x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse captures(%bias)
      {scale = 0.25 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<89xf32>):
    %c8 = arith.constant 8.0 : f32
    %x = arith.divf %s, %c8 : f32
    %th = math.tanh %x : f32
    %y = arith.mulf %th, %c8 : f32
    %c44 = arith.constant 44 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c44 : index
    %bb = tensor.extract %t[%r] : tensor<89xf32>
    %n = arith.addf %y, %bb : f32
    attn.yield %n : f32
  } score_mod_grad {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<89xf32>):
    %c8 = arith.constant 8.0 : f32
    %one = arith.constant 1.0 : f32
    %x = arith.divf %s, %c8 : f32
    %th = math.tanh %x : f32
    %sq = arith.mulf %th, %th : f32
    %g = arith.subf %one, %sq : f32
    attn.yield %g : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<89xf32>):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x4x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>,
       tensor<1x4x45x16xf32>, tensor<1x4x45x16xf32>, tensor<1x4x45xf32>, tensor<89xf32>)
      -> (tensor<1x4x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>)
  return %dq, %dk, %dv : tensor<1x4x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>
}

func.func @forward(%q: tensor<1x4x45x16xf32>, %k: tensor<1x2x45x16xf32>,
                          %v: tensor<1x2x45x16xf32>, %bias: tensor<89xf32> {attn.no_grad})
    -> tensor<1x4x45x16xf32> {
  %o = attn.sdpa %q, %k, %v captures(%bias) {scale = 0.25 : f32} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<89xf32>):
    %c8 = arith.constant 8.0 : f32
    %x = arith.divf %s, %c8 : f32
    %th = math.tanh %x : f32
    %y = arith.mulf %th, %c8 : f32
    %c44 = arith.constant 44 : index
    %d = arith.subi %i, %j : index
    %r = arith.addi %d, %c44 : index
    %bb = tensor.extract %t[%r] : tensor<89xf32>
    %n = arith.addf %y, %bb : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: tensor<89xf32>):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x4x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32>, tensor<89xf32>)
      -> tensor<1x4x45x16xf32>
  return %o : tensor<1x4x45x16xf32>
}
