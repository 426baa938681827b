//===- VjpRules.cpp - the vector-Jacobian products of the attn ops --------===//
//
// DifferentiableOpInterface for the attn ops a layer is written with
// (attn.mha, and an attn.sdpa sdpa_grad does not take, are
// decomposed into them first, by attn-differentiate):
//
//   sdpa          (dQ, dK, dV) = sdpa_grad(Q, K, V, O, dO, lse), with (O, lse)
//                 from an sdpa_partial recomputed next to the forward op
//                 (both with the sdpa's dropout rate and seed; with sinks
//                 lse counts them, and dsinks is the softmax's rule from O, dO)
//   project       y = x·Wᵀ + b:  dx = dy·W, dW = Σ_rows dyᵀ·x, db = Σ_rows dy
//   split_heads   dx = merge_heads(dy);   merge_heads  dx = split_heads(dy)
//   scale         dx = c·dy
//   scores        S = Q·Kᵀ:  dQ = weighted_sum(dS, K), dK = Σ_group dSᵀ·Q
//   weighted_sum  O = P·V:   dP = scores(dO, V),     dV = Σ_group Pᵀ·dO
//   softmax       dx = P ⊙ (dP − Σ_j dP ⊙ P); with sinks also
//                 dsinks[h] = −Σ_{b,i} exp(sink_h − lse) · Σ_j dP ⊙ P
//   softcap       dx = dy ⊙ (1 − tanh²(x / cap))
//   mask          dx = dy where y is not −inf, else 0; an additive mask
//                 operand gets the same, summed over its broadcast dims
//   mask_mod,     ScoreFunctionVjp.cpp
//   score_mod
//   dropout       dx = dropout(dy) with the same rate and seed: the
//                 generator depends only on (seed, index), so the backward
//                 drops exactly the forward's elements
//   rope          dx = rope(dy, cos, −sin) (the inverse rotation);
//                 dcos = Σ_{b,h} dy_p·x_p + dy_q·x_q, dsin = Σ_{b,h} dy_q·x_p − dy_p·x_q
//
// i1 masks, slopes, key lengths, integer captures, mask function captures
// and other integer or constant operands get no adjoint. Every sum
// accumulates in f32 (f64 for f64) and rounds once.
//
//===----------------------------------------------------------------------===//
#include "VjpRules.h"

#include "VjpRules.h"

#include "attn/Transforms/Passes.h"

#include "Conversion/AttnToLinalg/LinalgBuilders.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;
using namespace mlir::attn::vjp;

// The shared builders (VjpRules.h).

Value vjp::reduceTerms(OpBuilder &b, Location loc, ValueRange inputs,
                       ArrayRef<AffineMap> maps, AffineMap outMap, ArrayRef<IteratorType> iters,
                       ArrayRef<OpFoldResult> sizes, Type elt, TermFn term) {
  Type accType = accumulatorType(elt);
  Value acc = filled(b, loc, sizes, accType, 0.0);
  SmallVector<AffineMap> all(maps);
  all.push_back(outMap);
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, all, iters,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    SmallVector<Value> xs;
                    for (Value x : args.drop_back())
                      xs.push_back(castFloat(nb, nl, x, accType));
                    Value t = xs[0];
                    if (term)
                      t = term(nb, nl, xs);
                    else
                      for (Value x : ArrayRef<Value>(xs).drop_front())
                        t = arith::MulFOp::create(nb, nl, t, x);
                    linalg::YieldOp::create(
                        nb, nl, Value(arith::AddFOp::create(nb, nl, args.back(), t)));
                  })
                  .getResult(0);
  return roundTo(b, loc, sum, elt, sizes);
}

