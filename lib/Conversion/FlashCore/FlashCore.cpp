//===- FlashCore.cpp - what every fused attention kernel shares -----------===//
#include "FlashCore.h"
#include "Dropout.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

//===----------------------------------------------------------------------===//
// SdpaProblem
//===----------------------------------------------------------------------===//

/// The caches and table K and V are gathered from, when both come from
/// attn.gather_pages with the same table and each gather's lengths (if
/// any) are the sdpa's key lengths: then the kernel never reads a key the
/// gathers would have zeroed.
static std::optional<PagedKeys> pagedKeysOf(Value key, Value value, Value keyLengths) {
  auto k = key.getDefiningOp<GatherPagesOp>();
  auto v = value.getDefiningOp<GatherPagesOp>();
  if (!k || !v || k.getTable() != v.getTable() || k.getLayout() != v.getLayout())
    return std::nullopt;
  for (GatherPagesOp g : {k, v})
    if (g.getLengths() && g.getLengths() != keyLengths)
      return std::nullopt;
  return PagedKeys{k.getCache(), v.getCache(), k.getTable(), k.getLayout()};
}

/// The int8 tensors and scales K and V are dequantized from, when both
/// come from attn.dequantize.
static std::optional<QuantizedKeys> quantizedKeysOf(Value key, Value value) {
  auto k = key.getDefiningOp<DequantizeOp>();
  auto v = value.getDefiningOp<DequantizeOp>();
  if (!k || !v)
    return std::nullopt;
  return QuantizedKeys{k.getInput(), v.getInput(), k.getScale(), v.getScale()};
}

