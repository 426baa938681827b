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

// Ops whose result shape follows from their operands: builders infer the
// result type, the verifier checks it, and dynamic dims are reifiable.
class Attn_ShapedOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat(traits, [Pure,
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
    `y[..., o] = sum_i x[..., i] * W[o, i] + b[o]` with the default
    `layout = #attn.layout<out_in>` (nn.Linear's `(d_out, d_in)` weight), or
    `W[i, o]` with `#attn.layout<in_out>`. The bias is optional.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
                       Optional<Attn_FloatTensor>:$bias,
                       DefaultValuedAttr<Attn_WeightLayoutAttr,
                                         "::mlir::attn::WeightLayout::out_in">:$layout);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"::mlir::attn::WeightLayout",
                        "::mlir::attn::WeightLayout::out_in">:$layout)>
  ];
}

def Attn_SplitHeadsOp : Attn_ShapedOp<"split_heads"> {
  let summary = "[B,T,h·D] → [B,h,T,D]: view(B,T,h,D).transpose(1,2)";
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$num_heads);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "int64_t":$numHeads)>];
  let hasFolder = 1;
}

def Attn_MergeHeadsOp : Attn_ShapedOp<"merge_heads"> {
  let summary = "[B,h,T,D] → [B,T,h·D]: transpose(1,2).reshape(B,T,h·D)";
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let builders = [OpBuilder<(ins "::mlir::Value":$input)>];
  let hasFolder = 1;
}

def Attn_ScoresOp : Attn_ShapedOp<"scores"> {
  let summary = "attention scores Q·Kᵀ";
  let description = [{
    `S[b,h,i,j] = sum_d Q[b,h,i,d] * K[b, h / (H/Hkv), j, d]`.
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key attr-dict `:` type($query) `,` type($key) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key)>];
}

def Attn_ScaleOp : Attn_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "multiply every element by a constant";
  let arguments = (ins Attn_FloatTensor:$input, F32Attr:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Attn_MaskOp : Attn_Op<"mask", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "causal and/or operand masking of scores";
  let description = [{
    With `causal = #attn.causal<top_left>` key `j` of row `i` becomes `-inf`
    when `j > i`; with `bottom_right` when `j > i + Tk - Tq`. With an `i1`
    mask operand (broadcastable to `[B,H,Tq,Tk]`) elements where the mask
    is false become `-inf`; a float mask is added.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Optional<Attn_MaskTensor>:$mask,
                       OptionalAttr<Attn_CausalKindAttr>:$causal);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input (`,` $mask^)? attr-dict `:` type($input) (`,` type($mask)^)?";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Attn_SoftmaxOp : Attn_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "numerically stable softmax over the last dim";
  let description = [{
    `P[..., j] = exp(x[..., j] - m) / sum_k exp(x[..., k] - m)` with `m` the
    row max; a row that is entirely `-inf` gives zeros.
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Attn_DropoutOp : Attn_Op<"dropout", [Pure, SameOperandsAndResultType]> {
  let summary = "dropout on attention weights, counter-based RNG";
  let description = [{
    Each element is kept with probability `1 - rate` and scaled by
    `1/(1 - rate)`; which elements are kept is a pure function of `seed`
    and the element's flat index. `rate = 0` folds away.
  }];
  let arguments = (ins Attn_FloatTensor:$input, F32Attr:$rate,
                       DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Attn_WeightedSumOp : Attn_ShapedOp<"weighted_sum"> {
  let summary = "attention output P·V";
  let description = [{
    `O[b,h,i,e] = sum_j P[b,h,i,j] * V[b, h / (H/Hkv), j, e]`.
  }];
  let arguments = (ins Attn_FloatTensor:$probs, Attn_FloatTensor:$value);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $probs `,` $value attr-dict `:` type($probs) `,` type($value) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Value":$probs, "::mlir::Value":$value)>];
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_ShapedOp<"sdpa"> {
  let summary = "scaled dot-product attention softmax(mask(scale·Q·Kᵀ))·V";
  let description = [{
    torch.nn.functional.scaled_dot_product_attention. `scale` defaults to
    `1/sqrt(D)`; `causal` is optional; the optional fourth operand is an
    `i1` keep-mask or a float additive mask broadcastable to `[B,H,Tq,Tk]`;
    `dropout_rate`/`dropout_seed` apply dropout to the attention weights.
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Optional<Attn_MaskTensor>:$mask,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)
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
    The seeds' `MultiHeadAttention.forward` and nn.MultiheadAttention:
    `Q = xq·Wqᵀ + bq`, `K = xkv·Wkᵀ + bk`, `V = xkv·Wvᵀ + bv`, split into
    `num_heads` query heads and `num_kv_heads` key/value heads, `sdpa`,
    merge heads, `out = O·Woᵀ + bo`.
  }];
  let arguments = (ins Attn_FloatTensor:$query_input, Attn_FloatTensor:$kv_input,
                       Attn_FloatTensor:$wq, Attn_FloatTensor:$wk,
                       Attn_FloatTensor:$wv, Attn_FloatTensor:$wo,
                       Optional<Attn_FloatTensor>:$bq,
                       Optional<Attn_FloatTensor>:$bk,
                       Optional<Attn_FloatTensor>:$bv,
                       Optional<Attn_FloatTensor>:$bo,
                       Optional<Attn_MaskTensor>:$mask,
                       I64Attr:$num_heads,
                       OptionalAttr<I64Attr>:$num_kv_heads,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Attn_CausalKindAttr>:$causal,
                       OptionalAttr<F32Attr>:$dropout_rate,
                       OptionalAttr<I64Attr>:$dropout_seed,
                       DefaultValuedAttr<Attn_WeightLayoutAttr,
                                         "::mlir::attn::WeightLayout::out_in">:$layout);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query_input `,` $kv_input `,` $wq `,` $wk `,` $wv `,` $wo
    (`qkv_bias` `(` $bq^ `,` $bk `,` $bv `)`)?
    (`out_bias` `(` $bo^ `)`)?
    (`mask` `(` $mask^ `)`)?
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

#endif // ATTN_OPS_TD
