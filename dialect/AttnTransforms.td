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

def AttnFuse : Pass<"attn-fuse"> {
  let summary = "Raise a primitive attention chain to one attn.sdpa";
  let description = [{
    The inverse of `attn-decompose`'s sdpa expansion. Anchored on
    `attn.weighted_sum(P, V)`, it matches
    `P = dropout?(softmax(X))` with `X` a chain of `scale` and at most one
    `mask` op, in any legal order, over `scores(Q', K)`, where `Q'` may be
    `scale(Q)`. The result is
    `attn.sdpa Q, K, V [, mask] {scale = product of all scales, causal,
    dropout_rate, dropout_seed}`; the scale is always explicit (`1.0` when
    the chain has none), never sdpa's `1/sqrt(D)` default.

    An additive (float) mask does not commute with a scale
    (`a·(S + m) != a·S + m`), so a float mask followed by a scale other than
    1 is not fused; `i1` and causal masks commute with any positive scale.
    The chain is also left alone when one of its intermediate values has a
    user outside the chain (fusing would compute it twice), when the scales
    multiply to an f32 that is not positive and finite, or when K and V do
    not statically have the same number of heads. Leaving a chain alone is
    not an error.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

#endif // ATTN_TRANSFORMS_TD
