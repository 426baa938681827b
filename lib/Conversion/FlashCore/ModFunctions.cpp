//===- ModFunctions.cpp - score and mask functions in a kernel ------------===//
//
// See ModFunctions.h: the body of a function cloned lane-wide.
//
//===----------------------------------------------------------------------===//
#include "ModFunctions.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <numeric>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace {

class ModEmitter {
public:
  ModEmitter(KernelBuilder &fb, unsigned positions, ValueRange captures)
      : fb(fb), b(fb.b), loc(fb.loc), positions(positions),
        captures(captures) {}

  /// Binds a block argument of the function to `v`; `laneBase`, if given,
  /// says v = laneBase + lane.
  void bind(Value arg, Value v, Value laneBase = {}) {
    values.map(arg, v);
    if (laneBase)
      consecutive[v] = {laneBase, 1};
  }

  /// Emits the ops of `block` and returns the values its terminator yields.
  SmallVector<Value> emitBlock(Block &block);

private:
  KernelBuilder &fb;
  OpBuilder &b;
  Location loc;
  unsigned positions;
  ValueRange captures;
  IRMapping values;
  /// Vector values known to be base + step·(0, 1, …, width-1) with step
  /// ±1, by their scalar base and step: a read indexed by one is a
  /// contiguous load (reversed for step -1).
  struct Lanes {
    Value base;
    int step;
  };
  DenseMap<Value, Lanes> consecutive;

  bool lanes() const { return fb.width > 1; }
  static bool isVector(Value v) { return isa<VectorType>(v.getType()); }
  Type laneType(Type t) const { return lanes() ? VectorType::get({fb.width}, t) : t; }
  /// `v` as a vector when `wide` (broadcast if it is a scalar).
  Value widen(Value v, bool wide) {
    if (!wide || isVector(v))
      return v;
    return vector::BroadcastOp::create(b, loc, laneType(v.getType()), v);
  }
  /// A constant index, as a vector when `like` is one.
  Value indexLike(Value like, int64_t c) { return widen(fb.idx(c), isVector(like)); }

  void emitOp(Operation &op);
  void emitIf(scf::IfOp op);
  Value emitRead(tensor::ExtractOp op);
  Value readLanes(Value buffer, ArrayRef<Value> indices, Type elt);
  /// Follows the unit stride through index arithmetic with a lane-invariant
  /// operand.
  void trackStride(Operation &op, Operation *emitted);
};

} // namespace

SmallVector<Value> ModEmitter::emitBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    emitOp(op);
  SmallVector<Value> out;
  for (Value v : block.getTerminator()->getOperands())
    out.push_back(values.lookup(v));
  return out;
}

void ModEmitter::emitOp(Operation &op) {
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return emitIf(ifOp);
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    values.map(extract.getResult(), emitRead(extract));
    return;
  }
  SmallVector<Value> operands;
  bool wide = false;
  for (Value v : op.getOperands()) {
    operands.push_back(values.lookup(v));
    wide |= isVector(operands.back());
  }
  // The kernels' own exp2 and tanh: the same polynomial on every lane
  // (and no libm call per lane).
  Type result = op.getNumResults() == 1 ? op.getResult(0).getType() : Type();
  if (result && result.isF32()) {
    if (isa<math::Exp2Op>(op))
      return values.map(op.getResult(0), fb.exp2(operands[0]));
    if (isa<math::ExpOp>(op))
      return values.map(op.getResult(0),
                        fb.exp2(fb.fmul(operands[0], widen(fb.f(kLog2E), wide))));
    if (isa<math::TanhOp>(op))
      return values.map(op.getResult(0), fb.tanh(operands[0]));
  }
  // Any other op is elementwise (arith, math): its clone with the lane-wide
  // operands and result types.
  IRMapping local;
  for (auto [old, now] : llvm::zip_equal(op.getOperands(), operands))
    local.map(old, widen(now, wide));
  Operation *emitted = b.clone(op, local);
  if (wide)
    for (Value r : emitted->getResults())
      r.setType(laneType(r.getType()));
  for (auto [old, now] : llvm::zip_equal(op.getResults(), emitted->getResults()))
    values.map(old, now);
  trackStride(op, emitted);
}

