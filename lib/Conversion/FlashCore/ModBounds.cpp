//===- ModBounds.cpp - a mask function bounded over a tile ----------------===//
//
// See ModBounds.h. Integer bounds are inclusive [lo, hi] in the value's own
// type; i1 bounds are (always, possibly). The emission goes into a detached
// block first and is moved into place only when the result is bounded.
//
//===----------------------------------------------------------------------===//
#include "ModBounds.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace {

struct Bounds {
  Value lo, hi; ///< integers: [lo, hi]; i1: lo = always, hi = possibly
  explicit operator bool() const { return bool(lo); }
};

/// The value of a constant i1, else nullopt.
std::optional<bool> constantBool(Value v) {
  APInt k;
  if (v.getType().isInteger(1) && matchPattern(v, m_ConstantInt(&k)))
    return !k.isZero();
  return std::nullopt;
}

class BoundsEmitter {
public:
  BoundsEmitter(KernelBuilder &fb, ValueRange captures, int64_t scanLimit)
      : fb(fb), b(fb.b), loc(fb.loc), captures(captures), scanLimit(scanLimit) {}

  void bind(Value arg, Bounds r) { known[arg] = r; }
  Bounds of(Value v) { return known.lookup(v); }
  /// Bounds op's result (visit), or marks an i1 result it cannot bound as
  /// unknown.
  void visitOrGiveUp(Operation &op, unsigned positions);

private:
  void visit(Operation &op, unsigned positions);
  KernelBuilder &fb;
  OpBuilder &b;
  Location loc;
  ValueRange captures;
  int64_t scanLimit;
  DenseMap<Value, Bounds> known;

