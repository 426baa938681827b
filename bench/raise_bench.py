#!/usr/bin/env python3
"""attn-raise: a GPT-2-small attention written as generic linalg (the way
torch-mlir emits it), run unraised and raised, in one process, alternating.

  python3 bench/raise_bench.py [--t 1024] [--rounds 5] [--threads 0]

Programs (f32, H 12, D 64, causal, Hugging Face mask built from
linalg.index, scale by a division by sqrt(64), softmax as max / sub-exp /
sum / divide generics):
- core: Q, K, V [1, 12, T, 64] in, attention out;
- layer: x [T, 768] → fused QKV projection (matmul + bias) → slices and
  head split (expand_shape, transpose) → the core with heads as a
  batch_matmul batch → head merge → output projection + bias + residual;
- bert: a BERT-base layer as TOSA (rank-3 tosa.matmul projections, the
  padding mask (1 - m)·-10000 added, reciprocal softmax), lowered to
  linalg by upstream's TOSA passes first (not causal: every score counts).

Each is timed through
- unraised: attn-run --pipeline=reference (one-shot bufferisation,
  linalg to loops, LLVM -O3: what the upstream linalg lowering gives the
  same JIT), and --pipeline=cpu (identical for IR without attn ops; its
  threads do not apply to linalg loops);
- raised: attn-run --pipeline=cpu --raise (attn-raise, then the fused
  kernel; the projections stay linalg loops in both).
The IR is written to bench/raise/ (gpt2_core_T.mlir, gpt2_layer_T.mlir,
bert_tosa_T.mlir and its linalg form)."""

import argparse
import json
import os
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def core(t, h=12, d=64):
    return f"""#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i, 0)>
#tri = affine_map<(b, h, i, j) -> (i, j)>
func.func @gpt2_core(%q: tensor<1x{h}x{t}x{d}xf32>, %k: tensor<1x{h}x{t}x{d}xf32>, %v: tensor<1x{h}x{t}x{d}xf32>) -> tensor<1x{h}x{t}x{d}xf32> {{
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %dd = arith.constant {float(d)} : f32
  %sq = math.sqrt %dd : f32
  %s0 = tensor.empty() : tensor<1x{h}x{t}x{t}xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x{h}x{t}x{t}xf32>) -> tensor<1x{h}x{t}x{t}xf32>
  %s = linalg.generic {{indexing_maps = #qk, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}}
      ins(%q, %k : tensor<1x{h}x{t}x{d}xf32>, tensor<1x{h}x{t}x{d}xf32>) outs(%sz : tensor<1x{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %m : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x{t}xf32>
  %c0 = tensor.empty() : tensor<{t}x{t}xf32>
  %causal = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      outs(%c0 : tensor<{t}x{t}xf32>) {{
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %zero : f32
    linalg.yield %y : f32
  }} -> tensor<{t}x{t}xf32>
  %x = linalg.generic {{indexing_maps = [#id4, #tri, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%s, %causal : tensor<1x{h}x{t}x{t}xf32>, tensor<{t}x{t}xf32>) outs(%s0 : tensor<1x{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %c: f32, %o: f32):
    %w = arith.divf %a, %sq : f32
    %y = arith.addf %w, %c : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x{t}xf32>
  %r0 = tensor.empty() : tensor<1x{h}x{t}x1xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%r0 : tensor<1x{h}x{t}x1xf32>) -> tensor<1x{h}x{t}x1xf32>
  %m = linalg.generic {{indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%x : tensor<1x{h}x{t}x{t}xf32>) outs(%m0 : tensor<1x{h}x{t}x1xf32>) {{
  ^bb0(%a: f32, %acc: f32):
    %y = arith.maximumf %a, %acc : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x1xf32>
  %ex = linalg.generic {{indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%x, %m : tensor<1x{h}x{t}x{t}xf32>, tensor<1x{h}x{t}x1xf32>) outs(%s0 : tensor<1x{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %w = arith.subf %a, %mx : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x{t}xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<1x{h}x{t}x1xf32>) -> tensor<1x{h}x{t}x1xf32>
  %sum = linalg.generic {{indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%ex : tensor<1x{h}x{t}x{t}xf32>) outs(%z1 : tensor<1x{h}x{t}x1xf32>) {{
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x1xf32>
  %p = linalg.generic {{indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%ex, %sum : tensor<1x{h}x{t}x{t}xf32>, tensor<1x{h}x{t}x1xf32>) outs(%s0 : tensor<1x{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.divf %a, %r : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x{t}xf32>
  %o0 = tensor.empty() : tensor<1x{h}x{t}x{d}xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x{h}x{t}x{d}xf32>) -> tensor<1x{h}x{t}x{d}xf32>
  %o = linalg.generic {{indexing_maps = #pv, iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}}
      ins(%p, %v : tensor<1x{h}x{t}x{t}xf32>, tensor<1x{h}x{t}x{d}xf32>) outs(%oz : tensor<1x{h}x{t}x{d}xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %y = arith.addf %acc, %mm : f32
    linalg.yield %y : f32
  }} -> tensor<1x{h}x{t}x{d}xf32>
  return %o : tensor<1x{h}x{t}x{d}xf32>
}}
"""


