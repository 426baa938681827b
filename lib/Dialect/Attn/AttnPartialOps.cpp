//===- AttnPartialOps.cpp - sdpa_partial, merge_partial, sdpa_grad --------===//
//
// The verifiers, result types and shape reification of the ops a tiled or
// distributed attention and its backward are written with: attn.sdpa_partial
// (an sdpa that also returns its row log-sum-exp), attn.log_sum_exp,
// attn.merge_partial and attn.sdpa_grad.
//
//===----------------------------------------------------------------------===//
#include "AttnChecker.h"
#include "AttnShapes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::shapes;
using mlir::attn::detail::Checker;
using mlir::attn::detail::effectiveScale;
using mlir::attn::detail::optF;
using mlir::attn::detail::verifyFunctions;
using mlir::attn::detail::verifySdpaOperands;

//===----------------------------------------------------------------------===//
// SdpaPartialOp, LogSumExpOp, MergePartialOp
//===----------------------------------------------------------------------===//

std::optional<double> SdpaPartialOp::getEffectiveScale() {
  return effectiveScale(getScaleAttr(), getQuery());
}

/// [B,H,Tq] from the query.
static SmallVector<int64_t> lseShape(Value query) {
  return {dimOf(query, 0), dimOf(query, 1), dimOf(query, 2)};
}

/// accumulatorType of `x`'s element type: the partial results' type.
static Type accumulatorOf(Value x) { return accumulatorType(tensorType(x).getElementType()); }

LogicalResult SdpaPartialOp::verify() {
  Checker c(*this);
  if (failed(verifySdpaOperands(*this, c)) ||
      failed(c.diagonalShift(getDiagonal(), getCausalAttr(), getWindowAttr())) ||
      (getSinks() && failed(c.sinks(getSinks(), dimOf(getQuery(), 1)))) ||
      failed(verifyFunctions(*this)) ||
      failed(c.dropoutRate("dropout_rate", optF(getDropoutRateAttr()))) ||
      failed(c.seedNeedsRate(getDropoutSeedAttr(), getDropoutRateAttr())) ||
      failed(c.runtimeSeed(getRuntimeSeed(), getDropoutSeedAttr(), "dropout_seed",
                           getDropoutRateAttr())))
    return failure();
  Type acc = accumulatorOf(getQuery());
  if (failed(c.result(sdpaShape(getQuery(), getValue()), acc, 0)) ||
      failed(c.result(lseShape(getQuery()), acc, 1)))
    return failure();
  return success();
}

LogicalResult SdpaPartialOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                              Adaptor a, SmallVectorImpl<Type> &types) {
  if (failed(requireRanked(loc, getOperationName(),
                           {{"query", a.getQuery()}, {"value", a.getValue()}})))
    return failure();
  Type acc = accumulatorOf(a.getQuery());
  types.push_back(RankedTensorType::get(sdpaShape(a.getQuery(), a.getValue()), acc));
  types.push_back(RankedTensorType::get(lseShape(a.getQuery()), acc));
  return success();
}

LogicalResult SdpaPartialOp::reifyResultShapes(OpBuilder &b,
                                               ReifiedRankedShapedTypeDims &out) {
  Value q = getQuery(), v = getValue();
  Location loc = getLoc();
  out.push_back({mixedDim(b, loc, q, 0), mixedDim(b, loc, q, 1), mixedDim(b, loc, q, 2),
                 mixedDim(b, loc, v, 3)});
  out.push_back({mixedDim(b, loc, q, 0), mixedDim(b, loc, q, 1), mixedDim(b, loc, q, 2)});
  return success();
}

LogicalResult LogSumExpOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError() << "operand 'input' must have rank >= 1, got rank 0";
  Checker c(*this);
  if (Value s = getSinks())
    if (failed(c.rank("input", getInput(), 4, "[B,H,Tq,Tk] (with sinks)")) ||
        failed(c.sinks(s, dimOf(getInput(), 1))))
      return failure();
  return c.result(in.getShape().drop_back(), accumulatorOf(getInput()));
}

LogicalResult MergePartialOp::verify() {
  auto out = tensorType(getOut1()), lse = tensorType(getLse1());
  if (out.getElementType() != lse.getElementType())
    return emitOpError() << "operand 'lse1' has element type " << lse.getElementType()
                         << ", expected the outputs' (" << out.getElementType() << ")";
  if (out.getRank() < 1 || lse.getRank() != out.getRank() - 1)
    return emitOpError() << "operand 'lse1' must have rank " << out.getRank() - 1
                         << " (the outputs' rank minus 1), got rank " << lse.getRank();
  for (int64_t i = 0; i < lse.getRank(); ++i)
    if (!agree(lse.getDimSize(i), out.getDimSize(i)))
      return emitOpError() << "operand 'lse1' dim " << i << " is "
                           << dimStr(lse.getDimSize(i)) << ", expected "
                           << dimStr(out.getDimSize(i)) << " (dim " << i << " of 'out1')";
  return success();
}

