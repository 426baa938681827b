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

constexpr int64_t kRowBlock = 4; // rows per register block (16-register ISAs)
/// Fewest K/V tiles a key split runs: fewer and the merge costs more than
/// the parallelism gains.
constexpr int64_t kMinTilesPerSplit = 4;
/// Rows of x a projection works through per chunk (rounded down to whole
/// row blocks): 256 rows of 768 inputs are 768 KiB, which stay in a 2 MiB
/// L2 beside a weight panel while a thread goes through its panels, and a
/// GPT-2 prefill of up to 256 tokens is one chunk whose panels the threads
/// share (each thread reads half of W, not all of it).
constexpr int64_t kProjectRows = 256;
/// The largest weight panel (In × 2 vectors of f32) a projection packs on a
/// thread's stack: 256 KiB (In up to 2048 at 16 lanes).
constexpr int64_t kInlinePanelBytes = 256 * 1024;

/// Rows per register block of the projection microkernel: 12 rows × 2
/// vectors of accumulators with AVX-512 (24 of its 32 registers; each
/// weight vector loaded serves 12 FMAs instead of 8), 4 × 2 with AVX2's 16
/// registers. (On the 2-vCPU development VM the 12-row block with 256-row
/// chunks was 0.85-1.15× the time of 8 rows with 128-row chunks over
/// GPT-2's 768×768 and 768×2304 weights, T 128-2048: within the host's
/// noise, faster at the larger sizes; docs/cpu.md.)
int64_t projectRowBlockFor(int64_t vectorWidth) {
  return vectorWidth >= 16 ? 3 * kRowBlock : kRowBlock;
}

/// The two shuffles of vectors a, b (width w) that swap halves at lane bit
/// h: `low` takes a's lanes where bit h is clear and b's lanes (moved down
/// by h) where it is set; `high` takes a's lanes moved up by h and b's own.
/// Shuffle lane indices: b's lanes are w + j.
std::pair<SmallVector<int64_t>, SmallVector<int64_t>> halfSwapMasks(int64_t w, int64_t h) {
  SmallVector<int64_t> low, high;
  for (int64_t j = 0; j < w; ++j) {
    bool set = (j & h) != 0;
    low.push_back(set ? w + j - h : j);
    high.push_back(set ? w + j : j + h);
  }
  return {low, high};
}

/// Transposes a w × w block (w = e.width, a power of two) in registers:
/// store(x, column x) for the w vectors load(0 .. w-1), with w·log2(w)
/// two-input shuffles: for each bit h of the index, rows i and i + h (bit
/// h clear in i) swap the lanes where the row's and the lane's bit h
/// differ, which moves element (i, j) to (j, i) once every bit is done.
void transposeBlock(FlashBuilder &e, function_ref<Value(int64_t)> load,
                    function_ref<void(int64_t, Value)> store) {
  int64_t w = e.width;
  SmallVector<Value> block;
  for (int64_t x = 0; x < w; ++x)
    block.push_back(load(x));
  for (int64_t h = w / 2; h >= 1; h /= 2) {
    auto [low, high] = halfSwapMasks(w, h);
    for (int64_t i = 0; i < w; ++i) {
      if (i & h)
        continue;
      Value a = block[i], b = block[i + h];
      block[i] = vector::ShuffleOp::create(e.b, e.loc, a, b, low);
      block[i + h] = vector::ShuffleOp::create(e.b, e.loc, a, b, high);
    }
  }
  for (int64_t x = 0; x < w; ++x)
    store(x, block[x]);
}

/// One step of a lane-folding tree (foldSlots): lanes with bit h clear
/// hold combine(a[j], a[j ^ h]), lanes with bit h set combine(b[j], b[j ^
/// h]). With a and b each holding one slot per aligned run of 2h lanes,
/// the result holds one slot per run of h lanes: a's slots where bit h is
/// clear, b's where it is set.
Value combineHalves(FlashBuilder &e, Value a, Value b, int64_t h,
                    function_ref<Value(Value, Value)> combine) {
  auto [low, high] = halfSwapMasks(e.width, h);
  Value lowHalves = vector::ShuffleOp::create(e.b, e.loc, a, b, low);
  Value highHalves = vector::ShuffleOp::create(e.b, e.loc, a, b, high);
  return combine(lowHalves, highHalves);
}

/// i with its lowest `bits` bits reversed.
int64_t reverseBits(int64_t i, int64_t bits) {
  int64_t r = 0;
  for (int64_t k = 0; k < bits; ++k)
    r |= ((i >> k) & 1) << (bits - 1 - k);
  return r;
}

/// Folds, for each of `rows` rows, w = e.width slot vectors slotOf(slot,
/// row) into one vector whose lane i is the combination of slot i's lanes,
/// and hands it to done(row, vector): a tree of combineHalves, log2(w)
/// levels and w - 1 steps of two shuffles and a combine each (a binary
/// counter pairs equal levels as soon as both exist; the rows' trees are
/// emitted slot by slot, interleaved), instead of w horizontal reductions
/// of log2(w) dependent steps and a scalar at the end. The tree leaves
/// slot i in lane reverseBits(i); one last shuffle per row puts the slots
/// in order.
void foldSlotsOfRows(FlashBuilder &e, int64_t rows,
                     function_ref<Value(int64_t, int64_t)> slotOf,
                     function_ref<Value(Value, Value)> combine,
                     function_ref<void(int64_t, Value)> done) {
  int64_t w = e.width, bits = llvm::Log2_64(w);
  // Per row, the folded vectors not yet paired: (vector, levels done).
  SmallVector<SmallVector<std::pair<Value, int64_t>>> pending(rows);
  for (int64_t slot = 0; slot < w; ++slot) {
    for (int64_t r = 0; r < rows; ++r) {
      auto &stack = pending[r];
      stack.push_back({slotOf(slot, r), 0});
      while (stack.size() >= 2 && stack[stack.size() - 2].second == stack.back().second) {
        auto [b, l] = stack.pop_back_val();
        Value a = stack.pop_back_val().first;
        stack.push_back({combineHalves(e, a, b, w >> (l + 1), combine), l + 1});
      }
    }
  }
  SmallVector<int64_t> order; // lane l of the tree's result: slot reverseBits(l)
  for (int64_t l = 0; l < w; ++l)
    order.push_back(reverseBits(l, bits));
  for (int64_t r = 0; r < rows; ++r) {
    assert(pending[r].size() == 1 && pending[r][0].second == bits && "tree not complete");
    Value folded = pending[r][0].first;
    done(r, vector::ShuffleOp::create(e.b, e.loc, folded, folded, order));
  }
}

/// foldSlotsOfRows for one row: `slots` (w vectors) folded into one.
Value foldSlots(FlashBuilder &e, ArrayRef<Value> slots,
                function_ref<Value(Value, Value)> combine) {
  assert(static_cast<int64_t>(slots.size()) == e.width && "one slot per lane");
  Value result;
  foldSlotsOfRows(
      e, 1, [&](int64_t slot, int64_t) { return slots[slot]; }, combine,
      [&](int64_t, Value v) { result = v; });
  return result;
}

/// Vector accumulators the microkernels keep in registers: half the
/// register file (32 with AVX-512, 16 with AVX2), the rest for loads and
/// broadcasts.
int64_t accumulatorBudget(int64_t vectorWidth) { return vectorWidth >= 16 ? 16 : 8; }

/// The register-blocked loop every microkernel here is: for k in [0, n),
/// load `cols` vectors b_v = loadB(k, v), then for each of `rows` rows
/// acc[r·cols + v] += broadcast(loadA(r, k)) · b_v. Returns the `rows·cols`
/// accumulators, started from `init`. `perStep`, when given, is emitted at
/// the start of each step k (the decode's prefetches).
SmallVector<Value> broadcastFmaBlock(FlashBuilder &e, int64_t rows, int64_t cols, Value n,
                                     ValueRange init,
                                     function_ref<Value(Value, int64_t)> loadB,
                                     function_ref<Value(int64_t, Value)> loadA,
                                     function_ref<void(Value)> perStep = nullptr) {
  return e.loopCarry(e.idx(0), n, 1, init, [&](Value k, ValueRange a) {
    if (perStep)
      perStep(k);
    SmallVector<Value> b;
    for (int64_t v = 0; v < cols; ++v)
      b.push_back(loadB(k, v));
    SmallVector<Value> next;
    for (int64_t r = 0; r < rows; ++r) {
      Value x = e.bcast(loadA(r, k));
      for (int64_t v = 0; v < cols; ++v)
        next.push_back(e.fma(x, b[v], a[r * cols + v]));
    }
    return next;
  });
}

