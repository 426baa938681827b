//===- SdpaGradToLinalg.cpp - attn.sdpa_grad, the reference route ---------===//
//
// The backward of attention written out (docs/training.md has the maths):
// the reference route, deliberately unfused.
//
//   S' = mask_mod(mask(score_mod(softcap(scale · Q·Kᵀ))))  attn primitives, lowered in turn
//   P  = exp(S' - lse)                      0 on a row with lse = -inf
//   dP = dO·Vᵀ,  D = rowsum(dO ∘ O)
//   dS = P ∘ (dP - D) ∘ softcap' ∘ f'       softcap' = 1 - (capped / c)², f' the
//                                           score function's slope (score_mod_grad)
//   dQ = scale · dS·K
//   dK = scale · Σ_group dSᵀ·Q,  dV = Σ_group Pᵀ·dO
//   dMask = Σ_broadcast P ∘ (dP - D)        when grad_mask is asked for
//
// Every tensor is f32 (f16/bf16 operands widened once); the gradients are
// rounded to the operands' types at the end. The group sums read dS, P, Q
// and dO reshaped to [B, Hkv, G, Tq, ·], so that each query head's rows add
// into its key/value head in one contraction. Every contraction's loop
// nest keeps a contiguous dim innermost (an axpy over rows, which LLVM
// vectorises), not the reduced dim (measured in bench/NOTES.md,
// 2026-12-04: The attention backward).
//
//===----------------------------------------------------------------------===//
#include "SdpaGradToLinalg.h"

#include "LinalgBuilders.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {

/// `x` widened to `acc` (itself when of that type).
Value widen(OpBuilder &b, Location loc, Value x, Type acc) {
  return roundTo(b, loc, x, acc, tensor::getMixedSizes(b, loc, x));
}

/// dq[b, h, i, d] = Σ_j ds[b, h, i, j] · k[b, h/G, j, d], in ds's type, loops
/// (b, h, i, j, d): d innermost, as above.
Value rowsTimesKeys(OpBuilder &b, Location loc, Value ds, Value k, int64_t g,
                    ArrayRef<OpFoldResult> outSizes) {
  MLIRContext *ctx = b.getContext();
  AffineExpr bb, h, i, j, d;
  bindDims(ctx, bb, h, i, j, d);
  auto map = [&](ArrayRef<AffineExpr> e) { return AffineMap::get(5, 0, e, ctx); };
  Value acc = filled(b, loc, outSizes, tensorType(ds).getElementType(), 0.0);
  return contraction(b, loc, ds, map({bb, h, i, j}), k, map({bb, kvHead(h, g), j, d}), acc,
                     map({bb, h, i, d}), {kPar, kPar, kPar, kRed, kPar});
}

/// s[b, h, i, j] = Σ_d a[b, h, i, d] · c[b, h/G, j, d] (Q·Kᵀ, dO·Vᵀ), in
/// a's type: c transposed once to [B, Hkv, D, Tk], then loops (b, h, i, d, j)
/// with j innermost (contiguous rows of the result and of cᵀ).
Value rowsTimesTransposed(OpBuilder &b, Location loc, Value a, Value c, int64_t g) {
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> cs = tensor::getMixedSizes(b, loc, c);
  Type acc = tensorType(a).getElementType();
  Value ct = linalg::TransposeOp::create(
                 b, loc, c, emptyTensor(b, loc, {cs[0], cs[1], cs[3], cs[2]}, acc),
                 ArrayRef<int64_t>{0, 1, 3, 2})
                 ->getResult(0);
  SmallVector<OpFoldResult> as = tensor::getMixedSizes(b, loc, a);
  AffineExpr bb, h, i, d, j;
  bindDims(ctx, bb, h, i, d, j);
  auto map = [&](ArrayRef<AffineExpr> e) { return AffineMap::get(5, 0, e, ctx); };
  return contraction(b, loc, a, map({bb, h, i, d}), ct, map({bb, kvHead(h, g), d, j}),
                     filled(b, loc, {as[0], as[1], as[2], cs[2]}, acc, 0.0),
                     map({bb, h, i, j}), {kPar, kPar, kPar, kRed, kPar});
}

/// `x` times `scale` (x itself when the scale is 1 in f32).
Value scaled(OpBuilder &b, Location loc, Value x, double scale) {
  if (static_cast<float>(scale) == 1.0f)
    return x;
  return ScaleOp::create(b, loc, x, b.getF32FloatAttr(static_cast<float>(scale)));
}

/// `x` times `scale`, rounded to `elt`.
Value scaleAndRound(OpBuilder &b, Location loc, Value x, double scale, Type elt) {
  x = scaled(b, loc, x, scale);
  return roundTo(b, loc, x, elt, tensor::getMixedSizes(b, loc, x));
}

