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

/// The slice (`offsets`, `sizes`, unit strides) of a linalg.transpose's
/// result as the transpose of the same slice of its input: a sequence's
/// rows of a tokens-first [1, total, H, D] array transposed to the op's
/// [1, H, total, D] stay a transpose of a slice of the array, which the CPU
/// kernel reads in place (FlashCore's transposedView), instead of a slice
/// of a transposed copy of the whole array.
Value transposedRows(OpBuilder &b, Location l, linalg::TransposeOp transpose,
                     ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<OpFoldResult> inOffsets(perm.size()), inSizes(perm.size());
  for (auto [d, from] : llvm::enumerate(perm)) {
    inOffsets[from] = offsets[d];
    inSizes[from] = sizes[d];
  }
  Value input = tensor::ExtractSliceOp::create(
      b, l, transpose.getInput(), inOffsets, inSizes,
      SmallVector<OpFoldResult>(perm.size(), b.getIndexAttr(1)));
  auto element = cast<RankedTensorType>(transpose.getInput().getType()).getElementType();
  Value init = tensor::EmptyOp::create(b, l, sizes, element);
  return linalg::TransposeOp::create(b, l, input, init, perm).getResult()[0];
}

/// Sequence s's key count with paged keys: cu[s+1] − cu[s] clamped into
/// [0, most] (most = MB·BS, what its row of the table holds).
Value pagedLength(OpBuilder &b, Location l, Value cu, Value s, Value most) {
  auto at = [&](Value i) -> Value {
    return arith::IndexCastOp::create(b, l, b.getIndexType(),
                                      tensor::ExtractOp::create(b, l, cu, ValueRange{i}));
  };
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value next = arith::AddIOp::create(b, l, s, arith::ConstantIndexOp::create(b, l, 1));
  Value len = arith::SubIOp::create(b, l, at(next), at(s));
  return arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, len, zero), most);
}

/// Sequence s's keys and values gathered from the caches through its row
/// of the block table, `len` long, and the lengths [len] as a tensor: what
/// the fused kernels read from the pages in place.
std::tuple<Value, Value, Value> pagedKeys(OpBuilder &b, Location l, SdpaVarlenOp op, Value s,
                                          Value len) {
  Value table = op.getBlockTable();
  SmallVector<OpFoldResult> offsets{s, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, l, table);
  sizes[0] = b.getIndexAttr(1);
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  Value row = tensor::ExtractSliceOp::create(b, l, table, offsets, sizes, strides);
  Value lengths = tensor::FromElementsOp::create(
      b, l, RankedTensorType::get({1}, b.getI32Type()),
      ValueRange{arith::IndexCastOp::create(b, l, b.getI32Type(), len)});
  auto layout = KvLayoutAttr::get(b.getContext(), op.getCacheLayout());
  auto gather = [&](Value cache) -> Value {
    return GatherPagesOp::create(b, l, cache, row, lengths, layout);
  };
  return {gather(op.getKey()), gather(op.getValue()), lengths};
}

