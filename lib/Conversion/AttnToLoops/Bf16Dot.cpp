//===- Bf16Dot.cpp - the prefill tile on AVX512-BF16 dot products ---------===//
//
// With bf16 Q, K and V and the bf16-dot option, the prefill tile
// multiplies on vdpbf16ps (x86vector.avx512.dot), which sums two bf16
// products into each f32 lane, instead of widening every value to f32 for
// FMAs. The operands are laid out in pairs along the summed dimension:
//
//   Qs[i][p]  = (Q[i][2p], Q[i][2p+1])              -- a bf16 pair as i32
//   Kt[p][j]  = (K[j][2p], K[j][2p+1])              -- K's rows as i32, transposed
//   S[i][j]   = Σ_p dot(Qs[i][p], Kt[p][j]) · scale · log2(e)
//   Pp[i][q]  = (P[i][2q], P[i][2q+1]) rounded to bf16
//   Vt[q][c]  = (V[2q][c], V[2q+1][c])              -- two key rows interleaved
//   acc[i][c] = α_i · acc[i][c] + Σ_q dot(Pp[i][q], Vt[q][c])
//
// Here: the predicate and the packing; computeScores and accumulateBlock
// (FlashKernel.cpp) run their register blocks with bf16Pairs' product.
//
// Everything else (masks, functions, the softmax, l from the f32 P) is the
// f32 tile's. Rounding P to bf16 is the one error this adds: at most
// 2^-9 relative per weight, as FlashAttention on GPUs; docs/cpu.md states
// what it measured.
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace mlir::attn::loops {

bool FlashKernel::takesBf16Dot(const SdpaProblem &problem, const ConvertAttnToLoopsOptions &opts,
                               bool directKeys) {
  auto isBf16 = [](RankedTensorType t) { return t.getElementType().isBF16(); };
  return opts.bf16Dot && !directKeys && opts.vectorWidth == 16 && isBf16(problem.queryType) &&
         isBf16(problem.keyType) && isBf16(problem.valueType) && problem.d % 32 == 0 &&
         problem.dv % 16 == 0 && opts.tileK % 32 == 0;
}

/// Qs[i][p] = the pair Q[b, h_i, q_i, 2p .. 2p+1], zero past the valid
/// rows. Unscaled: computeScores scales the f32 sums.
void FlashKernel::packQueryPairs() {
  int64_t w = opts.vectorWidth, pairs = problem.d / 2;
  b.loop(b.idx(0), rows.count, 1, [&](Value i) {
    Value r = b.add(rows.r0, i);
    Value h = headOf(r), q = queryOf(r);
    b.loop(b.idx(0), b.idx(pairs), w, [&](Value p) {
      b.vstore(loadBf16Pairs(b, bufs.q, {bIdx, h, q, b.add(p, p)}), qs, {i, p});
    });
  });
  Value zero = arith::ConstantOp::create(b.b, b.loc, DenseElementsAttr::get(
                                                         bf16PairVector(b), b.b.getI32IntegerAttr(0)));
  b.loop(rows.count, b.idx(opts.tileQ), 1, [&](Value i) {
    b.loop(b.idx(0), b.idx(pairs), w, [&](Value p) { b.vstore(zero, qs, {i, p}); });
  });
}

/// dst[p][j] = the pair K[b, h/G, k0 + j, 2p .. 2p+1] (dst: [D/2, tile-k]
/// i32): K's rows read as w pairs and transposed a w × w block of 32-bit
/// elements at a time in registers. Rows past the tile's keys repeat its
/// last key (the keep rules hide those columns).
void FlashKernel::packKeyPairs(Value k0, Value kRows, Value dst) {
  int64_t w = opts.vectorWidth;
  Value lastKey = b.add(k0, b.sub(kRows, b.idx(1)));
  b.loop(b.idx(0), b.idx(opts.tileK), w, [&](Value j) {
    SmallVector<SmallVector<Value, 4>> keyRows;
    for (int64_t x = 0; x < w; ++x)
      keyRows.push_back(
          bufs.keyRow(b, bIdx, hkv, b.minI(b.add(k0, b.add(j, b.idx(x))), lastKey)));
    b.loop(b.idx(0), b.idx(problem.d / 2), w, [&](Value p) {
      transposeBlock(
          b, [&](int64_t x) { return loadBf16Pairs(b, bufs.k, withColumn(keyRows[x], b.add(p, p))); },
          [&](int64_t x, Value v) { b.vstore(v, dst, {b.add(p, b.idx(x)), j}); }, opts.avx2);
    });
  });
}

/// Vt[q][c] = the pair (V[k0 + 2q][c], V[k0 + 2q + 1][c]) for w columns
/// at a time: the two rows' bf16 vectors interleaved by one shuffle. Rows
/// past the tile's keys are zero (their P is 0, and 0 times a stale row
/// could be NaN).
void FlashKernel::packValuePairs(Value k0, Value kRows) {
  int64_t w = opts.vectorWidth;
  Type half = problem.valueType.getElementType(); // bf16 (f16 on AMX-FP16 tiles)
  auto row = VectorType::get({w}, half);
  Value zero = arith::ConstantOp::create(b.b, b.loc,
                                         DenseElementsAttr::get(row, b.b.getZeroAttr(half)));
  SmallVector<int64_t> interleave = pairInterleaveMask(w);
  Value lastKey = b.add(k0, b.sub(kRows, b.idx(1)));
  b.loop(b.idx(0), b.idx(opts.tileK / 2), 1, [&](Value q) {
    Value j0 = b.add(q, q), j1 = b.add(j0, b.idx(1));
    SmallVector<Value, 4> row0 = bufs.keyRow(b, bIdx, hkv, b.minI(b.add(k0, j0), lastKey));
    SmallVector<Value, 4> row1 = bufs.keyRow(b, bIdx, hkv, b.minI(b.add(k0, j1), lastKey));
    auto keyRow = [&](Value j, ArrayRef<Value> at, Value c) {
      Value v = vector::LoadOp::create(b.b, b.loc, row, bufs.v, withColumn(at, c));
      return b.select(b.lt(j, kRows), v, zero);
    };
    b.loop(b.idx(0), b.idx(dvPadded), w, [&](Value c) {
      Value pairs = vector::ShuffleOp::create(b.b, b.loc, keyRow(j0, row0, c),
                                              keyRow(j1, row1, c), interleave);
      b.vstore(vector::BitCastOp::create(b.b, b.loc, bf16PairVector(b), pairs), vt, {q, c});
    });
  });
}

/// Pp[i][j/2 ..] = P[i][j .. j + w) rounded to bf16 (f16 on AMX-FP16
/// tiles), as w/2 pairs.
void FlashKernel::storeProbabilityPairs(Value i, Value j, Value p) {
  int64_t w = opts.vectorWidth;
  Value halves = arith::TruncFOp::create(
      b.b, b.loc, VectorType::get({w}, problem.valueType.getElementType()), p);
  Value pairs = vector::BitCastOp::create(
      b.b, b.loc, VectorType::get({w / 2}, b.b.getI32Type()), halves);
  vector::StoreOp::create(b.b, b.loc, pairs, pPairs, ValueRange{i, b.div(j, b.idx(2))});
}

} // namespace mlir::attn::loops
