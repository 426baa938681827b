//===- AmxTiles.cpp - the prefill tile on Intel AMX tile multiplies -------===//
//
// With bf16 Q, K and V and the amx option (or f16 ones and amx-fp16), the
// prefill tile's two products run on AMX (amx.tile_mulf: tdpbf16ps or
// tdpfp16ps, f32 += Σ of 16-bit pairs over a 16 × 32 by 32 × 16 block) on
// the pair layouts Bf16Dot.cpp packs, which are the ones the instruction
// reads:
//
//   S[i..+16][j..+16]  = Σ_p  Qs[i..+16][p..+16] · Kt[p..+16][j..+16]
//                        (A: 16 rows × 16 pairs of d; B: 16 pair-rows × 16 keys)
//   acc[i..+16][c..+16] = α·acc + Σ_q Pp[i..+16][q..+16] · Vt[q..+16][c..+16]
//                        (A: 16 rows × 16 pairs of keys; B: 16 pair-rows × 16 columns)
//
// Each product's steps over p (D/32 of them) and q (tile-k/32) are
// unrolled, so no tile value crosses a loop. S goes through the score
// buffer: the tile is stored, then each row is scaled and finished
// (softcap, score_mod, ALiBi) in vectors as the other tiles do; acc is
// rescaled by α in vectors, then loaded as the accumulator tile and
// stored back. Everything else (packing, masks, softmax, P rounded to
// bf16, or f16) is the bf16-dot tile's.
//
// bf16 (or f16) projections take 16 rows of x against a packed panel of
// 32 outputs on two sum tiles (projectRowsOnAmx): A is 16 rows × 16 pairs
// of x, read in place from a row-padded copy; B the panel's 16 pair-rows
// × 16 outputs, the layout ProjectToLoops.cpp packs for bf16-dot.
//
// Tile registers are configured by LLVM (ldtilecfg at the function's
// entry); the runtime asks Linux for the AMX state once per process
// (HostInfo.cpp). attn-emulate-amx runs the same tiles as vector code on
// any CPU, which is how the tests check them on hosts without AMX.
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"

#include "mlir/Dialect/AMX/AMXDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

namespace {
/// Rows of every tile and pairs (32-bit elements) of an operand tile's row:
/// a 16 × 64-byte tile, AMX's largest.
constexpr int64_t kTileRows = 16, kTilePairs = 16;

/// 16 rows of 16 pairs of `half` (bf16, or f16 on AMX-FP16).
amx::TileType pairTile(Type half) {
  return amx::TileType::get({kTileRows, 2 * kTilePairs}, half);
}
amx::TileType sumTile(KernelBuilder &b) {
  return amx::TileType::get({kTileRows, kTilePairs}, b.f32());
}
} // namespace

bool FlashKernel::takesAmx(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                           bool directKeys) {
  // bf16 tiles (AMX-BF16: tdpbf16ps), or f16 tiles where the target has
  // AMX-FP16 (tdpfp16ps), both with f32 sums.
  Type half = problem.queryType.getElementType();
  bool typed = (half.isBF16() || (half.isF16() && opts.amxFp16)) &&
               problem.keyType.getElementType() == half &&
               problem.valueType.getElementType() == half;
  return opts.amx && typed && !directKeys && opts.vectorWidth == 16 && problem.d % 32 == 0 &&
         problem.dv % 16 == 0 && opts.tileK % 32 == 0 && opts.tileQ % kTileRows == 0;
}

/// S = Qs · Kt on tiles, each 16 × 16 block of S stored into the score
/// buffer and then scaled and finished row by row (storeScores).
void FlashKernel::computeScoresAmx(Value k0) {
  Value scale = b.splat(problem.scaleLog2);
  amx::TileType pairTy = pairTile(problem.queryType.getElementType());
  b.loop(b.idx(0), b.idx(opts.tileQ), kTileRows, [&](Value i) {
    b.loop(b.idx(0), b.idx(opts.tileK), kTilePairs, [&](Value j) {
      Value sum = amx::TileZeroOp::create(b.b, b.loc, sumTile(b));
      for (int64_t p = 0; p < problem.d / 2; p += kTilePairs) {
        Value q = amx::TileLoadOp::create(b.b, b.loc, pairTy, qs, ValueRange{i, b.idx(p)});
        Value k = amx::TileLoadOp::create(b.b, b.loc, pairTy, kt, ValueRange{b.idx(p), j});
        sum = amx::TileMulFOp::create(b.b, b.loc, sumTile(b), q, k, sum);
      }
      amx::TileStoreOp::create(b.b, b.loc, sp, ValueRange{i, j}, sum);
      b.loop(b.idx(0), b.idx(kTileRows), 1, [&](Value r) {
        Value row = b.add(i, r);
        storeScores(k0, row, {j}, {b.fmul(b.vload(sp, {row, j}), scale)});
      });
    });
  });
}