def layer(t, h=12, d=64):
    e = h * d
    return f"""#bias = affine_map<(i, j) -> (j)>
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#row3 = affine_map<(h, i, j) -> (h, i)>
#tri3 = affine_map<(h, i, j) -> (i, j)>
func.func @gpt2_layer(%x: tensor<{t}x{e}xf32>, %wqkv: tensor<{e}x{3*e}xf32>, %bqkv: tensor<{3*e}xf32>,
                      %wo: tensor<{e}x{e}xf32>, %bo: tensor<{e}xf32>) -> tensor<{t}x{e}xf32> {{
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %scale = arith.constant 0.125 : f32
  %e3 = tensor.empty() : tensor<{t}x{3*e}xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<{t}x{3*e}xf32>) -> tensor<{t}x{3*e}xf32>
  %mm = linalg.matmul ins(%x, %wqkv : tensor<{t}x{e}xf32>, tensor<{e}x{3*e}xf32>) outs(%z3 : tensor<{t}x{3*e}xf32>) -> tensor<{t}x{3*e}xf32>
  %qkv = linalg.generic {{indexing_maps = [#id2, #bias, #id2], iterator_types = ["parallel", "parallel"]}}
      ins(%mm, %bqkv : tensor<{t}x{3*e}xf32>, tensor<{3*e}xf32>) outs(%e3 : tensor<{t}x{3*e}xf32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  }} -> tensor<{t}x{3*e}xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [{t}, {e}] [1, 1] : tensor<{t}x{3*e}xf32> to tensor<{t}x{e}xf32>
  %k2 = tensor.extract_slice %qkv[0, {e}] [{t}, {e}] [1, 1] : tensor<{t}x{3*e}xf32> to tensor<{t}x{e}xf32>
  %v2 = tensor.extract_slice %qkv[0, {2*e}] [{t}, {e}] [1, 1] : tensor<{t}x{3*e}xf32> to tensor<{t}x{e}xf32>
  %q3 = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [{t}, {h}, {d}] : tensor<{t}x{e}xf32> into tensor<{t}x{h}x{d}xf32>
  %k3 = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [{t}, {h}, {d}] : tensor<{t}x{e}xf32> into tensor<{t}x{h}x{d}xf32>
  %v3 = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [{t}, {h}, {d}] : tensor<{t}x{e}xf32> into tensor<{t}x{h}x{d}xf32>
  %eh = tensor.empty() : tensor<{h}x{t}x{d}xf32>
  %qh = linalg.transpose ins(%q3 : tensor<{t}x{h}x{d}xf32>) outs(%eh : tensor<{h}x{t}x{d}xf32>) permutation = [1, 0, 2]
  %vh = linalg.transpose ins(%v3 : tensor<{t}x{h}x{d}xf32>) outs(%eh : tensor<{h}x{t}x{d}xf32>) permutation = [1, 0, 2]
  %ekt = tensor.empty() : tensor<{h}x{d}x{t}xf32>
  %kt = linalg.transpose ins(%k3 : tensor<{t}x{h}x{d}xf32>) outs(%ekt : tensor<{h}x{d}x{t}xf32>) permutation = [1, 2, 0]
  %es = tensor.empty() : tensor<{h}x{t}x{t}xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<{h}x{t}x{t}xf32>) -> tensor<{h}x{t}x{t}xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<{h}x{t}x{d}xf32>, tensor<{h}x{d}x{t}xf32>) outs(%zs : tensor<{h}x{t}x{t}xf32>) -> tensor<{h}x{t}x{t}xf32>
  %x2 = linalg.generic {{indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%s : tensor<{h}x{t}x{t}xf32>) outs(%es : tensor<{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %w = arith.mulf %a, %scale : f32
    %later = arith.cmpi sgt, %j, %i : index
    %y = arith.select %later, %min, %w : f32
    linalg.yield %y : f32
  }} -> tensor<{h}x{t}x{t}xf32>
  %er = tensor.empty() : tensor<{h}x{t}xf32>
  %m0 = linalg.fill ins(%min : f32) outs(%er : tensor<{h}x{t}xf32>) -> tensor<{h}x{t}xf32>
  %m = linalg.reduce ins(%x2 : tensor<{h}x{t}x{t}xf32>) outs(%m0 : tensor<{h}x{t}xf32>) dimensions = [2]
    (%a: f32, %acc: f32) {{ %y = arith.maximumf %a, %acc : f32
                           linalg.yield %y : f32 }}
  %ex = linalg.generic {{indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%x2, %m : tensor<{h}x{t}x{t}xf32>, tensor<{h}x{t}xf32>) outs(%es : tensor<{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %w = arith.subf %a, %mx : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  }} -> tensor<{h}x{t}x{t}xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%er : tensor<{h}x{t}xf32>) -> tensor<{h}x{t}xf32>
  %sum = linalg.reduce ins(%ex : tensor<{h}x{t}x{t}xf32>) outs(%z1 : tensor<{h}x{t}xf32>) dimensions = [2]
    (%a: f32, %acc: f32) {{ %y = arith.addf %a, %acc : f32
                           linalg.yield %y : f32 }}
  %p = linalg.generic {{indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%ex, %sum : tensor<{h}x{t}x{t}xf32>, tensor<{h}x{t}xf32>) outs(%es : tensor<{h}x{t}x{t}xf32>) {{
  ^bb0(%a: f32, %r: f32, %o: f32):
    %y = arith.divf %a, %r : f32
    linalg.yield %y : f32
  }} -> tensor<{h}x{t}x{t}xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eh : tensor<{h}x{t}x{d}xf32>) -> tensor<{h}x{t}x{d}xf32>
  %oh = linalg.batch_matmul ins(%p, %vh : tensor<{h}x{t}x{t}xf32>, tensor<{h}x{t}x{d}xf32>) outs(%zo : tensor<{h}x{t}x{d}xf32>) -> tensor<{h}x{t}x{d}xf32>
  %et = tensor.empty() : tensor<{t}x{h}x{d}xf32>
  %ot = linalg.transpose ins(%oh : tensor<{h}x{t}x{d}xf32>) outs(%et : tensor<{t}x{h}x{d}xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %ot [[0], [1, 2]] : tensor<{t}x{h}x{d}xf32> into tensor<{t}x{e}xf32>
  %ee = tensor.empty() : tensor<{t}x{e}xf32>
  %ze = linalg.fill ins(%zero : f32) outs(%ee : tensor<{t}x{e}xf32>) -> tensor<{t}x{e}xf32>
  %pr = linalg.matmul ins(%o2, %wo : tensor<{t}x{e}xf32>, tensor<{e}x{e}xf32>) outs(%ze : tensor<{t}x{e}xf32>) -> tensor<{t}x{e}xf32>
  %out = linalg.generic {{indexing_maps = [#id2, #bias, #id2, #id2], iterator_types = ["parallel", "parallel"]}}
      ins(%pr, %bo, %x : tensor<{t}x{e}xf32>, tensor<{e}xf32>, tensor<{t}x{e}xf32>) outs(%ee : tensor<{t}x{e}xf32>) {{
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %u = arith.addf %a, %b : f32
    %y = arith.addf %u, %r : f32
    linalg.yield %y : f32
  }} -> tensor<{t}x{e}xf32>
  return %out : tensor<{t}x{e}xf32>
}}
"""


