//===- AttnFolds.cpp - attn folds and canonicalisation patterns ----------===//
#include "AttnShapes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

/// scale(x, 1) = x
OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getScaleAttr().getValue().isExactlyValue(1.0))
    return getInput();
  return {};
}

namespace {
/// scale(scale(x, a), b) = scale(x, a·b), when a·b is a positive finite f32
struct FoldScaleOfScale : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ScaleOp>();
    if (!inner)
      return failure();
    float product = inner.getScaleAttr().getValueAsDouble() *
                    op.getScaleAttr().getValueAsDouble();
    // An f32 overflow or underflow would turn two valid scales into an
    // invalid one; leave them apart.
    if (!std::isfinite(product) || product <= 0.0f)
      return rewriter.notifyMatchFailure(op, "product of scales is not a "
                                             "positive finite f32");
    rewriter.replaceOpWithNewOp<ScaleOp>(op, op.getType(), inner.getInput(),
                                         rewriter.getF32FloatAttr(product));
    return success();
  }
};
} // namespace

void ScaleOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<FoldScaleOfScale>(context);
}

/// merge_heads(split_heads(x)) = x
OpFoldResult MergeHeadsOp::fold(FoldAdaptor) {
  auto split = getInput().getDefiningOp<SplitHeadsOp>();
  if (split && split.getInput().getType() == getType())
    return split.getInput();
  return {};
}

/// split_heads(merge_heads(x), h) = x when x has h heads
OpFoldResult SplitHeadsOp::fold(FoldAdaptor) {
  auto merge = getInput().getDefiningOp<MergeHeadsOp>();
  if (merge && shapes::dimOf(merge.getInput(), 1) == static_cast<int64_t>(getNumHeads()) &&
      merge.getInput().getType() == getType())
    return merge.getInput();
  return {};
}

/// mask(x) with nothing to apply (no causal kind, mask operand, slopes, key
/// lengths or bounded window) = x
OpFoldResult MaskOp::fold(FoldAdaptor) {
  WindowAttr window = getWindowAttr();
  if (!getMask() && !getCausalAttr() && !getAlibiSlopes() && !getKeyLengths() &&
      (!window || window.isUnbounded()))
    return getInput();
  return {};
}

/// dropout(x, rate 0) = x
OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getRateAttr().getValue().isZero())
    return getInput();
  return {};
}
