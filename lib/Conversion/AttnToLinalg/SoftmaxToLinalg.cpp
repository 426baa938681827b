//===- SoftmaxToLinalg.cpp - the softmax family to linalg on tensors ------===//
//
// attn.softmax, attn.dropout, attn.logsumexp and attn.merge_partial in the
// reference lowering: row reductions (max, sum of exponentials) as
// linalg.generic, fully masked rows giving 0, dropout's counter-based mask.
//
//===----------------------------------------------------------------------===//
#include "LinalgBuilders.h"
#include "SoftmaxToLinalg.h"

#include "Conversion/FlashCore/Dropout.h"
#include "Conversion/FlashCore/FlashCore.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {

/// `value`, or 0 when the row's max `m` is -inf (the whole row is masked).
Value zeroIfRowMasked(OpBuilder &b, Location l, Value m, Value value) {
  Type t = m.getType();
  Value allMasked = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m, negInf(b, l, t));
  return arith::SelectOp::create(b, l, allMasked, floatConst(b, l, t, 0.0), value).getResult();
}

Value shiftedExp(OpBuilder &b, Location l, Value x, Value m) {
  return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, m));
}

/// A [B, H, Tq] tensor of `acc` whose row (b, h, i) is f(sinks[h]) (and of
/// `rows`[b, h, i] when given).
Value perHeadRows(OpBuilder &rewriter, Location loc, ArrayRef<OpFoldResult> lead, Type acc,
                  Value sinks, Value rows,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> f) {
  MLIRContext *ctx = rewriter.getContext();
  AffineMap id = rewriter.getMultiDimIdentityMap(3);
  AffineMap head = AffineMap::get(3, 0, {getAffineDimExpr(1, ctx)}, ctx);
  Value init = tensor::EmptyOp::create(rewriter, loc, lead, acc);
  SmallVector<Value> ins{sinks};
  SmallVector<AffineMap> maps{head};
  if (rows) {
    ins.push_back(rows);
    maps.push_back(id);
  }
  maps.push_back(id);
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
             SmallVector<IteratorType>(3, kPar),
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   b, l, f(b, l, castFloat(b, l, args[0], acc), rows ? args[1] : Value()));
             })
      .getResult(0);
}

/// Per row of `x` (all dims but the last), in the type `acc`: the max m and
/// Σ_k exp(x[.., k] - m) (0 for a row that is all -inf). What softmax and
/// logsumexp share. With attention `sinks` ([H], x [B, H, Tq, Tk]), the
/// sink of the row's head counts as one more score that weighs no value:
/// m starts at sinks[h], and the sum at exp(sinks[h] - m).
std::pair<Value, Value> rowMaxAndSumExp(OpBuilder &rewriter, Location loc, Value x, Type acc,
                                        Value sinks = {}) {
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
  Value maxInit =
      sinks ? perHeadRows(rewriter, loc, lead, acc, sinks, {},
                          [](OpBuilder &, Location, Value sink, Value) { return sink; })
            : filled(rewriter, loc, lead, acc, -std::numeric_limits<double>::infinity());
  Value m = linalg::GenericOp::create(
                rewriter, loc, TypeRange{rowTy}, ValueRange{x}, ValueRange{maxInit},
                ArrayRef<AffineMap>{id, rowMap}, reduceIters,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value xv = castFloat(b, l, args[0], acc);
                  linalg::YieldOp::create(b, l,
                                          arith::MaximumFOp::create(b, l, args[1], xv).getResult());
                })
                .getResult(0);
  Value sumInit =
      sinks ? perHeadRows(rewriter, loc, lead, acc, sinks, m,
                          [](OpBuilder &b, Location l, Value sink, Value rowMax) {
                            return zeroIfRowMasked(b, l, rowMax, shiftedExp(b, l, sink, rowMax));
                          })
            : filled(rewriter, loc, lead, acc, 0.0);
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
/// m = max_k x[.., k] (with sinks: m = max(that, sink), exp(sink - m) added
/// to the sum)
struct SoftmaxToLinalg : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType(), acc = accumulatorType(elt);
    int64_t r = ty.getRank();
    Value x = a.getInput();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    AffineMap rowMap =
        AffineMap::get(r, 0, AffineMap::getMultiDimIdentityMap(r - 1, ctx).getResults(), ctx);
    // Steps 1 and 2: m = row max, s = Σ exp(x - m).
    auto [m, s] = rowMaxAndSumExp(rewriter, loc, x, acc, a.getSinks());
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

/// y = (splitmix64(seed, flat index) >> 40) >= ceil(rate·2^24) ? x / (1 - rate) : 0
struct DropoutToLinalg : OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(DropoutOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType ty = op.getType();
    Type elt = ty.getElementType(), acc = accumulatorType(elt);
    int64_t r = ty.getRank();
    float rate = op.getRateAttr().getValue().convertToFloat();
    double keepScale = flash::dropoutScale(rate);
    Value x = a.getInput();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    SmallVector<Value> dimValues;
    for (OpFoldResult s : sizes)
      dimValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, s));
    Value seed = flash::dropoutSeedValue(rewriter, loc, a.getRuntimeSeed(), op.getSeed());
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
          Value flat64 = arith::IndexCastOp::create(b, l, b.getI64Type(), flat);
          Value keep = flash::dropoutKeeps(b, l, flat64, seed, rate);
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
/// (with sinks: m = max(that, sink), exp(sink - m) added to the sum)
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
    auto [m, sum] = rowMaxAndSumExp(rewriter, loc, x, f32, a.getSinks());
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
/// side), each weight by KernelBuilder's merge rule; then O = w1·O1 + w2·O2
/// elementwise, with no exp per element.
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
    // exp(part - total) with total = -inf read as 0: 0 for a -inf part.
    auto weight = [&](OpBuilder &b, Location l, Value part, Value total) -> Value {
      flash::KernelBuilder fb{b, l};
      return fb.mergeWeight(part, fb.mergeReference(total), flash::kLog2E);
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

} // namespace

void mlir::attn::populateSoftmaxToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxToLinalg, DropoutToLinalg, LogSumExpToLinalg, MergePartialToLinalg>(
      patterns.getContext());
}
