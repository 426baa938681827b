//===- AttnToLoops.cpp - attn.sdpa to fused FlashAttention-2 loops --------===//
//
// One f32 attn.sdpa becomes one loop nest on buffers:
//
//   parallel (h/G, b, h%G, qTile):               -- threads
//     Qs   = Q[b, h, qTile] · scale · log2(e)    -- packQueryTile
//     m = -inf, l = 0, acc = 0
//     for kTile in the tiles the Q tile sees:    -- tiles beyond the causal limit,
//                                                   outside the window or past the
//                                                   key length skipped
//       Kt = K[b, h/G, kTile]ᵀ, Vt = V[...]      -- packKeyValueTile
//       S  = Qs · Kt, softcap, + ALiBi           -- computeScores (FMA microkernel)
//       S  = mask(S)   (operand mask; the keep rules on edge tiles only)
//       per row: m' = max(m, rowmax S)           -- onlineSoftmax
//                P = exp2(S - m'), α = exp2(m - m')
//                l = α·l + Σ P, m = m'
//       acc = α·acc + P · Vt                     -- accumulateValues (FMA microkernel)
//     O[b, h, qTile] = acc / l  (0 where l = 0)  -- writeOutput
//
// It reads like the FlashAttention-2 algorithm: one named step per line.
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "../FlashCore/FlashCore.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>


namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLOOPS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using namespace mlir::attn::flash;

constexpr int64_t kRowBlock = 4; // rows per microkernel register block

/// The FlashAttention-2 loop nest of one (b, h, Q tile): attend() runs the
/// online softmax over the visible K/V tiles and returns the tile's state
/// (m, l, acc); writeOutput() normalises it into O. A caller that merges
/// partial states (split-K, ring attention) takes the state instead.
class FlashKernel {
public:
  FlashKernel(FlashBuilder &e, const SdpaProblem &p, const SdpaBuffers &s,
              const ConvertAttnToLoopsOptions &t)
      : e(e), p(p), s(s), t(t),
        dvPadded((p.dv + t.vectorWidth - 1) / t.vectorWidth * t.vectorWidth) {}

  /// Q tile `qTile` of (b, h) against every key it sees.
  TileState attend(Value bIdx, Value hIdx, Value qTile) {
    this->bIdx = bIdx;
    this->hIdx = hIdx;
    hkv = e.div(hIdx, e.idx(p.group));
    q0 = e.mul(qTile, e.idx(t.tileQ));
    qRows = e.minI(e.idx(t.tileQ), e.sub(s.tq, q0));
    keys.emplace(e, p, s, bIdx);
    if (p.hasAlibi())
      alibi.emplace(e, p, s, *keys, bIdx, hIdx);

    allocateScratch();
    packQueryTile();
    initRunningState();
    // Only the K/V tiles holding a key some row of this Q tile sees.
    KeyVisibility::Range tiles = keys->tileRange(
        [&] { return q0; }, [&] { return e.add(q0, qRows); }, t.tileK);
    e.loop(tiles.begin, tiles.end, 1, [&](Value kTile) {
      Value k0 = e.mul(kTile, e.idx(t.tileK));
      // Keys past L (the key length, else Tk) are neither read nor kept.
      Value kRows = e.minI(e.idx(t.tileK), e.sub(keys->keyCount(), k0));
      packKeyValueTile(k0, kRows);
      computeScores(k0);
      maskTile(k0, kRows);
      onlineSoftmax();
      accumulateValues();
    });
    return TileState{mRow, lRow, acc};
  }

  /// O[b, h, q0 + i, c] = acc[i][c] / l_i, and 0 for a row that saw no key.
  void writeOutput(const TileState &state);

private:
  FlashBuilder &e;
  const SdpaProblem &p;
  const SdpaBuffers &s;
  const ConvertAttnToLoopsOptions &t;
  std::optional<KeyVisibility> keys; // per batch row
  std::optional<AlibiBias> alibi;    // per (batch row, head)
  int64_t dvPadded;
  Value bIdx, hIdx, hkv, q0, qRows;
  Value qs, kt, vt, sp, acc, mRow, lRow, alphaRow;

  Value scratch(ArrayRef<int64_t> shape) {
    return memref::AllocaOp::create(e.b, e.loc,
                                    MemRefType::get(shape, e.f32()));
  }

