//===- AttnOps.cpp - attn op builders, verifiers and shape reification ---===//
#include "AttnChecker.h"
#include "AttnShapes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::shapes;

//===----------------------------------------------------------------------===//
// Result shapes
//===----------------------------------------------------------------------===//

SmallVector<int64_t> shapes::projectShape(Value input, Value weight,
                                          WeightLayout layout) {
  SmallVector<int64_t> shape(tensorType(input).getShape());
  int64_t out = dimOf(weight, weightOutDim(layout));
  if (shape.empty())
    return {out};
  shape.back() = out;
  return shape;
}

SmallVector<int64_t> shapes::splitHeadsShape(Value input, int64_t numHeads) {
  return {dimOf(input, 0), numHeads, dimOf(input, 1),
          numHeads > 0 ? divDims(dimOf(input, 2), numHeads) : kDyn};
}

SmallVector<int64_t> shapes::mergeHeadsShape(Value input) {
  return {dimOf(input, 0), dimOf(input, 2),
          mulDims(dimOf(input, 1), dimOf(input, 3))};
}

SmallVector<int64_t> shapes::scoresShape(Value query, Value key) {
  return {dimOf(query, 0), dimOf(query, 1), dimOf(query, 2), dimOf(key, 2)};
}

SmallVector<int64_t> shapes::weightedSumShape(Value probs, Value value) {
  return {dimOf(probs, 0), dimOf(probs, 1), dimOf(probs, 2), dimOf(value, 3)};
}

SmallVector<int64_t> shapes::sdpaShape(Value query, Value value) {
  return {dimOf(query, 0), dimOf(query, 1), dimOf(query, 2), dimOf(value, 3)};
}

SmallVector<int64_t> shapes::mhaShape(Value queryInput, Value wo,
                                      WeightLayout layout) {
  return {dimOf(queryInput, 0), dimOf(queryInput, 1),
          dimOf(wo, weightOutDim(layout))};
}

RankedTensorType shapes::resultType(ArrayRef<int64_t> shape, Value like) {
  return RankedTensorType::get(shape, tensorType(like).getElementType());
}

//===----------------------------------------------------------------------===//
// Verifier helpers: every message names the operand, the dim and what was
// expected.
//===----------------------------------------------------------------------===//

static thread_local DimMismatchListener *innermostListener = nullptr;

DimMismatchListener::DimMismatchListener(Callback callback)
    : callback(callback), outer(innermostListener) {
  innermostListener = this;
}

DimMismatchListener::~DimMismatchListener() { innermostListener = outer; }

void DimMismatchListener::notify(Value v, int64_t dim, int64_t expected) {
  if (innermostListener)
    innermostListener->callback(v, dim, expected);
}

using namespace mlir::attn::detail;

//===----------------------------------------------------------------------===//
// Reification helpers
//===----------------------------------------------------------------------===//

OpFoldResult shapes::mixedDim(OpBuilder &b, Location loc, Value v, int64_t i) {
  return tensor::getMixedSize(b, loc, v, i);
}

static OpFoldResult foldDivConst(OpBuilder &b, Location loc, OpFoldResult x,
                                 int64_t c) {
  if (auto v = getConstantIntValue(x))
    return b.getIndexAttr(*v / c);
  Value cst = arith::ConstantIndexOp::create(b, loc, c);
  return arith::DivSIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x), cst)
      .getResult();
}