/// Rows per register block of the microkernels: 8 rows × 2 vectors of
/// accumulators fit 32 vector registers (16 lanes: AVX-512), 4 × 2 fit 16
/// (8 lanes: AVX2).
int64_t rowBlockFor(int64_t vectorWidth) {
  return vectorWidth >= 16 ? 2 * kRowBlock : kRowBlock;
}

/// scf.parallel over [0, upper) (step 1), body(ivs) emitted inside it;
/// with `stackScope`, inside a memref.alloca_scope, so that each
/// iteration's stack scratch is its own.
void parallelLoop(FlashBuilder &e, ValueRange upper, bool stackScope,
                  function_ref<void(ValueRange)> body) {
  SmallVector<Value> zeros(upper.size(), e.idx(0)), ones(upper.size(), e.idx(1));
  scf::ParallelOp::create(
      e.b, e.loc, zeros, upper, ones, [&](OpBuilder &nb, Location, ValueRange ivs) {
        OpBuilder::InsertionGuard g(e.b);
        e.b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        if (!stackScope)
          return body(ivs);
        auto scope = memref::AllocaScopeOp::create(e.b, e.loc, TypeRange{});
        e.b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
        body(ivs);
        memref::AllocaScopeReturnOp::create(e.b, e.loc, ValueRange{});
      });
}

/// Dv rounded up to whole vectors: the width of the accumulators and of the
/// split states.
int64_t paddedDv(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t) {
  return llvm::alignTo(p.dv, t.vectorWidth);
}

/// The rows of one Q tile and the (query head, query row) each stands for.
/// Per-head tiles hold rows r0 .. r0 + count of one head h (row r is query
/// r). Grouped tiles (a static Tq below tile-q: decode) number the G·Tq rows
/// of the G query heads that read K/V head `kvHead`, row r being query
/// r mod Tq of head kvHead·G + r / Tq: each K/V tile is then loaded and
/// transposed once for the whole group instead of once per query head.
struct TileRows {
  bool grouped = false;
  Value kvHead, head; ///< head: per-head tiles only
  Value r0, count;    ///< first row, valid rows (<= tile-q)
  Value total;        ///< rows in the row space: Tq, or G·Tq
};

/// The FlashAttention-2 loop nest of one Q tile: attend() runs the online
/// softmax over the visible K/V tiles (or one split of them) and returns
/// the tile's state (m, l, acc); writeOutput() normalises a state into O.
/// The key-split path stores the states and merges them (mergeSplits).
class FlashKernel {
public:
  FlashKernel(FlashBuilder &e, const SdpaProblem &p, const SdpaBuffers &s,
              const ConvertAttnToLoopsOptions &t, bool directKeys = false,
              Value packedKeys = {})
      : e(e), p(p), s(s), t(t),
        dvPadded(paddedDv(p, t)), directKeys(directKeys),
        valuesInPlace(directKeys || takesValuesInPlace(p, t)), packedKeys(packedKeys),
        rowBlock(directKeys ? t.tileQ
                 : t.tileQ % rowBlockFor(t.vectorWidth) == 0 ? rowBlockFor(t.vectorWidth)
                                                             : kRowBlock) {}

  /// Whether a tile of `rows` rows (static) reads K and V in place instead
  /// of packing them (see computeScoresDirect): few rows (decode), whole
  /// vectors of D and Dv.
  static bool takesDirectKeys(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t,
                              int64_t rows) {
    int64_t w = t.vectorWidth;
    return rows >= 1 && rows <= rowBlockFor(w) && rows <= t.tileQ &&
           llvm::isPowerOf2_64(w) && p.d % w == 0 && p.dv % w == 0 && t.tileK % w == 0;
  }

  /// Whether a tile that packs K (prefill) reads V in place instead of
  /// copying each tile's rows into Vt: f32 V whose rows are whole vectors.
  /// P·V then reads the tile's V rows where they are (a copy of 16 KiB per
  /// Q tile and K/V tile at tile-k 64, Dv 64), for the tile's keys only.
  static bool takesValuesInPlace(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t) {
    return p.valueType.getElementType().isF32() && p.dv % t.vectorWidth == 0;
  }

  /// Whether the keys are transposed once per call (prepackKeyTile, into a
  /// [B, Hkv, K/V tiles, D, tile-k] f32 buffer) instead of once per Q tile
  /// and K/V tile: packed tiles, several Q tiles per K/V head (a static Tq
  /// above tile-q), static B and Tk, and that buffer within the
  /// prepack-limit-mib option (32 MiB by default: B 1, H 12, D 64 up to Tk
  /// 8192; larger problems pack per tile, in flat memory).
  static bool takesPrepackedKeys(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t,
                                 bool directKeys) {
    int64_t tq = p.queryType.getDimSize(2), tk = p.keyType.getDimSize(2);
    int64_t batch = p.queryType.getDimSize(0);
    if (directKeys || ShapedType::isDynamic(tq) || ShapedType::isDynamic(tk) ||
        ShapedType::isDynamic(batch) || tq <= t.tileQ)
      return false;
    int64_t bytes = batch * p.kvHeads * llvm::divideCeil(tk, t.tileK) * t.tileK * p.d * 4;
    return bytes <= (t.prepackLimitMiB << 20);
  }

  /// The prepacked keys' buffer type: [B, Hkv, K/V tiles, D, tile-k].
  static MemRefType prepackedKeysType(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t) {
    int64_t tiles = llvm::divideCeil(p.keyType.getDimSize(2), t.tileK);
    return MemRefType::get({p.queryType.getDimSize(0), p.kvHeads, tiles, p.d, t.tileK},
                           Float32Type::get(p.keyType.getContext()));
  }

  /// Transposes K/V tile `kTile` of K/V head `kvHead` of batch row `bIdx`
  /// into its slice of the prepacked keys (packKeys over all Tk keys: the
  /// key length and the other keep rules still apply where the tile is
  /// read).
  void prepackKeyTile(Value bIdx, Value kvHead, Value kTile) {
    this->bIdx = bIdx;
    hkv = kvHead;
    Value k0 = e.mul(kTile, e.idx(t.tileK));
    Value kRows = e.minI(e.idx(t.tileK), e.sub(s.tk, k0));
    packKeys(k0, kRows, packedKeyTile(kTile));
  }

  /// The tile's rows against the keys they see, or against split `split`
  /// of `splits` (contiguous runs of the visible K/V tiles).
  TileState attend(Value bIdx, const TileRows &rows, Value split = {}, Value splits = {}) {
    this->bIdx = bIdx;
    this->rows = rows;
    hkv = rows.kvHead;
    keys.emplace(e, p, s, bIdx);
    // One head per tile: its ALiBi slope is read once; grouped tiles read
    // each row's.
    tileAlibi.reset();
    if (p.hasAlibi() && !rows.grouped)
      tileAlibi.emplace(e, p, s, *keys, bIdx, rows.head);

    allocateScratch();
    packQueryTile();
    initRunningState();
    // Only the K/V tiles holding a key some row of this Q tile sees.
    QueryRange q = queryRange();
    KeyVisibility::Range tiles =
        keys->tileRange([&] { return q.begin; }, [&] { return q.end; }, t.tileK);
    if (split) {
      Value chunk = e.ceilDiv(e.sub(tiles.end, tiles.begin), splits);
      Value first = e.minI(e.add(tiles.begin, e.mul(split, chunk)), tiles.end);
      tiles = {first, e.minI(e.add(first, chunk), tiles.end)};
    }
    e.loop(tiles.begin, tiles.end, 1, [&](Value kTile) {
      Value k0 = e.mul(kTile, e.idx(t.tileK));
      // Keys past L (the key length, else Tk) are neither read nor kept.
      Value kRows = e.minI(e.idx(t.tileK), e.sub(keys->keyCount(), k0));
      if (directKeys) {
        computeScoresDirect(k0, kRows);
      } else {
        packKeyValueTile(kTile, k0, kRows);
        computeScores(k0);
      }
      maskTile(q, k0, kRows);
      onlineSoftmax();
      accumulateValues(k0, kRows);
    });
    return TileState{mRow, lRow, acc};
  }

  /// O[b, h, q, c] = acc[i][c] / l_i for each valid row i (h, q its head
  /// and query), and 0 for a row that saw no key.
  void writeOutput(Value bIdx, const TileRows &rows, const TileState &state);

