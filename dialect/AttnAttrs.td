//===- AttnAttrs.td - attn attributes and enums ------------*- tablegen -*-===//
#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "AttnDialect.td"
include "mlir/IR/EnumAttr.td"

// Which keys a query row may see under a causal mask.
def Attn_CausalKind : I32EnumAttr<"CausalKind", "causal mask alignment", [
    // PyTorch `is_causal`, the seeds' triu(diagonal=1): key j masked when j > i.
    I32EnumAttrCase<"top_left", 0>,
    // FlashAttention >= 2.1: key j masked when j > i + Tk - Tq.
    I32EnumAttrCase<"bottom_right", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_CausalKindAttr : EnumAttr<Attn_Dialect, Attn_CausalKind, "causal"> {
  let summary = "causal mask alignment, written #attn.causal<top_left> "
                "(PyTorch's is_causal=True) or #attn.causal<bottom_right>";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.causal<top_left>` / `#attn.causal<bottom_right>`: the causal
    mask kind of `attn.mask`, `attn.sdpa` and `attn.mha`. For score row `i`
    (`0 ≤ i < Tq`) and key `j` (`0 ≤ j < Tk`):

    - `top_left`: key `j` is masked (set to `-inf`) when `j > i`. This is
      PyTorch's `is_causal=True`, i.e. `torch.ones(Tq,Tk).tril(0)` as the
      keep set, the seeds' `triu(diagonal=1)` as the masked set.
    - `bottom_right`: key `j` is masked when `j > i + Tk - Tq`. This is
      FlashAttention ≥ 2.1 and `torch.nn.attention.bias.causal_lower_right`;
      it is what KV-cache decoding needs (`Tq < Tk`: the last query sees
      all keys). When `Tq == Tk` both kinds are the same mask. With
      `Tq > Tk`, `bottom_right` masks rows `i < Tq - Tk` entirely (they
      produce zeros, see `attn.softmax`).

    An op without a `causal` attribute applies no causal mask.
  }];
}

// How a projection weight is stored.
def Attn_WeightLayout : I32EnumAttr<"WeightLayout", "projection weight layout", [
    // nn.Linear: weight is [Out, In], y = x * W^T.
    I32EnumAttrCase<"out_in", 0>,
    // weight is [In, Out], y = x * W.
    I32EnumAttrCase<"in_out", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_WeightLayoutAttr : EnumAttr<Attn_Dialect, Attn_WeightLayout, "layout"> {
  let summary = "projection weight layout, written #attn.layout<out_in> "
                "(nn.Linear's [Out,In], the default) or #attn.layout<in_out>";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.layout<out_in>` / `#attn.layout<in_out>`: how a projection
    weight of `attn.project` or `attn.mha` is stored. `out_in` (the
    **default** of both ops) is `nn.Linear`'s `(d_out, d_in)` weight,
    `y = x·Wᵀ`; `in_out` is `(d_in, d_out)`, `y = x·W`.
  }];
}

// An f32 attribute whose constraint message shows how to write one.
def Attn_F32Attr : FloatAttrBase<F32, "32-bit float attribute, written with "
    "its type (e.g. `0.125 : f32`; a bare `0.125` is an f64)">;

#endif // ATTN_ATTRS_TD
