//===- DecodeTile.cpp - the decode tile: K and V read in place ------------===//
//
// The steps of FlashKernel (FlashKernel.h) for a tile of few grouped rows
// (R = G·Tq at most a row block: LLM decode). K and V are streamed from
// memory, read in place in key order, never packed: the scores from
// per-key vectors over D folded by foldSlotsOfRows, P·V by whole V rows,
// and prefetches that keep both arrays ahead of the reads (docs/cpu.md,
// the *Decode:* entries). On paged NHD caches one work item takes every
// K/V head (attendEveryHead).
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

/// How far ahead of the key it reads the score loop also asks for K's
/// rows: 8 KiB (16 keys at D 128 in f32). The hardware prefetchers do
/// follow K there, but not far enough ahead (bench/NOTES.md, 2026-12-02:
/// Decode cross prefetch and K-ahead prefetch). Non-temporal
/// (prefetchnta): each K row is read once, a few steps later
/// (bench/NOTES.md, 2026-12-02: Non-temporal K-ahead prefetch).
static constexpr int64_t kKeyAheadBytes = 8 * 1024;

bool FlashKernel::takesDirectKeys(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                                  int64_t rows) {
  int64_t w = opts.vectorWidth;
  return rows >= 1 && rows <= rowBlockFor(w) && rows <= opts.tileQ &&
         llvm::isPowerOf2_64(w) && problem.d % w == 0 && problem.dv % w == 0 && opts.tileK % w == 0;
}