  /// The scratch a split's state is kept in between the two parallel loops:
  /// m and l [slots·tile-q], acc [slots·tile-q, Dv padded].
  struct SplitStates {
    Value m, l, acc;
  };
  /// Copies the valid rows of `state` into slot `slot` of `states`.
  void storeSplit(const TileState &state, const SplitStates &states, Value slot);
  /// Merges the `splits` states in slots firstSlot .. + splits (the online
  /// softmax merge rule of TileState) and writes the output rows.
  void mergeSplits(Value bIdx, const TileRows &rows, const SplitStates &states,
                   Value firstSlot, Value splits);

private:
  FlashBuilder &e;
  const SdpaProblem &p;
  const SdpaBuffers &s;
  const ConvertAttnToLoopsOptions &t;
  std::optional<KeyVisibility> keys; // per batch row
  std::optional<AlibiBias> tileAlibi; // per-head tiles: the tile's head
  int64_t dvPadded;
  bool directKeys; ///< K and V read in place (computeScoresDirect)
  bool valuesInPlace; ///< V read in place (directKeys, or takesValuesInPlace)
  Value packedKeys;   ///< the prepacked keys, if takesPrepackedKeys
  int64_t rowBlock;
  TileRows rows;
  Value bIdx, hkv;
  Value qs, kt, vt, sp, keySums, acc, mRow, lRow, alphaRow;

  /// Row i of the tile, clamped to the last row of the row space (padding
  /// rows repeat it: their rules and mask are a real row's).
  Value rowAt(Value i) {
    return e.minI(e.add(rows.r0, i), e.sub(rows.total, e.idx(1)));
  }
  Value headOf(Value r) {
    if (!rows.grouped)
      return rows.head;
    return e.add(e.mul(rows.kvHead, e.idx(p.group)), e.div(r, s.tq));
  }
  Value queryOf(Value r) { return rows.grouped ? e.rem(r, s.tq) : r; }

  /// The query positions the tile's rows cover, [begin, end): a grouped
  /// tile that crosses from one head into the next covers [0, Tq).
  struct QueryRange {
    Value begin, end;
  };
  QueryRange queryRange() {
    Value last = e.sub(e.add(rows.r0, rows.count), e.idx(1));
    if (!rows.grouped)
      return {rows.r0, e.add(last, e.idx(1))};
    Value crosses = e.cmpI(arith::CmpIPredicate::ne, e.div(rows.r0, s.tq), e.div(last, s.tq));
    return {e.select(crosses, e.idx(0), e.rem(rows.r0, s.tq)),
            e.select(crosses, s.tq, e.add(e.rem(last, s.tq), e.idx(1)))};
  }

  /// Stack scratch on a cache-line boundary (a vector load straddling two
  /// lines costs two).
  Value scratch(ArrayRef<int64_t> shape) {
    return memref::AllocaOp::create(e.b, e.loc, MemRefType::get(shape, e.f32()),
                                    ValueRange{}, e.b.getI64IntegerAttr(64));
  }