  Value sel(Value c, Value x, Value y) {
    if (std::optional<bool> k = constantBool(c))
      return *k ? x : y;
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  // The i1 helpers fold constant operands, so that an unknown value
  // (false, true) combined with a known one stays as informative as the
  // known one allows and two unknowns stay recognisably unknown.
  Value andB(Value x, Value y) {
    std::optional<bool> kx = constantBool(x), ky = constantBool(y);
    if (kx || ky)
      return (kx && !*kx) ? x : (ky && !*ky) ? y : kx ? y : x;
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value orB(Value x, Value y) {
    std::optional<bool> kx = constantBool(x), ky = constantBool(y);
    if (kx || ky)
      return (kx && *kx) ? x : (ky && *ky) ? y : kx ? y : x;
    return arith::OrIOp::create(b, loc, x, y);
  }
  Value notB(Value x) {
    if (std::optional<bool> k = constantBool(x))
      return boolConstant(!*k);
    return fb.notI(x);
  }
  Value boolConstant(bool v) { return constant(b.getI1Type(), v); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value minS(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxS(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value constant(Type t, int64_t v) {
    return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
  }
  Bounds compare(arith::CmpIPredicate p, Bounds x, Bounds y);
  Bounds read(tensor::ExtractOp op, ArrayRef<Bounds> indices, unsigned positions);
};

} // namespace

Bounds BoundsEmitter::compare(arith::CmpIPredicate p, Bounds x, Bounds y) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::slt:
    return {cmp(P::slt, x.hi, y.lo), cmp(P::slt, x.lo, y.hi)};
  case P::sle:
    return {cmp(P::sle, x.hi, y.lo), cmp(P::sle, x.lo, y.hi)};
  case P::sgt:
    return {cmp(P::sgt, x.lo, y.hi), cmp(P::sgt, x.hi, y.lo)};
  case P::sge:
    return {cmp(P::sge, x.lo, y.hi), cmp(P::sge, x.hi, y.lo)};
  case P::eq: {
    Value points = andB(cmp(P::eq, x.lo, x.hi), cmp(P::eq, y.lo, y.hi));
    Value always = andB(points, cmp(P::eq, x.lo, y.lo));
    Value overlap = andB(cmp(P::sle, x.lo, y.hi), cmp(P::sle, y.lo, x.hi));
    return {always, overlap};
  }
  case P::ne: {
    Bounds e = compare(P::eq, x, y);
    return {notB(e.hi), notB(e.lo)};
  }
  default: {
    // Unsigned: the signed answer when both ranges are non-negative,
    // unknown otherwise.
    P signedP = p == P::ult ? P::slt : p == P::ule ? P::sle : p == P::ugt ? P::sgt : P::sge;
    Value zero = constant(x.lo.getType(), 0);
    Value nonNeg = andB(cmp(P::sge, x.lo, zero), cmp(P::sge, y.lo, zero));
    Bounds s = compare(signedP, x, y);
    return {andB(nonNeg, s.lo), orB(notB(nonNeg), s.hi)};
  }
  }
}

/// The bounds of capture[indices] over the indices' box: the min and max of
/// the (clamped) box, scanned when it holds at most scanLimit elements, the
/// element type's extremes otherwise. The box is walked by one linear
/// counter, delinearised innermost-first.
Bounds BoundsEmitter::read(tensor::ExtractOp op, ArrayRef<Bounds> indices,
                           unsigned positions) {
  unsigned which = cast<BlockArgument>(op.getTensor()).getArgNumber() - positions;
  Value buf = captures[which];
  auto type = cast<MemRefType>(buf.getType());
  Type elt = type.getElementType();
  if (!isa<IntegerType, IndexType>(elt))
    return {};
  SmallVector<Value> lo, extent;
  Value box = fb.idx(1);
  for (auto [d, index] : llvm::enumerate(indices)) {
    Value last = fb.sub(memref::DimOp::create(b, loc, buf, d), fb.idx(1));
    auto clamp = [&](Value i) { return fb.minI(fb.maxI(i, fb.idx(0)), last); };
    Value l = clamp(index.lo), h = clamp(index.hi);
    lo.push_back(l);
    extent.push_back(fb.add(fb.sub(h, l), fb.idx(1)));
    // Capped at scanLimit + 1 so that the product cannot overflow.
    box = fb.minI(fb.mul(box, extent.back()), fb.idx(scanLimit + 1));
  }
  auto at = [&](Value t) {
    SmallVector<Value> idx(indices.size());
    for (int d = indices.size() - 1; d >= 0; --d) {
      idx[d] = fb.add(lo[d], d == 0 ? t : fb.rem(t, extent[d]));
      if (d)
        t = fb.div(t, extent[d]);
    }
    return memref::LoadOp::create(b, loc, buf, idx).getResult();
  };
  Value first = at(fb.idx(0));
  bool isBool = elt.isInteger(1);
  SmallVector<Value> range = fb.loopCarry(
      fb.idx(1), fb.minI(box, fb.idx(scanLimit)), 1, {first, first},
      [&](Value t, ValueRange mm) {
        Value x = at(t);
        if (isBool)
          return SmallVector<Value>{andB(mm[0], x), orB(mm[1], x)};
        return SmallVector<Value>{minS(mm[0], x), maxS(mm[1], x)};
      });
  // A box larger than the scan: unbounded (the type's extremes).
  Value complete = fb.cmpI(arith::CmpIPredicate::sle, box, fb.idx(scanLimit));
  unsigned bits = isa<IndexType>(elt) ? 64 : elt.getIntOrFloatBitWidth();
  int64_t minV = isBool ? 0 : llvm::minIntN(bits), maxV = isBool ? 1 : llvm::maxIntN(bits);
  if (isBool)
    return {sel(complete, range[0], constant(elt, 0)), sel(complete, range[1], constant(elt, 1))};
  return {sel(complete, range[0], constant(elt, minV)), sel(complete, range[1], constant(elt, maxV))};
}

void BoundsEmitter::visit(Operation &op, unsigned positions) {
  if (op.getNumResults() != 1)
    return;
  Value r = op.getResult(0);
  auto operand = [&](unsigned i) { return of(op.getOperand(i)); };
  IntegerAttr c;
  if (matchPattern(r, m_Constant(&c))) {
    Value v = arith::ConstantOp::create(b, loc, r.getType(), c);
    known[r] = {v, v};
    return;
  }
  // An i1's bounds are the pair (always, possibly), not an interval of
  // signed values (true is -1 as a signed i1): integer arithmetic and
  // ordered compares on i1 are left unknown, and equality and extsi get
  // their own rules below.
  bool boolOperand = op.getNumOperands() && op.getOperand(0).getType().isInteger(1);
  if (isa<arith::AddIOp, arith::SubIOp, arith::MinSIOp, arith::MaxSIOp, arith::MulIOp,
          arith::FloorDivSIOp, arith::DivSIOp>(op) &&
      r.getType().isInteger(1))
    return;
  if (isa<arith::AddIOp, arith::SubIOp, arith::MinSIOp, arith::MaxSIOp>(op)) {
    Bounds x = operand(0), y = operand(1);
    if (!x || !y)
      return;
    if (isa<arith::AddIOp>(op))
      known[r] = {fb.add(x.lo, y.lo), fb.add(x.hi, y.hi)};
    else if (isa<arith::SubIOp>(op))
      known[r] = {fb.sub(x.lo, y.hi), fb.sub(x.hi, y.lo)};
    else if (isa<arith::MinSIOp>(op))
      known[r] = {minS(x.lo, y.lo), minS(x.hi, y.hi)};
    else
      known[r] = {maxS(x.lo, y.lo), maxS(x.hi, y.hi)};
    return;
  }
  if (isa<arith::MulIOp, arith::FloorDivSIOp, arith::DivSIOp>(op)) {
    // By a constant: monotone (multiplication by a negative one reverses).
    APInt k;
    bool mul = isa<arith::MulIOp>(op);
    unsigned varying = 0;
    if (!matchPattern(op.getOperand(1), m_ConstantInt(&k))) {
      if (!mul || !matchPattern(op.getOperand(0), m_ConstantInt(&k)))
        return;
      varying = 1;
    }
    Bounds x = operand(varying);
    if (!x || (!mul && !k.isStrictlyPositive()))
      return;
    Value kv = constant(r.getType(), k.getSExtValue());
    auto apply = [&](Value v) -> Value {
      if (mul)
        return fb.mul(v, kv);
      if (isa<arith::FloorDivSIOp>(op))
        return arith::FloorDivSIOp::create(b, loc, v, kv);
      return arith::DivSIOp::create(b, loc, v, kv);
    };
    Value lo = apply(x.lo), hi = apply(x.hi);
    known[r] = mul && k.isNegative() ? Bounds{hi, lo} : Bounds{lo, hi};
    return;
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp>(op)) {
    Bounds x = operand(0);
    if (!x)
      return;
    // extui of an i1 is the bool as 0/1.
    auto castOf = [&](Value v) {
      IRMapping m;
      m.map(op.getOperand(0), v);
      return b.clone(op, m)->getResult(0);
    };
    // An i1 sign-extended is 0 or -1: possibly true gives the minimum.
    bool signExtended = boolOperand && !isa<arith::ExtUIOp>(op);
    known[r] = signExtended ? Bounds{castOf(x.hi), castOf(x.lo)}
                            : Bounds{castOf(x.lo), castOf(x.hi)};
    return;
  }
  if (auto s = dyn_cast<arith::SelectOp>(op)) {
    Bounds cnd = operand(0), x = operand(1), y = operand(2);
    if (!cnd || !x || !y)
      return;
    bool isBool = r.getType().isInteger(1);
    Value loBoth = isBool ? andB(x.lo, y.lo) : minS(x.lo, y.lo);
    Value hiBoth = isBool ? orB(x.hi, y.hi) : maxS(x.hi, y.hi);
    Value never = notB(cnd.hi);
    known[r] = {sel(cnd.lo, x.lo, sel(never, y.lo, loBoth)),
                sel(cnd.lo, x.hi, sel(never, y.hi, hiBoth))};
    return;
  }
  if (auto ci = dyn_cast<arith::CmpIOp>(op)) {
    Bounds x = operand(0), y = operand(1);
    if (!x || !y)
      return;
    if (!boolOperand) {
      known[r] = compare(ci.getPredicate(), x, y);
      return;
    }
    // Two i1: surely equal when both are surely true or both surely
    // false; possibly equal unless one is surely true and the other
    // surely false.
    using P = arith::CmpIPredicate;
    if (ci.getPredicate() != P::eq && ci.getPredicate() != P::ne)
      return;
    Value always = orB(andB(x.lo, y.lo), andB(notB(x.hi), notB(y.hi)));
    Value possibly = notB(orB(andB(x.lo, notB(y.hi)), andB(notB(x.hi), y.lo)));
    known[r] = ci.getPredicate() == P::eq ? Bounds{always, possibly}
                                          : Bounds{notB(possibly), notB(always)};
    return;
  }
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op) && r.getType().isInteger(1)) {
    Bounds x = operand(0), y = operand(1);
    if (!x || !y)
      return;
    if (isa<arith::AndIOp>(op))
      known[r] = {andB(x.lo, y.lo), andB(x.hi, y.hi)};
    else if (isa<arith::OrIOp>(op))
      known[r] = {orB(x.lo, y.lo), orB(x.hi, y.hi)};
    else // x ^ y is surely true when one is surely true and the other surely false
      known[r] = {orB(andB(x.lo, notB(y.hi)), andB(notB(x.hi), y.lo)),
                  orB(andB(x.hi, notB(y.lo)), andB(notB(x.lo), y.hi))};
    return;
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    SmallVector<Bounds> indices;
    for (Value i : extract.getIndices())
      if (Bounds bi = of(i))
        indices.push_back(bi);
    if (indices.size() == extract.getIndices().size())
      if (Bounds v = read(extract, indices, positions))
        known[r] = v;
    return;
  }
}

