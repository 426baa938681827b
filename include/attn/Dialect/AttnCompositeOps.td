//===- AttnCompositeOps.td - sdpa and mha ------------------*- tablegen -*-===//
#ifndef ATTN_COMPOSITE_OPS_TD
#define ATTN_COMPOSITE_OPS_TD

include "AttnOpBase.td"

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_ShapedOp<"sdpa", [AttrSizedOperandSegments, IsolatedFromAbove,
                                         Attn_RuntimeSeedOpInterface, Attn_CapturingOpInterface]> {
  let summary = "scaled dot-product attention softmax(mask(scale·Q·Kᵀ))·V";
  let description = [{
    Scaled dot-product attention in one op; the form the fused lowerings take.

    **Meaning.**

    ```
    S[b,h,i,j] = scale · Σ_d Q[b,h,i,d] · K[b, h/(H/Hkv), j, d]
    S          = softcap · tanh(S / softcap)          (if softcap given)
    S          = score_mod(S, b, h, i, j, captures…)  (if a score_mod region)
    S'         = attn.mask(S, mask, alibi_slopes, key_lengths;
                           causal, window)           (see attn.mask)
    S'         = mask_mod(b, h, i, j, captures…) ? S' : -inf  (if a mask_mod region)
    P[b,h,i,:] = softmax_j(S'[b,h,i,:]; sinks[h])    (all -inf row → zeros)
    P'         = dropout(P, dropout_rate, dropout_seed)   (if dropout_rate given)
    O[b,h,i,e] = Σ_j P'[b,h,i,j] · V[b, h/(H/Hkv), j, e]
    ```

    with `scale = 1/sqrt(D)` when the attribute is absent. That is,
    `sdpa = weighted_sum(dropout(softmax(mask_mod(mask(score_mod(softcap(scale(scores(Q,K)))))))), V)`.
    When `D` is `?` the op verifies, but the lowerings need the scale written
    out: `attn-decompose` refuses such an sdpa with "head dim is dynamic and
    no 'scale' is given".

    PyTorch:

    ```
    torch.nn.functional.scaled_dot_product_attention(
        Q, K, V,
        attn_mask=mask,            # i1: True = take part (same convention); float: added
        dropout_p=dropout_rate or 0.0,
        is_causal=(causal == top_left),
        scale=scale,               # None = 1/sqrt(D)
        enable_gqa=(H != Hkv))
    ```

    `bottom_right` corresponds to passing
    `attn_mask=torch.nn.attention.bias.causal_lower_right(Tq, Tk)`. Unlike
    PyTorch, `causal` and a mask operand may be combined, and a fully masked
    row gives zeros instead of NaN.

    **Usage.**

    ```
    %o = attn.sdpa %q, %k, %v [, %mask] [alibi(%slopes)] [key_lengths(%len)]
         [sinks(%sinks)] [captures(%c…)] [ATTRS] [score_mod REGION] [mask_mod REGION]
         : (type(%q), type(%k), type(%v) [, type(%mask)] [, type(%slopes)] [, type(%len)]
            [, type(%sinks)] [, type(%c)…])
           -> type(%o)

    ATTRS: {scale = s : f32, causal = #attn.causal<top_left|bottom_right>,
            softcap = c : f32, window = #attn.window<left = L, right = R>,
            dropout_rate = r : f32, dropout_seed = n : i64}   (each one optional)
    ```

    - `%q` `[B,H,Tq,D]`, `%k` `[B,Hkv,Tk,D]`, `%v` `[B,Hkv,Tk,Dv]`;
      result `[B,H,Tq,Dv]`.
    - `%mask`: optional fourth operand, `i1` keep mask or additive float
      mask, broadcastable to `[B,H,Tq,Tk]`.
    - `scale`: optional `f32`; **defaults to `1/sqrt(D)`**.
    - `causal`: optional; absent means not causal.
    - `alibi(...)`: optional ALiBi slopes, `f32` `[H]` or `[B,H]`: adds
      `-slope·|i + Tk - Tq - j|` to each score (BLOOM, MPT).
    - `key_lengths(...)`: optional `[B]` `i32`/`i64`: keys `j >= len[b]` are
      masked and never visited; `Tk` in the bottom-right diagonal and in
      ALiBi is `len[b]` (decode against a padded KV cache). A length
      outside `[0, Tk]` is a run-time error.
    - `sinks(...)`: optional attention sinks, `f32` `[H]`: one learned logit
      per query head that joins every row's softmax denominator and
      attends to no value (gpt-oss, StreamingLLM): with
      `m = max(max_j S'[i,j], sink_h)`,
      `P[i,j] = exp(S'[i,j] - m) / (exp(sink_h - m) + Σ_j exp(S'[i,j] - m))`,
      as `attn.softmax` with `sinks` (a row that keeps no key gives 0).
    - `softcap`: optional positive `f32`: `c·tanh(s/c)` on the scaled scores
      (Gemma 2, Grok).
    - `window`: optional `#attn.window<left = L, right = R>`: sliding-window
      attention (Mistral); tiles outside it are never visited.
    - `score_mod {^bb0(%s: f32, %b, %h, %i, %j: index, %c…): … attn.yield %t : f32}`
      and `mask_mod {^bb0(%b, %h, %i, %j: index, %c…): … attn.yield %keep : i1}`:
      optional score and mask functions, as the bodies of `attn.score_mod`
      and `attn.mask_mod` (FlexAttention's `score_mod` and `mask_mod`); both
      take every capture as trailing arguments. `i`, `j` are positions in
      the whole sequences, `h` the query head.
    - `dropout_rate`: optional `f32`; absent means no dropout.
    - `dropout_seed`: optional `i64`; **defaults to 0**; only allowed together
      with `dropout_rate` (the verifier rejects a seed without a rate).
    - `seed(%s)`: the dropout seed as a run-time `tensor<i64>` operand
      instead of `dropout_seed` (one kernel, a fresh mask per call); needs
      `dropout_rate`.

    **Verifier.**
    - `query` has rank 4 `[B,H,Tq,D]`; `key` has rank 4 `[B,Hkv,Tk,D]`.
    - `key` has the same element type as `query`; `key` batch equals `B`;
      `H % Hkv == 0`; `key` head dim equals `D`.
    - `value` has rank 4 `[B,Hkv,Tk,Dv]` and the same element type as `query`.
    - `value` batch equals `B`, `value` heads (dim 1) equal `Hkv` of `key`,
      `value` length (dim 2) equals `Tk` of `key`.
    - If `%mask` is given: element type `i1` or the query's element type;
      rank ≤ 4; each dim a static 1 or equal to the matching dim of
      `[B,H,Tq,Tk]` (right-aligned).
    - `scale` and `softcap`, if given, are positive finite numbers.
    - `alibi_slopes` is `f32` of rank 1 `[H]` or rank 2 `[B,H]`;
      `key_lengths` has rank 1 `[B]`; `sinks` has rank 1 `[H]`.
    - A `window` whose `align` differs from the `causal` kind is an error.
    - `dropout_rate`, if given, is in `[0, 1)`; `dropout_seed` needs
      `dropout_rate`.
    - The result type equals the inferred `[B,H,Tq,Dv]` with the query's
      element type.

    **Folds.** None: an `sdpa` with `dropout_rate = 0.0` or `scale = 1.0`
    keeps the attribute. The `attn-decompose` pass expands an `sdpa` into the
    primitive chain and `attn-fuse` raises such a chain back to one `sdpa`.

    **Examples.** A causal self-attention, and a cross-length attention with
    an explicit scale and a `[B,1,1,Tk]` keep mask:

    ```mlir
    func.func @sdpa_causal_gpt2(%q: tensor<1x12x1024x64xf32>, %k: tensor<1x12x1024x64xf32>,
                                %v: tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32> {
      %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
          : (tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>)
            -> tensor<1x12x1024x64xf32>
      return %o : tensor<1x12x1024x64xf32>
    }
    ```

    ```mlir
    func.func @sdpa_keep_mask(%q: tensor<2x4x31x64xf32>, %k: tensor<2x4x129x64xf32>,
                              %v: tensor<2x4x129x64xf32>, %keep: tensor<2x1x1x129xi1>)
        -> tensor<2x4x31x64xf32> {
      %o = attn.sdpa %q, %k, %v, %keep {scale = 0.125 : f32}
          : (tensor<2x4x31x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32>, tensor<2x1x1x129xi1>)
            -> tensor<2x4x31x64xf32>
      return %o : tensor<2x4x31x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_LengthsTensor>:$key_lengths,
                       Optional<Attn_SinksTensor>:$sinks,
                       Optional<Attn_SeedTensor>:$runtime_seed,
                       Variadic<AnyRankedTensor>:$captures,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window,
                       OptionalAttr<Attn_F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    (`sinks` `(` $sinks^ `)`)? (`seed` `(` $runtime_seed^ `)`)?
    (`captures` `(` $captures^ `)`)?
    attr-dict (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, CArg<"::mlir::Value", "{}">:$mask)>
  ];
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or 1/sqrt(D).
    /// Returns nullopt when D is dynamic and no scale is given.
    std::optional<double> getEffectiveScale();
    /// Whether the op has a score function / a mask function.
    bool hasScoreMod() { return !getScoreMod().empty(); }
    bool hasMaskMod() { return !getMaskMod().empty(); }
  }];
}

def Attn_MhaOp : Attn_ShapedOp<"mha", [AttrSizedOperandSegments, IsolatedFromAbove,
                                       Attn_RuntimeSeedOpInterface,
                                       Attn_CapturingOpInterface]> {
  let summary = "multi-head attention: project, split, sdpa, merge, project";
  let description = [{
    Multi-head attention: input projections, head split, `sdpa`, head merge,
    output projection. Self-attention when `query_input` and `kv_input` are the
    same value, cross-attention when they differ.

    **Meaning.** With `H = num_heads`, `Hkv = num_kv_heads` (default `H`), and
    the weights in the default `out_in` layout:

    ```
    Q   = xq  · Wqᵀ (+ bq)          xq  [B,Tq,E],   Wq [H·D,   E]    → [B,Tq,H·D]
    K   = xkv · Wkᵀ (+ bk)          xkv [B,Tk,Ekv], Wk [Hkv·D, Ekv]  → [B,Tk,Hkv·D]
    V   = xkv · Wvᵀ (+ bv)                          Wv [Hkv·Dv,Ekv]  → [B,Tk,Hkv·Dv]
    Qh  = split_heads(Q, H),  Kh = split_heads(K, Hkv)             (then, with rope:
    Qh  = rope(Qh, cos, sin), Kh = rope(Kh, cos, sin)               attn.rope, style rope_style)
    O   = sdpa(Qh, Kh, split_heads(V, Hkv), mask, alibi_slopes, key_lengths,
               sinks, seed, captures; scale, causal, softcap, window,
               dropout_rate, dropout_seed; score_mod, mask_mod)
                                                                  → [B,H,Tq,Dv]
    out = merge_heads(O) · Woᵀ (+ bo)               Wo [Eo,   H·Dv]  → [B,Tq,Eo]
    ```

    (with `layout = #attn.layout<in_out>` every weight is transposed:
    `Wq [E,H·D]`, …, `Wo [H·Dv,Eo]`, and `·Wᵀ` becomes `·W`). `D` is derived
    as `out_width(Wq)/H` and `Dv` as `out_width(Wv)/Hkv`; the default scale is
    `1/sqrt(D)`.

    PyTorch: the seeds' `MultiHeadAttention.forward`, and
    `nn.MultiheadAttention(E, H, bias=True, kdim=Ekv, vdim=Ekv, batch_first=True)`
    with `q/k/v_proj_weight = Wq/Wk/Wv`, `in_proj_bias = cat(bq,bk,bv)`,
    `out_proj = (Wo, bo)`, `dropout = dropout_rate`
    (`nn.MultiheadAttention` only covers `Hkv == H` and `H·D == H·Dv == Eo == E`;
    note that its boolean `attn_mask`/`key_padding_mask` mark positions to
    **exclude**, so pass `~mask` here, reshaped `key_padding_mask[:,None,None,:]`).

    **Usage.**

    ```
    %out = attn.mha %xq, %xkv, %wq, %wk, %wv, %wo
             [qkv_bias(%bq, %bk, %bv)] [out_bias(%bo)] [mask(%mask)]
             [alibi(%slopes)] [key_lengths(%len)] [sinks(%sinks)]
             [rope(%cos, %sin)] [seed(%s)] [captures(%c…)]
             {num_heads = H : i64
              [, num_kv_heads = Hkv : i64] [, scale = s : f32]
              [, causal = #attn.causal<top_left|bottom_right>]
              [, softcap = c : f32] [, window = #attn.window<left = L, right = R>]
              [, rope_style = #attn.rope<rotate_half|interleaved>]
              [, dropout_rate = r : f32] [, dropout_seed = n : i64]
              [, layout = #attn.layout<out_in|in_out>]}
             [score_mod REGION] [mask_mod REGION]
         : (types of all operands, in order) -> type(%out)
    ```

    - `captures(...)`, `score_mod`, `mask_mod`: the score and mask
      functions of the block's attention and the tensors they read, as in
      `sdpa` (positions are those of the projected sequences; `h` is the
      query head).

    - `qkv_bias(...)`: optional; the three input-projection biases, all or none.
    - `out_bias(...)`: optional output-projection bias.
    - `mask(...)`: optional `i1` keep / additive float mask, broadcastable to
      `[B,H,Tq,Tk]`.
    - `alibi(...)`, `key_lengths(...)`, `softcap`, `window`: as in `sdpa`.
    - `sinks(...)`: optional attention sinks as in `sdpa`, `f32 [H]`: one
      learned logit per query head in the denominator of each row's softmax
      (gpt-oss).
    - `rope(%cos, %sin)`: optional rotary tables applied to the projected,
      split Q and K heads (`attn.rope`, pairing `rope_style`, **default**
      `rotate_half`). Self-attention form: the tables' `T` equals both `Tq`
      and `Tk`.
    - `num_heads`: required.
    - `num_kv_heads`: optional, **defaults to `num_heads`** (set it for GQA/MQA).
    - `scale`: optional, **defaults to `1/sqrt(D)`**.
    - `causal`, `dropout_rate`: optional, as in `sdpa`; `dropout_seed`
      optional, **defaults to 0**, only allowed together with `dropout_rate`.
    - `seed(%s)`: optional, the dropout seed as a run-time `tensor<i64>`
      instead of `dropout_seed` (as in `sdpa`: one compiled block serves
      every training step, each with a fresh mask); needs `dropout_rate`,
      excludes `dropout_seed`.
    - `layout`: optional, **defaults to `#attn.layout<out_in>`** (nn.Linear);
      applies to all four weights.

    **Verifier.**
    - `num_heads` is positive; `num_kv_heads` (when given) is positive;
      `num_heads % num_kv_heads == 0`.
    - `query_input` has rank 3 `[B,Tq,E]`; `kv_input` has rank 3
      `[B,Tk,Ekv]`, the same element type, and the same batch `B`.
    - Each of `wq`, `wk`, `wv`, `wo` has rank 2 (`[Out,In]` or `[In,Out]` per
      `layout`) and the element type of `query_input`.
    - `wq` input width equals `E`; `wq` output width, when static, is
      divisible by `num_heads` (gives `D`).
    - `wk` input width equals `Ekv`; `wk` output width equals `num_kv_heads · D`.
    - `wv` input width equals `Ekv`; `wv` output width, when static, is
      divisible by `num_kv_heads` (gives `Dv`).
    - `wo` input width equals `num_heads · Dv`.
    - `bq`, `bk`, `bv` are given together or not at all (only reachable in the
      generic form; the custom syntax always takes all three).
    - Each given bias has rank 1, the element type of `query_input`, and a
      length equal to the output width of its weight (`bq`↔`wq`, `bk`↔`wk`,
      `bv`↔`wv`, `bo`↔`wo`).
    - If `mask` is given: element type `i1` or the input's element type;
      rank ≤ 4; each dim a static 1 or equal to the matching dim of
      `[B, num_heads, Tq, Tk]` (right-aligned).
    - `scale` and `softcap`, if given, are positive finite numbers;
      `dropout_rate`, if given, is in `[0, 1)`; `dropout_seed` and
      `seed(...)` need `dropout_rate`, and at most one of them is given.
    - `alibi_slopes` is `[H]` or `[B,H]` `f32`; `key_lengths` is `[B]`;
      `sinks` is `[H]` `f32`; a `window`'s `align` matches `causal`.
    - `cos`, `sin` follow `attn.rope`'s rules against `[B, H, Tq, D]` and
      `[B, Hkv, Tk, D]`; `rope_style` needs them.
    - The result type equals the inferred `[B, Tq, Eo]` (`Eo` = output width
      of `wo`) with the input's element type.

    **Folds.** None. It means exactly
    `project`/`split_heads`/`sdpa`/`merge_heads`/`project`, and the
    `attn-decompose` pass expands it so.

    **Examples.** GPT-2 small causal self-attention (E = 768, 12 heads):

    ```mlir
    func.func @mha_gpt2_self(%x: tensor<1x1024x768xf32>,
                             %wq: tensor<768x768xf32>, %wk: tensor<768x768xf32>,
                             %wv: tensor<768x768xf32>, %wo: tensor<768x768xf32>,
                             %bq: tensor<768xf32>, %bk: tensor<768xf32>,
                             %bv: tensor<768xf32>, %bo: tensor<768xf32>)
        -> tensor<1x1024x768xf32> {
      %y = attn.mha %x, %x, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv) out_bias(%bo)
          {num_heads = 12 : i64, causal = #attn.causal<top_left>}
          : (tensor<1x1024x768xf32>, tensor<1x1024x768xf32>,
             tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>,
             tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>)
            -> tensor<1x1024x768xf32>
      return %y : tensor<1x1024x768xf32>
    }
    ```

    Cross-attention (decoder queries `[2,10,256]` over encoder states
    `[2,20,128]`, 8 heads of 32) with all biases and a key-padding keep mask:

    ```mlir
    func.func @mha_cross_attention(%xq: tensor<2x10x256xf32>, %xkv: tensor<2x20x128xf32>,
                                   %wq: tensor<256x256xf32>, %wk: tensor<256x128xf32>,
                                   %wv: tensor<256x128xf32>, %wo: tensor<256x256xf32>,
                                   %bq: tensor<256xf32>, %bk: tensor<256xf32>,
                                   %bv: tensor<256xf32>, %bo: tensor<256xf32>,
                                   %keep: tensor<2x1x1x20xi1>) -> tensor<2x10x256xf32> {
      %y = attn.mha %xq, %xkv, %wq, %wk, %wv, %wo qkv_bias(%bq, %bk, %bv) out_bias(%bo) mask(%keep)
          {num_heads = 8 : i64}
          : (tensor<2x10x256xf32>, tensor<2x20x128xf32>,
             tensor<256x256xf32>, tensor<256x128xf32>, tensor<256x128xf32>, tensor<256x256xf32>,
             tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>,
             tensor<2x1x1x20xi1>) -> tensor<2x10x256xf32>
      return %y : tensor<2x10x256xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query_input, Attn_FloatTensor:$kv_input,
                       Attn_FloatTensor:$wq, Attn_FloatTensor:$wk,
                       Attn_FloatTensor:$wv, Attn_FloatTensor:$wo,
                       Optional<Attn_FloatTensor>:$bq,
                       Optional<Attn_FloatTensor>:$bk,
                       Optional<Attn_FloatTensor>:$bv,
                       Optional<Attn_FloatTensor>:$bo,
                       Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_LengthsTensor>:$key_lengths,
                       Optional<Attn_SinksTensor>:$sinks,
                       Optional<Attn_FloatTensor>:$rope_cos,
                       Optional<Attn_FloatTensor>:$rope_sin,
                       Optional<Attn_SeedTensor>:$runtime_seed,
                       Variadic<AnyRankedTensor>:$captures,
                       I64Attr:$num_heads,
                       OptionalAttr<I64Attr>:$num_kv_heads,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window,
                       OptionalAttr<Attn_RopeStyleAttr>:$rope_style,
                       OptionalAttr<Attn_F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed,
                       DefaultValuedAttr<Attn_WeightLayoutAttr,
                                         "::mlir::attn::WeightLayout::out_in">:$layout);
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $query_input `,` $kv_input `,` $wq `,` $wk `,` $wv `,` $wo
    (`qkv_bias` `(` $bq^ `,` $bk `,` $bv `)`)?
    (`out_bias` `(` $bo^ `)`)?
    (`mask` `(` $mask^ `)`)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    (`sinks` `(` $sinks^ `)`)?
    (`rope` `(` $rope_cos^ `,` $rope_sin `)`)? (`seed` `(` $runtime_seed^ `)`)?
    (`captures` `(` $captures^ `)`)?
    attr-dict (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$queryInput, "::mlir::Value":$kvInput,
                   "::mlir::Value":$wq, "::mlir::Value":$wk,
                   "::mlir::Value":$wv, "::mlir::Value":$wo,
                   "int64_t":$numHeads,
                   CArg<"std::optional<int64_t>", "std::nullopt">:$numKvHeads,
                   CArg<"::mlir::attn::WeightLayout",
                        "::mlir::attn::WeightLayout::out_in">:$layout)>
  ];
  let extraClassDeclaration = [{
    int64_t getNumKvHeadsOrDefault() {
      return getNumKvHeads() ? *getNumKvHeads() : getNumHeads();
    }
    /// Whether the op has a score function / a mask function.
    bool hasScoreMod() { return !getScoreMod().empty(); }
    bool hasMaskMod() { return !getMaskMod().empty(); }
  }];
}

#endif // ATTN_COMPOSITE_OPS_TD