template <typename OpTy>
static FailureOr<SdpaProblem> analyzeSdpaLike(OpTy op, KernelSupport support,
                                              std::string &reason) {
  auto fail = [&](const Twine &why) -> FailureOr<SdpaProblem> {
    reason = why.str();
    return failure();
  };
  SdpaProblem p;
  p.op = op.getOperation();
  p.query = op.getQuery();
  p.key = op.getKey();
  p.value = op.getValue();
  p.mask = op.getMask();
  p.alibiSlopes = op.getAlibiSlopes();
  p.keyLengths = op.getKeyLengths();
  p.queryType = dyn_cast<RankedTensorType>(op.getQuery().getType());
  p.keyType = dyn_cast<RankedTensorType>(op.getKey().getType());
  p.valueType = dyn_cast<RankedTensorType>(op.getValue().getType());
  p.resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if constexpr (std::is_same_v<OpTy, SdpaPartialOp>) {
    p.lseType = cast<RankedTensorType>(op.getLse().getType());
    p.diagonalShift = op.getDiagonal();
  }
  if (!p.queryType || !p.keyType || !p.valueType || !p.resultType)
    return fail("the " + support.name + " needs ranked tensors");
  p.elementType = p.queryType.getElementType();
  if (p.elementType.isF64())
    return fail("f64 (for checking) takes the reference lowering");
  if (!support.lowPrecision && !p.elementType.isF32())
    return fail("the " + support.name + " takes only f32");
  constexpr bool isGrad = std::is_same_v<OpTy, SdpaGradOp>;
  if (auto rate = op.getDropoutRateAttr(); rate && !rate.getValue().isZero()) {
    if (!support.dropout)
      return fail("dropout is not supported by the " + support.name);
    p.dropoutRate = rate.getValue().convertToFloat();
    if (IntegerAttr seed = op.getDropoutSeedAttr())
      p.dropoutSeed = seed.getInt();
    p.runtimeSeed = op.getRuntimeSeed();
  }
  if (p.queryType.isDynamicDim(1) || p.keyType.isDynamicDim(1) ||
      p.queryType.isDynamicDim(3) || p.valueType.isDynamicDim(3))
    return fail("the " + support.name + " needs static head counts and head dims");
  std::optional<double> scale = op.getEffectiveScale();
  if (!scale)
    return fail("the " + support.name + " needs a scale");
  p.heads = p.queryType.getDimSize(1);
  p.kvHeads = p.keyType.getDimSize(1);
  p.d = p.queryType.getDimSize(3);
  p.dv = p.valueType.getDimSize(3);
  p.group = p.heads / p.kvHeads;
  p.scale = *scale;
  p.scaleLog2 = *scale * kLog2E;
  if (auto c = op.getCausalAttr())
    p.causal = c.getValue();
  // A bound no Tk can reach is no bound (and keeps the index arithmetic
  // far from overflow).
  constexpr int64_t kFar = int64_t(1) << 48;
  if (WindowAttr w = op.getWindowAttr()) {
    if (std::optional<int64_t> l = w.getLeft(); l && *l < kFar)
      p.windowLeft = *l;
    if (std::optional<int64_t> r = w.getRight(); r && *r < kFar)
      p.windowRight = *r;
  }
  p.diagonal = keepRuleDiagonal(p.causal, op.getWindowAttr());
  if (FloatAttr c = op.getSoftcapAttr())
    p.softcap = c.getValueAsDouble();
  if (Value s = op.getAlibiSlopes())
    p.slopesType = cast<RankedTensorType>(s.getType());
  if (Value l = op.getKeyLengths())
    p.keyLengthsType = cast<RankedTensorType>(l.getType());
  if (op.hasScoreMod())
    p.scoreMod = &op.getScoreMod();
  if constexpr (isGrad) {
    if (op.hasScoreMod())
      p.scoreModGrad = &op.getScoreModGrad();
  }
  if (op.hasMaskMod())
    p.maskMod = &op.getMaskMod();
  p.captures = op.getCaptures();
  if (support.pagedKeys)
    p.paged = pagedKeysOf(p.key, p.value, p.keyLengths);
  if (p.paged && p.dropoutRate)
    return fail("dropout with paged K/V is not supported by the " + support.name);
  // int8 K/V: dequantized tensors, or paged caches dequantized whole
  // (gather_pages(dequantize(cache, scales))), both read in place.
  if (support.quantizedKeys)
    p.quantized = p.paged ? quantizedKeysOf(p.paged->keyCache, p.paged->valueCache)
                          : quantizedKeysOf(p.key, p.value);
  if constexpr (!isGrad)
    p.sinks = op.getSinks();
  if (p.sinks && !support.sinks)
    return fail("attention sinks are not supported by the " + support.name);
  if ((p.scoreMod || p.maskMod) && !support.modFunctions)
    return fail("score and mask functions are not supported by the " + support.name);
  if (Value m = op.getMask()) {
    p.maskType = cast<RankedTensorType>(m.getType());
    p.maskKind = p.maskType.getElementType().isInteger(1) ? MaskKind::Keep
                                                          : MaskKind::Additive;
  }
  return p;
}

FailureOr<SdpaProblem> SdpaProblem::analyze(SdpaOp op, KernelSupport support,
                                            std::string &reason) {
  return analyzeSdpaLike(op, support, reason);
}

FailureOr<SdpaProblem> SdpaProblem::analyze(SdpaPartialOp op, KernelSupport support,
                                            std::string &reason) {
  return analyzeSdpaLike(op, support, reason);
}

FailureOr<SdpaProblem> SdpaProblem::analyze(SdpaGradOp op, KernelSupport support,
                                            std::string &reason) {
  return analyzeSdpaLike(op, support, reason);
}

