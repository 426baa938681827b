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
// KernelBuilder
//===----------------------------------------------------------------------===//

Value KernelBuilder::constantLike(Type t, double v) {
  if (auto vt = dyn_cast<VectorType>(t))
    return arith::ConstantOp::create(
        b, loc, vt, DenseElementsAttr::get(vt, b.getFloatAttr(vt.getElementType(), v)));
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}

Value KernelBuilder::fma(Value x, Value y, Value acc) {
  if (isa<VectorType>(x.getType()))
    return vector::FMAOp::create(b, loc, x, y, acc);
  // Scalars: a multiply-add LLVM may contract into one fma instruction
  // (math.fma would become a libdevice call on NVVM).
  auto contract = arith::FastMathFlags::contract;
  Value prod = arith::MulFOp::create(b, loc, x, y, contract);
  return arith::AddFOp::create(b, loc, prod, acc, contract);
}

/// Cephes' degree-6 polynomial for 2^f on [-0.5, 0.5], highest power first;
/// the constant term 1 follows.
static constexpr double kExp2Coefficients[6] = {
    1.535336188319500e-4, 1.339887440266574e-3, 9.618437357674640e-3,
    5.550332471162809e-2, 2.402264791363012e-1, 6.931472028550421e-1};

Value KernelBuilder::exp2Polynomial(Value x) {
  Type t = x.getType();
  Type i32 = b.getI32Type();
  Type it = i32;
  if (auto vt = dyn_cast<VectorType>(t))
    it = VectorType::get(vt.getShape(), i32);
  auto c = [&](double v) { return constantLike(t, v); };
  auto ci = [&](int32_t v) -> Value {
    if (auto vt = dyn_cast<VectorType>(it))
      return arith::ConstantOp::create(
          b, loc, vt, DenseElementsAttr::get(vt, b.getI32IntegerAttr(v)));
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  // Clamp to [-127, 127] with ordered compares: NaN becomes -127 here (so
  // the integer conversion below is always defined) and is restored at the
  // end. Each select is one max/min instruction on x86.
  Value cl = select(cmpF(arith::CmpFPredicate::OGT, x, c(-127.0)), x, c(-127.0));
  cl = select(cmpF(arith::CmpFPredicate::OLT, cl, c(127.0)), cl, c(127.0));
  // cl + 128.5 >= 1.5, so truncation is floor: n = floor(cl + 0.5).
  Value ni = arith::SubIOp::create(
      b, loc, arith::FPToSIOp::create(b, loc, it, fadd(cl, c(128.5))), ci(128));
  Value fr = fsub(cl, arith::SIToFPOp::create(b, loc, t, ni));
  Value p = c(kExp2Coefficients[0]);
  for (int i = 1; i < 6; ++i)
    p = fma(p, fr, c(kExp2Coefficients[i]));
  p = fma(p, fr, c(1.0));
  // 2^n in the exponent bits; n = -127 gives +0, so x <= -127 gives 0.
  Value bits = arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, ni, ci(127)),
                                     ci(23));
  Value r = fmul(p, arith::BitcastOp::create(b, loc, t, bits));
  return select(cmpF(arith::CmpFPredicate::UNO, x, x), x, r);
}

Value KernelBuilder::logPolynomial(Value x) {
  Type i32 = b.getI32Type();
  auto ci = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  // e = biased exponent - 127, m = the mantissa with exponent 0: [1, 2).
  Value e = arith::SubIOp::create(b, loc, arith::ShRUIOp::create(b, loc, bits, ci(23)), ci(127));
  Value m = arith::BitcastOp::create(
      b, loc, f32(),
      arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, bits, ci(0x7fffff)),
                           ci(0x3f800000)));
  // m in [√½, √2): halve a mantissa above √2 and count it in e.
  Value high = cmpF(arith::CmpFPredicate::OGT, m, f(llvm::numbers::sqrt2));
  m = select(high, fmul(m, f(0.5)), m);
  e = select(high, arith::AddIOp::create(b, loc, e, ci(1)), e);
  Value sv = arith::DivFOp::create(b, loc, fsub(m, f(1.0)), fadd(m, f(1.0)));
  Value s2 = fmul(sv, sv);
  // 2·atanh(s) = 2s·(1 + s²/3 + s⁴/5 + s⁶/7 + s⁸/9)
  Value poly = f(1.0 / 9.0);
  for (double c : {1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0, 1.0})
    poly = fma(poly, s2, f(c));
  Value lnM = fmul(fmul(sv, f(2.0)), poly);
  Value r = fma(arith::SIToFPOp::create(b, loc, f32(), e), f(llvm::numbers::ln2), lnM);
  r = select(cmpF(arith::CmpFPredicate::OEQ, x, f(0.0)), negInf(), r);
  r = select(cmpF(arith::CmpFPredicate::OEQ, x, f(std::numeric_limits<double>::infinity())), x,
             r);
  return select(cmpF(arith::CmpFPredicate::UNO, x, x), x, r);
}