/// The scores of a tile of few rows (R = tile-q <= the row block: decode)
/// with K read in place: no transposed copy of K, whose w·log2(w)
/// shuffles per w keys and D would cost more than the R·D FMAs a key
/// needs. For each run of w keys, a loop over the keys in order reads
/// each key's row once, front to back, into R vectors over D (one per
/// row), kept in `keySums`; then each row's w vectors are folded into
/// one vector of w scores in key order by foldSlotsOfRows (about 2 shuffles
/// per key and row). Keys past the tile's (the partial last tile) repeat
/// its last key; the keep rules hide them. With int8 K (SdpaProblem::
/// quantized) the rows are converted to f32 as they are read and each
/// key's scale (gathered into keyScaleSlots) multiplies the folded scores.
///
/// The read order is a decode's speed: K (and V, accumulateValuesByRows)
/// stream from memory, and only a front-to-back read of one key row after
/// another keeps the hardware prefetchers ahead on every core. Keys read
/// in step line by line, out of order, or a burst of software prefetches
/// ahead in the same array (which LLVM gathered into one burst per run)
/// each made a C++ model of this loop slower on AMD Zen 4
/// (bench/NOTES.md, 2026-12-02: Decode read order). The key loop stays a
/// loop so that LLVM cannot interleave the keys' loads beyond one step.
/// What does pay is one prefetch of the other array's row per key, into
/// L2 (prefetchRow): here the same key's V row; and one of K's own row
/// 8 KiB ahead (keyAhead, non-temporal).
///
/// One step of the key loop takes keysPerStep() adjacent keys (their rows
/// are one contiguous block): each vector of a query row, loaded once,
/// meets the K vectors of every key of the step. The query rows do not
/// fit the registers (4 rows at D 128 are 32 vectors), so one key a step
/// loads each of them again for every key: with 4 keys a step a key
/// costs 2 loads per vector of D instead of 5 (bench/NOTES.md,
/// 2026-12-02: Several keys a decode step).
void FlashKernel::computeScoresDirect(Value k0, Value kRows, const HeadStates *heads) {
  int64_t w = opts.vectorWidth, rowsN = opts.tileQ, n = keysPerStep();
  Value lastKey = b.add(k0, b.sub(kRows, b.idx(1)));
  // The n keys of step `step` of run `j`: their sums over D, per row, into
  // keySums.
  auto scoreStep = [&](Value j, Value step) {
    SmallVector<Value> slots{step}, stepKeys;
    for (int64_t i = 1; i < n; ++i)
      slots.push_back(b.add(step, b.idx(i)));
    for (Value slot : slots) {
      Value inTile = b.add(j, slot);
      Value key = b.add(k0, inTile);
      stepKeys.push_back(b.minI(key, lastKey));
    }
    SmallVector<SmallVector<Value, 4>> keyRows;
    for (auto [slot, key] : llvm::zip(slots, stepKeys)) {
      if (keyScaleSlots) // int8/fp8 K: the key's scale, applied after the fold
        b.store(bufs.rowScale(b, bufs.k, bufs.keyScales, bIdx, hkv, key), keyScaleSlots, {slot});
      keyRows.push_back(bufs.keyRow(b, bIdx, hkv, key));
      prefetchRow(bufs.v, keyRows.back(), problem.dv);
      prefetchRow(bufs.k, bufs.keyRow(b, bIdx, hkv, keyAhead(key)), problem.d, kNonTemporal);
    }
    SmallVector<Value> init(n * rowsN, b.splat(0.0));
    SmallVector<Value> sums = b.loopCarry(
        b.idx(0), b.idx(problem.d), w, init, [&](Value d, ValueRange a) {
          SmallVector<Value> kv;
          for (ArrayRef<Value> row : keyRows)
            kv.push_back(b.vloadF32(bufs.k, withColumn(row, d)));
          // next[i·rowsN + r]: key i of the step, row r.
          SmallVector<Value> next(n * rowsN);
          for (int64_t r = 0; r < rowsN; ++r) {
            Value q = b.vload(qs, {b.idx(r), d});
            for (int64_t i = 0; i < n; ++i)
              next[i * rowsN + r] = b.fma(q, kv[i], a[i * rowsN + r]);
          }
          return next;
        });
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 0; r < rowsN; ++r)
        b.vstore(sums[i * rowsN + r], keySums, {slots[i], b.idx(r * w)});
  };
  // Run j's w vectors of each row folded into one vector of w scores.
  auto foldRun = [&](Value j) {
    // int8 K: the run's w key scales, one vector for every row's scores.
    Value runScales = keyScaleSlots ? b.vload(keyScaleSlots, {b.idx(0)}) : Value();
    foldSlotsOfRows(
        b, rowsN,
        [&](int64_t slot, int64_t r) {
          return b.vload(keySums, {b.idx(slot), b.idx(r * w)});
        },
        [&](Value x, Value y) { return b.fadd(x, y); },
        [&](int64_t r, Value scores) {
          storeScores(k0, b.idx(r), {j}, {runScales ? b.fmul(scores, runScales) : scores});
        });
  };
  // With `heads`, each step (and each fold) for every head in turn.
  auto eachHead = [&](function_ref<void()> body) {
    if (heads)
      forEachHead(*heads, body);
    else
      body();
  };
  b.loop(b.idx(0), b.idx(opts.tileK), w, [&](Value j) {
    b.loop(b.idx(0), b.idx(w), n, [&](Value step) { eachHead([&] { scoreStep(j, step); }); });
    eachHead([&] { foldRun(j); });
  });
}

void FlashKernel::forEachHead(const HeadStates &states, function_ref<void()> body) {
  b.loop(b.idx(0), b.idx(problem.kvHeads), 1, [&](Value h) {
    selectHead(states, h);
    body();
  });
}

/// The longest run of one K/V head's rows in a block of an HND cache
/// ([blocks, Hkv, block size, D]: block size · D elements) that still
/// takes every head in one work item: blocks of 16 tokens at D 128 in f32
/// (8 KiB) were faster so, blocks of 64 neither faster nor slower, blocks
/// of 256 and whole sequences slower (bench/NOTES.md, 2026-12-07: Paged
/// NHD decode, every K/V head in one work item).
static constexpr int64_t kEveryHeadMaxRunBytes = 8 * 1024;

bool FlashKernel::takesEveryHead(const SdpaProblem &problem, const SdpaBuffers &bufs,
                                 bool directKeys) {
  if (!directKeys || !bufs.table || problem.kvHeads < 2)
    return false;
  if (bufs.layout == KvLayout::nhd)
    return true;
  auto cache = cast<MemRefType>(bufs.k.getType());
  int64_t blockSize = cache.getDimSize(2);
  return !ShapedType::isDynamic(blockSize) &&
         blockSize * problem.d * cache.getElementTypeBitWidth() / 8 <= kEveryHeadMaxRunBytes;
}