/// Operand `t` read in place through a transposed view of its input's
/// buffer, when `t` is a linalg.transpose that keeps the innermost
/// dimension and the kernel takes strided buffers (`type` has a strided
/// layout: the CPU kernels'): a tokens-first [B, T, H, D] array transposed
/// to the operand's [B, H, T, D] is then read where it is, without the
/// transpose's copy (docs/serving.md, *Tokens-first arrays*). Null
/// otherwise.
static Value transposedView(OpBuilder &b, Location loc, Value t, MemRefType type,
                            function_ref<MemRefType(RankedTensorType)> bufferType) {
  auto transpose = t.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !isa<StridedLayoutAttr>(type.getLayout()))
    return {};
  ArrayRef<int64_t> perm = transpose.getPermutation();
  if (perm.empty() || perm.back() != static_cast<int64_t>(perm.size()) - 1)
    return {};
  Value input = transpose.getInput();
  MemRefType inputType = bufferType(cast<RankedTensorType>(input.getType()));
  if (!isa<StridedLayoutAttr>(inputType.getLayout()))
    return {};
  Value buffer = bufferization::ToBufferOp::create(b, loc, inputType, input, /*read_only=*/true);
  Value view = memref::TransposeOp::create(
      b, loc, buffer, AffineMapAttr::get(AffineMap::getPermutationMap(perm, b.getContext())));
  if (view.getType() != type)
    view = memref::CastOp::create(b, loc, type, view);
  return view;
}

SdpaBuffers
mlir::attn::flash::materializeBuffers(OpBuilder &b, const SdpaProblem &p,
                                      function_ref<MemRefType(RankedTensorType)> bufferType) {
  Location loc = p.op->getLoc();
  auto toBuffer = [&](Value t) -> Value {
    MemRefType type = bufferType(cast<RankedTensorType>(t.getType()));
    if (Value view = transposedView(b, loc, t, type, bufferType))
      return view;
    return bufferization::ToBufferOp::create(b, loc, type, t, /*read_only=*/true);
  };
  SdpaBuffers bufs;
  bufs.q = toBuffer(p.query);
  // K and V as the kernel reads them: int8 tensors or caches (quantized),
  // float caches (paged), or the operands.
  if (p.quantized) {
    bufs.k = toBuffer(p.quantized->keys);
    bufs.v = toBuffer(p.quantized->values);
    bufs.keyScales = toBuffer(p.quantized->keyScales);
    bufs.valueScales = toBuffer(p.quantized->valueScales);
  } else {
    bufs.k = toBuffer(p.paged ? p.paged->keyCache : p.key);
    bufs.v = toBuffer(p.paged ? p.paged->valueCache : p.value);
  }
  if (p.paged) {
    bufs.table = toBuffer(p.paged->table);
    bufs.layout = p.paged->layout;
    bufs.numBlocks = memref::DimOp::create(b, loc, bufs.k, 0);
    bufs.blockSize =
        memref::DimOp::create(b, loc, bufs.k, bufs.layout == KvLayout::nhd ? 1 : 2);
  }
  if (p.mask)
    bufs.mask = toBuffer(p.mask);
  if (p.alibiSlopes)
    bufs.slopes = toBuffer(p.alibiSlopes);
  if (p.keyLengths)
    bufs.keyLengths = toBuffer(p.keyLengths);
  if (p.sinks)
    bufs.sinks = toBuffer(p.sinks);
  if (p.dropoutRate)
    bufs.dropoutSeed = dropoutSeedValue(b, loc, p.runtimeSeed ? toBuffer(p.runtimeSeed) : Value(),
                                        p.dropoutSeed);
  for (Value c : p.captures)
    bufs.captures.push_back(toBuffer(c));
  bufs.diagonalShift = p.diagonalShift;
  bufs.batch = memref::DimOp::create(b, loc, bufs.q, 0);
  bufs.tq = memref::DimOp::create(b, loc, bufs.q, 2);
  if (p.paged)
    bufs.tk = arith::MulIOp::create(b, loc, memref::DimOp::create(b, loc, bufs.table, 1),
                                    bufs.blockSize);
  else
    bufs.tk = memref::DimOp::create(b, loc, bufs.k, 2);
  // The output, [B, H, Tq, Dv], 64-byte aligned.
  SmallVector<Value> dynSizes;
  if (p.resultType.isDynamicDim(0))
    dynSizes.push_back(bufs.batch);
  if (p.resultType.isDynamicDim(2))
    dynSizes.push_back(bufs.tq);
  bufs.out = memref::AllocOp::create(
      b, loc, MemRefType::get(p.resultType.getShape(), p.resultType.getElementType()),
      dynSizes, b.getI64IntegerAttr(64));
  if (p.isPartial())
    bufs.lse = memref::AllocOp::create(
        b, loc, MemRefType::get(p.lseType.getShape(), b.getF32Type()), dynSizes,
        b.getI64IntegerAttr(64));
  return bufs;
}

