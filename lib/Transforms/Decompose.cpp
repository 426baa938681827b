//===- Decompose.cpp - attn.mha / attn.sdpa into primitive ops ------------===//
#include "attn/Transforms/Passes.h"
#include "Conversion/AttnToLinalg/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
    sdpa.getSinksMutable().assign(op.getSinks() ? ValueRange(op.getSinks()) : ValueRange());
    sdpa.getRuntimeSeedMutable().assign(op.getRuntimeSeed() ? ValueRange(op.getRuntimeSeed())
                                                            : ValueRange());
    sdpa.setScaleAttr(op.getScaleAttr());
    sdpa.setCausalAttr(op.getCausalAttr());
    sdpa.setSoftcapAttr(op.getSoftcapAttr());
    sdpa.setWindowAttr(op.getWindowAttr());
    sdpa.setDropoutRateAttr(op.getDropoutRateAttr());
    sdpa.setDropoutSeedAttr(op.getDropoutSeedAttr());
    // The score and mask functions (and their captures) are the sdpa's.
    sdpa.getCapturesMutable().assign(op.getCaptures());
    for (auto [from, to] : {std::pair<Region *, Region *>{&op.getScoreMod(), &sdpa.getScoreMod()},
                            {&op.getMaskMod(), &sdpa.getMaskMod()}})
      if (!from->empty())
        rewriter.cloneRegionBefore(*from, *to, to->end());
    Value merged = MergeHeadsOp::create(rewriter, loc, sdpa);
    rewriter.replaceOp(op, project(merged, op.getWo(), op.getBo()));
    return success();
  }
};

/// The run-time diagonal shift of `op` (attn.sdpa_partial), else null.
static Value diagonalShift(SdpaOp) { return {}; }
static Value diagonalShift(SdpaPartialOp op) { return op.getDiagonal(); }

/// `s` through the function in `fn` (one of `op`'s regions), if any: a
/// ModOp (attn.score_mod or attn.mask_mod) with the op's captures and a
/// copy of the region.
template <typename ModOp, typename OpTy>
static Value applyFunction(OpTy op, Region &fn, Value s, OpBuilder &b) {
  if (fn.empty())
    return s;
  auto mod = ModOp::create(b, op.getLoc(), s, op.getCaptures());
  IRMapping map;
  fn.cloneInto(&mod.getBody(), map);
  return mod;
}

/// The masked scores S' of an sdpa or sdpa_partial:
/// mask_mod(mask(score_mod(softcap(scale(scores(q, k)))))).
template <typename OpTy>
static Value maskedScores(OpTy op, double scale, OpBuilder &rewriter) {
  Location loc = op.getLoc();
  Value s = ScoresOp::create(rewriter, loc, op.getQuery(), op.getKey());
  if (static_cast<float>(scale) != 1.0f)
    s = ScaleOp::create(rewriter, loc, s, rewriter.getF32FloatAttr(static_cast<float>(scale)));
  if (FloatAttr cap = op.getSoftcapAttr())
    s = SoftcapOp::create(rewriter, loc, s, cap);
  s = applyFunction<ScoreModOp>(op, op.getScoreMod(), s, rewriter);
  WindowAttr window = op.getWindowAttr();
  if (window && window.isUnbounded())
    window = nullptr; // #attn.window<> keeps every key
  if (op.getMask() || op.getCausalAttr() || op.getAlibiSlopes() || op.getKeyLengths() ||
      window)
    s = MaskOp::create(rewriter, loc, s.getType(), s, op.getMask(), op.getAlibiSlopes(),
                       op.getKeyLengths(), diagonalShift(op), op.getCausalAttr(), window);
  return applyFunction<MaskModOp>(op, op.getMaskMod(), s, rewriter);
}

/// sdpa(q, k, v) = weighted_sum(dropout(softmax(mask(softcap(scale(scores(q, k)))))), v)
struct DecomposeSdpa : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> r = decomposeSdpa(rewriter, op);
    if (failed(r))
      return rewriter.notifyMatchFailure(op, "head dim is dynamic and no scale is given");
    rewriter.replaceOp(op, *r);
    return success();
  }
};

