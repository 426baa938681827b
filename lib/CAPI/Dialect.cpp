//===- Dialect.cpp - C API for the attn dialect ---------------------------===//
#include "attn-c/Dialect.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <cstring>
#include <optional>

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

/// The C enum value of a causal kind.
static AttnCausal toAttnCausal(CausalKind kind) {
  return kind == CausalKind::top_left ? AttnCausalTopLeft : AttnCausalBottomRight;
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

/// #attn.rope for a raw AttnRopeStyle value; null for none or out of range.
static RopeStyleAttr ropeAttr(MLIRContext *c, int style) {
  c->getOrLoadDialect<AttnDialect>();
  switch (style) {
  case AttnRopeStyleRotateHalf:
    return RopeStyleAttr::get(c, RopeStyle::rotate_half);
  case AttnRopeStyleInterleaved:
    return RopeStyleAttr::get(c, RopeStyle::interleaved);
  default:
    return {};
  }
}

/// #attn.window for C bounds (-1: unbounded) and a raw AttnCausal align
/// (AttnCausalNone: not given). Null after a diagnostic from `emitError`
/// for an align outside the enum or a bound the attribute rejects (its own
/// verifier's message: any bound below -1 reaches it as written).
static WindowAttr windowAttr(MLIRContext *c, int64_t left, int64_t right,
                             int align,
                             function_ref<InFlightDiagnostic()> emitError) {
  c->getOrLoadDialect<AttnDialect>();
  std::optional<CausalKind> a;
  if (align != AttnCausalNone) {
    CausalKindAttr kind = causalAttr(c, align);
    if (!kind) {
      emitError() << "unknown AttnCausal value " << align << " for the window align";
      return {};
    }
    a = kind.getValue();
  }
  auto bound = [](int64_t v) {
    return v == -1 ? std::nullopt : std::optional<int64_t>(v);
  };
  return WindowAttr::getChecked(emitError, c, bound(left), bound(right), a);
}

MlirAttribute attnCausalAttrGet(MlirContext ctx, AttnCausal kind) {
  return wrap(causalAttr(unwrap(ctx), rawEnum(kind)));
}

bool attnAttributeIsACausal(MlirAttribute attr) {
  return isa_and_nonnull<CausalKindAttr>(unwrap(attr));
}

AttnCausal attnCausalAttrGetValue(MlirAttribute attr) {
  auto a = dyn_cast_or_null<CausalKindAttr>(unwrap(attr));
  return a ? toAttnCausal(a.getValue()) : AttnCausalNone;
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

MlirAttribute attnWindowAttrGet(MlirContext ctx, int64_t left, int64_t right,
                                AttnCausal align) {
  MLIRContext *c = unwrap(ctx);
  return wrap(windowAttr(c, left, right, rawEnum(align), [c] {
    return emitError(UnknownLoc::get(c)) << "attnWindowAttrGet: ";
  }));
}

bool attnAttributeIsAWindow(MlirAttribute attr) {
  return isa_and_nonnull<WindowAttr>(unwrap(attr));
}

int64_t attnWindowAttrGetLeft(MlirAttribute attr) {
  auto a = dyn_cast_or_null<WindowAttr>(unwrap(attr));
  return a && a.getLeft() ? *a.getLeft() : -1;
}

int64_t attnWindowAttrGetRight(MlirAttribute attr) {
  auto a = dyn_cast_or_null<WindowAttr>(unwrap(attr));
  return a && a.getRight() ? *a.getRight() : -1;
}

AttnCausal attnWindowAttrGetAlign(MlirAttribute attr) {
  auto a = dyn_cast_or_null<WindowAttr>(unwrap(attr));
  return a && a.getAlign() ? toAttnCausal(*a.getAlign()) : AttnCausalNone;
}

MlirAttribute attnRopeAttrGet(MlirContext ctx, AttnRopeStyle style) {
  return wrap(ropeAttr(unwrap(ctx), rawEnum(style)));
}

bool attnAttributeIsARope(MlirAttribute attr) {
  return isa_and_nonnull<RopeStyleAttr>(unwrap(attr));
}

AttnRopeStyle attnRopeAttrGetValue(MlirAttribute attr) {
  auto a = dyn_cast_or_null<RopeStyleAttr>(unwrap(attr));
  if (!a)
    return AttnRopeStyleNone;
  return a.getValue() == RopeStyle::rotate_half ? AttnRopeStyleRotateHalf
                                                : AttnRopeStyleInterleaved;
}

//===----------------------------------------------------------------------===//
// Op builders
//===----------------------------------------------------------------------===//

/// Sets the attributes shared by sdpa and mha from AttnSdpaOptions or
/// AttnMhaOptions (same field names); false (after a diagnostic) for an
/// enum value outside the C enum or window bounds the attribute rejects.
/// Values that are merely out of the op's range (a NaN scale or softcap, a
/// dropout rate of 2) are set as given: the verifier names them.
template <typename OpTy, typename Options>
static bool setCommonAttrs(OpTy op, const Options &o) {
  Builder b(op.getContext());
  // `x <= 0` is the documented "not given"; a NaN is given (and rejected).
  if (!(o.scale <= 0))
    op.setScaleAttr(b.getF32FloatAttr(o.scale));
  if (rawEnum(o.causal) != AttnCausalNone) {
    CausalKindAttr attr = causalAttr(op.getContext(), rawEnum(o.causal));
    if (!attr) {
      op.emitOpError() << "unknown AttnCausal value " << rawEnum(o.causal);
      return false;
    }
    op.setCausalAttr(attr);
  }
  if (!(o.softcap <= 0))
    op.setSoftcapAttr(b.getF32FloatAttr(o.softcap));
  if (o.windowLeft != -1 || o.windowRight != -1 ||
      rawEnum(o.windowAlign) != AttnCausalNone) {
    WindowAttr window =
        windowAttr(op.getContext(), o.windowLeft, o.windowRight,
                   rawEnum(o.windowAlign), [&] { return op.emitOpError(); });
    if (!window)
      return false;
    op.setWindowAttr(window);
  }
  if (o.dropoutRate != 0) {
    op.setDropoutRateAttr(b.getF32FloatAttr(o.dropoutRate));
    op.setDropoutSeedAttr(b.getI64IntegerAttr(o.dropoutSeed));
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

/// "Not given" for the fields AttnSdpaOptions and AttnMhaOptions share.
template <typename Options>
static void setCommonDefaults(Options &o) {
  o.scale = 0.0f;
  o.causal = AttnCausalNone;
  o.dropoutRate = 0.0f;
  o.dropoutSeed = 0;
  o.softcap = 0.0f;
  o.windowLeft = -1;
  o.windowRight = -1;
  o.windowAlign = AttnCausalNone;
}

AttnSdpaOptions attnSdpaOptionsGetDefault(void) {
  AttnSdpaOptions o{};
  setCommonDefaults(o);
  return o;
}

static MlirOperation createSdpa(StringRef fn, MlirLocation loc, MlirValue query,
                                MlirValue key, MlirValue value, MlirValue mask,
                                MlirValue alibiSlopes, MlirValue keyLengths,
                                const AttnSdpaOptions &options) {
  Location l = unwrap(loc);
  l.getContext()->getOrLoadDialect<AttnDialect>();
  if (mlirValueIsNull(query) || mlirValueIsNull(key) || mlirValueIsNull(value)) {
    emitError(l) << fn << ": query, key and value must not be null";
    return MlirOperation{nullptr};
  }
  if (!requireRankedTensors(l, fn,
                            {{"query", query}, {"key", key}, {"value", value},
                             {"mask", mask}, {"alibi_slopes", alibiSlopes},
                             {"key_lengths", keyLengths}}))
    return MlirOperation{nullptr};
  OpBuilder b(l.getContext());
  // The generic builder (result type inferred): the segment sizes follow
  // from which optional operands are present.
  OperationState state(l, SdpaOp::getOperationName());
  SdpaOp::build(b, state, unwrap(query), unwrap(key), unwrap(value),
                valueOrNull(mask), valueOrNull(alibiSlopes),
                valueOrNull(keyLengths), /*sinks=*/Value(), /*runtime_seed=*/Value(),
                /*captures=*/ValueRange(),
                /*scale=*/nullptr,
                /*causal=*/nullptr, /*softcap=*/nullptr, /*window=*/nullptr,
                /*dropout_rate=*/nullptr, /*dropout_seed=*/nullptr);
  auto op = cast<SdpaOp>(Operation::create(state));
  return finish(op, setCommonAttrs(op, options));
}

MlirOperation attnSdpaOpCreate(MlirLocation loc, MlirValue query, MlirValue key,
                               MlirValue value, MlirValue mask,
                               AttnSdpaOptions options) {
  return createSdpa("attnSdpaOpCreate", loc, query, key, value, mask,
                    MlirValue{nullptr}, MlirValue{nullptr}, options);
}

MlirOperation attnSdpaOpCreateWithFeatures(MlirLocation loc, MlirValue query,
                                           MlirValue key, MlirValue value,
                                           MlirValue mask, MlirValue alibiSlopes,
                                           MlirValue keyLengths,
                                           AttnSdpaOptions options) {
  return createSdpa("attnSdpaOpCreateWithFeatures", loc, query, key, value, mask,
                    alibiSlopes, keyLengths, options);
}

AttnMhaOptions attnMhaOptionsGetDefault(int64_t numHeads) {
  AttnMhaOptions o{};
  o.numHeads = numHeads;
  o.numKvHeads = 0;
  o.layout = AttnWeightLayoutOutIn;
  setCommonDefaults(o);
  o.ropeStyle = AttnRopeStyleNone;
  return o;
}

static MlirOperation createMha(StringRef fn, MlirLocation loc, MlirValue queryInput,
                               MlirValue kvInput, MlirValue wq, MlirValue wk,
                               MlirValue wv, MlirValue wo, MlirValue bq,
                               MlirValue bk, MlirValue bv, MlirValue bo,
                               MlirValue mask, MlirValue alibiSlopes,
                               MlirValue keyLengths, MlirValue ropeCos,
                               MlirValue ropeSin, const AttnMhaOptions &options) {
  Location l = unwrap(loc);
  MLIRContext *ctx = l.getContext();
  ctx->getOrLoadDialect<AttnDialect>();
  for (MlirValue v : {queryInput, kvInput, wq, wk, wv, wo})
    if (mlirValueIsNull(v)) {
      emitError(l) << fn << ": the inputs and the four weights must not be null";
      return MlirOperation{nullptr};
    }
  int nullBiases = mlirValueIsNull(bq) + mlirValueIsNull(bk) + mlirValueIsNull(bv);
  if (nullBiases != 0 && nullBiases != 3) {
    emitError(l) << fn << ": bq, bk and bv must be given together";
    return MlirOperation{nullptr};
  }
  if (mlirValueIsNull(ropeCos) != mlirValueIsNull(ropeSin)) {
    emitError(l) << fn << ": ropeCos and ropeSin must be given together";
    return MlirOperation{nullptr};
  }
  WeightLayoutAttr layout = layoutAttr(ctx, rawEnum(options.layout));
  if (!layout) {
    emitError(l) << fn << ": unknown AttnWeightLayout value "
                 << rawEnum(options.layout);
    return MlirOperation{nullptr};
  }
  RopeStyleAttr ropeStyle;
  if (rawEnum(options.ropeStyle) != AttnRopeStyleNone) {
    ropeStyle = ropeAttr(ctx, rawEnum(options.ropeStyle));
    if (!ropeStyle) {
      emitError(l) << fn << ": unknown AttnRopeStyle value "
                   << rawEnum(options.ropeStyle);
      return MlirOperation{nullptr};
    }
  }
  if (!requireRankedTensors(l, fn,
                            {{"query_input", queryInput}, {"kv_input", kvInput},
                             {"wq", wq}, {"wk", wk}, {"wv", wv}, {"wo", wo},
                             {"bq", bq}, {"bk", bk}, {"bv", bv}, {"bo", bo},
                             {"mask", mask}, {"alibi_slopes", alibiSlopes},
                             {"key_lengths", keyLengths}, {"rope_cos", ropeCos},
                             {"rope_sin", ropeSin}}))
    return MlirOperation{nullptr};
  OpBuilder b(ctx);
  // The generic builder (result type inferred): operands in ODS order, the
  // segment sizes follow from which optional operands are present.
  OperationState state(l, MhaOp::getOperationName());
  MhaOp::build(b, state, unwrap(queryInput), unwrap(kvInput),
               unwrap(wq), unwrap(wk), unwrap(wv), unwrap(wo), valueOrNull(bq),
               valueOrNull(bk), valueOrNull(bv), valueOrNull(bo),
               valueOrNull(mask), valueOrNull(alibiSlopes),
               valueOrNull(keyLengths), /*sinks=*/Value(), valueOrNull(ropeCos),
               valueOrNull(ropeSin), /*runtime_seed=*/Value(), /*captures=*/ValueRange(),
               b.getI64IntegerAttr(options.numHeads),
               options.numKvHeads > 0 ? b.getI64IntegerAttr(options.numKvHeads)
                                      : IntegerAttr(),
               /*scale=*/nullptr, /*causal=*/nullptr, /*softcap=*/nullptr,
               /*window=*/nullptr, ropeStyle, /*dropout_rate=*/nullptr,
               /*dropout_seed=*/nullptr, layout);
  auto op = cast<MhaOp>(Operation::create(state));
  return finish(op, setCommonAttrs(op, options));
}

MlirOperation attnMhaOpCreate(MlirLocation loc, MlirValue queryInput,
                              MlirValue kvInput, MlirValue wq, MlirValue wk,
                              MlirValue wv, MlirValue wo, MlirValue bq,
                              MlirValue bk, MlirValue bv, MlirValue bo,
                              MlirValue mask, AttnMhaOptions options) {
  MlirValue none{nullptr};
  return createMha("attnMhaOpCreate", loc, queryInput, kvInput, wq, wk, wv, wo,
                   bq, bk, bv, bo, mask, none, none, none, none, options);
}

MlirOperation attnMhaOpCreateWithFeatures(
    MlirLocation loc, MlirValue queryInput, MlirValue kvInput, MlirValue wq,
    MlirValue wk, MlirValue wv, MlirValue wo, MlirValue bq, MlirValue bk,
    MlirValue bv, MlirValue bo, MlirValue mask, MlirValue alibiSlopes,
    MlirValue keyLengths, MlirValue ropeCos, MlirValue ropeSin,
    AttnMhaOptions options) {
  return createMha("attnMhaOpCreateWithFeatures", loc, queryInput, kvInput, wq,
                   wk, wv, wo, bq, bk, bv, bo, mask, alibiSlopes, keyLengths,
                   ropeCos, ropeSin, options);
}

bool attnOpSetRuntimeSeed(MlirOperation op, MlirValue seed) {
  Operation *o = unwrap(op);
  auto seeded = dyn_cast<RuntimeSeedOpInterface>(o);
  if (!seeded) {
    o->emitError() << "attnOpSetRuntimeSeed: '" << o->getName()
                   << "' draws no dropout mask (attn.dropout, attn.sdpa, attn.mha, "
                      "attn.sdpa_partial or attn.sdpa_grad)";
    return false;
  }
  StringRef attrName = seeded.getSeedAttributeName();
  Value old = seeded.getRuntimeSeed();
  Attribute oldAttr = o->getAttr(attrName);
  seeded.getRuntimeSeedMutable().assign(mlirValueIsNull(seed) ? ValueRange()
                                                              : ValueRange(unwrap(seed)));
  if (!mlirValueIsNull(seed))
    o->removeAttr(attrName);
  if (succeeded(verify(o)))
    return true;
  seeded.getRuntimeSeedMutable().assign(old ? ValueRange(old) : ValueRange());
  if (oldAttr)
    o->setAttr(attrName, oldAttr);
  return false;
}

//===----------------------------------------------------------------------===//
// Score and mask functions
//===----------------------------------------------------------------------===//

namespace {
/// An attn.sdpa or attn.sdpa_partial seen through what the builders below
/// need: its captures and its two function regions.
struct FunctionHost {
  Operation *op = nullptr;
  Region *scoreMod = nullptr, *maskMod = nullptr;
  std::optional<MutableOperandRange> captures;
};
} // namespace

static std::optional<FunctionHost> functionHost(Operation *o, StringRef fn) {
  FunctionHost h;
  h.op = o;
  if (auto s = dyn_cast<SdpaOp>(o)) {
    h.scoreMod = &s.getScoreMod();
    h.maskMod = &s.getMaskMod();
    h.captures.emplace(s.getCapturesMutable());
  } else if (auto p = dyn_cast<SdpaPartialOp>(o)) {
    h.scoreMod = &p.getScoreMod();
    h.maskMod = &p.getMaskMod();
    h.captures.emplace(p.getCapturesMutable());
  } else {
    o->emitError() << fn << ": '" << o->getName()
                   << "' takes no score or mask function (attn.sdpa or attn.sdpa_partial)";
    return std::nullopt;
  }
  return h;
}

bool attnSdpaOpSetCaptures(MlirOperation op, intptr_t nCaptures, MlirValue const *captures) {
  const char *fn = "attnSdpaOpSetCaptures";
  std::optional<FunctionHost> h = functionHost(unwrap(op), fn);
  if (!h)
    return false;
  if (!h->scoreMod->empty() || !h->maskMod->empty()) {
    h->op->emitError() << fn
                       << ": set the captures before adding a score or mask function (each "
                          "function's block takes one argument per capture)";
    return false;
  }
  SmallVector<Value> values;
  for (intptr_t i = 0; i < nCaptures; ++i) {
    if (mlirValueIsNull(captures[i])) {
      h->op->emitError() << fn << ": capture #" << i << " is null";
      return false;
    }
    Value v = unwrap(captures[i]);
    if (!isa<RankedTensorType>(v.getType())) {
      h->op->emitError() << fn << ": capture #" << i << " must be a ranked tensor, got "
                         << v.getType();
      return false;
    }
    values.push_back(v);
  }
  h->captures->assign(values);
  return true;
}

/// The empty entry block of a new score (kind Score) or mask function of
/// `op`: (score f32,) b, h, q, kv (index), one argument per capture.
static MlirBlock addFunction(MlirOperation op, ModKind kind, const char *fn) {
  std::optional<FunctionHost> h = functionHost(unwrap(op), fn);
  if (!h)
    return MlirBlock{nullptr};
  Region *region = kind == ModKind::Score ? h->scoreMod : h->maskMod;
  if (!region->empty()) {
    h->op->emitError() << fn << ": the op already has a "
                       << (kind == ModKind::Score ? "score" : "mask") << " function";
    return MlirBlock{nullptr};
  }
  Location loc = h->op->getLoc();
  Builder b(h->op->getContext());
  auto *block = new Block();
  region->push_back(block);
  if (kind == ModKind::Score)
    block->addArgument(b.getF32Type(), loc);
  for (int i = 0; i < 4; ++i)
    block->addArgument(b.getIndexType(), loc);
  for (Value c : h->captures->getAsOperandRange())
    block->addArgument(c.getType(), loc);
  return wrap(block);
}

MlirBlock attnSdpaOpAddScoreFunction(MlirOperation op) {
  return addFunction(op, ModKind::Score, "attnSdpaOpAddScoreFunction");
}

MlirBlock attnSdpaOpAddMaskFunction(MlirOperation op) {
  return addFunction(op, ModKind::Mask, "attnSdpaOpAddMaskFunction");
}

MlirOperation attnYieldOpCreate(MlirLocation loc, MlirValue value) {
  Location l = unwrap(loc);
  if (mlirValueIsNull(value)) {
    emitError(l) << "attnYieldOpCreate: the value must not be null";
    return MlirOperation{nullptr};
  }
  l.getContext()->getOrLoadDialect<AttnDialect>();
  OpBuilder b(l.getContext());
  return wrap(YieldOp::create(b, l, unwrap(value)).getOperation());
}

bool attnOpSetSinks(MlirOperation op, MlirValue sinks) {
  Operation *o = unwrap(op);
  std::optional<MutableOperandRange> range;
  if (auto s = dyn_cast<SdpaOp>(o))
    range.emplace(s.getSinksMutable());
  else if (auto p = dyn_cast<SdpaPartialOp>(o))
    range.emplace(p.getSinksMutable());
  else if (auto m = dyn_cast<MhaOp>(o))
    range.emplace(m.getSinksMutable());
  else {
    o->emitError() << "attnOpSetSinks: '" << o->getName()
                   << "' takes no attention sinks (attn.sdpa, attn.sdpa_partial or attn.mha)";
    return false;
  }
  SmallVector<Value> old(range->getAsOperandRange());
  range->assign(mlirValueIsNull(sinks) ? ValueRange() : ValueRange(unwrap(sinks)));
  if (succeeded(verify(o)))
    return true;
  range->assign(old);
  return false;
}
