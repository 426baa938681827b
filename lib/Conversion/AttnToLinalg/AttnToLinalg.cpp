//===- AttnToLinalg.cpp - primitive attn ops to linalg on tensors --------===//
//
// The reference lowering: deliberately unfused, one or a few linalg ops per
// attn op, the [B,H,Tq,Tk] scores materialised. f16/bf16 ops compute and
// accumulate in f32 and round once at the end of each op.
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "../FlashCore/FlashCore.h"
#include "ModToLinalg.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// f32 for f16/bf16 (compute type), the type itself otherwise.
Type computeType(Type elt) {
  return elt.isF32() ? elt : Float32Type::get(elt.getContext());
}

/// Scalar float cast to `to` (extf/truncf or nothing).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value floatConst(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}

Value negInf(OpBuilder &b, Location loc, Type t) {
  return floatConst(b, loc, t, -std::numeric_limits<double>::infinity());
}

/// The reified result sizes of `op`.
SmallVector<OpFoldResult> resultSizes(OpBuilder &b, Operation *op) {
  ReifiedRankedShapedTypeDims dims;
  LogicalResult ok = reifyResultShapes(b, op, dims);
  assert(succeeded(ok) && "attn ops reify their result shapes");
  (void)ok;
  return dims[0];
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elt) {
  return tensor::EmptyOp::create(b, loc, sizes, elt);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Type elt,
             double value) {
  Value init = emptyTensor(b, loc, sizes, elt);
  return linalg::FillOp::create(b, loc, ValueRange{floatConst(b, loc, elt, value)},
                                ValueRange{init})
      .getResult(0);
}

/// Sizes of all dims of `v` except the last.
SmallVector<OpFoldResult> leadingSizes(OpBuilder &b, Location loc, Value v) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  sizes.pop_back();
  return sizes;
}

/// Rounds an f32 accumulator to `elt` (no-op for f32).
Value roundTo(OpBuilder &b, Location loc, Value acc, Type elt,
              ArrayRef<OpFoldResult> sizes) {
  if (tensorType(acc).getElementType() == elt)
    return acc;
  int64_t rank = sizes.size();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, TypeRange{RankedTensorType::get(tensorType(acc).getShape(), elt)},
             ValueRange{acc}, ValueRange{emptyTensor(b, loc, sizes, elt)},
             ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(rank, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, castFloat(nb, nl, args[0], elt));
             })
      .getResult(0);
}

/// A contraction out[outDims] += a[aDims] * b[bDims] over `numLoops` loops
/// whose kinds are `iters`, accumulated in the compute type and rounded to
/// the result element type.
Value contraction(OpBuilder &b, Location loc, Value lhs, AffineMap lhsMap,
                  Value rhs, AffineMap rhsMap, Value acc, AffineMap accMap,
                  ArrayRef<IteratorType> iters) {
  Type accElt = tensorType(acc).getElementType();
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs},
             ValueRange{acc}, ArrayRef<AffineMap>{lhsMap, rhsMap, accMap}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = castFloat(nb, nl, args[0], accElt);
               Value y = castFloat(nb, nl, args[1], accElt);
               Value prod = arith::MulFOp::create(nb, nl, x, y);
               linalg::YieldOp::create(nb, nl,
                                       arith::AddFOp::create(nb, nl, args[2], prod).getResult());
             })
      .getResult(0);
}

/// An elementwise generic over `input` (same shape result of type
/// `resultType`), with extra `inputs` read through `extraMaps`; `body` gets
/// the builder, the location, the block arguments (input, extras..., out).
Value elementwise(OpBuilder &b, Location loc, Value input, ValueRange extras,
                  ArrayRef<AffineMap> extraMaps, RankedTensorType resultType,
                  ArrayRef<OpFoldResult> sizes,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = resultType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps{id};
  maps.append(extraMaps.begin(), extraMaps.end());
  maps.push_back(id);
  SmallVector<Value> inputs{input};
  inputs.append(extras.begin(), extras.end());
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs,
             ValueRange{emptyTensor(b, loc, sizes, resultType.getElementType())},
             maps, SmallVector<IteratorType>(rank, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args));
             })
      .getResult(0);
}