Value vjp::pointwise(OpBuilder &b, Location loc, Value first, ValueRange others,
                     ArrayRef<AffineMap> otherMaps, TermFn body) {
  RankedTensorType type = tensorType(first);
  Type elt = type.getElementType(), accType = accumulatorType(elt);
  return elementwise(b, loc, first, others, otherMaps, type,
                     tensor::getMixedSizes(b, loc, first),
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       SmallVector<Value> xs;
                       for (Value x : args.drop_back())
                         xs.push_back(castFloat(nb, nl, x, accType));
                       return castFloat(nb, nl, body(nb, nl, xs), elt);
                     });
}

Value vjp::keptAdjoint(OpBuilder &b, Location loc, Value dy, Value y) {
  AffineMap id = b.getMultiDimIdentityMap(tensorType(dy).getRank());
  return pointwise(b, loc, dy, {y}, {id}, [](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
    Value ninf = floatConst(nb, nl, x[1].getType(), -std::numeric_limits<double>::infinity());
    Value masked = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, x[1], ninf);
    return Value(arith::SelectOp::create(nb, nl, masked, floatConst(nb, nl, x[0].getType(), 0.0),
                                         x[0]));
  });
}

bool vjp::dependsOnArgument(Value v) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (!isNoGradArgument(arg))
        return true;
      continue;
    }
    for (Value operand : x.getDefiningOp()->getOperands())
      work.push_back(operand);
  }
  return false;
}

namespace {

/// The query and key/value head counts of an op whose rule needs them
/// static (the GQA group sums), and the group size.
FailureOr<std::pair<int64_t, int64_t>> kvHeadsAndGroup(Operation *op, Value q, Value kv) {
  int64_t h = tensorType(q).getDimSize(1), hkv = tensorType(kv).getDimSize(1);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv))
    return op->emitOpError("needs static head counts to be differentiated (attn-differentiate)");
  return std::make_pair(hkv, h / hkv);
}

/// Σ over the query heads of each group of lhsᵀ·rhs ([B, H, T, n] each,
/// summed over T), as [B, Hkv, n_lhs, n_rhs] rounded to `like`'s type.
Value groupSum(OpBuilder &b, Location loc, Value lhs, Value rhs, int64_t hkv, int64_t g,
               Value like) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, like);
  Value sum = groupedTransposedProduct(b, loc, splitGroups(b, loc, lhs, hkv, g),
                                       splitGroups(b, loc, rhs, hkv, g), sizes);
  return roundTo(b, loc, sum, tensorType(like).getElementType(), sizes);
}

