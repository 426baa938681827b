//===- ModToLinalg.cpp - score and mask functions to linalg ---------------===//
//
// The reference lowering of attn.score_mod and attn.mask_mod: one
// elementwise linalg.generic over the [B,H,Tq,Tk] scores whose body is the
// function's, with linalg.index for (b, h, q, kv) and tensor.extract of the
// captures at clamped indices (ModFunctions.h, width 1). f16/bf16 scores are
// widened to f32 for the function and rounded after it.
//
//===----------------------------------------------------------------------===//
#include "ModToLinalg.h"

#include "Conversion/FlashCore/ModFunctions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using flash::FlashBuilder;

namespace {

/// out[b,h,i,j] = body(in[b,h,i,j], b, h, i, j) over the scores `input`.
Value mapScores(OpBuilder &b, Location loc, Value input,
                function_ref<Value(FlashBuilder &, Value, const flash::ModPoint &)> body) {
  auto t = cast<RankedTensorType>(input.getType());
  AffineMap id = b.getMultiDimIdentityMap(4);
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, input),
                                       t.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{t}, ValueRange{input}, ValueRange{init},
             ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               FlashBuilder fb{nb, nl, 1};
               flash::ModPoint at;
               at.b = linalg::IndexOp::create(nb, nl, 0);
               at.h = linalg::IndexOp::create(nb, nl, 1);
               at.q = linalg::IndexOp::create(nb, nl, 2);
               at.kv = linalg::IndexOp::create(nb, nl, 3);
               linalg::YieldOp::create(nb, nl, body(fb, args[0], at));
             })
      .getResult(0);
}

/// y = f(x, b, h, q, kv), computed in f32.
struct ScoreModToLinalg : OpConversionPattern<ScoreModOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ScoreModOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    ValueRange captures = a.getCaptures();
    Region &fn = op.getBody();
    Value y = mapScores(rewriter, op.getLoc(), a.getInput(),
                        [&](FlashBuilder &fb, Value x, flash::ModPoint at) {
                          Type elt = x.getType();
                          at.score = elt.isF32() ? x : arith::ExtFOp::create(fb.b, fb.loc, fb.f32(), x);
                          Value r = flash::emitModFunction(fb, fn, ModKind::Score, at, captures);
                          return elt.isF32() ? r : arith::TruncFOp::create(fb.b, fb.loc, elt, r);
                        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// y = keep(b, h, q, kv) ? x : -inf
struct MaskModToLinalg : OpConversionPattern<MaskModOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MaskModOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    ValueRange captures = a.getCaptures();
    Region &fn = op.getBody();
    Value y = mapScores(rewriter, op.getLoc(), a.getInput(),
                        [&](FlashBuilder &fb, Value x, const flash::ModPoint &at) {
                          Value keep = flash::emitModFunction(fb, fn, ModKind::Mask, at, captures);
                          Type elt = x.getType();
                          Value ninf = arith::ConstantOp::create(
                              fb.b, fb.loc, elt,
                              fb.b.getFloatAttr(elt, -std::numeric_limits<double>::infinity()));
                          return fb.select(keep, x, ninf);
                        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void mlir::attn::populateModToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ScoreModToLinalg, MaskModToLinalg>(patterns.getContext());
}
