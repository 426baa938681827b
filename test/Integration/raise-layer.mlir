// A whole attention layer written as generic linalg (fused QKV projection
// with bias, head split by slices, expand_shape and transposes, heads as a
// batch_matmul batch, a causal mask from linalg.index, softmax, head merge,
// output projection, bias and residual; bench/raise_bench.py's layer at
// T 24, 4 heads of 8), and the same layer with RoPE (rotate-half: one
// generic reading x at (d + 4) mod 8 with the sign from linalg.index) on Q and K: attn-raise turns the
// first block into one attn.mha, the second's attention into attn.sdpa and
// the two projections around it into attn.project (the RoPE stays generic
// IR between them), and each layer run raised through the cpu pipeline
// matches the layer run as written through the reference pipeline.
// The GPT-2 layer's block becomes one attn.mha: the packed QKV weight and
// bias sliced into Wq/Wk/Wv and bq/bk/bv, x as [1, 24, 32]; the output
// bias and the residual stay one add after it. The RoPE layer's Q is not
// a projection's head split (the RoPE generic is between), so its block
// stays attn.project, attn.sdpa, attn.project.
// RUN: attn-opt %s --attn-raise --canonicalize | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @gpt2_layer
// IR: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [1, 24, 32]
// IR-DAG: %[[WQ:.*]] = tensor.extract_slice %arg1[0, 0] [32, 32] [1, 1]
// IR-DAG: %[[WK:.*]] = tensor.extract_slice %arg1[0, 32] [32, 32] [1, 1]
// IR-DAG: %[[WV:.*]] = tensor.extract_slice %arg1[0, 64] [32, 32] [1, 1]
// IR-DAG: %[[BQ:.*]] = tensor.extract_slice %arg2[0] [32] [1]
// IR-DAG: %[[BK:.*]] = tensor.extract_slice %arg2[32] [32] [1]
// IR-DAG: %[[BV:.*]] = tensor.extract_slice %arg2[64] [32] [1]
// IR: attn.mha %[[X]], %[[X]], %[[WQ]], %[[WK]], %[[WV]], %arg3 qkv_bias(%[[BQ]], %[[BK]], %[[BV]]) {causal = #attn.causal<top_left>, layout = #attn.layout<in_out>, num_heads = 4 : i64, scale = 0.353553385 : f32}
// IR: linalg.generic
// IR-NOT: attn.sdpa
// IR-NOT: math.exp
// IR-NOT: linalg.matmul
// IR-LABEL: func.func @rope_layer
// IR: attn.project %arg0, %arg3
// IR: linalg.generic
// IR: attn.sdpa {{.*}}causal = #attn.causal<top_left>
// IR: attn.project
// IR-NOT: linalg.matmul
// RUN: attn-opt %s --attn-raise=report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: remark: attn-raise: the block raised to attn.mha
// REPORT: remark: attn-raise: not raised to attn.mha: Q is read through a generic that is not a bias add
// RUN: attn-opt %s --attn-raise=mha=false --canonicalize | FileCheck %s --check-prefix=NOMHA
// NOMHA-LABEL: func.func @gpt2_layer
// NOMHA: attn.project %arg0, %arg1 {layout = #attn.layout<in_out>} : (tensor<24x32xf32>, tensor<32x96xf32>) -> tensor<24x96xf32>
// NOMHA: attn.sdpa {{.*}}causal = #attn.causal<top_left>
// NOMHA: attn.project {{.*}}, %arg3 {layout = #attn.layout<in_out>} : (tensor<24x32xf32>, tensor<32x32xf32>) -> tensor<24x32xf32>
// RUN: attn-opt %s --attn-raise=projections=false | FileCheck %s --check-prefix=NOPROJ
// NOPROJ: linalg.matmul
// NOPROJ: attn.sdpa
// NOPROJ: linalg.matmul
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --random-inputs --seed=11 --output=%t/ref.npy --quiet
// RUN: attn-run %s --pipeline=cpu --raise --random-inputs --seed=11 --expect=%t/ref.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// RUN: attn-run %s --entry=rope_layer --random-inputs --seed=12 --output=%t/rope.npy --quiet
// RUN: attn-run %s --entry=rope_layer --pipeline=cpu --raise --random-inputs --seed=12 --expect=%t/rope.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// CHECK: ok

