//===- AttnTransforms.td - attn-to-attn passes --------------*- tablegen -*-===//
#ifndef ATTN_TRANSFORMS_TD
#define ATTN_TRANSFORMS_TD

include "mlir/Pass/PassBase.td"

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Expand attn.mha and attn.sdpa into the primitive ops";
  let description = [{
    `attn.mha` becomes `project` (Q, K, V) → `split_heads` → `sdpa` →
    `merge_heads` → `project` (O). `attn.sdpa` becomes `scores` → `scale`
    (omitted when the scale is 1) → `mask` (when causal or masked) →
    `softmax` → `dropout` (when the rate is not 0) → `weighted_sum`, with the
    scale defaulting to `1/sqrt(D)`. With `keep-sdpa`, only `mha` is
    expanded.
  }];
  let options = [
    Option<"keepSdpa", "keep-sdpa", "bool", /*default=*/"false",
           "Expand attn.mha only; leave attn.sdpa for a fused lowering">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

#endif // ATTN_TRANSFORMS_TD