Value KernelBuilder::tanhFromExp2(Value x) {
  Type t = x.getType();
  auto c = [&](double v) { return constantLike(t, v); };
  // |x| and the sign by bit operations (no math-dialect op: this expands
  // one, and the GPU path would turn math.absf into a libdevice call).
  Type it = b.getI32Type();
  if (auto vt = dyn_cast<VectorType>(t))
    it = VectorType::get(vt.getShape(), it);
  auto bitsOf = [&](Value v) -> Value { return arith::BitcastOp::create(b, loc, it, v); };
  auto ci = [&](uint32_t v) -> Value {
    auto attr = b.getI32IntegerAttr(static_cast<int32_t>(v));
    if (auto vt = dyn_cast<VectorType>(it))
      return arith::ConstantOp::create(b, loc, vt, DenseElementsAttr::get(vt, attr));
    return arith::ConstantOp::create(b, loc, attr);
  };
  Value xBits = bitsOf(x);
  Value ax = arith::BitcastOp::create(b, loc, t, arith::AndIOp::create(b, loc, xBits, ci(0x7fffffffu)));
  // 1 - 2/(e^(2|x|) + 1): e^(2|x|) saturates at 2^127, so large |x| and inf
  // give exactly 1. The divisor is finite and >= 1: the division may be a
  // reciprocal estimate refined by Newton's method (`arcp`, `ninf`; the JIT
  // enables estimates for such divisions), about 2^-28 relative, instead of
  // a full-latency divide per score.
  Value e2x = exp2Polynomial(fmul(ax, c(2.0 * kLog2E)));
  auto approx = arith::FastMathFlags::arcp | arith::FastMathFlags::ninf;
  Value big = fsub(c(1.0), arith::DivFOp::create(b, loc, c(2.0), fadd(e2x, c(1.0)),
                                                 approx));
  // |x| < 1/4: x·(1 + x²·(-1/3 + x²·(2/15 + x²·(-17/315 + x²·62/2835)))),
  // error below 1e-8 relative.
  Value x2 = fmul(ax, ax);
  Value poly = c(62.0 / 2835.0);
  for (double k : {-17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0})
    poly = fma(poly, x2, c(k));
  Value small = fmul(ax, poly);
  Value r = select(cmpF(arith::CmpFPredicate::OLT, ax, c(0.25)), small, big);
  // The sign of x (r >= 0 or NaN): exactly odd; NaN stays NaN.
  Value sign = arith::AndIOp::create(b, loc, xBits, ci(0x80000000u));
  return arith::BitcastOp::create(b, loc, t, arith::OrIOp::create(b, loc, bitsOf(r), sign));
}

Value KernelBuilder::combineLanes(Value v, function_ref<Value(Value, Value)> combine) {
  int64_t n = cast<VectorType>(v.getType()).getNumElements();
  for (int64_t half = n / 2; half >= 1; half /= 2) {
    // Lanes [half, 2·half) onto [0, half); the other lanes are don't-care.
    SmallVector<int64_t> mask;
    for (int64_t i = 0; i < n; ++i)
      mask.push_back(i < half ? i + half : i);
    v = combine(v, vector::ShuffleOp::create(b, loc, v, v, mask));
  }
  return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{0});
}

Value KernelBuilder::laneIndices() {
  auto vt = VectorType::get({width}, b.getI32Type());
  SmallVector<int32_t> lanes;
  for (int64_t l = 0; l < width; ++l)
    lanes.push_back(static_cast<int32_t>(l));
  return arith::ConstantOp::create(b, loc, vt,
                                   DenseElementsAttr::get(vt, ArrayRef<int32_t>(lanes)));
}

Value KernelBuilder::bcastI32(Value index) {
  Type i32 = b.getI32Type();
  return vector::BroadcastOp::create(b, loc, VectorType::get({width}, i32),
                                     arith::IndexCastOp::create(b, loc, i32, index));
}

Value KernelBuilder::vloadF32(Value m, ValueRange ivs) {
  Type elt = cast<MemRefType>(m.getType()).getElementType();
  if (elt.isF32())
    return vload(m, ivs);
  Value v = vector::LoadOp::create(b, loc, VectorType::get({width}, elt), m, ivs);
  if (isa<IntegerType>(elt)) // int8 K/V (SdpaProblem::quantized)
    return arith::SIToFPOp::create(b, loc, vec(), v);
  if (isa<Float8E4M3FNType>(elt)) // fp8 K/V (SdpaProblem::quantized)
    return decodeE4M3(v);
  return arith::ExtFOp::create(b, loc, vec(), v);
}

