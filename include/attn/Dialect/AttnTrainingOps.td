//===- AttnTrainingOps.td - the backward of attention ------*- tablegen -*-===//
#ifndef ATTN_TRAINING_OPS_TD
#define ATTN_TRAINING_OPS_TD

include "AttnOpBase.td"

//===----------------------------------------------------------------------===//
// Training: the vector-Jacobian product of attn.sdpa
//===----------------------------------------------------------------------===//

def Attn_SdpaGradOp : Attn_Op<"sdpa_grad", [Pure, AttrSizedOperandSegments,
    IsolatedFromAbove, Attn_RuntimeSeedOpInterface, Attn_CapturingOpInterface,
    AllTypesMatch<["query", "grad_query"]>, AllTypesMatch<["key", "grad_key"]>,
    AllTypesMatch<["value", "grad_value"]>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "the backward of attn.sdpa: dQ, dK, dV from dO, O and the log-sum-exp";
  let description = [{
    The gradients of `attn.sdpa` (with its score function as the
    `score_mod` region and that function's derivative by the score as
    `score_mod_grad`, its mask function as `mask_mod`) with respect to its
    query, key and value, given the gradient
    of its output. The forward's saved state is its output `O` and each
    row's log-sum-exp `lse`, which `attn.sdpa_partial` returns: the
    probabilities are recomputed from them, never stored
    (FlashAttention-2's backward).

    **Meaning.** With `S'` the masked scores of `attn.sdpa` (the same
    operands and attributes: scale, softcap, mask, causal, window, ALiBi,
    key lengths, the mask function and its captures) and `G = H / Hkv`:

    ```
    P[b,h,i,j]  = exp(S'[b,h,i,j] - lse[b,h,i])        (0 when lse = -inf)
    dP[b,h,i,j] = Σ_e dO[b,h,i,e] · V[b,h/G,j,e]
    D[b,h,i]    = Σ_e dO[b,h,i,e] · O[b,h,i,e]
    dS[b,h,i,j] = P · (dP - D) · f'(s_c) · (1 - (s_c/softcap)²)
                  (f' = score_mod_grad at the capped score s_c, only with a
                  score function; the last factor only with softcap; 0
                  where P = 0)
    dQ[b,h,i,d] = scale · Σ_j dS[b,h,i,j] · K[b,h/G,j,d]
    dK[b,g,j,d] = scale · Σ_{h: h/G = g} Σ_i dS[b,h,i,j] · Q[b,h,i,d]
    dV[b,g,j,e] =         Σ_{h: h/G = g} Σ_i P[b,h,i,j]  · dO[b,h,i,e]
    ```

    With `dropout_rate` (and `dropout_seed`, or a run-time `seed(%s)` operand
    as on `attn.sdpa`), the forward weighed V by
    `Z ∘ P` where `Z[n] = keep(seed, n) / (1 - rate)` is attn.dropout's
    mask over the flat index `n` of `[B,H,Tq,Tk]` (the forward is an
    `attn.sdpa_partial` with the same rate and seed, whose `O` is the
    dropped output and `lse` the undropped softmax's); the backward
    regenerates `Z` from the seed, never stores it:

    ```
    dV = Σ_group (Z ∘ P)ᵀ · dO        dP = Z ∘ (dO · Vᵀ)        D = rowsum(dO ∘ O)
    ```

    and the rest as above (`D = rowsum(P ∘ dP)` still holds).

    With attention sinks, the forward is an `attn.sdpa_partial` with the
    same `sinks`, whose `lse` includes them: `P` above is then the
    forward's, so `dQ`, `dK`, `dV` need nothing more (the sinks are not an
    operand). The sinks' own gradient,
    `dsinks[h] = -Σ_{b,i} exp(sinks[h] - lse[b,h,i]) · D[b,h,i]`, needs
    only `O`, `dO` and `lse`; `attn-differentiate` computes it beside this op.

    Masked keys (causal, window, key lengths, a false mask entry, an
    additive `-inf`) have `P = 0` and receive no gradient; a row that keeps
    no key (`lse = -inf`) gives zero gradients, not NaN. The ALiBi slopes
    and the key lengths get no gradient. An additive mask gets one when a
    fourth result asks for it (PyTorch's math path gives it; its flash and
    memory-efficient kernels do not): the gradient of the masked scores,
    summed over the dims the mask broadcasts,

    ```
    dMask = Σ_broadcast P · (dP - D)       (the mask's own shape and type)
    ```

    which needs the `[B,H,Tq,Tk]` scores: the fused CPU backward leaves
    such an op to the reference lowering.

    PyTorch: `torch.autograd.grad(sdpa(q, k, v, ...), (q, k, v), dO)`.

    **Usage.**

    ```
    %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse [, %mask]
                    [alibi(%slopes)] [key_lengths(%len)] [captures(%c…)]
                    [ATTRS: scale, causal, softcap, window, dropout_rate,
                            dropout_seed as on attn.sdpa]
                    [score_mod REGION score_mod_grad REGION] [mask_mod REGION]
        : (type(%q), type(%k), type(%v), type(%o), type(%do), type(%lse) [, ...])
          -> (type(%q), type(%k), type(%v))
    ```

    - `%q`, `%k`, `%v`, the mask, slopes, lengths, captures, the mask
      function and attributes: as on the forward `attn.sdpa` /
      `attn.sdpa_partial` (the captures get no gradient).
    - `score_mod_grad`: with `score_mod`, a score function (same signature)
      yielding `d score_mod / d score`; `attn-differentiate` builds it from
      `score_mod`'s body.
    - `%o`, `%do`: `[B,H,Tq,Dv]`, the forward's output and its gradient,
      of the query's element type or `f32` (`sdpa_partial`'s output).
    - `%lse`: `[B,H,Tq]` `f32` (`f64` for an `f64` query), the forward's
      log-sum-exp.
    - Results: `dQ`, `dK`, `dV` of the types of `%q`, `%k`, `%v`
      (computed in `f32`, or `f64` for `f64`, rounded once), and optionally
      `dMask` of the additive mask's type.

    **Verifier.** Every operand and attribute rule of `attn.sdpa` (the
    mask function's too); `%o`
    and `%do` are `[B,H,Tq,Dv]` of the query's element type or `f32`;
    `%lse` is `[B,H,Tq]` `f32` (`f64` for an `f64` query); the results have the types of `%q`, `%k`,
    `%v`; a fourth result needs an additive mask and has its type.

    **Example.** The backward of a causal GQA attention:

    ```mlir
    func.func @backward(%q: tensor<1x8x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                        %v: tensor<1x2x128x64xf32>, %o: tensor<1x8x128x64xf32>,
                        %do: tensor<1x8x128x64xf32>, %lse: tensor<1x8x128xf32>)
        -> (tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>) {
      %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %do, %lse
          {causal = #attn.causal<top_left>}
          : (tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>,
             tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128xf32>)
            -> (tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>)
      return %dq, %dk, %dv
          : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Attn_FloatTensor:$out,
                       Attn_FloatTensor:$grad_out, Attn_AccTensor:$lse,
                       Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_LengthsTensor>:$key_lengths,
                       Optional<Attn_SeedTensor>:$runtime_seed,
                       Variadic<AnyRankedTensor>:$captures,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window,
                       OptionalAttr<Attn_F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Attn_FloatTensor:$grad_query, Attn_FloatTensor:$grad_key,
                      Attn_FloatTensor:$grad_value, Optional<Attn_FloatTensor>:$grad_mask);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$score_mod_grad,
                        AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $grad_out `,` $lse (`,` $mask^)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    (`seed` `(` $runtime_seed^ `)`)? (`captures` `(` $captures^ `)`)?
    attr-dict (`score_mod` $score_mod^)? (`score_mod_grad` $score_mod_grad^)?
    (`mask_mod` $mask_mod^)? `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or 1/sqrt(D).
    std::optional<double> getEffectiveScale();
    /// Whether the op has a score function (and its derivative) / a mask
    /// function.
    bool hasScoreMod() { return !getScoreMod().empty(); }
    bool hasMaskMod() { return !getMaskMod().empty(); }
  }];
}

#endif // ATTN_TRAINING_OPS_TD