#bias = affine_map<(i, j) -> (j)>
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#row3 = affine_map<(h, i, j) -> (h, i)>
#tri3 = affine_map<(h, i, j) -> (i, j)>
#rope_x = affine_map<(t, h, d) -> (t, h, d)>
#rope_cs = affine_map<(t, h, d) -> (t, d)>
#rope_half = affine_map<(t, h, d) -> (t, h, (d + 4) mod 8)>
func.func @gpt2_layer(%x: tensor<24x32xf32>, %wqkv: tensor<32x96xf32>, %bqkv: tensor<96xf32>,
                      %wo: tensor<32x32xf32>, %bo: tensor<32xf32>) -> tensor<24x32xf32> {
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %scale = arith.constant 0.35355339 : f32
  %e3 = tensor.empty() : tensor<24x96xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<24x96xf32>) -> tensor<24x96xf32>
  %mm = linalg.matmul ins(%x, %wqkv : tensor<24x32xf32>, tensor<32x96xf32>) outs(%z3 : tensor<24x96xf32>) -> tensor<24x96xf32>
  %qkv = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bqkv : tensor<24x96xf32>, tensor<96xf32>) outs(%e3 : tensor<24x96xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<24x96xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [24, 32] [1, 1] : tensor<24x96xf32> to tensor<24x32xf32>
  %k2 = tensor.extract_slice %qkv[0, 32] [24, 32] [1, 1] : tensor<24x96xf32> to tensor<24x32xf32>
  %v2 = tensor.extract_slice %qkv[0, 64] [24, 32] [1, 1] : tensor<24x96xf32> to tensor<24x32xf32>
  %q3 = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [24, 4, 8] : tensor<24x32xf32> into tensor<24x4x8xf32>
  %k3 = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [24, 4, 8] : tensor<24x32xf32> into tensor<24x4x8xf32>
  %v3 = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [24, 4, 8] : tensor<24x32xf32> into tensor<24x4x8xf32>
  %eh = tensor.empty() : tensor<4x24x8xf32>
  %qh = linalg.transpose ins(%q3 : tensor<24x4x8xf32>) outs(%eh : tensor<4x24x8xf32>) permutation = [1, 0, 2]
  %vh = linalg.transpose ins(%v3 : tensor<24x4x8xf32>) outs(%eh : tensor<4x24x8xf32>) permutation = [1, 0, 2]
  %ekt = tensor.empty() : tensor<4x8x24xf32>
  %kt = linalg.transpose ins(%k3 : tensor<24x4x8xf32>) outs(%ekt : tensor<4x8x24xf32>) permutation = [1, 2, 0]
  %es = tensor.empty() : tensor<4x24x24xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x24x24xf32>) -> tensor<4x24x24xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<4x24x8xf32>, tensor<4x8x24xf32>) outs(%zs : tensor<4x24x24xf32>) -> tensor<4x24x24xf32>
  %x2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x24x24xf32>) outs(%es : tensor<4x24x24xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %w = arith.mulf %a, %scale : f32
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %w : f32
    linalg.yield %y : f32
  } -> tensor<4x24x24xf32>
  %er = tensor.empty() : tensor<4x24xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%er : tensor<4x24xf32>) -> tensor<4x24xf32>
  %m = linalg.reduce ins(%x2 : tensor<4x24x24xf32>) outs(%m0 : tensor<4x24xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2, %m : tensor<4x24x24xf32>, tensor<4x24xf32>) outs(%es : tensor<4x24x24xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %w = arith.subf %a, %mx : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  } -> tensor<4x24x24xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%er : tensor<4x24xf32>) -> tensor<4x24xf32>
  %sum = linalg.reduce ins(%ex : tensor<4x24x24xf32>) outs(%z1 : tensor<4x24xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<4x24x24xf32>, tensor<4x24xf32>) outs(%es : tensor<4x24x24xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.divf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<4x24x24xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x24x8xf32>) -> tensor<4x24x8xf32>
  %oh = linalg.batch_matmul ins(%p, %vh : tensor<4x24x24xf32>, tensor<4x24x8xf32>) outs(%zo : tensor<4x24x8xf32>) -> tensor<4x24x8xf32>
  %et = tensor.empty() : tensor<24x4x8xf32>
  %ot = linalg.transpose ins(%oh : tensor<4x24x8xf32>) outs(%et : tensor<24x4x8xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %ot [[0], [1, 2]] : tensor<24x4x8xf32> into tensor<24x32xf32>
  %ee = tensor.empty() : tensor<24x32xf32>
  %ze = linalg.fill ins(%zero : f32) outs(%ee : tensor<24x32xf32>) -> tensor<24x32xf32>
  %pr = linalg.matmul ins(%o2, %wo : tensor<24x32xf32>, tensor<32x32xf32>) outs(%ze : tensor<24x32xf32>) -> tensor<24x32xf32>
  %out = linalg.generic {indexing_maps = [#id2, #bias, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%pr, %bo, %x : tensor<24x32xf32>, tensor<32xf32>, tensor<24x32xf32>) outs(%ee : tensor<24x32xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %u = arith.addf %a, %b : f32
    %y = arith.addf %u, %r : f32
    linalg.yield %y : f32
  } -> tensor<24x32xf32>
  return %out : tensor<24x32xf32>
}

func.func @rope_layer(%x: tensor<24x32xf32>, %cos: tensor<24x8xf32>, %sin: tensor<24x8xf32>,
                      %wqkv: tensor<32x96xf32>, %bqkv: tensor<96xf32>,
                      %wo: tensor<32x32xf32>, %bo: tensor<32xf32>) -> tensor<24x32xf32> {
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %scale = arith.constant 0.35355339 : f32
  %e3 = tensor.empty() : tensor<24x96xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<24x96xf32>) -> tensor<24x96xf32>
  %mm = linalg.matmul ins(%x, %wqkv : tensor<24x32xf32>, tensor<32x96xf32>) outs(%z3 : tensor<24x96xf32>) -> tensor<24x96xf32>
  %qkv = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bqkv : tensor<24x96xf32>, tensor<96xf32>) outs(%e3 : tensor<24x96xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<24x96xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [24, 32] [1, 1] : tensor<24x96xf32> to tensor<24x32xf32>
  %k2 = tensor.extract_slice %qkv[0, 32] [24, 32] [1, 1] : tensor<24x96xf32> to tensor<24x32xf32>
  %v2 = tensor.extract_slice %qkv[0, 64] [24, 32] [1, 1] : tensor<24x96xf32> to tensor<24x32xf32>
  %erope = tensor.empty() : tensor<24x4x8xf32>
  %q3r = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [24, 4, 8] : tensor<24x32xf32> into tensor<24x4x8xf32>
  %q3 = linalg.generic {indexing_maps = [#rope_x, #rope_half, #rope_cs, #rope_cs, #rope_x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q3r, %q3r, %cos, %sin : tensor<24x4x8xf32>, tensor<24x4x8xf32>, tensor<24x8xf32>, tensor<24x8xf32>) outs(%erope : tensor<24x4x8xf32>) {
  ^bb0(%a: f32, %other: f32, %c: f32, %sn: f32, %o: f32):
    %d = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %first = arith.cmpi slt, %d, %c4 : index
    %neg = arith.negf %other : f32
    %r = arith.select %first, %neg, %other : f32
    %ac = arith.mulf %a, %c : f32
    %rs = arith.mulf %r, %sn : f32
    %y = arith.addf %ac, %rs : f32
    linalg.yield %y : f32
  } -> tensor<24x4x8xf32>
  %k3r = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [24, 4, 8] : tensor<24x32xf32> into tensor<24x4x8xf32>
  %k3 = linalg.generic {indexing_maps = [#rope_x, #rope_half, #rope_cs, #rope_cs, #rope_x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k3r, %k3r, %cos, %sin : tensor<24x4x8xf32>, tensor<24x4x8xf32>, tensor<24x8xf32>, tensor<24x8xf32>) outs(%erope : tensor<24x4x8xf32>) {
  ^bb0(%a: f32, %other: f32, %c: f32, %sn: f32, %o: f32):
    %d = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %first = arith.cmpi slt, %d, %c4 : index
    %neg = arith.negf %other : f32
    %r = arith.select %first, %neg, %other : f32
    %ac = arith.mulf %a, %c : f32
    %rs = arith.mulf %r, %sn : f32
    %y = arith.addf %ac, %rs : f32
    linalg.yield %y : f32
  } -> tensor<24x4x8xf32>
  %v3 = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [24, 4, 8] : tensor<24x32xf32> into tensor<24x4x8xf32>
  %eh = tensor.empty() : tensor<4x24x8xf32>
  %qh = linalg.transpose ins(%q3 : tensor<24x4x8xf32>) outs(%eh : tensor<4x24x8xf32>) permutation = [1, 0, 2]
  %vh = linalg.transpose ins(%v3 : tensor<24x4x8xf32>) outs(%eh : tensor<4x24x8xf32>) permutation = [1, 0, 2]
  %ekt = tensor.empty() : tensor<4x8x24xf32>
  %kt = linalg.transpose ins(%k3 : tensor<24x4x8xf32>) outs(%ekt : tensor<4x8x24xf32>) permutation = [1, 2, 0]
  %es = tensor.empty() : tensor<4x24x24xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x24x24xf32>) -> tensor<4x24x24xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<4x24x8xf32>, tensor<4x8x24xf32>) outs(%zs : tensor<4x24x24xf32>) -> tensor<4x24x24xf32>
  %x2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x24x24xf32>) outs(%es : tensor<4x24x24xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %w = arith.mulf %a, %scale : f32
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %w : f32
    linalg.yield %y : f32
  } -> tensor<4x24x24xf32>
  %er = tensor.empty() : tensor<4x24xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%er : tensor<4x24xf32>) -> tensor<4x24xf32>
  %m = linalg.reduce ins(%x2 : tensor<4x24x24xf32>) outs(%m0 : tensor<4x24xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2, %m : tensor<4x24x24xf32>, tensor<4x24xf32>) outs(%es : tensor<4x24x24xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %w = arith.subf %a, %mx : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  } -> tensor<4x24x24xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%er : tensor<4x24xf32>) -> tensor<4x24xf32>
  %sum = linalg.reduce ins(%ex : tensor<4x24x24xf32>) outs(%z1 : tensor<4x24xf32>) dimensions = [2]
    (%a: f32, %acc: f32) { %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<4x24x24xf32>, tensor<4x24xf32>) outs(%es : tensor<4x24x24xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.divf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<4x24x24xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x24x8xf32>) -> tensor<4x24x8xf32>
  %oh = linalg.batch_matmul ins(%p, %vh : tensor<4x24x24xf32>, tensor<4x24x8xf32>) outs(%zo : tensor<4x24x8xf32>) -> tensor<4x24x8xf32>
  %et = tensor.empty() : tensor<24x4x8xf32>
  %ot = linalg.transpose ins(%oh : tensor<4x24x8xf32>) outs(%et : tensor<24x4x8xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %ot [[0], [1, 2]] : tensor<24x4x8xf32> into tensor<24x32xf32>
  %ee = tensor.empty() : tensor<24x32xf32>
  %ze = linalg.fill ins(%zero : f32) outs(%ee : tensor<24x32xf32>) -> tensor<24x32xf32>
  %pr = linalg.matmul ins(%o2, %wo : tensor<24x32xf32>, tensor<32x32xf32>) outs(%ze : tensor<24x32xf32>) -> tensor<24x32xf32>
  %out = linalg.generic {indexing_maps = [#id2, #bias, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%pr, %bo, %x : tensor<24x32xf32>, tensor<32xf32>, tensor<24x32xf32>) outs(%ee : tensor<24x32xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %u = arith.addf %a, %b : f32
    %y = arith.addf %u, %r : f32
    linalg.yield %y : f32
  } -> tensor<24x32xf32>
  return %out : tensor<24x32xf32>
}
