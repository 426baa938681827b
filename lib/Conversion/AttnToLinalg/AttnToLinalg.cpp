//===- AttnToLinalg.cpp - primitive attn ops to linalg on tensors --------===//
//
// The reference lowering: deliberately unfused, one or a few linalg ops per
// attn op, the [B,H,Tq,Tk] scores materialised. f16/bf16 ops compute and
// accumulate in f32 and round once at the end of each op. The softmax
// family is in SoftmaxToLinalg.cpp, the score and mask functions in
// ModToLinalg.cpp, the backward of sdpa in SdpaGradToLinalg.cpp, the
// builders they share in LinalgBuilders.h.
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "Conversion/FlashCore/FlashCore.h"
#include "LinalgBuilders.h"
#include "ModToLinalg.h"
#include "PagesToLinalg.h"
#include "SdpaGradToLinalg.h"
#include "SoftmaxToLinalg.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

// The dialects the pass loads (dependentDialects in Passes.td).
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using namespace mlir::attn::linalg_lowering;

//===----------------------------------------------------------------------===//
// Patterns, one per op.
//===----------------------------------------------------------------------===//

/// y[l..., o] = b[o] + Σ_i x[l..., i] · W[o, i]   (W[i, o] for in_out)
struct ProjectToLinalg : OpConversionPattern<ProjectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ProjectOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    Type elt = resTy.getElementType(), acc = accumulatorType(elt);
    int64_t r = resTy.getRank(); // loops: l... (r-1), o, i
    int64_t n = r + 1;
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> lead;
    for (int64_t i = 0; i + 1 < r; ++i)
      lead.push_back(getAffineDimExpr(i, ctx));
    AffineExpr o = getAffineDimExpr(r - 1, ctx), in = getAffineDimExpr(r, ctx);
    auto map = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(n, 0, exprs, ctx);
    };
    SmallVector<AffineExpr> xExprs(lead), yExprs(lead);
    xExprs.push_back(in);
    yExprs.push_back(o);
    AffineMap wMap = op.getLayout() == WeightLayout::out_in ? map({o, in}) : map({in, o});

    SmallVector<OpFoldResult> sizes = resultSizes(rewriter, op);
    Value init;
    if (Value bias = a.getBias()) {
      AffineMap id = rewriter.getMultiDimIdentityMap(r);
      AffineMap bMap = AffineMap::get(r, 0, {getAffineDimExpr(r - 1, ctx)}, ctx);
      init = linalg::GenericOp::create(
                 rewriter, loc, TypeRange{RankedTensorType::get(resTy.getShape(), acc)},
                 ValueRange{bias}, ValueRange{emptyTensor(rewriter, loc, sizes, acc)},
                 ArrayRef<AffineMap>{bMap, id}, SmallVector<IteratorType>(r, kPar),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   linalg::YieldOp::create(nb, nl, castFloat(nb, nl, args[0], acc));
                 })
                 .getResult(0);
    } else {
      init = filled(rewriter, loc, sizes, acc, 0.0);
    }
    SmallVector<IteratorType> iters(n, kPar);
    iters.back() = kRed;
    Value y = contraction(rewriter, loc, a.getInput(), map(xExprs), a.getWeight(),
                          wMap, init, map(yExprs), iters);
    rewriter.replaceOp(op, roundTo(rewriter, loc, y, elt, sizes));
    return success();
  }
};

/// [B,T,h·D] → expand [B,T,h,D] → transpose [B,h,T,D]
struct SplitHeadsToLinalg : OpConversionPattern<SplitHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SplitHeadsOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resTy = op.getType();
    SmallVector<OpFoldResult> s = resultSizes(rewriter, op); // B,h,T,D
    SmallVector<OpFoldResult> expandedSizes{s[0], s[2], s[1], s[3]};
    ArrayRef<int64_t> rs = resTy.getShape();
    auto expandedTy = RankedTensorType::get({rs[0], rs[2], rs[1], rs[3]},
                                            resTy.getElementType());
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, loc, expandedTy, a.getInput(),
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}, expandedSizes);
    Value init = emptyTensor(rewriter, loc, s, resTy.getElementType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                                       ArrayRef<int64_t>{0, 2, 1, 3})
                               .getResult()[0]);
    return success();
  }
};