/// H / Hkv for query heads `h` and key/value heads `hkv`, which must be
/// static for the affine head map.
FailureOr<int64_t> groupSize(Operation *op, int64_t h, int64_t hkv,
                             ConversionPatternRewriter &rewriter) {
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv))
    return rewriter.notifyMatchFailure(op, "dynamic head counts");
  return h / hkv;
}

/// (b, h, ...) -> (b, h floordiv g, ...) selecting the key/value head.
AffineExpr kvHead(AffineExpr h, int64_t g) { return g == 1 ? h : h.floorDiv(g); }

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
    Type elt = resTy.getElementType(), acc = computeType(elt);
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
  Value acc = filled(rewriter, loc, sizes, computeType(elt), 0.0);
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
  Type elt = ty.getElementType(), acc = computeType(elt);
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
    Type elt = ty.getElementType(), acc = computeType(elt);
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
        shift = flash::clampDiagonalShift(rewriter, loc, d, tq, tk);
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
    Type elt = ty.getElementType(), acc = computeType(elt);
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

/// `value`, or 0 when the row's max `m` is -inf (the whole row is masked).
Value zeroIfRowMasked(OpBuilder &b, Location l, Value m, Value value) {
  Type t = m.getType();
  Value allMasked = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m, negInf(b, l, t));
  return arith::SelectOp::create(b, l, allMasked, floatConst(b, l, t, 0.0), value).getResult();
}

Value shiftedExp(OpBuilder &b, Location l, Value x, Value m) {
  return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, m));
}

/// Per row of `x` (all dims but the last), in the type `acc`: the max m and
/// Σ_k exp(x[.., k] - m) (0 for a row that is all -inf). What softmax and
/// logsumexp share.
std::pair<Value, Value> rowMaxAndSumExp(OpBuilder &rewriter, Location loc, Value x, Type acc) {
  MLIRContext *ctx = rewriter.getContext();
  RankedTensorType ty = tensorType(x);
  int64_t r = ty.getRank();
  SmallVector<OpFoldResult> lead = leadingSizes(rewriter, loc, x);
  auto rowTy = RankedTensorType::get(ty.getShape().drop_back(), acc);
  AffineMap id = rewriter.getMultiDimIdentityMap(r);
  AffineMap rowMap =
      AffineMap::get(r, 0, AffineMap::getMultiDimIdentityMap(r - 1, ctx).getResults(), ctx);
  SmallVector<IteratorType> reduceIters(r, kPar);
  reduceIters.back() = kRed;
  Value maxInit = filled(rewriter, loc, lead, acc, -std::numeric_limits<double>::infinity());
  Value m = linalg::GenericOp::create(
                rewriter, loc, TypeRange{rowTy}, ValueRange{x}, ValueRange{maxInit},
                ArrayRef<AffineMap>{id, rowMap}, reduceIters,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value xv = castFloat(b, l, args[0], acc);
                  linalg::YieldOp::create(b, l,
                                          arith::MaximumFOp::create(b, l, args[1], xv).getResult());
                })
                .getResult(0);
  Value sumInit = filled(rewriter, loc, lead, acc, 0.0);
  Value s = linalg::GenericOp::create(
                rewriter, loc, TypeRange{rowTy}, ValueRange{x, m}, ValueRange{sumInit},
                ArrayRef<AffineMap>{id, rowMap, rowMap}, reduceIters,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value e = zeroIfRowMasked(
                      b, l, args[1], shiftedExp(b, l, castFloat(b, l, args[0], acc), args[1]));
                  linalg::YieldOp::create(b, l, arith::AddFOp::create(b, l, args[2], e).getResult());
                })
                .getResult(0);
  return {m, s};
}

