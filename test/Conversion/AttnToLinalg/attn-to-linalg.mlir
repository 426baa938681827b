// convert-attn-to-linalg: each primitive op becomes linalg on tensors; the
// scores are materialised; dynamic dims come from tensor.dim.
// RUN: attn-opt %s -convert-attn-to-linalg -split-input-file | FileCheck %s

// y = b + x·Wᵀ: bias broadcast into the init, then a reduction over In.
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @project
// CHECK-SAME: (%[[IN:.*]]: tensor<2x?x12xf32>, %[[WT:.*]]: tensor<7x12xf32>, %[[B:.*]]: tensor<7xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[IN]], %{{.*}} : tensor<2x?x12xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[T]]) : tensor<2x?x7xf32>
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[BIAS]], {{.*}}]{{.*}} ins(%[[B]] : tensor<7xf32>) outs(%[[E]]
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[IN]], %[[WT]] : {{.*}}) outs(%[[INIT]]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @project(%x: tensor<2x?x12xf32>, %w: tensor<7x12xf32>, %b: tensor<7xf32>) -> tensor<2x?x7xf32> {
  %0 = attn.project %x, %w, %b : (tensor<2x?x12xf32>, tensor<7x12xf32>, tensor<7xf32>) -> tensor<2x?x7xf32>
  return %0 : tensor<2x?x7xf32>
}

// -----

// in_out weight: W is read as W[i, o]; no bias means a zero-filled init.
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @project_in_out
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[W]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @project_in_out(%x: tensor<5x12xf32>, %w: tensor<12x7xf32>) -> tensor<5x7xf32> {
  %0 = attn.project %x, %w {layout = #attn.layout<in_out>} : (tensor<5x12xf32>, tensor<12x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}

// -----

// split_heads: expand [B,T,h,D] with the dynamic sizes, then transpose.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x24xf32>)
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[EX:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%[[B]], %[[T]], 4, 6] : tensor<?x?x24xf32> into tensor<?x?x4x6xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x4x?x6xf32>
// CHECK: linalg.transpose ins(%[[EX]] : tensor<?x?x4x6xf32>) outs(%[[E]] : tensor<?x4x?x6xf32>) permutation = [0, 2, 1, 3]
func.func @split(%x: tensor<?x?x24xf32>) -> tensor<?x4x?x6xf32> {
  %0 = attn.split_heads %x {num_heads = 4 : i64} : (tensor<?x?x24xf32>) -> tensor<?x4x?x6xf32>
  return %0 : tensor<?x4x?x6xf32>
}

// -----

// merge_heads: transpose to [B,T,h,D], then collapse.
// CHECK-LABEL: func.func @merge
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<?x4x?x6xf32>) outs(%{{.*}} : tensor<?x?x4x6xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %[[T]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x4x6xf32> into tensor<?x?x24xf32>
func.func @merge(%x: tensor<?x4x?x6xf32>) -> tensor<?x?x24xf32> {
  %0 = attn.merge_heads %x : (tensor<?x4x?x6xf32>) -> tensor<?x?x24xf32>
  return %0 : tensor<?x?x24xf32>
}

// -----

// scores with GQA (4 query heads on 2 kv heads): K is read at head h floordiv 2,
// never copied; the whole [B,H,Tq,Tk] tensor is materialised.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @scores
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<1x4x?x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
func.func @scores(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>) -> tensor<1x4x?x?xf32> {
  %0 = attn.scores %q, %k : (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

// weighted_sum: reduction over Tk, V read at head h floordiv 4.
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
// CHECK-LABEL: func.func @weighted_sum
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[V]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
func.func @weighted_sum(%p: tensor<1x4x3x5xf32>, %v: tensor<1x1x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x3x5xf32>, tensor<1x1x5x8xf32>) -> tensor<1x4x3x8xf32>
  return %0 : tensor<1x4x3x8xf32>
}

// -----

// mask: bottom_right causal (j > i + Tk - Tq is -inf) and a keep mask that
// broadcasts over B and H.
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @mask_bottom_right
// CHECK-SAME: (%[[S:.*]]: tensor<2x3x?x?xf32>, %[[K:.*]]: tensor<?x?xi1>)
// CHECK-DAG: %[[TQ:.*]] = tensor.dim %[[S]], %c2
// CHECK-DAG: %[[TK:.*]] = tensor.dim %[[S]], %c3
// CHECK: %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]] : index
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[M]], {{.*}}]{{.*}} ins(%[[S]], %[[K]] :
// CHECK: ^bb0(%[[X:.*]]: f32, %[[KEEP:.*]]: i1, %{{.*}}: f32):
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: %[[LIM:.*]] = arith.addi %[[I]], %[[OFF]]
// CHECK: %[[MASKED:.*]] = arith.cmpi sgt, %[[J]], %[[LIM]]
// CHECK: %[[KEPT:.*]] = arith.select %[[KEEP]], %[[X]], %[[NINF]]
// CHECK: arith.select %[[MASKED]], %[[NINF]], %[[KEPT]]
func.func @mask_bottom_right(%s: tensor<2x3x?x?xf32>, %m: tensor<?x?xi1>) -> tensor<2x3x?x?xf32> {
  %0 = attn.mask %s, %m {causal = #attn.causal<bottom_right>} : tensor<2x3x?x?xf32>, tensor<?x?xi1>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// mask: top_left causal (j > i) and an additive mask of shape [B,1,1,Tk]:
// static 1 dims read index 0.
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-LABEL: func.func @mask_top_left_additive
// CHECK-NOT: arith.subi
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[M]], {{.*}}]
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: arith.addf
// CHECK: arith.cmpi sgt, %[[J]], %[[I]]
func.func @mask_top_left_additive(%s: tensor<2x3x5x7xf32>, %m: tensor<2x1x1x7xf32>) -> tensor<2x3x5x7xf32> {
  %0 = attn.mask %s, %m {causal = #attn.causal<top_left>} : tensor<2x3x5x7xf32>, tensor<2x1x1x7xf32>
  return %0 : tensor<2x3x5x7xf32>
}

// -----

// softmax: row max, row sum of exp(x - max), then exp(x - max) / sum, with
// zeros for a row whose max is -inf; f16 computes in f32 and rounds once.
// CHECK-LABEL: func.func @softmax_f16
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.extf
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @softmax_f16(%x: tensor<4x?xf16>) -> tensor<4x?xf16> {
  %0 = attn.softmax %x : tensor<4x?xf16>
  return %0 : tensor<4x?xf16>
}

// -----

// scale and dropout are elementwise; dropout hashes the flat index with
// splitmix64 and keeps values whose top 24 bits are >= ceil(rate·2^24).
// CHECK-LABEL: func.func @scale_dropout
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: arith.index_cast
// CHECK: arith.constant -7046029254386353131 : i64
// CHECK: arith.constant -4658895280553007687 : i64
// CHECK: arith.constant -7723592293110705685 : i64
// CHECK: arith.constant 5033165 : i64
// CHECK: arith.cmpi uge
// CHECK: arith.select
func.func @scale_dropout(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = attn.scale %x {scale = 0.5 : f32} : tensor<2x3x4x5xf32>
  %1 = attn.dropout %0 {rate = 0.3 : f32, seed = 9 : i64} : tensor<2x3x4x5xf32>
  return %1 : tensor<2x3x4x5xf32>
}