def bert_tosa(t, h=12, d=64):
    e = h * d
    sc = 1.0 / d ** 0.5
    return f"""func.func @bert_layer(%x: tensor<1x{t}x{e}xf32>, %mask: tensor<1x1x{t}xf32>,
                      %wq: tensor<1x{e}x{e}xf32>, %wk: tensor<1x{e}x{e}xf32>, %wv: tensor<1x{e}x{e}xf32>,
                      %wo: tensor<1x{e}x{e}xf32>, %bq: tensor<1x1x{e}xf32>, %bk: tensor<1x1x{e}xf32>,
                      %bv: tensor<1x1x{e}xf32>, %bo: tensor<1x1x{e}xf32>) -> tensor<1x{t}x{e}xf32> {{
  %zp = "tosa.const"() {{values = dense<0.0> : tensor<1xf32>}} : () -> tensor<1xf32>
  %shift = "tosa.const"() {{values = dense<0> : tensor<1xi8>}} : () -> tensor<1xi8>
  %one = "tosa.const"() {{values = dense<1.0> : tensor<1x1x1xf32>}} : () -> tensor<1x1x1xf32>
  %big = "tosa.const"() {{values = dense<-10000.0> : tensor<1x1x1xf32>}} : () -> tensor<1x1x1xf32>
  %scale = "tosa.const"() {{values = dense<{sc}> : tensor<1x1x1xf32>}} : () -> tensor<1x1x1xf32>
  %s4 = tosa.const_shape {{values = dense<[1, {t}, {h}, {d}]> : tensor<4xindex>}} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {{values = dense<[{h}, {t}, {d}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s3k = tosa.const_shape {{values = dense<[{h}, {d}, {t}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %sm = tosa.const_shape {{values = dense<[1, {t}, {t}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %se = tosa.const_shape {{values = dense<[1, {t}, {e}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {{values = dense<[1, {h}, {t}, {d}]> : tensor<4xindex>}} : () -> !tosa.shape<4>
  %qm = tosa.matmul %x, %wq, %zp, %zp : (tensor<1x{t}x{e}xf32>, tensor<1x{e}x{e}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{t}x{e}xf32>
  %km = tosa.matmul %x, %wk, %zp, %zp : (tensor<1x{t}x{e}xf32>, tensor<1x{e}x{e}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{t}x{e}xf32>
  %vm = tosa.matmul %x, %wv, %zp, %zp : (tensor<1x{t}x{e}xf32>, tensor<1x{e}x{e}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{t}x{e}xf32>
  %q1 = tosa.add %qm, %bq : (tensor<1x{t}x{e}xf32>, tensor<1x1x{e}xf32>) -> tensor<1x{t}x{e}xf32>
  %k1 = tosa.add %km, %bk : (tensor<1x{t}x{e}xf32>, tensor<1x1x{e}xf32>) -> tensor<1x{t}x{e}xf32>
  %v1 = tosa.add %vm, %bv : (tensor<1x{t}x{e}xf32>, tensor<1x1x{e}xf32>) -> tensor<1x{t}x{e}xf32>
  %q2 = tosa.reshape %q1, %s4 : (tensor<1x{t}x{e}xf32>, !tosa.shape<4>) -> tensor<1x{t}x{h}x{d}xf32>
  %k2 = tosa.reshape %k1, %s4 : (tensor<1x{t}x{e}xf32>, !tosa.shape<4>) -> tensor<1x{t}x{h}x{d}xf32>
  %v2 = tosa.reshape %v1, %s4 : (tensor<1x{t}x{e}xf32>, !tosa.shape<4>) -> tensor<1x{t}x{h}x{d}xf32>
  %q3 = tosa.transpose %q2 {{perms = array<i32: 0, 2, 1, 3>}} : (tensor<1x{t}x{h}x{d}xf32>) -> tensor<1x{h}x{t}x{d}xf32>
  %k3 = tosa.transpose %k2 {{perms = array<i32: 0, 2, 3, 1>}} : (tensor<1x{t}x{h}x{d}xf32>) -> tensor<1x{h}x{d}x{t}xf32>
  %v3 = tosa.transpose %v2 {{perms = array<i32: 0, 2, 1, 3>}} : (tensor<1x{t}x{h}x{d}xf32>) -> tensor<1x{h}x{t}x{d}xf32>
  %q4 = tosa.reshape %q3, %s3 : (tensor<1x{h}x{t}x{d}xf32>, !tosa.shape<3>) -> tensor<{h}x{t}x{d}xf32>
  %k4 = tosa.reshape %k3, %s3k : (tensor<1x{h}x{d}x{t}xf32>, !tosa.shape<3>) -> tensor<{h}x{d}x{t}xf32>
  %v4 = tosa.reshape %v3, %s3 : (tensor<1x{h}x{t}x{d}xf32>, !tosa.shape<3>) -> tensor<{h}x{t}x{d}xf32>
  %s = tosa.matmul %q4, %k4, %zp, %zp : (tensor<{h}x{t}x{d}xf32>, tensor<{h}x{d}x{t}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<{h}x{t}x{t}xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<{h}x{t}x{t}xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<{h}x{t}x{t}xf32>
  %inv = tosa.sub %one, %mask : (tensor<1x1x1xf32>, tensor<1x1x{t}xf32>) -> tensor<1x1x{t}xf32>
  %pen = tosa.mul %inv, %big, %shift : (tensor<1x1x{t}xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x1x{t}xf32>
  %xs = tosa.add %ss, %pen : (tensor<{h}x{t}x{t}xf32>, tensor<1x1x{t}xf32>) -> tensor<{h}x{t}x{t}xf32>
  %m = tosa.reduce_max %xs {{axis = 2 : i32}} : (tensor<{h}x{t}x{t}xf32>) -> tensor<{h}x{t}x1xf32>
  %dd = tosa.sub %xs, %m : (tensor<{h}x{t}x{t}xf32>, tensor<{h}x{t}x1xf32>) -> tensor<{h}x{t}x{t}xf32>
  %ex = tosa.exp %dd : (tensor<{h}x{t}x{t}xf32>) -> tensor<{h}x{t}x{t}xf32>
  %sum = tosa.reduce_sum %ex {{axis = 2 : i32}} : (tensor<{h}x{t}x{t}xf32>) -> tensor<{h}x{t}x1xf32>
  %r = tosa.reciprocal %sum : (tensor<{h}x{t}x1xf32>) -> tensor<{h}x{t}x1xf32>
  %p = tosa.mul %ex, %r, %shift : (tensor<{h}x{t}x{t}xf32>, tensor<{h}x{t}x1xf32>, tensor<1xi8>) -> tensor<{h}x{t}x{t}xf32>
  %o = tosa.matmul %p, %v4, %zp, %zp : (tensor<{h}x{t}x{t}xf32>, tensor<{h}x{t}x{d}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<{h}x{t}x{d}xf32>
  %o1 = tosa.reshape %o, %s4o : (tensor<{h}x{t}x{d}xf32>, !tosa.shape<4>) -> tensor<1x{h}x{t}x{d}xf32>
  %o2 = tosa.transpose %o1 {{perms = array<i32: 0, 2, 1, 3>}} : (tensor<1x{h}x{t}x{d}xf32>) -> tensor<1x{t}x{h}x{d}xf32>
  %o3 = tosa.reshape %o2, %se : (tensor<1x{t}x{h}x{d}xf32>, !tosa.shape<3>) -> tensor<1x{t}x{e}xf32>
  %pr = tosa.matmul %o3, %wo, %zp, %zp : (tensor<1x{t}x{e}xf32>, tensor<1x{e}x{e}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{t}x{e}xf32>
  %pb = tosa.add %pr, %bo : (tensor<1x{t}x{e}xf32>, tensor<1x1x{e}xf32>) -> tensor<1x{t}x{e}xf32>
  %out = tosa.add %pb, %x : (tensor<1x{t}x{e}xf32>, tensor<1x{t}x{e}xf32>) -> tensor<1x{t}x{e}xf32>
  return %out : tensor<1x{t}x{e}xf32>
}}
"""


