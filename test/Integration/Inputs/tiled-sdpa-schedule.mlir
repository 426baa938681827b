// The transform schedule of tiled-sdpa.mlir: per function, which dims of
// the attn op are tiled (tile_using_forall) and how its keys split
// (tile_reduction_using_forall, attn.sdpa_partial only).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f1 = transform.structured.match ops{["func.func"]} attributes{sym_name = "split_keys"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p1 = transform.structured.match ops{["attn.sdpa_partial"]} in %f1 : (!transform.any_op) -> !transform.any_op
    %fill1:2, %split1, %merge1, %blocks1 = transform.structured.tile_reduction_using_forall %p1
        by num_threads = [0, 0, 0, 3]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t1, %l1 = transform.structured.tile_using_forall %split1 tile_sizes [1, 2, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "uneven_keys"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p2 = transform.structured.match ops{["attn.sdpa_partial"]} in %f2 : (!transform.any_op) -> !transform.any_op
    %fill2:2, %split2, %merge2, %blocks2 = transform.structured.tile_reduction_using_forall %p2
        by num_threads = [0, 0, 0, 3]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %l2 = transform.structured.tile_using_forall %split2 tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f3 = transform.structured.match ops{["func.func"]} attributes{sym_name = "rows"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p3 = transform.structured.match ops{["attn.sdpa"]} in %f3 : (!transform.any_op) -> !transform.any_op
    %t3, %l3 = transform.structured.tile_using_forall %p3 tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f4 = transform.structured.match ops{["func.func"]} attributes{sym_name = "batch_heads"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p4 = transform.structured.match ops{["attn.sdpa"]} in %f4 : (!transform.any_op) -> !transform.any_op
    %t4, %l4 = transform.structured.tile_using_forall %p4 tile_sizes [1, 1, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f5 = transform.structured.match ops{["func.func"]} attributes{sym_name = "functions_rows"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p5 = transform.structured.match ops{["attn.sdpa"]} in %f5 : (!transform.any_op) -> !transform.any_op
    %t5, %l5 = transform.structured.tile_using_forall %p5 tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f6 = transform.structured.match ops{["func.func"]} attributes{sym_name = "functions_keys"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p6 = transform.structured.match ops{["attn.sdpa_partial"]} in %f6 : (!transform.any_op) -> !transform.any_op
    %fill6:2, %split6, %merge6, %blocks6 = transform.structured.tile_reduction_using_forall %p6
        by num_threads = [0, 0, 0, 3]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t6, %l6 = transform.structured.tile_using_forall %split6 tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f7 = transform.structured.match ops{["func.func"]} attributes{sym_name = "window_rows"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p7 = transform.structured.match ops{["attn.sdpa"]} in %f7 : (!transform.any_op) -> !transform.any_op
    %t7, %l7 = transform.structured.tile_using_forall %p7 tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f8 = transform.structured.match ops{["func.func"]} attributes{sym_name = "window_keys"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p8 = transform.structured.match ops{["attn.sdpa_partial"]} in %f8 : (!transform.any_op) -> !transform.any_op
    %fill8:2, %split8, %merge8, %blocks8 = transform.structured.tile_reduction_using_forall %p8
        by num_threads = [0, 0, 0, 3]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t8, %l8 = transform.structured.tile_using_forall %split8 tile_sizes [1, 1, 16, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    %f9 = transform.structured.match ops{["func.func"]} attributes{sym_name = "decode_split"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p9 = transform.structured.match ops{["attn.sdpa"]} in %f9 : (!transform.any_op) -> !transform.any_op
    %fill9:2, %split9, %merge9, %blocks9 = transform.structured.tile_reduction_using_forall %p9
        by num_threads = [0, 0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)

    %f10 = transform.structured.match ops{["func.func"]} attributes{sym_name = "decode_lengths"} in %root
        : (!transform.any_op) -> !transform.any_op
    %p10 = transform.structured.match ops{["attn.sdpa"]} in %f10 : (!transform.any_op) -> !transform.any_op
    %fill10:2, %split10, %merge10, %blocks10 = transform.structured.tile_reduction_using_forall %p10
        by num_threads = [0, 0, 0, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