  void allocateScratch() {
    qs = scratch({t.tileQ, p.d});
    kt = scratch({p.d, t.tileK});
    vt = scratch({t.tileK, dvPadded});
    sp = scratch({t.tileQ, t.tileK});
    acc = scratch({t.tileQ, dvPadded});
    mRow = scratch({t.tileQ});
    lRow = scratch({t.tileQ});
    alphaRow = scratch({t.tileQ});
  }

  /// Copies `n` elements of row `row` of the [B, H, T, n] buffer `src` at
  /// head `head` into row `dstRow` of `dst`, times `scale` when given:
  /// vectors when n is a multiple of the width, scalars otherwise.
  void copyRow(Value src, Value head, Value row, int64_t n, Value dst, Value dstRow,
               std::optional<double> scale = std::nullopt) {
    int64_t w = t.vectorWidth;
    if (n % w == 0) {
      Value c = scale ? e.splat(*scale) : Value();
      e.loop(e.idx(0), e.idx(n), w, [&](Value col) {
        Value x = e.vloadF32(src, {bIdx, head, row, col});
        if (c)
          x = e.fmul(x, c);
        e.vstore(x, dst, {dstRow, col});
      });
      return;
    }
    Value c = scale ? e.f(*scale) : Value();
    e.loop(e.idx(0), e.idx(n), 1, [&](Value col) {
      Value x = e.loadF32(src, {bIdx, head, row, col});
      if (c)
        x = e.fmul(x, c);
      e.store(x, dst, {dstRow, col});
    });
  }

  /// Zeroes rows [from, rows) of the 2-D scratch `buf` of width `n`.
  void zeroRows(Value buf, Value from, int64_t rows, int64_t n) {
    e.loop(from, e.idx(rows), 1, [&](Value r) {
      e.loop(e.idx(0), e.idx(n), 1, [&](Value c) { e.store(e.f(0.0), buf, {r, c}); });
    });
  }

  /// Qs[i][d] = Q[b, h, q0 + i, d] · scale · log2(e), zero past Tq.
  void packQueryTile() {
    e.loop(e.idx(0), qRows, 1, [&](Value i) {
      copyRow(s.q, hIdx, e.add(q0, i), p.d, qs, i, p.scaleLog2);
    });
    zeroRows(qs, qRows, t.tileQ, p.d);
  }

  /// m = -inf, l = 0, acc = 0.
  void initRunningState() {
    e.loop(e.idx(0), e.idx(t.tileQ), 1, [&](Value i) {
      e.store(e.negInf(), mRow, {i});
      e.store(e.f(0.0), lRow, {i});
      e.loop(e.idx(0), e.idx(dvPadded), t.vectorWidth,
             [&](Value c) { e.vstore(e.splat(0.0), acc, {i, c}); });
    });
  }

  /// Kt[d][j] = K[b, h/G, k0 + j, d] and Vt[j][c] = V[b, h/G, k0 + j, c],
  /// zero past Tk (and past Dv). Only a partial last tile pays for zeroing.
  void packKeyValueTile(Value k0, Value kRows) {
    e.loop(e.idx(0), kRows, 1, [&](Value j) {
      Value row = e.add(k0, j);
      e.loop(e.idx(0), e.idx(p.d), 1, [&](Value d) {
        e.store(e.loadF32(s.k, {bIdx, hkv, row, d}), kt, {d, j});
      });
      copyRow(s.v, hkv, row, p.dv, vt, j);
    });
    Value partial = e.lt(kRows, e.idx(t.tileK));
    e.ifThen(partial, [&] {
      e.loop(kRows, e.idx(t.tileK), 1, [&](Value j) {
        e.loop(e.idx(0), e.idx(p.d), 1, [&](Value d) { e.store(e.f(0.0), kt, {d, j}); });
      });
      zeroRows(vt, kRows, t.tileK, dvPadded);
    });
    if (dvPadded != p.dv) {
      // The padding columns of Vt stay zero.
      e.loop(e.idx(0), kRows, 1, [&](Value j) {
        e.loop(e.idx(p.dv), e.idx(dvPadded), 1,
               [&](Value c) { e.store(e.f(0.0), vt, {j, c}); });
      });
    }
  }