/// sdpa_varlen(q, k, v, cu_q, cu_k) =
///   for b: out[0, :, qs_b .. qe_b] = sdpa(q[0, :, qs_b .. qe_b], k[0, :, ks_b .. ke_b], …)
/// with the rows of no sequence 0; with a block table, the keys of each
/// sdpa are gather_pages of the sequence's row of the table.
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
    Value table = op.getBlockTable();
    // The keys a sequence can have: Tk, or MB·BS of paged caches.
    Value tk = table ? arith::MulIOp::create(
                           rewriter, loc, tensor::DimOp::create(rewriter, loc, table, 1),
                           tensor::DimOp::create(rewriter, loc, k,
                                                 op.getCacheLayout() == KvLayout::nhd ? 1 : 2))
                           .getResult()
                     : tensor::DimOp::create(rewriter, loc, k, 2).getResult();
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
          Value qs, lq;
          std::tie(qs, lq) = range(op.getCuSeqlensQ(), tq);
          Value ks, lk;
          if (table)
            lk = pagedLength(b, l, op.getCuSeqlensK(), s, tk);
          else
            std::tie(ks, lk) = range(op.getCuSeqlensK(), tk);
          // A sequence without queries writes nothing; one without keys
          // keeps its rows 0 (what sdpa gives a row that sees no key).
          Value any = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, lq, zero),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, lk, zero));
          // Rows start .. start + len of x (any of q, k, v and the output).
          struct Rows {
            SmallVector<OpFoldResult> offsets, sizes, strides;
          };
          auto rowsOf = [&](Value x, Value start, OpFoldResult len) {
            Rows r{{b.getIndexAttr(0), b.getIndexAttr(0), start, b.getIndexAttr(0)},
                   tensor::getMixedSizes(b, l, x),
                   SmallVector<OpFoldResult>(4, b.getIndexAttr(1))};
            r.sizes[2] = len;
            return r;
          };
          auto rows = [&](Value x, Value start, OpFoldResult len) -> Value {
            Rows r = rowsOf(x, start, len);
            if (auto transpose = x.getDefiningOp<linalg::TransposeOp>())
              return transposedRows(b, l, transpose, r.offsets, r.sizes);
            return tensor::ExtractSliceOp::create(b, l, x, r.offsets, r.sizes, r.strides)
                .getResult();
          };
          // Rows of K or V; of a quantised one (attn.dequantize of codes and
          // per-token or per-tensor scales), attn.dequantize of the rows of
          // its codes and scales, which the fused kernels read in place
          // (rather than slices of the whole tensor dequantized).
          auto keyRows = [&](Value x, Value start, Value len) -> Value {
            auto dq = x.getDefiningOp<DequantizeOp>();
            if (!dq)
              return rows(x, start, len);
            Value scale = dq.getScale();
            if (!dq.hasTensorScale()) {
              SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), b.getIndexAttr(0), start};
              SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, l, scale);
              sizes[2] = len;
              scale = tensor::ExtractSliceOp::create(b, l, scale, offsets, sizes,
                                                     SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
            }
            Value codes = rows(dq.getInput(), start, len);
            auto type = RankedTensorType::get(cast<RankedTensorType>(codes.getType()).getShape(),
                                              dq.getType().getElementType());
            return DequantizeOp::create(b, l, type, codes, scale);
          };
          // The sequence's attn.sdpa on queries[qs, qs + queries), inserted
          // into the output's rows.
          auto attend = [&](OpBuilder &t, Location tl, OpFoldResult queries) -> Value {
            SdpaOp sdpa;
            if (table) {
              auto [keys, values, lengths] = pagedKeys(t, tl, op, s, lk);
              sdpa = SdpaOp::create(t, tl, rows(q, qs, queries), keys, values);
              sdpa.getKeyLengthsMutable().assign(lengths);
            } else {
              sdpa = SdpaOp::create(t, tl, rows(q, qs, queries), keyRows(k, ks, lk),
                                    keyRows(v, ks, lk));
            }
            if (Value slopes = op.getAlibiSlopes())
              sdpa.getAlibiSlopesMutable().assign(slopes);
            if (Value sinks = op.getSinks())
              sdpa.getSinksMutable().assign(sinks);
            sdpa.setScaleAttr(op.getScaleAttr());
            sdpa.setCausalAttr(op.getCausalAttr());
            sdpa.setSoftcapAttr(op.getSoftcapAttr());
            sdpa.setWindowAttr(op.getWindowAttr());
            Rows r = rowsOf(acc[0], qs, queries);
            return tensor::InsertSliceOp::create(t, tl, sdpa.getResult(), acc[0], r.offsets,
                                                 r.sizes, r.strides);
          };
          auto ifOp = scf::IfOp::create(
              b, l, any,
              [&](OpBuilder &t, Location tl) {
                // A decoding sequence (one query) gets an sdpa of static
                // Tq = 1: the kernels' decode tile (query heads grouped per
                // K/V head, K/V read in place, keys split across threads)
                // instead of a tile of padded rows per query head.
                Value decoding = arith::CmpIOp::create(t, tl, arith::CmpIPredicate::eq, lq, one);
                auto byLength = scf::IfOp::create(
                    t, tl, decoding,
                    [&](OpBuilder &d, Location dl) {
                      scf::YieldOp::create(d, dl, attend(d, dl, d.getIndexAttr(1)));
                    },
                    [&](OpBuilder &p, Location pl) {
                      scf::YieldOp::create(p, pl, attend(p, pl, lq));
                    });
                scf::YieldOp::create(t, tl, byLength.getResults());
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
