//===- AttnStrictAttributes.cpp - reject attributes an attn op lacks ------===//
//
// `attn.sdpa %q, %k, %v {is_causal = true}` used to verify and run
// non-causal: an attribute the op does not define was kept as a discardable
// attribute and ignored. Every attn op now rejects one (unless its name has
// a dialect prefix, as discardable attributes should) and says what to
// write instead: the attn spelling of PyTorch/ONNX names, else the closest
// attribute the op has.
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/AttnDialect.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::attn;

/// The attn spelling of a name PyTorch, ONNX or FlashAttention users write;
/// empty when `name` is not one of those.
static std::string knownSpelling(StringRef op, StringRef name) {
  bool hasDropout = op == "attn.sdpa" || op == "attn.mha";
  return llvm::StringSwitch<std::string>(name)
      .Cases({"is_causal", "causal_mask", "is_causal_mask", "causal_lower_right"},
             "causal = #attn.causal<top_left> (PyTorch's is_causal=True), or "
             "causal = #attn.causal<bottom_right> for FlashAttention's "
             "alignment (KV-cache decoding)")
      .Cases({"dropout_p", "dropout", "p", "attn_dropout"},
             hasDropout ? "dropout_rate = <p> : f32 (with dropout_seed = <n> : i64)"
             : op == "attn.dropout" ? "rate = <p> : f32"
                                    : "")
      .Cases({"scale_factor", "softmax_scale", "sm_scale", "qk_scale"},
             "scale = <s> : f32")
      .Cases({"seed", "rng_seed"},
             hasDropout ? "dropout_seed = <n> : i64" : "seed = <n> : i64")
      .Cases({"attn_mask", "attention_mask", "key_padding_mask"},
             "the mask operand (an i1 keep mask or an additive float mask)")
      .Case("enable_gqa",
            "nothing: grouped-query attention follows from the key/value "
            "heads (Hkv < H)")
      .Cases({"num_heads", "nheads", "n_heads"},
             op == "attn.mha" || op == "attn.split_heads"
                 ? "num_heads = <h> : i64"
                 : "nothing: the head count is dim 1 of the query")
      .Default("");
}

LogicalResult mlir::attn::verifyNoUnknownAttributes(Operation *op) {
  StringRef opName = op->getName().getStringRef();
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    StringRef name = attr.getName().strref();
    if (name.contains('.'))
      continue; // a dialect-prefixed discardable attribute
    InFlightDiagnostic diag = op->emitOpError()
                              << "has no attribute '" << name << "'";
    // What the op does take (user-facing names only).
    SmallVector<StringRef> known;
    for (StringAttr a : op->getName().getAttributeNames())
      if (a.strref() != "operandSegmentSizes")
        known.push_back(a.strref());
    std::string spelling = knownSpelling(opName, name);
    if (!spelling.empty()) {
      diag << "; write " << spelling;
      return diag;
    }
    // The closest attribute the op has, for a typo.
    StringRef best;
    unsigned bestDistance = ~0u;
    for (StringRef k : known) {
      unsigned d = name.edit_distance(k, /*AllowReplacements=*/true,
                                      /*MaxEditDistance=*/bestDistance);
      if (d < bestDistance) {
        bestDistance = d;
        best = k;
      }
    }
    if (!best.empty() && bestDistance <= std::max<unsigned>(2, name.size() / 3)) {
      diag << "; did you mean '" << best << "'?";
      return diag;
    }
    diag << "; " << opName;
    if (known.empty()) {
      diag << " takes no attributes";
    } else {
      diag << " takes ";
      llvm::interleaveComma(known, diag, [&](StringRef k) { diag << "'" << k << "'"; });
    }
    diag << " (a dialect-prefixed name, e.g. 'mytool." << name
         << "', is kept as a discardable attribute)";
    return diag;
  }
  return success();
}