  /// S[i][j] = Σ_d Qs[i][d] · Kt[d][j]: 4 rows × 2 vectors of keys held in
  /// registers, one broadcast FMA per (row, vector) and d; then, still in
  /// registers, the softcap and the ALiBi bias.
  void computeScores(Value k0) {
    int64_t w = t.vectorWidth;
    e.loop(e.idx(0), e.idx(t.tileQ), kRowBlock, [&](Value i) {
      e.loop(e.idx(0), e.idx(t.tileK), 2 * w, [&](Value j) {
        Value j1 = e.add(j, e.idx(w));
        SmallVector<Value> init(2 * kRowBlock, e.splat(0.0));
        SmallVector<Value> sums =
            e.loopCarry(e.idx(0), e.idx(p.d), 1, init, [&](Value d, ValueRange a) {
              Value k0v = e.vload(kt, {d, j}), k1v = e.vload(kt, {d, j1});
              SmallVector<Value> next;
              for (int64_t r = 0; r < kRowBlock; ++r) {
                Value qb = e.bcast(e.load(qs, {e.add(i, e.idx(r)), d}));
                next.push_back(e.fma(qb, k0v, a[2 * r]));
                next.push_back(e.fma(qb, k1v, a[2 * r + 1]));
              }
              return next;
            });
        for (int64_t r = 0; r < kRowBlock; ++r) {
          Value row = e.add(i, e.idx(r));
          Value cols[2] = {j, j1};
          for (int64_t v = 0; v < 2; ++v) {
            Value x = softcapScores(e, p, sums[2 * r + v]);
            if (alibi)
              x = e.fadd(x, alibi->atLanes(e.add(q0, row), e.add(k0, cols[v])));
            e.vstore(x, sp, {row, cols[v]});
          }
        }
      });
    });
  }

