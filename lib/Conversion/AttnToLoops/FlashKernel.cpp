//===- FlashKernel.cpp - the prefill tile of the CPU kernel ---------------===//
//
// The FlashAttention-2 loop nest of one Q tile (FlashKernel.h) with K
// packed: per K/V tile, K transposed into Kt (or its slice of the keys
// prepacked once per call), the scores by the broadcast-FMA microkernel,
// the mask and keep rules, the online softmax w rows at a time, and P·V
// from V in place or from a packed Vt. The packing is in
// PrefillPacking.cpp, the decode tile's steps in DecodeTile.cpp.
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"

#include "Conversion/FlashCore/Dropout.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

int64_t paddedDv(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t) {
  return llvm::alignTo(p.dv, t.vectorWidth);
}

FlashKernel::FlashKernel(KernelBuilder &b, const SdpaProblem &problem, const SdpaBuffers &bufs,
                         const ConvertAttnToLoopsOptions &opts, bool directKeys,
                         PrepackedKeys prepacked)
    : b(b), problem(problem), bufs(bufs), opts(opts),
      dvPadded(paddedDv(problem, opts)), directKeys(directKeys),
      valuesInPlace(directKeys || takesValuesInPlace(problem, opts)),
      packedKeys(prepacked.buffer), packedKeysFilled(prepacked.filled),
      rowBlock(directKeys ? opts.tileQ
               : opts.tileQ % rowBlockFor(opts.vectorWidth) == 0 ? rowBlockFor(opts.vectorWidth)
                                                                 : kRowBlock),
      pairs(takesBf16Pairs(problem, opts, directKeys)),
      amx(takesAmx(problem, opts, directKeys)) {}

bool FlashKernel::takesValuesInPlace(const SdpaProblem &problem,
                                     const ConvertAttnToLoopsOptions &opts) {
  return problem.valueType.getElementType().isF32() && problem.dv % opts.vectorWidth == 0;
}

bool FlashKernel::takesQuantizedTiles(const SdpaProblem &problem,
                                      const ConvertAttnToLoopsOptions &opts) {
  int64_t w = opts.vectorWidth;
  return problem.quantized && llvm::isPowerOf2_64(w) && problem.d % w == 0 &&
         opts.tileK % w == 0 && takesValuesInPlace(problem, opts);
}

TileState FlashKernel::attend(Value bIdx, const TileRows &rows, Value split, Value splits) {
  this->bIdx = bIdx;
  this->rows = rows;
  hkv = rows.kvHead;
  keys.emplace(b, problem, bufs, bIdx);
  // One head per tile: its ALiBi slope is read once; grouped tiles read
  // each row's.
  tileAlibi.reset();
  if (problem.hasAlibi() && !rows.grouped)
    tileAlibi.emplace(b, problem, bufs, *keys, bIdx, rows.head);

  allocateScratch();
  packQueryTile();
  initRunningState(split);
  QueryRange q = queryRange();
  KeyVisibility::Range tiles = visibleTiles(q, split, splits);
  b.loop(tiles.begin, tiles.end, 1, [&](Value kTile) { attendTile(q, kTile); });
  return TileState{mRow, lRow, acc};
}

/// Only the K/V tiles holding a key some row of this Q tile sees; of a
/// key split, its run of them.
KeyVisibility::Range FlashKernel::visibleTiles(const QueryRange &q, Value split, Value splits) {
  KeyVisibility::Range tiles =
      keys->tileRange([&] { return q.begin; }, [&] { return q.end; }, opts.tileK);
  if (split) {
    Value chunk = b.ceilDiv(b.sub(tiles.end, tiles.begin), splits);
    Value first = b.minI(b.add(tiles.begin, b.mul(split, chunk)), tiles.end);
    tiles = {first, b.minI(b.add(first, chunk), tiles.end)};
  }
  return tiles;
}

