//===- FlashKernel.h - one Q tile of the CPU kernel ----------- -*- C++ -*-===//
//
// One attn.sdpa (f32, f16 or bf16 operands, f32 arithmetic) becomes one
// loop nest on buffers; attn.sdpa_partial the same, writing each row's
// log-sum-exp too:
//
//   parallel (h/G, b, h%G, qTile):               -- threads (SdpaToLoops.cpp)
//     Qs   = Q[b, h, qTile] · scale · log2(e)    -- packQueryTile
//     m = -inf, l = 0, acc = 0
//     for kTile in the tiles the Q tile sees:    -- tiles beyond the causal limit,
//                                                   outside the window or past the
//                                                   key length skipped
//       Kt = K[b, h/G, kTile]ᵀ, Vt = V[...]      -- packKeyValueTile
//       S  = Qs · Kt, softcap, score_mod, + ALiBi  -- computeScores (FMA microkernel)
//       S  = mask(S)   (operand mask, mask_mod; the keep rules on edge tiles only)
//       per row: m' = max(m, rowmax S)           -- onlineSoftmax
//                P = exp2(S - m'), α = exp2(m - m')
//                l = α·l + Σ P, m = m'
//       acc = α·acc + P · Vt                     -- accumulateValues (FMA microkernel)
//     O[b, h, qTile] = acc / l  (0 where l = 0)  -- writeOutput
//
// It reads like the FlashAttention-2 algorithm: one named step per line.
// A decode tile (few grouped rows) reads K and V in place instead of
// packing them (DecodeTile.cpp); the prefill tile is in FlashKernel.cpp
// (its packing in PrefillPacking.cpp), the key-split merge in
// SdpaToLoops.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLOOPS_FLASHKERNEL_H
#define ATTN_LIB_CONVERSION_ATTNTOLOOPS_FLASHKERNEL_H

#include "Microkernels.h"

#include "attn/Conversion/Passes.h"

#include <optional>

namespace mlir::attn::loops {

using flash::AlibiBias;
using flash::KernelSupport;
using flash::KeyVisibility;
using flash::SdpaBuffers;
using flash::SdpaProblem;
using flash::TileState;

/// What the CPU kernel takes: f16/bf16 (computed in f32), score and mask
/// functions, paged K/V read in place, attention sinks, dropout, and int8
/// K/V read in place by the decode tile (the pattern resets
/// SdpaProblem::quantized for other tiles).
inline KernelSupport cpuKernelSupport() {
  return KernelSupport{"CPU kernel", /*lowPrecision=*/true, /*modFunctions=*/true,
                       /*pagedKeys=*/true, /*sinks=*/true, /*dropout=*/true,
                       /*quantizedKeys=*/true};
}

/// Dv rounded up to whole vectors: the width of the accumulators and of the
/// split states.
int64_t paddedDv(const SdpaProblem &p, const ConvertAttnToLoopsOptions &t);

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
  /// The keys transposed once per call (prepackKeyTile): the buffer, and,
  /// where the choice is made at run time (mayPrepackKeys), the i1 that
  /// says whether the buffer was filled (prepackFits); null otherwise.
  struct PrepackedKeys {
    Value buffer, filled;
  };

  FlashKernel(KernelBuilder &b, const SdpaProblem &problem, const SdpaBuffers &bufs,
              const ConvertAttnToLoopsOptions &opts, bool directKeys = false,
              PrepackedKeys prepacked = {});

  /// Whether a tile of `rows` rows (static) reads K and V in place instead
  /// of packing them (see computeScoresDirect): few rows (decode), whole
  /// vectors of D and Dv.
  static bool takesDirectKeys(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                              int64_t rows);

  /// Whether a tile that packs K (prefill) reads V in place instead of
  /// copying each tile's rows into Vt: f32 V whose rows are whole vectors.
  /// P·V then reads the tile's V rows where they are (a copy of 16 KiB per
  /// Q tile and K/V tile at tile-k 64, Dv 64), for the tile's keys only.
  static bool takesValuesInPlace(const SdpaProblem &problem,
                                 const ConvertAttnToLoopsOptions &opts);

  /// Whether a tile that packs K (prefill) takes int8/fp8 K and V
  /// (SdpaProblem::quantized) in place: each key row is converted and
  /// scaled as packKeys transposes it, and P·V reads V's rows converted,
  /// P times each key's scale (probabilityWeight); whole vectors of D and
  /// Dv and of tile-k. Otherwise such a tile takes the float K/V the
  /// attn.dequantize ops build.
  static bool takesQuantizedTiles(const SdpaProblem &problem,
                                  const ConvertAttnToLoopsOptions &opts);

