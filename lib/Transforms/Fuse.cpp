//===- Fuse.cpp - primitive attention chain into attn.sdpa ---------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the chain feeding a weighted_sum contributes to the fused sdpa.
struct SdpaChain {
  Value query, key;
  double scale = 1.0;       // product of every scale in the chain
  MaskOp mask;              // at most one
  double softcap = 0.0;     // 0: none; else the cap on the fully scaled scores
  DropoutOp dropout;        // optional
  ScoreModOp scoreMod;      // optional: the score function
  MaskModOp maskMod;        // optional: the mask function
  Value sinks;              // optional: the softmax's attention sinks
  SmallVector<Operation *> ops; // the chain, users before producers
};

/// Moves `from`'s function body, which reads `ownCaptures`, into `to`,
/// whose captures are `captures` (each value once): the body's capture
/// arguments become those of `captures`.
static void moveFunction(RewriterBase &rewriter, Region &from, Region &to, ModKind kind,
                         ValueRange ownCaptures, ArrayRef<Value> captures, Location loc) {
  rewriter.inlineRegionBefore(from, to, to.end());
  Block &entry = to.front();
  unsigned positions = modFunctionPositions(kind);
  for (Value c : captures)
    entry.addArgument(c.getType(), loc);
  for (auto [i, c] : llvm::enumerate(ownCaptures)) {
    unsigned at = llvm::find(captures, c) - captures.begin();
    rewriter.replaceAllUsesWith(entry.getArgument(positions + i),
                                entry.getArgument(positions + ownCaptures.size() + at));
  }
  entry.eraseArguments(positions, ownCaptures.size());
}

/// weighted_sum(dropout(softmax(mask(scale(scores(scale(q, a), k), b)))), v)
///   = sdpa(q, k, v) {scale = a·b}, with the scales and the mask in any
///   order in which they commute
struct FuseChainIntoSdpa : OpRewritePattern<WeightedSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(WeightedSumOp op,
                                PatternRewriter &rewriter) const override {
    SdpaChain chain;
    if (failed(matchChain(op, chain, rewriter)))
      return failure();
    Value key = chain.key, value = op.getValue();
    // sdpa needs V to have K's heads; the primitives only need both to
    // divide H.
    int64_t hk = cast<RankedTensorType>(key.getType()).getDimSize(1);
    int64_t hv = cast<RankedTensorType>(value.getType()).getDimSize(1);
    if (key != value && (ShapedType::isDynamic(hk) || hk != hv))
      return rewriter.notifyMatchFailure(op, "key and value do not have "
                                             "statically equal head counts");
    float scale = static_cast<float>(chain.scale);
    if (!std::isfinite(scale) || scale <= 0.0f)
      return rewriter.notifyMatchFailure(op, "product of scales is not a "
                                             "positive finite f32");

    MaskOp mask = chain.mask;
    DropoutOp dropout = chain.dropout;
    IntegerAttr seed = dropout ? dropout.getSeedAttr() : nullptr;
    if (seed && seed.getValue().isZero())
      seed = nullptr; // sdpa's dropout_seed defaults to 0 as well
    FloatAttr softcap;
    if (chain.softcap != 0.0) {
      float cap = static_cast<float>(chain.softcap);
      if (!std::isfinite(cap) || cap <= 0.0f)
        return rewriter.notifyMatchFailure(op, "softcap times the later "
                                               "scales is not a positive finite f32");
      softcap = rewriter.getF32FloatAttr(cap);
    }
    ValueRange scoreCaptures, maskCaptures;
    if (chain.scoreMod)
      scoreCaptures = chain.scoreMod.getCaptures();
    if (chain.maskMod)
      maskCaptures = chain.maskMod.getCaptures();
    SmallVector<Value> captures;
    for (Value c : llvm::concat<const Value>(scoreCaptures, maskCaptures))
      if (!llvm::is_contained(captures, c))
        captures.push_back(c);
    auto sdpa = rewriter.replaceOpWithNewOp<SdpaOp>(
        op, op.getType(), chain.query, key, value,
        mask ? mask.getMask() : Value(), mask ? mask.getAlibiSlopes() : Value(),
        mask ? mask.getKeyLengths() : Value(), chain.sinks,
        dropout ? dropout.getRuntimeSeed() : Value(), captures,
        rewriter.getF32FloatAttr(scale),
        mask ? mask.getCausalAttr() : nullptr, softcap,
        mask ? mask.getWindowAttr() : nullptr,
        dropout ? dropout.getRateAttr() : nullptr, seed);
    if (chain.scoreMod)
      moveFunction(rewriter, chain.scoreMod.getBody(), sdpa.getScoreMod(), ModKind::Score,
                   scoreCaptures, captures, sdpa.getLoc());
    if (chain.maskMod)
      moveFunction(rewriter, chain.maskMod.getBody(), sdpa.getMaskMod(), ModKind::Mask,
                   maskCaptures, captures, sdpa.getLoc());
    // Each op is dead once its user, the one before it, is gone.
    for (Operation *dead : chain.ops)
      rewriter.eraseOp(dead);
    return success();
  }

