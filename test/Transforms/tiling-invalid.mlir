// What a tile of attn.sdpa / attn.sdpa_partial cannot compute on its own is
// refused, naming the feature (lib/Transforms/TilingInterfaceImpl.cpp,
// docs/tiling.md): each case asks the upstream tiling drivers for a tile
// that would change the result.
// RUN: attn-opt %s --split-input-file --transform-interpreter --verify-diagnostics

// Dropout: the mask is drawn from the whole op's flat index.
func.func @dropout(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32> {
  // expected-error @below {{op cannot be tiled here: dropout draws its mask from the flat index of the whole op}}
  // expected-error @below {{faild to tile operation}}
  // expected-note @below {{when applied to this op}}
  // expected-error @below {{failed to generate tiling loops}}
  %o = attn.sdpa %q, %k, %v {dropout_rate = 0.1 : f32}
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 1, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// The keys of attn.sdpa as a full reduction: each tile would normalise its own softmax.
func.func @keys(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32> {
  // expected-error @below {{op cannot tile the keys as a full reduction}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %o = attn.sdpa %q, %k, %v 
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_for %op tile_sizes [0, 0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// ALiBi with tiled rows.
func.func @alibi(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>, %s: tensor<2xf32>) -> tensor<1x2x32x16xf32> {
  // expected-error @below {{ALiBi distances are measured from the whole op's diagonal}}
  // expected-error @below {{faild to tile operation}}
  // expected-note @below {{when applied to this op}}
  // expected-error @below {{failed to generate tiling loops}}
  %o = attn.sdpa %q, %k, %v alibi(%s) 
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<2xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 0, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Bottom-right causal rows with key lengths: the diagonal is per batch row.
func.func @lengths_rows(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>, %len: tensor<1xi32>) -> tensor<1x2x32x16xf32> {
  // expected-error @below {{the bottom-right diagonal with key lengths depends on each batch row's length}}
  // expected-error @below {{faild to tile operation}}
  // expected-note @below {{when applied to this op}}
  // expected-error @below {{failed to generate tiling loops}}
  %o = attn.sdpa %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1xi32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 0, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// GQA (4 query heads on 2 K/V heads): a head tile of 3 splits a group.
func.func @gqa(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>) -> tensor<1x4x32x16xf32> {
  // expected-error @below {{a head tile must be 1 head or a multiple of the 2 query heads that share a K/V head}}
  // expected-error @below {{faild to tile operation}}
  // expected-note @below {{when applied to this op}}
  // expected-error @below {{failed to generate tiling loops}}
  %o = attn.sdpa %q, %k, %v 
      : (tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>) -> tensor<1x4x32x16xf32>
  return %o : tensor<1x4x32x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{transform.structured.tile_using_forall failed to apply}}
    %t, %l = transform.structured.tile_using_forall %op tile_sizes [0, 3, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Key blocks accumulated in a serial loop: a partial result is not accumulated in place.
func.func @outer_reduction(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>)
    -> (tensor<1x2x32x16xf32>, tensor<1x2x32xf32>) {
  // expected-error @below {{op splits its keys only into parallel blocks (tile_reduction_using_forall)}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %o, %l = attn.sdpa_partial %q, %k, %v
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>) -> (tensor<1x2x32x16xf32>, tensor<1x2x32xf32>)
  return %o, %l : tensor<1x2x32x16xf32>, tensor<1x2x32xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa_partial"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{failed to tile using partial reduction}}
    %fill:2, %split, %merge, %loop = transform.structured.tile_reduction_using_for %op by tile_sizes = [0, 0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Key lengths with the bottom-right causal diagonal of several rows: each
// row's diagonal depends on its batch row's length.
func.func @lengths_keys(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>, %len: tensor<1xi32>)
    -> (tensor<1x2x32x16xf32>, tensor<1x2x32xf32>) {
  // expected-error @below {{split the keys only of a single query row}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %o, %l = attn.sdpa_partial %q, %k, %v key_lengths(%len) {causal = #attn.causal<bottom_right>}
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1xi32>) -> (tensor<1x2x32x16xf32>, tensor<1x2x32xf32>)
  return %o, %l : tensor<1x2x32x16xf32>, tensor<1x2x32xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa_partial"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{could not tile reduction}}
    %fill:2, %split, %merge, %loop = transform.structured.tile_reduction_using_forall %op by num_threads = [0, 0, 0, 2]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Sinks join each row's denominator once: the keys of an attn.sdpa with
// sinks are not split.
func.func @sinks_keys(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>,
                      %s: tensor<2xf32>) -> tensor<1x2x32x16xf32> {
  // expected-error @below {{cannot be tiled here: a sink joins each row's denominator once; a key tile would count it again}}
  // expected-error @below {{faild to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %o = attn.sdpa %q, %k, %v sinks(%s)
      : (tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<2xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{could not tile reduction}}
    %fill:2, %split, %merge, %loop = transform.structured.tile_reduction_using_forall %op by num_threads = [0, 0, 0, 2]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