/// One K/V tile of the online softmax: scores, mask, softmax, P·V.
void FlashKernel::attendTile(const QueryRange &q, Value kTile) {
  Value k0 = b.mul(kTile, b.idx(opts.tileK));
  // Keys past L (the key length, else Tk) are neither read nor kept.
  Value kRows = b.minI(b.idx(opts.tileK), b.sub(keys->keyCount(), k0));
  auto tile = [&](Value maskModKeepsAll) {
    if (directKeys) {
      computeScoresDirect(k0, kRows);
    } else {
      packKeyValueTile(kTile, k0, kRows);
      computeScores(k0);
    }
    finishTile(q, k0, kRows, maskModKeepsAll);
  };
  // A mask function bounded over the tile: a tile it keeps no key of is
  // skipped, one it keeps every key of is not masked per element.
  std::optional<flash::MaskVerdict> verdict;
  if (problem.maskMod)
    verdict = boundMaskModOverTile(q, k0, kRows);
  if (verdict)
    b.ifThen(verdict->anyKept, [&] { tile(verdict->allKept); });
  else
    tile(Value());
}

/// The steps of a K/V tile after its scores: mask, online softmax, P·V.
void FlashKernel::finishTile(const QueryRange &q, Value k0, Value kRows, Value maskModKeepsAll) {
  maskTile(q, k0, kRows, maskModKeepsAll);
  tileK0 = k0;
  onlineSoftmax();
  accumulateValues(k0, kRows);
}

/// Row i of the tile, clamped to the last row of the row space (padding
/// rows repeat it: their rules and mask are a real row's).
Value FlashKernel::rowAt(Value i) { return b.minI(b.add(rows.r0, i), b.sub(rows.total, b.idx(1))); }

Value FlashKernel::headOf(Value r) {
  if (!rows.grouped)
    return rows.head;
  return b.add(b.mul(rows.kvHead, b.idx(problem.group)), b.div(r, bufs.tq));
}

Value FlashKernel::queryOf(Value r) { return rows.grouped ? b.rem(r, bufs.tq) : r; }

FlashKernel::QueryRange FlashKernel::queryRange() {
  Value last = b.sub(b.add(rows.r0, rows.count), b.idx(1));
  if (!rows.grouped)
    return {rows.r0, b.add(last, b.idx(1))};
  Value crosses = b.cmpI(arith::CmpIPredicate::ne, b.div(rows.r0, bufs.tq), b.div(last, bufs.tq));
  return {b.select(crosses, b.idx(0), b.rem(rows.r0, bufs.tq)),
          b.select(crosses, bufs.tq, b.add(b.rem(last, bufs.tq), b.idx(1)))};
}

/// Stack scratch on a cache-line boundary (a vector load straddling two
/// lines costs two).
Value FlashKernel::scratch(ArrayRef<int64_t> shape, Type element) {
  return memref::AllocaOp::create(b.b, b.loc,
                                  MemRefType::get(shape, element ? element : b.f32()),
                                  ValueRange{}, b.b.getI64IntegerAttr(64));
}

void FlashKernel::allocateScratch() {
  if (pairs) {
    Type i32 = b.b.getI32Type();
    qs = scratch({opts.tileQ, problem.d / 2}, i32);
    if (!packedKeys)
      kt = scratch({problem.d / 2, opts.tileK}, i32);
    else if (packedKeysFilled)
      ktScratch = scratch({problem.d / 2, opts.tileK}, i32);
    vt = scratch({opts.tileK / 2, dvPadded}, i32);
    pPairs = scratch({opts.tileQ, opts.tileK / 2}, i32);
  } else {
    qs = scratch({opts.tileQ, problem.d});
    if (!directKeys && !packedKeys)
      kt = scratch({problem.d, opts.tileK});
    else if (!directKeys && packedKeysFilled)
      ktScratch = scratch({problem.d, opts.tileK});
    if (!valuesInPlace)
      vt = scratch({opts.tileK, dvPadded});
  }
  sp = scratch({opts.tileQ, opts.tileK});
  if (directKeys) // a run's per-key vectors: [slot][row · w + lane]
    keySums = scratch({opts.vectorWidth, opts.tileQ * opts.vectorWidth});
  if (directKeys && problem.quantized) // a run's int8 key scales, per slot
    keyScaleSlots = scratch({opts.vectorWidth});
  acc = scratch({opts.tileQ, dvPadded});
  mRow = scratch({opts.tileQ});
  lRow = scratch({opts.tileQ});
  alphaRow = scratch({opts.tileQ});
}

