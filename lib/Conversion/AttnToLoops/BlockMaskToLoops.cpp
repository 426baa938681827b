//===- BlockMaskToLoops.cpp - attn.block_mask to a parallel loop ----------===//
//
// attn.block_mask as one parallel loop over (b, h, Q block) that walks the
// row's KV blocks in order. Each tile is first bounded by interval
// arithmetic over the mask function (ModBounds.h, as the fused kernel
// bounds its tiles): a tile the bounds say keeps nothing or everything is
// decided without evaluating the function; only the others (a causal
// mask's diagonal, a document boundary, a function the bounds cannot
// follow) evaluate it, `vector-width` keys at a time.
//
//===----------------------------------------------------------------------===//
#include "Microkernels.h"
#include "PopulatePatterns.h"

#include "Conversion/FlashCore/ModBounds.h"
#include "Conversion/FlashCore/ModFunctions.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {
namespace {

struct BlockMaskToParallelLoops : OpRewritePattern<BlockMaskOp> {
  BlockMaskToParallelLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(BlockMaskOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t w = tiling.vectorWidth;
    KernelBuilder e{rewriter, loc, w};
    SmallVector<Value> captures = llvm::map_to_vector(op.getCaptures(), [&](Value c) -> Value {
      return bufferization::ToBufferOp::create(
          rewriter, loc, anyLayoutBuffer(cast<RankedTensorType>(c.getType())), c,
          /*read_only=*/true);
    });
    auto resultTypes = llvm::map_to_vector(op->getResultTypes(), [](Type t) {
      return cast<RankedTensorType>(t);
    });
    SmallVector<Value> results = llvm::map_to_vector(resultTypes, [&](RankedTensorType t) {
      return Value(memref::AllocOp::create(
          rewriter, loc, MemRefType::get(t.getShape(), t.getElementType())));
    });
    ArrayRef<int64_t> listShape = resultTypes[1].getShape();
    ArrayRef<int64_t> block = op.getBlockSize();
    Value qLen = e.idx(op.getQLen()), kvLen = e.idx(op.getKvLen());
    Value nk = e.idx(listShape[3]);
    Region &fn = op.getBody();
    Type i32 = rewriter.getI32Type();
    Value zero32 = arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(0));

    parallelLoop(e, {e.idx(listShape[0]), e.idx(listShape[1]), e.idx(listShape[2])},
                 /*stackScope=*/false, [&](ValueRange ivs) {
      Value b = ivs[0], h = ivs[1];
      Value q0 = e.mul(ivs[2], e.idx(block[0]));
      Value q1 = e.minI(e.add(q0, e.idx(block[0])), qLen);
      auto at = [&](Value slot) { return SmallVector<Value>{ivs[0], ivs[1], ivs[2], slot}; };
      SmallVector<Value> counts = e.loopCarry(
          e.idx(0), nk, 1, {e.idx(0), e.idx(0)}, [&](Value n, ValueRange count) {
            Value k0 = e.mul(n, e.idx(block[1]));
            Value k1 = e.minI(e.add(k0, e.idx(block[1])), kvLen);
            auto [any, all] = keptInTile(e, fn, b, h, q0, q1, k0, k1, captures,
                                         tileScanLimit(block[0], block[1]));
            Value full = e.andI(any, all), partial = e.andI(any, e.notI(all));
            Value n32 = arith::IndexCastOp::create(e.b, loc, i32, n);
            SmallVector<Value> next;
            for (auto [take, list, c] : {std::tuple{partial, results[1], count[0]},
                                         std::tuple{full, results[3], count[1]}}) {
              Value slot = c, dst = list; // (captured below: not the bindings)
              e.ifThen(take, [&] { e.store(n32, dst, at(slot)); });
              next.push_back(e.add(c, arith::IndexCastOp::create(
                                          e.b, loc, e.b.getIndexType(),
                                          arith::ExtUIOp::create(e.b, loc, i32, take))));
            }
            return next;
          });
      for (auto [count, list, c] : {std::tuple{results[0], results[1], counts[0]},
                                    std::tuple{results[2], results[3], counts[1]}}) {
        e.store(arith::IndexCastOp::create(e.b, loc, i32, c), count, ivs);
        // FlexAttention leaves the slots past the count unspecified; ours
        // are zeros, as the reference lowering's.
        Value dst = list; // (captured below: not the binding)
        e.loop(c, nk, 1, [&](Value slot) { e.store(zero32, dst, at(slot)); });
      }
    });
    SmallVector<Value> tensors;
    for (auto [t, m] : llvm::zip(resultTypes, results))
      tensors.push_back(bufferization::ToTensorOp::create(rewriter, loc, t, m,
                                                          /*restrict=*/true,
                                                          /*writable=*/true));
    rewriter.replaceOp(op, tensors);
    return success();
  }