private:
  /// Walks from the weighted_sum's probs up to the scores. Every value it
  /// absorbs must have the next op of the chain as its only user: another
  /// user would need it computed anyway, next to the sdpa.
  static LogicalResult matchChain(WeightedSumOp op, SdpaChain &chain,
                                  PatternRewriter &rewriter) {
    auto absorb = [&](Value v) {
      if (!v.hasOneUse())
        return false;
      chain.ops.push_back(v.getDefiningOp());
      return true;
    };

    Value p = op.getProbs();
    if (auto dropout = p.getDefiningOp<DropoutOp>()) {
      if (!absorb(p))
        return rewriter.notifyMatchFailure(op, "dropout result has other users");
      chain.dropout = dropout;
      p = dropout.getInput();
    }
    auto softmax = p.getDefiningOp<SoftmaxOp>();
    if (!softmax)
      return rewriter.notifyMatchFailure(op, "probs are not a softmax");
    if (!absorb(p))
      return rewriter.notifyMatchFailure(op, "softmax result has other users");

    // Walk the scale/softcap/score_mod/mask/mask_mod chain against program
    // order: a scale met before the mask here is applied after it. sdpa
    // applies softcap, score_mod, then mask and mask_mod (which commute).
    chain.sinks = softmax.getSinks();
    Value x = softmax.getInput();
    bool scaledAfter = false; // a scale other than 1 is applied after x
    double scaleAfter = 1.0;  // the product of those scales
    SoftcapOp softcap;
    while (!x.getDefiningOp<ScoresOp>()) {
      Operation *def = x.getDefiningOp();
      if (!isa_and_present<ScaleOp, SoftcapOp, MaskOp, ScoreModOp, MaskModOp>(def))
        return rewriter.notifyMatchFailure(
            op, "softmax input is not a scale/softcap/score_mod/mask/mask_mod chain "
                "over attn.scores");
      if (!absorb(x))
        return rewriter.notifyMatchFailure(op, "an intermediate of the "
                                               "scale/mask chain has other users");
      if (auto scale = dyn_cast<ScaleOp>(def)) {
        double a = scale.getScaleAttr().getValueAsDouble();
        chain.scale *= a;
        scaledAfter |= a != 1.0;
        scaleAfter *= a;
        x = scale.getInput();
        continue;
      }
      if (auto mod = dyn_cast<MaskModOp>(def)) {
        if (chain.maskMod)
          return rewriter.notifyMatchFailure(op, "more than one attn.mask_mod");
        // f(-inf) and softcap(-inf) are not -inf: a mask function applied
        // before either is not one sdpa expresses.
        if (chain.scoreMod || softcap)
          return rewriter.notifyMatchFailure(
              op, "an attn.mask_mod is applied before the score_mod or softcap");
        chain.maskMod = mod;
        x = mod.getInput();
        continue;
      }
      if (auto mod = dyn_cast<ScoreModOp>(def)) {
        if (chain.scoreMod)
          return rewriter.notifyMatchFailure(op, "more than one attn.score_mod");
        // a·f(s) is not f(a·s): no scale other than 1 may follow the
        // score function.
        if (scaledAfter || softcap)
          return rewriter.notifyMatchFailure(
              op, "an attn.score_mod is followed by a scale other than 1 or a softcap");
        chain.scoreMod = mod;
        x = mod.getInput();
        continue;
      }
      if (auto cap = dyn_cast<SoftcapOp>(def)) {
        if (softcap)
          return rewriter.notifyMatchFailure(op, "more than one attn.softcap");
        // a·c·tanh(s/c) = (a·c)·tanh(a·s/(a·c)): a later scale a becomes part
        // of the cap on the fully scaled scores.
        softcap = cap;
        chain.softcap = cap.getCapAttr().getValueAsDouble() * scaleAfter;
        x = cap.getInput();
        continue;
      }
      auto mask = cast<MaskOp>(def);
      if (chain.mask)
        return rewriter.notifyMatchFailure(op, "more than one attn.mask");
      if (chain.scoreMod)
        return rewriter.notifyMatchFailure(
            op, "an attn.mask is applied before the attn.score_mod");
      // attn.sdpa has no run-time diagonal (attn.sdpa_partial does).
      if (mask.getDiagonal())
        return rewriter.notifyMatchFailure(op, "the attn.mask has a run-time diagonal");
      // softcap(-inf) = -cap: a mask applied before the softcap is not one
      // sdpa expresses (it caps first, then masks).
      if (softcap)
        return rewriter.notifyMatchFailure(
            op, "an attn.mask is applied before the attn.softcap");
      // a·(S + m) ≠ a·S + m; an i1 or causal mask (−inf) commutes with a > 0.
      Value m = mask.getMask();
      bool additive = (m && isa<FloatType>(getElementTypeOrSelf(m.getType()))) ||
                      mask.getAlibiSlopes();
      if (additive && scaledAfter)
        return rewriter.notifyMatchFailure(
            op, "an additive mask or ALiBi bias is followed by a scale other than 1");
      chain.mask = mask;
      x = mask.getInput();
    }
    auto scores = x.getDefiningOp<ScoresOp>();
    if (!absorb(x))
      return rewriter.notifyMatchFailure(op, "scores result has other users");

    // scores(scale(q, a), k) = a·scores(q, k). A scaled query with other
    // users stays as it is and becomes the sdpa's query.
    Value q = scores.getQuery();
    while (auto scale = q.getDefiningOp<ScaleOp>()) {
      if (!absorb(q))
        break;
      chain.scale *= scale.getScaleAttr().getValueAsDouble();
      q = scale.getInput();
    }
    chain.query = q;
    chain.key = scores.getKey();
    return success();
  }
};

struct AttnFusePass : mlir::attn::impl::AttnFuseBase<AttnFusePass> {
  using AttnFuseBase::AttnFuseBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseSdpaPatterns(patterns);
    // Only the fusion: no folding or region simplification, so a chain the
    // pattern refuses is left exactly as written.
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
  }
};
} // namespace

void mlir::attn::populateFuseSdpaPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseChainIntoSdpa>(patterns.getContext());
}
