// Folds and canonicalisation patterns, and the cases that must not fold.
// RUN: attn-opt %s -canonicalize -split-input-file | FileCheck %s

// scale(x, 1) = x
// CHECK-LABEL: func.func @scale_by_one
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x4xf32>)
// CHECK-NOT: attn.scale
// CHECK: return %[[X]]
func.func @scale_by_one(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.scale %x {scale = 1.0 : f32} : tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// scale(scale(x, a), b) = scale(x, a*b)
// CHECK-LABEL: func.func @scale_of_scale
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x4xf32>)
// CHECK: %[[S:.*]] = attn.scale %[[X]] {scale = 1.250000e-01 : f32}
// CHECK-NOT: attn.scale
// CHECK: return %[[S]]
func.func @scale_of_scale(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.scale %x {scale = 0.5 : f32} : tensor<1x2x3x4xf32>
  %1 = attn.scale %0 {scale = 0.25 : f32} : tensor<1x2x3x4xf32>
  return %1 : tensor<1x2x3x4xf32>
}

// -----

// scale(scale(x, 2), 0.5) = scale(x, 1) = x
// CHECK-LABEL: func.func @scales_cancel
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x4xf32>)
// CHECK-NOT: attn.scale
// CHECK: return %[[X]]
func.func @scales_cancel(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.scale %x {scale = 2.0 : f32} : tensor<1x2x3x4xf32>
  %1 = attn.scale %0 {scale = 0.5 : f32} : tensor<1x2x3x4xf32>
  return %1 : tensor<1x2x3x4xf32>
}

// -----

// A scale that is not 1 stays.
// CHECK-LABEL: func.func @scale_kept
// CHECK: attn.scale %{{.*}} {scale = 1.250000e-01 : f32}
func.func @scale_kept(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.scale %x {scale = 0.125 : f32} : tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// merge_heads(split_heads(x)) = x
// CHECK-LABEL: func.func @merge_of_split
// CHECK-SAME: (%[[X:.*]]: tensor<2x10x64xf32>)
// CHECK-NOT: attn.
// CHECK: return %[[X]]
func.func @merge_of_split(%x: tensor<2x10x64xf32>) -> tensor<2x10x64xf32> {
  %0 = attn.split_heads %x {num_heads = 8 : i64} : (tensor<2x10x64xf32>) -> tensor<2x8x10x8xf32>
  %1 = attn.merge_heads %0 : (tensor<2x8x10x8xf32>) -> tensor<2x10x64xf32>
  return %1 : tensor<2x10x64xf32>
}

// -----

// split_heads(merge_heads(x), h) = x when x has h heads.
// CHECK-LABEL: func.func @split_of_merge
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x?x8xf32>)
// CHECK-NOT: attn.
// CHECK: return %[[X]]
func.func @split_of_merge(%x: tensor<?x8x?x8xf32>) -> tensor<?x8x?x8xf32> {
  %0 = attn.merge_heads %x : (tensor<?x8x?x8xf32>) -> tensor<?x?x64xf32>
  %1 = attn.split_heads %0 {num_heads = 8 : i64} : (tensor<?x?x64xf32>) -> tensor<?x8x?x8xf32>
  return %1 : tensor<?x8x?x8xf32>
}

// -----

// Must not fold: a different head count regroups the width.
// CHECK-LABEL: func.func @split_of_merge_other_heads
// CHECK: %[[M:.*]] = attn.merge_heads
// CHECK: %[[S:.*]] = attn.split_heads %[[M]] {num_heads = 4 : i64}
// CHECK: return %[[S]]
func.func @split_of_merge_other_heads(%x: tensor<2x8x10x8xf32>) -> tensor<2x4x10x16xf32> {
  %0 = attn.merge_heads %x : (tensor<2x8x10x8xf32>) -> tensor<2x10x64xf32>
  %1 = attn.split_heads %0 {num_heads = 4 : i64} : (tensor<2x10x64xf32>) -> tensor<2x4x10x16xf32>
  return %1 : tensor<2x4x10x16xf32>
}

