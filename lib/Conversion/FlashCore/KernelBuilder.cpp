//===- KernelBuilder.cpp - the kernels' op builder -------------------------===//
//
// KernelBuilder (FlashCore.h): the scalar and vector arithmetic, loads
// and stores that convert f16, bf16, int8 and fp8 to f32 and back, the
// exp2/log/tanh polynomials, lane combines, and the loop and branch
// builders every fused kernel (CPU, GPU, backward) is written with.
//
//===----------------------------------------------------------------------===//
#include "FlashCore.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

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

