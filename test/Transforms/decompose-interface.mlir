// attn.sdpa implements linalg's AggregatedOpInterface:
// transform.structured.decompose_interface expands it as attn-decompose
// does (the same builder), so a transform schedule can decompose a tile.
// RUN: attn-opt %s --transform-interpreter | FileCheck %s

// CHECK-LABEL: func.func @sdpa(
// CHECK: %[[S:.*]] = attn.scores %{{.*}}, %{{.*}}
// CHECK: %[[C:.*]] = attn.mask %[[S]] {causal = #attn.causal<top_left>}
// CHECK: %[[P:.*]] = attn.softmax %[[C]]
// CHECK: %[[O:.*]] = attn.weighted_sum %[[P]], %{{.*}}
// CHECK: return %[[O]]
func.func @sdpa(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, scale = 1.0 : f32}
      : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["attn.sdpa"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