OpFoldResult shapes::foldMul(OpBuilder &b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  return arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// Reified shape where each result dim is dim `src.second` of `src.first`.
static LogicalResult
reifyFromOperandDims(OpBuilder &b, Operation *op,
                     ArrayRef<std::pair<Value, int64_t>> srcs,
                     ReifiedRankedShapedTypeDims &out) {
  SmallVector<OpFoldResult> dims;
  for (auto [v, i] : srcs)
    dims.push_back(mixedDim(b, op->getLoc(), v, i));
  out.push_back(dims);
  return success();
}

//===----------------------------------------------------------------------===//
// ProjectOp
//===----------------------------------------------------------------------===//

LogicalResult ProjectOp::verify() {
  Checker c(*this);
  Value x = getInput(), w = getWeight();
  int64_t r = tensorType(x).getRank();
  if (r < 1)
    return emitOpError() << "operand 'input' must have rank >= 1 [..., In], got rank 0";
  if (failed(c.rank("weight", w, 2,
                    getLayout() == WeightLayout::out_in ? "[Out,In]" : "[In,Out]")) ||
      failed(c.sameElementType("weight", w, "input", x)))
    return failure();
  int64_t in = dimOf(x, r - 1);
  if (failed(c.dim("weight", w, weightInDim(getLayout()),
                   "input width", in,
                   "last dim of 'input', weight layout " +
                       stringifyWeightLayout(getLayout()))))
    return failure();
  int64_t out = dimOf(w, weightOutDim(getLayout()));
  if (Value bias = getBias()) {
    if (failed(c.rank("bias", bias, 1, "[Out]")) ||
        failed(c.sameElementType("bias", bias, "input", x)) ||
        failed(c.dim("bias", bias, 0, "length", out, "output width of 'weight'")))
      return failure();
  }
  return c.result(projectShape(x, w, getLayout()), tensorType(x).getElementType());
}

LogicalResult ProjectOp::reifyResultShapes(OpBuilder &b,
                                           ReifiedRankedShapedTypeDims &out) {
  SmallVector<std::pair<Value, int64_t>> srcs;
  int64_t r = tensorType(getInput()).getRank();
  for (int64_t i = 0; i + 1 < r; ++i)
    srcs.push_back({getInput(), i});
  srcs.push_back({getWeight(), weightOutDim(getLayout())});
  return reifyFromOperandDims(b, *this, srcs, out);
}

//===----------------------------------------------------------------------===//
// SplitHeadsOp / MergeHeadsOp
//===----------------------------------------------------------------------===//

LogicalResult SplitHeadsOp::verify() {
  Checker c(*this);
  int64_t h = getNumHeads();
  if (h <= 0)
    return emitOpError() << "attribute 'num_heads' must be positive, got " << h;
  if (failed(c.rank("input", getInput(), 3, "[B,T,h*D]")))
    return failure();
  int64_t w = dimOf(getInput(), 2);
  if (!isDyn(w) && w % h != 0)
    return emitOpError() << "operand 'input' width (dim 2) " << w
                         << " is not divisible by num_heads " << h
                         << " (d_model must be divisible by n_heads)";
  return c.result(splitHeadsShape(getInput(), h),
                  tensorType(getInput()).getElementType());
}

LogicalResult SplitHeadsOp::reifyResultShapes(OpBuilder &b,
                                              ReifiedRankedShapedTypeDims &out) {
  Location loc = getLoc();
  out.push_back({mixedDim(b, loc, getInput(), 0), b.getIndexAttr(getNumHeads()),
                 mixedDim(b, loc, getInput(), 1),
                 foldDivConst(b, loc, mixedDim(b, loc, getInput(), 2),
                              getNumHeads())});
  return success();
}

LogicalResult MergeHeadsOp::verify() {
  Checker c(*this);
  if (failed(c.rank("input", getInput(), 4, "[B,h,T,D]")))
    return failure();
  return c.result(mergeHeadsShape(getInput()),
                  tensorType(getInput()).getElementType());
}

LogicalResult MergeHeadsOp::reifyResultShapes(OpBuilder &b,
                                              ReifiedRankedShapedTypeDims &out) {
  Location loc = getLoc();
  out.push_back({mixedDim(b, loc, getInput(), 0), mixedDim(b, loc, getInput(), 2),
                 foldMul(b, loc, mixedDim(b, loc, getInput(), 1),
                         mixedDim(b, loc, getInput(), 3))});
  return success();
}

//===----------------------------------------------------------------------===//
// ScoresOp / WeightedSumOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::attn::detail::verifyQueryKey(Checker &c, Value q, Value k) {
  if (failed(c.rank("query", q, 4, "[B,H,Tq,D]")) ||
      failed(c.rank("key", k, 4, "[B,Hkv,Tk,D]")) ||
      failed(c.sameElementType("key", k, "query", q)) ||
      failed(c.dim("key", k, 0, "batch", dimOf(q, 0), "batch B of 'query'")) ||
      failed(c.headsDivide("query", dimOf(q, 1), "key", dimOf(k, 1))) ||
      failed(c.dim("key", k, 3, "head dim", dimOf(q, 3), "head dim D of 'query'")))
    return failure();
  return success();
}

LogicalResult ScoresOp::verify() {
  Checker c(*this);
  if (failed(verifyQueryKey(c, getQuery(), getKey())))
    return failure();
  return c.result(scoresShape(getQuery(), getKey()),
                  tensorType(getQuery()).getElementType());
}