/// `x` (f16/bf16) extended to f32 elementwise; `x` itself when f32 or f64
/// (the partial results' type, accumulatorType).
static Value extendToF32(OpBuilder &b, Location loc, Value x) {
  Type acc = accumulatorType(cast<RankedTensorType>(x.getType()).getElementType());
  return linalg_lowering::roundTo(b, loc, x, acc, tensor::getMixedSizes(b, loc, x));
}

/// sdpa_partial(q, k, v) = (weighted_sum([dropout](softmax(S')), v) in f32,
/// logsumexp(S')) with S' the masked scores.
struct DecomposeSdpaPartial : OpRewritePattern<SdpaPartialOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaPartialOp op, PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> r = decomposeSdpaPartial(rewriter, op);
    if (failed(r))
      return rewriter.notifyMatchFailure(op, "head dim is dynamic and no scale is given");
    rewriter.replaceOp(op, *r);
    return success();
  }
};

struct AttnDecomposePass
    : mlir::attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  using AttnDecomposeBase::AttnDecomposeBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeMhaPatterns(patterns);
    populateDecomposeVarlenPatterns(patterns);
    if (!keepSdpa)
      populateDecomposeSdpaPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // An sdpa that could not be expanded is an error, not a silent no-op.
    if (!keepSdpa) {
      WalkResult r = getOperation()->walk([](Operation *op) {
        if (!isa<SdpaOp, SdpaPartialOp>(op))
          return WalkResult::advance();
        op->emitOpError("cannot be decomposed: head dim is dynamic and no "
                        "'scale' is given");
        return WalkResult::interrupt();
      });
      if (r.wasInterrupted())
        signalPassFailure();
    }
  }
};
} // namespace

FailureOr<SmallVector<Value>> mlir::attn::decomposeSdpa(OpBuilder &b, SdpaOp op) {
  std::optional<double> scale = op.getEffectiveScale();
  if (!scale)
    return failure();
  Location loc = op.getLoc();
  Value p = SoftmaxOp::create(b, loc, maskedScores(op, *scale, b), op.getSinks());
  FloatAttr rate = op.getDropoutRateAttr();
  if (rate && !rate.getValue().isZero()) {
    IntegerAttr seed = op.getDropoutSeedAttr();
    p = DropoutOp::create(b, loc, p, op.getRuntimeSeed(), rate,
                          seed ? seed : b.getI64IntegerAttr(0));
  }
  return SmallVector<Value>{WeightedSumOp::create(b, loc, p, op.getValue())};
}

FailureOr<SmallVector<Value>> mlir::attn::decomposeSdpaPartial(OpBuilder &b,
                                                               SdpaPartialOp op) {
  std::optional<double> scale = op.getEffectiveScale();
  if (!scale)
    return failure();
  Location loc = op.getLoc();
  Value s = maskedScores(op, *scale, b);
  Value lse = LogSumExpOp::create(b, loc, op.getLse().getType(), s, op.getSinks());
  // The weighted sum in f32 (probabilities and V widened): the partial
  // output is not rounded to f16/bf16 before it is merged.
  Value p = extendToF32(b, loc, SoftmaxOp::create(b, loc, s, op.getSinks()));
  // Dropout weighs V by the dropped probabilities; lse stays the
  // undropped softmax's.
  if (FloatAttr rate = op.getDropoutRateAttr(); rate && !rate.getValue().isZero()) {
    IntegerAttr seed = op.getDropoutSeedAttr();
    p = DropoutOp::create(b, loc, p, op.getRuntimeSeed(), rate,
                          seed ? seed : b.getI64IntegerAttr(0));
  }
  Value o = WeightedSumOp::create(b, loc, p, extendToF32(b, loc, op.getValue()));
  return SmallVector<Value>{o, lse};
}

void mlir::attn::populateDecomposeMhaPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeMha>(patterns.getContext());
}

void mlir::attn::populateDecomposeSdpaPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSdpa, DecomposeSdpaPartial>(patterns.getContext());
}
