//===- SdpaGradToLoops.cpp - attn.sdpa_grad to fused CPU loops ------------===//
//
// FlashAttention-2's backward on buffers, deterministic: no Tq×Tk tensor,
// and every output element written by one iteration of one parallel loop
// in a fixed order, so the gradients are the same bits whatever the thread
// count. Two parallel loops (docs/training.md):
//
//   parallel (b, K/V head, K/V tile):           -- dK, dV
//     Kt, Vt = the tile's K and V, transposed
//     for each query head of the group, each Q tile that sees the tile:
//       S  = Q·Kt (log2 units), softcap, the score function, ALiBi, mask,
//            keep rules,
//            the mask function (tiles its bounds say it keeps nothing
//            of are skipped, as in the forward)
//       P  = exp2(S - lse·log2e)                -- 0 where lse = -inf
//       dS = P ∘ (dO·Vt - D) ∘ f' ∘ softcap'    -- D = rowsum(dO ∘ O), f'
//                                                  the score function's slope
//       dV += Pᵀ·dO,  dK += dSᵀ·Q
//     dK ·= scale
//   parallel (b, query head, Q tile):            -- dQ
//     for each K/V tile the Q tile sees: P, dS as above;  dQ += dS·K
//     dQ ·= scale
//
// The second loop recomputes S and dP·Vᵀ: 7 tile products instead of 5
// (1.4× the FLOPs of a racing dQ accumulation), the price of determinism
// without atomics or per-thread dQ copies. Tiles outside the causal limit,
// the window or the key length are never visited in either loop.
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"

#include "Conversion/FlashCore/Dropout.h"
#include "Conversion/FlashCore/ModBounds.h"
#include "Conversion/FlashCore/ModFunctions.h"
#include "PopulatePatterns.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {
namespace {

/// The gradient kernel of one attn.sdpa_grad: its buffers, tile sizes and
/// per-iteration scratch.
class GradKernel {
public:
  GradKernel(KernelBuilder &b, const SdpaProblem &p, const SdpaBuffers &s,
             const GradBuffers &gb, int64_t tileQ, int64_t tileK)
      : b(b), p(p), s(s), o(gb.o), dO(gb.dO), lse(gb.lse), dk(gb.dk), dv(gb.dv), tq(tileQ),
        tk(tileK), w(b.width), rowBlock(tileQ % rowBlockFor(b.width) == 0 ? rowBlockFor(b.width)
                                                               : kRowBlock) {}

  /// The dK/dV loop, then the dQ loop.
  void emit() {
    Value kTiles = b.ceilDiv(s.tk, tk), qTiles = b.ceilDiv(s.tq, tq);
    parallelLoop(b, {s.batch, b.idx(p.kvHeads), kTiles}, /*stackScope=*/true,
                 [&](ValueRange iv) { keyTile(iv[0], iv[1], iv[2], qTiles); });
    parallelLoop(b, {s.batch, b.idx(p.heads), qTiles}, /*stackScope=*/true,
                 [&](ValueRange iv) { queryTile(iv[0], iv[1], iv[2]); });
  }

private:
  KernelBuilder &b;
  const SdpaProblem &p;
  const SdpaBuffers &s;
  Value o, dO, lse, dk, dv;
  int64_t tq, tk, w, rowBlock;
  // Scratch of one iteration.
  Value kt, vt;       ///< [D, tile-k], [Dv, tile-k]: the K/V tile transposed
  Value sp, ds, capF; ///< [tile-q, tile-k]: scores then P; dP then dS; softcap'
  Value slopeF;       ///< [tile-q, tile-k]: the score function's derivative
  Value lse2, dRow;   ///< [tile-q]: lse·log2e and rowsum(dO ∘ O)
  // The current Q tile and K/V tile.
  Value bIdx, head, kvHead, i0, qRows, k0, kRows;
  /// i1: the mask function keeps every key of the current tile (its
  /// bounds say so); null when unknown.
  Value maskModKeepsAll;