struct SdpaVjp : DifferentiableOpInterface::ExternalModel<SdpaVjp, SdpaOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto sdpa = cast<SdpaOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (scoreFunctionNeedsChain(sdpa))
      return sdpa.emitOpError("with a score function reading a captured tensor that gets a "
                              "gradient has no fused backward: attn-differentiate decomposes "
                              "it into its primitive chain first");
    Value dO = resultAdjoints[0];
    if (!dO)
      return success();
    Location loc = op->getLoc();
    // The forward with its log-sum-exp, next to the op; with f32 operands
    // its output replaces the op's (one forward instead of two).
    OpBuilder::InsertPoint ip = b.saveInsertionPoint();
    b.setInsertionPointAfter(op);
    auto partial = SdpaPartialOp::create(
        b, loc, sdpa.getQuery(), sdpa.getKey(), sdpa.getValue(), sdpa.getMask(),
        sdpa.getAlibiSlopes(), sdpa.getKeyLengths(), sdpa.getSinks(), /*diagonal=*/Value(),
        sdpa.getRuntimeSeed(), sdpa.getCaptures(), sdpa.getScaleAttr(),
        sdpa.getCausalAttr(),
        sdpa.getSoftcapAttr(), sdpa.getWindowAttr(), sdpa.getDropoutRateAttr(),
        sdpa.getDropoutSeedAttr());
    for (auto [from, to] : {std::pair<Region *, Region *>{&sdpa.getScoreMod(),
                                                          &partial.getScoreMod()},
                            {&sdpa.getMaskMod(), &partial.getMaskMod()}}) {
      IRMapping none;
      from->cloneInto(to, none);
    }
    if (sdpa.getType() == partial.getResult().getType())
      sdpa.getResult().replaceAllUsesWith(partial.getResult());
    b.restoreInsertionPoint(ip);
    // An additive mask computed from the function's arguments gets its
    // gradient (attn.sdpa_grad's grad_mask, on the reference route: it
    // needs the score gradient); a constant one, or a keep mask, none.
    Value mask = sdpa.getMask();
    bool maskAdjoint = mask && !tensorType(mask).getElementType().isInteger(1) &&
                       dependsOnArgument(mask);
    auto grad = SdpaGradOp::create(b, loc, sdpa.getQuery().getType(), sdpa.getKey().getType(),
                                   sdpa.getValue().getType(),
                                   maskAdjoint ? mask.getType() : Type(),
                                   sdpa.getQuery(), sdpa.getKey(), sdpa.getValue(),
                                   partial.getResult(), dO, partial.getLse(), sdpa.getMask(),
                                   sdpa.getAlibiSlopes(), sdpa.getKeyLengths(),
                                   sdpa.getRuntimeSeed(), sdpa.getCaptures(),
                                   sdpa.getScaleAttr(), sdpa.getCausalAttr(),
                                   sdpa.getSoftcapAttr(), sdpa.getWindowAttr(),
                                   sdpa.getDropoutRateAttr(), sdpa.getDropoutSeedAttr());
    // The functions are the same on the forward and the backward (their
    // captures are constants to both: a keep decision has no gradient, and
    // a score function whose captures get one takes the chain).
    for (auto [from, to] : {std::pair<Region *, Region *>{&sdpa.getScoreMod(),
                                                          &grad.getScoreMod()},
                            {&sdpa.getMaskMod(), &grad.getMaskMod()}}) {
      IRMapping none;
      from->cloneInto(to, none);
    }
    // The score function's derivative by the score, for dS (its captures
    // are constants here: scoreFunctionNeedsChain).
    if (sdpa.hasScoreMod() &&
        failed(buildScoreDerivative(b, loc, sdpa.getScoreMod(), grad.getScoreModGrad())))
      return failure();
    operandAdjoints[0] = grad.getGradQuery();
    operandAdjoints[1] = grad.getGradKey();
    operandAdjoints[2] = grad.getGradValue();
    if (maskAdjoint)
      operandAdjoints[sdpa.getMaskMutable()[0].getOperandNumber()] = grad.getGradMask();
    // The forward's lse counts the sinks, so sdpa_grad's P is the forward's
    // and only the sinks' own gradient is left (from O, dO and lse).
    if (Value sinks = sdpa.getSinks(); sinks && dependsOnArgument(sinks))
      operandAdjoints[sdpa.getSinksMutable()[0].getOperandNumber()] =
          buildSinksAdjoint(b, loc, dO, partial.getResult(), partial.getLse(), sinks);
    return success();
  }
};

