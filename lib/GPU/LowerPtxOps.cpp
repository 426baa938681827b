//===- LowerPtxOps.cpp - attn_ptx ops to inline PTX -----------------------===//
//
// attn-lower-ptx-ops: each attn_ptx op becomes its PTX instruction as
// llvm.inline_asm: one pattern, and one ptxOf per op naming its PTX. The PTX text lives here and
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

/// What an attn_ptx op becomes: its PTX text and operand constraints.
/// Ops with memory effects become asm with side effects; pure ones not.
struct Ptx {
  std::string text;
  StringRef constraints;
};
Ptx ptxOf(BarSyncOp) { return {"bar.sync 0;", ""}; }
Ptx ptxOf(CpAsyncCommitGroupOp) { return {"cp.async.commit_group;", ""}; }
Ptx ptxOf(CpAsyncWaitGroupOp op) {
  return {"cp.async.wait_group " + std::to_string(op.getPending()) + ";", ""};
}
Ptx ptxOf(Ex2ApproxOp) { return {"ex2.approx.ftz.f32 $0, $1;", "=f,f"}; }
Ptx ptxOf(CvtRnaTf32Op) { return {"cvt.rna.tf32.f32 $0, $1;", "=r,f"}; }

/// An attn_ptx op → llvm.inline_asm of ptxOf(op), with side effects unless
/// the op is pure.
template <typename OpTy>
struct PtxToInlineAsm : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Ptx ptx = ptxOf(op);
    bool sideEffects = !isPure(op);
    auto asmOp = LLVM::InlineAsmOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), op->getOperands(),
        rewriter.getStringAttr(ptx.text), rewriter.getStringAttr(ptx.constraints),
        sideEffects ? rewriter.getUnitAttr() : UnitAttr(), UnitAttr(),
        LLVM::TailCallKindAttr::get(rewriter.getContext(), LLVM::tailcallkind::TailCallKind::None),
        LLVM::AsmDialectAttr(), ArrayAttr());
    rewriter.replaceOp(op, asmOp->getResults());
    return success();
  }
};

struct AttnLowerPtxOpsPass : mlir::attn::impl::AttnLowerPtxOpsBase<AttnLowerPtxOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PtxToInlineAsm<BarSyncOp>, PtxToInlineAsm<CpAsyncCommitGroupOp>,
                 PtxToInlineAsm<CpAsyncWaitGroupOp>, PtxToInlineAsm<Ex2ApproxOp>,
                 PtxToInlineAsm<CvtRnaTf32Op>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
