// Raised attention computes what the generic IR it replaces computes:
// each function runs unraised through the reference pipeline (upstream
// linalg lowering of every op) and raised (attn-raise) through the cpu
// pipeline's fused kernel, on the same seeded inputs, and the results
// agree within 1e-5 relative. The forms are those of
// test/Transforms/Raise/*.mlir: heads collapsed into batch_matmuls, a
// Hugging Face causal mask, a window with a log-sum-exp softmax and a
// scaled Q, and (with zero-empty-rows) a key-padding i1 mask next to an
// additive bias.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry=collapsed_heads --random-inputs --seed=1 --output=%t/a.npy --quiet
// RUN: attn-run %s --entry=collapsed_heads --pipeline=cpu --raise --random-inputs --seed=1 --expect=%t/a.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=hf_causal --random-inputs --seed=2 --output=%t/b.npy --quiet
// RUN: attn-run %s --entry=hf_causal --pipeline=cpu --raise --random-inputs --seed=2 --expect=%t/b.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=window_lse --random-inputs --seed=3 --output=%t/c.npy --quiet
// RUN: attn-run %s --entry=window_lse --pipeline=cpu --raise --random-inputs --seed=3 --expect=%t/c.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=padding --random-inputs --seed=4 --output=%t/d.npy --quiet
// RUN: attn-opt %s --attn-raise=zero-empty-rows -o %t/raised.mlir
// RUN: FileCheck %s --check-prefix=RAISED < %t/raised.mlir
// RUN: attn-run %t/raised.mlir --entry=padding --pipeline=cpu --random-inputs --seed=4 --expect=%t/d.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=bias --random-inputs --seed=5 --output=%t/e.npy --quiet
// RUN: attn-run %t/raised.mlir --entry=bias --pipeline=cpu --random-inputs --seed=5 --expect=%t/e.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=gqa_causal_buffer --random-inputs --seed=6 --output=%t/f.npy --quiet
// RUN: attn-run %s --entry=gqa_causal_buffer --pipeline=cpu --raise --random-inputs --seed=6 --expect=%t/f.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=window_constant --random-inputs --seed=7 --output=%t/g.npy --quiet
// RUN: attn-run %s --entry=window_constant --pipeline=cpu --raise --random-inputs --seed=7 --expect=%t/g.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// K/V repeated by tiling (query head h reads K/V head h mod Hkv): Q's heads
// are reordered into groups, and a per-head additive mask's with them.
// RUN: attn-run %s --entry=gqa_tiled --random-inputs --seed=8 --output=%t/h.npy --quiet
// RUN: attn-run %s --entry=gqa_tiled --pipeline=cpu --raise --random-inputs --seed=8 --expect=%t/h.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// RUN: attn-run %s --entry=gqa_tiled_mask --random-inputs --seed=9 --output=%t/i.npy --quiet
// RUN: attn-run %t/raised.mlir --entry=gqa_tiled_mask --pipeline=cpu --random-inputs --seed=9 --expect=%t/i.npy --rtol=1e-5 --atol=1e-6 --quiet | FileCheck %s
// CHECK: ok
// RAISED-COUNT-9: attn.sdpa
// RAISED-NOT: math.exp

#id3 = affine_map<(b, i, j) -> (b, i, j)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, i, h, e)>]
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#qk2 = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#row3 = affine_map<(b, i, j) -> (b, i)>
#row4 = affine_map<(b, h, i, j) -> (b, h, i, 0)>
#tri = affine_map<(b, h, i, j) -> (i, j)>

#g_qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#g_pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#g_id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#g_row = affine_map<(b, h, i, j) -> (b, h, i)>
#g_tri = affine_map<(b, h, i, j) -> (i, j)>