struct ProjectVjp : DifferentiableOpInterface::ExternalModel<ProjectVjp, ProjectOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto project = cast<ProjectOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    Location loc = op->getLoc();
    Value x = project.getInput(), w = project.getWeight();
    bool outIn = project.getLayout() == WeightLayout::out_in;
    // dx = dy·W (out_in: W [Out, In]) or dy·Wᵀ (in_out): the projection
    // with the other layout.
    operandAdjoints[0] = ProjectOp::create(b, loc, dy, w, /*bias=*/Value(),
                                           outIn ? WeightLayout::in_out : WeightLayout::out_in);
    // dW[o, i] (or [i, o]) = Σ over the leading dims of dy[..., o]·x[..., i].
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineExpr> lead;
    for (int64_t d = 0; d < rank - 1; ++d)
      lead.push_back(getAffineDimExpr(d, ctx));
    AffineExpr o = getAffineDimExpr(rank - 1, ctx), i = getAffineDimExpr(rank, ctx);
    auto withLast = [&](AffineExpr last) {
      SmallVector<AffineExpr> e(lead);
      e.push_back(last);
      return AffineMap::get(rank + 1, 0, e, ctx);
    };
    SmallVector<IteratorType> iters(rank - 1, IteratorType::reduction);
    iters.append({IteratorType::parallel, IteratorType::parallel});
    SmallVector<OpFoldResult> wSizes = tensor::getMixedSizes(b, loc, w);
    Type wElt = cast<RankedTensorType>(w.getType()).getElementType();
    operandAdjoints[1] = reduceTerms(
        b, loc, {dy, x}, {withLast(o), withLast(i)},
        AffineMap::get(rank + 1, 0, outIn ? ArrayRef<AffineExpr>{o, i} : ArrayRef<AffineExpr>{i, o},
                       ctx),
        iters, wSizes, wElt);
    if (Value bias = project.getBias()) {
      // db[o] = Σ over the leading dims of dy[..., o].
      SmallVector<IteratorType> biasIters(rank - 1, IteratorType::reduction);
      biasIters.push_back(IteratorType::parallel);
      SmallVector<AffineExpr> all(lead);
      all.push_back(getAffineDimExpr(rank - 1, ctx));
      operandAdjoints[2] = reduceTerms(
          b, loc, {dy}, {AffineMap::get(rank, 0, all, ctx)},
          AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx), biasIters,
          tensor::getMixedSizes(b, loc, bias),
          cast<RankedTensorType>(bias.getType()).getElementType());
    }
    return success();
  }
};

struct SplitHeadsVjp : DifferentiableOpInterface::ExternalModel<SplitHeadsVjp, SplitHeadsOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (Value dy = resultAdjoints[0])
      operandAdjoints[0] = MergeHeadsOp::create(b, op->getLoc(), dy);
    return success();
  }
};

struct MergeHeadsVjp : DifferentiableOpInterface::ExternalModel<MergeHeadsVjp, MergeHeadsOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    int64_t heads = cast<RankedTensorType>(op->getOperand(0).getType()).getDimSize(1);
    if (ShapedType::isDynamic(heads))
      return op->emitOpError("needs a static head count to be differentiated");
    operandAdjoints[0] = SplitHeadsOp::create(b, op->getLoc(), dy, heads);
    return success();
  }
};

struct ScaleVjp : DifferentiableOpInterface::ExternalModel<ScaleVjp, ScaleOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (Value dy = resultAdjoints[0])
      operandAdjoints[0] = ScaleOp::create(b, op->getLoc(), dy, cast<ScaleOp>(op).getScaleAttr());
    return success();
  }
};

struct ScoresVjp : DifferentiableOpInterface::ExternalModel<ScoresVjp, ScoresOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto scores = cast<ScoresOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dS = resultAdjoints[0];
    if (!dS)
      return success();
    Value q = scores.getQuery(), k = scores.getKey();
    FailureOr<std::pair<int64_t, int64_t>> heads = kvHeadsAndGroup(op, q, k);
    if (failed(heads))
      return failure();
    Location loc = op->getLoc();
    // dQ[b,h,i,d] = Σ_j dS[b,h,i,j]·K[b,h/G,j,d]: a weighted sum of K's rows.
    operandAdjoints[0] = WeightedSumOp::create(b, loc, dS, k);
    // dK[b,g,j,d] = Σ over the group's heads and i of dS[b,h,i,j]·Q[b,h,i,d].
    operandAdjoints[1] = groupSum(b, loc, dS, q, heads->first, heads->second, k);
    return success();
  }
};