/// m = -inf, l = 0, acc = 0 for each row. With attention sinks a row
/// starts as if it had seen one more score, its head's sink, that weighs
/// no value: m = sink·log2(e) (the scores' log2 units), l = 1. A key split
/// (`split`) counts the sink in split 0 only, so the merge adds it once.
void FlashKernel::initRunningState(Value split) {
  b.loop(b.idx(0), b.idx(opts.tileQ), 1, [&](Value i) {
    b.store(b.negInf(), mRow, {i});
    b.store(b.f(0.0), lRow, {i});
    b.loop(b.idx(0), b.idx(dvPadded), opts.vectorWidth,
           [&](Value c) { b.vstore(b.splat(0.0), acc, {i, c}); });
  });
  if (!bufs.sinks)
    return;
  auto startAtSinks = [&] {
    b.loop(b.idx(0), b.idx(opts.tileQ), 1, [&](Value i) {
      Value sink = b.load(bufs.sinks, {headOf(rowAt(i))});
      b.store(b.fmul(sink, b.f(kLog2E)), mRow, {i});
      b.store(b.f(1.0), lRow, {i});
    });
  };
  if (split)
    b.ifThen(b.cmpI(arith::CmpIPredicate::eq, split, b.idx(0)), startAtSinks);
  else
    startAtSinks();
}

/// S[i][j] = Σ_d Qs[i][d] · Kt[d][j]: rowBlock rows × 2 vectors of keys
/// held in registers, one broadcast FMA per (row, vector) and d; then,
/// still in registers, the softcap and the ALiBi bias.
void FlashKernel::computeScores(Value k0) {
  if (amx)
    return computeScoresAmx(k0);
  int64_t w = opts.vectorWidth;
  // bf16 dots (Bf16Dot.cpp): D/2 steps over pairs of unscaled Q, so the
  // sums are scaled here.
  std::optional<BlockProduct> dot;
  Value scale;
  if (pairs) {
    dot = bf16Pairs(b);
    scale = b.splat(problem.scaleLog2);
  }
  int64_t depth = pairs ? problem.d / 2 : problem.d;
  b.loop(b.idx(0), b.idx(opts.tileQ), rowBlock, [&](Value i) {
    b.loop(b.idx(0), b.idx(opts.tileK), 2 * w, [&](Value j) {
      Value j1 = b.add(j, b.idx(w));
      SmallVector<Value> init(2 * rowBlock, b.splat(0.0));
      Value cols[2] = {j, j1};
      SmallVector<Value> sums = broadcastFmaBlock(
          b, rowBlock, 2, b.idx(depth), init,
          [&](Value d, int64_t v) {
            return pairs ? loadPairHalves(b, kt, {d, cols[v]}) : b.vload(kt, {d, cols[v]});
          },
          [&](int64_t r, Value d) { return b.load(qs, {b.add(i, b.idx(r)), d}); },
          /*perStep=*/nullptr, dot ? &*dot : nullptr);
      if (scale)
        for (Value &x : sums)
          x = b.fmul(x, scale);
      for (int64_t r = 0; r < rowBlock; ++r)
        storeScores(k0, b.add(i, b.idx(r)), cols, {sums[2 * r], sums[2 * r + 1]});
    });
  });
}

/// S[row][cols[v]..+w) = score_mod(softcap(x_v)) + ALiBi: the raw scores
/// `x` of tile row `row` for the keys k0 + cols[v] .., finished in
/// registers.
void FlashKernel::storeScores(Value k0, Value row, ArrayRef<Value> cols, ArrayRef<Value> x) {
  std::optional<AlibiBias> rowAlibi;
  AlibiBias *alibi = tileAlibi ? &*tileAlibi : nullptr;
  Value rowQ;
  if (problem.hasAlibi()) {
    Value tileRow = rowAt(row);
    rowQ = queryOf(tileRow);
    if (!alibi)
      alibi = &rowAlibi.emplace(b, problem, bufs, *keys, bIdx, headOf(tileRow));
  }
  for (auto [col, raw] : llvm::zip_equal(cols, x)) {
    Value v = softcapScores(b, problem, raw);
    if (problem.scoreMod)
      v = applyScoreMod(k0, row, col, v);
    if (alibi)
      v = b.fadd(v, alibi->atLanes(rowQ, b.add(k0, col)));
    b.vstore(v, sp, {row, col});
  }
}