  /// The operand mask (an additive mask added in log2 units, -inf where an
  /// i1 mask is false), then the keep rules: -inf outside the row's key
  /// interval [firstKey, keyEnd) (key length, causal, window). Only a tile
  /// that some row does not see whole pays for the keep rules, in vectors
  /// (lane key index against the row's interval).
  void maskTile(Value k0, Value kRows) {
    // The operand mask first (so a -inf of the keep rules is never added
    // to), then the keep rules.
    if (s.mask)
      applyMaskOperand(k0, kRows);
    int64_t w = t.vectorWidth;
    Value need = e.notI(keys->allVisible(q0, [&] { return e.add(q0, qRows); }, k0, t.tileK));
    e.ifThen(need, [&] {
      Value iota = e.laneIndices();
      Value ninf = e.splat(-INFINITY);
      e.loop(e.idx(0), e.idx(t.tileQ), 1, [&](Value i) {
        // The row's visible keys relative to k0: [lo, hi].
        Value row = e.add(q0, i);
        Value hiV = e.bcastI32(e.sub(e.minI(keys->keyEnd(row), e.add(k0, kRows)),
                                     e.add(k0, e.idx(1))));
        Value loV = p.windowLeft ? e.bcastI32(e.sub(keys->firstKey(row), k0)) : Value();
        e.loop(e.idx(0), e.idx(t.tileK), w, [&](Value j) {
          Value jv = arith::AddIOp::create(e.b, e.loc, iota, e.bcastI32(j));
          Value hidden =
              arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::sgt, jv, hiV);
          if (loV)
            hidden = e.orI(hidden, arith::CmpIOp::create(
                                       e.b, e.loc, arith::CmpIPredicate::slt, jv, loV));
          Value x = e.vload(sp, {i, j});
          e.vstore(arith::SelectOp::create(e.b, e.loc, hidden, ninf, x), sp, {i, j});
        });
      });
    });
  }

  /// S[i][j] += log2(e)·mask (additive) or -inf where the keep mask is
  /// false, for the valid keys of the tile.
  void applyMaskOperand(Value k0, Value kRows) {
    e.loop(e.idx(0), e.idx(t.tileQ), 1, [&](Value i) {
      Value qClamped = e.minI(e.add(q0, i), e.sub(s.tq, e.idx(1)));
      e.loop(e.idx(0), kRows, 1, [&](Value j) {
        Value kj = e.add(k0, j);
        Value x = e.load(sp, {i, j});
        Value m = p.maskKind == MaskKind::Keep
                      ? e.load(s.mask, maskIndices(e, p.maskType, bIdx, hIdx, qClamped, kj))
                      : e.loadF32(s.mask, maskIndices(e, p.maskType, bIdx, hIdx, qClamped, kj));
        if (p.maskKind == MaskKind::Keep)
          x = e.select(m, x, e.negInf());
        else
          x = e.fadd(x,
                                    e.fmul(m, e.f(kLog2E)));
        e.store(x, sp, {i, j});
      });
    });
  }

  /// Per row: m' = max(m, max_j S), P = exp2(S - m'), α = exp2(m - m'),
  /// l = α·l + Σ_j P, m = m'. A row with nothing visible yet keeps P = 0.
  void onlineSoftmax() {
    int64_t w = t.vectorWidth;
    e.loop(e.idx(0), e.idx(t.tileQ), 1, [&](Value i) {
      SmallVector<Value> mx = e.loopCarry(
          e.idx(0), e.idx(t.tileK), w, {e.splat(-INFINITY)}, [&](Value j, ValueRange a) {
            return SmallVector<Value>{
                e.fmax(a[0], e.vload(sp, {i, j}))};
          });
      Value tileMax = vector::ReductionOp::create(e.b, e.loc, vector::CombiningKind::MAXIMUMF,
                                                  mx[0]);
      Value mOld = e.load(mRow, {i});
      Value mNew = e.fmax(mOld, tileMax);
      // While a row has seen only -inf, subtract 0 instead (exp2 gives 0).
      Value noneVisible =
          e.cmpF(arith::CmpFPredicate::OEQ, mNew, e.negInf());
      Value mSafe = e.select(noneVisible, e.f(0.0), mNew);
      Value mSafeV = e.bcast(mSafe);
      SmallVector<Value> sum = e.loopCarry(
          e.idx(0), e.idx(t.tileK), w, {e.splat(0.0)}, [&](Value j, ValueRange a) {
            Value p = e.exp2(e.fsub(e.vload(sp, {i, j}), mSafeV));
            e.vstore(p, sp, {i, j});
            return SmallVector<Value>{e.fadd(a[0], p)};
          });
      Value rowSum =
          vector::ReductionOp::create(e.b, e.loc, vector::CombiningKind::ADD, sum[0]);
      Value alpha = e.exp2(e.fsub(mOld, mSafe));
      Value lNew = arith::AddFOp::create(
          e.b, e.loc, e.fmul(e.load(lRow, {i}), alpha), rowSum);
      e.store(lNew, lRow, {i});
      e.store(mNew, mRow, {i});
      e.store(alpha, alphaRow, {i});
    });
  }

  /// acc[i][c] = α_i · acc[i][c] + Σ_j P[i][j] · Vt[j][c]: 4 rows × 1 or 2
  /// vectors of columns in registers.
  void accumulateValues() {
    int64_t w = t.vectorWidth;
    int64_t cols = dvPadded % (2 * w) == 0 ? 2 : 1;
    e.loop(e.idx(0), e.idx(t.tileQ), kRowBlock, [&](Value i) {
      e.loop(e.idx(0), e.idx(dvPadded), cols * w, [&](Value c) {
        SmallVector<Value> init;
        SmallVector<Value> colIdx;
        for (int64_t v = 0; v < cols; ++v)
          colIdx.push_back(e.add(c, e.idx(v * w)));
        for (int64_t r = 0; r < kRowBlock; ++r) {
          Value row = e.add(i, e.idx(r));
          Value alpha = e.bcast(e.load(alphaRow, {row}));
          for (int64_t v = 0; v < cols; ++v)
            init.push_back(e.fmul(e.vload(acc, {row, colIdx[v]}),
                                                 alpha));
        }
        SmallVector<Value> sums = e.loopCarry(
            e.idx(0), e.idx(t.tileK), 1, init, [&](Value j, ValueRange a) {
              SmallVector<Value> vv;
              for (int64_t v = 0; v < cols; ++v)
                vv.push_back(e.vload(vt, {j, colIdx[v]}));
              SmallVector<Value> next;
              for (int64_t r = 0; r < kRowBlock; ++r) {
                Value pb = e.bcast(e.load(sp, {e.add(i, e.idx(r)), j}));
                for (int64_t v = 0; v < cols; ++v)
                  next.push_back(e.fma(pb, vv[v], a[r * cols + v]));
              }
              return next;
            });
        for (int64_t r = 0; r < kRowBlock; ++r)
          for (int64_t v = 0; v < cols; ++v)
            e.vstore(sums[r * cols + v], acc, {e.add(i, e.idx(r)), colIdx[v]});
      });
    });
  }
};

