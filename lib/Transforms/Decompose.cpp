//===- Decompose.cpp - attn.mha / attn.sdpa into primitive ops ------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// mha(xq, xkv) = project(merge(sdpa(split(project(xq, wq)), split(project(xkv, wk)),
///                                   split(project(xkv, wv)))), wo)
struct DecomposeMha : OpRewritePattern<MhaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MhaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    WeightLayout layout = op.getLayout();
    auto project = [&](Value x, Value w, Value b) -> Value {
      return ProjectOp::create(rewriter, loc, x, w, b, layout);
    };
    Value q = project(op.getQueryInput(), op.getWq(), op.getBq());
    Value k = project(op.getKvInput(), op.getWk(), op.getBk());
    Value v = project(op.getKvInput(), op.getWv(), op.getBv());
    int64_t h = op.getNumHeads(), hkv = op.getNumKvHeadsOrDefault();
    Value qh = SplitHeadsOp::create(rewriter, loc, q, h);
    Value kh = SplitHeadsOp::create(rewriter, loc, k, hkv);
    Value vh = SplitHeadsOp::create(rewriter, loc, v, hkv);
    if (Value cos = op.getRopeCos()) {
      RopeStyle style = op.getRopeStyleAttr() ? op.getRopeStyleAttr().getValue()
                                              : RopeStyle::rotate_half;
      auto rope = [&](Value x) {
        return RopeOp::create(rewriter, loc, x, cos, op.getRopeSin(), style);
      };
      qh = rope(qh);
      kh = rope(kh);
    }
    auto sdpa = SdpaOp::create(rewriter, loc, qh, kh, vh, op.getMask());
    sdpa.getAlibiSlopesMutable().assign(op.getAlibiSlopes() ? ValueRange(op.getAlibiSlopes())
                                                            : ValueRange());
    sdpa.getKeyLengthsMutable().assign(op.getKeyLengths() ? ValueRange(op.getKeyLengths())
                                                          : ValueRange());
    sdpa.setScaleAttr(op.getScaleAttr());
    sdpa.setCausalAttr(op.getCausalAttr());
    sdpa.setSoftcapAttr(op.getSoftcapAttr());
    sdpa.setWindowAttr(op.getWindowAttr());
    sdpa.setDropoutRateAttr(op.getDropoutRateAttr());
    sdpa.setDropoutSeedAttr(op.getDropoutSeedAttr());
    Value merged = MergeHeadsOp::create(rewriter, loc, sdpa);
    rewriter.replaceOp(op, project(merged, op.getWo(), op.getBo()));
    return success();
  }
};

/// sdpa(q, k, v) = weighted_sum(dropout(softmax(mask(softcap(scale(scores(q, k)))))), v)
struct DecomposeSdpa : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<double> scale = op.getEffectiveScale();
    if (!scale)
      return rewriter.notifyMatchFailure(op, "head dim is dynamic and no scale is given");
    Location loc = op.getLoc();
    Value s = ScoresOp::create(rewriter, loc, op.getQuery(), op.getKey());
    if (static_cast<float>(*scale) != 1.0f)
      s = ScaleOp::create(rewriter, loc, s,
                          rewriter.getF32FloatAttr(static_cast<float>(*scale)));
    if (FloatAttr cap = op.getSoftcapAttr())
      s = SoftcapOp::create(rewriter, loc, s, cap);
    WindowAttr window = op.getWindowAttr();
    if (window && window.isUnbounded())
      window = nullptr; // #attn.window<> keeps every key
    if (op.getMask() || op.getCausalAttr() || op.getAlibiSlopes() ||
        op.getKeyLengths() || window)
      s = MaskOp::create(rewriter, loc, s.getType(), s, op.getMask(),
                         op.getAlibiSlopes(), op.getKeyLengths(),
                         op.getCausalAttr(), window);
    Value p = SoftmaxOp::create(rewriter, loc, s);
    FloatAttr rate = op.getDropoutRateAttr();
    if (rate && !rate.getValue().isZero()) {
      IntegerAttr seed = op.getDropoutSeedAttr();
      p = DropoutOp::create(rewriter, loc, p, rate,
                            seed ? seed : rewriter.getI64IntegerAttr(0));
    }
    rewriter.replaceOpWithNewOp<WeightedSumOp>(op, p, op.getValue());
    return success();
  }
};

struct AttnDecomposePass
    : mlir::attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  using AttnDecomposeBase::AttnDecomposeBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeMhaPatterns(patterns);
    if (!keepSdpa)
      populateDecomposeSdpaPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // An sdpa that could not be expanded is an error, not a silent no-op.
    if (!keepSdpa) {
      WalkResult r = getOperation()->walk([](SdpaOp op) {
        op.emitOpError("cannot be decomposed: head dim is dynamic and no "
                       "'scale' is given");
        return WalkResult::interrupt();
      });
      if (r.wasInterrupted())
        signalPassFailure();
    }
  }
};
} // namespace

void mlir::attn::populateDecomposeMhaPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeMha>(patterns.getContext());
}

void mlir::attn::populateDecomposeSdpaPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSdpa>(patterns.getContext());
}