def lower_tosa(build, path, out):
    """The TOSA program as linalg (upstream's TOSA lowerings), as a
    TOSA-importing pipeline would hand it to attn-raise."""
    subprocess.run([os.path.join(build, "bin", "attn-opt"), path, "--pass-pipeline="
                    "builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,"
                    "tosa-to-arith,tosa-to-tensor))", "-o", out], check=True)


def run(build, path, pipeline, raise_, threads, repeat):
    cmd = [os.path.join(build, "bin", "attn-run"), path, "--pipeline=" + pipeline,
           "--random-inputs", "--seed=1", "--repeat=%d" % repeat, "--json",
           "--num-threads=%d" % threads]
    if raise_:
        # The BERT mask is a function argument: a row it drops whole would
        # be NaN in the source and 0 raised (docs/raise.md).
        cmd.append("--raise=zero-empty-rows=1")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", choices=["core", "layer", "bert"])
    args = ap.parse_args()
    outdir = os.path.join(ROOT, "bench", "raise")
    os.makedirs(outdir, exist_ok=True)
    t = args.t
    # FLOPs: Q·Kᵀ and P·V (full T², as the unraised program computes them),
    # the layer adds its two projections.
    attn_flops = 2 * 2 * 12 * t * t * 64
    proj_flops = 2 * t * 768 * (3 * 768) + 2 * t * 768 * 768
    # The causal kernel computes about half of Q·Kᵀ and P·V: "of the peak"
    # counts that half.
    bert_flops = attn_flops + 2 * t * 768 * 768 * 4
    programs = [("core", core(t), attn_flops, attn_flops / 2),
                ("layer", layer(t), attn_flops + proj_flops, attn_flops / 2 + proj_flops),
                ("bert", bert_tosa(t), bert_flops, bert_flops)]
    threads = args.threads or os.cpu_count()
    peak = json.loads(subprocess.run(
        [os.path.join(args.build, "bin", "attn-fma-peak"), "--threads=%d" % threads],
        check=True, capture_output=True, text=True).stdout)
    print("f32 FMA peak (%s, %d threads): %.1f GFLOP/s" % (peak["isa"], threads, peak["gflops"]))
    print()
    print("| program | T | unraised reference (ms) | raised cpu (ms) | speed-up | raised, of the FMA peak (causal FLOPs) |")
    print("|---|---|---|---|---|---|")
    for name, text, flops, work in programs:
        if args.only and name != args.only:
            continue
        stem = "bert_tosa_%d" % t if name == "bert" else "gpt2_%s_%d" % (name, t)
        path = os.path.join(outdir, stem + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        if name == "bert":
            linalg = os.path.join(outdir, stem + "_linalg.mlir")
            lower_tosa(args.build, path, linalg)
            path = linalg
        plain, raised = [], []
        for _ in range(args.rounds):
            plain.append(run(args.build, path, "reference", False, args.threads, args.repeat))
            raised.append(run(args.build, path, "cpu", True, args.threads, args.repeat))
        a, b = statistics.median(plain), statistics.median(raised)
        print("| %s | %d | %.1f (%.2f GFLOP/s) | %.1f (%.2f GFLOP/s) | %.1fx | %.0f %% |" %
              (name, t, a, flops / a / 1e6, b, flops / b / 1e6, a / b,
               100 * work / b / 1e6 / peak["gflops"]), flush=True)


if __name__ == "__main__":
    main()