  /// Whether the mask function keeps any and every position of rows
  /// [q0, q1) and keys [k0, k1) (i1, i1): from its bounds where they
  /// decide, else evaluated w keys at a time (lanes past k1 discarded).
  static std::pair<Value, Value> keptInTile(KernelBuilder &e, Region &fn, Value b, Value h,
                                            Value q0, Value q1, Value k0, Value k1,
                                            ValueRange captures, int64_t scanLimit) {
    Type i1 = e.b.getI1Type();
    auto evaluate = [&]() -> std::pair<Value, Value> {
      auto lanes = VectorType::get({e.width}, i1);
      Value none = arith::ConstantOp::create(e.b, e.loc, DenseElementsAttr::get(lanes, false));
      Value every = arith::ConstantOp::create(e.b, e.loc, DenseElementsAttr::get(lanes, true));
      Value laneKeys = e.laneIndices();
      SmallVector<Value> acc = e.loopCarry(q0, q1, 1, {none, every}, [&](Value q, ValueRange rows) {
        return e.loopCarry(k0, k1, e.width, rows, [&](Value kv, ValueRange keys) {
          ModPoint point{Value(), b, h, q, kv};
          Value keep = emitModFunction(e, fn, ModKind::Mask, point, captures);
          // A function of the row alone comes back as one i1.
          if (!isa<VectorType>(keep.getType()))
            keep = vector::BroadcastOp::create(e.b, e.loc, lanes, keep);
          Value inside = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::slt,
                                               e.add(laneKeys, e.bcastI32(kv)), e.bcastI32(k1));
          Value outside = arith::XOrIOp::create(e.b, e.loc, inside, every);
          return SmallVector<Value>{
              arith::OrIOp::create(e.b, e.loc, keys[0],
                                   arith::AndIOp::create(e.b, e.loc, keep, inside)),
              arith::AndIOp::create(e.b, e.loc, keys[1],
                                    arith::OrIOp::create(e.b, e.loc, keep, outside))};
        });
      });
      return {vector::ReductionOp::create(e.b, e.loc, vector::CombiningKind::OR, acc[0]),
              vector::ReductionOp::create(e.b, e.loc, vector::CombiningKind::AND, acc[1])};
    };
    std::optional<MaskVerdict> bounds =
        boundMaskFunction(e, fn, b, {h, h}, {q0, e.sub(q1, e.idx(1))},
                          {k0, e.sub(k1, e.idx(1))}, captures, scanLimit);
    if (!bounds)
      return evaluate();
    Value decided = e.orI(e.notI(bounds->anyKept), bounds->allKept);
    auto branch = scf::IfOp::create(e.b, e.loc, TypeRange{i1, i1}, decided,
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(branch.thenBlock());
    scf::YieldOp::create(e.b, e.loc, ValueRange{bounds->anyKept, bounds->allKept});
    e.b.setInsertionPointToStart(branch.elseBlock());
    auto [any, all] = evaluate();
    scf::YieldOp::create(e.b, e.loc, ValueRange{any, all});
    return {branch.getResult(0), branch.getResult(1)};
  }

  ConvertAttnToLoopsOptions tiling;
};

} // namespace

void populateBlockMaskToLoopsPatterns(RewritePatternSet &patterns,
                                      const ConvertAttnToLoopsOptions &options) {
  patterns.add<BlockMaskToParallelLoops>(patterns.getContext(), options);
}

} // namespace mlir::attn::loops