  /// Whether the keys are transposed once per call (prepackKeyTile, into a
  /// [B, Hkv, K/V tiles, D, tile-k] f32 buffer) instead of once per Q tile
  /// and K/V tile: packed tiles, several Q tiles per K/V head (a static Tq
  /// above tile-q), static B and Tk, and that buffer within the
  /// prepack-limit-mib option (32 MiB by default: B 1, H 12, D 64 up to Tk
  /// 8192; larger problems pack per tile, in flat memory).
  static bool takesPrepackedKeys(const SdpaProblem &problem,
                                 const ConvertAttnToLoopsOptions &opts, bool directKeys);
  /// Whether the same choice is made at run time (prepackFits): packed
  /// tiles with B, Tq or Tk dynamic (a sequence of a ragged batch, a
  /// compiled function of any length), Tq not static at or below tile-q,
  /// and prepack-limit-mib above 0. Each Q tile then reads the prepacked
  /// slice or packs its own, by that i1 (bench/NOTES.md, 2026-12-07:
  /// Tokens-first arrays and keys prepacked at run time).
  static bool mayPrepackKeys(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                             bool directKeys);
  /// Tq > tile-q and the buffer of `tiles` K/V tiles within
  /// prepack-limit-mib, at run time.
  static Value prepackFits(KernelBuilder &b, const SdpaProblem &problem,
                           const SdpaBuffers &bufs, const ConvertAttnToLoopsOptions &opts,
                           Value tiles);

  /// Whether the tile multiplies on AVX512-BF16 dot products (the
  /// bf16-dot option; Bf16Dot.cpp): bf16 Q, K and V, packed tiles, 16
  /// lanes, D a multiple of 32, Dv of 16 and tile-k of 32.
  static bool takesBf16Dot(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                           bool directKeys);

  /// Whether the tile multiplies on Intel AMX tiles (the amx option;
  /// AmxTiles.cpp): takesBf16Dot's conditions with the amx option in place
  /// of bf16-dot, and tile-q a multiple of 16.
  static bool takesAmx(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                       bool directKeys);
  /// Whether the tile packs Q, K, V and P as bf16 pairs (takesBf16Dot or
  /// takesAmx).
  static bool takesBf16Pairs(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                             bool directKeys) {
    return takesBf16Dot(problem, opts, directKeys) || takesAmx(problem, opts, directKeys);
  }

  /// The prepacked keys' buffer type: [B, Hkv, K/V tiles, D, tile-k] f32,
  /// or [B, Hkv, K/V tiles, D/2, tile-k] i32 (bf16 pairs) with bf16 dots.
  static MemRefType prepackedKeysType(const SdpaProblem &problem,
                                      const ConvertAttnToLoopsOptions &opts);

  /// Transposes K/V tile `kTile` of K/V head `kvHead` of batch row `bIdx`
  /// into its slice of the prepacked keys (packKeys over all Tk keys: the
  /// key length and the other keep rules still apply where the tile is
  /// read).
  void prepackKeyTile(Value bIdx, Value kvHead, Value kTile);

  /// The tile's rows against the keys they see, or against split `split`
  /// of `splits` (contiguous runs of the visible K/V tiles).
  TileState attend(Value bIdx, const TileRows &rows, Value split = {}, Value splits = {});

  /// Whether a decode tile runs every K/V head in one work item
  /// (attendEveryHead): K/V read in place from paged NHD caches
  /// ([blocks, block size, Hkv, D]), whose rows hold every K/V head side by
  /// side, so that one head's rows are 1/Hkv of each row, Hkv·D apart; or
  /// from HND caches whose blocks hold short runs of each head's rows (a
  /// static block size, block size · D at most 8 KiB).
  static bool takesEveryHead(const SdpaProblem &problem, const SdpaBuffers &bufs,
                             bool directKeys);
  /// Every K/V head's query rows and state, [Hkv, tile-q(, D | Dv padded)].
  struct HeadStates {
    Value q, m, l, acc;
    Value scores, keySums, keyScales; ///< sp, keySums, keyScaleSlots per head
  };
  /// attend() for the grouped rows `rows` of every K/V head at once
  /// (rows.kvHead is ignored): for each K/V tile, each head's scores,
  /// softmax and P·V in turn, so that a block of the cache is read whole
  /// while it is in cache instead of once per head.
  HeadStates attendEveryHead(Value bIdx, const TileRows &rows, Value split, Value splits);
  /// The state of head rows.kvHead in `states` (views), with the kernel's
  /// rows set to `rows` (for storeSplit).
  TileState headState(const HeadStates &states, const TileRows &rows);

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
  KernelBuilder &b;
  const SdpaProblem &problem;
  const SdpaBuffers &bufs;
  const ConvertAttnToLoopsOptions &opts;
  std::optional<KeyVisibility> keys; // per batch row
  std::optional<AlibiBias> tileAlibi; // per-head tiles: the tile's head
  int64_t dvPadded;
  bool directKeys; ///< K and V read in place (computeScoresDirect)
  bool valuesInPlace; ///< V read in place (directKeys, or takesValuesInPlace)
  Value packedKeys;   ///< the prepacked keys, if takesPrepackedKeys or mayPrepackKeys
  Value packedKeysFilled; ///< mayPrepackKeys: whether packedKeys was filled (i1)
  Value ktScratch;        ///< mayPrepackKeys: the scratch a tile packs into otherwise (allocateScratch)
  int64_t rowBlock;
  bool pairs; ///< takesBf16Pairs: qs, kt, vt and pPairs hold bf16 pairs as i32
  bool amx;   ///< takesAmx: the products on AMX tiles
  TileRows rows;
  Value bIdx, hkv;
  Value tileK0; ///< the first key of the K/V tile attend() is on
  Value qs, kt, vt, sp, keySums, acc, mRow, lRow, alphaRow;
  /// int8 K (SdpaProblem::quantized): the scales of a run's keys, per slot.
  Value keyScaleSlots;
  Value pPairs; ///< bf16 pairs: P rounded to bf16, [tile-q, tile-k/2] pairs as i32