struct WeightedSumVjp
    : DifferentiableOpInterface::ExternalModel<WeightedSumVjp, WeightedSumOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto sum = cast<WeightedSumOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dO = resultAdjoints[0];
    if (!dO)
      return success();
    Value p = sum.getProbs(), v = sum.getValue();
    FailureOr<std::pair<int64_t, int64_t>> heads = kvHeadsAndGroup(op, p, v);
    if (failed(heads))
      return failure();
    Location loc = op->getLoc();
    // dP[b,h,i,j] = Σ_e dO[b,h,i,e]·V[b,h/G,j,e]: the scores of dO against V.
    operandAdjoints[0] = ScoresOp::create(b, loc, dO, v);
    // dV[b,g,j,e] = Σ over the group's heads and i of P[b,h,i,j]·dO[b,h,i,e].
    operandAdjoints[1] = groupSum(b, loc, p, dO, heads->first, heads->second, v);
    return success();
  }
};

struct SoftmaxVjp : DifferentiableOpInterface::ExternalModel<SoftmaxVjp, SoftmaxOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto softmax = cast<SoftmaxOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dP = resultAdjoints[0];
    if (!dP)
      return success();
    Location loc = op->getLoc();
    Value p = softmax.getResult();
    // rowdot[r] = Σ_j dP[r, j]·P[r, j] in f32, then dx = P·(dP − rowdot).
    int64_t rank = tensorType(p).getRank();
    MLIRContext *ctx = b.getContext();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap rows = AffineMap::get(rank, 0, id.getResults().drop_back(), ctx);
    SmallVector<IteratorType> iters(rank, kPar);
    iters.back() = kRed;
    Type acc = accumulatorType(tensorType(p).getElementType());
    Value rowdot = reduceTerms(b, loc, {dP, p}, {id, id}, rows, iters, leadingSizes(b, loc, p),
                               acc);
    operandAdjoints[0] = pointwise(
        b, loc, dP, {p, rowdot}, {id, rows}, [](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
          Value centred = arith::SubFOp::create(nb, nl, x[0], x[2]);
          return Value(arith::MulFOp::create(nb, nl, x[1], centred));
        });
    // The sinks: −Σ_{b,i} p_sink·rowdot, p_sink = exp(sink − lse(x, sinks)).
    if (Value sinks = softmax.getSinks(); sinks && dependsOnArgument(sinks)) {
      auto rowType = RankedTensorType::get(tensorType(p).getShape().drop_back(), acc);
      Value lse = LogSumExpOp::create(b, loc, rowType, softmax.getInput(), sinks);
      operandAdjoints[1] = buildSinksAdjoint(b, loc, dP, p, lse, sinks);
    }
    return success();
  }
};

struct SoftcapVjp : DifferentiableOpInterface::ExternalModel<SoftcapVjp, SoftcapOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto softcap = cast<SoftcapOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    double cap = softcap.getCap().convertToDouble();
    AffineMap id = b.getMultiDimIdentityMap(tensorType(dy).getRank());
    // dx = dy·(1 − tanh²(x/cap)), tanh recomputed from x in f32.
    operandAdjoints[0] =
        pointwise(b, op->getLoc(), dy, {softcap.getInput()}, {id},
                  [cap](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
                    Type f32 = x[0].getType();
                    Value t = math::TanhOp::create(
                        nb, nl, arith::MulFOp::create(nb, nl, x[1], floatConst(nb, nl, f32, 1.0 / cap)));
                    Value slope = arith::SubFOp::create(nb, nl, floatConst(nb, nl, f32, 1.0),
                                                        arith::MulFOp::create(nb, nl, t, t));
                    return Value(arith::MulFOp::create(nb, nl, x[0], slope));
                  });
    return success();
  }
};

