// The keys of every attn.sdpa_partial in 4 parallel blocks (merged by
// attn.merge_partial), then each block in tiles of 4 query heads (one K/V
// head's group) by 64 query rows.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["attn.sdpa_partial"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %init:2, %blocks, %merge, %forall = transform.structured.tile_reduction_using_forall %op
        by num_threads = [0, 0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                  !transform.any_op, !transform.any_op)
    %tiles, %loop = transform.structured.tile_using_forall %blocks tile_sizes [1, 4, 64, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
