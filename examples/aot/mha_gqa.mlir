// nn.MultiheadAttention-style block with grouped K/V heads (6 query heads,
// 2 key/value heads) and every width dynamic: Wq has 6·D rows and Wk 2·D,
// so the widths are related by proportions, not equalities. attn-aot
// derives those relations from the ops and the kernel checks them before
// each call (docs/aot.md); sdpa_app.c calls it with fitting and unfitting
// shapes. The head dim being dynamic, the scale is given (the fused
// lowerings need it at compile time).
func.func @blk(%x: tensor<?x?x?xf32>, %wq: tensor<?x?xf32>, %wk: tensor<?x?xf32>,
               %wv: tensor<?x?xf32>, %wo: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %o = attn.mha %x, %x, %wq, %wk, %wv, %wo {num_heads = 6 : i64, num_kv_heads = 2 : i64,
                                            causal = #attn.causal<top_left>, scale = 0.25 : f32}
      : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>,
         tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  return %o : tensor<?x?x?xf32>
}
