//===- AttnPartialOps.td - blocks of keys and their merge --*- tablegen -*-===//
#ifndef ATTN_PARTIAL_OPS_TD
#define ATTN_PARTIAL_OPS_TD

include "AttnOpBase.td"

//===----------------------------------------------------------------------===//
// Partial attention (ring attention, flash-decoding): the pieces whose
// results merge
//===----------------------------------------------------------------------===//

def Attn_SdpaPartialOp : Attn_Op<"sdpa_partial", [Pure, AttrSizedOperandSegments, IsolatedFromAbove,
    InferTypeOpAdaptor, Attn_RuntimeSeedOpInterface, Attn_CapturingOpInterface,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "attn.sdpa over one block of keys: its output and log-sum-exp";
  let description = [{
    What `attn.sdpa` computes over the keys it is given, plus the natural
    log of each row's softmax denominator, so that attention over disjoint
    blocks of keys can be merged exactly (`attn.merge_partial`): the
    building block of ring attention (`attn-shard`) and of split-key
    decoding.

    **Meaning.** With `S'` the masked scores of `attn.sdpa` (scale,
    softcap, mask, causal, window, ALiBi, key lengths: the same rules and
    attributes), and with `diagonal(%d)` (an `index`, with a top-left
    `causal` or window) the diagonal moved to `i + %d` as on
    `attn.mask` (`torch.tril(diagonal=d)`; the shift of a key block
    against a query block, known at run time):

    ```
    lse[b,h,i]   = log Σ_j exp(S'[b,h,i,j])          (-inf when no key is kept)
    O[b,h,i,e]   = Σ_j exp(S'[b,h,i,j] - lse[b,h,i]) · V[b, h/(H/Hkv), j, e]
                                                      (0 when no key is kept)
    ```

    With `sinks(%s)` (`f32` `[H]`, attention sinks as on `attn.sdpa`) the
    sink joins each row's denominator once:
    `lse[b,h,i] = log(exp(s[h]) + Σ_j exp(S'[b,h,i,j]))` (`s[h]` for a
    row that keeps no key, whose `O` is 0), and `O` is normalised by it,
    so that `O` equals `attn.sdpa`'s with the same sinks and `lse` is
    FlashAttention's `softmax_lse` with sinks. A block with sinks merges
    exactly with blocks without them (`attn.merge_partial`); two blocks
    that both carry the sinks would count them twice.

    With `dropout_rate` (and `dropout_seed`, or a run-time `seed(%s)`
    operand, as on `attn.sdpa`), `O` weighs `V` by the
    probabilities after `attn.dropout` (the same generator, over the flat
    index of `[B,H,Tq,Tk]`, as `attn.sdpa`'s dropout) while `lse` is the
    undropped softmax's: the forward a backward with dropout
    (`attn.sdpa_grad`) needs. Blocks with dropout are not meant to be
    merged (the flat index is the block's own).

    `O` equals `attn.sdpa`'s result, but is always `f32` (it is an
    intermediate to merge, kept at accumulator precision; `f64` for `f64`
    operands); `lse` likewise.
    PyTorch / FlashAttention: `flash_attn_func(..., return_attn_probs=True)`
    returns the same `softmax_lse`.

    **Usage.**

    ```
    %o, %lse = attn.sdpa_partial %q, %k, %v [, %mask] [alibi(%s)] [key_lengths(%len)]
               [sinks(%sinks)] [diagonal(%d)] [seed(%seed)] [captures(%c…)]
               [ATTRS: scale, causal, softcap, window as on attn.sdpa]
               [score_mod REGION] [mask_mod REGION]
        : (type(%q), type(%k), type(%v) [, ...]) -> (tensor<BxHxTqxDvxf32>, tensor<BxHxTqxf32>)
    ```

    The `score_mod` / `mask_mod` functions and their captures are those of
    `attn.sdpa` (FlexAttention's `return_lse=True` is this op with them).

    **Verifier.** Every rule of `attn.sdpa` on the operands and attributes;
    `diagonal` as on `attn.mask`; `sinks` has rank 1 `[H]`; the results are
    `[B,H,Tq,Dv]` and `[B,H,Tq]`, both `f32` (`f64` for `f64` operands).

    **Example.** The first 64 of 128 keys:

    ```mlir
    func.func @partial(%q: tensor<1x4x32x64xf16>, %k: tensor<1x4x64x64xf16>,
                       %v: tensor<1x4x64x64xf16>) -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>) {
      %o, %lse = attn.sdpa_partial %q, %k, %v {scale = 0.125 : f32}
          : (tensor<1x4x32x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>)
            -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>)
      return %o, %lse : tensor<1x4x32x64xf32>, tensor<1x4x32xf32>
    }
    ```

    A causal block of a ring: query `i` of this block sees key `j` of the
    key block when `j <= i + %d` (`%d` = 0 on the diagonal block, the rows
    between the blocks' starts for an earlier block, negative for a later
    one):

    ```mlir
    func.func @ring_block(%q: tensor<1x4x32x64xf32>, %k: tensor<1x4x32x64xf32>,
                          %v: tensor<1x4x32x64xf32>, %d: index)
        -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>) {
      %o, %lse = attn.sdpa_partial %q, %k, %v diagonal(%d)
          {causal = #attn.causal<top_left>, scale = 0.125 : f32}
          : (tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf32>, index)
            -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>)
      return %o, %lse : tensor<1x4x32x64xf32>, tensor<1x4x32xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_LengthsTensor>:$key_lengths,
                       Optional<Attn_SinksTensor>:$sinks,
                       Optional<Index>:$diagonal,
                       Optional<Attn_SeedTensor>:$runtime_seed,
                       Variadic<AnyRankedTensor>:$captures,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window,
                       OptionalAttr<Attn_F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Attn_AccTensor:$result, Attn_AccTensor:$lse);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    (`sinks` `(` $sinks^ `)`)? (`diagonal` `(` $diagonal^ `)`)?
    (`seed` `(` $runtime_seed^ `)`)?
    (`captures` `(` $captures^ `)`)?
    attr-dict (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or 1/sqrt(D).
    std::optional<double> getEffectiveScale();
    /// Whether the op has a score function / a mask function.
    bool hasScoreMod() { return !getScoreMod().empty(); }
    bool hasMaskMod() { return !getMaskMod().empty(); }
  }];
}

def Attn_LogSumExpOp : Attn_Op<"logsumexp", [Pure]> {
  let summary = "log Σ exp over the last dim";
  let description = [{
    **Meaning.** For each row (all indices but the last),
    `r[...] = m + log Σ_k exp(x[..., k] - m)` with `m = max_k x[..., k]`:
    `-inf` for a row that is all `-inf` (or empty), `+inf` if any element
    is `+inf`, NaN if any is NaN. PyTorch: `torch.logsumexp(x, dim=-1)`.
    The result is `f32` whatever the input's element type (`f64` for an
    `f64` input).

    With `sinks(%s)` (`x` `[B,H,Tq,Tk]`, `%s` `f32` `[H]`: attention sinks,
    as on `attn.softmax`) each row's sum has one more term:
    `r[b,h,i] = log(exp(s[h]) + Σ_k exp(x[b,h,i,k]))`, computed from
    `m = max(s[h], max_k x[b,h,i,k])`; a row that is all `-inf` gives
    `s[h]`. This is the log of `attn.softmax`'s denominator with the same
    sinks.

    **Usage.** `%r = attn.logsumexp %x [sinks(%s : type(%s))] : type(%x) -> type(%r)`

    **Verifier.** `input` has rank ≥ 1; with `sinks`, rank 4
    `[B,H,Tq,Tk]`, and `sinks` is `f32` of rank 1 `[H]`; the result is
    `f32` (`f64` for an `f64` input) with the input's shape minus its last dim.

    **Example.**

    ```mlir
    func.func @lse(%s: tensor<1x12x128x128xf32>) -> tensor<1x12x128xf32> {
      %r = attn.logsumexp %s : tensor<1x12x128x128xf32> -> tensor<1x12x128xf32>
      return %r : tensor<1x12x128xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Optional<Attn_SinksTensor>:$sinks);
  let results = (outs Attn_AccTensor:$result);
  let assemblyFormat = [{
    $input (`sinks` `(` $sinks^ `:` type($sinks) `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_MergePartialOp : Attn_Op<"merge_partial", [Pure,
    AllTypesMatch<["out1", "out2", "result"]>, AllTypesMatch<["lse1", "lse2", "lse"]>]> {
  let summary = "merges two attn.sdpa_partial results over disjoint keys";
  let description = [{
    **Meaning.** Given the partial results `(O1, lse1)` and `(O2, lse2)` of
    the same queries over two disjoint sets of keys, the result over their
    union (the online-softmax merge rule):

    ```
    lse = log(exp(lse1) + exp(lse2))                  (-inf when both are)
    O   = exp(lse1 - lse) · O1 + exp(lse2 - lse) · O2  (a -inf side weighs 0)
    ```

    **Usage.**

    ```
    %o, %lse = attn.merge_partial %o1, %lse1, %o2, %lse2 : type(%o1), type(%lse1)
    ```

    **Verifier.** `out1`, `out2` and `result` have one type `[..., T, Dv]`;
    `lse1`, `lse2` and `lse` one type `[..., T]` (the outputs' shape minus
    the last dim); all `f32`, or all `f64`.

    **Example.**

    ```mlir
    func.func @merge(%o1: tensor<1x4x32x64xf32>, %l1: tensor<1x4x32xf32>,
                     %o2: tensor<1x4x32x64xf32>, %l2: tensor<1x4x32xf32>)
        -> (tensor<1x4x32x64xf32>, tensor<1x4x32xf32>) {
      %o, %l = attn.merge_partial %o1, %l1, %o2, %l2 : tensor<1x4x32x64xf32>, tensor<1x4x32xf32>
      return %o, %l : tensor<1x4x32x64xf32>, tensor<1x4x32xf32>
    }
    ```
  }];
  let arguments = (ins Attn_AccTensor:$out1, Attn_AccTensor:$lse1,
                       Attn_AccTensor:$out2, Attn_AccTensor:$lse2);
  let results = (outs Attn_AccTensor:$result, Attn_AccTensor:$lse);
  let assemblyFormat = [{
    $out1 `,` $lse1 `,` $out2 `,` $lse2 attr-dict `:` type($out1) `,` type($lse1)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_PARTIAL_OPS_TD