/// [B,h,T,D] → transpose [B,T,h,D] → collapse [B,T,h·D]
struct MergeHeadsToLinalg : OpConversionPattern<MergeHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MergeHeadsOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = a.getInput();
    RankedTensorType inTy = tensorType(in);
    SmallVector<OpFoldResult> s = tensor::getMixedSizes(rewriter, loc, in);
    Value init = emptyTensor(rewriter, loc, {s[0], s[2], s[1], s[3]},
                             inTy.getElementType());
    Value t = linalg::TransposeOp::create(rewriter, loc, in, init,
                                          ArrayRef<int64_t>{0, 2, 1, 3})
                  .getResult()[0];
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getType(), t, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    return success();
  }
};

/// out[b,h,i,n] = Σ_r lhs[b,h,i,r] · rhs[b,h/G,·,·], the contraction shared
/// by scores and weighted_sum: rhs is indexed [n, r] (K in scores) or
/// [r, n] (V in weighted_sum). GQA reads the shared key/value head in place.
static LogicalResult lowerHeadContraction(Operation *op, Value lhs, Value rhs,
                                          bool rhsReducedLast,
                                          ConversionPatternRewriter &rewriter) {
  FailureOr<int64_t> g = groupSize(op, tensorType(lhs).getDimSize(1),
                                   tensorType(rhs).getDimSize(1), rewriter);
  if (failed(g))
    return failure();
  Location loc = op->getLoc();
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr b, h, i, n, r;
  bindDims(ctx, b, h, i, n, r);
  auto map = [&](ArrayRef<AffineExpr> e) { return AffineMap::get(5, 0, e, ctx); };
  AffineExpr hk = kvHead(h, *g);
  AffineMap rhsMap = rhsReducedLast ? map({b, hk, n, r}) : map({b, hk, r, n});
  Type elt = tensorType(op->getResult(0)).getElementType();
  SmallVector<OpFoldResult> sizes = resultSizes(rewriter, op);
  Value acc = filled(rewriter, loc, sizes, accumulatorType(elt), 0.0);
  Value out = contraction(rewriter, loc, lhs, map({b, h, i, r}), rhs, rhsMap, acc,
                          map({b, h, i, n}), {kPar, kPar, kPar, kPar, kRed});
  rewriter.replaceOp(op, roundTo(rewriter, loc, out, elt, sizes));
  return success();
}

/// S[b,h,i,j] = Σ_d Q[b,h,i,d] · K[b,h/G,j,d]
struct ScoresToLinalg : OpConversionPattern<ScoresOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ScoresOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    return lowerHeadContraction(op, a.getQuery(), a.getKey(), /*rhsReducedLast=*/true,
                                rewriter);
  }
};

/// O[b,h,i,e] = Σ_j P[b,h,i,j] · V[b,h/G,j,e]
struct WeightedSumToLinalg : OpConversionPattern<WeightedSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(WeightedSumOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    return lowerHeadContraction(op, a.getProbs(), a.getValue(), /*rhsReducedLast=*/false,
                                rewriter);
  }
};

/// Replaces the same-shape op `op` (input `input`) by one elementwise
/// generic computing `fn(x)` in the compute type (f32 for f16/bf16), the
/// result rounded back to the element type.
static void replaceByUnary(Operation *op, Value input, ConversionPatternRewriter &rewriter,
                           function_ref<Value(OpBuilder &, Location, Value, Type)> fn) {
  Location loc = op->getLoc();
  auto ty = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = ty.getElementType(), acc = accumulatorType(elt);
  Value y = elementwise(rewriter, loc, input, {}, {}, ty,
                        tensor::getMixedSizes(rewriter, loc, input),
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          Value x = castFloat(b, l, args[0], acc);
                          return castFloat(b, l, fn(b, l, x, acc), elt);
                        });
  rewriter.replaceOp(op, y);
}

/// y = c · x
struct ScaleToLinalg : OpConversionPattern<ScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ScaleOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    double c = op.getScaleAttr().getValueAsDouble();
    replaceByUnary(op, a.getInput(), rewriter,
                   [&](OpBuilder &b, Location l, Value x, Type acc) -> Value {
                     return arith::MulFOp::create(b, l, x, floatConst(b, l, acc, c));
                   });
    return success();
  }
};