  Value scratch(ArrayRef<int64_t> shape) {
    return memref::AllocaOp::create(b.b, b.loc, MemRefType::get(shape, b.f32()),
                                    b.b.getI64IntegerAttr(64));
  }
  void allocateTileScratch() {
    kt = scratch({p.d, tk});
    vt = scratch({p.dv, tk});
    sp = scratch({tq, tk});
    ds = scratch({tq, tk});
    if (p.softcap)
      capF = scratch({tq, tk});
    if (p.scoreModGrad)
      slopeF = scratch({tq, tk});
    lse2 = scratch({tq});
    dRow = scratch({tq});
  }
  /// Vectors per block column: 2 where the width holds an even number.
  static int64_t colsFor(int64_t n, int64_t w) { return (n / w) % 2 == 0 ? 2 : 1; }

  /// Query row r of the tile, clamped into [0, Tq) (padding rows read the
  /// last row; their results are never used).
  Value queryRow(Value r) { return b.minI(b.add(i0, r), b.sub(s.tq, b.idx(1))); }

  void zero(Value buf, int64_t rows, int64_t cols) {
    b.loop(b.idx(0), b.idx(rows), 1, [&](Value r) {
      b.loop(b.idx(0), b.idx(cols), w, [&](Value c) { b.vstore(b.splat(0.0), buf, {r, c}); });
    });
  }

  /// kt[d][j] = K[b, kvHead, k0 + j, d] (0 past the tile's keys); vt the same.
  void packKeyValueTile() {
    for (auto [src, dst, n] : {std::tuple{s.k, kt, p.d}, std::tuple{s.v, vt, p.dv}}) {
      Value from = src, to = dst;
      int64_t width = n;
      b.loop(b.idx(0), kRows, 1, [&](Value j) {
        SmallVector<Value, 4> row = s.keyRow(b, bIdx, kvHead, b.add(k0, j));
        b.loop(b.idx(0), b.idx(width), 1, [&](Value d) {
          b.store(b.loadF32(from, withColumn(row, d)), to, {d, j});
        });
      });
      b.loop(kRows, b.idx(tk), 1, [&](Value j) {
        b.loop(b.idx(0), b.idx(width), 1, [&](Value d) { b.store(b.f(0.0), to, {d, j}); });
      });
    }
  }

  /// out[r][j] = factor · Σ_c a[b, head, row r, c] · bt[c][j] over the
  /// tile (n = D or Dv), register-blocked.
  void rowsTimesTile(Value out, Value a, Value bt, int64_t n, double factor) {
    int64_t cols = 2;
    b.loop(b.idx(0), b.idx(tq), rowBlock, [&](Value r0) {
      SmallVector<Value> rowIdx;
      for (int64_t r = 0; r < rowBlock; ++r)
        rowIdx.push_back(queryRow(b.add(r0, b.idx(r))));
      b.loop(b.idx(0), b.idx(tk), cols * w, [&](Value c0) {
        SmallVector<Value> init(rowBlock * cols, b.splat(0.0));
        SmallVector<Value> acc = broadcastFmaBlock(
            b, rowBlock, cols, b.idx(n), init,
            [&](Value c, int64_t v) { return b.vload(bt, {c, b.add(c0, b.idx(v * w))}); },
            [&](int64_t r, Value c) { return b.loadF32(a, {bIdx, head, rowIdx[r], c}); });
        for (int64_t r = 0; r < rowBlock; ++r)
          for (int64_t v = 0; v < cols; ++v)
            b.vstore(factor == 1.0 ? acc[r * cols + v] : b.fmul(acc[r * cols + v], b.splat(factor)),
                     out, {b.add(r0, b.idx(r)), b.add(c0, b.idx(v * w))});
      });
    });
  }

  /// lse2 and dRow of the Q tile's rows.
  void rowStatistics() {
    b.loop(b.idx(0), b.idx(tq), 1, [&](Value r) {
      Value i = queryRow(r);
      b.store(b.fmul(b.load(lse, {bIdx, head, i}), b.f(kLog2E)), lse2, {r});
      SmallVector<Value> sum = b.loopCarry(
          b.idx(0), b.idx(p.dv), w, {b.splat(0.0)}, [&](Value c, ValueRange acc) {
            return SmallVector<Value>{b.fma(b.vloadF32(dO, {bIdx, head, i, c}),
                                            b.vloadF32(o, {bIdx, head, i, c}), acc[0])};
          });
      b.store(b.sumLanes(sum[0]), dRow, {r});
    });
  }