SmallVector<Value, 4> SdpaBuffers::keyRow(KernelBuilder &b, Value batch, Value kvHead,
                                          Value key) const {
  if (!table)
    return {batch, kvHead, key};
  Value id = b.load(table, {batch, b.div(key, blockSize)});
  id = arith::IndexCastOp::create(b.b, b.loc, b.b.getIndexType(), id);
  Value last = b.sub(numBlocks, b.idx(1));
  Value block = b.maxI(b.idx(0), b.minI(id, last));
  if (layout == KvLayout::hnd)
    return {block, kvHead, b.rem(key, blockSize)};
  return {block, b.rem(key, blockSize), kvHead};
}

Value SdpaBuffers::rowScale(KernelBuilder &b, Value data, Value scales, Value batch,
                            Value kvHead, Value key) const {
  Value s = cast<MemRefType>(scales.getType()).getRank() == 0
                ? b.load(scales, {})
                : b.load(scales, keyRow(b, batch, kvHead, key));
  if (isa<Float8E4M3FNType>(cast<MemRefType>(data.getType()).getElementType()))
    s = b.fmul(s, b.f(256.0));
  return s;
}

SmallVector<Value, 4> SdpaBuffers::keyAt(KernelBuilder &b, Value batch, Value kvHead, Value key,
                                         Value col) const {
  return withColumn(keyRow(b, batch, kvHead, key), col);
}

Value mlir::attn::flash::outputTensor(OpBuilder &b, const SdpaProblem &p,
                                      const SdpaBuffers &bufs) {
  return bufferization::ToTensorOp::create(b, p.op->getLoc(), p.resultType, bufs.out,
                                           /*restrict=*/true, /*writable=*/true);
}

GradBuffers
mlir::attn::flash::materializeGradBuffers(OpBuilder &b, SdpaGradOp op, const SdpaBuffers &s,
                                          function_ref<MemRefType(RankedTensorType)> bufferType) {
  Location loc = op.getLoc();
  auto toBuffer = [&](Value t) -> Value {
    return bufferization::ToBufferOp::create(b, loc, bufferType(cast<RankedTensorType>(t.getType())),
                                             t, /*read_only=*/true);
  };
  auto alloc = [&](Value result) -> Value {
    auto t = cast<RankedTensorType>(result.getType());
    SmallVector<Value> dyn;
    if (t.isDynamicDim(0))
      dyn.push_back(s.batch);
    if (t.isDynamicDim(2))
      dyn.push_back(s.tk);
    return memref::AllocOp::create(b, loc, MemRefType::get(t.getShape(), t.getElementType()),
                                   dyn, b.getI64IntegerAttr(64));
  };
  return GradBuffers{toBuffer(op.getOut()), toBuffer(op.getGradOut()), toBuffer(op.getLse()),
                     alloc(op.getGradKey()), alloc(op.getGradValue())};
}

SmallVector<Value> mlir::attn::flash::gradResultTensors(OpBuilder &b, const SdpaProblem &p,
                                                        const SdpaBuffers &s,
                                                        const GradBuffers &gb) {
  auto toTensor = [&](Value result, Value buf) -> Value {
    return bufferization::ToTensorOp::create(b, p.op->getLoc(), result.getType(), buf,
                                             /*restrict=*/true, /*writable=*/true);
  };
  return {outputTensor(b, p, s), toTensor(p.op->getResult(1), gb.dk),
          toTensor(p.op->getResult(2), gb.dv)};
}

SmallVector<Value> mlir::attn::flash::resultTensors(OpBuilder &b, const SdpaProblem &p,
                                                    const SdpaBuffers &bufs) {
  SmallVector<Value> results{outputTensor(b, p, bufs)};
  if (p.isPartial())
    results.push_back(bufferization::ToTensorOp::create(b, p.op->getLoc(), p.lseType,
                                                        bufs.lse, /*restrict=*/true,
                                                        /*writable=*/true));
  return results;
}