LogicalResult ScoresOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  Value q = getQuery(), k = getKey();
  return reifyFromOperandDims(b, *this, {{q, 0}, {q, 1}, {q, 2}, {k, 2}}, out);
}

LogicalResult WeightedSumOp::verify() {
  Checker c(*this);
  Value p = getProbs(), v = getValue();
  if (failed(c.rank("probs", p, 4, "[B,H,Tq,Tk]")) ||
      failed(c.rank("value", v, 4, "[B,Hkv,Tk,Dv]")) ||
      failed(c.sameElementType("value", v, "probs", p)) ||
      failed(c.dim("value", v, 0, "batch", dimOf(p, 0), "batch B of 'probs'")) ||
      failed(c.headsDivide("probs", dimOf(p, 1), "value", dimOf(v, 1))) ||
      failed(c.dim("value", v, 2, "length", dimOf(p, 3),
                   "key length Tk, dim 3 of 'probs'")))
    return failure();
  return c.result(weightedSumShape(p, v), tensorType(p).getElementType());
}

LogicalResult WeightedSumOp::reifyResultShapes(OpBuilder &b,
                                               ReifiedRankedShapedTypeDims &out) {
  Value p = getProbs(), v = getValue();
  return reifyFromOperandDims(b, *this, {{p, 0}, {p, 1}, {p, 2}, {v, 3}}, out);
}

//===----------------------------------------------------------------------===//
// ScaleOp / MaskOp / SoftmaxOp / DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::verify() {
  return Checker(*this).positiveFinite("scale", getScaleAttr().getValue());
}

LogicalResult SoftcapOp::verify() {
  return Checker(*this).positiveFinite("cap", getCapAttr().getValue());
}

void MaskOp::build(OpBuilder &b, OperationState &state, Value input, Value mask,
                   CausalKindAttr causal) {
  build(b, state, input.getType(), input, mask, /*alibi_slopes=*/Value(),
        /*key_lengths=*/Value(), /*diagonal=*/Value(), causal, /*window=*/WindowAttr());
}

LogicalResult MaskOp::verify() {
  Checker c(*this);
  Value x = getInput();
  if (failed(c.rank("input", x, 4, "[B,H,Tq,Tk]")))
    return failure();
  if (Value m = getMask())
    if (failed(c.mask(m, tensorType(x).getElementType(), tensorType(x).getShape())))
      return failure();
  if (Value s = getAlibiSlopes())
    if (failed(c.slopes(s, dimOf(x, 0), dimOf(x, 1))))
      return failure();
  if (Value l = getKeyLengths())
    if (failed(c.keyLengths(l, dimOf(x, 0))))
      return failure();
  if (failed(c.diagonalShift(getDiagonal(), getCausalAttr(), getWindowAttr())))
    return failure();
  return c.windowAlign(getWindowAttr(), getCausalAttr());
}

LogicalResult RopeOp::verify() {
  Checker c(*this);
  if (failed(c.rank("input", getInput(), 4, "[B,H,T,D]")))
    return failure();
  RankedTensorType x = tensorType(getInput());
  return c.ropeTables("input", x.getShape(), x.getElementType(), getCos(), getSin());
}

LogicalResult SoftmaxOp::verify() {
  if (tensorType(getInput()).getRank() < 1)
    return emitOpError() << "operand 'input' must have rank >= 1, got rank 0";
  Value s = getSinks();
  if (!s)
    return success();
  Checker c(*this);
  if (failed(c.rank("input", getInput(), 4, "[B,H,Tq,Tk] (with sinks)")))
    return failure();
  return c.sinks(s, dimOf(getInput(), 1));
}

StringRef DropoutOp::getSeedAttributeName() { return getSeedAttrName().getValue(); }

