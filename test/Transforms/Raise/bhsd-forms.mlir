// attn-raise on attention the way torch-mlir and hand-written linalg emit
// it, one function per form; the execution check of each form is
// test/Integration/raise-linalg.mlir.
// RUN: attn-opt %s --attn-raise --canonicalize --split-input-file | FileCheck %s

// Heads collapsed into a batch_matmul, K transposed first, a scale after
// Q·Kᵀ, keepdim reductions with −FLT_MAX, sub and exp in one generic.
// CHECK-LABEL: func.func @collapsed_heads
// CHECK-NOT: linalg.reduce
// CHECK: attn.sdpa {{.*}} {scale = 2.500000e-01 : f32} : (tensor<1x8x32x16xf32>, tensor<1x8x32x16xf32>, tensor<1x8x32x16xf32>) -> tensor<1x8x32x16xf32>
// CHECK-NOT: math.exp
// CHECK-NOT: linalg.batch_matmul
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row4 = affine_map<(b, h, i, j) -> (b, h, i, 0)>
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

// -----

// Contraction generics on [B, H, T, D]; a Hugging Face causal mask built
// from linalg.index (select(j > i, finfo.min, 0), added); max by compare
// and select; the reciprocal of the sum multiplied in; the output written
// with the heads merged ([B, T, H, D]).
// CHECK-LABEL: func.func @hf_causal
// CHECK: %[[O:.*]] = attn.sdpa {{.*}} {causal = #attn.causal<top_left>, scale = 1.250000e-01 : f32} : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32>
// CHECK: linalg.transpose ins(%[[O]] : tensor<2x4x32x16xf32>) outs({{.*}} : tensor<2x32x4x16xf32>) permutation = [0, 2, 1, 3]
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, i, h, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#tri = affine_map<(b, h, i, j) -> (i, j)>
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

// -----

// GQA written as repeat_interleave: K and V [1, 2, 8, 16] broadcast to
// [1, 2, 4, 8, 16] and collapsed to 8 heads; the sdpa reads the 2 K/V heads
// (no copy). A causal buffer (a dense i1 constant, tril) keeps the keys.
// CHECK-LABEL: func.func @gqa_causal_buffer
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, scale = 2.500000e-01 : f32} : (tensor<1x8x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NOT: linalg.broadcast
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#tri = affine_map<(b, h, i, j) -> (i, j)>
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
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #tri, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
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
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
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
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}

// -----

// An additive constant mask (0 on the band i - 2 <= j <= i, -inf
// elsewhere) is a causal window, not a mask operand.
// CHECK-LABEL: func.func @window_constant
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, scale = 2.500000e-01 : f32, window = #attn.window<left = 2>} : (tensor<1x8x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NOT: linalg.broadcast
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#tri = affine_map<(b, h, i, j) -> (i, j)>
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
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #tri, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
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
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
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
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}

// -----

// GQA written as repeat (tiled): K and V [1, 2, 8, 16] broadcast to
// [1, 4, 2, 8, 16] and collapsed, so query head h reads K/V head h mod 2.
// The sdpa reads the 2 K/V heads (no copy); Q's heads are reordered into
// groups (head g·2 + j to j·4 + g) and the output's back.
// CHECK-LABEL: func.func @gqa_tiled
// CHECK: %[[QE:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 4, 2, 8, 16]
// CHECK: %[[QT:.*]] = linalg.transpose ins(%[[QE]] : tensor<1x4x2x8x16xf32>) outs(%{{.*}} : tensor<1x2x4x8x16xf32>) permutation = [0, 2, 1, 3, 4]
// CHECK: %[[Q:.*]] = tensor.collapse_shape %[[QT]]
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %arg1, %arg2 {causal = #attn.causal<top_left>, scale = 2.500000e-01 : f32} : (tensor<1x8x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[OE:.*]] = tensor.expand_shape %[[O]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 4, 8, 16]
// CHECK: linalg.transpose ins(%[[OE]] : tensor<1x2x4x8x16xf32>) outs(%{{.*}} : tensor<1x4x2x8x16xf32>) permutation = [0, 2, 1, 3, 4]
// CHECK-NOT: linalg.broadcast
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#tri = affine_map<(b, h, i, j) -> (i, j)>
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
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) outs(%sz : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id4, #tri, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
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
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
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
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x8x8x8xf32>, tensor<1x8x8xf32>) outs(%s0 : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %y = arith.divf %a, %t : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x8xf32>
  %o0 = tensor.empty() : tensor<1x8x8x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x8x8xf32>, tensor<1x8x8x16xf32>) outs(%oz : tensor<1x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  } -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}