//===----------------------------------------------------------------------===//
// KeyVisibility
//===----------------------------------------------------------------------===//

KeyVisibility::KeyVisibility(KernelBuilder &fb, const SdpaProblem &p,
                             const SdpaBuffers &s, Value batch)
    : fb(fb), p(p), length(s.tk) {
  if (s.keyLengths) {
    // L = len[b] clamped to [0, Tk]: whatever the input, no read past Tk.
    Value len = fb.load(s.keyLengths, {batch});
    len = arith::IndexCastOp::create(fb.b, fb.loc, fb.b.getIndexType(), len);
    length = fb.maxI(fb.idx(0), fb.minI(len, s.tk));
  }
  if (p.hasAlibi() || (p.usesDiagonal() && p.diagonal == CausalKind::bottom_right))
    bottomRightOffset = fb.sub(length, s.tq);
  if (p.usesDiagonal())
    diagonalOffset =
        p.diagonal == CausalKind::bottom_right ? bottomRightOffset : fb.idx(0);
  if (p.causal)
    rightReach = 0; // causal is the window side right = 0 (any right >= 0)
  else if (p.windowRight)
    rightReach = *p.windowRight;
  if (s.diagonalShift)
    diagonalOffset = clampDiagonalShift(fb.b, fb.loc, s.diagonalShift, s.tq, s.tk,
                                        rightReach.value_or(0), p.windowLeft.value_or(0));
}

Value mlir::attn::flash::clampDiagonalShift(OpBuilder &b, Location loc, Value shift,
                                            Value tq, Value tk, int64_t right, int64_t left) {
  Value lo = arith::SubIOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, -right), tq);
  Value hi = arith::AddIOp::create(b, loc, tk, arith::ConstantIndexOp::create(b, loc, left));
  Value atLeastLo = arith::MaxSIOp::create(b, loc, shift, lo);
  return arith::MinSIOp::create(b, loc, atLeastLo, hi);
}

Value KeyVisibility::bottomRightDiagonal(Value row) {
  assert(bottomRightOffset && "built only when a rule or ALiBi needs it");
  return fb.add(row, bottomRightOffset);
}

Value KeyVisibility::firstKey(Value row) {
  if (!p.windowLeft)
    return fb.idx(0);
  return fb.maxI(fb.idx(0), fb.sub(diagonal(row), fb.idx(*p.windowLeft)));
}

Value KeyVisibility::keyEnd(Value row) {
  if (!rightReach)
    return length;
  Value end = fb.add(diagonal(row), fb.idx(*rightReach + 1));
  return fb.maxI(fb.idx(0), fb.minI(end, length));
}

KeyVisibility::Range KeyVisibility::keyRange(function_ref<Value()> rowBegin,
                                             function_ref<Value()> rowEnd) {
  Value end = rightReach ? keyEnd(fb.sub(rowEnd(), fb.idx(1))) : length;
  if (!p.windowLeft)
    return {fb.idx(0), end};
  return {fb.minI(firstKey(rowBegin()), end), end};
}

KeyVisibility::Range KeyVisibility::tileRange(function_ref<Value()> rowBegin,
                                              function_ref<Value()> rowEnd,
                                              int64_t tileSize) {
  Range keys = keyRange(rowBegin, rowEnd);
  Value last = fb.ceilDiv(keys.end, tileSize);
  if (!p.windowLeft)
    return {fb.idx(0), last};
  Value first = fb.div(keys.begin, fb.idx(tileSize));
  // An empty key range visits no tile (not the one holding `begin`).
  return {first, fb.select(fb.lt(keys.begin, keys.end), last, first)};
}

Value KeyVisibility::allVisible(Value rowBegin, function_ref<Value()> rowEnd,
                                Value key0, int64_t n) {
  // firstKey and keyEnd grow with the row: the last row has the latest
  // first key, the first row the earliest end.
  Value all = fb.le(fb.add(key0, fb.idx(n)), keyEnd(rowBegin));
  if (p.windowLeft)
    all = fb.andI(all, fb.le(firstKey(fb.sub(rowEnd(), fb.idx(1))), key0));
  return all;
}