/// all[h] as a view of rank one less.
static Value headSlice(KernelBuilder &b, Value all, Value h) {
  auto type = cast<MemRefType>(all.getType());
  OpFoldResult zero = b.b.getIndexAttr(0), one = b.b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets{h}, sizes{one}, strides(type.getRank(), one);
  for (int64_t d = 1; d < type.getRank(); ++d) {
    offsets.push_back(zero);
    sizes.push_back(b.b.getIndexAttr(type.getDimSize(d)));
  }
  MemRefType slice = memref::SubViewOp::inferRankReducedResultType(
      type.getShape().drop_front(), type, offsets, sizes, strides);
  return memref::SubViewOp::create(b.b, b.loc, slice, all, offsets, sizes, strides);
}

void FlashKernel::selectHead(const HeadStates &states, Value kvHead) {
  hkv = kvHead;
  rows.kvHead = kvHead;
  qs = headSlice(b, states.q, kvHead);
  mRow = headSlice(b, states.m, kvHead);
  lRow = headSlice(b, states.l, kvHead);
  acc = headSlice(b, states.acc, kvHead);
  if (states.scores) {
    sp = headSlice(b, states.scores, kvHead);
    keySums = headSlice(b, states.keySums, kvHead);
    if (states.keyScales)
      keyScaleSlots = headSlice(b, states.keyScales, kvHead);
  }
}

/// The paged decode of takesEveryHead. A row of an NHD cache holds every
/// K/V head (4 KiB at Hkv 8, D 128, f32), so a work item of one K/V head
/// reads 512 of every 4096 bytes, and each block of the cache is fetched
/// in Hkv passes far apart in time, one per work item; an HND cache with
/// small blocks has short runs of one head's rows, a jump every block.
/// With the heads inner, the passes over a K/V tile's blocks follow each
/// other, and the keys are split across threads instead of the heads
/// (bench/NOTES.md, 2026-12-07: Paged NHD decode, every K/V head in one
/// work item).
FlashKernel::HeadStates FlashKernel::attendEveryHead(Value bIdx, const TileRows &rows,
                                                     Value split, Value splits) {
  this->bIdx = bIdx;
  this->rows = rows;
  keys.emplace(b, problem, bufs, bIdx);
  tileAlibi.reset();
  allocateScratch();
  int64_t heads = problem.kvHeads;
  HeadStates states{scratch({heads, opts.tileQ, problem.d}), scratch({heads, opts.tileQ}),
                    scratch({heads, opts.tileQ}), scratch({heads, opts.tileQ, dvPadded})};
  forEachHead(states, [&] {
    packQueryTile();
    initRunningState(split);
  });
  QueryRange q = queryRange();
  KeyVisibility::Range tiles = visibleTiles(q, split, splits);
  if (problem.maskMod) {
    b.loop(tiles.begin, tiles.end, 1,
           [&](Value kTile) { forEachHead(states, [&] { attendTile(q, kTile); }); });
    return states;
  }
  // Without a mask function (whose verdict per tile is each head's), the
  // score loop takes every head in turn at each step of keys, so that K's
  // rows (and the V rows it prefetches) are read in memory order; then
  // each head's softmax and P·V (bench/NOTES.md, 2026-12-07: Paged NHD
  // decode, every K/V head in one work item).
  int64_t w = opts.vectorWidth;
  states.scores = scratch({heads, opts.tileQ, opts.tileK});
  states.keySums = scratch({heads, w, opts.tileQ * w});
  if (problem.quantized)
    states.keyScales = scratch({heads, w});
  b.loop(tiles.begin, tiles.end, 1, [&](Value kTile) {
    Value k0 = b.mul(kTile, b.idx(opts.tileK));
    Value kRows = b.minI(b.idx(opts.tileK), b.sub(keys->keyCount(), k0));
    computeScoresDirect(k0, kRows, &states);
    forEachHead(states, [&] { finishTile(q, k0, kRows, Value()); });
  });
  return states;
}