  /// P and dS of the current Q tile against the current (packed) K/V tile.
  void probabilitiesAndScoreGradients(KeyVisibility &keys) {
    rowStatistics();
    rowsTimesTile(sp, s.q, kt, p.d, p.scaleLog2);
    std::optional<AlibiBias> alibi;
    if (p.hasAlibi())
      alibi.emplace(b, p, s, keys, bIdx, head);
    double capLog2 = p.softcap ? *p.softcap * kLog2E : 0.0;
    // softcap, ALiBi and the keep rules, w keys at a time.
    b.loop(b.idx(0), b.idx(tq), 1, [&](Value r) {
      Value i = queryRow(r);
      Value first = b.bcastI32(keys.firstKey(i)), end = b.bcastI32(keys.keyEnd(i));
      b.loop(b.idx(0), b.idx(tk), w, [&](Value c) {
        Value key0 = b.add(k0, c);
        Value x = b.vload(sp, {r, c});
        if (p.softcap) {
          x = softcapScores(b, p, x);
          Value t = b.fmul(x, b.splat(1.0 / capLog2));
          b.vstore(b.fsub(b.splat(1.0), b.fmul(t, t)), capF, {r, c});
        }
        if (p.scoreMod) {
          // y = f(x) in log2 units, and f'(x) (the derivative region at
          // the score in natural units: log2 units cancel in it).
          ModPoint at{Value(), bIdx, head, i, key0};
          at.score = b.fmul(x, b.splat(1.0 / kLog2E));
          Value slope = emitModFunction(b, *p.scoreModGrad, ModKind::Score, at, s.captures);
          if (!isa<VectorType>(slope.getType())) // a constant slope: one f32
            slope = b.bcast(slope);
          b.vstore(slope, slopeF, {r, c});
          x = scoreModLog2(b, *p.scoreMod, at, x, s.captures);
        }
        if (alibi)
          x = b.fadd(x, alibi->atLanes(i, key0));
        Value keysV = arith::AddIOp::create(b.b, b.loc, b.bcastI32(key0), b.laneIndices());
        Value keep = b.andI(b.cmpI(arith::CmpIPredicate::sge, keysV, first),
                            b.cmpI(arith::CmpIPredicate::slt, keysV, end));
        b.vstore(b.select(keep, x, b.splat(-std::numeric_limits<double>::infinity())), sp,
                 {r, c});
      });
    });
    if (p.mask)
      applyMaskOperand();
    if (p.maskMod) {
      if (maskModKeepsAll)
        b.ifThen(b.notI(maskModKeepsAll), [&] { applyMaskFunction(); });
      else
        applyMaskFunction();
    }
    // P = exp2(S - lse2): 0 for masked keys, and on a row with lse = -inf.
    b.loop(b.idx(0), b.idx(tq), 1, [&](Value r) {
      Value l = b.load(lse2, {r});
      Value empty = b.cmpF(arith::CmpFPredicate::OEQ, l, b.negInf());
      Value lV = b.bcast(l);
      b.loop(b.idx(0), b.idx(tk), w, [&](Value c) {
        Value e = b.exp2(b.fsub(b.vload(sp, {r, c}), lV));
        b.vstore(b.select(empty, b.splat(0.0), e), sp, {r, c});
      });
    });
    // dS = P ∘ (Z ∘ dO·Vt - D) ∘ softcap', with Z the dropout factors
    // (Dropout.h: 1/(1 - rate) or 0 per element, regenerated from the
    // seed); then P becomes Z ∘ P, the weights dV accumulates.
    rowsTimesTile(ds, dO, vt, p.dv, 1.0);
    b.loop(b.idx(0), b.idx(tq), 1, [&](Value r) {
      Value d = b.bcast(b.load(dRow, {r}));
      b.loop(b.idx(0), b.idx(tk), w, [&](Value c) {
        Value pv = b.vload(sp, {r, c}), dp = b.vload(ds, {r, c});
        if (p.dropoutRate) {
          Value first = probabilityIndex(b, bIdx, p.heads, head, s.tq, queryRow(r), s.tk,
                                         b.add(k0, c));
          Value z = dropoutFactors(b, first, s.dropoutSeed, *p.dropoutRate);
          dp = b.fmul(dp, z);
          b.vstore(b.fmul(pv, z), sp, {r, c});
        }
        Value g = b.fmul(pv, b.fsub(dp, d));
        if (p.softcap)
          g = b.fmul(g, b.vload(capF, {r, c}));
        if (p.scoreModGrad) {
          // 0 where P = 0: a derivative that is not finite at a masked
          // score never reaches dS.
          Value zero = b.splat(0.0);
          g = b.select(b.cmpF(arith::CmpFPredicate::OEQ, pv, zero), zero,
                       b.fmul(g, b.vload(slopeF, {r, c})));
        }
        b.vstore(g, ds, {r, c});
      });
    });
  }