Value KeyVisibility::isVisible(Value row, Value key) {
  Value visible = fb.lt(key, keyEnd(row));
  if (p.windowLeft)
    visible = fb.andI(visible, fb.le(firstKey(row), key));
  return visible;
}

//===----------------------------------------------------------------------===//
// Softcap and ALiBi
//===----------------------------------------------------------------------===//

Value mlir::attn::flash::softcapScores(KernelBuilder &fb, const SdpaProblem &p, Value x) {
  if (!p.softcap)
    return x;
  // The scores are log2e·s; the cap applies to s: log2e·c·tanh(s/c) =
  // c'·tanh(x/c') with c' = c·log2e.
  double capLog2 = *p.softcap * kLog2E;
  Type t = x.getType();
  Value capped = fb.tanh(fb.fmul(x, fb.constantLike(t, 1.0 / capLog2)));
  return fb.fmul(capped, fb.constantLike(t, capLog2));
}

AlibiBias::AlibiBias(KernelBuilder &fb, const SdpaProblem &p, const SdpaBuffers &s,
                     KeyVisibility &keys, Value batch, Value head)
    : fb(fb), keys(keys) {
  Value slope = p.slopesType.getRank() == 1 ? fb.load(s.slopes, {head})
                                            : fb.load(s.slopes, {batch, head});
  negSlopeLog2 = fb.fmul(slope, fb.f(-kLog2E));
}

Value AlibiBias::at(Value row, Value key) {
  Value dist = fb.sub(keys.bottomRightDiagonal(row), key);
  dist = fb.maxI(dist, fb.sub(fb.idx(0), dist));
  Type i64 = fb.b.getI64Type();
  Value d = arith::SIToFPOp::create(
      fb.b, fb.loc, fb.f32(), arith::IndexCastOp::create(fb.b, fb.loc, i64, dist));
  return fb.fmul(negSlopeLog2, d);
}

Value AlibiBias::atLanes(Value row, Value key0) {
  // |(d - key0) - lane| in i32 lanes.
  Value base = fb.bcastI32(fb.sub(keys.bottomRightDiagonal(row), key0));
  Value dist = arith::SubIOp::create(fb.b, fb.loc, base, fb.laneIndices());
  Value neg = arith::SubIOp::create(
      fb.b, fb.loc, arith::ConstantOp::create(fb.b, fb.loc, dist.getType(),
                                              DenseElementsAttr::get(
                                                  cast<ShapedType>(dist.getType()),
                                                  fb.b.getI32IntegerAttr(0))),
      dist);
  dist = arith::MaxSIOp::create(fb.b, fb.loc, dist, neg);
  Value d = arith::SIToFPOp::create(fb.b, fb.loc, fb.vec(), dist);
  return fb.fmul(fb.bcast(negSlopeLog2), d);
}

//===----------------------------------------------------------------------===//
// Mask broadcasting
//===----------------------------------------------------------------------===//

SmallVector<std::optional<unsigned>>
mlir::attn::flash::maskOperandDims(ShapedType maskType) {
  int64_t r = maskType.getRank();
  SmallVector<std::optional<unsigned>> dims;
  for (int64_t i = 0; i < r; ++i) {
    if (maskType.getDimSize(i) == 1)
      dims.push_back(std::nullopt);
    else
      dims.push_back(static_cast<unsigned>(4 - r + i));
  }
  return dims;
}

SmallVector<Value> mlir::attn::flash::maskIndices(KernelBuilder &fb, ShapedType maskType,
                                                  Value b, Value h, Value q, Value k) {
  Value full[4] = {b, h, q, k};
  SmallVector<Value> ids;
  for (std::optional<unsigned> d : maskOperandDims(maskType))
    ids.push_back(d ? full[*d] : fb.idx(0));
  return ids;
}
