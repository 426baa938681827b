//===- MergePartialToLoops.cpp - attn.merge_partial to a parallel loop ----===//
//
// attn.merge_partial (two partial attentions over disjoint key ranges,
// each with its log-sum-exp) merged row by row in one parallel loop.
//
//===----------------------------------------------------------------------===//
#include "Microkernels.h"
#include "PopulatePatterns.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {
namespace {

/// merge_partial as one parallel loop over the rows: per row the merged
/// lse and the two weights w_k = exp(lse_k - lse) (0 for a -inf side), then
/// O = w1·O1 + w2·O2 in vectors. (The reference lowering's loops are serial:
/// a ring merges once per block and step, after a parallel kernel.)
struct MergePartialToParallelLoops : OpRewritePattern<MergePartialOp> {
  MergePartialToParallelLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(MergePartialOp op, PatternRewriter &rewriter) const override {
    RankedTensorType outT = op.getResult().getType(), lseT = op.getLse().getType();
    int64_t rank = outT.getRank();
    if (rank < 2)
      return rewriter.notifyMatchFailure(op, "rank-1 outputs take the reference lowering");
    if (!outT.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "f64 takes the reference lowering");
    Location loc = op.getLoc();
    KernelBuilder e{rewriter, loc, tiling.vectorWidth};
    auto buffer = [&](Value t) -> Value {
      return bufferization::ToBufferOp::create(
          rewriter, loc, anyLayoutBuffer(cast<RankedTensorType>(t.getType())), t,
          /*read_only=*/true);
    };
    Value o1 = buffer(op.getOut1()), o2 = buffer(op.getOut2());
    Value l1 = buffer(op.getLse1()), l2 = buffer(op.getLse2());
    SmallVector<Value> rows, dynOut, dynLse;
    for (int64_t i = 0; i < rank - 1; ++i) {
      Value d = memref::DimOp::create(rewriter, loc, o1, i);
      rows.push_back(d);
      if (outT.isDynamicDim(i)) {
        dynOut.push_back(d);
        dynLse.push_back(d);
      }
    }
    Value dv = memref::DimOp::create(rewriter, loc, o1, rank - 1);
    if (outT.isDynamicDim(rank - 1))
      dynOut.push_back(dv);
    Value out = memref::AllocOp::create(rewriter, loc,
                                        MemRefType::get(outT.getShape(), e.f32()), dynOut,
                                        rewriter.getI64IntegerAttr(64));
    Value lse = memref::AllocOp::create(rewriter, loc,
                                        MemRefType::get(lseT.getShape(), e.f32()), dynLse,
                                        rewriter.getI64IntegerAttr(64));
    int64_t w = tiling.vectorWidth;
    Value dvVec = e.sub(dv, e.rem(dv, e.idx(w)));
    parallelLoop(e, rows, /*stackScope=*/false, [&](ValueRange ivs) {
      Value a = e.load(l1, ivs), b = e.load(l2, ivs);
      Value mx = e.fmax(a, b);
      Value none = e.cmpF(arith::CmpFPredicate::OEQ, mx, e.negInf());
      Value mxSafe = e.mergeReference(mx);
      Value wa = e.mergeWeight(a, mxSafe, kLog2E);
      Value wb = e.mergeWeight(b, mxSafe, kLog2E);
      Value sum = e.fadd(wa, wb);
      Value merged = e.fadd(mx, math::LogOp::create(e.b, e.loc, sum));
      e.store(e.select(none, e.negInf(), merged), lse, ivs);
      Value inv = e.inverseRowSum(sum);
      Value w1 = e.fmul(wa, inv), w2 = e.fmul(wb, inv);
      auto at = [&](Value c) {
        SmallVector<Value> idx(ivs);
        idx.push_back(c);
        return idx;
      };
      Value w1v = e.bcast(w1), w2v = e.bcast(w2);
      e.loop(e.idx(0), dvVec, w, [&](Value c) {
        e.vstore(e.fma(w1v, e.vload(o1, at(c)), e.fmul(w2v, e.vload(o2, at(c)))), out, at(c));
      });
      e.loop(dvVec, dv, 1, [&](Value c) {
        e.store(e.fma(w1, e.load(o1, at(c)), e.fmul(w2, e.load(o2, at(c)))), out, at(c));
      });
    });
    auto tensorOf = [&](RankedTensorType t, Value m) -> Value {
      return bufferization::ToTensorOp::create(rewriter, loc, t, m, /*restrict=*/true,
                                               /*writable=*/true);
    };
    rewriter.replaceOp(op, {tensorOf(outT, out), tensorOf(lseT, lse)});
    return success();
  }

  ConvertAttnToLoopsOptions tiling;
};

} // namespace

void populateMergePartialToLoopsPatterns(RewritePatternSet &patterns,
                                         const ConvertAttnToLoopsOptions &options) {
  patterns.add<MergePartialToParallelLoops>(patterns.getContext(), options);
}

} // namespace mlir::attn::loops
