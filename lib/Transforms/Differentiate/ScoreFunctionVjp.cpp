//===- ScoreFunctionVjp.cpp - the VJPs of score and mask functions --------===//
//
// DifferentiableOpInterface for the function ops (VjpRules.cpp has the
// rest of the attn ops'):
//
//   mask_mod      dx = dy where y is not −inf, else 0
//   score_mod     dx = dy · f'(x): f' a score function built from f's body
//                 by forward-mode rules (ScoreDerivative); a float capture c
//                 computed from the arguments: c̄[idx] += dy · ∂f/∂c[idx]
//                 at each read, scattered over the scores
//
// The fused backward (attn.sdpa_grad's score_mod_grad region) takes the same
// derivative, built by buildScoreDerivative.
//
//===----------------------------------------------------------------------===//
#include "VjpRules.h"

#include "attn/Transforms/Passes.h"

#include "Conversion/AttnToLinalg/LinalgBuilders.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;
using namespace mlir::attn::vjp;

namespace {

/// The derivative of a score function with respect to its score, as a
/// score function of its own: its body is the original's, cloned, with the
/// tangent of each float value computed beside it (forward mode, the
/// score's tangent 1; positions, captures and constants have none), and
/// yields the tangent of the original's result. scf.if gets one more
/// result per float result, its tangent.
class ScoreDerivative {
public:
  ScoreDerivative(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// Fills `dst` (an empty block with `src`'s arguments) with the body of
  /// d f / d score; `src` is the function's entry block.
  LogicalResult build(Block &src, Block &dst) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&dst);
    IRMapping map;
    map.map(src.getArguments(), dst.getArguments());
    tangent[src.getArgument(0)] = constant(b.getF32Type(), 1.0);
    SmallVector<Value> values, tangents;
    if (failed(cloneBlock(src, map, values, tangents)))
      return failure();
    YieldOp::create(b, loc, tangents.front() ? tangents.front()
                                             : constant(values.front().getType(), 0.0));
    return success();
  }

