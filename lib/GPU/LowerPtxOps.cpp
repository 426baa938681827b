//===- LowerPtxOps.cpp - attn_ptx ops to inline PTX -----------------------===//
//
// attn-lower-ptx-ops: each attn_ptx op becomes its PTX instruction as
// llvm.inline_asm, one small pattern per op. The PTX text lives here and
// nowhere else: the kernel schedule, the lockstep emulation and the mapping
// to gpu.launch see the ops.
//
//===----------------------------------------------------------------------===//
#include "attn/GPU/Passes.h"
#include "attn/GPU/PtxDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <string>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERPTXOPS
#include "attn/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn::ptx;

namespace {

/// `text` as llvm.inline_asm with `constraints`, replacing `op`; with side
/// effects unless the op is pure.
void replaceWithInlinePtx(PatternRewriter &rewriter, Operation *op, StringRef text,
                          StringRef constraints, bool sideEffects) {
  Type result = op->getNumResults() ? op->getResult(0).getType() : Type();
  auto asmOp = LLVM::InlineAsmOp::create(
      rewriter, op->getLoc(), result ? TypeRange{result} : TypeRange{}, op->getOperands(),
      rewriter.getStringAttr(text), rewriter.getStringAttr(constraints),
      sideEffects ? rewriter.getUnitAttr() : UnitAttr(), UnitAttr(),
      LLVM::TailCallKindAttr::get(rewriter.getContext(), LLVM::tailcallkind::TailCallKind::None),
      LLVM::AsmDialectAttr(), ArrayAttr());
  rewriter.replaceOp(op, asmOp->getResults());
}

struct BarSyncToPtx : OpRewritePattern<BarSyncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BarSyncOp op, PatternRewriter &rewriter) const override {
    replaceWithInlinePtx(rewriter, op, "bar.sync 0;", "", true);
    return success();
  }
};

struct CommitGroupToPtx : OpRewritePattern<CpAsyncCommitGroupOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CpAsyncCommitGroupOp op,
                                PatternRewriter &rewriter) const override {
    replaceWithInlinePtx(rewriter, op, "cp.async.commit_group;", "", true);
    return success();
  }
};

struct WaitGroupToPtx : OpRewritePattern<CpAsyncWaitGroupOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CpAsyncWaitGroupOp op, PatternRewriter &rewriter) const override {
    replaceWithInlinePtx(rewriter, op, "cp.async.wait_group " + std::to_string(op.getPending()) + ";",
                         "", true);
    return success();
  }
};

struct Ex2ApproxToPtx : OpRewritePattern<Ex2ApproxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Ex2ApproxOp op, PatternRewriter &rewriter) const override {
    replaceWithInlinePtx(rewriter, op, "ex2.approx.ftz.f32 $0, $1;", "=f,f", false);
    return success();
  }
};

struct CvtRnaTf32ToPtx : OpRewritePattern<CvtRnaTf32Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CvtRnaTf32Op op, PatternRewriter &rewriter) const override {
    replaceWithInlinePtx(rewriter, op, "cvt.rna.tf32.f32 $0, $1;", "=r,f", false);
    return success();
  }
};

struct AttnLowerPtxOpsPass : mlir::attn::impl::AttnLowerPtxOpsBase<AttnLowerPtxOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<BarSyncToPtx, CommitGroupToPtx, WaitGroupToPtx, Ex2ApproxToPtx, CvtRnaTf32ToPtx>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