/// fp8 e4m3 (1 sign, 4 exponent bits of bias 7, 3 mantissa bits) as f32,
/// through binary16, which has the same layout with a 5-bit exponent of
/// bias 15: the byte sign-extended to 16 bits and shifted up by 7 holds
/// the sign at bit 15 (and again at bit 14, cleared) and the magnitude's
/// 7 bits at bits 7..13, an f16 of the value · 2^−8, subnormals included
/// (e4m3's 2^−6 · m/8 is f16's subnormal m·2^7 · 2^−24); the widening to
/// f32 (vcvtph2ps) is exact, and the 2^8 is left to the row's scale
/// (SdpaBuffers::rowScale), one multiply a key instead of one a vector.
/// S.1111.111, NaN in e4m3, becomes an f16 NaN. MLIR 22 has no lowering
/// of arith.extf from f8E4M3FN to LLVM.
Value KernelBuilder::decodeE4M3(Value bytes) {
  auto i16s = VectorType::get({width}, b.getI16Type());
  auto splat16 = [&](int64_t v) {
    return arith::ConstantOp::create(
        b, loc, i16s, DenseElementsAttr::get(i16s, b.getI16IntegerAttr(v).getValue()));
  };
  Value s = arith::ExtSIOp::create(
      b, loc, i16s,
      arith::BitcastOp::create(b, loc, VectorType::get({width}, b.getI8Type()), bytes));
  Value x = arith::ShLIOp::create(b, loc, s, splat16(7));
  // Bit 14 (the sign again) becomes the carry of magnitude + 1, set only
  // when the magnitude's bits are all ones: exponent 31, an f16 NaN. (A
  // compare and a select cost two more ops a vector.)
  Value carry = arith::AddIOp::create(b, loc, arith::AndIOp::create(b, loc, x, splat16(0x3F80)),
                                      splat16(0x80));
  // x with bit 14 from carry: x ^ ((x ^ carry) & 0x4000), one vpternlog.
  Value half = arith::XOrIOp::create(
      b, loc, x,
      arith::AndIOp::create(b, loc, arith::XOrIOp::create(b, loc, x, carry), splat16(0x4000)));
  Value f16s = arith::BitcastOp::create(b, loc, VectorType::get({width}, b.getF16Type()), half);
  return arith::ExtFOp::create(b, loc, vec(), f16s);
}

void KernelBuilder::storeFromF32(Value v, Value m, ValueRange ivs) {
  Type elt = cast<MemRefType>(m.getType()).getElementType();
  if (!elt.isF32()) {
    Type t = elt;
    if (auto vt = dyn_cast<VectorType>(v.getType()))
      t = VectorType::get(vt.getShape(), elt);
    v = arith::TruncFOp::create(b, loc, t, v);
  }
  if (isa<VectorType>(v.getType()))
    vector::StoreOp::create(b, loc, v, m, ivs);
  else
    memref::StoreOp::create(b, loc, v, m, ivs);
}

Value KernelBuilder::loadF32(Value m, ValueRange ivs) {
  Value v = load(m, ivs);
  if (v.getType() != f32())
    v = arith::ExtFOp::create(b, loc, f32(), v);
  return v;
}

void KernelBuilder::loop(Value lb, Value ub, int64_t step,
                        function_ref<void(Value)> body) {
  scf::ForOp::create(b, loc, lb, ub, idx(step), ValueRange{},
                     [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                       OpBuilder::InsertionGuard g(b);
                       b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                       body(iv);
                       scf::YieldOp::create(b, loc);
                     });
}

SmallVector<Value>
KernelBuilder::loopCarry(Value lb, Value ub, int64_t step, ValueRange init,
                        function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto op = scf::ForOp::create(
      b, loc, lb, ub, idx(step), init,
      [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(iv, args));
      });
  return SmallVector<Value>(op.getResults());
}

void KernelBuilder::ifThen(Value cond, function_ref<void()> body) {
  scf::IfOp::create(b, loc, cond, [&](OpBuilder &nb, Location) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    body();
    scf::YieldOp::create(b, loc);
  });
}

void KernelBuilder::ifThenElse(Value cond, function_ref<void()> then,
                              function_ref<void()> otherwise) {
  auto op = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElse=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
  b.setInsertionPoint(op.elseBlock()->getTerminator());
  otherwise();
}

Value KernelBuilder::ifElse(Value cond, Type type, function_ref<Value()> then,
                           function_ref<Value()> otherwise) {
  auto op = scf::IfOp::create(b, loc, TypeRange{type}, cond, /*withElse=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(op.thenBlock());
  scf::YieldOp::create(b, loc, then());
  b.setInsertionPointToStart(op.elseBlock());
  scf::YieldOp::create(b, loc, otherwise());
  return op.getResult(0);
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