  /// Clones the function body `src` at the builder's point for a loop that
  /// evaluates it one score at a time (`map` maps its arguments to the
  /// loop's values) and returns d f / d `read` there (null: 0), `read` one
  /// of its capture reads. Every read is clamped into its capture's shape,
  /// as every lowering reads it, and scf.if becomes a select of both
  /// branches (the body is pure and its reads clamped), so that each read
  /// and its indices exist at the loop's level; `map` then maps `read` to
  /// its clamped copy.
  FailureOr<Value> derivativeByRead(Block &src, IRMapping &map, tensor::ExtractOp read) {
    flat = true;
    seed = read.getResult();
    SmallVector<Value> values, tangents;
    if (failed(cloneBlock(src, map, values, tangents)))
      return failure();
    return tangents.front();
  }

private:
  OpBuilder &b;
  Location loc;
  DenseMap<Value, Value> tangent; ///< original value → its tangent (none: 0)
  bool flat = false; ///< derivativeByRead: clamped reads, no scf.if
  Value seed;        ///< derivativeByRead: the read whose tangent is 1

  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  }
  Value orZero(Value t, Type type) { return t ? t : constant(type, 0.0); }
  Value add(Value x, Value y) { return !x ? y : !y ? x : arith::AddFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x) : x; }
  Value scaled(Value t, Value by) { return t ? mul(t, by) : t; }

  /// Clones `src`'s ops but its terminator at the builder's point; returns
  /// the terminator's operands, mapped, and their tangents (null: 0).
  LogicalResult cloneBlock(Block &src, IRMapping &map, SmallVectorImpl<Value> &values,
                           SmallVectorImpl<Value> &tangents) {
    for (Operation &op : src.without_terminator()) {
      if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
        if (failed(flat ? flattenIf(ifOp, map) : cloneIf(ifOp, map)))
          return failure();
        continue;
      }
      if (auto read = dyn_cast<tensor::ExtractOp>(op); read && flat) {
        cloneClampedRead(read, map);
        if (read.getResult() == seed)
          tangent[seed] = constant(seed.getType(), 1.0);
        continue;
      }
      Operation *copy = b.clone(op, map);
      if (failed(differentiate(&op, copy)))
        return failure();
    }
    for (Value v : src.getTerminator()->getOperands()) {
      values.push_back(map.lookupOrDefault(v));
      tangents.push_back(tangent.lookup(v));
    }
    return success();
  }

  /// scf.if → an scf.if that also yields the tangent of each float result.
  LogicalResult cloneIf(scf::IfOp op, IRMapping &map) {
    SmallVector<Type> types(op.getResultTypes());
    SmallVector<unsigned> floats;
    for (auto [i, t] : llvm::enumerate(op.getResultTypes()))
      if (isa<FloatType>(t)) {
        floats.push_back(i);
        types.push_back(t);
      }
    auto copy = scf::IfOp::create(b, loc, types, map.lookup(op.getCondition()),
                                  /*withElse=*/true);
    for (auto [from, to] : {std::pair{&op.getThenRegion(), &copy.getThenRegion()},
                            std::pair{&op.getElseRegion(), &copy.getElseRegion()}}) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&to->front());
      SmallVector<Value> values, tangents;
      if (!from->empty() && failed(cloneBlock(from->front(), map, values, tangents)))
        return failure();
      for (unsigned i : floats)
        values.push_back(orZero(tangents[i], types[i]));
      scf::YieldOp::create(b, loc, values);
    }
    for (auto [i, r] : llvm::enumerate(op.getResults()))
      map.map(r, copy.getResult(i));
    for (auto [k, i] : llvm::enumerate(floats))
      tangent[op.getResult(i)] = copy.getResult(op.getNumResults() + k);
    return success();
  }

  /// scf.if → both branches, then a select of their results (and of
  /// their tangents).
  LogicalResult flattenIf(scf::IfOp op, IRMapping &map) {
    SmallVector<Value> thenValues, thenTangents, elseValues, elseTangents;
    if (failed(cloneBlock(op.getThenRegion().front(), map, thenValues, thenTangents)))
      return failure();
    if (op.getNumResults() == 0)
      return success(); // pure ops only: computes nothing the function yields
    if (failed(cloneBlock(op.getElseRegion().front(), map, elseValues, elseTangents)))
      return failure();
    Value cond = map.lookup(op.getCondition());
    for (auto [i, r] : llvm::enumerate(op.getResults())) {
      map.map(r, arith::SelectOp::create(b, loc, cond, thenValues[i], elseValues[i]));
      if (thenTangents[i] || elseTangents[i])
        tangent[r] = arith::SelectOp::create(b, loc, cond, orZero(thenTangents[i], r.getType()),
                                             orZero(elseTangents[i], r.getType()));
    }
    return success();
  }

  /// A capture read with each index clamped into [0, size − 1].
  void cloneClampedRead(tensor::ExtractOp read, IRMapping &map) {
    Value capture = map.lookup(read.getTensor());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> at;
    for (auto [d, idx] : llvm::enumerate(read.getIndices())) {
      Value last = arith::SubIOp::create(b, loc, tensor::DimOp::create(b, loc, capture, d), one);
      Value i = arith::MaxSIOp::create(b, loc, map.lookup(idx), zero);
      at.push_back(arith::MinSIOp::create(b, loc, i, last));
    }
    map.map(read.getResult(), tensor::ExtractOp::create(b, loc, capture, at).getResult());
  }

  /// The tangent of `op`'s result, computed after `copy` (its clone).
  LogicalResult differentiate(Operation *op, Operation *copy) {
    if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
      return success();
    SmallVector<Value> t;
    bool any = false;
    for (Value v : op->getOperands()) {
      t.push_back(tangent.lookup(v));
      any |= bool(t.back());
    }
    // No float operand has a tangent (constants, capture reads, int→float
    // casts among them): the result has none either.
    if (!any)
      return success();
    Value y = copy->getResult(0);
    Type type = y.getType();
    auto x = [&](unsigned i) { return copy->getOperand(i); };
    Value d;
    if (isa<arith::AddFOp>(op))
      d = add(t[0], t[1]);
    else if (isa<arith::SubFOp>(op))
      d = add(t[0], neg(t[1]));
    else if (isa<arith::MulFOp>(op))
      d = add(scaled(t[0], x(1)), scaled(t[1], x(0)));
    else if (isa<arith::DivFOp>(op)) // (ta − y·tb) / b
      d = div(add(t[0], neg(scaled(t[1], y))), x(1));
    else if (isa<arith::NegFOp>(op))
      d = neg(t[0]);
    else if (isa<arith::ExtFOp>(op))
      d = arith::ExtFOp::create(b, loc, type, t[0]);
    else if (isa<arith::TruncFOp>(op))
      d = arith::TruncFOp::create(b, loc, type, t[0]);
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp>(op)) {
      bool max = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
      Value first = arith::CmpFOp::create(
          b, loc, max ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE, x(0), x(1));
      d = arith::SelectOp::create(b, loc, first, orZero(t[0], type), orZero(t[1], type));
    } else if (isa<arith::SelectOp>(op))
      d = arith::SelectOp::create(b, loc, x(0), orZero(t[1], type), orZero(t[2], type));
    else if (isa<math::TanhOp>(op))
      d = scaled(t[0], arith::SubFOp::create(b, loc, constant(type, 1.0), mul(y, y)));
    else if (isa<math::ExpOp>(op))
      d = scaled(t[0], y);
    else if (isa<math::Exp2Op>(op))
      d = scaled(t[0], mul(y, constant(type, M_LN2)));
    else if (isa<math::ExpM1Op>(op))
      d = scaled(t[0], arith::AddFOp::create(b, loc, y, constant(type, 1.0)));
    else if (isa<math::LogOp>(op))
      d = div(t[0], x(0));
    else if (isa<math::Log2Op>(op))
      d = div(t[0], mul(x(0), constant(type, M_LN2)));
    else if (isa<math::Log1pOp>(op))
      d = div(t[0], arith::AddFOp::create(b, loc, x(0), constant(type, 1.0)));
    else if (isa<math::SqrtOp>(op))
      d = div(t[0], mul(y, constant(type, 2.0)));
    else if (isa<math::RsqrtOp>(op)) // −y³/2
      d = scaled(t[0], mul(mul(y, mul(y, y)), constant(type, -0.5)));
    else if (isa<math::AbsFOp>(op)) {
      Value negative =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x(0), constant(type, 0.0));
      d = arith::SelectOp::create(b, loc, negative, neg(t[0]), t[0]);
    } else if (isa<math::SinOp>(op))
      d = scaled(t[0], math::CosOp::create(b, loc, x(0)));
    else if (isa<math::CosOp>(op))
      d = neg(scaled(t[0], math::SinOp::create(b, loc, x(0))));
    else if (isa<math::FmaOp>(op))
      d = add(add(scaled(t[0], x(1)), scaled(t[1], x(0))), t[2]);
    else if (isa<math::PowFOp>(op)) // y·(ta·b/a + tb·log a)
      d = mul(y, add(t[0] ? div(mul(t[0], x(1)), x(0)) : Value(),
                     scaled(t[1], math::LogOp::create(b, loc, x(0)))));
    else if (isa<math::ErfOp>(op)) // 2/√π · exp(−a²)
      d = scaled(t[0], mul(constant(type, M_2_SQRTPI),
                           math::ExpOp::create(b, loc, neg(mul(x(0), x(0))))));
    else
      return op->emitOpError("in a score function has no derivative rule "
                             "(attn-differentiate: arith add/sub/mul/div/neg/max/min/select/"
                             "extf/truncf, math tanh/exp/exp2/expm1/log/log2/log1p/sqrt/"
                             "rsqrt/absf/sin/cos/fma/powf/erf, scf.if)");
    tangent[op->getResult(0)] = d;
    return success();
  }
};