void BoundsEmitter::visitOrGiveUp(Operation &op, unsigned positions) {
  visit(op, positions);
  // An i1 the rules above do not bound (a float compare, an scf.if, a
  // compare of an unbounded integer) may be either: (false, true). The
  // function's result can still be bounded through it: x & unknown is
  // never kept where x is never kept.
  for (Value r : op.getResults())
    if (r.getType().isInteger(1) && !known.count(r))
      known[r] = {boolConstant(false), boolConstant(true)};
}

std::optional<MaskVerdict>
mlir::attn::flash::boundMaskFunction(KernelBuilder &fb, Region &body, Value batch,
                                     IndexRange heads, IndexRange queries, IndexRange keys,
                                     ValueRange captures, int64_t scanLimit) {
  Block &entry = body.front();
  OpBuilder::InsertionGuard guard(fb.b);
  Block *target = fb.b.getInsertionBlock();
  Block::iterator point = fb.b.getInsertionPoint();
  // Emitted aside; moved into place only if the result is bounded.
  auto scratch = std::make_unique<Block>();
  fb.b.setInsertionPointToStart(scratch.get());
  BoundsEmitter e(fb, captures, scanLimit);
  e.bind(entry.getArgument(0), {batch, batch});
  e.bind(entry.getArgument(1), {heads.lo, heads.hi});
  e.bind(entry.getArgument(2), {queries.lo, queries.hi});
  e.bind(entry.getArgument(3), {keys.lo, keys.hi});
  unsigned positions = modFunctionPositions(ModKind::Mask);
  for (Operation &op : entry.without_terminator())
    e.visitOrGiveUp(op, positions);
  Bounds out = e.of(entry.getTerminator()->getOperand(0));
  // (false, true): nothing known, as good as unbounded.
  if (!out || (constantBool(out.lo) == false && constantBool(out.hi) == true))
    return std::nullopt; // scratch and what it holds are destroyed
  target->getOperations().splice(point, scratch->getOperations());
  return MaskVerdict{out.hi, out.lo};
}

bool mlir::attn::flash::isBoundable(Region &body, ValueRange captures) {
  // The bounds emitted into a scratch block over placeholder arguments and
  // thrown away with it.
  Location loc = body.getLoc();
  OpBuilder b(body.getContext());
  Block scratch;
  SmallVector<Value> pos;
  for (int i = 0; i < 7; ++i)
    pos.push_back(scratch.addArgument(b.getIndexType(), loc));
  SmallVector<Value> buffers;
  for (Value c : captures) {
    auto t = cast<RankedTensorType>(c.getType());
    buffers.push_back(
        scratch.addArgument(MemRefType::get(t.getShape(), t.getElementType()), loc));
  }
  b.setInsertionPointToStart(&scratch);
  KernelBuilder fb{b, loc, 1};
  return boundMaskFunction(fb, body, pos[0], {pos[1], pos[2]}, {pos[3], pos[4]},
                           {pos[5], pos[6]}, buffers, /*scanLimit=*/2)
      .has_value();
}
