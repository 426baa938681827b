//===- DecomposeVarlen.cpp - attn.sdpa_varlen into one sdpa a sequence ----===//
//
// attn.sdpa_varlen (a ragged batch along the rows) as a loop over its
// sequences, each one attn.sdpa on slices of Q, K and V inserted into the
// output's rows: no padded copy of anything, and each sdpa is what every
// pipeline already lowers (the CPU pipeline's fused kernel reads the
// slices in place). The offsets are clamped so that no contents of them
// make a slice leave its tensor.
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"
#include "Conversion/AttnToLinalg/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// sdpa_varlen(q, k, v, cu_q, cu_k) =
///   for b: out[0, :, qs_b .. qe_b] = sdpa(q[0, :, qs_b .. qe_b], k[0, :, ks_b .. ke_b], …)
/// with the rows of no sequence 0.
struct DecomposeSdpaVarlen : OpRewritePattern<SdpaVarlenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaVarlenOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    RankedTensorType ty = op.getType();
    auto idx = [&](int64_t c) { return arith::ConstantIndexOp::create(rewriter, loc, c); };
    Value zero = idx(0), one = idx(1);
    Value out = linalg_lowering::filled(rewriter, loc, linalg_lowering::resultSizes(rewriter, op),
                                        ty.getElementType(), 0.0);
    Value tq = tensor::DimOp::create(rewriter, loc, q, 2);
    Value tk = tensor::DimOp::create(rewriter, loc, k, 2);
    Value sequences = arith::SubIOp::create(
        rewriter, loc, tensor::DimOp::create(rewriter, loc, op.getCuSeqlensQ(), 0), one);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, sequences, one, ValueRange{out},
        [&](OpBuilder &b, Location l, Value s, ValueRange acc) {
          // [start, end) of sequence s in `cu`, clamped into [0, total] with
          // end >= start.
          auto range = [&](Value cu, Value total) {
            auto at = [&](Value i) {
              Value x = tensor::ExtractOp::create(b, l, cu, ValueRange{i});
              Value n = arith::IndexCastOp::create(b, l, b.getIndexType(), x);
              return arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, n, zero), total)
                  .getResult();
            };
            Value start = at(s);
            Value end = arith::MaxSIOp::create(
                b, l, at(arith::AddIOp::create(b, l, s, one)), start);
            return std::pair<Value, Value>{start, arith::SubIOp::create(b, l, end, start)};
          };
          auto [qs, lq] = range(op.getCuSeqlensQ(), tq);
          auto [ks, lk] = range(op.getCuSeqlensK(), tk);
          // A sequence without queries writes nothing; one without keys
          // keeps its rows 0 (what sdpa gives a row that sees no key).
          Value any = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, lq, zero),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, lk, zero));
          // Rows start .. start + len of x (any of q, k, v and the output).
          struct Rows {
            SmallVector<OpFoldResult> offsets, sizes, strides;
          };
          auto rowsOf = [&](Value x, Value start, Value len) {
            Rows r{{b.getIndexAttr(0), b.getIndexAttr(0), start, b.getIndexAttr(0)},
                   tensor::getMixedSizes(b, l, x),
                   SmallVector<OpFoldResult>(4, b.getIndexAttr(1))};
            r.sizes[2] = len;
            return r;
          };
          auto rows = [&](Value x, Value start, Value len) {
            Rows r = rowsOf(x, start, len);
            return tensor::ExtractSliceOp::create(b, l, x, r.offsets, r.sizes, r.strides)
                .getResult();
          };
          auto ifOp = scf::IfOp::create(
              b, l, any,
              [&](OpBuilder &t, Location tl) {
                auto sdpa = SdpaOp::create(t, tl, rows(q, qs, lq), rows(k, ks, lk),
                                           rows(v, ks, lk));
                if (Value slopes = op.getAlibiSlopes())
                  sdpa.getAlibiSlopesMutable().assign(slopes);
                if (Value sinks = op.getSinks())
                  sdpa.getSinksMutable().assign(sinks);
                sdpa.setScaleAttr(op.getScaleAttr());
                sdpa.setCausalAttr(op.getCausalAttr());
                sdpa.setSoftcapAttr(op.getSoftcapAttr());
                sdpa.setWindowAttr(op.getWindowAttr());
                Rows r = rowsOf(acc[0], qs, lq);
                Value next = tensor::InsertSliceOp::create(t, tl, sdpa.getResult(), acc[0],
                                                           r.offsets, r.sizes, r.strides);
                scf::YieldOp::create(t, tl, next);
              },
              [&](OpBuilder &e, Location el) { scf::YieldOp::create(e, el, acc[0]); });
          scf::YieldOp::create(b, l, ifOp.getResults());
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

} // namespace

void mlir::attn::populateDecomposeVarlenPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSdpaVarlen>(patterns.getContext());
}
