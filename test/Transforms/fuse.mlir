// attn-fuse: scores/scale/mask/softmax/dropout/weighted_sum → sdpa.
// RUN: attn-opt %s -attn-fuse -split-input-file | FileCheck %s
// RUN: attn-opt %s -attn-fuse -attn-decompose -split-input-file | FileCheck %s --check-prefix=ROUND

// The whole chain: scale, causal + keep mask, dropout.
// CHECK-LABEL: func.func @full_chain
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[KEEP:[^:]*]]: tensor<2x1x1x8xi1>)
// CHECK-NOT: attn.scores
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]], %[[KEEP]] {causal = #attn.causal<top_left>, dropout_rate = 1.000000e-01 : f32, dropout_seed = 7 : i64, scale = 2.500000e-01 : f32}
// CHECK-SAME: : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xi1>) -> tensor<2x4x8x16xf32>
// CHECK-NOT: attn.scale
// CHECK-NOT: attn.mask
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.dropout
// CHECK-NOT: attn.weighted_sum
// CHECK: return %[[O]]
// Round trip: decompose gives the chain back.
// ROUND-LABEL: func.func @full_chain
// ROUND-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[KEEP:[^:]*]]: tensor<2x1x1x8xi1>)
// ROUND: %[[S:.*]] = attn.scores %[[Q]], %[[K]] : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
// ROUND: %[[T:.*]] = attn.scale %[[S]] {scale = 2.500000e-01 : f32}
// ROUND: %[[M:.*]] = attn.mask %[[T]], %[[KEEP]] {causal = #attn.causal<top_left>}
// ROUND: %[[P:.*]] = attn.softmax %[[M]]
// ROUND: %[[D:.*]] = attn.dropout %[[P]] {rate = 1.000000e-01 : f32, seed = 7 : i64}
// ROUND: %[[O:.*]] = attn.weighted_sum %[[D]], %[[V]]
// ROUND-NOT: attn.sdpa
// ROUND: return %[[O]]
func.func @full_chain(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>,
                      %keep: tensor<2x1x1x8xi1>) -> tensor<2x4x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %t = attn.scale %s {scale = 0.25 : f32} : tensor<2x4x8x8xf32>
  %m = attn.mask %t, %keep {causal = #attn.causal<top_left>} : tensor<2x4x8x8xf32>, tensor<2x1x1x8xi1>
  %p = attn.softmax %m : tensor<2x4x8x8xf32>
  %d = attn.dropout %p {rate = 0.1 : f32, seed = 7 : i64} : tensor<2x4x8x8xf32>
  %o = attn.weighted_sum %d, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// A dropout with a run-time seed: the sdpa takes the seed operand, and
// decompose gives it back to the dropout.
// CHECK-LABEL: func.func @runtime_seed_chain
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[S:[^:]*]]: tensor<i64>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]] seed(%[[S]]) {dropout_rate = 5.000000e-01 : f32, scale = 1.000000e+00 : f32}
// CHECK-NOT: attn.dropout
// ROUND-LABEL: func.func @runtime_seed_chain
// ROUND-SAME: (%{{[^:]*}}: {{.*}}, %[[S:[^:]*]]: tensor<i64>)
// ROUND: attn.dropout %{{.*}} seed(%[[S]]) {rate = 5.000000e-01 : f32} : tensor<1x2x4x4xf32>
func.func @runtime_seed_chain(%q: tensor<1x2x4x8xf32>, %seed: tensor<i64>) -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = attn.softmax %s : tensor<1x2x4x4xf32>
  %d = attn.dropout %p seed(%seed) {rate = 0.5 : f32} : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %d, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// scores(scale(Q, a), K) = a·scores(Q, K): the scale on Q moves into sdpa.