  void allocateScratch() {
    qs = scratch({t.tileQ, p.d});
    if (!directKeys && !packedKeys)
      kt = scratch({p.d, t.tileK});
    if (!valuesInPlace)
      vt = scratch({t.tileK, dvPadded});
    sp = scratch({t.tileQ, t.tileK});
    if (directKeys) // a run's per-key vectors: [slot][row · w + lane]
      keySums = scratch({t.vectorWidth, t.tileQ * t.vectorWidth});
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

  /// Qs[i][d] = Q[b, h_i, q_i, d] · scale · log2(e), zero past the valid
  /// rows.
  void packQueryTile() {
    e.loop(e.idx(0), rows.count, 1, [&](Value i) {
      Value r = e.add(rows.r0, i);
      copyRow(s.q, headOf(r), queryOf(r), p.d, qs, i, p.scaleLog2);
    });
    zeroRows(qs, rows.count, t.tileQ, p.d);
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

  /// The [D, tile-k] slice of the prepacked keys for this batch row, K/V
  /// head and tile `kTile`.
  Value packedKeyTile(Value kTile) {
    auto srcType = cast<MemRefType>(packedKeys.getType());
    OpFoldResult zero = e.b.getIndexAttr(0), one = e.b.getIndexAttr(1);
    SmallVector<OpFoldResult> offsets{bIdx, hkv, kTile, zero, zero};
    SmallVector<OpFoldResult> sizes{one, one, one, e.b.getIndexAttr(p.d),
                                    e.b.getIndexAttr(t.tileK)};
    SmallVector<OpFoldResult> strides(5, one);
    MemRefType type = memref::SubViewOp::inferRankReducedResultType({p.d, t.tileK}, srcType,
                                                                    offsets, sizes, strides);
    return memref::SubViewOp::create(e.b, e.loc, type, packedKeys, offsets, sizes, strides);
  }

  /// The tile's Kt (packKeys into the stack scratch, or the tile's slice
  /// of the prepacked keys) and Vt (unless V is read in place).
  void packKeyValueTile(Value kTile, Value k0, Value kRows) {
    if (packedKeys)
      kt = packedKeyTile(kTile);
    else
      packKeys(k0, kRows, kt);
    if (!valuesInPlace)
      packValues(k0, kRows);
  }

  /// dst[d][j] = K[b, h/G, k0 + j, d] (dst: a [D, tile-k] f32 memref). K
  /// is transposed a w × w block at a time in registers when D and tile-k
  /// allow (rows past the tile's keys repeat its last key: the keep rules
  /// hide those columns), element by element otherwise (zero past the
  /// keys).
  void packKeys(Value k0, Value kRows, Value dst) {
    int64_t w = t.vectorWidth;
    if (p.d % w == 0 && t.tileK % w == 0 && llvm::isPowerOf2_64(w)) {
      Value lastKey = e.add(k0, e.sub(kRows, e.idx(1)));
      e.loop(e.idx(0), e.idx(t.tileK), w, [&](Value j) {
        SmallVector<Value> keyRows;
        for (int64_t x = 0; x < w; ++x)
          keyRows.push_back(e.minI(e.add(k0, e.add(j, e.idx(x))), lastKey));
        e.loop(e.idx(0), e.idx(p.d), w, [&](Value d) {
          transposeBlock(
              e, [&](int64_t x) { return e.vloadF32(s.k, {bIdx, hkv, keyRows[x], d}); },
              [&](int64_t x, Value v) { e.vstore(v, dst, {e.add(d, e.idx(x)), j}); });
        });
      });
      return;
    }
    e.loop(e.idx(0), kRows, 1, [&](Value j) {
      Value row = e.add(k0, j);
      e.loop(e.idx(0), e.idx(p.d), 1, [&](Value d) {
        e.store(e.loadF32(s.k, {bIdx, hkv, row, d}), dst, {d, j});
      });
    });
    e.loop(kRows, e.idx(t.tileK), 1, [&](Value j) {
      e.loop(e.idx(0), e.idx(p.d), 1, [&](Value d) { e.store(e.f(0.0), dst, {d, j}); });
    });
  }

  /// Vt[j][c] = V[b, h/G, k0 + j, c], zero past the tile's keys (and past
  /// Dv).
  void packValues(Value k0, Value kRows) {
    e.loop(e.idx(0), kRows, 1,
           [&](Value j) { copyRow(s.v, hkv, e.add(k0, j), p.dv, vt, j); });
    zeroRows(vt, kRows, t.tileK, dvPadded);
    if (dvPadded != p.dv) {
      // The padding columns of Vt stay zero.
      e.loop(e.idx(0), kRows, 1, [&](Value j) {
        e.loop(e.idx(p.dv), e.idx(dvPadded), 1,
               [&](Value c) { e.store(e.f(0.0), vt, {j, c}); });
      });
    }
  }

  /// S[i][j] = Σ_d Qs[i][d] · Kt[d][j]: rowBlock rows × 2 vectors of keys
  /// held in registers, one broadcast FMA per (row, vector) and d; then,
  /// still in registers, the softcap and the ALiBi bias.
  void computeScores(Value k0) {
    int64_t w = t.vectorWidth;
    e.loop(e.idx(0), e.idx(t.tileQ), rowBlock, [&](Value i) {
      e.loop(e.idx(0), e.idx(t.tileK), 2 * w, [&](Value j) {
        Value j1 = e.add(j, e.idx(w));
        SmallVector<Value> init(2 * rowBlock, e.splat(0.0));
        Value cols[2] = {j, j1};
        SmallVector<Value> sums = broadcastFmaBlock(
            e, rowBlock, 2, e.idx(p.d), init,
            [&](Value d, int64_t v) { return e.vload(kt, {d, cols[v]}); },
            [&](int64_t r, Value d) { return e.load(qs, {e.add(i, e.idx(r)), d}); });
        for (int64_t r = 0; r < rowBlock; ++r)
          storeScores(k0, e.add(i, e.idx(r)), cols, {sums[2 * r], sums[2 * r + 1]});
      });
    });
  }

  /// S[row][cols[v]..+w) = softcap(x_v) + ALiBi: the raw scores `x` of tile
  /// row `row` for the keys k0 + cols[v] .., finished in registers.
  void storeScores(Value k0, Value row, ArrayRef<Value> cols, ArrayRef<Value> x) {
    std::optional<AlibiBias> rowAlibi;
    AlibiBias *alibi = tileAlibi ? &*tileAlibi : nullptr;
    Value rowQ;
    if (p.hasAlibi()) {
      Value tileRow = rowAt(row);
      rowQ = queryOf(tileRow);
      if (!alibi)
        alibi = &rowAlibi.emplace(e, p, s, *keys, bIdx, headOf(tileRow));
    }
    for (auto [col, raw] : llvm::zip_equal(cols, x)) {
      Value v = softcapScores(e, p, raw);
      if (alibi)
        v = e.fadd(v, alibi->atLanes(rowQ, e.add(k0, col)));
      e.vstore(v, sp, {row, col});
    }
  }

  /// The scores of a tile of few rows (R = tile-q <= the row block: decode)
  /// with K read in place: no transposed copy of K, whose w·log2(w)
  /// shuffles per w keys and D would cost more than the R·D FMAs a key
  /// needs. For each run of w keys, a loop over the keys in order reads
  /// each key's row once, front to back, into R vectors over D (one per
  /// row), kept in `keySums`; then each row's w vectors are folded into
  /// one vector of w scores in key order by foldSlotsOfRows (about 2 shuffles
  /// per key and row). Keys past the tile's (the partial last tile) repeat
  /// its last key; the keep rules hide them.
  ///
  /// The read order is a decode's speed: K (and V, accumulateValuesByRows)
  /// stream from memory, and only a front-to-back read of one key row after
  /// another keeps the hardware prefetchers ahead on every core. Keys read
  /// in step line by line, out of order, or a burst of software prefetches
  /// ahead in the same array (which LLVM gathered into one burst per run)
  /// cost 1.35-1.56x the time each on AMD Zen 4, 1.9x together (a C++
  /// model of this loop, docs/cpu.md). The key loop stays a loop so that
  /// LLVM cannot interleave the keys' loads beyond one step. What does pay
  /// is one prefetch of the other array's row per key, into L2
  /// (prefetchRow): here the same key's V row; and one of K's own row 8 KiB
  /// ahead (keyAhead, non-temporal).
  ///
  /// One step of the key loop takes keysPerStep() adjacent keys (their rows
  /// are one contiguous block): each vector of a query row, loaded once,
  /// meets the K vectors of every key of the step. The query rows do not
  /// fit the registers (4 rows at D 128 are 32 vectors), so one key a step
  /// loads each of them again for every key: with 4 keys a step a key
  /// costs 2 loads per vector of D instead of 5 (0.82-0.90x the decode
  /// time on AMD Zen 5 at 16 lanes, docs/cpu.md).
  void computeScoresDirect(Value k0, Value kRows) {
    int64_t w = t.vectorWidth, rowsN = t.tileQ, n = keysPerStep();
    Value lastKey = e.add(k0, e.sub(kRows, e.idx(1)));
    e.loop(e.idx(0), e.idx(t.tileK), w, [&](Value j) {
      e.loop(e.idx(0), e.idx(w), n, [&](Value step) {
        SmallVector<Value> slots{step}, stepKeys;
        for (int64_t i = 1; i < n; ++i)
          slots.push_back(e.add(step, e.idx(i)));
        for (Value slot : slots) {
          Value inTile = e.add(j, slot);
          Value key = e.add(k0, inTile);
          stepKeys.push_back(e.minI(key, lastKey));
        }
        for (Value key : stepKeys) {
          prefetchRow(s.v, key, p.dv);
          prefetchRow(s.k, keyAhead(key), p.d, kNonTemporal);
        }
        SmallVector<Value> init(n * rowsN, e.splat(0.0));
        SmallVector<Value> sums = e.loopCarry(
            e.idx(0), e.idx(p.d), w, init, [&](Value d, ValueRange a) {
              SmallVector<Value> kv;
              for (Value key : stepKeys)
                kv.push_back(e.vloadF32(s.k, {bIdx, hkv, key, d}));
              // next[i·rowsN + r]: key i of the step, row r.
              SmallVector<Value> next(n * rowsN);
              for (int64_t r = 0; r < rowsN; ++r) {
                Value q = e.vload(qs, {e.idx(r), d});
                for (int64_t i = 0; i < n; ++i)
                  next[i * rowsN + r] = e.fma(q, kv[i], a[i * rowsN + r]);
              }
              return next;
            });
        for (int64_t i = 0; i < n; ++i)
          for (int64_t r = 0; r < rowsN; ++r)
            e.vstore(sums[i * rowsN + r], keySums, {slots[i], e.idx(r * w)});
      });
      foldSlotsOfRows(
          e, rowsN,
          [&](int64_t slot, int64_t r) {
            return e.vload(keySums, {e.idx(slot), e.idx(r * w)});
          },
          [&](Value x, Value y) { return e.fadd(x, y); },
          [&](int64_t r, Value scores) { storeScores(k0, e.idx(r), {j}, {scores}); });
    });
  }

  /// Keys a step of computeScoresDirect takes: at 16 lanes, the most of 4,
  /// 2, 1 whose score accumulators (keys × tile rows) fit accumulatorBudget
  /// (4 rows, a GQA group of 4 at Tq 1: 4 keys; 8 rows: 2; 12: 1). At 8
  /// lanes one: 2 keys of 4 rows took 1.00-1.12x the decode time (AMD Zen
  /// 5, docs/cpu.md).
  int64_t keysPerStep() const {
    if (t.vectorWidth < 16)
      return 1;
    for (int64_t n : {4, 2})
      if (n * t.tileQ <= accumulatorBudget(t.vectorWidth))
        return n;
    return 1;
  }

  /// Asks the cache for row `key` of K or V ([b, hkv, key, 0 .. width)),
  /// one prefetch per 64-byte line, by default into L2 (kIntoL2: x86's
  /// prefetcht1). A
  /// decode streams two arrays in alternation, a tile of K rows, then the
  /// same tile's V rows; the hardware prefetchers follow the stream being
  /// read and fall behind on the other, which every tile then starts
  /// cold. So each loop over one array's rows asks for the other's: the
  /// score loop for the V row of the same key, P·V for the K row of the
  /// next tile's (prefetchNextKeyRow). Into L2, not L1: a tile's rows (32
  /// KiB of K or V at tile-k 64, D 128) would fill L1. `locality` is
  /// memref.prefetch's hint: kNonTemporal for the K rows of keyAhead.
  void prefetchRow(Value buf, Value key, int64_t width, uint32_t locality = kIntoL2) {
    int64_t lineElems = 512 / cast<MemRefType>(buf.getType()).getElementTypeBitWidth();
    for (int64_t c = 0; c < width; c += lineElems)
      memref::PrefetchOp::create(e.b, e.loc, buf, ValueRange{bIdx, hkv, key, e.idx(c)},
                                 /*isWrite=*/false, locality,
                                 /*isDataCache=*/true);
  }

  /// memref.prefetch locality hints as x86 lowers them: 2 is prefetcht1
  /// (into L2), 0 prefetchnta (close to the core, for data read once).
  static constexpr uint32_t kIntoL2 = 2, kNonTemporal = 0;

  /// How far ahead of the key it reads the score loop also asks for K's
  /// rows: 8 KiB (16 keys at D 128 in f32). The hardware prefetchers do
  /// follow K there, but not far enough ahead: 0.83-0.97x the decode time
  /// on AMD Zen 4 (docs/cpu.md). Non-temporal (prefetchnta): each K row is
  /// read once, a few steps later; against prefetcht1, 0.88-0.98x the
  /// decode time on AMD Zen 5 (prefetcht0 0.91-0.97x; docs/cpu.md).
  static constexpr int64_t kKeyAheadBytes = 8 * 1024;

  /// `key`, clamped to the batch row's last key (keyCount - 1: a tile
  /// exists only where the row has a key, so the result is never negative).
  /// The prefetches ask for rows past the tile; the clamp keeps them inside
  /// the batch row. (One statement per op here and in the callers: the
  /// order of function arguments is the compiler's, and the lit tests pin
  /// the order of the ops.)
  Value clampToLastKey(Value key) {
    Value last = e.sub(keys->keyCount(), e.idx(1));
    return e.minI(key, last);
  }

  /// K's row kKeyAheadBytes past `key`, clamped to the batch row's last key.
  Value keyAhead(Value key) {
    int64_t rowBytes = p.d * cast<MemRefType>(s.k.getType()).getElementTypeBitWidth() / 8;
    int64_t ahead = std::max<int64_t>(1, kKeyAheadBytes / rowBytes);
    Value next = e.add(key, e.idx(ahead));
    return clampToLastKey(next);
  }

  /// prefetchRow of K's row k0 + tile-k + j (the next tile's key j),
  /// clamped to the batch row's last key.
  void prefetchNextKeyRow(Value k0, Value j) {
    Value inNextTile = e.add(j, e.idx(t.tileK));
    Value next = e.add(k0, inNextTile);
    prefetchRow(s.k, clampToLastKey(next), p.d);
  }

  /// The operand mask (an additive mask added in log2 units, -inf where an
  /// i1 mask is false), then the keep rules: -inf outside the row's key
  /// interval [firstKey, keyEnd) (key length, causal, window). Only a tile
  /// that some row does not see whole pays for the keep rules, in vectors
  /// (lane key index against the row's interval).
  void maskTile(const QueryRange &q, Value k0, Value kRows) {
    // The operand mask first (so a -inf of the keep rules is never added
    // to), then the keep rules.
    if (s.mask)
      applyMaskOperand(k0, kRows);
    int64_t w = t.vectorWidth;
    Value need = e.notI(keys->allVisible(q.begin, [&] { return q.end; }, k0, t.tileK));
    e.ifThen(need, [&] {
      Value iota = e.laneIndices();
      Value ninf = e.splat(-INFINITY);
      e.loop(e.idx(0), e.idx(t.tileQ), 1, [&](Value i) {
        // The row's visible keys relative to k0: [lo, hi].
        Value row = queryOf(rowAt(i));
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
      Value r = rowAt(i);
      Value h = headOf(r), qi = queryOf(r);
      e.loop(e.idx(0), kRows, 1, [&](Value j) {
        Value kj = e.add(k0, j);
        Value x = e.load(sp, {i, j});
        Value m = p.maskKind == MaskKind::Keep
                      ? e.load(s.mask, maskIndices(e, p.maskType, bIdx, h, qi, kj))
                      : e.loadF32(s.mask, maskIndices(e, p.maskType, bIdx, h, qi, kj));
        if (p.maskKind == MaskKind::Keep)
          x = e.select(m, x, e.negInf());
        else
          x = e.fadd(x, e.fmul(m, e.f(kLog2E)));
        e.store(x, sp, {i, j});
      });
    });
  }

  /// Per row: m' = max(m, max_j S), P = exp2(S - m'), α = exp2(m - m'),
  /// l = α·l + Σ_j P, m = m'. A row with nothing visible yet keeps P = 0.
  /// Rows go w at a time (softmaxRowGroup) while w of them are left, the
  /// rest (tile-q not a multiple of w, a decode's few rows) one by one.
  void onlineSoftmax() {
    int64_t w = t.vectorWidth;
    int64_t grouped = t.tileQ / w * w;
    if (grouped > 0)
      e.loop(e.idx(0), e.idx(grouped), w, [&](Value i0) { softmaxRowGroup(i0); });
    if (grouped < t.tileQ)
      e.loop(e.idx(grouped), e.idx(t.tileQ), 1, [&](Value i) { softmaxRow(i); });
  }

  /// The softmax step of one row: a horizontal max and sum, and scalar
  /// state.
  void softmaxRow(Value i) {
    Value mOld = e.load(mRow, {i});
    Value mNew = e.fmax(mOld, e.maxLanes(rowMaxVector(i)));
    Value mSafe = safeMax(mNew);
    Value rowSum = e.sumLanes(exponentiateRow(i, e.bcast(mSafe)));
    Value alpha = e.exp2(e.fsub(mOld, mSafe));
    e.store(e.fadd(e.fmul(e.load(lRow, {i}), alpha), rowSum), lRow, {i});
    e.store(mNew, mRow, {i});
    e.store(alpha, alphaRow, {i});
  }

  /// The softmax step of rows i0 .. i0 + w - 1 with their state in vectors
  /// (lane r: row i0 + r): the rows' max and sum vectors folded into one
  /// vector each by foldSlots, one vector exp2 for the w α. Per row, the
  /// one-by-one step pays two horizontal reductions of log2(w) dependent
  /// steps and a scalar exp2 between its loads and its exponentials (16 %
  /// of the sdpa time at T 2048 on AMD Zen 4, docs/cpu.md).
  void softmaxRowGroup(Value i0) {
    int64_t w = t.vectorWidth;
    auto rowOf = [&](int64_t r) { return e.add(i0, e.idx(r)); };
    SmallVector<Value> maxima, sums;
    for (int64_t r = 0; r < w; ++r)
      maxima.push_back(rowMaxVector(rowOf(r)));
    Value mOld = e.vload(mRow, {i0});
    Value mNew = e.fmax(mOld, foldSlots(e, maxima, [&](Value x, Value y) {
                          return e.fmaxFast(x, y);
                        }));
    Value mSafe = safeMax(mNew);
    for (int64_t r = 0; r < w; ++r) {
      Value lane = vector::ExtractOp::create(e.b, e.loc, mSafe, ArrayRef<int64_t>{r});
      sums.push_back(exponentiateRow(rowOf(r), e.bcast(lane)));
    }
    Value rowSum = foldSlots(e, sums, [&](Value x, Value y) { return e.fadd(x, y); });
    Value alpha = e.exp2(e.fsub(mOld, mSafe));
    e.vstore(e.fadd(e.fmul(e.vload(lRow, {i0}), alpha), rowSum), lRow, {i0});
    e.vstore(mNew, mRow, {i0});
    e.vstore(alpha, alphaRow, {i0});
  }

  /// max over each lane of row i of the score tile: one vector.
  Value rowMaxVector(Value i) {
    return e.loopCarry(e.idx(0), e.idx(t.tileK), t.vectorWidth, {e.splat(-INFINITY)},
                       [&](Value j, ValueRange a) {
                         return SmallVector<Value>{e.fmaxFast(e.vload(sp, {i, j}), a[0])};
                       })[0];
  }

  /// P = exp2(S - m) over row i of the score tile (m broadcast), stored in
  /// place; returns the lanes' sums of P.
  Value exponentiateRow(Value i, Value mV) {
    return e.loopCarry(e.idx(0), e.idx(t.tileK), t.vectorWidth, {e.splat(0.0)},
                       [&](Value j, ValueRange a) {
                         Value p = e.exp2(e.fsub(e.vload(sp, {i, j}), mV));
                         e.vstore(p, sp, {i, j});
                         return SmallVector<Value>{e.fadd(a[0], p)};
                       })[0];
  }

  /// The running max to subtract: m, or 0 while a row has seen only -inf
  /// (exp2(-inf - 0) gives P = 0). Scalar or vector.
  Value safeMax(Value m) {
    Type type = m.getType();
    Value noneVisible = e.cmpF(arith::CmpFPredicate::OEQ, m, e.constantLike(type, -INFINITY));
    return e.select(noneVisible, e.constantLike(type, 0.0), m);
  }

  /// acc[i][c] = α_i · acc[i][c] + Σ_j P[i][j] · Vt[j][c]: rowBlock rows ×
  /// 1, 2 or 4 vectors of columns in registers (as many as the accumulator
  /// budget allows). With K/V read in place (directKeys), V's rows are read
  /// where they are, for the tile's keys only (P is 0 past them), whole:
  /// see accumulateValuesByRows.
  void accumulateValues(Value k0, Value kRows) {
    int64_t w = t.vectorWidth;
    if (directKeys)
      return dvPadded / w <= accumulatorBudget(w) ? accumulateValuesByRows(k0, kRows)
                                                  : accumulateValuesInCache(k0, kRows);
    int64_t cols = 1;
    for (int64_t c : {4, 2})
      if (rowBlock * c <= accumulatorBudget(w) && dvPadded % (c * w) == 0) {
        cols = c;
        break;
      }
    // V in place: the tile's keys only (P is 0 past them); Vt: all tile-k
    // rows (zero past the keys), a static trip count.
    Value keyCount = valuesInPlace ? kRows : e.idx(t.tileK);
    e.loop(e.idx(0), e.idx(t.tileQ), rowBlock, [&](Value i) {
      e.loop(e.idx(0), e.idx(dvPadded), cols * w, [&](Value c) {
        SmallVector<Value> colIdx;
        for (int64_t v = 0; v < cols; ++v)
          colIdx.push_back(e.add(c, e.idx(v * w)));
        accumulateBlock(k0, keyCount, i, rowBlock, colIdx);
      });
    });
  }

  /// accumulateValues for a tile that reads V in place, when a row's Dv
  /// fits the accumulator budget: passes over groups of as many rows as
  /// the budget holds, each reading the tile's V rows whole, key by key
  /// (4 rows at Dv 128 with AVX-512: two passes of 2 rows × 8 vectors).
  /// Passes over column slices instead read each V row in pieces with a
  /// stride, which the hardware prefetchers of AMD Zen 4 follow badly
  /// (1.35x the decode time in the C++ model, docs/cpu.md).
  void accumulateValuesByRows(Value k0, Value kRows) {
    int64_t w = t.vectorWidth;
    int64_t cols = dvPadded / w;
    int64_t rowsPerPass = std::max<int64_t>(1, accumulatorBudget(w) / cols);
    SmallVector<Value> colIdx;
    for (int64_t v = 0; v < cols; ++v)
      colIdx.push_back(e.idx(v * w));
    for (int64_t r0 = 0; r0 < rowBlock; r0 += rowsPerPass)
      accumulateBlock(k0, kRows, e.idx(r0), std::min(rowsPerPass, rowBlock - r0), colIdx,
                      r0 == 0 ? [&](Value j) { prefetchNextKeyRow(k0, j); }
                              : function_ref<void(Value)>());
  }

  /// accumulateValues for a tile that reads V in place when a row's Dv
  /// does not fit the accumulator budget (AVX2's 8 lanes at Dv 128: 16
  /// vectors a row, 8 accumulators): acc stays in the stack scratch (L1)
  /// and each key's V row is read once, whole, in key order, into acc of
  /// every row: acc = α·acc first, then per key and per vector of V, one
  /// load, fma and store of acc per row. Register blocks over column
  /// slices instead read each V row in 64-byte pieces, one slice pass
  /// after another: 69 % of the 8-lane decode time on AMD Zen 4, on loads
  /// that missed (docs/cpu.md).
  void accumulateValuesInCache(Value k0, Value kRows) {
    int64_t w = t.vectorWidth;
    for (int64_t r = 0; r < rowBlock; ++r) {
      Value alpha = e.bcast(e.load(alphaRow, {e.idx(r)}));
      e.loop(e.idx(0), e.idx(dvPadded), w, [&](Value c) {
        e.vstore(e.fmul(e.vload(acc, {e.idx(r), c}), alpha), acc, {e.idx(r), c});
      });
    }
    e.loop(e.idx(0), kRows, 1, [&](Value j) {
      prefetchNextKeyRow(k0, j);
      SmallVector<Value> weights;
      for (int64_t r = 0; r < rowBlock; ++r)
        weights.push_back(e.bcast(e.load(sp, {e.idx(r), j})));
      Value key = e.add(k0, j);
      e.loop(e.idx(0), e.idx(dvPadded), w, [&](Value c) {
        Value v = e.vloadF32(s.v, {bIdx, hkv, key, c});
        for (int64_t r = 0; r < rowBlock; ++r)
          e.vstore(e.fma(weights[r], v, e.vload(acc, {e.idx(r), c})), acc, {e.idx(r), c});
      });
    });
  }

  /// One register block of accumulateValues: rows row0 .. row0 + n - 1 ×
  /// the vectors of columns at colIdx, rescaled by α, plus P · V over
  /// `keyCount` keys (V in place, or the packed Vt), stored back to acc.
  void accumulateBlock(Value k0, Value keyCount, Value row0, int64_t n,
                       ArrayRef<Value> colIdx, function_ref<void(Value)> perStep = nullptr) {
    int64_t cols = colIdx.size();
    SmallVector<Value> init;
    for (int64_t r = 0; r < n; ++r) {
      Value row = e.add(row0, e.idx(r));
      Value alpha = e.bcast(e.load(alphaRow, {row}));
      for (int64_t v = 0; v < cols; ++v)
        init.push_back(e.fmul(e.vload(acc, {row, colIdx[v]}), alpha));
    }
    SmallVector<Value> sums = broadcastFmaBlock(
        e, n, cols, keyCount, init,
        [&](Value j, int64_t v) {
          if (valuesInPlace)
            return e.vloadF32(s.v, {bIdx, hkv, e.add(k0, j), colIdx[v]});
          return e.vload(vt, {j, colIdx[v]});
        },
        [&](int64_t r, Value j) { return e.load(sp, {e.add(row0, e.idx(r)), j}); }, perStep);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t v = 0; v < cols; ++v)
        e.vstore(sums[r * cols + v], acc, {e.add(row0, e.idx(r)), colIdx[v]});
  }
};

void FlashKernel::writeOutput(Value bIdx, const TileRows &rows, const TileState &state) {
  this->rows = rows;
  int64_t w = t.vectorWidth;
  e.loop(e.idx(0), rows.count, 1, [&](Value i) {
    Value l = e.load(state.l, {i});
    Value inv = e.inverseRowSum(l);
    Value r = e.add(rows.r0, i);
    Value h = headOf(r), row = queryOf(r);
    if (s.lse) {
      // attn.sdpa_partial: lse = ln 2 · (m + log2 l) = ln2·m + ln l, -inf
      // for a row that saw no key (m = -inf, l = 0).
      Value m = e.load(state.m, {i});
      Value lnL = math::LogOp::create(e.b, e.loc, l);
      e.store(e.fma(m, e.f(1.0 / kLog2E), lnL), s.lse, {bIdx, h, row});
    }
    if (p.dv % w == 0) {
      Value invV = e.bcast(inv);
      e.loop(e.idx(0), e.idx(p.dv), w, [&](Value c) {
        Value x = e.fmul(e.vload(state.acc, {i, c}), invV);
        e.storeFromF32(x, s.out, {bIdx, h, row, c});
      });
      return;
    }
    e.loop(e.idx(0), e.idx(p.dv), 1, [&](Value c) {
      Value x = e.fmul(e.load(state.acc, {i, c}), inv);
      e.storeFromF32(x, s.out, {bIdx, h, row, c});
    });
  });
}

void FlashKernel::storeSplit(const TileState &state, const SplitStates &states, Value slot) {
  Value base = e.mul(slot, e.idx(t.tileQ));
  e.loop(e.idx(0), rows.count, 1, [&](Value i) {
    Value at = e.add(base, i);
    e.store(e.load(state.m, {i}), states.m, {at});
    e.store(e.load(state.l, {i}), states.l, {at});
    e.loop(e.idx(0), e.idx(dvPadded), t.vectorWidth, [&](Value c) {
      e.vstore(e.vload(state.acc, {i, c}), states.acc, {at, c});
    });
  });
}

void FlashKernel::mergeSplits(Value bIdx, const TileRows &rows, const SplitStates &states,
                              Value firstSlot, Value splits) {
  this->rows = rows;
  Value l = scratch({t.tileQ});
  Value merged = scratch({t.tileQ, dvPadded});
  Value base = e.mul(firstSlot, e.idx(t.tileQ));
  Value stride = e.idx(t.tileQ);
  e.loop(e.idx(0), rows.count, 1, [&](Value i) {
    auto at = [&](Value split) { return e.add(e.add(base, e.mul(split, stride)), i); };
    // m = max_s m_s; each split weighs 2^(m_s - m) (0 for a split that
    // saw no key; m = -inf when none did: subtract 0 instead).
    SmallVector<Value> mx = e.loopCarry(
        e.idx(0), splits, 1, {e.negInf()}, [&](Value k, ValueRange a) {
          return SmallVector<Value>{e.fmax(a[0], e.load(states.m, {at(k)}))};
        });
    Value noneVisible = e.cmpF(arith::CmpFPredicate::OEQ, mx[0], e.negInf());
    Value mSafe = e.select(noneVisible, e.f(0.0), mx[0]);
    // One weight per split, applied to its l and its accumulator row.
    e.store(e.f(0.0), l, {i});
    e.loop(e.idx(0), e.idx(dvPadded), t.vectorWidth,
           [&](Value c) { e.vstore(e.splat(0.0), merged, {i, c}); });
    e.loop(e.idx(0), splits, 1, [&](Value k) {
      Value weight = e.exp2(e.fsub(e.load(states.m, {at(k)}), mSafe));
      e.store(e.fma(weight, e.load(states.l, {at(k)}), e.load(l, {i})), l, {i});
      Value weightV = e.bcast(weight);
      e.loop(e.idx(0), e.idx(dvPadded), t.vectorWidth, [&](Value c) {
        e.vstore(e.fma(weightV, e.vload(states.acc, {at(k), c}), e.vload(merged, {i, c})),
                 merged, {i, c});
      });
    });
  });
  Value m;
  if (s.lse) {
    // The merged running max, for the log-sum-exp.
    m = scratch({t.tileQ});
    e.loop(e.idx(0), rows.count, 1, [&](Value i) {
      auto at = [&](Value split) { return e.add(e.add(base, e.mul(split, stride)), i); };
      SmallVector<Value> mx = e.loopCarry(
          e.idx(0), splits, 1, {e.negInf()}, [&](Value k, ValueRange a) {
            return SmallVector<Value>{e.fmax(a[0], e.load(states.m, {at(k)}))};
          });
      e.store(mx[0], m, {i});
    });
  }
  writeOutput(bIdx, rows, TileState{m, l, merged});
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

/// sdpa(q, k, v[, mask]) → parallel FlashAttention-2 loop nest on buffers;
/// sdpa_partial the same, writing each row's log-sum-exp too.
template <typename OpTy>
struct SdpaToFlashLoops : OpRewritePattern<OpTy> {
  SdpaToFlashLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern<OpTy>(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<SdpaProblem> problem =
        SdpaProblem::analyze(op, KernelSupport{"CPU kernel", /*lowPrecision=*/true}, reason);
    if (failed(problem))
      return rewriter.notifyMatchFailure(op, reason);
    const SdpaProblem &p = *problem;
    FlashBuilder e{rewriter, op.getLoc(), tiling.vectorWidth};
    SdpaBuffers s = materializeBuffers(rewriter, p, anyLayoutBuffer);
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
    Value packedKeys;
    if (FlashKernel::takesPrepackedKeys(p, tiling, directKeys)) {
      packedKeys = memref::AllocOp::create(rewriter, e.loc,
                                           FlashKernel::prepackedKeysType(p, tiling),
                                           ValueRange{}, rewriter.getI64IntegerAttr(64));
      Value keyTiles = e.ceilDiv(s.tk, tiling.tileK);
      parallelLoop(e, {e.idx(p.kvHeads), s.batch, keyTiles}, /*stackScope=*/false,
                   [&](ValueRange ivs) {
                     FlashKernel(e, p, s, tiling, /*directKeys=*/false, packedKeys)
                         .prepackKeyTile(ivs[1], ivs[0], ivs[2]);
                   });
    }

    if (tiling.minWorkItems <= 1) {
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
    // (No work item — B = 0 or Tq = 0 — must not divide by zero.)
    Value wanted = e.ceilDiv(e.idx(tiling.minWorkItems), e.maxI(items, e.idx(1)));
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
    SmallVector<Value> upperSplit(upper);
    upperSplit.push_back(splits);
    parallelLoop(e, upperSplit, /*stackScope=*/true, [&](ValueRange ivs) {
      FlashKernel kernel(e, p, s, tiling, directKeys, packedKeys);
      TileRows rows = tileRows(ivs[0], ivs[2], ivs[3]);
      TileState state = kernel.attend(/*batch=*/ivs[1], rows, ivs[4], splits);
      e.ifThenElse(
          split,
          [&] { kernel.storeSplit(state, states, e.add(e.mul(itemIndex(ivs), splits), ivs[4])); },
          [&] { kernel.writeOutput(ivs[1], rows, state); });
    });
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
    Location loc = op.getLoc();
    FlashBuilder e{rewriter, loc, tiling.vectorWidth};
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
      Value mxSafe = e.select(none, e.f(0.0), mx);
      Value wa = e.exp2(e.fmul(e.fsub(a, mxSafe), e.f(kLog2E)));
      Value wb = e.exp2(e.fmul(e.fsub(b, mxSafe), e.f(kLog2E)));
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

/// y[r, o] = b[o] + Σ_i x[r, i] · W[o, i] (W[i, o] for in_out) as a tiled
/// loop nest. W is packed once per call into panels of 2 vectors of outputs,
/// Wp[p][i][0..2w) = W[p·2w + j][i] — w × w blocks transposed in registers
/// for out_in, rows copied for in_out — panels in parallel. Then, in
/// parallel over (panel, block of rows), each block of 8 rows (16 lanes;
/// 4 rows with 8 lanes) × 2 vectors of outputs keeps its accumulators in
/// registers over i, starting from the bias. Panels outermost: a thread
/// works through its panels one at a time, each (In·2w floats) staying in
/// cache while every block of rows streams past it.
/// Why the packed-panel projection does not take `op` at `w` lanes; empty
/// when it does.
std::string projectRefusal(ProjectOp op, int64_t w) {
  auto xT = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = xT.getRank();
  int64_t in = xT.getDimSize(rank - 1), out = op.getType().getDimSize(rank - 1);
  Type elt = xT.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16())
    return "only f32, f16 and bf16 are tiled";
  if (rank < 2)
    return "rank-1 input";
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out))
    return "the input and output widths must be static";
  if (out % (2 * w) != 0)
    return "the output width " + std::to_string(out) + " is not a multiple of 2 vectors (" +
           std::to_string(2 * w) + ")";
  return "";
}

struct ProjectToTiledLoops : OpRewritePattern<ProjectOp> {
  ProjectToTiledLoops(MLIRContext *ctx, ConvertAttnToLoopsOptions tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(ProjectOp op, PatternRewriter &rewriter) const override {
    auto xT = cast<RankedTensorType>(op.getInput().getType());
    auto resT = op.getType();
    int64_t w = tiling.vectorWidth;
    int64_t rank = xT.getRank();
    int64_t in = xT.getDimSize(rank - 1), out = resT.getDimSize(rank - 1);
    Type elt = xT.getElementType();
    if (std::string why = projectRefusal(op, w); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    FlashBuilder e{rewriter, loc, w};

    // x as [rows, In]: the leading dims collapsed. Collapsing two or more
    // dynamic leading dims crashes MLIR 22's expand-strided-metadata further
    // down the pipeline, so such inputs (and their outputs) keep their rank
    // and row r is delinearised over the leading dims instead.
    bool delinearise =
        llvm::count_if(xT.getShape().drop_back(), ShapedType::isDynamic) > 1;
    SmallVector<ReassociationIndices> toRows(2);
    for (int64_t i = 0; i + 1 < rank; ++i)
      toRows[0].push_back(i);
    toRows[1].push_back(rank - 1);
    Value x = op.getInput();
    if (rank != 2 && !delinearise)
      x = tensor::CollapseShapeOp::create(rewriter, loc, x, toRows);
    auto rowsT = cast<RankedTensorType>(x.getType());
    auto buffer = [&](Value t) -> Value {
      return bufferization::ToBufferOp::create(
          rewriter, loc, anyLayoutBuffer(cast<RankedTensorType>(t.getType())), t,
          /*read_only=*/true);
    };
    Value xb = buffer(x), wb = buffer(op.getWeight());
    Value bb = op.getBias() ? buffer(op.getBias()) : Value();
    SmallVector<Value> leading; // the leading dims' sizes (delinearise)
    for (int64_t i = 0; i < (delinearise ? rank - 1 : 1); ++i)
      leading.push_back(memref::DimOp::create(rewriter, loc, xb, i));
    Value rows = leading[0];
    for (size_t i = 1; i < leading.size(); ++i)
      rows = e.mul(rows, leading[i]);
    // The indices of row r in x and y (without the last dim).
    auto rowIndex = [&](Value r) -> SmallVector<Value> {
      if (!delinearise)
        return {r};
      SmallVector<Value> idx(rank - 1);
      for (int64_t i = rank - 2; i > 0; --i) {
        idx[i] = e.rem(r, leading[i]);
        r = e.div(r, leading[i]);
      }
      idx[0] = r;
      return idx;
    };
    auto at = [](SmallVector<Value> idx, Value last) {
      idx.push_back(last);
      return idx;
    };

    bool outIn = op.getLayout() == WeightLayout::out_in;
    int64_t panel = 2 * w, panels = out / panel;
    int64_t rowBlock = projectRowBlockFor(w);

    // Panel p of W packed into `dst` at `at(i, j)`: dst[i][j] = W[p·2w + j][i]
    // (out_in: w × w blocks transposed in registers when In allows) or
    // W[i][p·2w + j] (in_out: rows copied).
    bool blocked = outIn && in % w == 0 && llvm::isPowerOf2_64(w);
    auto packPanel = [&](Value p, Value dst,
                         function_ref<SmallVector<Value>(Value, Value)> at) {
      Value o0 = e.mul(p, e.idx(panel));
      if (!outIn) {
        e.loop(e.idx(0), e.idx(in), 1, [&](Value i) {
          for (int64_t h = 0; h < 2; ++h)
            e.vstore(e.vloadF32(wb, {i, e.add(o0, e.idx(h * w))}), dst, at(i, e.idx(h * w)));
        });
        return;
      }
      if (!blocked) {
        e.loop(e.idx(0), e.idx(in), 1, [&](Value i) {
          e.loop(e.idx(0), e.idx(panel), 1, [&](Value j) {
            e.store(e.loadF32(wb, {e.add(o0, j), i}), dst, at(i, j));
          });
        });
        return;
      }
      e.loop(e.idx(0), e.idx(in), w, [&](Value i) {
        for (int64_t h = 0; h < 2; ++h)
          transposeBlock(
              e, [&](int64_t x) { return e.vloadF32(wb, {e.add(o0, e.idx(h * w + x)), i}); },
              [&](int64_t x, Value v) { e.vstore(v, dst, at(e.add(i, e.idx(x)), e.idx(h * w))); });
      });
    };
    // Rows that are known to fit one chunk use each panel once: the thread
    // that takes it packs it on its stack just before (no packed copy of W
    // on the heap, written out and read back); otherwise W is packed once,
    // in parallel, into Wp[panels][In][2w] and every chunk reads it.
    int64_t staticRows = ShapedType::isDynamic(rowsT.getDimSize(0)) || delinearise
                             ? ShapedType::kDynamic
                             : rowsT.getDimSize(0);
    int64_t chunkBlocks = kProjectRows / rowBlock;
    bool packInline = !ShapedType::isDynamic(staticRows) && staticRows <= chunkBlocks * rowBlock &&
                      in * panel * 4 <= kInlinePanelBytes;
    Value wp;
    if (!packInline) {
      wp = memref::AllocOp::create(rewriter, loc, MemRefType::get({panels, in, panel}, e.f32()),
                                   ValueRange{}, rewriter.getI64IntegerAttr(64));
      parallelLoop(e, {e.idx(panels)}, /*stackScope=*/false, [&](ValueRange ivs) {
        packPanel(ivs[0], wp, [&](Value i, Value j) { return SmallVector<Value>{ivs[0], i, j}; });
      });
    }

    SmallVector<int64_t> outShape{rowsT.getDimSize(0), out};
    SmallVector<Value> dyn;
    if (delinearise) {
      outShape.assign(resT.getShape().begin(), resT.getShape().end());
      for (int64_t i = 0; i + 1 < rank; ++i)
        if (ShapedType::isDynamic(outShape[i]))
          dyn.push_back(leading[i]);
    } else if (ShapedType::isDynamic(outShape[0])) {
      dyn.push_back(rows);
    }
    auto outBufT = MemRefType::get(outShape, elt);
    Value y = memref::AllocOp::create(rewriter, loc, outBufT, dyn,
                                      rewriter.getI64IntegerAttr(64));
    // Rows in chunks of at most kProjectRows (the chunk of x stays in cache
    // while a thread goes through its panels).
    Value numBlocks = e.ceilDiv(rows, rowBlock);
    Value numChunks = e.ceilDiv(numBlocks, chunkBlocks);
    // The blocks spread evenly over the chunks (a last chunk of a few rows
    // would leave the thread that gets it idle).
    Value blocksPerChunk = e.ceilDiv(numBlocks, e.maxI(numChunks, e.idx(1)));
    // y[block rows, panel p] = bias + x[block rows] · panel p (`packed`,
    // element (i, j) at packedAt(i, j)).
    auto projectBlock = [&](Value p, Value block, Value packed,
                            function_ref<SmallVector<Value>(Value, Value)> packedAt) {
      Value o = e.mul(p, e.idx(panel)), o1 = e.add(o, e.idx(w));
      Value r0 = e.mul(block, e.idx(rowBlock));
      Value lastRow = e.sub(rows, e.idx(1));
      SmallVector<SmallVector<Value>> rowIdx;
      for (int64_t r = 0; r < rowBlock; ++r)
        rowIdx.push_back(rowIndex(e.minI(e.add(r0, e.idx(r)), lastRow)));
      Value init0 = bb ? e.vloadF32(bb, {o}) : e.splat(0.0);
      Value init1 = bb ? e.vloadF32(bb, {o1}) : e.splat(0.0);
      SmallVector<Value> init;
      for (int64_t r = 0; r < rowBlock; ++r) {
        init.push_back(init0);
        init.push_back(init1);
      }
      SmallVector<Value> sums = broadcastFmaBlock(
          e, rowBlock, 2, e.idx(in), init,
          [&](Value i, int64_t v) { return e.vload(packed, packedAt(i, e.idx(v * w))); },
          [&](int64_t r, Value i) { return e.loadF32(xb, at(rowIdx[r], i)); });
      for (int64_t r = 0; r < rowBlock; ++r) {
        Value row = e.add(r0, e.idx(r));
        e.ifThen(e.lt(row, rows), [&] {
          e.storeFromF32(sums[2 * r], y, at(rowIdx[r], o));
          e.storeFromF32(sums[2 * r + 1], y, at(rowIdx[r], o1));
        });
      }
    };
    // In parallel over (chunk, panel): each item takes its panel through
    // the chunk's row blocks, one after the other (the panel stays in
    // cache).
    parallelLoop(e, {numChunks, e.idx(panels)}, /*stackScope=*/packInline, [&](ValueRange ivs) {
      Value p = ivs[1];
      // The panel: its own [In, 2w] stack copy, or panel p of Wp.
      auto packedAt = [&](Value i, Value j) {
        return packInline ? SmallVector<Value>{i, j} : SmallVector<Value>{p, i, j};
      };
      Value packed = wp;
      if (packInline) {
        packed = memref::AllocaOp::create(e.b, e.loc, MemRefType::get({in, panel}, e.f32()),
                                          ValueRange{}, e.b.getI64IntegerAttr(64));
        packPanel(p, packed, packedAt);
      }
      Value first = e.mul(ivs[0], blocksPerChunk);
      e.loop(first, e.minI(e.add(first, blocksPerChunk), numBlocks), 1,
             [&](Value block) { projectBlock(p, block, packed, packedAt); });
    });
    Value result = bufferization::ToTensorOp::create(
        rewriter, loc, RankedTensorType::get(outBufT.getShape(), elt), y,
        /*restrict=*/true, /*writable=*/true);
    if (rank != 2 && !delinearise) {
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
    ConvertAttnToLoopsOptions options{tileQ,         tileK,        vectorWidth,
                                      reportUnfused, minWorkItems, prepackLimitMiB};
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

  /// A remark at every sdpa the kernel did not take (with the reason), at
  /// every projection the packed-panel kernel did not take, and at the head
  /// of every primitive chain attn-fuse could not raise to sdpa: they take
  /// the unfused reference lowering.
  void remarkUnfused() {
    constexpr const char *kCost =
        "; it takes the unfused reference lowering, which materialises the "
        "[B,H,Tq,Tk] scores (typically 15-40x slower, see bench/RESULTS.md)";
    getOperation()->walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<SdpaOp>(op)) {
        std::string reason;
        if (failed(SdpaProblem::analyze(sdpa, KernelSupport{"CPU kernel", /*lowPrecision=*/true}, reason)))
          sdpa.emitRemark() << "attn.sdpa not fused: " << reason << kCost;
      } else if (auto partial = dyn_cast<SdpaPartialOp>(op)) {
        std::string reason;
        if (failed(SdpaProblem::analyze(partial, KernelSupport{"CPU kernel", /*lowPrecision=*/true}, reason)))
          partial.emitRemark() << "attn.sdpa_partial not fused: " << reason << kCost;
      } else if (auto project = dyn_cast<ProjectOp>(op)) {
        project.emitRemark() << "attn.project not tiled: "
                             << projectRefusal(project, vectorWidth)
                             << "; it takes the reference lowering (plain loops)";
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
  if (o.minWorkItems < 0)
    return "convert-attn-to-loops: min-work-items must be >= 0, got " +
           std::to_string(o.minWorkItems);
  // (At most 2^30 MiB, so that the byte count cannot overflow.)
  if (o.prepackLimitMiB < 0 || o.prepackLimitMiB > (int64_t(1) << 30))
    return "convert-attn-to-loops: prepack-limit-mib must be in [0, 2^30], got " +
           std::to_string(o.prepackLimitMiB);
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
  patterns.add<SdpaToFlashLoops<SdpaOp>, SdpaToFlashLoops<SdpaPartialOp>, ProjectToTiledLoops,
               MergePartialToParallelLoops>(patterns.getContext(), options);
}
