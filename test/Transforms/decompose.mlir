// attn-decompose: mha → project/split/sdpa/merge/project; sdpa → primitives.
// RUN: attn-opt %s -attn-decompose -split-input-file | FileCheck %s
// RUN: attn-opt %s -attn-decompose=keep-sdpa -split-input-file | FileCheck %s --check-prefix=KEEP

// Cross-attention, GQA (8 query heads, 4 kv heads), biases on q/k/v only,
// dynamic lengths, bottom-right causal, dropout.
// CHECK-LABEL: func.func @mha_cross_gqa
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x?x64xf32>, %[[Y:[^:]*]]: tensor<2x?x48xf32>, %[[WQ:[^:]*]]: {{.*}}, %[[WK:[^:]*]]: {{.*}}, %[[WV:[^:]*]]: {{.*}}, %[[WO:[^:]*]]: {{.*}}, %[[BQ:[^:]*]]: {{.*}}, %[[BK:[^:]*]]: {{.*}}, %[[BV:[^:]*]]: {{.*}})
// CHECK: %[[Q:.*]] = attn.project %[[X]], %[[WQ]], %[[BQ]] : {{.*}} -> tensor<2x?x64xf32>
// CHECK: %[[K:.*]] = attn.project %[[Y]], %[[WK]], %[[BK]] : {{.*}} -> tensor<2x?x32xf32>
// CHECK: %[[V:.*]] = attn.project %[[Y]], %[[WV]], %[[BV]] : {{.*}} -> tensor<2x?x32xf32>
// CHECK: %[[QH:.*]] = attn.split_heads %[[Q]] {num_heads = 8 : i64} : (tensor<2x?x64xf32>) -> tensor<2x8x?x8xf32>
// CHECK: %[[KH:.*]] = attn.split_heads %[[K]] {num_heads = 4 : i64} : (tensor<2x?x32xf32>) -> tensor<2x4x?x8xf32>
// CHECK: %[[VH:.*]] = attn.split_heads %[[V]] {num_heads = 4 : i64}
// CHECK: %[[S:.*]] = attn.scores %[[QH]], %[[KH]] : (tensor<2x8x?x8xf32>, tensor<2x4x?x8xf32>) -> tensor<2x8x?x?xf32>
// 1/sqrt(8)
// CHECK: %[[T:.*]] = attn.scale %[[S]] {scale = 0.353553385 : f32}
// CHECK: %[[M:.*]] = attn.mask %[[T]] {causal = #attn.causal<bottom_right>}
// CHECK: %[[P:.*]] = attn.softmax %[[M]]
// CHECK: %[[D:.*]] = attn.dropout %[[P]] {rate = 1.000000e-01 : f32, seed = 5 : i64}
// CHECK: %[[O:.*]] = attn.weighted_sum %[[D]], %[[VH]] : (tensor<2x8x?x?xf32>, tensor<2x4x?x8xf32>) -> tensor<2x8x?x8xf32>
// CHECK: %[[MG:.*]] = attn.merge_heads %[[O]] : (tensor<2x8x?x8xf32>) -> tensor<2x?x64xf32>
// CHECK: %[[R:.*]] = attn.project %[[MG]], %[[WO]] : (tensor<2x?x64xf32>, tensor<64x64xf32>) -> tensor<2x?x64xf32>
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @mha_cross_gqa
// KEEP: attn.split_heads
// KEEP: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>, dropout_rate = 1.000000e-01 : f32, dropout_seed = 5 : i64}
// KEEP-NOT: attn.scores
// KEEP: attn.merge_heads
func.func @mha_cross_gqa(%x: tensor<2x?x64xf32>, %y: tensor<2x?x48xf32>, %wq: tensor<64x64xf32>, %wk: tensor<32x48xf32>,
                         %wv: tensor<32x48xf32>, %wo: tensor<64x64xf32>, %bq: tensor<64xf32>, %bk: tensor<32xf32>,
                         %bv: tensor<32xf32>) -> tensor<2x?x64xf32> {
  %o = attn.mha %x, %y, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv)
      {num_heads = 8 : i64, num_kv_heads = 4 : i64, causal = #attn.causal<bottom_right>,
       dropout_rate = 0.1 : f32, dropout_seed = 5 : i64}
      : (tensor<2x?x64xf32>, tensor<2x?x48xf32>, tensor<64x64xf32>, tensor<32x48xf32>, tensor<32x48xf32>,
         tensor<64x64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x?x64xf32>
  return %o : tensor<2x?x64xf32>
}

// -----

