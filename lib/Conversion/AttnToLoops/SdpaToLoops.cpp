//===- SdpaToLoops.cpp - attn.sdpa to parallel FlashAttention-2 loops -----===//
//
// The pattern for attn.sdpa and attn.sdpa_partial: it chooses the tile
// (per-head rows, grouped rows, or a decode tile that reads K/V in place),
// transposes the keys once per call when they fit (the prepack loop), and
// runs the Q tiles (FlashKernel) in one parallel loop; with fewer work
// items than min-work-items, each tile's keys are split too, and a second
// parallel loop merges the splits' states (storeSplit / mergeSplits).
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"
#include "PopulatePatterns.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

/// Fewest K/V tiles a key split runs: fewer and the merge costs more than
/// the parallelism gains.
constexpr int64_t kMinTilesPerSplit = 4;

void FlashKernel::storeSplit(const TileState &state, const SplitStates &states, Value slot) {
  Value base = b.mul(slot, b.idx(opts.tileQ));
  b.loop(b.idx(0), rows.count, 1, [&](Value i) {
    Value at = b.add(base, i);
    b.store(b.load(state.m, {i}), states.m, {at});
    b.store(b.load(state.l, {i}), states.l, {at});
    b.loop(b.idx(0), b.idx(dvPadded), opts.vectorWidth, [&](Value c) {
      b.vstore(b.vload(state.acc, {i, c}), states.acc, {at, c});
    });
  });
}

void FlashKernel::mergeSplits(Value bIdx, const TileRows &rows, const SplitStates &states,
                              Value firstSlot, Value splits) {
  this->rows = rows;
  Value l = scratch({opts.tileQ});
  Value merged = scratch({opts.tileQ, dvPadded});
  // The merged running max, kept for the log-sum-exp.
  Value m = bufs.lse ? scratch({opts.tileQ}) : Value();
  Value base = b.mul(firstSlot, b.idx(opts.tileQ));
  Value stride = b.idx(opts.tileQ);
  // The slot of row i of split `split` in the states.
  auto at = [&](Value split, Value i) { return b.add(b.add(base, b.mul(split, stride)), i); };
  // m = max_s m_s over the splits' states of row i (-inf when none saw a
  // key).
  auto maxOverSplits = [&](Value i) {
    SmallVector<Value> mx = b.loopCarry(
        b.idx(0), splits, 1, {b.negInf()}, [&](Value k, ValueRange a) {
          return SmallVector<Value>{b.fmax(a[0], b.load(states.m, {at(k, i)}))};
        });
    return mx[0];
  };
  b.loop(b.idx(0), rows.count, 1, [&](Value i) {
    // Each split weighs 2^(m_s - m) (0 for a split that saw no key; m =
    // -inf when none did: subtract 0 instead).
    Value mx = maxOverSplits(i);
    if (m)
      b.store(mx, m, {i});
    Value mSafe = b.mergeReference(mx);
    // One weight per split, applied to its l and its accumulator row.
    b.store(b.f(0.0), l, {i});
    b.loop(b.idx(0), b.idx(dvPadded), opts.vectorWidth,
           [&](Value c) { b.vstore(b.splat(0.0), merged, {i, c}); });
    b.loop(b.idx(0), splits, 1, [&](Value k) {
      Value weight = b.mergeWeight(b.load(states.m, {at(k, i)}), mSafe);
      b.store(b.fma(weight, b.load(states.l, {at(k, i)}), b.load(l, {i})), l, {i});
      Value weightV = b.bcast(weight);
      b.loop(b.idx(0), b.idx(dvPadded), opts.vectorWidth, [&](Value c) {
        b.vstore(b.fma(weightV, b.vload(states.acc, {at(k, i), c}), b.vload(merged, {i, c})),
                 merged, {i, c});
      });
    });
  });
  writeOutput(bIdx, rows, TileState{m, l, merged});
}