/// acc = α · acc + Pp · Vt: the rows rescaled in vectors, then each
/// 16 × 16 block of acc loaded as a tile, the tile-k/32 products added,
/// and stored back.
void FlashKernel::accumulateValuesAmx() {
  int64_t w = opts.vectorWidth;
  amx::TileType pairTy = pairTile(problem.valueType.getElementType());
  b.loop(b.idx(0), b.idx(opts.tileQ), 1, [&](Value i) {
    Value alpha = b.bcast(b.load(alphaRow, {i}));
    b.loop(b.idx(0), b.idx(dvPadded), w,
           [&](Value c) { b.vstore(b.fmul(b.vload(acc, {i, c}), alpha), acc, {i, c}); });
  });
  b.loop(b.idx(0), b.idx(opts.tileQ), kTileRows, [&](Value i) {
    b.loop(b.idx(0), b.idx(dvPadded), kTilePairs, [&](Value c) {
      Value sum = amx::TileLoadOp::create(b.b, b.loc, sumTile(b), acc, ValueRange{i, c});
      for (int64_t q = 0; q < opts.tileK / 2; q += kTilePairs) {
        Value p = amx::TileLoadOp::create(b.b, b.loc, pairTy, pPairs, ValueRange{i, b.idx(q)});
        Value v = amx::TileLoadOp::create(b.b, b.loc, pairTy, vt, ValueRange{b.idx(q), c});
        sum = amx::TileMulFOp::create(b.b, b.loc, sumTile(b), p, v, sum);
      }
      amx::TileStoreOp::create(b.b, b.loc, acc, ValueRange{i, c}, sum);
    });
  });
}

/// Steps of the projection's sum over In unrolled between the sum tiles'
/// round trips through memory (no tile value crosses a loop).
constexpr int64_t kProjectSteps = 8;

void projectRowsOnAmx(KernelBuilder &e, Value x, Value r0, Value panel,
                      function_ref<SmallVector<Value>(Value, Value)> panelAt, int64_t pairs,
                      Value sums) {
  amx::TileType pairTy = pairTile(cast<MemRefType>(x.getType()).getElementType());
  for (int64_t h = 0; h < 2; ++h)
    amx::TileStoreOp::create(e.b, e.loc, sums, ValueRange{e.idx(0), e.idx(h * kTilePairs)},
                             amx::TileZeroOp::create(e.b, e.loc, sumTile(e)));
  // `count` steps of 16 pairs from pair `first`: the sums loaded, the
  // products added, the sums stored back.
  auto steps = [&](Value first, int64_t count) {
    Value sum[2];
    for (int64_t h = 0; h < 2; ++h)
      sum[h] = amx::TileLoadOp::create(e.b, e.loc, sumTile(e), sums,
                                       ValueRange{e.idx(0), e.idx(h * kTilePairs)});
    for (int64_t u = 0; u < count; ++u) {
      Value q = e.add(first, e.idx(u * kTilePairs));
      Value a = amx::TileLoadOp::create(e.b, e.loc, pairTy, x, ValueRange{r0, e.add(q, q)});
      for (int64_t h = 0; h < 2; ++h) {
        Value b = amx::TileLoadOp::create(e.b, e.loc, pairTy, panel,
                                          panelAt(q, e.idx(h * kTilePairs)));
        sum[h] = amx::TileMulFOp::create(e.b, e.loc, sumTile(e), a, b, sum[h]);
      }
    }
    for (int64_t h = 0; h < 2; ++h)
      amx::TileStoreOp::create(e.b, e.loc, sums, ValueRange{e.idx(0), e.idx(h * kTilePairs)},
                               sum[h]);
  };
  int64_t total = pairs / kTilePairs;
  int64_t runs = total / kProjectSteps, rest = total % kProjectSteps;
  if (runs)
    e.loop(e.idx(0), e.idx(runs), 1,
           [&](Value run) { steps(e.mul(run, e.idx(kProjectSteps * kTilePairs)), kProjectSteps); });
  if (rest)
    steps(e.idx(runs * kProjectSteps * kTilePairs), rest);
}

} // namespace mlir::attn::loops