func.func @collapsed_heads(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %scale = arith.constant 0.25 : f32
  %kt0 = tensor.empty() : tensor<2x4x16x32xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x32x16xf32>) outs(%kt0 : tensor<2x4x16x32xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x32x16xf32> into tensor<8x32x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %s0 = tensor.empty() : tensor<8x32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %s3 = linalg.batch_matmul ins(%q3, %k3 : tensor<8x32x16xf32>, tensor<8x16x32xf32>) outs(%sz : tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 32, 32] : tensor<8x32x32xf32> into tensor<2x4x32x32xf32>
  %e4 = tensor.empty() : tensor<2x4x32x32xf32>
  %ss = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x32x32xf32>) outs(%e4 : tensor<2x4x32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %r0 = tensor.empty() : tensor<2x4x32x1xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%r0 : tensor<2x4x32x1xf32>) -> tensor<2x4x32x1xf32>
  %m = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss : tensor<2x4x32x32xf32>) outs(%m0 : tensor<2x4x32x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ss, %m : tensor<2x4x32x32xf32>, tensor<2x4x32x1xf32>) outs(%e4 : tensor<2x4x32x32xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4x32x1xf32>) -> tensor<2x4x32x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x32x32xf32>) outs(%z1 : tensor<2x4x32x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x32x32xf32>, tensor<2x4x32x1xf32>) outs(%e4 : tensor<2x4x32x32xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x4x32x32xf32> into tensor<8x32x32xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x32x16xf32> into tensor<8x32x16xf32>
  %o0 = tensor.empty() : tensor<8x32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x32x16xf32>) -> tensor<8x32x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x32x32xf32>, tensor<8x32x16xf32>) outs(%oz : tensor<8x32x16xf32>) -> tensor<8x32x16xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 32, 16] : tensor<8x32x16xf32> into tensor<2x4x32x16xf32>
  return %o : tensor<2x4x32x16xf32>
}

func.func @hf_causal(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x16xf32>) -> tensor<2x32x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %d = arith.constant 64.0 : f32
  %sq = math.sqrt %d : f32
  %s0 = tensor.empty() : tensor<2x4x32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x32x32xf32>) -> tensor<2x4x32x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) outs(%sz : tensor<2x4x32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %c0 = tensor.empty() : tensor<32x32xf32>
  %causal = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%c0 : tensor<32x32xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %zero : f32
    linalg.yield %y : f32
  } -> tensor<32x32xf32>
  %x = linalg.generic {indexing_maps = [#id4, #tri, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %causal : tensor<2x4x32x32xf32>, tensor<32x32xf32>) outs(%s0 : tensor<2x4x32x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.divf %a, %sq : f32
    %y = arith.addf %t, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %r0 = tensor.empty() : tensor<2x4x32xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %m = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x32x32xf32>) outs(%m0 : tensor<2x4x32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %gt = arith.cmpf ogt, %a, %acc : f32
    %y = arith.select %gt, %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x4x32x32xf32>, tensor<2x4x32xf32>) outs(%s0 : tensor<2x4x32x32xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x32x32xf32>) outs(%z1 : tensor<2x4x32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32xf32>
  %rcp = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<2x4x32xf32>) outs(%r0 : tensor<2x4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.divf %one, %a : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %rcp : tensor<2x4x32x32xf32>, tensor<2x4x32xf32>) outs(%s0 : tensor<2x4x32x32xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.mulf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<2x4x32x32xf32>
  %o0 = tensor.empty() : tensor<2x32x4x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x32x4x16xf32>) -> tensor<2x32x4x16xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x32x32xf32>, tensor<2x4x32x16xf32>) outs(%oz : tensor<2x32x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m2 = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m2 : f32
    linalg.yield %y : f32
  } -> tensor<2x32x4x16xf32>
  return %o : tensor<2x32x4x16xf32>
}