struct MaskVjp : DifferentiableOpInterface::ExternalModel<MaskVjp, MaskOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto mask = cast<MaskOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    Location loc = op->getLoc();
    Value dx = keptAdjoint(b, loc, dy, mask.getResult());
    operandAdjoints[0] = dx;
    Value m = mask.getMask();
    if (!m || !isa<FloatType>(tensorType(m).getElementType()))
      return success();
    // An additive mask: its adjoint is dx summed over the dims it is
    // broadcast along (its static 1 dims, and the leading dims it lacks).
    RankedTensorType mt = tensorType(m);
    int64_t rank = mt.getRank(), lead = 4 - rank;
    if (!mt.hasStaticShape())
      return op->emitOpError("cannot differentiate an additive mask with dynamic dims (its "
                             "broadcast is not known; attn-differentiate)");
    MLIRContext *ctx = b.getContext();
    SmallVector<IteratorType> iters(4, kRed);
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> keptShape;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (int64_t d = 0; d < rank; ++d) {
      pending.push_back(d);
      if (mt.getDimSize(d) == 1)
        continue;
      iters[lead + d] = kPar;
      kept.push_back(getAffineDimExpr(lead + d, ctx));
      keptShape.push_back(mt.getDimSize(d));
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      groups.back().append(pending.begin(), pending.end());
    SmallVector<OpFoldResult> sizes;
    for (int64_t n : keptShape)
      sizes.push_back(b.getIndexAttr(n));
    Value dm = reduceTerms(b, loc, {dx}, {b.getMultiDimIdentityMap(4)},
                           AffineMap::get(4, 0, kept, ctx), iters, sizes, mt.getElementType());
    if (static_cast<int64_t>(keptShape.size()) != rank)
      dm = tensor::ExpandShapeOp::create(b, loc, mt, dm, groups);
    operandAdjoints[1] = dm;
    return success();
  }
};

struct DropoutVjp : DifferentiableOpInterface::ExternalModel<DropoutVjp, DropoutOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto dropout = cast<DropoutOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (Value dy = resultAdjoints[0])
      operandAdjoints[0] =
          DropoutOp::create(b, op->getLoc(), dy, dropout.getRuntimeSeed(),
                            dropout.getRateAttr(), dropout.getSeedAttr());
    return success();
  }
};

struct RopeVjp : DifferentiableOpInterface::ExternalModel<RopeVjp, RopeOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto rope = cast<RopeOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    Location loc = op->getLoc();
    Value x = rope.getInput(), cos = rope.getCos(), sin = rope.getSin();
    // dx: the inverse rotation, rope with −sin.
    Value negSin = pointwise(b, loc, sin, {}, {}, [](OpBuilder &nb, Location nl, ArrayRef<Value> v) {
      return Value(arith::NegFOp::create(nb, nl, v[0]));
    });
    operandAdjoints[0] = RopeOp::create(b, loc, dy, cos, negSin, rope.getStyle());
    // The tables: x and dy sliced into the pair's members, p = k and
    // q = k + R/2 (rotate_half) or p = 2k and q = 2k + 1 (interleaved),
    // k < R/2; then loops (b, h, t, k), summed over h (and b for [T, R/2]).
    MLIRContext *ctx = b.getContext();
    RankedTensorType tt = tensorType(cos);
    int64_t half = tt.getDimSize(tt.getRank() - 1);
    bool interleaved = rope.getStyle() == RopeStyle::interleaved;
    auto member = [&](Value t, int64_t which) -> Value {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
      sizes[3] = b.getIndexAttr(half);
      SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)), strides(4, b.getIndexAttr(1));
      offsets[3] = b.getIndexAttr(interleaved ? which : which * half);
      strides[3] = b.getIndexAttr(interleaved ? 2 : 1);
      return tensor::ExtractSliceOp::create(b, loc, t, offsets, sizes, strides);
    };
    SmallVector<Value> inputs{member(dy, 0), member(x, 0), member(dy, 1), member(x, 1)};
    AffineExpr bb, h, t, k;
    bindDims(ctx, bb, h, t, k);
    AffineMap all = AffineMap::get(4, 0, {bb, h, t, k}, ctx);
    bool perSequence = tt.getRank() == 3;
    AffineMap outMap = perSequence ? AffineMap::get(4, 0, {bb, t, k}, ctx)
                                   : AffineMap::get(4, 0, {t, k}, ctx);
    SmallVector<IteratorType> iters{perSequence ? kPar : kRed, kRed, kPar, kPar};
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, cos);
    SmallVector<AffineMap> maps(4, all);
    // Inputs: dy_p, x_p, dy_q, x_q.
    operandAdjoints[1] = reduceTerms(
        b, loc, inputs, maps, outMap, iters, sizes, tt.getElementType(),
        [](OpBuilder &nb, Location nl, ArrayRef<Value> v) {
          return Value(arith::AddFOp::create(nb, nl, arith::MulFOp::create(nb, nl, v[0], v[1]),
                                             arith::MulFOp::create(nb, nl, v[2], v[3])));
        });
    operandAdjoints[2] = reduceTerms(
        b, loc, inputs, maps, outMap, iters, sizes, tt.getElementType(),
        [](OpBuilder &nb, Location nl, ArrayRef<Value> v) {
          return Value(arith::SubFOp::create(nb, nl, arith::MulFOp::create(nb, nl, v[2], v[1]),
                                             arith::MulFOp::create(nb, nl, v[0], v[3])));
        });
    return success();
  }
};

} // namespace

