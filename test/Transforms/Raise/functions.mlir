// What no named sdpa feature holds becomes a score or mask function
// region (attn.sdpa's score_mod / mask_mod): a softcap, ALiBi with a
// constant slope table and a padding mask computed from a tensor written
// out, a window whose lower bound is a run-time value. Each function runs
// as written (reference) and raised (cpu) on the same inputs; those that
// may drop a whole row are raised with zero-empty-rows.
// RUN: attn-opt %s --attn-raise=report --verify-diagnostics | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && mkdir -p %t
// RUN: grep -v expected-remark %s | attn-opt --attn-raise=zero-empty-rows -o %t/raised.mlir
// RUN: attn-run %s --entry=softcap --random-inputs --seed=1 --output=%t/a.npy --quiet
// RUN: attn-run %t/raised.mlir --entry=softcap --pipeline=cpu --random-inputs --seed=1 --expect=%t/a.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=alibi --random-inputs --seed=2 --output=%t/b.npy --quiet
// RUN: attn-run %t/raised.mlir --entry=alibi --pipeline=cpu --random-inputs --seed=2 --expect=%t/b.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=padding --random-inputs --seed=3 --output=%t/c.npy --quiet
// RUN: attn-run %t/raised.mlir --entry=padding --pipeline=cpu --random-inputs --seed=3 --expect=%t/c.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: FileCheck %s --check-prefix=EMPTY < %t/raised.mlir
// EMPTY-LABEL: func.func @runtime_window
// EMPTY: %[[N:.*]] = tensor.from_elements %arg3 : tensor<index>
// EMPTY: attn.sdpa {{.*}} captures(%[[N]]) {scale = 0.353553385 : f32} mask_mod {
// EMPTY: arith.andi
// EMPTY: attn.yield
// CHECK: ok

#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// 30·tanh(s / 8 / 30), written out.
// IR-LABEL: func.func @softcap
// IR: attn.sdpa {{.*}} {scale = 1.000000e+00 : f32} score_mod {
// IR: math.tanh
// IR: attn.yield
// expected-remark @+43 {{attn-raise: raised to attn.sdpa; as a score function: the scores pass through math.tanh}}
func.func @softcap(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x16x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c8 = arith.constant 0.125 : f32
    %cap = arith.constant 30.0 : f32
    %t = arith.mulf %a, %c8 : f32
    %u = arith.divf %t, %cap : f32
    %th = math.tanh %u : f32
    %y = arith.mulf %th, %cap : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%s0 : tensor<2x16xf32>) dimensions = [2]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// ALiBi written out: s/sqrt(8) + slope[b]·(j − i), the slopes a constant.
// IR-LABEL: func.func @alibi
// IR: attn.sdpa
// IR-SAME: captures(
// IR-SAME: score_mod
// IR: tensor.extract
// expected-remark @+47 {{attn-raise: raised to attn.sdpa; as a score function}}
func.func @alibi(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %slopes = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, affine_map<(b, i, j) -> (b)>, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x16x16xf32>, tensor<2xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %sl: f32, %o: f32):
    %c = arith.constant 0.353553385 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %sl, %df : f32
    %t = arith.mulf %a, %c : f32
    %y = arith.addf %t, %bias : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%s0 : tensor<2x16xf32>) dimensions = [2]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// A padding mask computed from a float tensor: s/sqrt(8) + (1 − m[b, j])·−1e4.
// IR-LABEL: func.func @padding
// IR-NOT: attn.sdpa
// expected-remark @+44 {{attn-raise: not raised: a query row may keep no key}}
func.func @padding(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %pm: tensor<2x16xf32>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, affine_map<(b, i, j) -> (b, j)>, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %pm : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mm: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %big = arith.constant -10000.0 : f32
    %c = arith.constant 0.353553385 : f32
    %t = arith.mulf %a, %c : f32
    %inv = arith.subf %one, %mm : f32
    %pen = arith.mulf %inv, %big : f32
    %y = arith.addf %t, %pen : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%s0 : tensor<2x16xf32>) dimensions = [2]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// A window whose lower bound is a run-time value: i − n ≤ j ≤ i (raised
// with zero-empty-rows: n is a capture of the mask function).
// IR-LABEL: func.func @runtime_window
// IR-NOT: attn.sdpa
// expected-remark @+46 {{attn-raise: not raised: a query row may keep no key}}
func.func @runtime_window(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %n: index) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul indexing_maps = [#q, #k, #s]
         ins(%q, %k : tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x16x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c = arith.constant 0.353553385 : f32
    %t = arith.mulf %a, %c : f32
    %lo = arith.subi %i, %n : index
    %past = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi sge, %j, %lo : index
    %keep = arith.andi %past, %near : i1
    %y = arith.select %keep, %t, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e1 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
         (%a: f32, %acc: f32) { %r = arith.maximumf %a, %acc : f32
                                linalg.yield %r : f32 }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%s0 : tensor<2x16xf32>) dimensions = [2]
           (%a: f32, %acc: f32) { %r = arith.addf %a, %acc : f32
                                  linalg.yield %r : f32 }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%e0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %e2 = tensor.empty() : tensor<2x16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}
