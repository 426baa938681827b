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
//   mask_mod      dx = dy where y is not −inf, else 0
//   score_mod     dx = dy · f'(x): f' a score function built from f's body
//                 by forward-mode rules (ScoreDerivative); a float capture c
//                 computed from the arguments: c̄[idx] += dy · ∂f/∂c[idx]
//                 at each read, scattered over the scores
//   dropout       dx = dropout(dy) with the same rate and seed: the
//                 generator depends only on (seed, index), so the backward
//                 drops exactly the forward's elements
//   rope          dx = rope(dy, cos, −sin) (the inverse rotation);
//                 dcos = Σ_{b,h} dy_p·x_p + dy_q·x_q, dsin = Σ_{b,h} dy_q·x_p − dy_p·x_q
//
// i1 masks, slopes, key lengths, integer captures, mask function captures
// and other integer or constant operands get no adjoint. Every sum
// accumulates in f32 and rounds once.
//
//===----------------------------------------------------------------------===//
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

namespace {

using TermFn = function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)>;

/// out[outMap] = Σ, over the loops `iters` marks as reductions, of
/// term(the inputs read through `maps`, widened to f32) — the product of
/// the inputs when no term is given —, accumulated in f32 and rounded to
/// `elt`; `sizes` are the result's.
Value reduceTerms(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<AffineMap> maps,
                  AffineMap outMap, ArrayRef<IteratorType> iters, ArrayRef<OpFoldResult> sizes,
                  Type elt, TermFn term = nullptr) {
  Type f32 = b.getF32Type();
  Value acc = filled(b, loc, sizes, f32, 0.0);
  SmallVector<AffineMap> all(maps);
  all.push_back(outMap);
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, all, iters,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    SmallVector<Value> xs;
                    for (Value x : args.drop_back())
                      xs.push_back(castFloat(nb, nl, x, f32));
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

/// out[i...] = body(first[i...], the others read through `otherMaps`, all
/// widened to f32), computed in f32 and rounded to first's element type.
Value pointwise(OpBuilder &b, Location loc, Value first, ValueRange others,
                ArrayRef<AffineMap> otherMaps, TermFn body) {
  RankedTensorType type = tensorType(first);
  Type f32 = b.getF32Type(), elt = type.getElementType();
  return elementwise(b, loc, first, others, otherMaps, type,
                     tensor::getMixedSizes(b, loc, first),
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       SmallVector<Value> xs;
                       for (Value x : args.drop_back())
                         xs.push_back(castFloat(nb, nl, x, f32));
                       return castFloat(nb, nl, body(nb, nl, xs), elt);
                     });
}

/// dy where the forward's result y is not −inf, 0 where it is (the keep
/// rules' derivative: a masked score is the constant −inf).
Value keptAdjoint(OpBuilder &b, Location loc, Value dy, Value y) {
  AffineMap id = b.getMultiDimIdentityMap(tensorType(dy).getRank());
  return pointwise(b, loc, dy, {y}, {id}, [](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
    Value ninf = floatConst(nb, nl, x[1].getType(), -std::numeric_limits<double>::infinity());
    Value masked = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, x[1], ninf);
    return Value(arith::SelectOp::create(nb, nl, masked, floatConst(nb, nl, x[0].getType(), 0.0),
                                         x[0]));
  });
}

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

/// Whether `v` is computed from an argument of the function (an adjoint can
/// reach one; attn.no_grad arguments are constants), following operands
/// back through their defining ops.
bool dependsOnArgument(Value v) {
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

/// Fills the empty region `dst` with d f / d score of the score function
/// in `src` (ScoreDerivative, defined below).
LogicalResult buildScoreDerivative(OpBuilder &b, Location loc, Region &src, Region &dst);

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
    Value rowdot = reduceTerms(b, loc, {dP, p}, {id, id}, rows, iters, leadingSizes(b, loc, p),
                               b.getF32Type());
    operandAdjoints[0] = pointwise(
        b, loc, dP, {p, rowdot}, {id, rows}, [](OpBuilder &nb, Location nl, ArrayRef<Value> x) {
          Value centred = arith::SubFOp::create(nb, nl, x[0], x[2]);
          return Value(arith::MulFOp::create(nb, nl, x[1], centred));
        });
    // The sinks: −Σ_{b,i} p_sink·rowdot, p_sink = exp(sink − lse(x, sinks)).
    if (Value sinks = softmax.getSinks(); sinks && dependsOnArgument(sinks)) {
      auto rowType = RankedTensorType::get(tensorType(p).getShape().drop_back(), b.getF32Type());
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

struct MaskModVjp : DifferentiableOpInterface::ExternalModel<MaskModVjp, MaskModOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (Value dy = resultAdjoints[0])
      operandAdjoints[0] = keptAdjoint(b, op->getLoc(), dy, op->getResult(0));
    return success();
  }
};

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
    Type acc = tensorType(c).getElementType().isF64() ? b.getF64Type() : b.getF32Type();
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

LogicalResult buildScoreDerivative(OpBuilder &b, Location loc, Region &src, Region &dst) {
  Block &from = src.front();
  Block *to = new Block();
  dst.push_back(to);
  for (BlockArgument a : from.getArguments())
    to->addArgument(a.getType(), a.getLoc());
  return ScoreDerivative(b, loc).build(from, *to);
}

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
    MaskModOp::attachInterface<MaskModVjp>(*ctx);
    ScoreModOp::attachInterface<ScoreModVjp>(*ctx);
    DropoutOp::attachInterface<DropoutVjp>(*ctx);
    RopeOp::attachInterface<RopeVjp>(*ctx);
  });
}

bool mlir::attn::scoreFunctionNeedsChain(SdpaOp op) {
  if (!op.hasScoreMod())
    return false;
  return llvm::any_of(op.getCaptures(), [](Value c) {
    return isa<FloatType>(cast<RankedTensorType>(c.getType()).getElementType()) &&
           dependsOnArgument(c);
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