/// y = c · tanh(x / c)
struct SoftcapToLinalg : OpConversionPattern<SoftcapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SoftcapOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    double c = op.getCapAttr().getValueAsDouble();
    replaceByUnary(op, a.getInput(), rewriter,
                   [&](OpBuilder &b, Location l, Value x, Type acc) -> Value {
                     Value cap = floatConst(b, l, acc, c);
                     Value t = math::TanhOp::create(b, l, arith::DivFOp::create(b, l, x, cap));
                     return arith::MulFOp::create(b, l, cap, t);
                   });
    return success();
  }
};

/// z = x - slope[b,h]·|i + L - Tq - j| (+ m), then y = z where every keep
/// rule holds and -inf elsewhere: j < L (key lengths), j <= d(i) (causal),
/// d(i) - left <= j <= d(i) + right (window), m (i1 mask). L = len[b]
/// clamped to [0, Tk] (Tk without key lengths); d(i) = i (top_left) or
/// i + L - Tq (bottom_right), the causal kind's, else the window's align;
/// with a diagonal operand s, d(i) = i + s (s clamped to [-Tq, Tk], where
/// every row already sees no key / every key).
struct MaskToLinalg : OpConversionPattern<MaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MaskOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType(), acc = accumulatorType(elt);
    Value in = a.getInput();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, in);
    AffineExpr db, dh;
    bindDims(ctx, db, dh);
    auto map = [&](ArrayRef<AffineExpr> e) { return AffineMap::get(4, 0, e, ctx); };

    // Extra operands of the generic, each read in place through its map
    // (nothing is broadcast into a tensor of its own).
    SmallVector<Value> extras;
    SmallVector<AffineMap> extraMaps;
    std::optional<unsigned> maskArg, slopeArg, lengthArg;
    bool keepMask = false;
    if (Value m = a.getMask()) {
      // Right-aligned numpy broadcasting; a static 1 reads index 0.
      RankedTensorType mt = tensorType(m);
      SmallVector<AffineExpr> exprs;
      for (std::optional<unsigned> d : flash::maskOperandDims(mt))
        exprs.push_back(d ? getAffineDimExpr(*d, ctx) : getAffineConstantExpr(0, ctx));
      maskArg = 1 + extras.size();
      extras.push_back(m);
      extraMaps.push_back(map(exprs));
      keepMask = mt.getElementType().isInteger(1);
    }
    if (Value slopes = a.getAlibiSlopes()) {
      slopeArg = 1 + extras.size();
      extras.push_back(slopes);
      extraMaps.push_back(tensorType(slopes).getRank() == 1 ? map({dh}) : map({db, dh}));
    }
    if (Value lengths = a.getKeyLengths()) {
      lengthArg = 1 + extras.size();
      extras.push_back(lengths);
      extraMaps.push_back(map({db}));
    }

    std::optional<CausalKind> causal;
    if (auto c = op.getCausalAttr())
      causal = c.getValue();
    std::optional<int64_t> left, right;
    if (WindowAttr w = op.getWindowAttr()) {
      left = w.getLeft();
      right = w.getRight();
    }
    bool windowed = left || right;
    bool topLeft =
        keepRuleDiagonal(causal, op.getWindowAttr()) == CausalKind::top_left;
    bool needIndices = causal || windowed || slopeArg || lengthArg;
    // The bottom-right diagonal i + L - Tq: ALiBi's origin, and d(i) unless
    // top-left. Without key lengths L - Tq = Tk - Tq is computed once here.
    bool needRel = slopeArg || ((causal || windowed) && !topLeft);
    Value tq, tk, offset, shift;
    if (needIndices) {
      tq = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[2]);
      tk = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[3]);
      if (needRel && !lengthArg)
        offset = arith::SubIOp::create(rewriter, loc, tk, tq);
      if (Value d = a.getDiagonal())
        shift = flash::clampDiagonalShift(rewriter, loc, d, tq, tk,
                                          causal ? 0 : right.value_or(0), left.value_or(0));
    }

    Value y = elementwise(
        rewriter, loc, in, extras, extraMaps, ty, sizes,
        [&](OpBuilder &b, Location l, ValueRange args) {
          using P = arith::CmpIPredicate;
          Value x = castFloat(b, l, args[0], acc);
          Value ninf = negInf(b, l, acc);
          auto cidx = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, l, v).getResult();
          };
          Value masked; // i1: some keep rule fails
          auto maskIf = [&](Value cond) {
            masked = masked ? arith::OrIOp::create(b, l, masked, cond).getResult() : cond;
          };
          Value i, j, len, rel, diag, zero;
          if (needIndices) {
            if (slopeArg || lengthArg)
              zero = cidx(0);
            i = linalg::IndexOp::create(b, l, 2);
            j = linalg::IndexOp::create(b, l, 3);
            if (lengthArg) {
              // L = clamp(len[b], 0, Tk): never a key past Tk.
              Value n = arith::IndexCastOp::create(b, l, b.getIndexType(), args[*lengthArg]);
              len = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, n, zero), tk);
            }
            if (needRel)
              rel = lengthArg ? arith::SubIOp::create(
                                    b, l, arith::AddIOp::create(b, l, i, len), tq)
                                    .getResult()
                              : arith::AddIOp::create(b, l, i, offset).getResult();
            diag = !topLeft ? rel
                   : shift  ? arith::AddIOp::create(b, l, i, shift).getResult()
                            : i;
          }
          // Biases: ALiBi, then the additive mask.
          if (slopeArg) {
            Value dist = arith::SubIOp::create(b, l, rel, j);
            Value neg = arith::SubIOp::create(b, l, zero, dist);
            Value isNeg = arith::CmpIOp::create(b, l, P::slt, dist, zero);
            Value absDist = arith::SelectOp::create(b, l, isNeg, neg, dist);
            Value distF = arith::SIToFPOp::create(
                b, l, acc, arith::IndexCastOp::create(b, l, b.getI64Type(), absDist));
            Value slope = castFloat(b, l, args[*slopeArg], acc);
            x = arith::SubFOp::create(b, l, x, arith::MulFOp::create(b, l, slope, distF));
          }
          if (maskArg && !keepMask)
            x = arith::AddFOp::create(b, l, x, castFloat(b, l, args[*maskArg], acc));
          // Keep rules.
          if (lengthArg)
            maskIf(arith::CmpIOp::create(b, l, P::sge, j, len));
          if (causal)
            maskIf(arith::CmpIOp::create(b, l, P::sgt, j, diag));
          if (left)
            maskIf(arith::CmpIOp::create(
                b, l, P::slt, j, arith::SubIOp::create(b, l, diag, cidx(*left))));
          if (right)
            maskIf(arith::CmpIOp::create(
                b, l, P::sgt, j, arith::AddIOp::create(b, l, diag, cidx(*right))));
          if (maskArg && keepMask)
            x = arith::SelectOp::create(b, l, args[*maskArg], x, ninf);
          if (masked)
            x = arith::SelectOp::create(b, l, masked, ninf, x);
          return castFloat(b, l, x, elt);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// y[b,h,t,e] = x[e]·c - x[e']·s (first of its pair) or x[e]·c + x[e']·s