  /// The query positions the tile's rows cover, [begin, end): a grouped
  /// tile that crosses from one head into the next covers [0, Tq).
  struct QueryRange {
    Value begin, end;
  };

  KeyVisibility::Range visibleTiles(const QueryRange &q, Value split, Value splits);
  void attendTile(const QueryRange &q, Value kTile);
  void finishTile(const QueryRange &q, Value k0, Value kRows, Value maskModKeepsAll);
  void selectHead(const HeadStates &states, Value kvHead);

  // The tile's rows and scratch (FlashKernel.cpp).
  Value rowAt(Value i);
  Value headOf(Value r);
  Value queryOf(Value r);
  QueryRange queryRange();
  Value scratch(ArrayRef<int64_t> shape, Type element = {});
  void allocateScratch();
  void initRunningState(Value split);

  // Packing (PrefillPacking.cpp).
  void copyRow(Value src, ArrayRef<Value> row, int64_t n, Value dst, Value dstRow,
               std::optional<double> scale = std::nullopt);
  void zeroRows(Value buf, Value from, int64_t rows, int64_t n);
  void packQueryTile();
  Value packedKeyTile(Value kTile);
  MemRefType packedKeyTileType();
  void packKeyValueTile(Value kTile, Value k0, Value kRows);
  void packKeys(Value k0, Value kRows, Value dst);
  void packValues(Value k0, Value kRows);

  // The bf16 dot-product variants of packing, scores and P·V (Bf16Dot.cpp).
  void packQueryPairs();
  void packKeyPairs(Value k0, Value kRows, Value dst);
  void packValuePairs(Value k0, Value kRows);
  void storeProbabilityPairs(Value i, Value j, Value p);

  // The AMX variants of scores and P·V (AmxTiles.cpp).
  void computeScoresAmx(Value k0);
  void accumulateValuesAmx();

  // Scores, mask, online softmax and P·V of the prefill tile (FlashKernel.cpp).
  void computeScores(Value k0);
  void storeScores(Value k0, Value row, ArrayRef<Value> cols, ArrayRef<Value> x);
  void maskTile(const QueryRange &q, Value k0, Value kRows, Value maskModKeepsAll);
  std::optional<flash::MaskVerdict> boundMaskModOverTile(const QueryRange &q, Value k0,
                                                         Value kRows);
  void applyMaskOperand(Value k0, Value kRows);
  Value applyScoreMod(Value k0, Value row, Value col, Value x);
  void applyMaskMod(Value k0);
  void onlineSoftmax();
  void softmaxRow(Value i);
  void softmaxRowGroup(Value i0);
  Value rowMaxVector(Value i);
  Value exponentiateRow(Value i, Value mV);
  /// P of row i at columns j .. j + w with dropout applied (Dropout.h):
  /// the probabilities P·V weighs; the row sum l keeps the undropped P.
  Value dropProbabilities(Value i, Value j, Value p);
  void accumulateValues(Value k0, Value kRows);
  /// P[row][j] as P·V weighs V's row k0 + j (times its int8 scale).
  Value probabilityWeight(Value row, Value k0, Value j);
  void accumulateBlock(Value k0, Value keyCount, Value row0, int64_t n,
                       ArrayRef<Value> colIdx, function_ref<void(Value)> perStep = nullptr);

  // The decode tile: K and V read in place, with prefetches (DecodeTile.cpp).
  /// With `heads` (attendEveryHead), each step of keys for every head in
  /// turn.
  void computeScoresDirect(Value k0, Value kRows, const HeadStates *heads = nullptr);
  /// body() once per K/V head, with the kernel on that head's rows and state.
  void forEachHead(const HeadStates &states, function_ref<void()> body);
  int64_t keysPerStep() const;
  void prefetchRow(Value buf, ArrayRef<Value> row, int64_t width, uint32_t locality = kIntoL2);
  /// memref.prefetch locality hints as x86 lowers them: 2 is prefetcht1
  /// (into L2), 0 prefetchnta (close to the core, for data read once).
  static constexpr uint32_t kIntoL2 = 2, kNonTemporal = 0;
  Value clampToLastKey(Value key);
  Value keyAhead(Value key);
  void prefetchNextKeyRow(Value k0, Value j);
  void accumulateValuesByRows(Value k0, Value kRows);
  void accumulateValuesByColumns(Value k0, Value kRows);
  void accumulateValuesInCache(Value k0, Value kRows);
};

} // namespace mlir::attn::loops

#endif // ATTN_LIB_CONVERSION_ATTNTOLOOPS_FLASHKERNEL_H
