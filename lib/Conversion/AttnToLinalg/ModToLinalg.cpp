//===- ModToLinalg.cpp - score and mask functions to linalg ---------------===//
//
// The reference lowering of attn.score_mod and attn.mask_mod: one
// elementwise linalg.generic over the [B,H,Tq,Tk] scores whose body is the
// function's, with linalg.index for (b, h, q, kv) and tensor.extract of the
// captures at clamped indices (ModFunctions.h, width 1). f16/bf16 scores are
// widened to f32 for the function and rounded after it.
//
// attn.block_mask: one linalg.generic over (b, h, Q block, KV block, row,
// key) that reduces the function to "any kept" and "all kept" per tile,
// then a loop nest that compacts each (b, h, Q block)'s partial and full
// KV blocks into the lists.
//
//===----------------------------------------------------------------------===//
#include "ModToLinalg.h"

#include "Conversion/FlashCore/ModFunctions.h"
#include "LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using flash::KernelBuilder;

namespace {

/// out[b,h,i,j] = body(in[b,h,i,j], b, h, i, j) over the scores `input`.
Value mapScores(OpBuilder &b, Location loc, Value input,
                function_ref<Value(KernelBuilder &, Value, const flash::ModPoint &)> body) {
  auto t = cast<RankedTensorType>(input.getType());
  AffineMap id = b.getMultiDimIdentityMap(4);
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, input),
                                       t.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{t}, ValueRange{input}, ValueRange{init},
             ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               KernelBuilder fb{nb, nl, 1};
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
                        [&](KernelBuilder &fb, Value x, flash::ModPoint at) {
                          Type elt = x.getType();
                          // The function's score is f32 (an f64 score is rounded).
                          at.score = linalg_lowering::castFloat(fb.b, fb.loc, x, fb.f32());
                          Value r = flash::emitModFunction(fb, fn, ModKind::Score, at, captures);
                          return linalg_lowering::castFloat(fb.b, fb.loc, r, elt);
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
                        [&](KernelBuilder &fb, Value x, const flash::ModPoint &at) {
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


/// Per (b, h, Q block m, KV block n): whether the function keeps any, and
/// every, position of the tile inside the [q_len, kv_len] grid (i1
/// tensors [B,H,NQ,NK]).
std::pair<Value, Value> keptPerTile(OpBuilder &b, Location loc, BlockMaskOp op,
                                    ValueRange captures) {
  auto lists = cast<RankedTensorType>(op.getKvIndices().getType());
  ArrayRef<int64_t> block = op.getBlockSize();
  Type i1 = b.getI1Type();
  auto fill = [&](bool v) {
    Value init = tensor::EmptyOp::create(b, loc, lists.getShape(), i1);
    Value c = arith::ConstantOp::create(b, loc, b.getBoolAttr(v));
    return linalg::FillOp::create(b, loc, c, init).getResult(0);
  };
  // The tile's positions are the reduction dims: an operand of their shape
  // gives the loops their extent (its values are not read).
  Value window = tensor::EmptyOp::create(b, loc, block, i1);
  MLIRContext *ctx = b.getContext();
  AffineMap tileMap = AffineMap::get(6, 0,
                                     {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                                      getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)},
                                     ctx);
  AffineMap windowMap =
      AffineMap::get(6, 0, {getAffineDimExpr(4, ctx), getAffineDimExpr(5, ctx)}, ctx);
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  iters.append(2, utils::IteratorType::reduction);
  Region &fn = op.getBody();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{lists.clone(i1), lists.clone(i1)}, ValueRange{window},
      ValueRange{fill(false), fill(true)},
      ArrayRef<AffineMap>{windowMap, tileMap, tileMap}, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        KernelBuilder fb{nb, nl, 1};
        auto index = [&](int64_t d) { return linalg::IndexOp::create(nb, nl, d); };
        flash::ModPoint at;
        at.b = index(0);
        at.h = index(1);
        at.q = fb.add(fb.mul(index(2), fb.idx(block[0])), index(4));
        at.kv = fb.add(fb.mul(index(3), fb.idx(block[1])), index(5));
        Value inside = fb.andI(fb.lt(at.q, fb.idx(op.getQLen())),
                               fb.lt(at.kv, fb.idx(op.getKvLen())));
        Value keep = flash::emitModFunction(fb, fn, ModKind::Mask, at, captures);
        Value any = fb.orI(args[1], fb.andI(keep, inside));
        Value all = fb.andI(args[2], fb.orI(keep, fb.notI(inside)));
        linalg::YieldOp::create(nb, nl, ValueRange{any, all});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices from the
/// tiles' any/all: per (b, h, m), the n of partial (any, not all) and of
/// full (all and any) tiles in ascending order, the lists zero after them.
struct BlockMaskToLinalg : OpConversionPattern<BlockMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BlockMaskOp op, OpAdaptor a,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    // (Not a structured binding: the loop body's lambda captures them.)
    std::pair<Value, Value> kept = keptPerTile(b, loc, op, a.getCaptures());
    Value any = kept.first, all = kept.second;
    auto zeros = [&](Type t) {
      auto rt = cast<RankedTensorType>(t);
      Value init = tensor::EmptyOp::create(b, loc, rt.getShape(), rt.getElementType());
      Value c = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
      return linalg::FillOp::create(b, loc, c, init).getResult(0);
    };
    SmallVector<Value> results = llvm::map_to_vector(op->getResultTypes(), zeros);
    ArrayRef<int64_t> shape = cast<RankedTensorType>(results[1].getType()).getShape();
    KernelBuilder fb{b, loc, 1};
    Value c0 = fb.idx(0), c1 = fb.idx(1);
    // The loops over (b, h, m), each carrying the four results.
    SmallVector<Value> ivs;
    SmallVector<scf::ForOp> loops;
    for (int64_t d = 0; d < 3; ++d) {
      auto loop = scf::ForOp::create(b, loc, c0, fb.idx(shape[d]), c1, results);
      if (!loops.empty())
        scf::YieldOp::create(b, loc, loop.getResults());
      b.setInsertionPointToStart(loop.getBody());
      ivs.push_back(loop.getInductionVar());
      results.assign(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
      loops.push_back(loop);
    }
    // Over n: append n to the partial or the full list, counting each.
    Type i32 = b.getI32Type();
    Value zero32 = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
    auto inner = scf::ForOp::create(
        b, loc, c0, fb.idx(shape[3]), c1,
        ValueRange{results[1], results[3], zero32, zero32},
        [&](OpBuilder &nb, Location nl, Value n, ValueRange acc) {
          KernelBuilder ib{nb, nl, 1};
          SmallVector<Value> at{ivs[0], ivs[1], ivs[2], n};
          Value anyKept = tensor::ExtractOp::create(nb, nl, any, at);
          Value allKept = tensor::ExtractOp::create(nb, nl, all, at);
          Value full = ib.andI(anyKept, allKept);
          Value partial = ib.andI(anyKept, ib.notI(allKept));
          Value n32 = arith::IndexCastOp::create(nb, nl, i32, n);
          // Appends n to `list` at `count` where `take`.
          auto append = [&](Value take, Value list, Value count) -> std::pair<Value, Value> {
            auto branch = scf::IfOp::create(
                nb, nl, take,
                [&](OpBuilder &tb, Location tl) {
                  Value slot = arith::IndexCastOp::create(tb, tl, tb.getIndexType(), count);
                  Value put = tensor::InsertOp::create(
                      tb, tl, n32, list, ValueRange{ivs[0], ivs[1], ivs[2], slot});
                  scf::YieldOp::create(tb, tl, put);
                },
                [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, list); });
            Value step = arith::ExtUIOp::create(nb, nl, i32, take);
            return {branch.getResult(0), arith::AddIOp::create(nb, nl, count, step)};
          };
          auto [partialList, partialCount] = append(partial, acc[0], acc[2]);
          auto [fullList, fullCount] = append(full, acc[1], acc[3]);
          scf::YieldOp::create(nb, nl, ValueRange{partialList, fullList, partialCount, fullCount});
        });
    SmallVector<Value> at(ivs.begin(), ivs.end());
    Value counts = tensor::InsertOp::create(b, loc, inner.getResult(2), results[0], at);
    Value fullCounts = tensor::InsertOp::create(b, loc, inner.getResult(3), results[2], at);
    scf::YieldOp::create(b, loc,
                         ValueRange{counts, inner.getResult(0), fullCounts, inner.getResult(1)});
    rewriter.setInsertionPointAfter(loops.front());
    rewriter.replaceOp(op, loops.front().getResults());
    return success();
  }
};

} // namespace

void mlir::attn::populateModToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ScoreModToLinalg, MaskModToLinalg, BlockMaskToLinalg>(patterns.getContext());
}