  /// The mask function on the scores, w keys at a time (as the forward's
  /// FlashKernel::applyMaskMod): -inf where it is false. Padding rows and
  /// keys evaluate it too (captures are read at clamped indices); their
  /// scores are never used.
  void applyMaskFunction() {
    Value ninf = b.splat(-std::numeric_limits<double>::infinity());
    b.loop(b.idx(0), b.idx(tq), 1, [&](Value r) {
      Value i = queryRow(r);
      b.loop(b.idx(0), b.idx(tk), w, [&](Value c) {
        ModPoint at{Value(), bIdx, head, i, b.add(k0, c)};
        // (An i1 that does not vary with the key selects whole vectors.)
        Value keep = emitModFunction(b, *p.maskMod, ModKind::Mask, at, s.captures);
        b.vstore(b.select(keep, b.vload(sp, {r, c}), ninf), sp, {r, c});
      });
    });
  }

  /// `tile()` for the current Q tile and K/V tile, unless the mask
  /// function's bounds over them (ModBounds.h) say it keeps no key: a tile
  /// it keeps nothing of adds nothing. Sets maskModKeepsAll for the tile's
  /// scores (null where the bounds do not say, or there is no function).
  void ifMaskFunctionKeepsAny(function_ref<void()> tile) {
    maskModKeepsAll = Value();
    std::optional<MaskVerdict> v;
    if (p.maskMod)
      v = boundMaskFunction(b, *p.maskMod, bIdx, {head, head},
                            {i0, b.sub(b.add(i0, qRows), b.idx(1))},
                            {k0, b.sub(b.add(k0, kRows), b.idx(1))}, s.captures,
                            tileScanLimit(tq, tk));
    if (!v)
      return tile();
    maskModKeepsAll = v->allKept;
    b.ifThen(v->anyKept, tile);
  }

  /// The mask operand on the scores, element by element (as the forward's
  /// FlashKernel::applyMaskOperand): keep → -inf, additive → + m·log2e.
  void applyMaskOperand() {
    b.loop(b.idx(0), qRows, 1, [&](Value r) {
      Value i = b.add(i0, r);
      b.loop(b.idx(0), kRows, 1, [&](Value j) {
        SmallVector<Value> at = maskIndices(b, p.maskType, bIdx, head, i, b.add(k0, j));
        Value x = b.load(sp, {r, j});
        if (p.maskKind == MaskKind::Keep)
          x = b.select(b.load(s.mask, at), x, b.negInf());
        else
          x = b.fadd(x, b.fmul(b.loadF32(s.mask, at), b.f(kLog2E)));
        b.store(x, sp, {r, j});
      });
    });
  }