/// (second) for e < R, with e' the partner and c, s = cos/sin[(b,) t, k(e)];
/// x[e] for e >= R. rotate_half: e' = (e + R/2) mod R, k = e mod R/2;
/// interleaved: e' = e xor 1, k = e floordiv 2. The partner and the tables
/// are read through affine maps of e mod R, which stay in bounds for the
/// pass-through dims (whose reads are not used).
struct RopeToLinalg : OpConversionPattern<RopeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(RopeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType(), acc = accumulatorType(elt);
    RankedTensorType tableTy = tensorType(a.getCos());
    int64_t half = tableTy.getShape().back(), r = 2 * half, d = ty.getDimSize(3);
    bool interleaved = op.getStyle() == RopeStyle::interleaved;
    AffineExpr db, dh, dt, de;
    bindDims(ctx, db, dh, dt, de);
    auto map = [&](ArrayRef<AffineExpr> e) { return AffineMap::get(4, 0, e, ctx); };
    AffineExpr em = r == d ? de : de % r;
    AffineExpr partner = interleaved ? em + 1 - (em % 2) * 2 : (em + half) % r;
    AffineExpr k = interleaved ? em.floorDiv(2) : em % half;
    AffineMap tableMap = tableTy.getRank() == 3 ? map({db, dt, k}) : map({dt, k});
    Value x = a.getInput();
    Value y = elementwise(
        rewriter, loc, x, {x, a.getCos(), a.getSin()},
        {map({db, dh, dt, partner}), tableMap, tableMap}, ty,
        tensor::getMixedSizes(rewriter, loc, x),
        [&](OpBuilder &b, Location l, ValueRange args) {
          using P = arith::CmpIPredicate;
          auto cidx = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, l, v).getResult();
          };
          Value xe = castFloat(b, l, args[0], acc);
          Value xp = castFloat(b, l, args[1], acc);
          Value c = castFloat(b, l, args[2], acc);
          Value s = castFloat(b, l, args[3], acc);
          Value e = linalg::IndexOp::create(b, l, 3);
          Value first =
              interleaved
                  ? arith::CmpIOp::create(b, l, P::eq,
                                          arith::AndIOp::create(b, l, e, cidx(1)), cidx(0))
                  : arith::CmpIOp::create(b, l, P::slt, e, cidx(half));
          Value xc = arith::MulFOp::create(b, l, xe, c);
          Value ps = arith::MulFOp::create(b, l, xp, s);
          Value rotated = arith::SelectOp::create(b, l, first,
                                                  arith::SubFOp::create(b, l, xc, ps),
                                                  arith::AddFOp::create(b, l, xc, ps));
          if (r == d)
            return castFloat(b, l, rotated, elt);
          Value inRotary = arith::CmpIOp::create(b, l, P::slt, e, cidx(r));
          return castFloat(b, l, arith::SelectOp::create(b, l, inRotary, rotated, xe), elt);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct ConvertAttnToLinalgPass
    : mlir::attn::impl::ConvertAttnToLinalgBase<ConvertAttnToLinalgPass> {
  void runOnOperation() override {
    // Composite ops need attn-decompose first: say so rather than failing
    // with a bare "failed to legalize".
    WalkResult composite = getOperation()->walk([](Operation *op) {
      if (isa<SdpaOp, SdpaPartialOp, MhaOp>(op)) {
        op->emitOpError("must be decomposed before convert-attn-to-linalg "
                        "(run attn-decompose first)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (composite.wasInterrupted())
      return signalPassFailure();
    WalkResult grad = getOperation()->walk([](SdpaGradOp op) {
      if (!op.getEffectiveScale()) {
        op->emitOpError("needs a 'scale' for convert-attn-to-linalg: the head dim is dynamic");
        return WalkResult::interrupt();
      }
      int64_t h = tensorType(op.getQuery()).getDimSize(1);
      int64_t hkv = tensorType(op.getKey()).getDimSize(1);
      if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv)) {
        op->emitOpError("needs static head counts for convert-attn-to-linalg");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (grad.wasInterrupted())
      return signalPassFailure();
    WalkResult dynamicHeads = getOperation()->walk([](Operation *op) {
      if (!isa<ScoresOp, WeightedSumOp>(op))
        return WalkResult::advance();
      auto h = tensorType(op->getOperand(0)).getDimSize(1);
      auto hkv = tensorType(op->getOperand(1)).getDimSize(1);
      if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv)) {
        op->emitOpError("needs static head counts for convert-attn-to-linalg, "
                        "got H = ")
            << (ShapedType::isDynamic(h) ? std::string("?") : std::to_string(h))
            << ", Hkv = "
            << (ShapedType::isDynamic(hkv) ? std::string("?") : std::to_string(hkv));
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (dynamicHeads.wasInterrupted())
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<AttnDialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ProjectToLinalg, SplitHeadsToLinalg, MergeHeadsToLinalg,
               ScoresToLinalg, WeightedSumToLinalg, ScaleToLinalg, SoftcapToLinalg,
               MaskToLinalg, RopeToLinalg>(patterns.getContext());
  populateSoftmaxToLinalgPatterns(patterns);
  populateModToLinalgPatterns(patterns);
  populatePagesToLinalgPatterns(patterns);
  populateSdpaGradToLinalgPatterns(patterns);
}