LogicalResult DropoutOp::verify() {
  Checker c(*this);
  // The seed attribute is default-valued: only a stored non-zero one
  // conflicts with a run-time seed.
  IntegerAttr seed = getSeedAttr();
  if (seed && seed.getInt() == 0)
    seed = nullptr;
  if (failed(c.runtimeSeed(getRuntimeSeed(), seed, "seed", getRateAttr(), false)))
    return failure();
  return c.dropoutRate("rate", getRateAttr().getValue());
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

void SdpaOp::build(OpBuilder &b, OperationState &state, Value query, Value key,
                   Value value, Value mask) {
  build(b, state, query, key, value, mask, /*alibi_slopes=*/Value(),
        /*key_lengths=*/Value(), /*sinks=*/Value(), /*runtime_seed=*/Value(),
        /*captures=*/ValueRange(),
        /*scale=*/FloatAttr(),
        /*causal=*/CausalKindAttr(), /*softcap=*/FloatAttr(),
        /*window=*/WindowAttr(), /*dropout_rate=*/FloatAttr(),
        /*dropout_seed=*/IntegerAttr());
}

std::optional<double> mlir::attn::detail::effectiveScale(FloatAttr scale, Value query) {
  if (scale)
    return scale.getValueAsDouble();
  int64_t d = dimOf(query, 3);
  if (isDyn(d) || d <= 0)
    return std::nullopt;
  return 1.0 / std::sqrt(static_cast<double>(d));
}

std::optional<double> SdpaOp::getEffectiveScale() {
  return effectiveScale(getScaleAttr(), getQuery());
}

LogicalResult SdpaOp::verify() {
  Checker c(*this);
  if (failed(verifySdpaOperands(*this, c)) ||
      (getSinks() && failed(c.sinks(getSinks(), dimOf(getQuery(), 1)))) ||
      failed(c.dropoutRate("dropout_rate", optF(getDropoutRateAttr()))) ||
      failed(c.seedNeedsRate(getDropoutSeedAttr(), getDropoutRateAttr())) ||
      failed(c.runtimeSeed(getRuntimeSeed(), getDropoutSeedAttr(), "dropout_seed",
                           getDropoutRateAttr())) ||
      failed(verifyFunctions(*this)))
    return failure();
  return c.result(sdpaShape(getQuery(), getValue()), tensorType(getQuery()).getElementType());
}

LogicalResult SdpaOp::reifyResultShapes(OpBuilder &b,
                                        ReifiedRankedShapedTypeDims &out) {
  Value q = getQuery(), v = getValue();
  return reifyFromOperandDims(b, *this, {{q, 0}, {q, 1}, {q, 2}, {v, 3}}, out);
}

//===----------------------------------------------------------------------===//
// MhaOp
//===----------------------------------------------------------------------===//

void MhaOp::build(OpBuilder &b, OperationState &state, Value queryInput,
                  Value kvInput, Value wq, Value wk, Value wv, Value wo,
                  int64_t numHeads, std::optional<int64_t> numKvHeads,
                  WeightLayout layout) {
  build(b, state, queryInput, kvInput, wq, wk, wv, wo, /*bq=*/nullptr, /*bk=*/nullptr,
        /*bv=*/nullptr, /*bo=*/nullptr, /*mask=*/nullptr,
        /*alibi_slopes=*/nullptr, /*key_lengths=*/nullptr, /*sinks=*/nullptr,
        /*rope_cos=*/nullptr, /*rope_sin=*/nullptr, /*runtime_seed=*/nullptr,
        /*captures=*/ValueRange(), b.getI64IntegerAttr(numHeads),
        numKvHeads ? b.getI64IntegerAttr(*numKvHeads) : IntegerAttr(),
        /*scale=*/nullptr, /*causal=*/nullptr, /*softcap=*/nullptr,
        /*window=*/nullptr, /*rope_style=*/nullptr, /*dropout_rate=*/nullptr,
        /*dropout_seed=*/nullptr, WeightLayoutAttr::get(b.getContext(), layout));
}

LogicalResult MhaOp::verify() {
  Checker c(*this);
  Value xq = getQueryInput(), xkv = getKvInput();
  int64_t h = getNumHeads(), hkv = getNumKvHeadsOrDefault();
  if (h <= 0)
    return emitOpError() << "attribute 'num_heads' must be positive, got " << h;
  if (hkv <= 0)
    return emitOpError() << "attribute 'num_kv_heads' must be positive, got "
                         << hkv;
  if (h % hkv != 0)
    return emitOpError() << "num_heads H = " << h
                         << " is not a multiple of num_kv_heads Hkv = " << hkv
                         << " (H % Hkv must be 0)";
  if (failed(c.rank("query_input", xq, 3, "[B,Tq,E]")) ||
      failed(c.rank("kv_input", xkv, 3, "[B,Tk,Ekv]")) ||
      failed(c.sameElementType("kv_input", xkv, "query_input", xq)) ||
      failed(c.dim("kv_input", xkv, 0, "batch", dimOf(xq, 0),
                   "batch B of 'query_input'")))
    return failure();

  WeightLayout layout = getLayout();
  StringRef wshape = layout == WeightLayout::out_in ? "[Out,In]" : "[In,Out]";
  int64_t inD = weightInDim(layout), outD = weightOutDim(layout);
  std::string layoutName = ("weight layout " + stringifyWeightLayout(layout)).str();
  struct W {
    StringRef name;
    Value w;
  } weights[] = {{"wq", getWq()}, {"wk", getWk()}, {"wv", getWv()}, {"wo", getWo()}};
  for (W &w : weights)
    if (failed(c.rank(w.name, w.w, 2, wshape)) ||
        failed(c.sameElementType(w.name, w.w, "query_input", xq)))
      return failure();

  // Q projection: [B,Tq,E] -> H heads of D.
  Value wq = getWq(), wk = getWk(), wv = getWv(), wo = getWo();
  if (failed(c.dim("wq", wq, inD, "input width", dimOf(xq, 2),
                   "width E of 'query_input', " + layoutName)))
    return failure();
  int64_t qOut = dimOf(wq, outD);
  if (!isDyn(qOut) && qOut % h != 0)
    return emitOpError() << "operand 'wq' output width (dim " << outD << ") "
                         << qOut << " is not divisible by num_heads " << h
                         << " (d_model must be divisible by n_heads)";
  int64_t d = divDims(qOut, h);
  // K/V projections: [B,Tk,Ekv] -> Hkv heads of D and Dv.
  if (failed(c.dim("wk", wk, inD, "input width", dimOf(xkv, 2),
                   "width Ekv of 'kv_input', " + layoutName)) ||
      failed(c.dim("wk", wk, outD, "output width", mulDims(hkv, d),
                   "num_kv_heads * head dim = " + std::to_string(hkv) + " * " +
                       dimStr(d))) ||
      failed(c.dim("wv", wv, inD, "input width", dimOf(xkv, 2),
                   "width Ekv of 'kv_input', " + layoutName)))
    return failure();
  int64_t vOut = dimOf(wv, outD);
  if (!isDyn(vOut) && vOut % hkv != 0)
    return emitOpError() << "operand 'wv' output width (dim " << outD << ") "
                         << vOut << " is not divisible by num_kv_heads " << hkv;
  int64_t dv = divDims(vOut, hkv);
  if (failed(c.dim("wo", wo, inD, "input width", mulDims(h, dv),
                   "num_heads * value head dim = " + std::to_string(h) + " * " +
                       dimStr(dv))))
    return failure();
  int64_t eo = dimOf(wo, outD);

  // Biases: q/k/v together, out separately.
  int numQkvBias = (getBq() ? 1 : 0) + (getBk() ? 1 : 0) + (getBv() ? 1 : 0);
  if (numQkvBias != 0 && numQkvBias != 3)
    return emitOpError() << "operands 'bq', 'bk', 'bv' must be given together, got "
                         << numQkvBias << " of 3";
  struct B {
    StringRef name;
    Value b;
    int64_t len;
    StringRef of;
  } biases[] = {{"bq", getBq(), qOut, "output width of 'wq'"},
                {"bk", getBk(), dimOf(wk, outD), "output width of 'wk'"},
                {"bv", getBv(), vOut, "output width of 'wv'"},
                {"bo", getBo(), eo, "output width of 'wo'"}};
  for (B &b : biases)
    if (b.b && (failed(c.rank(b.name, b.b, 1, "[Out]")) ||
                failed(c.sameElementType(b.name, b.b, "query_input", xq)) ||
                failed(c.dim(b.name, b.b, 0, "length", b.len, b.of))))
      return failure();

  Type elt = tensorType(xq).getElementType();
  if (Value m = getMask())
    if (failed(c.mask(m, elt, {dimOf(xq, 0), h, dimOf(xq, 1), dimOf(xkv, 1)})))
      return failure();
  if (Value s = getAlibiSlopes())
    if (failed(c.slopes(s, dimOf(xq, 0), h)))
      return failure();
  if (Value l = getKeyLengths())
    if (failed(c.keyLengths(l, dimOf(xq, 0))))
      return failure();
  if (Value s = getSinks())
    if (failed(c.sinks(s, h)))
      return failure();
  if ((getRopeCos() == nullptr) != (getRopeSin() == nullptr))
    return emitOpError() << "operands 'cos' and 'sin' must be given together";
  if (getRopeStyleAttr() && !getRopeCos())
    return emitOpError() << "attribute 'rope_style' is given without rope(%cos, %sin)";
  if (Value cos = getRopeCos()) {
    // Checked against the split Q and K heads rope rotates.
    Value sin = getRopeSin();
    if (failed(c.ropeTables("query heads", {dimOf(xq, 0), h, dimOf(xq, 1), d},
                            elt, cos, sin)) ||
        failed(c.ropeTables("key heads", {dimOf(xkv, 0), hkv, dimOf(xkv, 1), d},
                            elt, cos, sin)))
      return failure();
  }
  if (failed(c.positiveFinite("scale", optF(getScaleAttr()))) ||
      failed(c.positiveFinite("softcap", optF(getSoftcapAttr()))) ||
      failed(c.windowAlign(getWindowAttr(), getCausalAttr())) ||
      failed(c.dropoutRate("dropout_rate", optF(getDropoutRateAttr()))) ||
      failed(c.seedNeedsRate(getDropoutSeedAttr(), getDropoutRateAttr())) ||
      failed(c.runtimeSeed(getRuntimeSeed(), getDropoutSeedAttr(), "dropout_seed",
                           getDropoutRateAttr())) ||
      failed(verifyFunctions(*this)))
    return failure();
  return c.result(mhaShape(xq, wo, layout), elt);
}

LogicalResult MhaOp::reifyResultShapes(OpBuilder &b,
                                       ReifiedRankedShapedTypeDims &out) {
  Value xq = getQueryInput();
  return reifyFromOperandDims(
      b, *this, {{xq, 0}, {xq, 1}, {getWo(), weightOutDim(getLayout())}}, out);
}

//===----------------------------------------------------------------------===//
// InferTypeOpInterface: one result type per op, from shapes:: above
//===----------------------------------------------------------------------===//

LogicalResult shapes::requireRanked(std::optional<Location> loc, StringRef opName,
              std::initializer_list<std::pair<StringRef, Value>> operands) {
  for (auto [name, v] : operands)
    if (!isa<RankedTensorType>(v.getType()))
      return emitOptionalError(loc, "'", opName, "' op operand '", name,
                               "' must be a ranked tensor, got ", v.getType());
  return success();
}

/// The one result type `result()` gives, once the named operands are known
/// to be ranked tensors.
LogicalResult
shapes::inferOne(std::optional<Location> loc, StringRef opName,
         std::initializer_list<std::pair<StringRef, Value>> operands,
         function_ref<RankedTensorType()> result, SmallVectorImpl<Type> &types) {
  if (failed(requireRanked(loc, opName, operands)))
    return failure();
  types.push_back(result());
  return success();
}

LogicalResult ProjectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(loc, getOperationName(), {{"input", a.getInput()}, {"weight", a.getWeight()}},
                  [&] {
                    return resultType(projectShape(a.getInput(), a.getWeight(), a.getLayout()),
                                      a.getInput());
                  },
                  types);
}