/// The mask function bounded over this Q tile's rows and the keys
/// [k0, k0 + kRows) (ModBounds.h), or nullopt where it cannot be.
std::optional<flash::MaskVerdict> FlashKernel::boundMaskModOverTile(const QueryRange &q,
                                                                    Value k0, Value kRows) {
  flash::IndexRange heads{rows.head, rows.head};
  if (rows.grouped)
    heads = {headOf(rowAt(b.idx(0))), headOf(rowAt(b.sub(rows.count, b.idx(1))))};
  flash::IndexRange queries{q.begin, b.sub(q.end, b.idx(1))};
  flash::IndexRange keyRange{k0, b.add(k0, b.sub(kRows, b.idx(1)))};
  return flash::boundMaskFunction(b, *problem.maskMod, bIdx, heads, queries, keyRange,
                                  bufs.captures, tileScanLimit(opts.tileQ, opts.tileK));
}

/// The score function on the scores `x` (log2 units) of tile row `row`
/// for the w keys k0 + col ...
Value FlashKernel::applyScoreMod(Value k0, Value row, Value col, Value x) {
  Value r = rowAt(row);
  flash::ModPoint at{Value(), bIdx, headOf(r), queryOf(r), b.add(k0, col)};
  return flash::scoreModLog2(b, *problem.scoreMod, at, x, bufs.captures);
}

/// S[i][j] = -inf where the mask function is false, for every row and key
/// of the tile (padding keys included: the keep rules hide those).
void FlashKernel::applyMaskMod(Value k0) {
  Value ninf = b.splat(-INFINITY);
  b.loop(b.idx(0), b.idx(opts.tileQ), 1, [&](Value i) {
    Value r = rowAt(i);
    Value h = headOf(r), qi = queryOf(r);
    b.loop(b.idx(0), b.idx(opts.tileK), opts.vectorWidth, [&](Value j) {
      flash::ModPoint at{Value(), bIdx, h, qi, b.add(k0, j)};
      Value keep =
          flash::emitModFunction(b, *problem.maskMod, ModKind::Mask, at, bufs.captures);
      b.vstore(b.select(keep, b.vload(sp, {i, j}), ninf), sp, {i, j});
    });
  });
}

/// The operand mask (an additive mask added in log2 units, -inf where an
/// i1 mask is false), the mask function, then the keep rules: -inf outside the row's key
/// interval [firstKey, keyEnd) (key length, causal, window). Only a tile
/// that some row does not see whole pays for the keep rules, in vectors
/// (lane key index against the row's interval).
void FlashKernel::maskTile(const QueryRange &q, Value k0, Value kRows, Value maskModKeepsAll) {
  // The operand mask first (so a -inf of the keep rules is never added
  // to), then the keep rules.
  if (bufs.mask)
    applyMaskOperand(k0, kRows);
  if (problem.maskMod) {
    if (maskModKeepsAll)
      b.ifThen(b.notI(maskModKeepsAll), [&] { applyMaskMod(k0); });
    else
      applyMaskMod(k0);
  }
  int64_t w = opts.vectorWidth;
  Value need = b.notI(keys->allVisible(q.begin, [&] { return q.end; }, k0, opts.tileK));
  b.ifThen(need, [&] {
    Value iota = b.laneIndices();
    Value ninf = b.splat(-INFINITY);
    b.loop(b.idx(0), b.idx(opts.tileQ), 1, [&](Value i) {
      // The row's visible keys relative to k0: [lo, hi].
      Value row = queryOf(rowAt(i));
      Value hiV = b.bcastI32(b.sub(b.minI(keys->keyEnd(row), b.add(k0, kRows)),
                                   b.add(k0, b.idx(1))));
      Value loV = problem.windowLeft ? b.bcastI32(b.sub(keys->firstKey(row), k0)) : Value();
      b.loop(b.idx(0), b.idx(opts.tileK), w, [&](Value j) {
        Value jv = arith::AddIOp::create(b.b, b.loc, iota, b.bcastI32(j));
        Value hidden =
            arith::CmpIOp::create(b.b, b.loc, arith::CmpIPredicate::sgt, jv, hiV);
        if (loV)
          hidden = b.orI(hidden, arith::CmpIOp::create(
                                     b.b, b.loc, arith::CmpIPredicate::slt, jv, loV));
        Value x = b.vload(sp, {i, j});
        b.vstore(arith::SelectOp::create(b.b, b.loc, hidden, ninf, x), sp, {i, j});
      });
    });
  });
}