/// p[.., j] = m == -inf ? 0 : exp(x[.., j] - m) / Σ_k exp(x[.., k] - m),
/// m = max_k x[.., k]
struct SoftmaxToLinalg : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType(), acc = computeType(elt);
    int64_t r = ty.getRank();
    Value x = a.getInput();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    AffineMap rowMap =
        AffineMap::get(r, 0, AffineMap::getMultiDimIdentityMap(r - 1, ctx).getResults(), ctx);
    // Steps 1 and 2: m = row max, s = Σ exp(x - m).
    auto [m, s] = rowMaxAndSumExp(rewriter, loc, x, acc);
    // Step 3: p = exp(x - m) / s, 0 in a fully masked row.
    Value p = elementwise(rewriter, loc, x, {m, s}, {rowMap, rowMap}, ty, sizes,
                          [&](OpBuilder &b, Location l, ValueRange args) {
                            Value e = shiftedExp(b, l, castFloat(b, l, args[0], acc),
                                                 args[1]);
                            Value q = arith::DivFOp::create(b, l, e, args[2]);
                            return castFloat(b, l, zeroIfRowMasked(b, l, args[1], q), elt);
                          });
    rewriter.replaceOp(op, p);
    return success();
  }
};

/// splitmix64 finaliser on z = seed + (flatIndex + 1)·φ64.
Value splitmix64(OpBuilder &b, Location l, Value seed, Value flatIndex) {
  Type i64 = b.getI64Type();
  auto c = [&](uint64_t v) {
    return arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(static_cast<int64_t>(v)));
  };
  auto mix = [&](Value z, int64_t shift, uint64_t mul) -> Value {
    Value x = arith::XOrIOp::create(b, l, z, arith::ShRUIOp::create(b, l, z, c(shift)));
    return mul ? arith::MulIOp::create(b, l, x, c(mul)).getResult() : x;
  };
  Value counter = arith::AddIOp::create(b, l, flatIndex, c(1));
  Value z = arith::AddIOp::create(b, l, seed,
                                  arith::MulIOp::create(b, l, counter, c(0x9E3779B97F4A7C15ULL)));
  z = mix(z, 30, 0xBF58476D1CE4E5B9ULL);
  z = mix(z, 27, 0x94D049BB133111EBULL);
  return mix(z, 31, 0);
}

/// y = (splitmix64(seed, flat index) >> 40) >= ceil(rate·2^24) ? x / (1 - rate) : 0
struct DropoutToLinalg : OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(DropoutOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType(), acc = computeType(elt);
    int64_t r = ty.getRank();
    float rate = op.getRateAttr().getValue().convertToFloat();
    int64_t threshold = static_cast<int64_t>(std::ceil(static_cast<double>(rate) * 16777216.0));
    double keepScale = 1.0 / (1.0 - static_cast<double>(rate));
    Value x = a.getInput();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    SmallVector<Value> dimValues;
    for (OpFoldResult s : sizes)
      dimValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, s));
    int64_t seed = op.getSeed();
    Value y = elementwise(
        rewriter, loc, x, {}, {}, ty, sizes,
        [&](OpBuilder &b, Location l, ValueRange args) {
          // Row-major flat index of this element.
          Value flat = linalg::IndexOp::create(b, l, 0);
          for (int64_t k = 1; k < r; ++k) {
            Value idx = linalg::IndexOp::create(b, l, k);
            flat = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, flat, dimValues[k]), idx);
          }
          Type i64 = b.getI64Type();
          Value flat64 = arith::IndexCastOp::create(b, l, i64, flat);
          Value seedV = arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(seed));
          Value z = splitmix64(b, l, seedV, flat64);
          Value bits = arith::ShRUIOp::create(
              b, l, z, arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(40)));
          Value keep = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::uge, bits,
              arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(threshold)));
          Value xv = castFloat(b, l, args[0], acc);
          Value kept = arith::MulFOp::create(b, l, xv, floatConst(b, l, acc, keepScale));
          Value out = arith::SelectOp::create(b, l, keep, kept, floatConst(b, l, acc, 0.0));
          return castFloat(b, l, out, elt);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// r[..] = m == -inf ? -inf : m + log Σ_k exp(x[.., k] - m), m = max_k x[.., k]
