//===- AttnPrimitiveOps.td - one step of the formula each --*- tablegen -*-===//
#ifndef ATTN_PRIMITIVE_OPS_TD
#define ATTN_PRIMITIVE_OPS_TD

include "AttnOpBase.td"

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

def Attn_ProjectOp : Attn_ShapedOp<"project"> {
  let summary = "linear projection x·Wᵀ (+ b)";
  let description = [{
    Linear projection (Q/K/V/output projection).

    **Meaning.** With `layout = #attn.layout<out_in>` (default), `W` is `[Out,In]`:

    ```
    y[..., o] = Σ_i x[..., i] · W[o, i]  (+ b[o])
    ```

    With `layout = #attn.layout<in_out>`, `W` is `[In,Out]`:
    `y[..., o] = Σ_i x[..., i] · W[i, o] (+ b[o])`.

    PyTorch: `torch.nn.functional.linear(x, W, b)` (= `nn.Linear` with
    `weight = W`, `bias = b`) for `out_in`; `x @ W + b` for `in_out`.

    **Usage.**

    ```
    %y = attn.project %x, %w [, %b] [ {layout = #attn.layout<out_in|in_out>} ]
        : (type(%x), type(%w) [, type(%b)]) -> type(%y)
    ```

    - `%x`: input `[..., In]`, any rank ≥ 1 (usually `[B,T,In]`).
    - `%w`: weight, `[Out,In]` (`out_in`) or `[In,Out]` (`in_out`).
    - `%b`: optional bias `[Out]`.
    - `layout`: optional, defaults to `#attn.layout<out_in>` (nn.Linear).
    - Result `[..., Out]`: the input's leading dims with the last replaced by `Out`.

    **Verifier.**
    - `input` has rank ≥ 1.
    - `weight` has rank 2 (`[Out,In]` or `[In,Out]` per `layout`).
    - `weight` has the same element type as `input`.
    - The weight's input-width dim (dim 1 for `out_in`, dim 0 for `in_out`)
      equals the last dim of `input`.
    - If a bias is given: it has rank 1, the same element type as `input`, and
      its length equals the weight's output width (dim 0 for `out_in`, dim 1
      for `in_out`).
    - The result type equals the inferred `[..., Out]` with the input's
      element type (element type, rank, and each dim, dynamic dims kept dynamic).

    **Folds.** None.

    **Examples.**

    ```mlir
    func.func @project_q_linear(%x: tensor<2x16x512xf32>, %w: tensor<768x512xf32>,
                                %b: tensor<768xf32>) -> tensor<2x16x768xf32> {
      %y = attn.project %x, %w, %b
          : (tensor<2x16x512xf32>, tensor<768x512xf32>, tensor<768xf32>) -> tensor<2x16x768xf32>
      return %y : tensor<2x16x768xf32>
    }
    ```

    ```mlir
    func.func @project_in_out_dynamic(%x: tensor<?x?x512xf32>, %w: tensor<512x256xf32>)
        -> tensor<?x?x256xf32> {
      %y = attn.project %x, %w {layout = #attn.layout<in_out>}
          : (tensor<?x?x512xf32>, tensor<512x256xf32>) -> tensor<?x?x256xf32>
      return %y : tensor<?x?x256xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
                       Optional<Attn_FloatTensor>:$bias,
                       DefaultValuedAttr<Attn_WeightLayoutAttr,
                                         "::mlir::attn::WeightLayout::out_in">:$layout);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Attn_SplitHeadsOp : Attn_ShapedOp<"split_heads"> {
  let summary = "[B,T,h·D] → [B,h,T,D]: view(B,T,h,D).transpose(1,2)";
  let description = [{
    Split the model width into heads and move the head dim before the sequence.

    **Meaning.** With `h = num_heads` and `D = W/h`:

    ```
    y[b, n, t, d] = x[b, t, n·D + d]        x: [B,T,W],  y: [B,h,T,W/h]
    ```

    PyTorch: `x.view(B, T, h, W // h).transpose(1, 2)`.

    **Usage.**

    ```
    %y = attn.split_heads %x {num_heads = h : i64} : (type(%x)) -> type(%y)
    ```

    - `num_heads`: required, the number of heads `h`.

    **Verifier.**
    - `num_heads` is positive.
    - `input` has rank 3 `[B,T,h·D]`.
    - If the width (dim 2) is static, it is divisible by `num_heads`
      ("d_model must be divisible by n_heads").
    - The result type equals the inferred `[B, h, T, W/h]` (a dynamic `W`
      gives a dynamic head dim) with the input's element type.

    **Folds.** `split_heads(merge_heads(x), h) = x` when `x` has `h` heads
    (dim 1 of `x` is `h`) and the split's result type is exactly `x`'s type.
    `split_heads(merge_heads(x), 4)` of an 8-head `x` is a genuine re-split
    and does not fold (see `attn.merge_heads` for a round trip that folds).

    **Example** (dynamic batch and sequence, f16):

    ```mlir
    func.func @split_heads_dynamic_f16(%x: tensor<?x?x768xf16>) -> tensor<?x12x?x64xf16> {
      %y = attn.split_heads %x {num_heads = 12 : i64} : (tensor<?x?x768xf16>) -> tensor<?x12x?x64xf16>
      return %y : tensor<?x12x?x64xf16>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$num_heads);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Attn_MergeHeadsOp : Attn_ShapedOp<"merge_heads"> {
  let summary = "[B,h,T,D] → [B,T,h·D]: transpose(1,2).reshape(B,T,h·D)";
  let description = [{
    Inverse of `attn.split_heads`.

    **Meaning.**

    ```
    y[b, t, n·D + d] = x[b, n, t, d]        x: [B,h,T,D],  y: [B,T,h·D]
    ```

    PyTorch: `x.transpose(1, 2).reshape(B, T, h * D)`
    (= `.contiguous().view(B, T, h * D)`).

    **Usage.**

    ```
    %y = attn.merge_heads %x : (type(%x)) -> type(%y)
    ```

    No attributes; the head count is dim 1 of the input.

    **Verifier.**
    - `input` has rank 4 `[B,h,T,D]`.
    - The result type equals the inferred `[B, T, h·D]` (dynamic when `h` or
      `D` is dynamic) with the input's element type.

    **Folds.** `merge_heads(split_heads(x)) = x` when the merge's result type
    is exactly `x`'s type (always the case for a well-typed pair).

    **Example:**

    ```mlir
    func.func @merge_heads_dynamic(%x: tensor<?x12x?x64xf32>) -> tensor<?x?x768xf32> {
      %y = attn.merge_heads %x : (tensor<?x12x?x64xf32>) -> tensor<?x?x768xf32>
      return %y : tensor<?x?x768xf32>
    }
    ```

    Folding a round trip (`attn-opt --canonicalize` turns both functions into
    `return %x`):

    ```mlir
    func.func @fold_merge_of_split(%x: tensor<2x16x512xf32>) -> tensor<2x16x512xf32> {
      %s = attn.split_heads %x {num_heads = 8 : i64} : (tensor<2x16x512xf32>) -> tensor<2x8x16x64xf32>
      %m = attn.merge_heads %s : (tensor<2x8x16x64xf32>) -> tensor<2x16x512xf32>
      return %m : tensor<2x16x512xf32>
    }
    func.func @fold_split_of_merge(%x: tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32> {
      %m = attn.merge_heads %x : (tensor<2x8x16x64xf32>) -> tensor<2x16x512xf32>
      %s = attn.split_heads %m {num_heads = 8 : i64} : (tensor<2x16x512xf32>) -> tensor<2x8x16x64xf32>
      return %s : tensor<2x8x16x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Attn_RopeOp : Attn_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding of query or key heads";
  let description = [{
    **Meaning.** For `x` `[B,H,T,D]` and tables `cos`, `sin` of shape
    `[T, R/2]` (one position per row) or `[B, T, R/2]` (per-sequence
    positions), the first `R ≤ D` dims of every head vector are rotated in
    pairs, the remaining `D - R` pass through. For `k < R/2`, with
    `c = cos[(b,) t, k]`, `s = sin[(b,) t, k]`:

    ```
    rotate_half:   (p, q) = (k, k + R/2)       interleaved:  (p, q) = (2k, 2k + 1)
    y[b,h,t,p] = x[b,h,t,p]·c - x[b,h,t,q]·s
    y[b,h,t,q] = x[b,h,t,q]·c + x[b,h,t,p]·s
    y[b,h,t,e] = x[b,h,t,e]                      for e >= R
    ```

    Hugging Face (`rotate_half` style, `cos`/`sin` there are `[T, R]` with
    the half repeated: ours is their first half):

    ```
    def rotate_half(x): x1, x2 = x.chunk(2, -1); return torch.cat((-x2, x1), -1)
    xr, xp = x[..., :R], x[..., R:]
    y = torch.cat((xr * cos_full + rotate_half(xr) * sin_full, xp), -1)
    ```

    **Usage.**

    ```
    %y = attn.rope %x, %cos, %sin [ {style = #attn.rope<rotate_half|interleaved>} ]
        : type(%x), type(%cos), type(%sin)
    ```

    - `style`: optional, **defaults to `#attn.rope<rotate_half>`**.
    - `R` is twice the tables' last dim.
    - The tables are `f32` or the element type of `%x`; the rotation is
      computed in `f32`.

    **Verifier.**
    - `input` has rank 4 `[B,H,T,D]` with a static head dim `D`.
    - `cos` and `sin` have the same type, rank 2 `[T, R/2]` or rank 3
      `[B, T, R/2]`, and element type `f32` or the input's.
    - Table dim `T` equals dim 2 of `input`; a rank-3 table's dim 0 equals
      `B`.
    - `R/2 ≥ 1` and `R ≤ D` (rotary dims beyond the head dim are an error).

    **Folds.** None.

    **Examples** (LLaMA-style full rotation; GPT-J-style partial rotation,
    `R = 32` of `D = 64`, with per-sequence positions):

    ```mlir
    func.func @rope_llama(%q: tensor<1x32x128x128xf32>, %cos: tensor<128x64xf32>,
                          %sin: tensor<128x64xf32>) -> tensor<1x32x128x128xf32> {
      %y = attn.rope %q, %cos, %sin
          : tensor<1x32x128x128xf32>, tensor<128x64xf32>, tensor<128x64xf32>
      return %y : tensor<1x32x128x128xf32>
    }
    ```

    ```mlir
    func.func @rope_gptj_partial(%k: tensor<2x4x?x64xf16>, %cos: tensor<2x?x16xf32>,
                                 %sin: tensor<2x?x16xf32>) -> tensor<2x4x?x64xf16> {
      %y = attn.rope %k, %cos, %sin {style = #attn.rope<interleaved>}
          : tensor<2x4x?x64xf16>, tensor<2x?x16xf32>, tensor<2x?x16xf32>
      return %y : tensor<2x4x?x64xf16>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$cos,
                       Attn_FloatTensor:$sin,
                       DefaultValuedAttr<Attn_RopeStyleAttr,
                                         "::mlir::attn::RopeStyle::rotate_half">:$style);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos) `,` type($sin)
  }];
  let hasVerifier = 1;
}

def Attn_ScoresOp : Attn_ShapedOp<"scores"> {
  let summary = "attention scores Q·Kᵀ (unscaled)";
  let description = [{
    **Meaning.**

    ```
    S[b,h,i,j] = Σ_d Q[b,h,i,d] · K[b, h/(H/Hkv), j, d]
    ```

    PyTorch: `Q @ K.repeat_interleave(H // Hkv, dim=1).transpose(-2, -1)`
    (for `H == Hkv` simply `Q @ K.transpose(-2, -1)`).

    **Usage.**

    ```
    %s = attn.scores %q, %k : (type(%q), type(%k)) -> type(%s)
    ```

    - `%q` `[B,H,Tq,D]`, `%k` `[B,Hkv,Tk,D]`, result `[B,H,Tq,Tk]`.

    **Verifier.**
    - `query` has rank 4 `[B,H,Tq,D]`; `key` has rank 4 `[B,Hkv,Tk,D]`.
    - `key` has the same element type as `query`.
    - `key` batch (dim 0) equals `B` of `query`.
    - `H` is a multiple of `Hkv` (`H % Hkv == 0`; a static `Hkv = 0` is an error).
    - `key` head dim (dim 3) equals `D` of `query`.
    - (`Tq` and `Tk` are unconstrained.)
    - The result type equals the inferred `[B,H,Tq,Tk]` with the query's
      element type.

    **Folds.** None.

    **Example** (GQA, `H = 8`, `Hkv = 2`, `Tq ≠ Tk`):

    ```mlir
    func.func @scores_gqa(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>)
        -> tensor<2x8x16x32xf32> {
      %s = attn.scores %q, %k : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>) -> tensor<2x8x16x32xf32>
      return %s : tensor<2x8x16x32xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key attr-dict `:` functional-type(operands, results)
  }];
}

def Attn_ScaleOp : Attn_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "multiply every element by a constant";
  let description = [{
    **Meaning.** `y[...] = scale · x[...]`. PyTorch: `x * scale`.

    **Usage.**

    ```
    %y = attn.scale %x {scale = s : f32} : type(%x)
    ```

    - `scale`: required `f32` attribute. Operand and result have the same
      type (any rank).

    **Verifier.**
    - Operand and result types are identical (`SameOperandsAndResultType`).
    - `scale` is a positive finite number (not `0`, negative, `inf` or `nan`).

    **Folds / canonicalisation.**
    - `scale(x, 1.0) = x` (fold).
    - `scale(scale(x, a), b) = scale(x, a·b)` (canonicalisation pattern; the
      product is rounded to `f32`). It does not apply when the `f32` product
      overflows to `inf` or underflows to `0`: the two scales then stay apart.

    **Example** (bf16):

    ```mlir
    func.func @scale_bf16(%s: tensor<1x12x128x128xbf16>) -> tensor<1x12x128x128xbf16> {
      %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x12x128x128xbf16>
      return %t : tensor<1x12x128x128xbf16>
    }
    ```

    Canonicalisation: `attn-opt --canonicalize` turns this into a single
    `attn.scale %x {scale = 1.250000e-01 : f32}` (0.25 · 0.5):

    ```mlir
    func.func @fold_scale_of_scale(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
      %0 = attn.scale %x {scale = 0.25 : f32} : tensor<1x4x8x8xf32>
      %1 = attn.scale %0 {scale = 0.5 : f32} : tensor<1x4x8x8xf32>
      %2 = attn.scale %1 {scale = 1.0 : f32} : tensor<1x4x8x8xf32>
      return %2 : tensor<1x4x8x8xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_F32Attr:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Attn_SoftcapOp : Attn_Op<"softcap", [Pure, SameOperandsAndResultType]> {
  let summary = "cap logits smoothly: cap·tanh(x / cap)";
  let description = [{
    **Meaning.** `y[...] = cap · tanh(x[...] / cap)`: scores keep their sign
    and order but stay inside `(-cap, cap)`. A `-inf` score would become `-cap`, not
    stay masked: that is why a softcap comes *before* any mask (the order
    `attn-decompose` emits and `attn-fuse` requires).

    PyTorch (Gemma 2, `attn_logit_softcapping`):
    `scores = torch.tanh(scores / cap) * cap`.

    **Usage.**

    ```
    %y = attn.softcap %x {cap = c : f32} : type(%x)
    ```

    - `cap`: required `f32`. Operand and result have the same type.

    **Verifier.**
    - Operand and result types are identical.
    - `cap` is a positive finite number (`0`, negative, `inf` and `nan` are
      rejected; a huge cap such as `1e30` is allowed and is nearly the
      identity).

    **Folds.** None.

    **Example** (Gemma 2's cap of 50 on scaled scores):

    ```mlir
    func.func @softcap_gemma2(%s: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
      %t = attn.softcap %s {cap = 50.0 : f32} : tensor<1x8x16x16xf32>
      return %t : tensor<1x8x16x16xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_F32Attr:$cap);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Attn_MaskOp : Attn_Op<"mask", [Pure, AttrSizedOperandSegments,
                                    AllTypesMatch<["input", "result"]>]> {
  let summary = "biases (ALiBi, additive mask) and keep-masks (causal, "
                "window, key lengths, i1 mask) on scores";
  let description = [{
    **Meaning.** For scores `x` `[B,H,Tq,Tk]`, with `L[b] = len[b]` when
    `key_lengths` is given and `L[b] = Tk` otherwise, and the diagonal
    `d(i) = i` (top_left), `d(i) = i + %d` (top_left with `diagonal(%d)`,
    for causal and the window alike) or `d(i) = i + L[b] - Tq`
    (bottom_right):

    ```
    z[b,h,i,j] = x[b,h,i,j]
               - slope[b,h] · |i + L[b] - Tq - j|     (alibi_slopes)
               + M[b,h,i,j]                          (float mask, broadcast)
    y[b,h,i,j] = z[b,h,i,j] if every keep rule holds, else -inf:
       causal          j <= d(i)
       window          d(i) - left <= j <= d(i) + right
       key_lengths     j < len[b]
       i1 mask         M[b,h,i,j]
    ```

    Biases first, keep-masks second (the order of FlashAttention and of the
    fused kernels). `slope[b,h]` is `slopes[h]` for `[H]` slopes. The window's
    diagonal is the `causal` kind's when `causal` is given, else the
    window's `align` (default `bottom_right`).

    PyTorch (`tril` keeps the lower triangle):

    ```
    keep = torch.ones(Tq, Tk, dtype=torch.bool).tril(0)         # top_left  (is_causal)
    keep = torch.ones(Tq, Tk, dtype=torch.bool).tril(Tk - Tq)   # bottom_right
    keep = torch.ones(Tq, Tk, dtype=torch.bool).tril(d)         # top_left, diagonal(%d)
    y = x.masked_fill(~keep, float('-inf'))
    y = y.masked_fill(~M, float('-inf'))   # i1 mask
    y = y + M                              # float mask
    # window (left, right), bottom_right diagonal:
    i = torch.arange(Tq)[:, None] + Tk - Tq; j = torch.arange(Tk)[None, :]
    y = y.masked_fill((j < i - left) | (j > i + right), float('-inf'))
    # ALiBi:  y = y - slopes[:, None, None] * (i - j).abs()
    # key lengths: y = y.masked_fill(j >= lens[:, None, None, None], float('-inf'))
    ```

    **Usage.**

    ```
    %y = attn.mask %x [, %m] [alibi(%slopes : type)] [key_lengths(%len : type)]
         [diagonal(%d)]
         [ {causal = #attn.causal<top_left|bottom_right>,
            window = #attn.window<left = L, right = R>} ]
        : type(%x) [, type(%m)]
    ```

    - `%m`: optional mask operand (`i1` keep mask or additive float mask).
    - `alibi(...)`: optional ALiBi slopes, `f32` `[H]` or `[B,H]`.
    - `key_lengths(...)`: optional `[B]` `i32`/`i64` valid key counts per
      batch row. A length outside `[0, Tk]` is a run-time error (`attn-run`
      exits 2; the compiled code clamps it, it never reads past `Tk`).
    - `diagonal(...)`: optional `index`, with `causal = top_left` or a
      bounded window aligned top-left: the diagonal moves to `i + %d`, a
      value known at run time (any `%d`). Ring attention (`attn-shard`)
      runs every causal block through one kernel with it, and a tile of an
      sdpa (docs/tiling.md) carries its origin in it.
    - `causal`: optional; absent means no causal masking.
    - `window`: optional `#attn.window` (see `WindowAttr`).
    - The result has the type of `%x`.

    **Verifier.**
    - Input and result types are identical.
    - `input` has rank 4 `[B,H,Tq,Tk]`.
    - If `%m` is given (the common mask rule of the dialect's conventions):
      - its element type is `i1` or exactly the input's element type
        (an `f32` mask on `f16` scores is an error);
      - its rank is at most 4;
      - each of its dims, right-aligned against `[B,H,Tq,Tk]`, is a static 1
        or equals the scores dim (either side `?` is accepted).
    - `alibi_slopes` has rank 1 `[H]` or 2 `[B,H]` with those dims.
    - `key_lengths` has rank 1 and its dim equals `B`.
    - `diagonal` needs a rule that uses the diagonal (`causal` or a
      bounded `window`), and that diagonal top-left.
    - A `window` with an `align` different from the `causal` kind is an
      error; window bounds are non-negative (checked by the attribute).

    **Folds.** `mask(x)` with nothing to apply (no `causal`, no mask
    operand, no slopes, no key lengths, no window or an unbounded one)
    folds to `x`.

    **Examples** (GQA-shaped scores with a bottom-right causal mask plus a
    key-padding keep mask; an f16 additive mask):

    ```mlir
    func.func @mask_causal_padding(%s: tensor<2x8x16x32xf32>, %keep: tensor<2x1x1x32xi1>)
        -> tensor<2x8x16x32xf32> {
      %y = attn.mask %s, %keep {causal = #attn.causal<bottom_right>}
          : tensor<2x8x16x32xf32>, tensor<2x1x1x32xi1>
      return %y : tensor<2x8x16x32xf32>
    }
    ```

    ```mlir
    func.func @mask_additive_f16(%s: tensor<?x4x?x?xf16>, %bias: tensor<1x4x1x1xf16>)
        -> tensor<?x4x?x?xf16> {
      %y = attn.mask %s, %bias : tensor<?x4x?x?xf16>, tensor<1x4x1x1xf16>
      return %y : tensor<?x4x?x?xf16>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_LengthsTensor>:$key_lengths,
                       Optional<Index>:$diagonal,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_WindowAttr>:$window);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $mask^)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`diagonal` `(` $diagonal^ `)`)?
    attr-dict `:` type($input) (`,` type($mask)^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$mask,
                   "::mlir::attn::CausalKindAttr":$causal)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Attn_SoftmaxOp : Attn_Op<"softmax", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "numerically stable softmax over the last dim, with optional attention sinks";
  let description = [{
    **Meaning.** For each row (all indices but the last):

    ```
    m = max_k x[..., k]
    P[..., j] = exp(x[..., j] - m) / Σ_k exp(x[..., k] - m)
    ```

    A row that is entirely `-inf` (fully masked) gives all zeros, not NaN.

    With `sinks(%s)` (`x` `[B,H,Tq,Tk]`, `%s` `f32` `[H]`: attention sinks,
    one logit per head that joins the denominator and weighs no value, as
    in gpt-oss):

    ```
    m = max(max_k x[b,h,i,k], s[h])
    P[b,h,i,j] = exp(x[b,h,i,j] - m) / (exp(s[h] - m) + Σ_k exp(x[b,h,i,k] - m))
    ```

    so each row sums to less than 1, and a fully masked row gives zeros.

    PyTorch: `torch.softmax(x, dim=-1)`, except that PyTorch returns NaN for
    an all-`-inf` row where this op returns 0
    (`torch.softmax(x, -1).nan_to_num(0.0)` for masked rows).

    **Usage.**

    ```
    %p = attn.softmax %x [sinks(%s : type(%s))] : type(%x)
    ```

    **Verifier.**
    - Operand and result types are identical.
    - `input` has rank ≥ 1; with `sinks`, rank 4 `[B,H,Tq,Tk]`, and
      `sinks` is `f32` of rank 1 `[H]`.

    **Folds.** None.

    **Example** (f16):

    ```mlir
    func.func @softmax_f16(%x: tensor<1x12x128x128xf16>) -> tensor<1x12x128x128xf16> {
      %p = attn.softmax %x : tensor<1x12x128x128xf16>
      return %p : tensor<1x12x128x128xf16>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Optional<Attn_SinksTensor>:$sinks);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`sinks` `(` $sinks^ `:` type($sinks) `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Attn_DropoutOp : Attn_Op<"dropout", [Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Attn_RuntimeSeedOpInterface, ["getSeedAttributeName"]>]> {
  let summary = "dropout on attention weights, counter-based RNG";
  let description = [{
    Dropout on attention weights with a counter-based RNG, so the CPU and GPU
    lowerings drop the same elements.

    **Meaning.**

    ```
    y[n] = keep(seed, n) ? x[n] / (1 - rate) : 0
    ```

    where `n` is the element's flat (row-major) index and `keep(seed, n)` is a
    pure function that is true with probability `1 - rate`.

    PyTorch: `torch.nn.functional.dropout(x, p=rate, training=True)` in
    distribution (the random stream is not PyTorch's; it depends only on
    `seed` and the index, so the op is pure and reproducible).

    **The generator.** `attn.dropout {rate = r, seed = s}` on a tensor `x`
    computes, for the element at row-major flat index `n` (over the whole
    tensor; for `sdpa` and `mha` the tensor is the `[B,H,Tq,Tk]`
    probabilities), with wrapping unsigned 64-bit arithmetic and the seed
    taken as its two's-complement `uint64`:

    ```
    z = s + (n + 1) · 0x9E3779B97F4A7C15
    z = (z ^ (z >> 30)) · 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) · 0x94D049BB133111EB
    z =  z ^ (z >> 31)                                   (the splitmix64 finaliser)
    keep  = (z >> 40) >= ceil(r · 2^24)                  (r as f32, the product in double)
    y[n]  = keep ? x[n] · (1 / (1 - r)) : 0              (the factor in double, then rounded
                                                          to the compute type)
    ```

    So each element is kept with probability `1 - ceil(r·2^24)/2^24`. The mask
    depends only on `seed`, the flat index and the tensor's shape, so every run
    and every lowering drops the same elements; it is not PyTorch's stream.
    The same formula is `dropoutKeep` in the test oracle, `test/unit/Reference/Reference.h`.

    **Usage.**

    ```
    %y = attn.dropout %x {rate = r : f32 [, seed = s : i64]} : type(%x)
    ```

    - `rate`: required `f32`, the drop probability.
    - `seed`: optional `i64`, **defaults to 0** (and is not printed when 0).
    - `seed(%s)`: the seed as a run-time value instead, a `tensor<i64>`
      operand (a fresh mask per call without a kernel per seed: training
      steps); then the `seed` attribute must be absent.

    **Verifier.**
    - Operand and result types are identical.
    - `rate` is in `[0, 1)` (`rate = 1` and `nan` are rejected).

    **Folds.** `dropout(x, rate = 0) = x`.

    **Example:**

    ```mlir
    func.func @dropout_seeded(%p: tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32> {
      %y = attn.dropout %p {rate = 0.1 : f32, seed = 42 : i64} : tensor<2x8x16x32xf32>
      return %y : tensor<2x8x16x32xf32>
    }
    ```

    `attn-opt --canonicalize` folds both ops below away (`return %x`):

    ```mlir
    func.func @fold_dropout_and_mask(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
      %0 = attn.dropout %x {rate = 0.0 : f32} : tensor<1x4x8x8xf32>
      %1 = attn.mask %0 : tensor<1x4x8x8xf32>
      return %1 : tensor<1x4x8x8xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Optional<Attn_SeedTensor>:$runtime_seed,
                       Attn_F32Attr:$rate, DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`seed` `(` $runtime_seed^ `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Attn_WeightedSumOp : Attn_ShapedOp<"weighted_sum"> {
  let summary = "attention output P·V";
  let description = [{
    **Meaning.**

    ```
    O[b,h,i,e] = Σ_j P[b,h,i,j] · V[b, h/(H/Hkv), j, e]
    ```

    PyTorch: `P @ V.repeat_interleave(H // Hkv, dim=1)` (for `H == Hkv`
    simply `P @ V`).

    **Usage.**

    ```
    %o = attn.weighted_sum %p, %v : (type(%p), type(%v)) -> type(%o)
    ```

    - `%p` `[B,H,Tq,Tk]`, `%v` `[B,Hkv,Tk,Dv]`, result `[B,H,Tq,Dv]`.

    **Verifier.**
    - `probs` has rank 4 `[B,H,Tq,Tk]`; `value` has rank 4 `[B,Hkv,Tk,Dv]`.
    - `value` has the same element type as `probs`.
    - `value` batch (dim 0) equals `B` of `probs`.
    - `H` (dim 1 of `probs`) is a multiple of `Hkv` (dim 1 of `value`).
    - `value` length (dim 2) equals `Tk`, dim 3 of `probs`.
    - The result type equals the inferred `[B,H,Tq,Dv]` with the probs'
      element type.

    **Folds.** None.

    **Example** (GQA, `H = 8`, `Hkv = 2`, `Dv = 48 ≠ D`):

    ```mlir
    func.func @weighted_sum_gqa(%p: tensor<2x8x16x32xf32>, %v: tensor<2x2x32x48xf32>)
        -> tensor<2x8x16x48xf32> {
      %o = attn.weighted_sum %p, %v : (tensor<2x8x16x32xf32>, tensor<2x2x32x48xf32>) -> tensor<2x8x16x48xf32>
      return %o : tensor<2x8x16x48xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$probs, Attn_FloatTensor:$value);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $probs `,` $value attr-dict `:` functional-type(operands, results)
  }];
}

#endif // ATTN_PRIMITIVE_OPS_TD