/// The adjoints of a score function's float captures that are computed
/// from the function's arguments: for every score and every read r of such
/// a capture c, c̄[r's clamped indices] += dy · ∂f/∂r (forward mode on the
/// body, r's tangent 1), summed in f32 (f64 for an f64 capture) in a loop
/// nest over the scores and rounded to c's type once. A scatter, not a
/// reduction: a read's indices are any index expressions (a relative
/// position table [2T − 1] read at q − kv + T − 1 sums the scores of each
/// diagonal). Other captures get none.
LogicalResult captureAdjoints(ScoreModOp mod, OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &operandAdjoints) {
  constexpr unsigned kPositions = 5; // (score, b, h, q, kv)
  Location loc = mod.getLoc();
  Block &src = mod.getBody().front();
  SmallVector<unsigned> slots; // the captures that get an adjoint
  SmallVector<SmallVector<tensor::ExtractOp>> reads;
  for (auto [i, c] : llvm::enumerate(mod.getCaptures())) {
    if (tensorType(c).getElementType().isIntOrIndex() || !dependsOnArgument(c))
      continue;
    SmallVector<tensor::ExtractOp> mine;
    Value arg = src.getArgument(kPositions + i);
    src.walk([&](tensor::ExtractOp r) {
      if (r.getTensor() == arg)
        mine.push_back(r);
    });
    if (mine.empty())
      continue; // never read: its adjoint is 0
    slots.push_back(i);
    reads.push_back(std::move(mine));
  }
  if (slots.empty())
    return success();

  SmallVector<Value> inits;
  for (unsigned i : slots) {
    Value c = mod.getCaptures()[i];
    Type acc = accumulatorType(tensorType(c).getElementType());
    inits.push_back(filled(b, loc, tensor::getMixedSizes(b, loc, c), acc, 0.0));
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs(4, zero), steps(4, one), ubs;
  for (int64_t d = 0; d < 4; ++d)
    ubs.push_back(tensor::DimOp::create(b, loc, dy, d));
  LogicalResult status = success();
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, inits,
      [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange accs) -> scf::ValueVector {
        SmallVector<Value> next(accs);
        Value x = castFloat(nb, nl, tensor::ExtractOp::create(nb, nl, mod.getInput(), ivs),
                            nb.getF32Type());
        Value d = tensor::ExtractOp::create(nb, nl, dy, ivs);
        for (auto [k, i] : llvm::enumerate(slots)) {
          Type acc = tensorType(next[k]).getElementType();
          Value dAcc = castFloat(nb, nl, d, acc);
          for (tensor::ExtractOp r : reads[k]) {
            IRMapping map;
            map.map(src.getArgument(0), x);
            for (unsigned p = 0; p < 4; ++p)
              map.map(src.getArgument(1 + p), ivs[p]);
            for (auto [j, c] : llvm::enumerate(mod.getCaptures()))
              map.map(src.getArgument(kPositions + j), c);
            FailureOr<Value> g = ScoreDerivative(nb, nl).derivativeByRead(src, map, r);
            if (failed(g)) {
              status = failure();
              return next;
            }
            if (!*g)
              continue; // this read never reaches the score
            auto at = map.lookup(r.getResult()).getDefiningOp<tensor::ExtractOp>().getIndices();
            Value old = tensor::ExtractOp::create(nb, nl, next[k], at);
            Value term = arith::MulFOp::create(nb, nl, dAcc, castFloat(nb, nl, *g, acc));
            next[k] = tensor::InsertOp::create(nb, nl, arith::AddFOp::create(nb, nl, old, term),
                                               next[k], at);
          }
        }
        return next;
      });
  if (failed(status))
    return failure();
  for (auto [k, i] : llvm::enumerate(slots)) {
    Value c = mod.getCaptures()[i];
    operandAdjoints[1 + i] = roundTo(b, loc, nest.results[k], tensorType(c).getElementType(),
                                     tensor::getMixedSizes(b, loc, c));
  }
  return success();
}

