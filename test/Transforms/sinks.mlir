// Attention sinks: attn.sdpa's sinks operand becomes attn.softmax's under
// attn-decompose and comes back under attn-fuse; the reference lowering
// starts each row's max at its head's sink and its sum at exp(sink - m).
// RUN: attn-opt %s -attn-decompose | FileCheck %s --check-prefix=DEC
// RUN: attn-opt %s -attn-decompose -attn-fuse | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s -attn-decompose -convert-attn-to-linalg | FileCheck %s --check-prefix=LINALG
// One level: attn.mha into project / split_heads / sdpa / merge_heads.
// RUN: attn-opt %s -attn-decompose=keep-sdpa | FileCheck %s --check-prefix=MHA

// DEC-LABEL: func.func @sdpa_sinks
// DEC: %[[M:.*]] = attn.mask
// DEC: %[[P:.*]] = attn.softmax %[[M]] sinks(%{{.*}} : tensor<8xf32>) : tensor<2x8x4x64xf16>
// DEC: attn.weighted_sum %[[P]]
// ROUND-LABEL: func.func @sdpa_sinks
// ROUND: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}}) sinks(%{{.*}}) {causal = #attn.causal<bottom_right>, scale = 1.250000e-01 : f32}
// ROUND-NOT: attn.softmax
// LINALG-DAG: #[[HEAD:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// LINALG-LABEL: func.func @sdpa_sinks
// LINALG-SAME: %[[SINKS:[a-z0-9]+]]: tensor<8xf32>)
// The max starts at the sink: a broadcast of sinks[h] over the rows.
// LINALG: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[HEAD]], {{.*}}]{{.*}} ins(%[[SINKS]] : tensor<8xf32>)
// LINALG: %[[MAX:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<2x8x4xf32>)
// LINALG: arith.maximumf
// The sum starts at exp(sink - m).
// LINALG: linalg.generic {{.*}} ins(%[[SINKS]], %[[MAX]] : tensor<8xf32>, tensor<2x8x4xf32>)
// LINALG: arith.subf
// LINALG: math.exp
func.func @sdpa_sinks(%q: tensor<2x8x4x64xf16>, %k: tensor<2x2x64x64xf16>, %v: tensor<2x2x64x64xf16>,
                      %len: tensor<2xi32>, %sinks: tensor<8xf32>) -> tensor<2x8x4x64xf16> {
  %o = attn.sdpa %q, %k, %v key_lengths(%len) sinks(%sinks) {causal = #attn.causal<bottom_right>}
      : (tensor<2x8x4x64xf16>, tensor<2x2x64x64xf16>, tensor<2x2x64x64xf16>, tensor<2xi32>, tensor<8xf32>)
        -> tensor<2x8x4x64xf16>
  return %o : tensor<2x8x4x64xf16>
}

// attn.sdpa_partial with sinks: both the log-sum-exp and the softmax
// count the sink once.
// DEC-LABEL: func.func @partial_sinks
// DEC-SAME: %[[S:[a-z0-9]+]]: tensor<4xf32>)
// DEC: %[[M:.*]] = attn.mask
// DEC: %[[L:.*]] = attn.logsumexp %[[M]] sinks(%[[S]] : tensor<4xf32>) : tensor<1x4x8x16xf32> -> tensor<1x4x8xf32>
// DEC: %[[P:.*]] = attn.softmax %[[M]] sinks(%[[S]] : tensor<4xf32>) : tensor<1x4x8x16xf32>
// DEC: %[[O:.*]] = attn.weighted_sum %[[P]]
// DEC: return %[[O]], %[[L]]
// ROUND-LABEL: func.func @partial_sinks
// LINALG-LABEL: func.func @partial_sinks
// LINALG-NOT: attn.
// LINALG: return
func.func @partial_sinks(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x16x32xf32>, %d: index,
                         %s: tensor<4xf32>) -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>) {
  %o, %l = attn.sdpa_partial %q, %k, %k sinks(%s) diagonal(%d) {causal = #attn.causal<top_left>}
      : (tensor<1x4x8x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<4xf32>, index)
        -> (tensor<1x4x8x32xf32>, tensor<1x4x8xf32>)
  return %o, %l : tensor<1x4x8x32xf32>, tensor<1x4x8xf32>
}

// attn.mha's sinks go to the sdpa it decomposes into (and from there to
// attn.softmax).
// DEC-LABEL: func.func @mha_sinks
// DEC-SAME: %[[S:[a-z0-9]+]]: tensor<4xf32>)
// DEC: attn.softmax %{{.*}} sinks(%[[S]] : tensor<4xf32>)
// MHA-LABEL: func.func @mha_sinks
// MHA-SAME: %[[S:[a-z0-9]+]]: tensor<4xf32>)
// MHA: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} sinks(%[[S]]) {causal = #attn.causal<top_left>}
// MHA-NOT: attn.mha
func.func @mha_sinks(%x: tensor<1x6x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>,
                     %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>, %sinks: tensor<4xf32>)
    -> tensor<1x6x32xf32> {
  %y = attn.mha %x, %x, %wq, %wk, %wv, %wo sinks(%sinks)
      {num_heads = 4 : i64, num_kv_heads = 2 : i64, causal = #attn.causal<top_left>}
      : (tensor<1x6x32xf32>, tensor<1x6x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>,
         tensor<16x32xf32>, tensor<32x32xf32>, tensor<4xf32>) -> tensor<1x6x32xf32>
  return %y : tensor<1x6x32xf32>
}