/// `x` [B,H,Tq,Tk] (the accumulator type) summed to the shape of `mask` (numpy broadcasting:
/// a dim the mask lacks or has as a static 1 where x's is not is summed),
/// rounded to `type` (the mask's).
Value reduceToMask(OpBuilder &b, Location loc, Value x, Value mask, RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  int64_t r = type.getRank();
  SmallVector<AffineExpr> out;
  SmallVector<IteratorType> iters;
  SmallVector<OpFoldResult> sizes;
  for (int64_t t = 0; t < 4; ++t) {
    int64_t m = t - (4 - r); // the mask's dim, < 0 when it lacks one
    bool summed = m < 0 || (type.getDimSize(m) == 1 && tensorType(x).getDimSize(t) != 1);
    iters.push_back(summed ? kRed : kPar);
    if (m < 0)
      continue;
    out.push_back(summed ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(t, ctx));
    sizes.push_back(tensor::getMixedSize(b, loc, mask, m));
  }
  Value acc = filled(b, loc, sizes, tensorType(x).getElementType(), 0.0);
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{acc.getType()}, ValueRange{x}, ValueRange{acc},
                  ArrayRef<AffineMap>{b.getMultiDimIdentityMap(4),
                                      AffineMap::get(4, 0, out, ctx)},
                  iters,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(nb, nl,
                                            ValueRange{arith::AddFOp::create(nb, nl, args[0],
                                                                             args[1])});
                  })
                  .getResult(0);
  return roundTo(b, loc, sum, type.getElementType(), sizes);
}