TileState FlashKernel::headState(const HeadStates &states, const TileRows &rows) {
  this->rows = rows;
  selectHead(states, rows.kvHead);
  return TileState{mRow, lRow, acc};
}

/// Keys a step of computeScoresDirect takes: at 16 lanes, the most of 4,
/// 2, 1 whose score accumulators (keys × tile rows) fit accumulatorBudget
/// (4 rows, a GQA group of 4 at Tq 1: 4 keys; 8 rows: 2; 12: 1). At 8
/// lanes one: 2 keys of 4 rows were not faster (bench/NOTES.md,
/// 2026-12-02: Several keys a decode step).
int64_t FlashKernel::keysPerStep() const {
  if (opts.vectorWidth < 16)
    return 1;
  for (int64_t n : {4, 2})
    if (n * opts.tileQ <= accumulatorBudget(opts.vectorWidth))
      return n;
  return 1;
}

/// Asks the cache for the row of K or V at `row` (SdpaBuffers::keyRow,
/// columns 0 .. width), one prefetch per 64-byte line, by default into L2 (kIntoL2: x86's
/// prefetcht1). A decode streams two arrays in alternation, a tile of K
/// rows, then the same tile's V rows; the hardware prefetchers follow the
/// stream being read and fall behind on the other, which every tile then
/// starts cold. So each loop over one array's rows asks for the other's: the
/// score loop for the V row of the same key, P·V for the K row of the
/// next tile's (prefetchNextKeyRow). Into L2, not L1: a tile's rows (32
/// KiB of K or V at tile-k 64, D 128) would fill L1. `locality` is
/// memref.prefetch's hint: kNonTemporal for the K rows of keyAhead.
void FlashKernel::prefetchRow(Value buf, ArrayRef<Value> row, int64_t width, uint32_t locality) {
  int64_t lineElems = 512 / cast<MemRefType>(buf.getType()).getElementTypeBitWidth();
  for (int64_t c = 0; c < width; c += lineElems)
    memref::PrefetchOp::create(b.b, b.loc, buf, withColumn(row, b.idx(c)),
                               /*isWrite=*/false, locality,
                               /*isDataCache=*/true);
}

/// `key`, clamped to the batch row's last key (keyCount - 1: a tile
/// exists only where the row has a key, so the result is never negative).
/// The prefetches ask for rows past the tile; the clamp keeps them inside
/// the batch row. (One statement per op here and in the callers: the
/// order of function arguments is the compiler's, and the lit tests pin
/// the order of the ops.)
Value FlashKernel::clampToLastKey(Value key) {
  Value last = b.sub(keys->keyCount(), b.idx(1));
  return b.minI(key, last);
}

/// K's row kKeyAheadBytes past `key`, clamped to the batch row's last key.
Value FlashKernel::keyAhead(Value key) {
  int64_t rowBytes = problem.d * cast<MemRefType>(bufs.k.getType()).getElementTypeBitWidth() / 8;
  int64_t ahead = std::max<int64_t>(1, kKeyAheadBytes / rowBytes);
  Value next = b.add(key, b.idx(ahead));
  return clampToLastKey(next);
}

/// prefetchRow of K's row k0 + tile-k + j (the next tile's key j),
/// clamped to the batch row's last key.
void FlashKernel::prefetchNextKeyRow(Value k0, Value j) {
  Value inNextTile = b.add(j, b.idx(opts.tileK));
  Value next = b.add(k0, inNextTile);
  prefetchRow(bufs.k, bufs.keyRow(b, bIdx, hkv, clampToLastKey(next)), problem.d);
}

