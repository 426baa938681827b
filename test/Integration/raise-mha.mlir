// attn-raise's last step (docs/raise.md, "Whole blocks into attn.mha"):
// attention blocks written as generic linalg the way torch-mlir emits
// nn.MultiheadAttention-like modules (inputs [B, T, E] flattened to
// [B·T, E], projections as matmuls against transposed weights, bias adds,
// head split by expand_shape + transpose, contraction generics on
// [B, H, T, D], a max / sub-exp / sum / divide softmax, head merge by
// transpose + collapse_shape, output projection). Raised blocks become one
// attn.mha; the near-misses stay attn.sdpa between attn.projects, with a
// remark. Every function raised (cpu and reference pipelines) matches the
// function as written through the reference pipeline.
//
// RUN: attn-opt %s --attn-raise --canonicalize | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @cross_attention
// IR-NEXT: %[[O:.*]] = attn.mha %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 qkv_bias(%arg6, %arg7, %arg8) {num_heads = 4 : i64, scale = 5.000000e-01 : f32} : (tensor<2x6x16xf32>, tensor<2x10x12xf32>, tensor<16x16xf32>, tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x6x16xf32>
// IR-NEXT: return %[[O]]
// IR-LABEL: func.func @gqa_no_bias
// IR-NEXT: %[[O:.*]] = attn.mha %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {num_heads = 6 : i64, num_kv_heads = 2 : i64, scale = 5.000000e-01 : f32}
// IR-NEXT: return %[[O]]
// IR-LABEL: func.func @output_also_returned
// IR-NOT: attn.mha
// IR: attn.sdpa
// IR: attn.project
// IR-LABEL: func.func @heads_interleaved
// IR-NOT: attn.mha
// IR: attn.sdpa
// IR: attn.project
//
// RUN: attn-opt %s --attn-raise=report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: raise-mha.mlir:[[CROSS:[0-9]+]]:{{[0-9]+}}: remark: attn-raise: raised to attn.sdpa
// REPORT: remark: attn-raise: the block raised to attn.mha
// REPORT: remark: attn-raise: the block raised to attn.mha
// REPORT: remark: attn-raise: not raised to attn.mha: the attention's output has other users than one output projection
// REPORT: remark: attn-raise: not raised to attn.mha: Q is not a head split of its projection's output
//
// RUN: attn-opt %s --attn-raise=mha=false --canonicalize | FileCheck %s --check-prefix=NOMHA
// NOMHA-NOT: attn.mha
// NOMHA-LABEL: func.func @cross_attention
// NOMHA: attn.project
// NOMHA: attn.sdpa
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry=cross_attention --random-inputs --seed=1 --output=%t/a.npy --quiet
// RUN: attn-run %s --entry=cross_attention --pipeline=cpu --raise --random-inputs --seed=1 --expect=%t/a.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// RUN: attn-run %s --entry=cross_attention --pipeline=reference --raise --random-inputs --seed=1 --expect=%t/a.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// RUN: attn-run %s --entry=gqa_no_bias --random-inputs --seed=2 --output=%t/b.npy --quiet
// RUN: attn-run %s --entry=gqa_no_bias --pipeline=cpu --raise --random-inputs --seed=2 --expect=%t/b.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// RUN: attn-run %s --entry=output_also_returned --random-inputs --seed=3 --output=%t/c0.npy --output=%t/c1.npy --quiet
// RUN: attn-run %s --entry=output_also_returned --pipeline=cpu --raise --random-inputs --seed=3 --expect=%t/c0.npy --expect=%t/c1.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s --check-prefix=OK2
// RUN: attn-run %s --entry=heads_interleaved --random-inputs --seed=4 --output=%t/d.npy --quiet
// RUN: attn-run %s --entry=heads_interleaved --pipeline=cpu --raise --random-inputs --seed=4 --expect=%t/d.npy --rtol=1e-5 --atol=1e-5 --quiet | FileCheck %s
// CHECK: ok
// OK2-COUNT-2: ok

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>