LogicalResult SplitHeadsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"input", a.getInput()}},
      [&] { return resultType(splitHeadsShape(a.getInput(), a.getNumHeads()), a.getInput()); },
      types);
}

LogicalResult MergeHeadsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"input", a.getInput()}},
      [&] { return resultType(mergeHeadsShape(a.getInput()), a.getInput()); }, types);
}

LogicalResult ScoresOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"query", a.getQuery()}, {"key", a.getKey()}},
      [&] { return resultType(scoresShape(a.getQuery(), a.getKey()), a.getQuery()); }, types);
}

LogicalResult WeightedSumOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"probs", a.getProbs()}, {"value", a.getValue()}},
      [&] { return resultType(weightedSumShape(a.getProbs(), a.getValue()), a.getProbs()); },
      types);
}

LogicalResult SdpaOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"query", a.getQuery()}, {"value", a.getValue()}},
      [&] { return resultType(sdpaShape(a.getQuery(), a.getValue()), a.getQuery()); }, types);
}

LogicalResult MhaOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(loc, getOperationName(),
                  {{"query_input", a.getQueryInput()}, {"wo", a.getWo()}},
                  [&] {
                    return resultType(mhaShape(a.getQueryInput(), a.getWo(), a.getLayout()),
                                      a.getQueryInput());
                  },
                  types);
}

#define GET_OP_CLASSES
#include "attn/Dialect/AttnOps.cpp.inc"