  /// acc[r][c] += Σ_{k < count} loadA(r, k) · loadB(k, c) over the `rows`
  /// rows and `n` columns of acc, in register blocks of rowBlock rows × 1
  /// or 2 vectors (loadB returns the vector at column c).
  void accumulateBlocks(Value acc, int64_t rows, int64_t n, Value count,
                        function_ref<Value(Value, Value)> loadB,
                        function_ref<Value(Value, Value)> loadA) {
    int64_t cols = colsFor(n, w);
    b.loop(b.idx(0), b.idx(rows), rowBlock, [&](Value r0) {
      b.loop(b.idx(0), b.idx(n), cols * w, [&](Value c0) {
        auto row = [&](int64_t r) { return b.add(r0, b.idx(r)); };
        auto col = [&](int64_t v) { return b.add(c0, b.idx(v * w)); };
        SmallVector<Value> init;
        for (int64_t r = 0; r < rowBlock; ++r)
          for (int64_t v = 0; v < cols; ++v)
            init.push_back(b.vload(acc, {row(r), col(v)}));
        SmallVector<Value> out = broadcastFmaBlock(
            b, rowBlock, cols, count, init,
            [&](Value k, int64_t v) { return loadB(k, col(v)); },
            [&](int64_t r, Value k) { return loadA(row(r), k); });
        for (int64_t r = 0; r < rowBlock; ++r)
          for (int64_t v = 0; v < cols; ++v)
            b.vstore(out[r * cols + v], acc, {row(r), col(v)});
      });
    });
  }

  /// acc[j][c] += Σ_{i < rows} t[i][j] · src[b, head, i0 + i, c] for the
  /// tile's keys j: dV += Pᵀ·dO, dK += dSᵀ·Q.
  void accumulateTransposed(Value acc, Value t, Value src, int64_t n) {
    accumulateBlocks(
        acc, tk, n, qRows,
        [&](Value i, Value c) { return b.vloadF32(src, {bIdx, head, b.add(i0, i), c}); },
        [&](Value j, Value i) { return b.load(t, {i, j}); });
  }

  /// acc[r][c] += Σ_{j < keys} ds[r][j] · K[b, kvHead, k0 + j, c]: dQ += dS·K.
  void accumulateQueryGradient(Value acc) {
    accumulateBlocks(
        acc, tq, p.d, kRows,
        [&](Value j, Value c) {
          return b.vloadF32(s.k, s.keyAt(b, bIdx, kvHead, b.add(k0, j), c));
        },
        [&](Value r, Value j) { return b.load(ds, {r, j}); });
  }

  /// dst[b, h, first + r, c] = factor · acc[r][c] for r < rows, rounded to
  /// dst's element type.
  void writeRows(Value dst, Value h, Value first, Value rows, Value acc, int64_t n,
                 double factor) {
    b.loop(b.idx(0), rows, 1, [&](Value r) {
      b.loop(b.idx(0), b.idx(n), w, [&](Value c) {
        Value x = b.vload(acc, {r, c});
        if (factor != 1.0)
          x = b.fmul(x, b.splat(factor));
        b.storeFromF32(x, dst, {bIdx, h, b.add(first, r), c});
      });
    });
  }

  /// One K/V tile's dK and dV: every query head of its group, every Q tile
  /// that sees a key of it.
  void keyTile(Value batch, Value kvH, Value kTile, Value qTiles) {
    bIdx = batch;
    kvHead = kvH;
    k0 = b.mul(kTile, b.idx(tk));
    kRows = b.minI(b.idx(tk), b.sub(s.tk, k0));
    allocateTileScratch();
    Value accK = scratch({tk, p.d}), accV = scratch({tk, p.dv});
    zero(accK, tk, p.d);
    zero(accV, tk, p.dv);
    packKeyValueTile();
    KeyVisibility keys(b, p, s, bIdx);
    Value kEnd = b.add(k0, kRows);
    b.loop(b.idx(0), b.idx(p.group), 1, [&](Value g) {
      head = b.add(b.mul(kvHead, b.idx(p.group)), g);
      b.loop(b.idx(0), qTiles, 1, [&](Value qTile) {
        i0 = b.mul(qTile, b.idx(tq));
        qRows = b.minI(b.idx(tq), b.sub(s.tq, i0));
        KeyVisibility::Range seen =
            keys.keyRange([&] { return i0; }, [&] { return b.add(i0, qRows); });
        Value overlaps = b.andI(b.lt(seen.begin, seen.end),
                                b.andI(b.lt(seen.begin, kEnd), b.gt(seen.end, k0)));
        b.ifThen(overlaps, [&] {
          ifMaskFunctionKeepsAny([&] {
            probabilitiesAndScoreGradients(keys);
            accumulateTransposed(accV, sp, dO, p.dv);
            accumulateTransposed(accK, ds, s.q, p.d);
          });
        });
      });
    });
    writeRows(dk, kvHead, k0, kRows, accK, p.d, p.scale);
    writeRows(dv, kvHead, k0, kRows, accV, p.dv, 1.0);
  }