void FlashKernel::writeOutput(const TileState &state) {
  int64_t w = t.vectorWidth;
  e.loop(e.idx(0), qRows, 1, [&](Value i) {
    Value l = e.load(state.l, {i});
    Value inv = e.inverseRowSum(l);
    Value row = e.add(q0, i);
    if (p.dv % w == 0) {
      Value invV = e.bcast(inv);
      e.loop(e.idx(0), e.idx(p.dv), w, [&](Value c) {
        Value x = e.fmul(e.vload(state.acc, {i, c}), invV);
        e.storeFromF32(x, s.out, {bIdx, hIdx, row, c});
      });
      return;
    }
    e.loop(e.idx(0), e.idx(p.dv), 1, [&](Value c) {
      Value x = e.fmul(e.load(state.acc, {i, c}), inv);
      e.storeFromF32(x, s.out, {bIdx, hIdx, row, c});
    });
  });
}

/// A strided memref type for reading a tensor in place: any offset and
/// outer strides, unit innermost stride (rows are contiguous, so vector loads
/// apply).
MemRefType anyLayoutBuffer(RankedTensorType t) {
  SmallVector<int64_t> strides(t.getRank(), ShapedType::kDynamic);
  if (!strides.empty())
    strides.back() = 1;
  return MemRefType::get(
      t.getShape(), t.getElementType(),
      StridedLayoutAttr::get(t.getContext(), ShapedType::kDynamic, strides));
}

/// sdpa(q, k, v[, mask]) → parallel FlashAttention-2 loop nest on buffers.
struct SdpaToFlashLoops : OpRewritePattern<SdpaOp> {
  SdpaToFlashLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(SdpaOp op, PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<SdpaProblem> problem =
        SdpaProblem::analyze(op, KernelSupport{"CPU kernel", /*lowPrecision=*/true}, reason);
    if (failed(problem))
      return rewriter.notifyMatchFailure(op, reason);
    const SdpaProblem &p = *problem;
    FlashBuilder e{rewriter, op.getLoc(), tiling.vectorWidth};
    SdpaBuffers s = materializeBuffers(rewriter, p, anyLayoutBuffer);
    // A static Tq below tile-q (decode: Tq = 1) gets a Q tile of its own
    // size, rounded up to the microkernel's row block, instead of computing
    // tile-q padded rows.
    ConvertAttnToLoopsOptions tiling = this->tiling;
    int64_t staticTq = p.queryType.getDimSize(2);
    if (!ShapedType::isDynamic(staticTq) && staticTq < tiling.tileQ)
      tiling.tileQ = std::max<int64_t>(kRowBlock, llvm::alignTo(staticTq, kRowBlock));

    // Work is parallel over (K/V head, batch, query head of the group, Q
    // tile), query head h = kvHead·G + g. OpenMP hands each thread a
    // contiguous range of that order: with the K/V head outermost every
    // thread gets every batch row (rows of different key lengths, as in a
    // padded decode, do not pile up on one thread), and the G query heads
    // that read one K/V head run back to back (it is still in cache).
    Value numQTiles = e.ceilDiv(s.tq, tiling.tileQ);
    scf::ParallelOp::create(
        rewriter, e.loc, ValueRange{e.idx(0), e.idx(0), e.idx(0), e.idx(0)},
        ValueRange{e.idx(p.kvHeads), s.batch, e.idx(p.group), numQTiles},
        ValueRange{e.idx(1), e.idx(1), e.idx(1), e.idx(1)},
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard g(rewriter);
          rewriter.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          // Each iteration's scratch lives in its own stack scope.
          auto scope = memref::AllocaScopeOp::create(rewriter, e.loc, TypeRange{});
          Block *body = rewriter.createBlock(&scope.getBodyRegion());
          rewriter.setInsertionPointToStart(body);
          FlashKernel kernel(e, p, s, tiling);
          Value head = e.add(e.mul(ivs[0], e.idx(p.group)), ivs[2]);
          kernel.writeOutput(kernel.attend(/*batch=*/ivs[1], head, ivs[3]));
          memref::AllocaScopeReturnOp::create(rewriter, e.loc, ValueRange{});
        });
    rewriter.replaceOp(op, outputTensor(rewriter, p, s));
    return success();
  }

  ConvertAttnToLoopsOptions tiling;
};

