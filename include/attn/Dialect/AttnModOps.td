//===- AttnModOps.td - score and mask functions ------------*- tablegen -*-===//
//
// Programmable attention: a score function and a mask function written as
// regions (FlexAttention's score_mod and mask_mod), as primitive ops on the
// scores and as regions of attn.sdpa. The region rules (signature, yielded
// type, allowed ops, captures) are checked once, in AttnModFunctions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_MOD_OPS_TD
#define ATTN_MOD_OPS_TD

include "AttnOpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Attn_ScoreModOp : Attn_Op<"score_mod", [Pure, IsolatedFromAbove,
                                            AllTypesMatch<["input", "result"]>,
                                            Attn_CapturingOpInterface]> {
  let summary = "a score function applied to every score: FlexAttention's score_mod";
  let description = [{
    **Meaning.** For scores `x` `[B,H,Tq,Tk]` and captured tensors `c…`:

    ```
    y[b,h,i,j] = body(x[b,h,i,j], b, h, i, j, c…)
    ```

    The body computes in `f32` (an `f16`/`bf16` score is widened before and
    rounded after). `i` and `j` are positions in the whole query and key
    sequences; `h` is the query head. A `tensor.extract` of a capture reads
    the element at its indices clamped into the capture's shape, so a
    kernel that evaluates the body at padding or masked positions never
    reads outside the capture (see [score and mask
    functions](recipes.md)).

    PyTorch (`torch.nn.attention.flex_attention`):
    `score_mod(score, b, h, q_idx, kv_idx) -> score`.

    **Usage.**

    ```
    %y = attn.score_mod %x [captures(%c… : type(%c)…)] {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c…: type(%c)…):
      …  attn.yield %t : f32
    } : type(%x)
    ```

    The body holds `arith` and `math` ops on scalars, `scf.if`, and
    `tensor.extract` of a capture; it ends in `attn.yield` of one `f32`.

    **Example** (a per-head bias table indexed by the relative position,
    T5/Swin style):

    ```mlir
    func.func @score_mod_relative_bias(%s: tensor<1x2x8x8xf32>, %bias: tensor<2x15xf32>)
        -> tensor<1x2x8x8xf32> {
      %y = attn.score_mod %s captures(%bias : tensor<2x15xf32>) {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x15xf32>):
        %c7 = arith.constant 7 : index
        %d = arith.subi %i, %j : index
        %r = arith.addi %d, %c7 : index
        %v = tensor.extract %t[%h, %r] : tensor<2x15xf32>
        %n = arith.addf %x, %v : f32
        attn.yield %n : f32
      } : tensor<1x2x8x8xf32>
      return %y : tensor<1x2x8x8xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Variadic<AnyRankedTensor>:$captures);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input (`captures` `(` $captures^ `:` type($captures) `)`)? $body
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Attn_MaskModOp : Attn_Op<"mask_mod", [Pure, IsolatedFromAbove,
                                          AllTypesMatch<["input", "result"]>,
                                          Attn_CapturingOpInterface]> {
  let summary = "a keep function on positions: FlexAttention's mask_mod";
  let description = [{
    **Meaning.** For scores `x` `[B,H,Tq,Tk]` and captured tensors `c…`:

    ```
    y[b,h,i,j] = body(b, h, i, j, c…) ? x[b,h,i,j] : -inf
    ```

    A row every key of which is masked gives zeros after `attn.softmax`
    (not NaN). Positions, heads and captures are as in `attn.score_mod`.

    PyTorch: `mask_mod(b, h, q_idx, kv_idx) -> bool` (True = keep), as for
    `torch.nn.attention.flex_attention.create_block_mask`.

    **Usage.**

    ```
    %y = attn.mask_mod %x [captures(%c… : type(%c)…)] {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %c…: type(%c)…):
      …  attn.yield %keep : i1
    } : type(%x)
    ```

    **Example** (document masking of packed sequences: a query sees the
    keys of its own document):

    ```mlir
    func.func @mask_mod_documents(%s: tensor<1x2x8x8xf32>, %doc: tensor<8xi32>)
        -> tensor<1x2x8x8xf32> {
      %y = attn.mask_mod %s captures(%doc : tensor<8xi32>) {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<8xi32>):
        %di = tensor.extract %d[%i] : tensor<8xi32>
        %dj = tensor.extract %d[%j] : tensor<8xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } : tensor<1x2x8x8xf32>
      return %y : tensor<1x2x8x8xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Variadic<AnyRankedTensor>:$captures);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input (`captures` `(` $captures^ `:` type($captures) `)`)? $body
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Attn_BlockMaskOp : Attn_Op<"block_mask", [Pure, IsolatedFromAbove,
                                              Attn_CapturingOpInterface]> {
  let summary = "a mask function's block lists: FlexAttention's create_block_mask";
  let description = [{
    **Meaning.** Evaluates the mask function `keep(b, h, q, kv, c…)` over
    the index grid `[B, H, q_len, kv_len]`, cut into tiles of
    `block_size = [BQ, BK]` positions, and lists per `(b, h, Q block)` the
    KV blocks it keeps partly and wholly, in FlexAttention's `BlockMask`
    form (`NQ = ceil(q_len / BQ)`, `NK = ceil(kv_len / BK)`):

    ```
    any(b,h,m,n)  = OR  keep(b,h,q,kv) over q in block m, kv in block n, q < q_len, kv < kv_len
    all(b,h,m,n)  = AND keep(b,h,q,kv) over the same positions
    full          = all               partial = any and not all
    kv_num_blocks[b,h,m]            = #{n : partial(b,h,m,n)}          [B,H,NQ]    i32
    kv_indices[b,h,m,0..count)      = those n, ascending; zeros after  [B,H,NQ,NK] i32
    full_kv_num_blocks, full_kv_indices: the same for full
    ```

    A tail block counts only its positions inside the grid. Positions,
    heads and captures are as in `attn.mask_mod`; `B` and `H` are the
    results' leading dims (1 where the function does not depend on them:
    `attn.sdpa`'s mask reads `b`, `h` then at 0). The lists are what a
    kernel's block-sparse loop reads: `flex_attention(block_mask=)` passes
    them to `attn.sdpa` as a table of block states (docs/recipes.md).

    PyTorch: `torch.nn.attention.flex_attention.create_block_mask(mask_mod,
    B, H, Q_LEN, KV_LEN, BLOCK_SIZE=(BQ, BK))` and its `BlockMask`'s
    `kv_num_blocks`, `kv_indices`, `full_kv_num_blocks`, `full_kv_indices`.

    **Usage.**

    ```
    %kn, %ki, %fn, %fi = attn.block_mask [captures(%c… : type(%c)…)] {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %c…: type(%c)…):
      …  attn.yield %keep : i1
    } {q_len = Q : i64, kv_len = K : i64, block_size = array<i64: BQ, BK>}
      : type(%kn), type(%ki), type(%fn), type(%fi)
    ```

    **Verifier.** Every result is i32 with a static shape, `[B,H,NQ]` for
    the counts and `[B,H,NQ,NK]` for the lists, with `NQ`, `NK` as above;
    `q_len`, `kv_len`, `BQ`, `BK`, `B`, `H` are at least 1; the body follows
    `attn.mask_mod`'s rules.

    **Example** (causal attention in blocks of 4 over 10 positions: the
    diagonal blocks are partial, those below full):

    ```mlir
    func.func @block_mask_causal()
        -> (tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>) {
      %kn, %ki, %fn, %fi = attn.block_mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi sge, %i, %j : index
        attn.yield %keep : i1
      } {q_len = 10 : i64, kv_len = 10 : i64, block_size = array<i64: 4, 4>}
        : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
      return %kn, %ki, %fn, %fi
          : tensor<1x1x3xi32>, tensor<1x1x3x3xi32>, tensor<1x1x3xi32>, tensor<1x1x3x3xi32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$captures, I64Attr:$q_len,
                       I64Attr:$kv_len, DenseI64ArrayAttr:$block_size);
  let results = (outs TensorOf<[I32]>:$kv_num_blocks, TensorOf<[I32]>:$kv_indices,
                      TensorOf<[I32]>:$full_kv_num_blocks,
                      TensorOf<[I32]>:$full_kv_indices);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`captures` `(` $captures^ `:` type($captures) `)`)? $body
    attr-dict `:` type($kv_num_blocks) `,` type($kv_indices) `,`
    type($full_kv_num_blocks) `,` type($full_kv_indices)
  }];
  let hasVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ScoreModOp", "MaskModOp", "BlockMaskOp", "SdpaOp",
                "SdpaPartialOp", "SdpaGradOp", "MhaOp"]>]> {
  let summary = "the value a score or mask function returns";
  let description = [{
    Ends the body of `attn.score_mod`, `attn.mask_mod`, `attn.block_mask` and the `score_mod` /
    `mask_mod` regions of `attn.sdpa`, `attn.sdpa_partial`, `attn.sdpa_grad` and `attn.mha`: `attn.yield %v : f32` (a score) or
    `attn.yield %keep : i1` (a mask).

    **Example** (Gemma 2's softcap written as a score function):

    ```mlir
    func.func @yield_softcap(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
      %y = attn.score_mod %s {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 50.0 : f32
        %d = arith.divf %x, %c : f32
        %t = math.tanh %d : f32
        %r = arith.mulf %t, %c : f32
        attn.yield %r : f32
      } : tensor<1x2x8x8xf32>
      return %y : tensor<1x2x8x8xf32>
    }
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // ATTN_MOD_OPS_TD
