// Attention sinks: attn.sdpa's sinks operand becomes attn.softmax's under
// attn-decompose and comes back under attn-fuse; the reference lowering
// starts each row's max at its head's sink and its sum at exp(sink - m).
// RUN: attn-opt %s -attn-decompose | FileCheck %s --check-prefix=DEC
// RUN: attn-opt %s -attn-decompose -attn-fuse | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s -attn-decompose -convert-attn-to-linalg | FileCheck %s --check-prefix=LINALG

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