/// y[r, o] = b[o] + Σ_i x[r, i] · W[o, i] (W[i, o] for in_out) as a tiled
/// loop nest: W is packed once as Wt[i][o] (contiguous along o), then each
/// block of 4 rows × 16 outputs keeps 8 vector accumulators in registers
/// over i. Rows are spread over threads.
struct ProjectToTiledLoops : OpRewritePattern<ProjectOp> {
  ProjectToTiledLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(ProjectOp op, PatternRewriter &rewriter) const override {
    auto xT = cast<RankedTensorType>(op.getInput().getType());
    auto resT = op.getType();
    int64_t w = tiling.vectorWidth;
    int64_t rank = xT.getRank();
    int64_t in = xT.getDimSize(rank - 1), out = resT.getDimSize(rank - 1);
    if (!xT.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "only f32 is tiled");
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out) || out % (2 * w) != 0)
      return rewriter.notifyMatchFailure(op, "widths must be static, Out a multiple of 2 vectors");
    // Collapsing two or more dynamic leading dims crashes MLIR 22's
    // expand-strided-metadata further down the pipeline; such inputs keep
    // the reference route.
    if (llvm::count_if(xT.getShape().drop_back(), ShapedType::isDynamic) > 1)
      return rewriter.notifyMatchFailure(op, "more than one dynamic leading dim");
    Location loc = op.getLoc();
    FlashBuilder e{rewriter, loc, w};

    // x as [rows, In]: collapse the leading dims.
    SmallVector<ReassociationIndices> toRows(2);
    for (int64_t i = 0; i + 1 < rank; ++i)
      toRows[0].push_back(i);
    toRows[1].push_back(rank - 1);
    Value x = op.getInput();
    if (rank != 2) {
      if (rank == 1)
        return rewriter.notifyMatchFailure(op, "rank-1 input");
      x = tensor::CollapseShapeOp::create(rewriter, loc, x, toRows);
    }
    auto rowsT = cast<RankedTensorType>(x.getType());
    auto buffer = [&](Value t) -> Value {
      return bufferization::ToBufferOp::create(
          rewriter, loc, anyLayoutBuffer(cast<RankedTensorType>(t.getType())), t,
          /*read_only=*/true);
    };
    Value xb = buffer(x), wb = buffer(op.getWeight());
    Value bb = op.getBias() ? buffer(op.getBias()) : Value();
    Value rows = memref::DimOp::create(rewriter, loc, xb, 0);
    bool outIn = op.getLayout() == WeightLayout::out_in;

    // Wt[i][o] = W[o][i] (or W[i][o]); bias as a vector row.
    Value wt = memref::AllocOp::create(rewriter, loc, MemRefType::get({in, out}, e.f32()),
                                       ValueRange{}, rewriter.getI64IntegerAttr(64));
    e.loop(e.idx(0), e.idx(in), 1, [&](Value i) {
      e.loop(e.idx(0), e.idx(out), 1, [&](Value o) {
        Value v = outIn ? e.load(wb, {o, i}) : e.load(wb, {i, o});
        e.store(v, wt, {i, o});
      });
    });
    auto outBufT = MemRefType::get({rowsT.getDimSize(0), out}, e.f32());
    SmallVector<Value> dyn;
    if (outBufT.isDynamicDim(0))
      dyn.push_back(rows);
    Value y = memref::AllocOp::create(rewriter, loc, outBufT, dyn,
                                      rewriter.getI64IntegerAttr(64));
    Value numBlocks = e.ceilDiv(rows, kRowBlock);
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{e.idx(0)}, ValueRange{numBlocks}, ValueRange{e.idx(1)},
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard g(rewriter);
          rewriter.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value r0 = e.mul(ivs[0], e.idx(kRowBlock));
          Value lastRow = e.sub(rows, e.idx(1));
          SmallVector<Value> rowIdx;
          for (int64_t r = 0; r < kRowBlock; ++r)
            rowIdx.push_back(e.minI(e.add(r0, e.idx(r)), lastRow));
          e.loop(e.idx(0), e.idx(out), 2 * w, [&](Value o) {
            Value o1 = e.add(o, e.idx(w));
            Value init0 = bb ? e.vload(bb, {o}) : e.splat(0.0);
            Value init1 = bb ? e.vload(bb, {o1}) : e.splat(0.0);
            SmallVector<Value> init;
            for (int64_t r = 0; r < kRowBlock; ++r) {
              init.push_back(init0);
              init.push_back(init1);
            }
            SmallVector<Value> sums = e.loopCarry(
                e.idx(0), e.idx(in), 1, init, [&](Value i, ValueRange a) {
                  Value w0 = e.vload(wt, {i, o}), w1 = e.vload(wt, {i, o1});
                  SmallVector<Value> next;
                  for (int64_t r = 0; r < kRowBlock; ++r) {
                    Value xr = e.bcast(e.load(xb, {rowIdx[r], i}));
                    next.push_back(e.fma(xr, w0, a[2 * r]));
                    next.push_back(e.fma(xr, w1, a[2 * r + 1]));
                  }
                  return next;
                });
            for (int64_t r = 0; r < kRowBlock; ++r) {
              Value row = e.add(r0, e.idx(r));
              e.ifThen(e.lt(row, rows), [&] {
                e.vstore(sums[2 * r], y, {row, o});
                e.vstore(sums[2 * r + 1], y, {row, o1});
              });
            }
          });
        });
    Value result = bufferization::ToTensorOp::create(
        rewriter, loc, RankedTensorType::get(outBufT.getShape(), e.f32()), y,
        /*restrict=*/true, /*writable=*/true);
    if (rank != 2) {
      ReifiedRankedShapedTypeDims dims;
      if (failed(reifyResultShapes(rewriter, op, dims)))
        return failure();
      result = tensor::ExpandShapeOp::create(rewriter, loc, resT, result, toRows, dims[0]);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  ConvertAttnToLoopsOptions tiling;
};

