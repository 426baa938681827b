// The transform schedule of sinks-lse.mlir: tiles of 4 query rows of the
// causal attn.sdpa with sinks in @rows (each tile an attn.sdpa_partial
// with a shifted diagonal and the tile's sinks).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} attributes{sym_name = "rows"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p = transform.structured.match ops{["attn.sdpa"]} in %f : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_forall %p tile_sizes [1, 2, 4, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