func.func @cross_attention(%xq: tensor<2x6x16xf32>, %xkv: tensor<2x10x12xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x12xf32>, %wv: tensor<16x12xf32>, %wo: tensor<16x16xf32>, %bq: tensor<16xf32>, %bk: tensor<16xf32>, %bv: tensor<16xf32>) -> (tensor<2x6x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.5 : f32
  %xq2 = tensor.collapse_shape %xq [[0, 1], [2]] : tensor<2x6x16xf32> into tensor<12x16xf32>
  %xkv2 = tensor.collapse_shape %xkv [[0, 1], [2]] : tensor<2x10x12xf32> into tensor<20x12xf32>
  %eq = tensor.empty() : tensor<12x16xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<12x16xf32>) -> tensor<12x16xf32>
  %mq = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xq2, %wq : tensor<12x16xf32>, tensor<16x16xf32>) outs(%zq : tensor<12x16xf32>) -> tensor<12x16xf32>
  %q2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mq, %bq : tensor<12x16xf32>, tensor<16xf32>) outs(%eq : tensor<12x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<12x16xf32>
  %ek = tensor.empty() : tensor<20x16xf32>
  %zk = linalg.fill ins(%zero : f32) outs(%ek : tensor<20x16xf32>) -> tensor<20x16xf32>
  %mk = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wk : tensor<20x12xf32>, tensor<16x12xf32>) outs(%zk : tensor<20x16xf32>) -> tensor<20x16xf32>
  %k2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mk, %bk : tensor<20x16xf32>, tensor<16xf32>) outs(%ek : tensor<20x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<20x16xf32>
  %ev = tensor.empty() : tensor<20x16xf32>
  %zv = linalg.fill ins(%zero : f32) outs(%ev : tensor<20x16xf32>) -> tensor<20x16xf32>
  %mv = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wv : tensor<20x12xf32>, tensor<16x12xf32>) outs(%zv : tensor<20x16xf32>) -> tensor<20x16xf32>
  %v2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mv, %bv : tensor<20x16xf32>, tensor<16xf32>) outs(%ev : tensor<20x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<20x16xf32>
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [2, 6, 4, 4] : tensor<12x16xf32> into tensor<2x6x4x4xf32>
  %eqh = tensor.empty() : tensor<2x4x6x4xf32>
  %qh = linalg.transpose ins(%q4 : tensor<2x6x4x4xf32>) outs(%eqh : tensor<2x4x6x4xf32>) permutation = [0, 2, 1, 3]
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [2, 10, 4, 4] : tensor<20x16xf32> into tensor<2x10x4x4xf32>
  %ekh = tensor.empty() : tensor<2x4x10x4xf32>
  %kh = linalg.transpose ins(%k4 : tensor<2x10x4x4xf32>) outs(%ekh : tensor<2x4x10x4xf32>) permutation = [0, 2, 1, 3]
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [2, 10, 4, 4] : tensor<20x16xf32> into tensor<2x10x4x4xf32>
  %evh = tensor.empty() : tensor<2x4x10x4xf32>
  %vh = linalg.transpose ins(%v4 : tensor<2x10x4x4xf32>) outs(%evh : tensor<2x4x10x4xf32>) permutation = [0, 2, 1, 3]
  %es = tensor.empty() : tensor<2x4x6x10xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x6x10xf32>) -> tensor<2x4x6x10xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%qh, %kh : tensor<2x4x6x4xf32>, tensor<2x4x10x4xf32>) outs(%zs : tensor<2x4x6x10xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6x10xf32>
  %ss = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x6x10xf32>) outs(%es : tensor<2x4x6x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6x10xf32>
  %er = tensor.empty() : tensor<2x4x6xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss : tensor<2x4x6x10xf32>) outs(%m0 : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.maximumf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ss, %mx : tensor<2x4x6x10xf32>, tensor<2x4x6xf32>) outs(%es : tensor<2x4x6x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %c : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6x10xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x6x10xf32>) outs(%s0 : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6xf32>
  %pr = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x6x10xf32>, tensor<2x4x6xf32>) outs(%es : tensor<2x4x6x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.divf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6x10xf32>
  %eo = tensor.empty() : tensor<2x4x6x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x6x4xf32>) -> tensor<2x4x6x4xf32>
  %oh = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%pr, %vh : tensor<2x4x6x10xf32>, tensor<2x4x10x4xf32>) outs(%zo : tensor<2x4x6x4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x4x6x4xf32>
  %eot = tensor.empty() : tensor<2x6x4x4xf32>
  %ot = linalg.transpose ins(%oh : tensor<2x4x6x4xf32>) outs(%eot : tensor<2x6x4x4xf32>) permutation = [0, 2, 1, 3]
  %o2 = tensor.collapse_shape %ot [[0, 1], [2, 3]] : tensor<2x6x4x4xf32> into tensor<12x16xf32>
  %eout = tensor.empty() : tensor<12x16xf32>
  %zout = linalg.fill ins(%zero : f32) outs(%eout : tensor<12x16xf32>) -> tensor<12x16xf32>
  %po = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%o2, %wo : tensor<12x16xf32>, tensor<16x16xf32>) outs(%zout : tensor<12x16xf32>) -> tensor<12x16xf32>
  %out = tensor.expand_shape %po [[0, 1], [2]] output_shape [2, 6, 16] : tensor<12x16xf32> into tensor<2x6x16xf32>
  return %out : tensor<2x6x16xf32>
}