struct ConvertAttnToLoopsPass
    : mlir::attn::impl::ConvertAttnToLoopsBase<ConvertAttnToLoopsPass> {
  using ConvertAttnToLoopsBase::ConvertAttnToLoopsBase;
  void runOnOperation() override {
    ConvertAttnToLoopsOptions options{tileQ, tileK, vectorWidth, reportUnfused};
    if (std::string bad = checkAttnToLoopsOptions(options); !bad.empty()) {
      getOperation()->emitError() << bad;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateAttnToLoopsPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (reportUnfused)
      remarkUnfused();
  }

  /// A remark at every sdpa the kernel did not take (with the reason) and at
  /// the head of every primitive chain attn-fuse could not raise to sdpa:
  /// they take the unfused reference lowering.
  void remarkUnfused() {
    constexpr const char *kCost =
        "; it takes the unfused reference lowering, which materialises the "
        "[B,H,Tq,Tk] scores (typically 15-40x slower, see bench/RESULTS.md)";
    getOperation()->walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<SdpaOp>(op)) {
        std::string reason;
        if (failed(SdpaProblem::analyze(sdpa, KernelSupport{"CPU kernel", /*lowPrecision=*/true}, reason)))
          sdpa.emitRemark() << "attn.sdpa not fused: " << reason << kCost;
      } else if (auto scores = dyn_cast<ScoresOp>(op)) {
        scores.emitRemark()
            << "attn.scores not fused: a scores/softmax/weighted_sum chain that attn-fuse "
               "could not raise to attn.sdpa (an intermediate is used elsewhere, "
               "e.g. the attention weights are returned)"
            << kCost;
      }
    });
  }
};
} // namespace

std::string mlir::attn::checkAttnToLoopsOptions(const ConvertAttnToLoopsOptions &o) {
  if (o.tileQ > 0 && o.tileQ % kRowBlock == 0 && o.vectorWidth > 0 && o.tileK > 0 &&
      o.tileK % (2 * o.vectorWidth) == 0)
    return {};
  return "convert-attn-to-loops: tile-q must be a positive multiple of " +
         std::to_string(kRowBlock) +
         " and tile-k a positive multiple of 2 x vector-width, got tile-q=" +
         std::to_string(o.tileQ) + " tile-k=" + std::to_string(o.tileK) +
         " vector-width=" + std::to_string(o.vectorWidth);
}

void mlir::attn::populateAttnToLoopsPatterns(RewritePatternSet &patterns,
                                             const ConvertAttnToLoopsOptions &options) {
  patterns.add<SdpaToFlashLoops, ProjectToTiledLoops>(patterns.getContext(), options);
}
