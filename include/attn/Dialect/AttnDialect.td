//===- AttnDialect.td - the attn dialect -------------------*- tablegen -*-===//
#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention as a small language of tensor ops";
  let description = [{
    The `attn` dialect models attention the way PyTorch and the textbooks
    write it, as a small language of ops on ranked tensors. All ops have
    value semantics and no side effects (dropout takes its seed as an
    attribute). There are eleven *primitive* ops, one per step of the
    textbook formula, two *composite* ops that users write and the
    fused lowerings consume, three *partial* ops (attention over a
    block of keys, and the rule that merges such blocks) that ring
    attention and split-key decoding are built from, and two *function*
    ops (with `attn.yield`) that apply a score or mask function written as
    a region:

    | op | meaning | shapes |
    |---|---|---|
    | `attn.project` | `x·Wᵀ (+ b)` | `[..., In] × [Out,In] → [..., Out]` |
    | `attn.split_heads` | `view(B,T,h,W/h).transpose(1,2)` | `[B,T,h·D] → [B,h,T,D]` |
    | `attn.merge_heads` | inverse of `split_heads` | `[B,h,T,D] → [B,T,h·D]` |
    | `attn.rope` | rotary position embedding (rotate-half or interleaved pairs) | same shape |
    | `attn.scores` | `Q·Kᵀ` | `[B,H,Tq,D] × [B,Hkv,Tk,D] → [B,H,Tq,Tk]` |
    | `attn.scale` | `scale·x` | same shape |
    | `attn.softcap` | `cap·tanh(x/cap)` | same shape |
    | `attn.mask` | causal, window, key lengths, ALiBi, operand mask | same shape |
    | `attn.softmax` | stable softmax over the last dim | same shape |
    | `attn.dropout` | dropout with a counter-based RNG | same shape |
    | `attn.weighted_sum` | `P·V` | `[B,H,Tq,Tk] × [B,Hkv,Tk,Dv] → [B,H,Tq,Dv]` |
    | `attn.sdpa` | `softmax(mask(scale·Q·Kᵀ))·V` | `[B,H,Tq,D] × [B,Hkv,Tk,D] × [B,Hkv,Tk,Dv] → [B,H,Tq,Dv]` |
    | `attn.mha` | project, split, sdpa, merge, project | `[B,Tq,E] × [B,Tk,Ekv] → [B,Tq,Eo]` |
    | `attn.sdpa_partial` | `sdpa` over a block of keys + its log-sum-exp | `… → [B,H,Tq,Dv] f32, [B,H,Tq] f32` |
    | `attn.logsumexp` | `log Σ exp` over the last dim | `[..., N] → [...]` f32 |
    | `attn.merge_partial` | merge two partials over disjoint keys | `[..., T, Dv], [..., T]` (twice) `→` the same |
    | `attn.score_mod` | `f(s, b, h, q, kv)` on every score (a region) | same shape |
    | `attn.mask_mod` | `-inf` where `keep(b, h, q, kv)` is false (a region) | same shape |

    Each op below gives its meaning, the PyTorch call it equals, its
    usage, its verifier rules, its folds and runnable examples (the test
    suite checks that every `mlir` example block of this page parses and
    verifies).

    ## Conventions

    ### Shapes

    | letter | meaning |
    |---|---|
    | `B` | batch |
    | `H` | query heads |
    | `Hkv` | key/value heads; `H % Hkv == 0`. `Hkv == H` is multi-head attention, `1 < Hkv < H` grouped-query attention (GQA), `Hkv == 1` multi-query attention (MQA). Query head `h` reads key/value head `h / (H/Hkv)` (integer division), i.e. PyTorch's `repeat_interleave(H//Hkv, dim=1)` on K and V |
    | `Tq`, `Tk` | query length, key/value length (may differ: cross-attention, KV-cache decode) |
    | `D` | head dim of Q and K |
    | `Dv` | head dim of V (and of the output) |
    | `E`, `Ekv`, `Eo` | model widths of `mha`'s query input, key/value input and output |

    Any dim may be dynamic (`?`); in practice batch and sequence dims are.
    Every "dim X must equal dim Y" rule is checked only when **both** dims
    are static; with a `?` on either side it is a run-time precondition.
    Every op whose result shape follows from its operands checks that the
    declared result type is **exactly** the inferred one: a dim that is
    static in the operands must be written with that value, and a dim that
    is `?` in the operands stays `?` in the result (you cannot "refine" `?`
    to a number, nor "forget" a number as `?`).

    ### Element types

    Data operands and results are ranked tensors of `f32`, `f16`, `bf16` or
    `f64` (anything else, and unranked tensors, are rejected by the op's
    type constraint). All data operands of one op, and its result, have the
    **same** element type; f16/bf16 lowerings accumulate in f32. `f64` is
    for checking (`torch.autograd.gradcheck`, finite differences): the
    reference lowering computes it in f64, the fused kernels refuse it (the
    CPU pipeline lowers it by the reference route), and the partial results
    that are `f32` for the other types (`sdpa_partial`'s output and
    log-sum-exp, `logsumexp`, `merge_partial`) are `f64`. Mask
    operands are `i1` (a *keep* mask: `true` = attend, `false` = masked to
    `-inf`) or a float tensor of the same element type as the scores (an
    *additive* mask, added to the scores; use `-inf` or a large negative
    number to mask).

    ### Attributes

    - `#attn.causal<top_left>` / `#attn.causal<bottom_right>`: the causal
      mask kind (`CausalKindAttr` below). `top_left` masks key `j` of
      score row `i` when `j > i` (PyTorch's `is_causal=True`);
      `bottom_right` when `j > i + Tk - Tq` (FlashAttention ≥ 2.1,
      KV-cache decoding).
    - `#attn.layout<out_in>` / `#attn.layout<in_out>`: how a projection
      weight is stored (`WeightLayoutAttr` below); `out_in`, the
      **default**, is `nn.Linear`'s `(d_out, d_in)` weight.
    - `scale`, `rate`, `dropout_rate` are `f32` attributes and must be
      written with their type, e.g. `{scale = 0.125 : f32}`; `num_heads`,
      `num_kv_heads`, `seed`, `dropout_seed` are `i64`, e.g.
      `{num_heads = 8 : i64}`.
    - An attribute an op does not define is an **error**, not ignored:
      `{is_causal = true}` on `attn.sdpa` says to write
      `causal = #attn.causal<top_left>`, `{dropout_p = 0.1}` says
      `dropout_rate`, a typo such as `casual` gets "did you mean 'causal'?".
      Names with a dialect prefix (`{mytool.tag = 3 : i64}`) are
      discardable attributes as in any MLIR dialect and are kept.

    ### Type signatures

    Ops that change the shape print `: (operand types) -> result type`
    (`project`, `split_heads`, `merge_heads`, `scores`, `weighted_sum`,
    `sdpa`, `mha`); ops whose result has their input's type print
    `: input type` (`scale`, `softmax`, `dropout`, and `mask`, followed by
    `, mask type` when it has a mask operand), as upstream elementwise ops do.

    ### Common mask rule

    Used by `attn.mask`, `attn.sdpa` and `attn.mha`. A mask operand is
    numpy-broadcast to the scores shape `[B,H,Tq,Tk]`: it has rank 0 to 4
    and is aligned on the **right** (a rank-2 mask is `[Tq,Tk]`, a rank-3
    mask `[H,Tq,Tk]`). Each mask dim must be either a **static 1**
    (broadcast along that dim) or equal to the corresponding scores dim. A
    `?` mask dim is taken to *equal* the scores dim (it is not broadcast);
    to broadcast, write a static `1`. Its element type is `i1` or exactly
    the scores' element type (an `f32` mask on `f16` scores is an error).
    PyTorch's `key_padding_mask` of shape `[B,Tk]` is a `[B,1,1,Tk]` mask
    here.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;
}

// Every attn op rejects an attribute it does not define (unless its name
// has a dialect prefix) and suggests the right spelling.
def Attn_StrictAttributes : NativeOpTrait<"StrictAttributes"> {
  let cppNamespace = "::mlir::attn";
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, !listconcat([Attn_StrictAttributes], traits)>;

#endif // ATTN_DIALECT_TD