void ModEmitter::trackStride(Operation &op, Operation *emitted) {
  if (emitted->getNumResults() != 1 || !isVector(emitted->getResult(0)))
    return;
  auto lanesOf = [&](Value old) { return consecutive.lookup(values.lookup(old)); };
  auto scalar = [&](Value old) -> Value {
    Value v = values.lookup(old);
    return isVector(v) ? Value() : v;
  };
  Lanes out{};
  if (isa<arith::AddIOp, arith::SubIOp>(op)) {
    bool add = isa<arith::AddIOp>(op);
    Value lhs = op.getOperand(0), rhs = op.getOperand(1);
    if (Lanes l = lanesOf(lhs); l.base && scalar(rhs))
      out = {add ? fb.add(l.base, scalar(rhs)) : fb.sub(l.base, scalar(rhs)), l.step};
    else if (Lanes r = lanesOf(rhs); r.base && scalar(lhs))
      out = {add ? fb.add(scalar(lhs), r.base) : fb.sub(scalar(lhs), r.base),
             add ? r.step : -r.step};
  } else if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    // Positions and their sums fit any integer type a function casts to.
    if (Lanes l = lanesOf(op.getOperand(0)); l.base) {
      IRMapping m;
      m.map(op.getOperand(0), l.base);
      out = {b.clone(op, m)->getResult(0), l.step};
    }
  }
  if (out.base)
    consecutive[emitted->getResult(0)] = out;
}

void ModEmitter::emitIf(scf::IfOp op) {
  Value cond = values.lookup(op.getCondition());
  if (op.getNumResults() == 0)
    return; // pure ops only: an if without results computes nothing
  SmallVector<Value> thenVals = emitBlock(op.getThenRegion().front());
  SmallVector<Value> elseVals = emitBlock(op.getElseRegion().front());
  for (auto [r, t, e] : llvm::zip_equal(op.getResults(), thenVals, elseVals)) {
    bool wide = isVector(cond) || isVector(t) || isVector(e);
    values.map(r, fb.select(cond, widen(t, wide), widen(e, wide)));
  }
}

Value ModEmitter::emitRead(tensor::ExtractOp op) {
  unsigned which = cast<BlockArgument>(op.getTensor()).getArgNumber() - positions;
  Value capture = captures[which];
  auto shaped = cast<ShapedType>(capture.getType());
  Type elt = shaped.getElementType();
  // Each index clamped into [0, size - 1]: a function evaluated at a
  // padding or masked position never reads outside the capture.
  SmallVector<Value> raw, clamped;
  SmallVector<Value> sizes;
  for (auto [d, idx] : llvm::enumerate(op.getIndices())) {
    Value v = values.lookup(idx);
    Value size = isa<MemRefType>(shaped) ? Value(memref::DimOp::create(b, loc, capture, d))
                                         : Value(tensor::DimOp::create(b, loc, capture, d));
    Value last = fb.sub(size, fb.idx(1));
    Value c = arith::MaxSIOp::create(b, loc, v, indexLike(v, 0));
    c = arith::MinSIOp::create(b, loc, c, widen(last, isVector(v)));
    raw.push_back(v);
    clamped.push_back(c);
    sizes.push_back(size);
  }
  if (isa<RankedTensorType>(shaped))
    return tensor::ExtractOp::create(b, loc, capture, clamped);
  if (llvm::none_of(clamped, isVector))
    return memref::LoadOp::create(b, loc, capture, clamped);
  // A vector load where the last index is ±kv + offset and the lanes lie
  // in bounds (its clamp then changes nothing); the general read otherwise.
  Lanes last = consecutive.lookup(raw.back());
  bool leadingScalar = llvm::none_of(ArrayRef<Value>(clamped).drop_back(), isVector);
  if (last.base && leadingScalar && !elt.isInteger(1)) {
    Value lo = last.step == 1 ? last.base : fb.sub(last.base, fb.idx(fb.width - 1));
    Value inBounds =
        fb.andI(fb.le(fb.idx(0), lo), fb.le(fb.add(lo, fb.idx(fb.width)), sizes.back()));
    Type vt = laneType(elt);
    return fb.ifElse(
        inBounds, vt,
        [&] {
          SmallVector<Value> at(ArrayRef<Value>(clamped).drop_back());
          at.push_back(lo);
          Value v = vector::LoadOp::create(b, loc, vt, capture, at);
          if (last.step == 1)
            return v;
          SmallVector<int64_t> reversed;
          for (int64_t l = fb.width - 1; l >= 0; --l)
            reversed.push_back(l);
          return Value(vector::ShuffleOp::create(b, loc, v, v, reversed));
        },
        [&] { return readLanes(capture, clamped, elt); });
  }
  return readLanes(capture, clamped, elt);
}