struct MaskModVjp : DifferentiableOpInterface::ExternalModel<MaskModVjp, MaskModOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (Value dy = resultAdjoints[0])
      operandAdjoints[0] = keptAdjoint(b, op->getLoc(), dy, op->getResult(0));
    return success();
  }
};

/// y = f(x, b, h, q, kv, captures): dx = dy · f'(x), f' a score function
/// built from f's body (ScoreDerivative) and run as an attn.score_mod, so
/// every pipeline lowers it as it lowers f; float captures computed from
/// the arguments get theirs from captureAdjoints.
struct ScoreModVjp : DifferentiableOpInterface::ExternalModel<ScoreModVjp, ScoreModOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto mod = cast<ScoreModOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    Location loc = op->getLoc();
    auto slope = ScoreModOp::create(b, loc, mod.getInput(), mod.getCaptures());
    if (failed(buildScoreDerivative(b, loc, mod.getBody(), slope.getBody())))
      return failure();
    AffineMap id = b.getMultiDimIdentityMap(tensorType(dy).getRank());
    operandAdjoints[0] = pointwise(b, loc, dy, {slope.getResult()}, {id},
                                   [](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
                                     return Value(arith::MulFOp::create(nb, nl, x[0], x[1]));
                                   });
    return captureAdjoints(mod, b, dy, operandAdjoints);
  }
};

} // namespace

LogicalResult vjp::buildScoreDerivative(OpBuilder &b, Location loc, Region &src, Region &dst) {
  Block &from = src.front();
  Block *to = new Block();
  dst.push_back(to);
  for (BlockArgument a : from.getArguments())
    to->addArgument(a.getType(), a.getLoc());
  return ScoreDerivative(b, loc).build(from, *to);
}

void vjp::attachScoreFunctionVjps(MLIRContext *ctx) {
  MaskModOp::attachInterface<MaskModVjp>(*ctx);
  ScoreModOp::attachInterface<ScoreModVjp>(*ctx);
}

bool mlir::attn::scoreFunctionNeedsChain(SdpaOp op) {
  if (!op.hasScoreMod())
    return false;
  return llvm::any_of(op.getCaptures(), [](Value c) {
    return isa<FloatType>(cast<RankedTensorType>(c.getType()).getElementType()) &&
           dependsOnArgument(c);
  });
}