/// S[i][j] += log2(e)·mask (additive) or -inf where the keep mask is
/// false, for the valid keys of the tile.
void FlashKernel::applyMaskOperand(Value k0, Value kRows) {
  b.loop(b.idx(0), b.idx(opts.tileQ), 1, [&](Value i) {
    Value r = rowAt(i);
    Value h = headOf(r), qi = queryOf(r);
    b.loop(b.idx(0), kRows, 1, [&](Value j) {
      Value kj = b.add(k0, j);
      Value x = b.load(sp, {i, j});
      Value m = problem.maskKind == MaskKind::Keep
                    ? b.load(bufs.mask, maskIndices(b, problem.maskType, bIdx, h, qi, kj))
                    : b.loadF32(bufs.mask, maskIndices(b, problem.maskType, bIdx, h, qi, kj));
      if (problem.maskKind == MaskKind::Keep)
        x = b.select(m, x, b.negInf());
      else
        x = b.fadd(x, b.fmul(m, b.f(kLog2E)));
      b.store(x, sp, {i, j});
    });
  });
}

/// Per row: m' = max(m, max_j S), P = exp2(S - m'), α = exp2(m - m'),
/// l = α·l + Σ_j P, m = m'. A row with nothing visible yet keeps P = 0.
/// Rows go w at a time (softmaxRowGroup) while w of them are left, the
/// rest (tile-q not a multiple of w, a decode's few rows) one by one.
void FlashKernel::onlineSoftmax() {
  int64_t w = opts.vectorWidth;
  int64_t grouped = opts.tileQ / w * w;
  if (grouped > 0)
    b.loop(b.idx(0), b.idx(grouped), w, [&](Value i0) { softmaxRowGroup(i0); });
  if (grouped < opts.tileQ)
    b.loop(b.idx(grouped), b.idx(opts.tileQ), 1, [&](Value i) { softmaxRow(i); });
}

/// The softmax step of one row: a horizontal max and sum, and scalar
/// state.
void FlashKernel::softmaxRow(Value i) {
  Value mOld = b.load(mRow, {i});
  Value mNew = b.fmax(mOld, b.maxLanes(rowMaxVector(i)));
  Value mSafe = b.mergeReference(mNew);
  Value rowSum = b.sumLanes(exponentiateRow(i, b.bcast(mSafe)));
  Value alpha = b.mergeWeight(mOld, mSafe);
  b.store(b.fadd(b.fmul(b.load(lRow, {i}), alpha), rowSum), lRow, {i});
  b.store(mNew, mRow, {i});
  b.store(alpha, alphaRow, {i});
}

/// The softmax step of rows i0 .. i0 + w - 1 with their state in vectors
/// (lane r: row i0 + r): the rows' max and sum vectors folded into one
/// vector each by foldSlots, one vector exp2 for the w α. Per row, the
/// one-by-one step pays two horizontal reductions of log2(w) dependent
/// steps and a scalar exp2 between its loads and its exponentials
/// (bench/NOTES.md, 2026-12-02: Softmax row groups and in-cache P·V).
void FlashKernel::softmaxRowGroup(Value i0) {
  int64_t w = opts.vectorWidth;
  auto rowOf = [&](int64_t r) { return b.add(i0, b.idx(r)); };
  SmallVector<Value> maxima, sums;
  for (int64_t r = 0; r < w; ++r)
    maxima.push_back(rowMaxVector(rowOf(r)));
  Value mOld = b.vload(mRow, {i0});
  Value mNew = b.fmax(mOld, foldSlots(b, maxima, [&](Value x, Value y) {
                        return b.fmaxFast(x, y);
                      }));
  Value mSafe = b.mergeReference(mNew);
  for (int64_t r = 0; r < w; ++r) {
    Value lane = vector::ExtractOp::create(b.b, b.loc, mSafe, ArrayRef<int64_t>{r});
    sums.push_back(exponentiateRow(rowOf(r), b.bcast(lane)));
  }
  Value rowSum = foldSlots(b, sums, [&](Value x, Value y) { return b.fadd(x, y); });
  Value alpha = b.mergeWeight(mOld, mSafe);
  b.vstore(b.fadd(b.fmul(b.vload(lRow, {i0}), alpha), rowSum), lRow, {i0});
  b.vstore(mNew, mRow, {i0});
  b.vstore(alpha, alphaRow, {i0});
}

