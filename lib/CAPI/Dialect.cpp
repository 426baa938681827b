//===- Dialect.cpp - C API for the attn dialect ---------------------------===//
#include "attn-c/Dialect.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <cstring>

using namespace mlir;
using namespace mlir::attn;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Attn, attn, mlir::attn::AttnDialect)

/// The integer a C caller passed for an enum. C lets any int through an
/// enum parameter; in C++ loading an enum object outside its range is
/// undefined (UBSan's invalid-enum-load), so the bytes are read as an int.
template <typename E>
static int rawEnum(const E &e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// #attn.causal for a raw AttnCausal value; null for none or out of range.
static CausalKindAttr causalAttr(MLIRContext *c, int kind) {
  c->getOrLoadDialect<AttnDialect>();
  switch (kind) {
  case AttnCausalTopLeft:
    return CausalKindAttr::get(c, CausalKind::top_left);
  case AttnCausalBottomRight:
    return CausalKindAttr::get(c, CausalKind::bottom_right);
  default:
    return {};
  }
}

/// #attn.layout for a raw AttnWeightLayout value; null if out of range.
static WeightLayoutAttr layoutAttr(MLIRContext *c, int layout) {
  c->getOrLoadDialect<AttnDialect>();
  switch (layout) {
  case AttnWeightLayoutOutIn:
    return WeightLayoutAttr::get(c, WeightLayout::out_in);
  case AttnWeightLayoutInOut:
    return WeightLayoutAttr::get(c, WeightLayout::in_out);
  default:
    return {};
  }
}

MlirAttribute attnCausalAttrGet(MlirContext ctx, AttnCausal kind) {
  return wrap(causalAttr(unwrap(ctx), rawEnum(kind)));
}

bool attnAttributeIsACausal(MlirAttribute attr) {
  return isa_and_nonnull<CausalKindAttr>(unwrap(attr));
}

AttnCausal attnCausalAttrGetValue(MlirAttribute attr) {
  auto a = dyn_cast_or_null<CausalKindAttr>(unwrap(attr));
  if (!a)
    return AttnCausalNone;
  return a.getValue() == CausalKind::top_left ? AttnCausalTopLeft
                                              : AttnCausalBottomRight;
}

MlirAttribute attnLayoutAttrGet(MlirContext ctx, AttnWeightLayout layout) {
  return wrap(layoutAttr(unwrap(ctx), rawEnum(layout)));
}

bool attnAttributeIsALayout(MlirAttribute attr) {
  return isa_and_nonnull<WeightLayoutAttr>(unwrap(attr));
}

AttnWeightLayout attnLayoutAttrGetValue(MlirAttribute attr) {
  auto a = dyn_cast_or_null<WeightLayoutAttr>(unwrap(attr));
  return a && a.getValue() == WeightLayout::in_out ? AttnWeightLayoutInOut
                                                   : AttnWeightLayoutOutIn;
}

//===----------------------------------------------------------------------===//
// Op builders
//===----------------------------------------------------------------------===//

/// Sets the attributes shared by sdpa and mha; false (after a diagnostic)
/// for an enum value outside the C enum.
template <typename OpTy>
static bool setCommonAttrs(OpTy op, float scale, const AttnCausal &causal,
                           float dropoutRate, int64_t dropoutSeed) {
  Builder b(op.getContext());
  if (scale > 0)
    op.setScaleAttr(b.getF32FloatAttr(scale));
  if (rawEnum(causal) != AttnCausalNone) {
    CausalKindAttr attr = causalAttr(op.getContext(), rawEnum(causal));
    if (!attr) {
      op.emitOpError() << "unknown AttnCausal value " << rawEnum(causal);
      return false;
    }
    op.setCausalAttr(attr);
  }
  if (dropoutRate != 0) {
    op.setDropoutRateAttr(b.getF32FloatAttr(dropoutRate));
    op.setDropoutSeedAttr(b.getI64IntegerAttr(dropoutSeed));
  }
  return true;
}

/// False (after a diagnostic naming it) unless each given operand is a
/// ranked tensor: the ops infer their result type from those operands' dims
/// (InferTypeOpInterface), so nothing else can be built.
static bool requireRankedTensors(Location l, StringRef fn,
                                 ArrayRef<std::pair<StringRef, MlirValue>> operands) {
  for (auto [name, v] : operands) {
    if (mlirValueIsNull(v))
      continue;
    Type t = unwrap(v).getType();
    if (!isa<RankedTensorType>(t)) {
      emitError(l) << fn << ": operand '" << name << "' must be a ranked tensor, got "
                   << t;
      return false;
    }
  }
  return true;
}

/// Verifies; an invalid op is erased and null returned.
static MlirOperation finish(Operation *op, bool ok) {
  if (!ok || failed(verify(op))) {
    op->erase();
    return MlirOperation{nullptr};
  }
  return wrap(op);
}

static Value valueOrNull(MlirValue v) {
  return mlirValueIsNull(v) ? Value() : unwrap(v);
}

AttnSdpaOptions attnSdpaOptionsGetDefault(void) {
  return AttnSdpaOptions{0.0f, AttnCausalNone, 0.0f, 0};
}

MlirOperation attnSdpaOpCreate(MlirLocation loc, MlirValue query, MlirValue key,
                               MlirValue value, MlirValue mask,
                               AttnSdpaOptions options) {
  Location l = unwrap(loc);
  l.getContext()->getOrLoadDialect<AttnDialect>();
  if (mlirValueIsNull(query) || mlirValueIsNull(key) || mlirValueIsNull(value)) {
    emitError(l) << "attnSdpaOpCreate: query, key and value must not be null";
    return MlirOperation{nullptr};
  }
  if (!requireRankedTensors(l, "attnSdpaOpCreate",
                            {{"query", query}, {"key", key}, {"value", value}, {"mask", mask}}))
    return MlirOperation{nullptr};
  OpBuilder b(l.getContext());
  auto op = SdpaOp::create(b, l, unwrap(query), unwrap(key), unwrap(value),
                           valueOrNull(mask));
  bool ok = setCommonAttrs(op, options.scale, options.causal,
                           options.dropoutRate, options.dropoutSeed);
  return finish(op, ok);
}

AttnMhaOptions attnMhaOptionsGetDefault(int64_t numHeads) {
  return AttnMhaOptions{numHeads, 0, AttnWeightLayoutOutIn, 0.0f,
                        AttnCausalNone, 0.0f, 0};
}

MlirOperation attnMhaOpCreate(MlirLocation loc, MlirValue queryInput,
                              MlirValue kvInput, MlirValue wq, MlirValue wk,
                              MlirValue wv, MlirValue wo, MlirValue bq,
                              MlirValue bk, MlirValue bv, MlirValue bo,
                              MlirValue mask, AttnMhaOptions options) {
  Location l = unwrap(loc);
  MLIRContext *ctx = l.getContext();
  ctx->getOrLoadDialect<AttnDialect>();
  for (MlirValue v : {queryInput, kvInput, wq, wk, wv, wo})
    if (mlirValueIsNull(v)) {
      emitError(l) << "attnMhaOpCreate: the inputs and the four weights must "
                      "not be null";
      return MlirOperation{nullptr};
    }
  int nullBiases = mlirValueIsNull(bq) + mlirValueIsNull(bk) + mlirValueIsNull(bv);
  if (nullBiases != 0 && nullBiases != 3) {
    emitError(l) << "attnMhaOpCreate: bq, bk and bv must be given together";
    return MlirOperation{nullptr};
  }
  WeightLayoutAttr layout = layoutAttr(ctx, rawEnum(options.layout));
  if (!layout) {
    emitError(l) << "attnMhaOpCreate: unknown AttnWeightLayout value "
                 << rawEnum(options.layout);
    return MlirOperation{nullptr};
  }
  if (!requireRankedTensors(l, "attnMhaOpCreate",
                            {{"query_input", queryInput}, {"kv_input", kvInput},
                             {"wq", wq}, {"wk", wk}, {"wv", wv}, {"wo", wo},
                             {"bq", bq}, {"bk", bk}, {"bv", bv}, {"bo", bo},
                             {"mask", mask}}))
    return MlirOperation{nullptr};
  OpBuilder b(ctx);
  // The generic builder (result type inferred): operands in ODS order, the
  // segment sizes follow from which optional operands are present.
  OperationState state(l, MhaOp::getOperationName());
  MhaOp::build(b, state, unwrap(queryInput), unwrap(kvInput),
               unwrap(wq), unwrap(wk), unwrap(wv), unwrap(wo), valueOrNull(bq),
               valueOrNull(bk), valueOrNull(bv), valueOrNull(bo),
               valueOrNull(mask), /*alibi_slopes=*/nullptr,
               /*key_lengths=*/nullptr, /*rope_cos=*/nullptr, /*rope_sin=*/nullptr,
               b.getI64IntegerAttr(options.numHeads),
               options.numKvHeads > 0 ? b.getI64IntegerAttr(options.numKvHeads)
                                      : IntegerAttr(),
               /*scale=*/nullptr, /*causal=*/nullptr, /*softcap=*/nullptr,
               /*window=*/nullptr, /*rope_style=*/nullptr, /*dropout_rate=*/nullptr,
               /*dropout_seed=*/nullptr, layout);
  auto op = cast<MhaOp>(Operation::create(state));
  bool ok = setCommonAttrs(op, options.scale, options.causal,
                           options.dropoutRate, options.dropoutSeed);
  return finish(op, ok);
}