/// accumulateValues for a tile that reads V in place, when a row's Dv
/// fits the accumulator budget: passes over groups of as many rows as
/// the budget holds, each reading the tile's V rows whole, key by key
/// (4 rows at Dv 128 with AVX-512: two passes of 2 rows × 8 vectors).
/// Passes over column slices instead read each V row in pieces with a
/// stride, which the hardware prefetchers of AMD Zen 4 follow badly
/// (bench/NOTES.md, 2026-12-02: Decode read order).
void FlashKernel::accumulateValuesByRows(Value k0, Value kRows) {
  int64_t w = opts.vectorWidth;
  int64_t cols = dvPadded / w;
  int64_t rowsPerPass = std::max<int64_t>(1, accumulatorBudget(w) / cols);
  SmallVector<Value> colIdx;
  for (int64_t v = 0; v < cols; ++v)
    colIdx.push_back(b.idx(v * w));
  for (int64_t r0 = 0; r0 < rowBlock; r0 += rowsPerPass)
    accumulateBlock(k0, kRows, b.idx(r0), std::min(rowsPerPass, rowBlock - r0), colIdx,
                    r0 == 0 ? [&](Value j) { prefetchNextKeyRow(k0, j); }
                            : function_ref<void(Value)>());
}

/// accumulateValues for a tile that reads int8 V in place
/// (SdpaProblem::quantized): passes over slices of columns, each with every
/// row of the tile, so that each int8 value is converted to f32 once
/// (passes over rows, as accumulateValuesByRows makes, would convert every
/// V row once per pass). A slice of 4 vectors of int8 is one 64-byte line
/// at 16 lanes, so each pass still reads whole lines.
void FlashKernel::accumulateValuesByColumns(Value k0, Value kRows) {
  int64_t w = opts.vectorWidth;
  int64_t cols = std::max<int64_t>(1, accumulatorBudget(w) / rowBlock);
  while (cols > 1 && dvPadded % (cols * w) != 0)
    cols /= 2;
  for (int64_t c0 = 0; c0 < dvPadded; c0 += cols * w) {
    SmallVector<Value> colIdx;
    for (int64_t v = 0; v < cols; ++v)
      colIdx.push_back(b.idx(c0 + v * w));
    accumulateBlock(k0, kRows, b.idx(0), rowBlock, colIdx,
                    c0 == 0 ? [&](Value j) { prefetchNextKeyRow(k0, j); }
                            : function_ref<void(Value)>());
  }
}

/// accumulateValues for a tile that reads V in place when a row's Dv
/// does not fit the accumulator budget (AVX2's 8 lanes at Dv 128: 16
/// vectors a row, 8 accumulators): acc stays in the stack scratch (L1)
/// and each key's V row is read once, whole, in key order, into acc of
/// every row: acc = α·acc first, then per key and per vector of V, one
/// load, fma and store of acc per row. Register blocks over column
/// slices instead read each V row in 64-byte pieces, one slice pass
/// after another: most of the 8-lane decode time went to loads that
/// missed (bench/NOTES.md, 2026-12-02: Softmax row groups and in-cache
/// P·V).
void FlashKernel::accumulateValuesInCache(Value k0, Value kRows) {
  int64_t w = opts.vectorWidth;
  for (int64_t r = 0; r < rowBlock; ++r) {
    Value alpha = b.bcast(b.load(alphaRow, {b.idx(r)}));
    b.loop(b.idx(0), b.idx(dvPadded), w, [&](Value c) {
      b.vstore(b.fmul(b.vload(acc, {b.idx(r), c}), alpha), acc, {b.idx(r), c});
    });
  }
  b.loop(b.idx(0), kRows, 1, [&](Value j) {
    prefetchNextKeyRow(k0, j);
    SmallVector<Value> weights;
    for (int64_t r = 0; r < rowBlock; ++r)
      weights.push_back(b.bcast(probabilityWeight(b.idx(r), k0, j)));
    SmallVector<Value, 4> row = bufs.keyRow(b, bIdx, hkv, b.add(k0, j));
    b.loop(b.idx(0), b.idx(dvPadded), w, [&](Value c) {
      Value v = b.vloadF32(bufs.v, withColumn(row, c));
      for (int64_t r = 0; r < rowBlock; ++r)
        b.vstore(b.fma(weights[r], v, b.vload(acc, {b.idx(r), c})), acc, {b.idx(r), c});
    });
  });
}

} // namespace mlir::attn::loops
