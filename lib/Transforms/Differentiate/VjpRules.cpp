//===- VjpRules.cpp - the vector-Jacobian products of the attn ops --------===//
//
// DifferentiableOpInterface for the attn ops a layer is written with
// (attn.mha is decomposed into them first, by attn-differentiate):
//
//   sdpa         (dQ, dK, dV) = sdpa_grad(Q, K, V, O, dO, lse), with (O, lse)
//                from an sdpa_partial recomputed next to the forward op
//   project      y = x·Wᵀ + b:  dx = dy·W, dW = Σ_rows dyᵀ·x, db = Σ_rows dy
//   split_heads  dx = merge_heads(dy);   merge_heads  dx = split_heads(dy)
//   scale        dx = c·dy
//
// Masks, slopes, key lengths and other integer or constant operands get no
// adjoint. Sums over rows accumulate in f32 and round once.
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;

Value castTo(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

/// out[outDims] = Σ over the other dims of Π inputs[...], each input read
/// through its map, accumulated in f32 and rounded to `elt`; `sizes` are
/// the result's.
Value sumOfProducts(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<AffineMap> maps,
                    AffineMap outMap, ArrayRef<IteratorType> iters,
                    ArrayRef<OpFoldResult> sizes, Type elt) {
  Type f32 = b.getF32Type();
  Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0.0));
  Value init = tensor::EmptyOp::create(b, loc, sizes, f32);
  Value acc = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init}).getResult(0);
  SmallVector<AffineMap> all(maps);
  all.push_back(outMap);
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, all, iters,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    Value prod = castTo(nb, nl, args[0], f32);
                    for (Value x : args.drop_front().drop_back())
                      prod = arith::MulFOp::create(nb, nl, prod, castTo(nb, nl, x, f32));
                    linalg::YieldOp::create(
                        nb, nl, Value(arith::AddFOp::create(nb, nl, args.back(), prod)));
                  })
                  .getResult(0);
  if (elt == f32)
    return sum;
  int64_t rank = sizes.size();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, TypeRange{RankedTensorType::get(cast<RankedTensorType>(sum.getType()).getShape(), elt)},
             ValueRange{sum}, ValueRange{tensor::EmptyOp::create(b, loc, sizes, elt)},
             ArrayRef<AffineMap>{id, id},
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, castTo(nb, nl, args[0], elt));
             })
      .getResult(0);
}

struct SdpaVjp : DifferentiableOpInterface::ExternalModel<SdpaVjp, SdpaOp> {
  LogicalResult buildVjp(Operation *op, OpBuilder &b, ArrayRef<Value> resultAdjoints,
                         SmallVectorImpl<Value> &operandAdjoints) const {
    auto sdpa = cast<SdpaOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    if (FloatAttr rate = sdpa.getDropoutRateAttr(); rate && !rate.getValue().isZero())
      return sdpa.emitOpError("is not differentiable with dropout yet (attn-differentiate)");
    if (sdpa.getSinks())
      return sdpa.emitOpError("is not differentiable with attention sinks (attn-differentiate)");
    if (!sdpa.getScoreMod().empty() || !sdpa.getMaskMod().empty())
      return sdpa.emitOpError(
          "is not differentiable with score or mask functions (attn-differentiate)");
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
        sdpa.getAlibiSlopes(), sdpa.getKeyLengths(), /*diagonal=*/Value(),
        /*captures=*/ValueRange(), sdpa.getScaleAttr(), sdpa.getCausalAttr(),
        sdpa.getSoftcapAttr(), sdpa.getWindowAttr());
    if (sdpa.getType() == partial.getResult().getType())
      sdpa.getResult().replaceAllUsesWith(partial.getResult());
    b.restoreInsertionPoint(ip);
    auto grad = SdpaGradOp::create(b, loc, sdpa.getQuery(), sdpa.getKey(), sdpa.getValue(),
                                   partial.getResult(), dO, partial.getLse(), sdpa.getMask(),
                                   sdpa.getAlibiSlopes(), sdpa.getKeyLengths(),
                                   sdpa.getScaleAttr(), sdpa.getCausalAttr(),
                                   sdpa.getSoftcapAttr(), sdpa.getWindowAttr());
    operandAdjoints[0] = grad.getGradQuery();
    operandAdjoints[1] = grad.getGradKey();
    operandAdjoints[2] = grad.getGradValue();
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
    operandAdjoints[1] = sumOfProducts(
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
      operandAdjoints[2] = sumOfProducts(
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

} // namespace

void mlir::attn::registerDifferentiableOpModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    SdpaOp::attachInterface<SdpaVjp>(*ctx);
    ProjectOp::attachInterface<ProjectVjp>(*ctx);
    SplitHeadsOp::attachInterface<SplitHeadsVjp>(*ctx);
    MergeHeadsOp::attachInterface<MergeHeadsVjp>(*ctx);
    ScaleOp::attachInterface<ScaleVjp>(*ctx);
  });
}