func.func @gqa_no_bias(%xq: tensor<2x7x24xf32>, %xkv: tensor<2x7x24xf32>, %wq: tensor<24x24xf32>, %wk: tensor<8x24xf32>, %wv: tensor<8x24xf32>, %wo: tensor<24x24xf32>) -> (tensor<2x7x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.5 : f32
  %xq2 = tensor.collapse_shape %xq [[0, 1], [2]] : tensor<2x7x24xf32> into tensor<14x24xf32>
  %xkv2 = tensor.collapse_shape %xkv [[0, 1], [2]] : tensor<2x7x24xf32> into tensor<14x24xf32>
  %eq = tensor.empty() : tensor<14x24xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<14x24xf32>) -> tensor<14x24xf32>
  %mq = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xq2, %wq : tensor<14x24xf32>, tensor<24x24xf32>) outs(%zq : tensor<14x24xf32>) -> tensor<14x24xf32>
  %q2 = tensor.cast %mq : tensor<14x24xf32> to tensor<14x24xf32>
  %ek = tensor.empty() : tensor<14x8xf32>
  %zk = linalg.fill ins(%zero : f32) outs(%ek : tensor<14x8xf32>) -> tensor<14x8xf32>
  %mk = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wk : tensor<14x24xf32>, tensor<8x24xf32>) outs(%zk : tensor<14x8xf32>) -> tensor<14x8xf32>
  %k2 = tensor.cast %mk : tensor<14x8xf32> to tensor<14x8xf32>
  %ev = tensor.empty() : tensor<14x8xf32>
  %zv = linalg.fill ins(%zero : f32) outs(%ev : tensor<14x8xf32>) -> tensor<14x8xf32>
  %mv = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wv : tensor<14x24xf32>, tensor<8x24xf32>) outs(%zv : tensor<14x8xf32>) -> tensor<14x8xf32>
  %v2 = tensor.cast %mv : tensor<14x8xf32> to tensor<14x8xf32>
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [2, 7, 6, 4] : tensor<14x24xf32> into tensor<2x7x6x4xf32>
  %eqh = tensor.empty() : tensor<2x6x7x4xf32>
  %qh = linalg.transpose ins(%q4 : tensor<2x7x6x4xf32>) outs(%eqh : tensor<2x6x7x4xf32>) permutation = [0, 2, 1, 3]
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [2, 7, 2, 4] : tensor<14x8xf32> into tensor<2x7x2x4xf32>
  %ekh = tensor.empty() : tensor<2x2x7x4xf32>
  %kh = linalg.transpose ins(%k4 : tensor<2x7x2x4xf32>) outs(%ekh : tensor<2x2x7x4xf32>) permutation = [0, 2, 1, 3]
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [2, 7, 2, 4] : tensor<14x8xf32> into tensor<2x7x2x4xf32>
  %evh = tensor.empty() : tensor<2x2x7x4xf32>
  %vh = linalg.transpose ins(%v4 : tensor<2x7x2x4xf32>) outs(%evh : tensor<2x2x7x4xf32>) permutation = [0, 2, 1, 3]
  %ekb = tensor.empty() : tensor<2x2x3x7x4xf32>
  %kb = linalg.broadcast ins(%kh : tensor<2x2x7x4xf32>) outs(%ekb : tensor<2x2x3x7x4xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x3x7x4xf32> into tensor<2x6x7x4xf32>
  %evb = tensor.empty() : tensor<2x2x3x7x4xf32>
  %vb = linalg.broadcast ins(%vh : tensor<2x2x7x4xf32>) outs(%evb : tensor<2x2x3x7x4xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x3x7x4xf32> into tensor<2x6x7x4xf32>
  %es = tensor.empty() : tensor<2x6x7x7xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x6x7x7xf32>) -> tensor<2x6x7x7xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%qh, %kr : tensor<2x6x7x4xf32>, tensor<2x6x7x4xf32>) outs(%zs : tensor<2x6x7x7xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7x7xf32>
  %ss = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x6x7x7xf32>) outs(%es : tensor<2x6x7x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7x7xf32>
  %er = tensor.empty() : tensor<2x6x7xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x6x7xf32>) -> tensor<2x6x7xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss : tensor<2x6x7x7xf32>) outs(%m0 : tensor<2x6x7xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.maximumf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ss, %mx : tensor<2x6x7x7xf32>, tensor<2x6x7xf32>) outs(%es : tensor<2x6x7x7xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %c : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7x7xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%er : tensor<2x6x7xf32>) -> tensor<2x6x7xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x6x7x7xf32>) outs(%s0 : tensor<2x6x7xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7xf32>
  %pr = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x6x7x7xf32>, tensor<2x6x7xf32>) outs(%es : tensor<2x6x7x7xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.divf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7x7xf32>
  %eo = tensor.empty() : tensor<2x6x7x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x6x7x4xf32>) -> tensor<2x6x7x4xf32>
  %oh = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%pr, %vr : tensor<2x6x7x7xf32>, tensor<2x6x7x4xf32>) outs(%zo : tensor<2x6x7x4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x6x7x4xf32>
  %eot = tensor.empty() : tensor<2x7x6x4xf32>
  %ot = linalg.transpose ins(%oh : tensor<2x6x7x4xf32>) outs(%eot : tensor<2x7x6x4xf32>) permutation = [0, 2, 1, 3]
  %o2 = tensor.collapse_shape %ot [[0, 1], [2, 3]] : tensor<2x7x6x4xf32> into tensor<14x24xf32>
  %eout = tensor.empty() : tensor<14x24xf32>
  %zout = linalg.fill ins(%zero : f32) outs(%eout : tensor<14x24xf32>) -> tensor<14x24xf32>
  %po = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%o2, %wo : tensor<14x24xf32>, tensor<24x24xf32>) outs(%zout : tensor<14x24xf32>) -> tensor<14x24xf32>
  %out = tensor.expand_shape %po [[0, 1], [2]] output_shape [2, 7, 24] : tensor<14x24xf32> into tensor<2x7x24xf32>
  return %out : tensor<2x7x24xf32>
}

