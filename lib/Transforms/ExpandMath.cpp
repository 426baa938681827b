//===- ExpandMath.cpp - math.exp2/tanh into the kernels' polynomials -----===//
//
// The kernels are written with math.exp2 and math.tanh; these patterns
// expand the f32 ones into KernelBuilder's polynomials (the same code on CPU
// and GPU), and math.absf into a cleared sign bit, as attn-expand-math.
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "Conversion/FlashCore/FlashCore.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDMATH
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// f32 or a vector of f32: what the polynomials are written for.
bool isF32ScalarOrVector(Type t) {
  if (auto vt = dyn_cast<VectorType>(t))
    return vt.getElementType().isF32();
  return t.isF32();
}

/// An f32 (scalar or vector) MathOp replaced by KernelBuilder's expansion.
template <typename MathOp, Value (attn::flash::KernelBuilder::*expand)(Value)>
struct ExpandToPolynomial : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    if (!isF32ScalarOrVector(op.getType()))
      return rewriter.notifyMatchFailure(op, "not f32 or a vector of f32");
    attn::flash::KernelBuilder fb{rewriter, op.getLoc()};
    rewriter.replaceOp(op, (fb.*expand)(op.getOperand()));
    return success();
  }
};

/// |x| of an f32 (scalar or vector) as the sign bit cleared: exactly
/// math.absf, without the libdevice call (__nv_fabsf) the GPU lowering
/// would make of it (a score function's abs on the GPU).
struct AbsToSignClear : OpRewritePattern<math::AbsFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsFOp op, PatternRewriter &rewriter) const override {
    Type t = op.getType();
    if (!isF32ScalarOrVector(t))
      return rewriter.notifyMatchFailure(op, "not f32 or a vector of f32");
    Location loc = op.getLoc();
    Type bits = rewriter.getI32Type();
    if (auto vt = dyn_cast<VectorType>(t))
      bits = vt.clone(bits);
    Value x = arith::BitcastOp::create(rewriter, loc, bits, op.getOperand());
    TypedAttr ones = rewriter.getI32IntegerAttr(0x7fffffff);
    if (auto vt = dyn_cast<VectorType>(bits))
      ones = DenseElementsAttr::get(vt, ones);
    Value mask = arith::ConstantOp::create(rewriter, loc, bits, ones);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(
        op, t, arith::AndIOp::create(rewriter, loc, x, mask));
    return success();
  }
};

/// math.exp2 → exp2Polynomial; math.tanh → tanhFromExp2.
using Exp2ToPolynomial =
    ExpandToPolynomial<math::Exp2Op, &attn::flash::KernelBuilder::exp2Polynomial>;
using TanhToExp2 = ExpandToPolynomial<math::TanhOp, &attn::flash::KernelBuilder::tanhFromExp2>;

struct AttnExpandMathPass : attn::impl::AttnExpandMathBase<AttnExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    attn::populateExpandMathPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateExpandMathPatterns(RewritePatternSet &patterns) {
  patterns.add<Exp2ToPolynomial, TanhToExp2, AbsToSignClear>(patterns.getContext());
}