namespace {

/// sdpa_partial the same, writing each row's log-sum-exp too.
template <typename OpTy>
struct SdpaToFlashLoops : OpRewritePattern<OpTy> {
  SdpaToFlashLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern<OpTy>(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<SdpaProblem> problem =
        SdpaProblem::analyze(op, cpuKernelSupport(), reason);
    if (failed(problem))
      return rewriter.notifyMatchFailure(op, reason);
    SdpaProblem &p = *problem;
    if (tiling.reportUnfused && p.maskMod && !flash::isBoundable(*p.maskMod, p.captures))
      op.emitRemark() << "the mask function cannot be bounded per tile (its result rests on "
                         "floats, remainders or scf.if): every visited tile evaluates it "
                         "on every score, and no tile is skipped for it";
    KernelBuilder e{rewriter, op.getLoc(), tiling.vectorWidth};
    // A static Tq below tile-q (decode: Tq = 1) groups the tile's rows over
    // the G query heads of a K/V head: G·Tq rows, rounded up to the
    // microkernel's row block (at most tile-q), instead of tile-q padded
    // rows per query head.
    ConvertAttnToLoopsOptions tiling = this->tiling;
    int64_t staticTq = p.queryType.getDimSize(2);
    bool grouped = !ShapedType::isDynamic(staticTq) && staticTq < tiling.tileQ;
    // Few grouped rows (at most a row block) make a tile of exactly those
    // rows that reads K/V in place (FlashKernel::computeScoresDirect).
    bool directKeys =
        grouped && FlashKernel::takesDirectKeys(p, tiling, p.group * staticTq);
    if (directKeys)
      tiling.tileQ = p.group * staticTq;
    else if (grouped)
      tiling.tileQ = std::min<int64_t>(
          tiling.tileQ,
          std::max<int64_t>(kRowBlock, llvm::alignTo(p.group * staticTq, kRowBlock)));
    // int8/fp8 K/V are read in place by the decode tile and by prefill
    // tiles of whole vectors; other tiles take the float K/V the
    // attn.dequantize ops build.
    if (p.quantized && !directKeys && !FlashKernel::takesQuantizedTiles(p, tiling))
      p.quantized.reset();
    SdpaBuffers s = materializeBuffers(rewriter, p, anyLayoutBuffer);
    int64_t headsPerItem = grouped ? 1 : p.group;
    Value rowSpace = grouped ? e.idx(p.group * staticTq) : s.tq;
    Value numTiles = e.ceilDiv(rowSpace, tiling.tileQ);

    // Work is parallel over (K/V head, batch, query head of the group — for
    // per-head tiles —, Q tile, key split), query head h = kvHead·G + g.
    // OpenMP hands each thread a contiguous range of that order: with the
    // K/V head outermost every thread gets every batch row (rows of
    // different key lengths, as in a padded decode, do not pile up on one
    // thread), and the tiles that read one K/V head run back to back (it is
    // still in cache).
    auto tileRows = [&](Value kvHead, Value g, Value tile) {
      TileRows rows;
      rows.grouped = grouped;
      rows.kvHead = kvHead;
      if (!grouped)
        rows.head = e.add(e.mul(kvHead, e.idx(p.group)), g);
      rows.total = rowSpace;
      rows.r0 = e.mul(tile, e.idx(tiling.tileQ));
      rows.count = e.minI(e.idx(tiling.tileQ), e.sub(rowSpace, rows.r0));
      return rows;
    };
    SmallVector<Value> upper{e.idx(p.kvHeads), s.batch, e.idx(headsPerItem), numTiles};

    // Keys transposed once per call instead of once per Q tile: one
    // parallel loop over (K/V head, batch, K/V tile) first.
    // With dynamic shapes the same choice at run time: a buffer of no
    // tiles, and no prepack loop iterations, where it does not pay.
    FlashKernel::PrepackedKeys packedKeys;
    bool prepackAlways = FlashKernel::takesPrepackedKeys(p, tiling, directKeys);
    if (prepackAlways || FlashKernel::mayPrepackKeys(p, tiling, directKeys)) {
      MemRefType packedType = FlashKernel::prepackedKeysType(p, tiling);
      Value keyTiles = e.ceilDiv(s.tk, tiling.tileK);
      if (!prepackAlways) {
        packedKeys.filled = FlashKernel::prepackFits(e, p, s, tiling, keyTiles);
        keyTiles = e.select(packedKeys.filled, keyTiles, e.idx(0));
      }
      SmallVector<Value> sizes;
      if (packedType.isDynamicDim(0))
        sizes.push_back(s.batch);
      if (packedType.isDynamicDim(2))
        sizes.push_back(keyTiles);
      packedKeys.buffer = memref::AllocOp::create(rewriter, e.loc, packedType, sizes,
                                                  rewriter.getI64IntegerAttr(64));
      parallelLoop(e, {e.idx(p.kvHeads), s.batch, keyTiles}, /*stackScope=*/false,
                   [&](ValueRange ivs) {
                     FlashKernel(e, p, s, tiling, /*directKeys=*/false, {packedKeys.buffer})
                         .prepackKeyTile(ivs[1], ivs[0], ivs[2]);
                   });
    }

    // An op already inside a parallel loop (a tile of the upstream tiling
    // drivers, scf.forall) is one work item of that loop: its keys are not
    // split again (nested parallelism would only add merges).
    bool insideParallelLoop =
        op->template getParentOfType<scf::ForallOp>() || op->template getParentOfType<scf::ParallelOp>();
    if (tiling.minWorkItems <= 1 || insideParallelLoop) {
      parallelLoop(e, upper, /*stackScope=*/true, [&](ValueRange ivs) {
        FlashKernel kernel(e, p, s, tiling, directKeys, packedKeys);
        TileRows rows = tileRows(ivs[0], ivs[2], ivs[3]);
        kernel.writeOutput(ivs[1], rows, kernel.attend(/*batch=*/ivs[1], rows));
      });
      rewriter.replaceOp(op, resultTensors(rewriter, p, s));
      return success();
    }

    // With fewer work items than min-work-items, each tile's keys are split
    // into runs of at least kMinTilesPerSplit K/V tiles (flash-decoding):
    // the splits' states are kept, then merged by a second parallel loop.
    Value items = e.mul(e.mul(e.idx(p.kvHeads * headsPerItem), s.batch), numTiles);
    // A decode of paged NHD caches runs every K/V head in one work item
    // (FlashKernel::attendEveryHead): the keys are split across threads.
    bool everyHead = FlashKernel::takesEveryHead(p, s, directKeys);
    Value parallelItems =
        everyHead ? e.mul(e.mul(e.idx(headsPerItem), s.batch), numTiles) : items;
    // (No work item — B = 0 or Tq = 0 — must not divide by zero.)
    Value wanted = e.ceilDiv(e.idx(tiling.minWorkItems), e.maxI(parallelItems, e.idx(1)));
    Value most = e.maxI(e.idx(1), e.ceilDiv(s.tk, tiling.tileK * kMinTilesPerSplit));
    Value splits = e.maxI(e.idx(1), e.minI(wanted, most));
    Value split = e.gt(splits, e.idx(1));
    // The split states: none unless the keys are split.
    Value slots = e.select(split, e.mul(items, splits), e.idx(0));
    auto stateBuffer = [&](ArrayRef<int64_t> shape) -> Value {
      return memref::AllocOp::create(rewriter, e.loc, MemRefType::get(shape, e.f32()),
                                     ValueRange{e.mul(slots, e.idx(tiling.tileQ))},
                                     rewriter.getI64IntegerAttr(64));
    };
    FlashKernel::SplitStates states{stateBuffer({ShapedType::kDynamic}),
                                    stateBuffer({ShapedType::kDynamic}),
                                    stateBuffer({ShapedType::kDynamic, paddedDv(p, tiling)})};
    // (((kvHead·B + b)·heads per item + g)·tiles + tile): the item's index.
    auto itemIndex = [&](ValueRange ivs) {
      Value x = e.add(e.mul(ivs[0], s.batch), ivs[1]);
      x = e.add(e.mul(x, e.idx(headsPerItem)), ivs[2]);
      return e.add(e.mul(x, numTiles), ivs[3]);
    };
    // A tile's state: kept in its split's slot, or written out when the
    // keys are not split.
    auto keepState = [&](FlashKernel &kernel, const TileState &state, const TileRows &rows,
                         ValueRange item, Value keySplit) {
      e.ifThenElse(
          split,
          [&] { kernel.storeSplit(state, states, e.add(e.mul(itemIndex(item), splits), keySplit)); },
          [&] { kernel.writeOutput(item[1], rows, state); });
    };
    if (everyHead) {
      SmallVector<Value> upperEvery{s.batch, e.idx(headsPerItem), numTiles, splits};
      parallelLoop(e, upperEvery, /*stackScope=*/true, [&](ValueRange ivs) {
        FlashKernel kernel(e, p, s, tiling, directKeys, packedKeys);
        FlashKernel::HeadStates heads = kernel.attendEveryHead(
            ivs[0], tileRows(e.idx(0), ivs[1], ivs[2]), ivs[3], splits);
        e.loop(e.idx(0), e.idx(p.kvHeads), 1, [&](Value h) {
          TileRows rows = tileRows(h, ivs[1], ivs[2]);
          SmallVector<Value> item{h, ivs[0], ivs[1], ivs[2]};
          keepState(kernel, kernel.headState(heads, rows), rows, item, ivs[3]);
        });
      });
    } else {
      SmallVector<Value> upperSplit(upper);
      upperSplit.push_back(splits);
      parallelLoop(e, upperSplit, /*stackScope=*/true, [&](ValueRange ivs) {
        FlashKernel kernel(e, p, s, tiling, directKeys, packedKeys);
        TileRows rows = tileRows(ivs[0], ivs[2], ivs[3]);
        TileState state = kernel.attend(/*batch=*/ivs[1], rows, ivs[4], splits);
        keepState(kernel, state, rows, ivs.take_front(4), ivs[4]);
      });
    }
    e.ifThen(split, [&] {
      parallelLoop(e, upper, /*stackScope=*/true, [&](ValueRange ivs) {
        FlashKernel kernel(e, p, s, tiling, directKeys, packedKeys);
        kernel.mergeSplits(ivs[1], tileRows(ivs[0], ivs[2], ivs[3]), states,
                           e.mul(itemIndex(ivs), splits), splits);
      });
    });
    rewriter.replaceOp(op, resultTensors(rewriter, p, s));
    return success();
  }

  ConvertAttnToLoopsOptions tiling;
};

} // namespace

void populateSdpaToLoopsPatterns(RewritePatternSet &patterns,
                                 const ConvertAttnToLoopsOptions &options) {
  patterns.add<SdpaToFlashLoops<SdpaOp>, SdpaToFlashLoops<SdpaPartialOp>>(patterns.getContext(),
                                                                           options);
}

} // namespace mlir::attn::loops
