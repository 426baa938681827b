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
  let assemblyFormat = "`<` $value `>`";
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
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_ATTRS_TD