func.func @window_lse(%q: tensor<3x40x8xf32>, %k: tensor<3x40x8xf32>, %v: tensor<3x40x8xf32>) -> tensor<3x40x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c4 = arith.constant 4 : index
  %qs0 = tensor.empty() : tensor<3x40x8xf32>
  %half = arith.constant 0.5 : f32
  %qs = linalg.generic {indexing_maps = [affine_map<(b, i, d) -> (b, i, d)>, affine_map<(b, i, d) -> (b, i, d)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<3x40x8xf32>) outs(%qs0 : tensor<3x40x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %half : f32
    linalg.yield %y : f32
  } -> tensor<3x40x8xf32>
  %s0 = tensor.empty() : tensor<3x40x40xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3x40x40xf32>) -> tensor<3x40x40xf32>
  %s = linalg.generic {indexing_maps = #qk2, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qs, %k : tensor<3x40x8xf32>, tensor<3x40x8xf32>) outs(%sz : tensor<3x40x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<3x40x40xf32>
  // keep iff i - 4 <= j <= i, through an i1 -> i32 -> i8 -> i1 round trip
  %x = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<3x40x40xf32>) outs(%s0 : tensor<3x40x40xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %past = arith.cmpi sle, %j, %i : index
    %lo = arith.subi %i, %c4 : index
    %near = arith.cmpi sge, %j, %lo : index
    %keep = arith.andi %past, %near : i1
    %k32 = arith.extui %keep : i1 to i32
    %k8 = arith.trunci %k32 : i32 to i8
    %k1 = arith.trunci %k8 : i8 to i1
    %y = arith.select %k1, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<3x40x40xf32>
  %r0 = tensor.empty() : tensor<3x40xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<3x40xf32>) -> tensor<3x40xf32>
  %m = linalg.reduce ins(%x : tensor<3x40x40xf32>) outs(%m0 : tensor<3x40xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maxnumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<3x40x40xf32>, tensor<3x40xf32>) outs(%s0 : tensor<3x40x40xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<3x40x40xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<3x40xf32>) -> tensor<3x40xf32>
  %sum = linalg.reduce ins(%ex : tensor<3x40x40xf32>) outs(%z1 : tensor<3x40xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  // p = exp(x - (m + log(sum)))
  %p = linalg.generic {indexing_maps = [#id3, #row3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m, %sum : tensor<3x40x40xf32>, tensor<3x40xf32>, tensor<3x40xf32>) outs(%s0 : tensor<3x40x40xf32>) {
  ^bb0(%a: f32, %mx: f32, %sm: f32, %o: f32):
    %l = math.log %sm : f32
    %lse = arith.addf %mx, %l : f32
    %t = arith.subf %a, %lse : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<3x40x40xf32>
  %o0 = tensor.empty() : tensor<3x40x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<3x40x8xf32>) -> tensor<3x40x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x40x40xf32>, tensor<3x40x8xf32>) outs(%oz : tensor<3x40x8xf32>) -> tensor<3x40x8xf32>
  return %o : tensor<3x40x8xf32>
}