//===----------------------------------------------------------------------===//
// SdpaGradOp
//===----------------------------------------------------------------------===//

std::optional<double> SdpaGradOp::getEffectiveScale() {
  return effectiveScale(getScaleAttr(), getQuery());
}

LogicalResult SdpaGradOp::verify() {
  Checker c(*this);
  if (failed(verifySdpaOperands(*this, c)) ||
      failed(c.dropoutRate("dropout_rate", optF(getDropoutRateAttr()))) ||
      failed(c.seedNeedsRate(getDropoutSeedAttr(), getDropoutRateAttr())) ||
      failed(c.runtimeSeed(getRuntimeSeed(), getDropoutSeedAttr(), "dropout_seed",
                           getDropoutRateAttr())))
    return failure();
  Value q = getQuery(), v = getValue();
  Type elt = tensorType(q).getElementType();
  SmallVector<int64_t> outShape = sdpaShape(q, v);
  for (auto [name, x] : {std::pair<StringRef, Value>{"out", getOut()},
                         std::pair<StringRef, Value>{"grad_out", getGradOut()}}) {
    Type e = tensorType(x).getElementType();
    if (e != elt && !e.isF32())
      return emitOpError() << "operand '" << name << "' element type " << e
                           << " must be the query's (" << elt << ") or f32";
    if (failed(c.rank(name, x, 4, "[B,H,Tq,Dv]")))
      return failure();
    static const char *dims[] = {"batch", "heads", "length", "value dim"};
    static const char *why[] = {"batch B of 'query'", "heads H of 'query'",
                                "length Tq of 'query'", "value dim Dv of 'value'"};
    for (int64_t i = 0; i < 4; ++i)
      if (failed(c.dim(name, x, i, dims[i], outShape[i], why[i])))
        return failure();
  }
  Value lse = getLse();
  if (failed(c.rank("lse", lse, 3, "[B,H,Tq]")))
    return failure();
  static const char *lseWhy[] = {"batch B of 'query'", "heads H of 'query'",
                                 "length Tq of 'query'"};
  for (int64_t i = 0; i < 3; ++i)
    if (failed(c.dim("lse", lse, i, i == 0 ? "batch" : i == 1 ? "heads" : "length",
                     outShape[i], lseWhy[i])))
      return failure();
  if (Type acc = accumulatorOf(q); tensorType(lse).getElementType() != acc)
    return emitOpError() << "operand 'lse' element type " << tensorType(lse).getElementType()
                         << " must be " << acc << " (the forward's, for a " << elt
                         << " query)";
  if (failed(verifyModFunction(*this, getScoreMod(), ModKind::Score, getCaptures(),
                               "score_mod")) ||
      failed(verifyModFunction(*this, getScoreModGrad(), ModKind::Score, getCaptures(),
                               "score_mod_grad")) ||
      failed(verifyModFunction(*this, getMaskMod(), ModKind::Mask, getCaptures(), "mask_mod")))
    return failure();
  if (hasScoreMod() != !getScoreModGrad().empty())
    return emitOpError() << "needs 'score_mod' and its derivative 'score_mod_grad' together";
  if (!getCaptures().empty() && !hasScoreMod() && !hasMaskMod())
    return emitOpError() << "has captures but no 'score_mod' or 'mask_mod' function to read "
                            "them";
  if (Value dMask = getGradMask()) {
    Value mask = getMask();
    if (!mask || tensorType(mask).getElementType().isInteger(1))
      return emitOpError() << "result 'grad_mask' needs an additive (float) mask operand";
    if (dMask.getType() != mask.getType())
      return emitOpError() << "result 'grad_mask' has type " << dMask.getType()
                           << ", expected the mask's " << mask.getType();
  }
  return success();
}

LogicalResult SdpaGradOp::reifyResultShapes(OpBuilder &b, ReifiedRankedShapedTypeDims &out) {
  Location loc = getLoc();
  for (Value x : {getQuery(), getKey(), getValue()})
    out.push_back({mixedDim(b, loc, x, 0), mixedDim(b, loc, x, 1), mixedDim(b, loc, x, 2),
                   mixedDim(b, loc, x, 3)});
  if (getGradMask()) {
    Value mask = getMask();
    SmallVector<OpFoldResult> dims;
    for (int64_t i = 0, r = tensorType(mask).getRank(); i < r; ++i)
      dims.push_back(mixedDim(b, loc, mask, i));
    out.push_back(dims);
  }
  return success();
}