/// max over each lane of row i of the score tile: one vector.
Value FlashKernel::rowMaxVector(Value i) {
  return b.loopCarry(b.idx(0), b.idx(opts.tileK), opts.vectorWidth, {b.splat(-INFINITY)},
                     [&](Value j, ValueRange a) {
                       return SmallVector<Value>{b.fmaxFast(b.vload(sp, {i, j}), a[0])};
                     })[0];
}

/// P = exp2(S - m) over row i of the score tile (m broadcast), stored in
/// place; returns the lanes' sums of P.
Value FlashKernel::exponentiateRow(Value i, Value mV) {
  return b.loopCarry(b.idx(0), b.idx(opts.tileK), opts.vectorWidth, {b.splat(0.0)},
                     [&](Value j, ValueRange a) {
                       Value p = b.exp2(b.fsub(b.vload(sp, {i, j}), mV));
                       Value weights = problem.dropoutRate ? dropProbabilities(i, j, p) : p;
                       if (pairs)
                         storeProbabilityPairs(i, j, weights);
                       else
                         b.vstore(weights, sp, {i, j});
                       return SmallVector<Value>{b.fadd(a[0], p)};
                     })[0];
}

/// Dropout on the w probabilities of row i at tile columns j ..: each
/// element of the [B, H, Tq, Tk] probabilities is kept or dropped by the
/// generator at its row-major flat index ((b·H + h)·Tq + q)·Tk + key, as
/// attn.dropout would on the decomposed chain; kept ones are scaled by
/// 1 / (1 - rate).
Value FlashKernel::dropProbabilities(Value i, Value j, Value p) {
  Value r = rowAt(i);
  Value first = flash::probabilityIndex(b, bIdx, problem.heads, headOf(r), bufs.tq, queryOf(r),
                                        bufs.tk, b.add(tileK0, j));
  return b.fmul(p, flash::dropoutFactors(b, first, bufs.dropoutSeed, *problem.dropoutRate));
}

/// acc[i][c] = α_i · acc[i][c] + Σ_j P[i][j] · Vt[j][c]: rowBlock rows ×
/// 1, 2 or 4 vectors of columns in registers (as many as the accumulator
/// budget allows). With K/V read in place (directKeys), V's rows are read
/// where they are, for the tile's keys only (P is 0 past them), whole:
/// see accumulateValuesByRows.
void FlashKernel::accumulateValues(Value k0, Value kRows) {
  int64_t w = opts.vectorWidth;
  if (directKeys && problem.quantized)
    return accumulateValuesByColumns(k0, kRows);
  if (directKeys)
    return dvPadded / w <= accumulatorBudget(w) ? accumulateValuesByRows(k0, kRows)
                                                : accumulateValuesInCache(k0, kRows);
  if (amx)
    return accumulateValuesAmx();
  int64_t cols = 1;
  for (int64_t c : {4, 2})
    if (rowBlock * c <= accumulatorBudget(w) && dvPadded % (c * w) == 0) {
      cols = c;
      break;
    }
  // V in place: the tile's keys only (P is 0 past them); Vt: all tile-k
  // rows (zero past the keys), a static trip count; bf16 dots: the tile-k/2
  // pairs of rows.
  Value keyCount = pairs           ? b.idx(opts.tileK / 2)
                   : valuesInPlace ? kRows
                                   : b.idx(opts.tileK);
  b.loop(b.idx(0), b.idx(opts.tileQ), rowBlock, [&](Value i) {
    b.loop(b.idx(0), b.idx(dvPadded), cols * w, [&](Value c) {
      SmallVector<Value> colIdx;
      for (int64_t v = 0; v < cols; ++v)
        colIdx.push_back(b.add(c, b.idx(v * w)));
      accumulateBlock(k0, keyCount, i, rowBlock, colIdx);
    });
  });
}