// CHECK-LABEL: func.func @scaled_query
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}})
// CHECK-NOT: attn.scale
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32}
// CHECK-SAME: : (tensor<1x2x4x64xf32>, tensor<1x2x6x64xf32>, tensor<1x2x6x32xf32>) -> tensor<1x2x4x32xf32>
// CHECK-NOT: attn.
// CHECK: return %[[O]]
func.func @scaled_query(%q: tensor<1x2x4x64xf32>, %k: tensor<1x2x6x64xf32>, %v: tensor<1x2x6x32xf32>)
    -> tensor<1x2x4x32xf32> {
  %qs = attn.scale %q {scale = 0.125 : f32} : tensor<1x2x4x64xf32>
  %s = attn.scores %qs, %k : (tensor<1x2x4x64xf32>, tensor<1x2x6x64xf32>) -> tensor<1x2x4x6xf32>
  %p = attn.softmax %s : tensor<1x2x4x6xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x4x6xf32>, tensor<1x2x6x32xf32>) -> tensor<1x2x4x32xf32>
  return %o : tensor<1x2x4x32xf32>
}

// -----

// An i1 keep mask and a causal mask commute with a positive scale: mask
// before scale fuses.
// CHECK-LABEL: func.func @mask_before_scale_keep
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[KEEP:[^:]*]]: tensor<4x6xi1>)
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[K]], %[[KEEP]] {causal = #attn.causal<bottom_right>, scale = 5.000000e-01 : f32}
// CHECK-NOT: attn.mask
// CHECK-NOT: attn.scale
// CHECK: return %[[O]]
func.func @mask_before_scale_keep(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %keep: tensor<4x6xi1>)
    -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  %m = attn.mask %s, %keep {causal = #attn.causal<bottom_right>} : tensor<1x2x4x6xf32>, tensor<4x6xi1>
  %t = attn.scale %m {scale = 0.5 : f32} : tensor<1x2x4x6xf32>
  %p = attn.softmax %t : tensor<1x2x4x6xf32>
  %o = attn.weighted_sum %p, %k : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// No scale at all: the sdpa gets scale 1 explicitly (its default would be
// 1/sqrt(D)). f16.
// CHECK-LABEL: func.func @no_scale
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}})
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {causal = #attn.causal<top_left>, scale = 1.000000e+00 : f32}
// CHECK-SAME: -> tensor<1x2x4x8xf16>
// CHECK-NOT: attn.
// CHECK: return %[[O]]
func.func @no_scale(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>)
    -> tensor<1x2x4x8xf16> {
  %s = attn.scores %q, %k : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x4xf16>
  %m = attn.mask %s {causal = #attn.causal<top_left>} : tensor<1x2x4x4xf16>
  %p = attn.softmax %m : tensor<1x2x4x4xf16>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x4x4xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}

// -----

// The seeds' simplified self-attention: no weights, no scale.
// CHECK-LABEL: func.func @seed_self_attention
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x1x5x3xf32>)
// CHECK-NEXT: %[[O:.*]] = attn.sdpa %[[X]], %[[X]], %[[X]] {scale = 1.000000e+00 : f32}
// CHECK-SAME: : (tensor<1x1x5x3xf32>, tensor<1x1x5x3xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x5x3xf32>
// CHECK-NEXT: return %[[O]]
func.func @seed_self_attention(%x: tensor<1x1x5x3xf32>) -> tensor<1x1x5x3xf32> {
  %s = attn.scores %x, %x : (tensor<1x1x5x3xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x5x5xf32>
  %p = attn.softmax %s : tensor<1x1x5x5xf32>
  %o = attn.weighted_sum %p, %x : (tensor<1x1x5x5xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x5x3xf32>
  return %o : tensor<1x1x5x3xf32>
}

// -----

// Two scales multiply: 0.5 · 0.25.
// CHECK-LABEL: func.func @two_scales
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f32}
// CHECK-NOT: attn.scale
func.func @two_scales(%q: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %t = attn.scale %s {scale = 0.5 : f32} : tensor<1x2x4x4xf32>
  %u = attn.scale %t {scale = 0.25 : f32} : tensor<1x2x4x4xf32>
  %p = attn.softmax %u : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// An additive mask after every scale other than 1 fuses; the scales (on Q
// and on the scores, 2 · 0.0625) multiply, a later scale of 1 is harmless.
// CHECK-LABEL: func.func @additive_mask_after_scales
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[BIAS:[^:]*]]: tensor<1x2x4x4xf32>)
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[K]], %[[BIAS]] {scale = 1.250000e-01 : f32}
// CHECK-NOT: attn.
// CHECK: return %[[O]]
func.func @additive_mask_after_scales(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                                      %bias: tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %qs = attn.scale %q {scale = 2.0 : f32} : tensor<1x2x4x8xf32>
  %s = attn.scores %qs, %k : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %t = attn.scale %s {scale = 0.0625 : f32} : tensor<1x2x4x4xf32>
  %m = attn.mask %t, %bias : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  %u = attn.scale %m {scale = 1.0 : f32} : tensor<1x2x4x4xf32>
  %p = attn.softmax %u : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %k : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// scale·(S + m) ≠ scale·S + m: an additive mask before a scale is left alone.
// CHECK-LABEL: func.func @additive_mask_before_scale
// CHECK-NOT: attn.sdpa
// CHECK: %[[S:.*]] = attn.scores
// CHECK: %[[M:.*]] = attn.mask %[[S]], %{{.*}} : tensor<1x2x4x4xf32>, tensor<4x4xf32>
// CHECK: %[[T:.*]] = attn.scale %[[M]] {scale = 1.250000e-01 : f32}
// CHECK: %[[P:.*]] = attn.softmax %[[T]]
// CHECK: attn.weighted_sum %[[P]]
// CHECK-NOT: attn.sdpa
func.func @additive_mask_before_scale(%q: tensor<1x2x4x8xf32>, %bias: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %m = attn.mask %s, %bias : tensor<1x2x4x4xf32>, tensor<4x4xf32>
  %t = attn.scale %m {scale = 0.125 : f32} : tensor<1x2x4x4xf32>
  %p = attn.softmax %t : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The attention weights are also returned: left alone.
// CHECK-LABEL: func.func @softmax_reused
// CHECK-NOT: attn.sdpa
// CHECK: attn.scores
// CHECK: attn.scale
// CHECK: %[[P:.*]] = attn.softmax
// CHECK: %[[O:.*]] = attn.weighted_sum %[[P]]
// CHECK: return %[[O]], %[[P]]
func.func @softmax_reused(%q: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x2x4x4xf32>
  %p = attn.softmax %t : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// The raw scores are also returned: left alone.
// CHECK-LABEL: func.func @scores_reused
// CHECK-NOT: attn.sdpa
// CHECK: %[[S:.*]] = attn.scores
// CHECK: attn.scale %[[S]]
// CHECK: attn.softmax
// CHECK: %[[O:.*]] = attn.weighted_sum
// CHECK: return %[[O]], %[[S]]
func.func @scores_reused(%q: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x2x4x4xf32>
  %p = attn.softmax %t : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %s : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// GQA (8 query heads, 2 kv heads), dynamic batch and lengths, Dv ≠ D,
// bottom-right causal.
// CHECK-LABEL: func.func @gqa_dynamic
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}})
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {causal = #attn.causal<bottom_right>, scale = 1.250000e-01 : f32}
// CHECK-SAME: : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32>) -> tensor<?x8x?x32xf32>
// CHECK-NOT: attn.weighted_sum
// CHECK: return %[[O]] : tensor<?x8x?x32xf32>
func.func @gqa_dynamic(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x32xf32>)
    -> tensor<?x8x?x32xf32> {
  %s = attn.scores %q, %k : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x8x?x?xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<?x8x?x?xf32>
  %m = attn.mask %t {causal = #attn.causal<bottom_right>} : tensor<?x8x?x?xf32>
  %p = attn.softmax %m : tensor<?x8x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x8x?x?xf32>, tensor<?x2x?x32xf32>) -> tensor<?x8x?x32xf32>
  return %o : tensor<?x8x?x32xf32>
}

// -----

// A scaled query with another user is not absorbed: it stays, and is the
// sdpa's query; only the scale on the scores goes into the sdpa.
// CHECK-LABEL: func.func @scaled_query_reused
// CHECK: %[[QS:.*]] = attn.scale %{{.*}} {scale = 5.000000e-01 : f32}
// CHECK: %[[O:.*]] = attn.sdpa %[[QS]], %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32}
// CHECK: return %[[O]], %[[QS]]
func.func @scaled_query_reused(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %qs = attn.scale %q {scale = 0.5 : f32} : tensor<1x2x4x8xf32>
  %s = attn.scores %qs, %k : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %t = attn.scale %s {scale = 0.25 : f32} : tensor<1x2x4x4xf32>
  %p = attn.softmax %t : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %k : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %qs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// Left alone: the dropped-out weights are returned too; two mask ops; K and
// V with different head counts (legal for the primitives, not for sdpa);
// probs that are not a softmax.
// CHECK-LABEL: func.func @dropout_reused
// CHECK-NOT: attn.sdpa
// CHECK: attn.dropout
// CHECK: attn.weighted_sum
func.func @dropout_reused(%q: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = attn.softmax %s : tensor<1x2x4x4xf32>
  %d = attn.dropout %p {rate = 0.5 : f32} : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %d, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %d : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @two_masks
// CHECK-NOT: attn.sdpa
// CHECK: attn.mask
// CHECK: attn.mask
// CHECK: attn.weighted_sum
func.func @two_masks(%q: tensor<1x2x4x8xf32>, %keep: tensor<4x4xi1>) -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %m = attn.mask %s {causal = #attn.causal<top_left>} : tensor<1x2x4x4xf32>
  %n = attn.mask %m, %keep : tensor<1x2x4x4xf32>, tensor<4x4xi1>
  %p = attn.softmax %n : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
// attn.sdpa has no run-time diagonal: a mask with one stays unfused.
// CHECK-LABEL: func.func @diagonal_shift
// CHECK-NOT: attn.sdpa
// CHECK: attn.mask %{{.*}} diagonal(
// CHECK: attn.weighted_sum
func.func @diagonal_shift(%q: tensor<1x2x4x8xf32>, %d: index) -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %m = attn.mask %s diagonal(%d) {causal = #attn.causal<top_left>} : tensor<1x2x4x4xf32>
  %p = attn.softmax %m : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
// CHECK-LABEL: func.func @kv_heads_differ
// CHECK-NOT: attn.sdpa
// CHECK: attn.scores
// CHECK: attn.weighted_sum
func.func @kv_heads_differ(%q: tensor<1x8x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x4x4x8xf32>)
    -> tensor<1x8x4x8xf32> {
  %s = attn.scores %q, %k : (tensor<1x8x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x8x4x4xf32>
  %p = attn.softmax %s : tensor<1x8x4x4xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x8x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x8x4x8xf32>
  return %o : tensor<1x8x4x8xf32>
}
// CHECK-LABEL: func.func @not_softmax
// CHECK-NOT: attn.sdpa
// CHECK: attn.scale
// CHECK: attn.weighted_sum
func.func @not_softmax(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x2x4x4xf32>
  %o = attn.weighted_sum %t, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A scale after the softcap becomes part of the cap:
// 2·(10·tanh(s/10)) = 20·tanh(2s/20), so scale 0.25·2 = 0.5 and cap 20.
// CHECK-LABEL: func.func @softcap_then_scale
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, scale = 5.000000e-01 : f32, softcap = 2.000000e+01 : f32}
func.func @softcap_then_scale(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %t = attn.scale %s {scale = 0.25 : f32} : tensor<1x2x8x8xf32>
  %c = attn.softcap %t {cap = 10.0 : f32} : tensor<1x2x8x8xf32>
  %u = attn.scale %c {scale = 2.0 : f32} : tensor<1x2x8x8xf32>
  %m = attn.mask %u {causal = #attn.causal<top_left>} : tensor<1x2x8x8xf32>
  %p = attn.softmax %m : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// A mask before the softcap is not an sdpa (softcap(-inf) = -cap): kept.
// CHECK-LABEL: func.func @mask_before_softcap
// CHECK-NOT: attn.sdpa
// CHECK: attn.softcap
func.func @mask_before_softcap(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.mask %s {causal = #attn.causal<top_left>} : tensor<1x2x8x8xf32>
  %c = attn.softcap %m {cap = 10.0 : f32} : tensor<1x2x8x8xf32>
  %p = attn.softmax %c : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// An ALiBi bias followed by a scale other than 1 does not commute: kept.
// CHECK-LABEL: func.func @alibi_then_scale
// CHECK-NOT: attn.sdpa
// CHECK: attn.mask %{{.*}} alibi
func.func @alibi_then_scale(%q: tensor<1x2x8x16xf32>, %sl: tensor<2xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.mask %s alibi(%sl : tensor<2xf32>) : tensor<1x2x8x8xf32>
  %t = attn.scale %m {scale = 0.25 : f32} : tensor<1x2x8x8xf32>
  %p = attn.softmax %t : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