/// The elements at in-bounds `indices` (some of them vectors): a gather when
/// only the last index varies, else one load per lane.
Value ModEmitter::readLanes(Value buffer, ArrayRef<Value> indices, Type elt) {
  auto vt = cast<VectorType>(laneType(elt));
  bool leadingScalar = llvm::none_of(indices.drop_back(), isVector);
  if (leadingScalar && !elt.isInteger(1)) {
    SmallVector<Value> at(indices.drop_back());
    at.push_back(fb.idx(0));
    Value all = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({fb.width}, b.getI1Type()), ArrayRef<int64_t>{fb.width});
    Value pass = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
    return vector::GatherOp::create(b, loc, vt, buffer, at, indices.back(), all, pass);
  }
  Value out = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
  for (int64_t lane = 0; lane < fb.width; ++lane) {
    SmallVector<Value> at;
    for (Value i : indices)
      at.push_back(isVector(i) ? Value(vector::ExtractOp::create(b, loc, i, lane)) : i);
    Value x = memref::LoadOp::create(b, loc, buffer, at);
    out = vector::InsertOp::create(b, loc, x, out, lane);
  }
  return out;
}

Value mlir::attn::flash::emitModFunction(KernelBuilder &fb, Region &body, ModKind kind,
                                         const ModPoint &at, ValueRange captures) {
  Block &entry = body.front();
  unsigned positions = modFunctionPositions(kind);
  ModEmitter e(fb, positions, captures);
  unsigned arg = 0;
  if (kind == ModKind::Score)
    e.bind(entry.getArgument(arg++), at.score);
  e.bind(entry.getArgument(arg++), at.b);
  e.bind(entry.getArgument(arg++), at.h);
  e.bind(entry.getArgument(arg++), at.q);
  if (fb.width > 1) {
    auto vt = VectorType::get({fb.width}, fb.b.getIndexType());
    SmallVector<int64_t> steps(fb.width);
    std::iota(steps.begin(), steps.end(), 0);
    Value lanes = arith::ConstantOp::create(
        fb.b, fb.loc, vt, DenseElementsAttr::get(vt, ArrayRef<int64_t>(steps)));
    Value kv = arith::AddIOp::create(fb.b, fb.loc,
                                     vector::BroadcastOp::create(fb.b, fb.loc, vt, at.kv), lanes);
    e.bind(entry.getArgument(arg++), kv, at.kv);
  } else {
    e.bind(entry.getArgument(arg++), at.kv);
  }
  return e.emitBlock(entry).front();
}

Value mlir::attn::flash::scoreModLog2(KernelBuilder &fb, Region &body, ModPoint at, Value x,
                                      ValueRange captures) {
  at.score = fb.fmul(x, fb.constantLike(x.getType(), 1.0 / kLog2E));
  Value y = emitModFunction(fb, body, ModKind::Score, at, captures);
  return fb.fmul(y, fb.constantLike(y.getType(), kLog2E));
}