struct LogSumExpToLinalg : OpConversionPattern<LogSumExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LogSumExpOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = a.getInput();
    RankedTensorType rowTy = op.getType();
    Type f32 = rowTy.getElementType();
    int64_t r = tensorType(x).getRank();
    auto isNegInf = [&](OpBuilder &b, Location l, Value m) {
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m, negInf(b, l, f32));
    };
    auto [m, sum] = rowMaxAndSumExp(rewriter, loc, x, f32);
    SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(rewriter, loc, m);
    Value lse = elementwise(rewriter, loc, m, {sum}, {rewriter.getMultiDimIdentityMap(r - 1)},
                            rowTy, rowSizes, [&](OpBuilder &b, Location l, ValueRange args) {
                              Value v = arith::AddFOp::create(
                                  b, l, args[0], math::LogOp::create(b, l, args[1]));
                              return arith::SelectOp::create(b, l, isNegInf(b, l, args[0]),
                                                             args[0], v)
                                  .getResult();
                            });
    rewriter.replaceOp(op, lse);
    return success();
  }
};

/// Per row: mx = max(l1, l2), lse = mx + log(exp(l1 - mx) + exp(l2 - mx))
/// (-inf when mx is) and the weights w_k = exp(l_k - lse) (0 for a -inf
/// side); then O = w1·O1 + w2·O2 elementwise, with no exp per element.
struct MergePartialToLinalg : OpConversionPattern<MergePartialOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MergePartialOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType outTy = op.getResult().getType(), rowTy = op.getLse().getType();
    Type f32 = rowTy.getElementType();
    int64_t r = outTy.getRank();
    auto isNegInf = [&](OpBuilder &b, Location l, Value x) {
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, negInf(b, l, f32));
    };
    auto weight = [&](OpBuilder &b, Location l, Value part, Value total) -> Value {
      return arith::SelectOp::create(
          b, l, isNegInf(b, l, part), floatConst(b, l, f32, 0.0),
          math::ExpOp::create(b, l, arith::SubFOp::create(b, l, part, total)));
    };
    SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(rewriter, loc, a.getLse1());
    AffineMap rowId = rewriter.getMultiDimIdentityMap(r - 1);
    auto rows = linalg::GenericOp::create(
        rewriter, loc, TypeRange{rowTy, rowTy, rowTy}, ValueRange{a.getLse1(), a.getLse2()},
        ValueRange{emptyTensor(rewriter, loc, rowSizes, f32),
                   emptyTensor(rewriter, loc, rowSizes, f32),
                   emptyTensor(rewriter, loc, rowSizes, f32)},
        SmallVector<AffineMap>(5, rowId), SmallVector<IteratorType>(r - 1, kPar),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value l1 = args[0], l2 = args[1];
          Value mx = arith::MaximumFOp::create(b, l, l1, l2);
          Value sum = arith::AddFOp::create(b, l, weight(b, l, l1, mx), weight(b, l, l2, mx));
          Value v = arith::AddFOp::create(b, l, mx, math::LogOp::create(b, l, sum));
          Value lse = arith::SelectOp::create(b, l, isNegInf(b, l, mx), mx, v);
          linalg::YieldOp::create(
              b, l, ValueRange{lse, weight(b, l, l1, lse), weight(b, l, l2, lse)});
        });
    AffineMap rowMap =
        AffineMap::get(r, 0, AffineMap::getMultiDimIdentityMap(r - 1, ctx).getResults(), ctx);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, a.getOut1());
    Value out = elementwise(
        rewriter, loc, a.getOut1(), {a.getOut2(), rows.getResult(1), rows.getResult(2)},
        {rewriter.getMultiDimIdentityMap(r), rowMap, rowMap}, outTy, sizes,
        [&](OpBuilder &b, Location l, ValueRange args) {
          return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, args[2], args[0]),
                                       arith::MulFOp::create(b, l, args[3], args[1]))
              .getResult();
        });
    rewriter.replaceOp(op, {out, rows.getResult(0)});
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
               MaskToLinalg, SoftmaxToLinalg, DropoutToLinalg, RopeToLinalg,
               LogSumExpToLinalg, MergePartialToLinalg>(
      patterns.getContext());
  populateModToLinalgPatterns(patterns);
}