func.func @output_also_returned(%xq: tensor<1x5x8xf32>, %xkv: tensor<1x5x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %wo: tensor<8x8xf32>, %bq: tensor<8xf32>, %bk: tensor<8xf32>, %bv: tensor<8xf32>) -> (tensor<1x5x8xf32>, tensor<1x2x5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.5 : f32
  %xq2 = tensor.collapse_shape %xq [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %xkv2 = tensor.collapse_shape %xkv [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %eq = tensor.empty() : tensor<5x8xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<5x8xf32>) -> tensor<5x8xf32>
  %mq = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xq2, %wq : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zq : tensor<5x8xf32>) -> tensor<5x8xf32>
  %q2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mq, %bq : tensor<5x8xf32>, tensor<8xf32>) outs(%eq : tensor<5x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<5x8xf32>
  %ek = tensor.empty() : tensor<5x8xf32>
  %zk = linalg.fill ins(%zero : f32) outs(%ek : tensor<5x8xf32>) -> tensor<5x8xf32>
  %mk = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wk : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zk : tensor<5x8xf32>) -> tensor<5x8xf32>
  %k2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mk, %bk : tensor<5x8xf32>, tensor<8xf32>) outs(%ek : tensor<5x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<5x8xf32>
  %ev = tensor.empty() : tensor<5x8xf32>
  %zv = linalg.fill ins(%zero : f32) outs(%ev : tensor<5x8xf32>) -> tensor<5x8xf32>
  %mv = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wv : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zv : tensor<5x8xf32>) -> tensor<5x8xf32>
  %v2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mv, %bv : tensor<5x8xf32>, tensor<8xf32>) outs(%ev : tensor<5x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<5x8xf32>
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [1, 5, 2, 4] : tensor<5x8xf32> into tensor<1x5x2x4xf32>
  %eqh = tensor.empty() : tensor<1x2x5x4xf32>
  %qh = linalg.transpose ins(%q4 : tensor<1x5x2x4xf32>) outs(%eqh : tensor<1x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [1, 5, 2, 4] : tensor<5x8xf32> into tensor<1x5x2x4xf32>
  %ekh = tensor.empty() : tensor<1x2x5x4xf32>
  %kh = linalg.transpose ins(%k4 : tensor<1x5x2x4xf32>) outs(%ekh : tensor<1x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [1, 5, 2, 4] : tensor<5x8xf32> into tensor<1x5x2x4xf32>
  %evh = tensor.empty() : tensor<1x2x5x4xf32>
  %vh = linalg.transpose ins(%v4 : tensor<1x5x2x4xf32>) outs(%evh : tensor<1x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %es = tensor.empty() : tensor<1x2x5x5xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%qh, %kh : tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) outs(%zs : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %ss = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x5x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %er = tensor.empty() : tensor<1x2x5xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss : tensor<1x2x5x5xf32>) outs(%m0 : tensor<1x2x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.maximumf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ss, %mx : tensor<1x2x5x5xf32>, tensor<1x2x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %c : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x2x5x5xf32>) outs(%s0 : tensor<1x2x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5xf32>
  %pr = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x2x5x5xf32>, tensor<1x2x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.divf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %eo = tensor.empty() : tensor<1x2x5x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  %oh = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%pr, %vh : tensor<1x2x5x5xf32>, tensor<1x2x5x4xf32>) outs(%zo : tensor<1x2x5x4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x4xf32>
  %eot = tensor.empty() : tensor<1x5x2x4xf32>
  %ot = linalg.transpose ins(%oh : tensor<1x2x5x4xf32>) outs(%eot : tensor<1x5x2x4xf32>) permutation = [0, 2, 1, 3]
  %o2 = tensor.collapse_shape %ot [[0, 1], [2, 3]] : tensor<1x5x2x4xf32> into tensor<5x8xf32>
  %eout = tensor.empty() : tensor<5x8xf32>
  %zout = linalg.fill ins(%zero : f32) outs(%eout : tensor<5x8xf32>) -> tensor<5x8xf32>
  %po = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%o2, %wo : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zout : tensor<5x8xf32>) -> tensor<5x8xf32>
  %out = tensor.expand_shape %po [[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf32> into tensor<1x5x8xf32>
  return %out, %oh : tensor<1x5x8xf32>, tensor<1x2x5x4xf32>
}

func.func @heads_interleaved(%xq: tensor<1x5x8xf32>, %xkv: tensor<1x5x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %wo: tensor<8x8xf32>, %bq: tensor<8xf32>, %bk: tensor<8xf32>, %bv: tensor<8xf32>) -> (tensor<1x5x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.5 : f32
  %xq2 = tensor.collapse_shape %xq [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %xkv2 = tensor.collapse_shape %xkv [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %eq = tensor.empty() : tensor<5x8xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<5x8xf32>) -> tensor<5x8xf32>
  %mq = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xq2, %wq : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zq : tensor<5x8xf32>) -> tensor<5x8xf32>
  %q2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mq, %bq : tensor<5x8xf32>, tensor<8xf32>) outs(%eq : tensor<5x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<5x8xf32>
  %ek = tensor.empty() : tensor<5x8xf32>
  %zk = linalg.fill ins(%zero : f32) outs(%ek : tensor<5x8xf32>) -> tensor<5x8xf32>
  %mk = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wk : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zk : tensor<5x8xf32>) -> tensor<5x8xf32>
  %k2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mk, %bk : tensor<5x8xf32>, tensor<8xf32>) outs(%ek : tensor<5x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<5x8xf32>
  %ev = tensor.empty() : tensor<5x8xf32>
  %zv = linalg.fill ins(%zero : f32) outs(%ev : tensor<5x8xf32>) -> tensor<5x8xf32>
  %mv = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%xkv2, %wv : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zv : tensor<5x8xf32>) -> tensor<5x8xf32>
  %v2 = linalg.generic {indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mv, %bv : tensor<5x8xf32>, tensor<8xf32>) outs(%ev : tensor<5x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<5x8xf32>
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [1, 5, 4, 2] : tensor<5x8xf32> into tensor<1x5x4x2xf32>
  %eqh = tensor.empty() : tensor<1x2x5x4xf32>
  %qh = linalg.transpose ins(%q4 : tensor<1x5x4x2xf32>) outs(%eqh : tensor<1x2x5x4xf32>) permutation = [0, 3, 1, 2]
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [1, 5, 4, 2] : tensor<5x8xf32> into tensor<1x5x4x2xf32>
  %ekh = tensor.empty() : tensor<1x2x5x4xf32>
  %kh = linalg.transpose ins(%k4 : tensor<1x5x4x2xf32>) outs(%ekh : tensor<1x2x5x4xf32>) permutation = [0, 3, 1, 2]
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [1, 5, 4, 2] : tensor<5x8xf32> into tensor<1x5x4x2xf32>
  %evh = tensor.empty() : tensor<1x2x5x4xf32>
  %vh = linalg.transpose ins(%v4 : tensor<1x5x4x2xf32>) outs(%evh : tensor<1x2x5x4xf32>) permutation = [0, 3, 1, 2]
  %es = tensor.empty() : tensor<1x2x5x5xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%qh, %kh : tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) outs(%zs : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %ss = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x5x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %er = tensor.empty() : tensor<1x2x5xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ss : tensor<1x2x5x5xf32>) outs(%m0 : tensor<1x2x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.maximumf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ss, %mx : tensor<1x2x5x5xf32>, tensor<1x2x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %c : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x2x5x5xf32>) outs(%s0 : tensor<1x2x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5xf32>
  %pr = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<1x2x5x5xf32>, tensor<1x2x5xf32>) outs(%es : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.divf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x5xf32>
  %eo = tensor.empty() : tensor<1x2x5x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  %oh = linalg.generic {indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%pr, %vh : tensor<1x2x5x5xf32>, tensor<1x2x5x4xf32>) outs(%zo : tensor<1x2x5x4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %y = arith.addf %acc, %p : f32
    linalg.yield %y : f32
  } -> tensor<1x2x5x4xf32>
  %eot = tensor.empty() : tensor<1x5x2x4xf32>
  %ot = linalg.transpose ins(%oh : tensor<1x2x5x4xf32>) outs(%eot : tensor<1x5x2x4xf32>) permutation = [0, 2, 1, 3]
  %o2 = tensor.collapse_shape %ot [[0, 1], [2, 3]] : tensor<1x5x2x4xf32> into tensor<5x8xf32>
  %eout = tensor.empty() : tensor<5x8xf32>
  %zout = linalg.fill ins(%zero : f32) outs(%eout : tensor<5x8xf32>) -> tensor<5x8xf32>
  %po = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%o2, %wo : tensor<5x8xf32>, tensor<8x8xf32>) outs(%zout : tensor<5x8xf32>) -> tensor<5x8xf32>
  %out = tensor.expand_shape %po [[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf32> into tensor<1x5x8xf32>
  return %out : tensor<1x5x8xf32>
}