/// P[row][j], times V's scale for key k0 + j with int8 V
/// (SdpaProblem::quantized; l was summed from P before).
Value FlashKernel::probabilityWeight(Value row, Value k0, Value j) {
  Value p = b.load(sp, {row, j});
  if (!bufs.valueScales)
    return p;
  return b.fmul(p, bufs.rowScale(b, bufs.v, bufs.valueScales, bIdx, hkv, b.add(k0, j)));
}

/// One register block of accumulateValues: rows row0 .. row0 + n - 1 ×
/// the vectors of columns at colIdx, rescaled by α, plus P · V over
/// `keyCount` keys (V in place, or the packed Vt), stored back to acc.
void FlashKernel::accumulateBlock(Value k0, Value keyCount, Value row0, int64_t n,
                                  ArrayRef<Value> colIdx, function_ref<void(Value)> perStep) {
  int64_t cols = colIdx.size();
  SmallVector<Value> init;
  for (int64_t r = 0; r < n; ++r) {
    Value row = b.add(row0, b.idx(r));
    Value alpha = b.bcast(b.load(alphaRow, {row}));
    for (int64_t v = 0; v < cols; ++v)
      init.push_back(b.fmul(b.vload(acc, {row, colIdx[v]}), alpha));
  }
  // bf16 dots (Bf16Dot.cpp): pairs of P against pairs of V's rows.
  std::optional<BlockProduct> dot;
  if (pairs)
    dot = bf16Pairs(b);
  SmallVector<Value> sums = broadcastFmaBlock(
      b, n, cols, keyCount, init,
      [&](Value j, int64_t v) {
        if (pairs)
          return loadPairHalves(b, vt, {j, colIdx[v]});
        if (valuesInPlace)
          return b.vloadF32(bufs.v, bufs.keyAt(b, bIdx, hkv, b.add(k0, j), colIdx[v]));
        return b.vload(vt, {j, colIdx[v]});
      },
      [&](int64_t r, Value j) {
        if (pairs)
          return b.load(pPairs, {b.add(row0, b.idx(r)), j});
        return probabilityWeight(b.add(row0, b.idx(r)), k0, j);
      },
      perStep, dot ? &*dot : nullptr);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t v = 0; v < cols; ++v)
      b.vstore(sums[r * cols + v], acc, {b.add(row0, b.idx(r)), colIdx[v]});
}

void FlashKernel::writeOutput(Value bIdx, const TileRows &rows, const TileState &state) {
  this->rows = rows;
  int64_t w = opts.vectorWidth;
  b.loop(b.idx(0), rows.count, 1, [&](Value i) {
    Value l = b.load(state.l, {i});
    Value inv = b.inverseRowSum(l);
    Value r = b.add(rows.r0, i);
    Value h = headOf(r), row = queryOf(r);
    if (bufs.lse) {
      // attn.sdpa_partial: lse = ln 2 · (m + log2 l) = ln2·m + ln l, -inf
      // for a row that saw no key (m = -inf, l = 0).
      Value m = b.load(state.m, {i});
      Value lnL = math::LogOp::create(b.b, b.loc, l);
      b.store(b.fma(m, b.f(1.0 / kLog2E), lnL), bufs.lse, {bIdx, h, row});
    }
    if (problem.dv % w == 0) {
      Value invV = b.bcast(inv);
      b.loop(b.idx(0), b.idx(problem.dv), w, [&](Value c) {
        Value x = b.fmul(b.vload(state.acc, {i, c}), invV);
        b.storeFromF32(x, bufs.out, {bIdx, h, row, c});
      });
      return;
    }
    b.loop(b.idx(0), b.idx(problem.dv), 1, [&](Value c) {
      Value x = b.fmul(b.load(state.acc, {i, c}), inv);
      b.storeFromF32(x, bufs.out, {bIdx, h, row, c});
    });
  });
}

} // namespace mlir::attn::loops