  /// One Q tile's dQ over the K/V tiles it sees.
  void queryTile(Value batch, Value h, Value qTile) {
    bIdx = batch;
    head = h;
    kvHead = b.div(h, b.idx(p.group));
    i0 = b.mul(qTile, b.idx(tq));
    qRows = b.minI(b.idx(tq), b.sub(s.tq, i0));
    allocateTileScratch();
    Value accQ = scratch({tq, p.d});
    zero(accQ, tq, p.d);
    KeyVisibility keys(b, p, s, bIdx);
    KeyVisibility::Range tiles =
        keys.tileRange([&] { return i0; }, [&] { return b.add(i0, qRows); }, tk);
    b.loop(tiles.begin, tiles.end, 1, [&](Value kTile) {
      k0 = b.mul(kTile, b.idx(tk));
      kRows = b.minI(b.idx(tk), b.sub(s.tk, k0));
      ifMaskFunctionKeepsAny([&] {
        packKeyValueTile();
        probabilitiesAndScoreGradients(keys);
        accumulateQueryGradient(accQ);
      });
    });
    writeRows(s.out, head, i0, qRows, accQ, p.d, p.scale);
  }
};

/// Why the fused backward does not take `p` at `w` lanes; empty when it
/// does.
/// What the fused backward takes: the forward kernel's support without
/// paged or int8 K/V (it reads K and V as plain tensors).
KernelSupport gradKernelSupport() {
  KernelSupport support = cpuKernelSupport();
  support.pagedKeys = false;
  support.quantizedKeys = false;
  return support;
}

std::string gradRefusal(const SdpaProblem &p, int64_t w) {
  if (auto grad = dyn_cast<SdpaGradOp>(p.op); grad && grad.getGradMask())
    return "the mask's gradient (grad_mask) is the [B,H,Tq,Tk] score gradient, which the "
           "fused backward never forms";
  if (p.d % w != 0 || p.dv % w != 0)
    return "the fused backward needs head dims that are multiples of the vector width " +
           std::to_string(w) + ", got D = " + std::to_string(p.d) +
           ", Dv = " + std::to_string(p.dv);
  return {};
}

struct SdpaGradToFlashLoops : OpRewritePattern<SdpaGradOp> {
  SdpaGradToFlashLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern<SdpaGradOp>(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(SdpaGradOp op, PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<SdpaProblem> problem = SdpaProblem::analyze(op, gradKernelSupport(), reason);
    if (failed(problem))
      return rewriter.notifyMatchFailure(op, reason);
    const SdpaProblem &p = *problem;
    if (std::string why = gradRefusal(p, tiling.vectorWidth); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    KernelBuilder e{rewriter, loc, tiling.vectorWidth};
    SdpaBuffers s = materializeBuffers(rewriter, p, anyLayoutBuffer); // s.out: dQ
    GradBuffers gb = materializeGradBuffers(rewriter, op, s, anyLayoutBuffer);
    GradKernel(e, p, s, gb, tiling.tileQ, tiling.tileK).emit();
    rewriter.replaceOp(op, gradResultTensors(rewriter, p, s, gb));
    return success();
  }

  ConvertAttnToLoopsOptions tiling;
};

} // namespace

std::string sdpaGradRefusal(SdpaGradOp op, int64_t vectorWidth) {
  std::string reason;
  FailureOr<SdpaProblem> p = SdpaProblem::analyze(op, gradKernelSupport(), reason);
  if (failed(p))
    return reason;
  return gradRefusal(*p, vectorWidth);
}

void populateSdpaGradToLoopsPatterns(RewritePatternSet &patterns,
                                     const ConvertAttnToLoopsOptions &options) {
  patterns.add<SdpaGradToFlashLoops>(patterns.getContext(), options);
}

} // namespace mlir::attn::loops