func.func @padding(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %keep: tensor<2x16xi1>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.35 : f32
  %s0 = tensor.empty() : tensor<2x16x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.generic {indexing_maps = #qk2, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%sz : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  // scale, then the key-padding keep-mask
  %x = linalg.generic {indexing_maps = [#id3, affine_map<(b, i, j) -> (b, j)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %keep : tensor<2x16x16xf32>, tensor<2x16xi1>) outs(%s0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %kp: i1, %o: f32):
    %t = arith.mulf %a, %c : f32
    %y = arith.select %kp, %t, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %r0 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%s0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%z1 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%s0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %o0 = tensor.empty() : tensor<2x16x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%oz : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

func.func @bias(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %bias: tensor<16x16xf32>) -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.35 : f32
  %s0 = tensor.empty() : tensor<2x16x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.generic {indexing_maps = #qk2, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%sz : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  // scale, then an additive bias [Tq, Tk]
  %x = linalg.generic {indexing_maps = [#id3, affine_map<(b, i, j) -> (i, j)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %bias : tensor<2x16x16xf32>, tensor<16x16xf32>) outs(%s0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %t = arith.mulf %a, %c : f32
    %y = arith.addf %t, %bb : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %r0 = tensor.empty() : tensor<2x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %m = linalg.reduce ins(%x : tensor<2x16x16xf32>) outs(%m0 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%s0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x16x16xf32>) outs(%z1 : tensor<2x16xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x16x16xf32>, tensor<2x16xf32>) outs(%s0 : tensor<2x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16xf32>
  %o0 = tensor.empty() : tensor<2x16x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%oz : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}


func.func @gqa_causal_buffer(%q: tensor<1x8x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %tril = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
  %eb = tensor.empty() : tensor<1x2x4x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x2x4x8x16xf32>) dimensions = [2]
  %vb = linalg.broadcast ins(%v : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x2x4x8x16xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x8x16xf32> into tensor<1x8x8x16xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x8x16xf32> into tensor<1x8x8x16xf32>
  %s0 = tensor.empty() : tensor<1x8x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s = linalg.generic {indexing_maps = #g_qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#g_id4, #g_tri, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %tril : tensor<1x8x8x8xf32>, tensor<8x8xi1>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %keep: i1, %o: f32):
    %t = arith.mulf %a, %c : f32
    %y = arith.select %keep, %t, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %r0 = tensor.empty() : tensor<1x8x8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %m = linalg.reduce ins(%x : tensor<1x8x8x8xf32>) outs(%m0 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %sum = linalg.reduce ins(%ex : tensor<1x8x8x8xf32>) outs(%z1 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #g_pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}


func.func @window_constant(%q: tensor<1x8x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %band = arith.constant dense<[[0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<8x8xf32>
  %eb = tensor.empty() : tensor<1x2x4x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x2x4x8x16xf32>) dimensions = [2]
  %vb = linalg.broadcast ins(%v : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x2x4x8x16xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x8x16xf32> into tensor<1x8x8x16xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x8x16xf32> into tensor<1x8x8x16xf32>
  %s0 = tensor.empty() : tensor<1x8x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s = linalg.generic {indexing_maps = #g_qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#g_id4, #g_tri, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %band : tensor<1x8x8x8xf32>, tensor<8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %add: f32, %o: f32):
    %t = arith.mulf %a, %c : f32
    %y = arith.addf %t, %add : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %r0 = tensor.empty() : tensor<1x8x8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %m = linalg.reduce ins(%x : tensor<1x8x8x8xf32>) outs(%m0 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %sum = linalg.reduce ins(%ex : tensor<1x8x8x8xf32>) outs(%z1 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #g_pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}

func.func @gqa_tiled(%q: tensor<1x8x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %tril = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
  %eb = tensor.empty() : tensor<1x4x2x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x4x2x8x16xf32>) dimensions = [1]
  %vb = linalg.broadcast ins(%v : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x4x2x8x16xf32>) dimensions = [1]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x4x2x8x16xf32> into tensor<1x8x8x16xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x4x2x8x16xf32> into tensor<1x8x8x16xf32>
  %s0 = tensor.empty() : tensor<1x8x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s = linalg.generic {indexing_maps = #g_qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#g_id4, #g_tri, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %tril : tensor<1x8x8x8xf32>, tensor<8x8xi1>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %keep: i1, %o: f32):
    %t = arith.mulf %a, %c : f32
    %y = arith.select %keep, %t, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %r0 = tensor.empty() : tensor<1x8x8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %m = linalg.reduce ins(%x : tensor<1x8x8x8xf32>) outs(%m0 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %sum = linalg.reduce ins(%ex : tensor<1x8x8x8xf32>) outs(%z1 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #g_pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}

func.func @gqa_tiled_mask(%q: tensor<1x8x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %bias: tensor<1x8x8x8xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %eb = tensor.empty() : tensor<1x4x2x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x4x2x8x16xf32>) dimensions = [1]
  %vb = linalg.broadcast ins(%v : tensor<1x2x8x16xf32>) outs(%eb : tensor<1x4x2x8x16xf32>) dimensions = [1]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x4x2x8x16xf32> into tensor<1x8x8x16xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x4x2x8x16xf32> into tensor<1x8x8x16xf32>
  %s0 = tensor.empty() : tensor<1x8x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s = linalg.generic {indexing_maps = #g_qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#g_id4, #g_id4, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %bias : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %t = arith.mulf %a, %c : f32
    %y = arith.addf %t, %bb : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %r0 = tensor.empty() : tensor<1x8x8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %m = linalg.reduce ins(%x : tensor<1x8x8x8xf32>) outs(%m0 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %t = arith.subf %a, %mx : f32
    %y = math.exp %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %sum = linalg.reduce ins(%ex : tensor<1x8x8x8xf32>) outs(%z1 : tensor<1x8x8xf32>) dimensions = [3]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#g_id4, #g_row, #g_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #g_pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}
