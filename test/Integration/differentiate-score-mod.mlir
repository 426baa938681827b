// attn-differentiate on a score function (FlexAttention's score_mod):
// dS = dY · f'(S), f' a score function built from f's body by forward-mode
// rules (tanh, exp, absf, mul, add, a capture read, scf.if), through the
// reference and cpu pipelines, against torch.autograd in float64
// (Inputs/differentiate_score_mod_case.py); the forward too. @flex_tables:
// the captured tables are arguments, so they get gradients too (a scatter
// of the scores' adjoints at each read, a clamped read among them; the
// primitive chain).
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %torch_python %S/Inputs/differentiate_score_mod_case.py %t
// RUN: attn-opt %s --attn-differentiate -o %t/grad.mlir
// RUN: FileCheck %s --check-prefix=IR < %t/grad.mlir
// RUN: for p in reference cpu; do \
// RUN:   attn-run %s --entry=flex --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --expect=%t/o.npy || exit 1; \
// RUN:   attn-run %t/grad.mlir --entry=flex_grad --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/dout.npy \
// RUN:     --expect=%t/dq.npy --expect=%t/dk.npy --expect=%t/dv.npy || exit 1; \
// RUN:   attn-run %s --entry=flex_tables --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/tab.npy \
// RUN:     --input=%t/kb.npy --expect=%t/o2.npy || exit 1; \
// RUN:   attn-run %t/grad.mlir --entry=flex_tables_grad --pipeline=$p --quiet \
// RUN:     --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/tab.npy \
// RUN:     --input=%t/kb.npy --input=%t/dout.npy --expect=%t/dq2.npy --expect=%t/dk2.npy \
// RUN:     --expect=%t/dv2.npy --expect=%t/dtab.npy --expect=%t/dkb.npy || exit 1; \
// RUN: done > %t/log 2>&1; cat %t/log | FileCheck %s
// CHECK-COUNT-8: result #{{[0-2]}} vs {{.*}}: {{.*}}, ok
// CHECK-COUNT-12: result #{{[0-4]}} vs {{.*}}: {{.*}}, ok
//
// The derivative is a score function of its own: the body cloned, the
// tangents beside it, an scf.if that also yields its result's tangent.
// With no capture that gets a gradient, the fused backward takes it:
// attn.sdpa_grad with the function and its derivative as regions.
// IR-LABEL: func.func @flex_grad
// IR: attn.sdpa_partial {{.*}} score_mod {
// IR: attn.sdpa_grad {{.*}} score_mod {
// IR: } score_mod_grad {
// IR: math.tanh
// IR: scf.if %{{.*}} -> (f32, f32)
// IR: attn.yield
// IR-NOT: attn.score_mod
// IR-NOT: attn.softmax
//
// The tables' adjoints: a loop nest over the scores that adds dY · ∂f/∂read
// at each read's clamped indices (scf.if flattened into selects there).
// IR-LABEL: func.func @flex_tables_grad
// IR: scf.for
// IR: scf.for
// IR: scf.for
// IR: scf.for
// IR-DAG: arith.minsi
// IR-DAG: arith.select
// IR: tensor.insert
// IR: tensor.insert
// IR: tensor.insert
// IR: return {{.*}} : tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<4x11xf32>, tensor<6xf32>

func.func @flex(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>)
    -> tensor<1x4x6x8xf32> {
  %tab = arith.constant dense<[0.3, -0.2, 0.1, 0.0, 0.5, -0.4, 0.25, 0.6, -0.1, 0.2, -0.3]>
      : tensor<11xf32>
  %o = attn.sdpa %q, %k, %v captures(%tab) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<11xf32>):
    %c02 = arith.constant 0.2 : f32
    %c5f = arith.constant 5.0 : f32
    %x = arith.mulf %s, %c02 : f32
    %th = math.tanh %x : f32
    %c = arith.mulf %th, %c5f : f32
    %keep = arith.cmpi uge, %i, %j : index
    %r = scf.if %keep -> (f32) {
      %c5 = arith.constant 5 : index
      %d = arith.subi %i, %j : index
      %n = arith.addi %d, %c5 : index
      %bias = tensor.extract %t[%n] : tensor<11xf32>
      %y = arith.addf %c, %bias : f32
      scf.yield %y : f32
    } else {
      %c01 = arith.constant 0.1 : f32
      %half = arith.constant 0.5 : f32
      %sq = arith.mulf %c, %c : f32
      %a = arith.mulf %sq, %c01 : f32
      %abs = math.absf %c : f32
      %na = arith.negf %abs : f32
      %e = math.exp %na : f32
      %eh = arith.mulf %e, %half : f32
      %y = arith.subf %a, %eh : f32
      scf.yield %y : f32
    }
    attn.yield %r : f32
  } : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<11xf32>)
      -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}

func.func @flex_tables(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>,
                       %tab: tensor<4x11xf32>, %kb: tensor<6xf32>) -> tensor<1x4x6x8xf32> {
  %o = attn.sdpa %q, %k, %v captures(%tab, %kb) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<4x11xf32>,
       %kt: tensor<6xf32>):
    %c02 = arith.constant 0.2 : f32
    %c5f = arith.constant 5.0 : f32
    %x = arith.mulf %s, %c02 : f32
    %th = math.tanh %x : f32
    %c = arith.mulf %th, %c5f : f32
    %keep = arith.cmpi uge, %i, %j : index
    %r = scf.if %keep -> (f32) {
      %c5 = arith.constant 5 : index
      %d = arith.subi %i, %j : index
      %n = arith.addi %d, %c5 : index
      %bias = tensor.extract %t[%h, %n] : tensor<4x11xf32>
      %y = arith.addf %c, %bias : f32
      scf.yield %y : f32
    } else {
      %c01 = arith.constant 0.1 : f32
      %half = arith.constant 0.5 : f32
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %sq = arith.mulf %c, %c : f32
      %a = arith.mulf %sq, %c01 : f32
      %abs = math.absf %c : f32
      %na = arith.negf %abs : f32
      %e = math.exp %na : f32
      %eh = arith.mulf %e, %half : f32
      %y0 = arith.subf %a, %eh : f32
      %jn = arith.addi %j, %c2 : index
      %kbv = tensor.extract %kt[%jn] : tensor<6xf32>
      %t0 = tensor.extract %t[%h, %c0] : tensor<4x11xf32>
      %p = arith.mulf %kbv, %t0 : f32
      %y = arith.addf %y0, %p : f32
      scf.yield %y : f32
    }
    attn.yield %r : f32
  } : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<4x11xf32>,
       tensor<6xf32>) -> tensor<1x4x6x8xf32>
  return %o : tensor<1x4x6x8xf32>
}