// -----

// Must not fold: split(merge(x)) when x's head count is dynamic (it may
// not be the split's).
// CHECK-LABEL: func.func @split_of_merge_dynamic_heads
// CHECK: %[[M:.*]] = attn.merge_heads
// CHECK: %[[S:.*]] = attn.split_heads %[[M]] {num_heads = 8 : i64}
// CHECK: return %[[S]]
func.func @split_of_merge_dynamic_heads(%x: tensor<2x?x10x8xf32>) -> tensor<2x8x10x?xf32> {
  %0 = attn.merge_heads %x : (tensor<2x?x10x8xf32>) -> tensor<2x10x?xf32>
  %1 = attn.split_heads %0 {num_heads = 8 : i64} : (tensor<2x10x?xf32>) -> tensor<2x8x10x?xf32>
  return %1 : tensor<2x8x10x?xf32>
}

// -----

// dropout(x, rate 0) = x
// CHECK-LABEL: func.func @dropout_zero
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x4xf32>)
// CHECK-NOT: attn.dropout
// CHECK: return %[[X]]
func.func @dropout_zero(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.dropout %x {rate = 0.0 : f32, seed = 5 : i64} : tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// Must not fold: a real dropout.
// CHECK-LABEL: func.func @dropout_kept
// CHECK: attn.dropout %{{.*}} {rate = 1.000000e-01 : f32}
func.func @dropout_kept(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.dropout %x {rate = 0.1 : f32} : tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// mask with neither a causal kind nor a mask operand = x; the others stay.
// CHECK-LABEL: func.func @mask_identity
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x4xf32>, %[[M:.*]]: tensor<3x4xi1>)
// CHECK: %[[A:.*]] = attn.mask %[[X]] {causal = #attn.causal<top_left>}
// CHECK: %[[B:.*]] = attn.mask %[[A]], %[[M]] :
// CHECK: return %[[B]]
func.func @mask_identity(%x: tensor<1x2x3x4xf32>, %m: tensor<3x4xi1>) -> tensor<1x2x3x4xf32> {
  %0 = attn.mask %x : tensor<1x2x3x4xf32>
  %1 = attn.mask %0 {causal = #attn.causal<top_left>} : tensor<1x2x3x4xf32>
  %2 = attn.mask %1, %m : tensor<1x2x3x4xf32>, tensor<3x4xi1>
  return %2 : tensor<1x2x3x4xf32>
}

// -----

// Unused attn ops are pure and disappear.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: attn.
// CHECK: return
func.func @dead(%q: tensor<1x2x3x4xf32>) {
  %0 = attn.sdpa %q, %q, %q : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

// Must not fold: the product of the scales overflows f32 (and would not
// verify as a scale).
// CHECK-LABEL: func.func @scale_of_scale_overflow
// CHECK: attn.scale %{{.*}} {scale = 1.000000e+30 : f32}
// CHECK: attn.scale %{{.*}} {scale = 1.000000e+30 : f32}
func.func @scale_of_scale_overflow(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.scale %x {scale = 1.0e30 : f32} : tensor<1x2x3x4xf32>
  %1 = attn.scale %0 {scale = 1.0e30 : f32} : tensor<1x2x3x4xf32>
  return %1 : tensor<1x2x3x4xf32>
}

// -----

// Must not fold: the product underflows to 0.
// CHECK-LABEL: func.func @scale_of_scale_underflow
// CHECK: attn.scale %{{.*}} {scale = 1.000000e-30 : f32}
// CHECK: attn.scale %{{.*}} {scale = 1.000000e-30 : f32}
func.func @scale_of_scale_underflow(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.scale %x {scale = 1.0e-30 : f32} : tensor<1x2x3x4xf32>
  %1 = attn.scale %0 {scale = 1.0e-30 : f32} : tensor<1x2x3x4xf32>
  return %1 : tensor<1x2x3x4xf32>
}