// in_out weights keep their layout on every projection; out bias only.
// CHECK-LABEL: func.func @mha_in_out
// CHECK-COUNT-3: attn.project %{{.*}}, %{{.*}} {layout = #attn.layout<in_out>}
// CHECK: attn.project %{{.*}}, %{{.*}}, %{{.*}} {layout = #attn.layout<in_out>}
func.func @mha_in_out(%x: tensor<1x4x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<1x4x16xf32> {
  %o = attn.mha %x, %x, %w, %w, %w, %w out_bias(%b) {num_heads = 2 : i64, layout = #attn.layout<in_out>}
      : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
         tensor<16x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// An explicit scale of 1 and no mask: scores → softmax → weighted_sum only.
// CHECK-LABEL: func.func @sdpa_minimal
// CHECK: %[[S:.*]] = attn.scores
// CHECK-NOT: attn.scale
// CHECK-NOT: attn.mask
// CHECK: %[[P:.*]] = attn.softmax %[[S]]
// CHECK-NOT: attn.dropout
// CHECK: attn.weighted_sum %[[P]]
func.func @sdpa_minimal(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %o = attn.sdpa %q, %q, %q {scale = 1.0 : f32, dropout_rate = 0.0 : f32}
      : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}

// -----

// The mask operand moves to attn.mask; the default scale is 1/sqrt(64).
// CHECK-LABEL: func.func @sdpa_masked
// CHECK-SAME: %[[KM:[^:]*]]: tensor<2x1x1x129xi1>
// CHECK: attn.scale %{{.*}} {scale = 1.250000e-01 : f32}
// CHECK: attn.mask %{{.*}}, %[[KM]] : tensor<2x4x31x129xf32>, tensor<2x1x1x129xi1>
func.func @sdpa_masked(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>, %keep: tensor<2x1x1x129xi1>) -> tensor<2x4x31x64xf32> {
  %o = attn.sdpa %q, %k, %k, %keep : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>, tensor<2x1x1x129xi1>) -> tensor<2x4x31x64xf32>
  return %o : tensor<2x4x31x64xf32>
}

// -----

// sdpa_partial's run-time diagonal moves to attn.mask with the causal kind.
// CHECK-LABEL: func.func @partial_diagonal
// CHECK-SAME: %[[D:[^:]*]]: index
// CHECK: %[[M:.*]] = attn.mask %{{.*}} diagonal(%[[D]]) {causal = #attn.causal<top_left>} : tensor<1x2x8x16xf32>
// CHECK: attn.logsumexp %[[M]]
// CHECK: attn.softmax %[[M]]
func.func @partial_diagonal(%q: tensor<1x2x8x32xf32>, %k: tensor<1x2x16x32xf32>, %d: index)
    -> (tensor<1x2x8x32xf32>, tensor<1x2x8xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %k diagonal(%d) {causal = #attn.causal<top_left>, scale = 0.5 : f32}
      : (tensor<1x2x8x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, index)
        -> (tensor<1x2x8x32xf32>, tensor<1x2x8xf32>)
  return %o, %l : tensor<1x2x8x32xf32>, tensor<1x2x8xf32>
}

// -----

// Non-attn ops and already-primitive chains are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: attn.softmax
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
func.func @untouched(%x: tensor<4xf32>, %a: f32) -> (tensor<4xf32>, f32) {
  %p = attn.softmax %x : tensor<4xf32>
  %b = arith.addf %a, %a : f32
  return %p, %b : tensor<4xf32>, f32
}

// -----

// A run-time seed goes to the sdpa, then to the attn.dropout of the chain.
// CHECK-LABEL: func.func @mha_runtime_seed
// CHECK-SAME: %[[S:[^:]*]]: tensor<i64>
// CHECK: attn.dropout %{{.*}} seed(%[[S]]) {rate = 2.000000e-01 : f32}
// KEEP-LABEL: func.func @mha_runtime_seed
// KEEP-SAME: %[[S:[^:]*]]: tensor<i64>
// KEEP: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} seed(%[[S]]) {dropout_rate = 2.000000e-01 : f32}
func.func @mha_runtime_seed(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<i64>)
    -> tensor<1x4x8xf32> {
  %y = attn.mha %x, %x, %w, %w, %w, %w seed(%s) {num_heads = 2 : i64, dropout_rate = 0.2 : f32}
      : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<i64>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// An mha's functions and captures go to its sdpa (keep-sdpa: the fused
// kernels take them there), and on to the chain's attn.score_mod /
// attn.mask_mod.
// KEEP-LABEL: func.func @mha_functions
// KEEP-SAME: %[[X:[^:]*]]: tensor<1x6x8xf32>, %{{[^:]*}}: tensor<8x8xf32>, %[[S:[^:]*]]: tensor<2xf32>
// KEEP: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} captures(%[[S]]) score_mod {
// KEEP: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[M:.*]]: tensor<2xf32>):
// KEEP: tensor.extract %[[M]][%[[H]]] : tensor<2xf32>
// KEEP: } mask_mod {
// KEEP: arith.cmpi sle
// KEEP: attn.merge_heads
// KEEP-NOT: attn.mha
// CHECK-LABEL: func.func @mha_functions
// CHECK: attn.score_mod %{{.*}} captures(%{{.*}} : tensor<2xf32>) {
// CHECK: attn.mask_mod %{{.*}} captures(%{{.*}} : tensor<2xf32>) {
// CHECK: attn.softmax
func.func @mha_functions(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %slopes: tensor<2xf32>)
    -> tensor<1x6x8xf32> {
  %y = attn.mha %x, %x, %w, %w, %w, %w captures(%slopes) {num_heads = 2 : i64} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: tensor<2xf32>):
    %slope = tensor.extract %m[%h] : tensor<2xf32>
    %n = arith.subf %s, %slope : f32
    attn.yield %n : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %m: tensor<2xf32>):
    %keep = arith.cmpi sle, %j, %i : index
    attn.yield %keep : i1
  } : (tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
       tensor<8x8xf32>, tensor<2xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}
