//===- AttnOps.td - attn ops -------------------------------*- tablegen -*-===//
//
// Shapes: B batch, H query heads, Hkv key/value heads, Tq/Tk query/key
// lengths, D head dim, Dv value head dim. Every rule the verifier can check
// it checks in C++ (AttnOps.cpp), naming the operand and the dim.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "AttnDialect.td"
include "AttnAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Attn_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16]>;
def Attn_SlopesTensor : RankedTensorOf<[F32], [], "ALiBi slopes: a ranked tensor">;
def Attn_LengthsTensor : RankedTensorOf<[I32, I64], [], "key lengths: a ranked tensor">;

// Ops whose result shape follows from their operands: InferTypeOpInterface
// gives the result type (builders without a result type use it), the
// verifier checks a declared one with a message naming the dim, and dynamic
// dims are reifiable.
class Attn_ShapedOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat(traits, [Pure,
        InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                                  ["reifyResultShapes"]>])> {
  let hasVerifier = 1;
}

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
    `d(i) = i` (top_left), `d(i) = i + %d` (top_left with `diagonal(%d)`)
    or `d(i) = i + L[b] - Tq` (bottom_right):

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
    - `diagonal(...)`: optional `index`, only with `causal = top_left`: the
      diagonal moves to `i + %d`, a value known at run time (any `%d`: at
      or above `Tk - 1` every key is kept, at or below `-Tq` none). Ring
      attention (`attn-shard`) runs every causal block through one kernel
      with it.
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
    - `diagonal` needs `causal = #attn.causal<top_left>` and no bounded
      `window`.
    - A `window` with an `align` different from the `causal` kind is an
      error; window bounds are non-negative (checked by the attribute).

    **Folds.** `mask(x)` with nothing to apply (no `causal`, no mask
    operand, no slopes, no key lengths, no window or an unbounded one)
    folds to `x`.

    **Examples** (GQA-shaped scores with a bottom-right causal mask plus a
    key-padding keep mask; an f16 additive mask; a sliding window with
    ALiBi and key lengths):

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

    ```mlir
    func.func @mask_window_alibi_lengths(%s: tensor<2x8x16x64xf32>, %slopes: tensor<8xf32>,
                                         %len: tensor<2xi32>) -> tensor<2x8x16x64xf32> {
      %y = attn.mask %s alibi(%slopes : tensor<8xf32>) key_lengths(%len : tensor<2xi32>)
          {causal = #attn.causal<bottom_right>, window = #attn.window<left = 31>}
          : tensor<2x8x16x64xf32>
      return %y : tensor<2x8x16x64xf32>
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

def Attn_SoftmaxOp : Attn_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "numerically stable softmax over the last dim";
  let description = [{
    **Meaning.** For each row (all indices but the last):

    ```
    m = max_k x[..., k]
    P[..., j] = exp(x[..., j] - m) / Σ_k exp(x[..., k] - m)
    ```

    A row that is entirely `-inf` (fully masked) gives all zeros, not NaN.

    PyTorch: `torch.softmax(x, dim=-1)`, except that PyTorch returns NaN for
    an all-`-inf` row where this op returns 0
    (`torch.softmax(x, -1).nan_to_num(0.0)` for masked rows).

    **Usage.**

    ```
    %p = attn.softmax %x : type(%x)
    ```

    **Verifier.**
    - Operand and result types are identical.
    - `input` has rank ≥ 1.

    **Folds.** None.

    **Example** (f16):

    ```mlir
    func.func @softmax_f16(%x: tensor<1x12x128x128xf16>) -> tensor<1x12x128x128xf16> {
      %p = attn.softmax %x : tensor<1x12x128x128xf16>
      return %p : tensor<1x12x128x128xf16>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Attn_DropoutOp : Attn_Op<"dropout", [Pure, SameOperandsAndResultType]> {
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
  let arguments = (ins Attn_FloatTensor:$input, Attn_F32Attr:$rate,
                       DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
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

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_ShapedOp<"sdpa", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention softmax(mask(scale·Q·Kᵀ))·V";
  let description = [{
    Scaled dot-product attention in one op; the form the fused lowerings take.

    **Meaning.**

    ```
    S[b,h,i,j] = scale · Σ_d Q[b,h,i,d] · K[b, h/(H/Hkv), j, d]
    S          = softcap · tanh(S / softcap)          (if softcap given)
    S'         = attn.mask(S, mask, alibi_slopes, key_lengths;
                           causal, window)           (see attn.mask)
    P[b,h,i,:] = softmax_j(S'[b,h,i,:])              (all -inf row → zeros)
    P'         = dropout(P, dropout_rate, dropout_seed)   (if dropout_rate given)
    O[b,h,i,e] = Σ_j P'[b,h,i,j] · V[b, h/(H/Hkv), j, e]
    ```

    with `scale = 1/sqrt(D)` when the attribute is absent. That is,
    `sdpa = weighted_sum(dropout(softmax(mask(softcap(scale(scores(Q,K)))))), V)`.
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
    %o = attn.sdpa %q, %k, %v [, %mask] [alibi(%slopes)] [key_lengths(%len)] [ATTRS]
         : (type(%q), type(%k), type(%v) [, type(%mask)] [, type(%slopes)] [, type(%len)])
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
    - `softcap`: optional positive `f32`: `c·tanh(s/c)` on the scaled scores
      (Gemma 2, Grok).
    - `window`: optional `#attn.window<left = L, right = R>`: sliding-window
      attention (Mistral); tiles outside it are never visited.
    - `dropout_rate`: optional `f32`; absent means no dropout.
    - `dropout_seed`: optional `i64`; **defaults to 0**; only allowed together
      with `dropout_rate` (the verifier rejects a seed without a rate).

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
      `key_lengths` has rank 1 `[B]`.
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

    Dynamic batch and sequence lengths (the result keeps `?` for `B` and `Tq`):

    ```mlir
    func.func @sdpa_dynamic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>,
                            %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
      %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
          : (tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32>
      return %o : tensor<?x4x?x64xf32>
    }
    ```

    GQA KV-cache decode step (`H = 8`, `Hkv = 2`, one new query against 512
    cached keys, bottom-right causal):

    ```mlir
    func.func @sdpa_gqa_decode(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x512x128xf32>,
                               %v: tensor<1x2x512x128xf32>) -> tensor<1x8x1x128xf32> {
      %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
          : (tensor<1x8x1x128xf32>, tensor<1x2x512x128xf32>, tensor<1x2x512x128xf32>)
            -> tensor<1x8x1x128xf32>
      return %o : tensor<1x8x1x128xf32>
    }
    ```

    f16 with an additive `[Tq,Tk]` mask (same element type as Q) and dropout:

    ```mlir
    func.func @sdpa_f16_additive_dropout(%q: tensor<2x8x64x64xf16>, %k: tensor<2x8x64x64xf16>,
                                         %v: tensor<2x8x64x32xf16>, %bias: tensor<64x64xf16>)
        -> tensor<2x8x64x32xf16> {
      %o = attn.sdpa %q, %k, %v, %bias {dropout_rate = 0.1 : f32, dropout_seed = 1234 : i64}
          : (tensor<2x8x64x64xf16>, tensor<2x8x64x64xf16>, tensor<2x8x64x32xf16>, tensor<64x64xf16>)
            -> tensor<2x8x64x32xf16>
      return %o : tensor<2x8x64x32xf16>
    }
    ```

    Mistral-style sliding-window GQA with softcap, ALiBi and per-sequence
    key lengths (a padded KV cache of 256 keys, 4 new queries):

    ```mlir
    func.func @sdpa_window_features(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x256x64xf32>,
                                    %v: tensor<2x2x256x64xf32>, %slopes: tensor<8xf32>,
                                    %len: tensor<2xi32>) -> tensor<2x8x4x64xf32> {
      %o = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len)
          {causal = #attn.causal<bottom_right>, window = #attn.window<left = 127>,
           softcap = 30.0 : f32}
          : (tensor<2x8x4x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x64xf32>,
             tensor<8xf32>, tensor<2xi32>) -> tensor<2x8x4x64xf32>
      return %o : tensor<2x8x4x64xf32>
    }
    ```

    The same computation as the first example (at `T = 128`), written with
    the primitive ops (the chain `attn-decompose` produces):

    ```mlir
    func.func @sdpa_as_primitives(%q: tensor<1x12x128x64xf32>, %k: tensor<1x12x128x64xf32>,
                                  %v: tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
      %s = attn.scores %q, %k : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x128xf32>
      %t = attn.scale %s {scale = 0.125 : f32} : tensor<1x12x128x128xf32>
      %u = attn.mask %t {causal = #attn.causal<top_left>} : tensor<1x12x128x128xf32>
      %p = attn.softmax %u : tensor<1x12x128x128xf32>
      %r = attn.weighted_sum %p, %v : (tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
      return %r : tensor<1x12x128x64xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_SlopesTensor>:$alibi_slopes,
                       Optional<Attn_LengthsTensor>:$key_lengths,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window,
                       OptionalAttr<Attn_F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, CArg<"::mlir::Value", "{}">:$mask)>
  ];
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or 1/sqrt(D).
    /// Returns nullopt when D is dynamic and no scale is given.
    std::optional<double> getEffectiveScale();
  }];
}

def Attn_MhaOp : Attn_ShapedOp<"mha", [AttrSizedOperandSegments]> {
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
    O   = sdpa(Qh, Kh, split_heads(V, Hkv), mask, alibi_slopes, key_lengths;
               scale, causal, softcap, window, dropout_rate, dropout_seed) → [B,H,Tq,Dv]
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
             [alibi(%slopes)] [key_lengths(%len)] [rope(%cos, %sin)]
             {num_heads = H : i64
              [, num_kv_heads = Hkv : i64] [, scale = s : f32]
              [, causal = #attn.causal<top_left|bottom_right>]
              [, softcap = c : f32] [, window = #attn.window<left = L, right = R>]
              [, rope_style = #attn.rope<rotate_half|interleaved>]
              [, dropout_rate = r : f32] [, dropout_seed = n : i64]
              [, layout = #attn.layout<out_in|in_out>]}
         : (types of all operands, in order) -> type(%out)
    ```

    - `qkv_bias(...)`: optional; the three input-projection biases, all or none.
    - `out_bias(...)`: optional output-projection bias.
    - `mask(...)`: optional `i1` keep / additive float mask, broadcastable to
      `[B,H,Tq,Tk]`.
    - `alibi(...)`, `key_lengths(...)`, `softcap`, `window`: as in `sdpa`.
    - `rope(%cos, %sin)`: optional rotary tables applied to the projected,
      split Q and K heads (`attn.rope`, pairing `rope_style`, **default**
      `rotate_half`). Self-attention form: the tables' `T` equals both `Tq`
      and `Tk`.
    - `num_heads`: required.
    - `num_kv_heads`: optional, **defaults to `num_heads`** (set it for GQA/MQA).
    - `scale`: optional, **defaults to `1/sqrt(D)`**.
    - `causal`, `dropout_rate`: optional, as in `sdpa`; `dropout_seed`
      optional, **defaults to 0**, only allowed together with `dropout_rate`.
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
      `dropout_rate`, if given, is in `[0, 1)`; `dropout_seed` needs
      `dropout_rate`.
    - `alibi_slopes` is `[H]` or `[B,H]` `f32`; `key_lengths` is `[B]`; a
      `window`'s `align` matches `causal`.
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

    GQA (`num_heads = 8`, `num_kv_heads = 2`, `D = Dv = 32`) in bf16 with
    `in_out` weights and dynamic batch/sequence:

    ```mlir
    func.func @mha_gqa_bf16_in_out(%x: tensor<?x?x256xbf16>,
                                   %wq: tensor<256x256xbf16>, %wk: tensor<256x64xbf16>,
                                   %wv: tensor<256x64xbf16>, %wo: tensor<256x256xbf16>)
        -> tensor<?x?x256xbf16> {
      %y = attn.mha %x, %x, %wq, %wk, %wv, %wo
          {num_heads = 8 : i64, num_kv_heads = 2 : i64, layout = #attn.layout<in_out>,
           causal = #attn.causal<top_left>, dropout_rate = 0.1 : f32, dropout_seed = 7 : i64}
          : (tensor<?x?x256xbf16>, tensor<?x?x256xbf16>,
             tensor<256x256xbf16>, tensor<256x64xbf16>, tensor<256x64xbf16>, tensor<256x256xbf16>)
            -> tensor<?x?x256xbf16>
      return %y : tensor<?x?x256xbf16>
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
                       Optional<Attn_FloatTensor>:$rope_cos,
                       Optional<Attn_FloatTensor>:$rope_sin,
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
  let assemblyFormat = [{
    $query_input `,` $kv_input `,` $wq `,` $wk `,` $wv `,` $wo
    (`qkv_bias` `(` $bq^ `,` $bk `,` $bv `)`)?
    (`out_bias` `(` $bo^ `)`)?
    (`mask` `(` $mask^ `)`)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    (`rope` `(` $rope_cos^ `,` $rope_sin `)`)?
    attr-dict `:` functional-type(operands, results)
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
  }];
}

//===----------------------------------------------------------------------===//
// Partial attention (ring attention, flash-decoding): the pieces whose
// results merge
//===----------------------------------------------------------------------===//

def Attn_SdpaPartialOp : Attn_Op<"sdpa_partial", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor,
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
    attributes; no dropout), and with `diagonal(%d)` (an `index`, only with
    `causal = top_left`) the causal diagonal moved to `i + %d` as on
    `attn.mask` (`torch.tril(diagonal=d)`; the shift of a key block
    against a query block, known at run time):

    ```
    lse[b,h,i]   = log Σ_j exp(S'[b,h,i,j])          (-inf when no key is kept)
    O[b,h,i,e]   = Σ_j exp(S'[b,h,i,j] - lse[b,h,i]) · V[b, h/(H/Hkv), j, e]
                                                      (0 when no key is kept)
    ```

    `O` equals `attn.sdpa`'s result, but is always `f32` (it is an
    intermediate to merge, kept at accumulator precision); `lse` is `f32`.
    PyTorch / FlashAttention: `flash_attn_func(..., return_attn_probs=True)`
    returns the same `softmax_lse`.

    **Usage.**

    ```
    %o, %lse = attn.sdpa_partial %q, %k, %v [, %mask] [alibi(%s)] [key_lengths(%len)]
               [diagonal(%d)]
               [ATTRS: scale, causal, softcap, window as on attn.sdpa]
        : (type(%q), type(%k), type(%v) [, ...]) -> (tensor<BxHxTqxDvxf32>, tensor<BxHxTqxf32>)
    ```

    **Verifier.** Every rule of `attn.sdpa` on the operands and attributes;
    `diagonal` needs `causal = #attn.causal<top_left>` and no bounded
    `window`; the results are
    `[B,H,Tq,Dv]` and `[B,H,Tq]`, both `f32`.

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
                       Optional<Index>:$diagonal,
                       OptionalAttr<Attn_F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<Attn_F32Attr>:$softcap,
                       OptionalAttr<Attn_WindowAttr>:$window);
  let results = (outs RankedTensorOf<[F32]>:$result, RankedTensorOf<[F32]>:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)?
    (`alibi` `(` $alibi_slopes^ `)`)? (`key_lengths` `(` $key_lengths^ `)`)?
    (`diagonal` `(` $diagonal^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or 1/sqrt(D).
    std::optional<double> getEffectiveScale();
    /// sdpa's dropout attributes, which this op does not have.
    FloatAttr getDropoutRateAttr() { return {}; }
  }];
}

def Attn_LogSumExpOp : Attn_Op<"logsumexp", [Pure]> {
  let summary = "log Σ exp over the last dim";
  let description = [{
    **Meaning.** For each row (all indices but the last),
    `r[...] = m + log Σ_k exp(x[..., k] - m)` with `m = max_k x[..., k]`:
    `-inf` for a row that is all `-inf` (or empty), `+inf` if any element
    is `+inf`, NaN if any is NaN. PyTorch: `torch.logsumexp(x, dim=-1)`.
    The result is `f32` whatever the input's element type.

    **Usage.** `%r = attn.logsumexp %x : type(%x) -> type(%r)`

    **Verifier.** `input` has rank ≥ 1; the result is `f32` with the
    input's shape minus its last dim.

    **Example.**

    ```mlir
    func.func @lse(%s: tensor<1x12x128x128xf32>) -> tensor<1x12x128xf32> {
      %r = attn.logsumexp %s : tensor<1x12x128x128xf32> -> tensor<1x12x128xf32>
      return %r : tensor<1x12x128xf32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
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
    the last dim); all `f32`.

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
  let arguments = (ins RankedTensorOf<[F32]>:$out1, RankedTensorOf<[F32]>:$lse1,
                       RankedTensorOf<[F32]>:$out2, RankedTensorOf<[F32]>:$lse2);
  let results = (outs RankedTensorOf<[F32]>:$result, RankedTensorOf<[F32]>:$lse);
  let assemblyFormat = [{
    $out1 `,` $lse1 `,` $out2 `,` $lse2 attr-dict `:` type($out1) `,` type($lse1)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