struct SdpaGradToLinalg : OpConversionPattern<SdpaGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SdpaGradOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<double> scale = op.getEffectiveScale();
    if (!scale)
      return rewriter.notifyMatchFailure(op, "head dim is dynamic and no scale is given");
    int64_t h = tensorType(a.getQuery()).getDimSize(1);
    int64_t hkv = tensorType(a.getKey()).getDimSize(1);
    FailureOr<int64_t> g = groupSize(op, h, hkv, rewriter);
    if (failed(g))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    // f32, f64 for f64 (the lse's type).
    Type acc = accumulatorType(tensorType(a.getQuery()).getElementType());
    Value q = widen(rewriter, loc, a.getQuery(), acc), k = widen(rewriter, loc, a.getKey(), acc),
          v = widen(rewriter, loc, a.getValue(), acc), o = widen(rewriter, loc, a.getOut(), acc),
          dO = widen(rewriter, loc, a.getGradOut(), acc), lse = a.getLse();

    // The masked scores, as the forward computes them (in `acc`).
    Value s = scaled(rewriter, loc, rowsTimesTransposed(rewriter, loc, q, k, *g), *scale);
    FloatAttr cap = op.getSoftcapAttr();
    Value capped = cap ? Value(SoftcapOp::create(rewriter, loc, s, cap)) : s;
    WindowAttr window = op.getWindowAttr();
    if (window && window.isUnbounded())
      window = nullptr;
    Value mask = a.getMask();
    if (mask && !tensorType(mask).getElementType().isInteger(1))
      mask = widen(rewriter, loc, mask, acc);
    // The score function y = f(capped) and its slope f'(capped) (the
    // op's score_mod_grad region), each an attn.score_mod on the scores.
    Value modded = capped, slope;
    if (op.hasScoreMod()) {
      auto applied = [&](Region &fn) -> Value {
        auto mod = ScoreModOp::create(rewriter, loc, capped, a.getCaptures());
        rewriter.cloneRegionBefore(fn, mod.getBody(), mod.getBody().end());
        return mod;
      };
      modded = applied(op.getScoreMod());
      slope = applied(op.getScoreModGrad());
    }
    Value masked = modded;
    if (mask || op.getCausalAttr() || a.getAlibiSlopes() || a.getKeyLengths() || window)
      masked = MaskOp::create(rewriter, loc, modded.getType(), modded, mask, a.getAlibiSlopes(),
                              a.getKeyLengths(), /*diagonal=*/Value(), op.getCausalAttr(),
                              window);
    if (op.hasMaskMod()) {
      auto keep = MaskModOp::create(rewriter, loc, masked, a.getCaptures());
      rewriter.cloneRegionBefore(op.getMaskMod(), keep.getBody(), keep.getBody().end());
      masked = keep;
    }

    SmallVector<OpFoldResult> scoreSizes = tensor::getMixedSizes(rewriter, loc, masked);
    auto scoresType = RankedTensorType::get(tensorType(s).getShape(), acc);
    AffineExpr b, hh, i, j;
    bindDims(ctx, b, hh, i, j);
    AffineMap rowMap = AffineMap::get(4, 0, {b, hh, i}, ctx);

    // P = exp(S' - lse), 0 where the row kept no key.
    Value p = elementwise(
        rewriter, loc, masked, {lse}, {rowMap}, scoresType, scoreSizes,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, args[1],
                                              negInf(nb, nl, acc));
          Value e = math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, args[0], args[1]));
          return arith::SelectOp::create(nb, nl, empty, floatConst(nb, nl, acc, 0.0), e);
        });

    // dP = dO·Vᵀ; D = rowsum(dO ∘ O). With dropout, dP = Z ∘ dO·Vᵀ and dV
    // weighs by Z ∘ P: attn.dropout on the [B,H,Tq,Tk] tensors drops the
    // forward's elements (same rate, seed and flat indices).
    Value dp = rowsTimesTransposed(rewriter, loc, dO, v, *g);
    Value pForV = p;
    if (FloatAttr rate = op.getDropoutRateAttr(); rate && !rate.getValue().isZero()) {
      IntegerAttr seed = op.getDropoutSeedAttr();
      if (!seed)
        seed = rewriter.getI64IntegerAttr(0);
      Value runtimeSeed = a.getRuntimeSeed();
      dp = DropoutOp::create(rewriter, loc, dp, runtimeSeed, rate, seed);
      pForV = DropoutOp::create(rewriter, loc, p, runtimeSeed, rate, seed);
    }
    SmallVector<OpFoldResult> rowSizes = leadingSizes(rewriter, loc, o);
    AffineExpr e;
    bindDims(ctx, b, hh, i, e);
    AffineMap full = AffineMap::get(4, 0, {b, hh, i, e}, ctx);
    Value dRow = contraction(rewriter, loc, dO, full, o, full,
                             filled(rewriter, loc, rowSizes, acc, 0.0), rowMap,
                             {kPar, kPar, kPar, kRed});

    // The mask's gradient, when asked: P ∘ (dP - D), the gradient of the
    // masked scores, summed over the dims the mask broadcasts.
    Value dMask;
    if (Value gm = op.getGradMask()) {
      Value dMasked = elementwise(
          rewriter, loc, p, ValueRange{dp, dRow},
          {rewriter.getMultiDimIdentityMap(4), rowMap}, scoresType, scoreSizes,
          [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::MulFOp::create(nb, nl, args[0],
                                         arith::SubFOp::create(nb, nl, args[1], args[2]));
          });
      dMask = reduceToMask(rewriter, loc, dMasked, a.getMask(), tensorType(gm));
    }

    // dS = P ∘ (dP - D), times softcap's derivative 1 - (capped / c)².
    SmallVector<Value> extras{dp, dRow};
    SmallVector<AffineMap> extraMaps{rewriter.getMultiDimIdentityMap(4), rowMap};
    if (cap) {
      extras.push_back(capped);
      extraMaps.push_back(rewriter.getMultiDimIdentityMap(4));
    }
    if (slope) {
      extras.push_back(slope);
      extraMaps.push_back(rewriter.getMultiDimIdentityMap(4));
    }
    Value ds = elementwise(
        rewriter, loc, p, extras, extraMaps, scoresType, scoreSizes,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value diff = arith::SubFOp::create(nb, nl, args[1], args[2]);
          Value r = arith::MulFOp::create(nb, nl, args[0], diff);
          if (cap) {
            Value t = arith::DivFOp::create(
                nb, nl, args[3], floatConst(nb, nl, acc, cap.getValueAsDouble()));
            Value d = arith::SubFOp::create(nb, nl, floatConst(nb, nl, acc, 1.0),
                                            arith::MulFOp::create(nb, nl, t, t));
            r = arith::MulFOp::create(nb, nl, r, d);
          }
          if (!slope)
            return r;
          // The slope, 0 where P = 0 (a slope that is not finite at a
          // masked score never reaches dS).
          Value zero = floatConst(nb, nl, acc, 0.0);
          Value none = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, args[0], zero);
          return arith::SelectOp::create(
              nb, nl, none, zero, arith::MulFOp::create(nb, nl, r, args[cap ? 4 : 3]));
        });

    // dQ = scale · dS·K (K read through the GQA head map).
    Value dq = scaleAndRound(rewriter, loc,
                             rowsTimesKeys(rewriter, loc, ds, k, *g,
                                           tensor::getMixedSizes(rewriter, loc, q)),
                             *scale, tensorType(op.getGradQuery()).getElementType());
    // dK = scale · Σ_group dSᵀ·Q, dV = Σ_group Pᵀ·dO.
    Value dk = groupedTransposedProduct(
        rewriter, loc, splitGroups(rewriter, loc, ds, hkv, *g),
        splitGroups(rewriter, loc, q, hkv, *g), tensor::getMixedSizes(rewriter, loc, k));
    dk = scaleAndRound(rewriter, loc, dk, *scale, tensorType(op.getGradKey()).getElementType());
    Value dv = groupedTransposedProduct(
        rewriter, loc, splitGroups(rewriter, loc, pForV, hkv, *g),
        splitGroups(rewriter, loc, dO, hkv, *g), tensor::getMixedSizes(rewriter, loc, v));
    dv = scaleAndRound(rewriter, loc, dv, 1.0, tensorType(op.getGradValue()).getElementType());
    SmallVector<Value> results{dq, dk, dv};
    if (dMask)
      results.push_back(dMask);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::attn::populateSdpaGradToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SdpaGradToLinalg>(patterns.getContext());
}