void mlir::attn::registerDifferentiableOpModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    SdpaOp::attachInterface<SdpaVjp>(*ctx);
    ProjectOp::attachInterface<ProjectVjp>(*ctx);
    SplitHeadsOp::attachInterface<SplitHeadsVjp>(*ctx);
    MergeHeadsOp::attachInterface<MergeHeadsVjp>(*ctx);
    ScaleOp::attachInterface<ScaleVjp>(*ctx);
    ScoresOp::attachInterface<ScoresVjp>(*ctx);
    WeightedSumOp::attachInterface<WeightedSumVjp>(*ctx);
    SoftmaxOp::attachInterface<SoftmaxVjp>(*ctx);
    SoftcapOp::attachInterface<SoftcapVjp>(*ctx);
    MaskOp::attachInterface<MaskVjp>(*ctx);
    DropoutOp::attachInterface<DropoutVjp>(*ctx);
    RopeOp::attachInterface<RopeVjp>(*ctx);
    attachScoreFunctionVjps(ctx);
  });
}

bool mlir::attn::isNoGradArgument(BlockArgument arg) {
  auto fn = dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return fn && arg.getOwner()->isEntryBlock() && fn.getArgAttr(arg.getArgNumber(), kNoGradAttr);
}

/// dsinks[h] = −Σ_{b,i} exp(sinks[h] − lse[b,h,i]) · Σ_n dy[b,h,i,n]·y[b,h,i,n]:
/// the sink's probability times D = rowsum(dy ⊙ y); 0 for a row whose lse
/// is −inf (a −inf sink's).
Value mlir::attn::buildSinksAdjoint(OpBuilder &b, Location loc, Value dy, Value y, Value lse,
                                    Value sinks) {
  MLIRContext *ctx = b.getContext();
  AffineMap id = b.getMultiDimIdentityMap(4);
  AffineMap rows = AffineMap::get(4, 0, id.getResults().drop_back(), ctx);
  AffineMap head = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
  SmallVector<IteratorType> iters{kRed, kPar, kRed, kRed};
  SmallVector<OpFoldResult> sizes{tensor::getMixedSize(b, loc, sinks, 0)};
  // x = (dy, y, lse, sink), widened to f32.
  auto term = [](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
    Type f32 = x[0].getType();
    Value ninf = floatConst(nb, nl, f32, -std::numeric_limits<double>::infinity());
    Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, x[2], ninf);
    Value pSink = math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, x[3], x[2]));
    Value t = arith::MulFOp::create(nb, nl, arith::NegFOp::create(nb, nl, pSink),
                                    arith::MulFOp::create(nb, nl, x[0], x[1]));
    return Value(arith::SelectOp::create(nb, nl, none, floatConst(nb, nl, f32, 0.0), t));
  };
  return reduceTerms(b, loc, {dy, y, lse, sinks}, {id, id, rows, head}, head, iters, sizes,
                     b.getF32Type(), term);
}
