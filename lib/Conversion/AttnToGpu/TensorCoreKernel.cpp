//===- TensorCoreKernel.cpp - attn.sdpa as a FlashAttention-2 mma.sync kernel -===//
//
// f16/bf16 attn.sdpa (f32 as TF32, when asked) with head dims 64/128
// becomes a FlashAttention-2 kernel on tensor cores, written at fragment
// level (upstream's convert-vector-to-gpu gives up on a contract -> softmax
// -> contract chain):
//
//   forall (bh, qTile) → blocks                 64 query rows per block
//     Ks[2·BK][D], Vs[2·BK][Dv] in workgroup memory (two stages; Q is staged
//     through Ks once), rows swizzled: 16-byte chunk c of row r sits at chunk
//     c ^ (r % 8), so the 8 rows an ldmatrix reads hit 8 different banks
//     forall tid → 128 threads (4 warps × 16 query rows), in lockstep:
//       cp.async Q tile → Ks; wait; ldmatrix.x4 → Q A-fragments (registers)
//       cp.async K/V tile `begin` → stage 0 (a paged cache's rows through
//       the block table); m, l = -inf, 0
//       for kTile in the tiles the block sees (FlashCore's tileRange):
//         cp.async K/V tile kTile+1 → the other stage; wait for all but it
//         S = Q·Kᵀ: mma.sync m16n8k16, K B-fragments by ldmatrix.x4
//         scores in log2 units (scale·log2e, softcap, the score function,
//         ALiBi, mask, the key visibility rules of FlashCore, the mask
//         function), row max over the quad (shuffles),
//         m' = max(m, rowmax), α = 2^(m - m'), P = 2^(s - m') (ex2.approx)
//         acc *= α; P rounded to f16/bf16 in registers is the A operand of
//         P·V (FragmentLayout.h: accumulatorForA); V B-fragments by
//         ldmatrix.x4.trans
//       l summed over the quad, the head's sink added to it (at the larger
//       of m and the sink) with attention sinks; O = acc / l (0 for a row
//       that saw no key); for attn.sdpa_partial also lse = ln2·m + ln l
//
// f32 with tf32 (asked for: convert-attn-to-gpu tf32) takes the same
// schedule on mma.sync m16n8k8 .tf32: every operand value rounded by
// cvt.rna.tf32.f32; Q's A fragments loaded from global memory (no Q stage:
// 64 f32 rows of D 128 would not fit Ks); K by 32-bit ldmatrix.x4; P's
// accumulators are the A operand as they lie once each k-step's keys are
// permuted (FragmentLayout.h: keyOfColumnTf32, accumulatorForATf32), V's
// values read per element at those keys; 16-key tiles when a head dim is
// 128 (twice the bytes per row).
//
// The per-thread code is SIMT: each thread holds its fragments as values
// (nvgpu.ldmatrix / nvgpu.mma.sync operands) and the rows groupOf(lane) and
// groupOf(lane) + 8 of its warp's 16. Every lane <-> element relation comes
// from include/attn/GPU/FragmentLayout.h. The same IR runs on the CPU:
// attn-emulate-gpu-schedule runs the 128 threads in lockstep, lanes as
// vector elements, the warp instructions through the same table.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreKernel.h"

#include "GpuBlock.h"

#include "Conversion/FlashCore/ModBounds.h"
#include "Conversion/FlashCore/ModFunctions.h"

#include "attn/GPU/FragmentLayout.h"
#include "attn/GPU/PtxDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;
namespace frag = ::attn::gpu::frag;

namespace {

constexpr int64_t kWarps = 4;
constexpr int64_t kBlockRows = 16 * kWarps; // query rows per block
constexpr int64_t kThreads = 32 * kWarps;

/// A lane number as IR (an index value) with the operators the fragment
/// table's maps use, so that the kernel's lane arithmetic is the table's.
struct LaneExpr {
  KernelBuilder *g;
  Value v;
};
LaneExpr operator+(LaneExpr a, LaneExpr b) { return {a.g, a.g->add(a.v, b.v)}; }
LaneExpr operator+(LaneExpr a, int64_t c) { return {a.g, a.g->add(a.v, a.g->idx(c))}; }
LaneExpr operator+(int64_t c, LaneExpr a) { return a + c; }
LaneExpr operator*(int64_t c, LaneExpr a) { return {a.g, a.g->mul(a.v, a.g->idx(c))}; }
LaneExpr operator/(LaneExpr a, int64_t c) { return {a.g, a.g->div(a.v, a.g->idx(c))}; }
LaneExpr operator%(LaneExpr a, int64_t c) { return {a.g, a.g->rem(a.v, a.g->idx(c))}; }
LaneExpr operator^(LaneExpr a, LaneExpr b) {
  return {a.g, arith::XOrIOp::create(a.g->b, a.g->loc, a.v, b.v)};
}

/// Keys per K/V tile: 32, so that two stages of K and V fit 32 KiB at head
/// dim 128, Q (64 rows) fits the two K stages, and the scores of a tile (16
/// f32 per thread) leave registers for the accumulator: with 64 keys ptxas
/// spilled at D = 64 on sm_80 (128 registers, 4 bytes of spill stores).
/// f32 (TF32) rows take twice the bytes: 32 keys at D = Dv = 64, 16 when a
/// head dim is 128.
int64_t keyTile(const SdpaProblem &p) {
  int64_t bytes = p.elementType.getIntOrFloatBitWidth() / 8;
  return 2 * 32 * (p.d + p.dv) * bytes <= 32 * 1024 ? 32 : 16;
}

class TensorCoreKernel : GpuBlock {
public:
  /// The block's indices and rules are emitted here.
  TensorCoreKernel(KernelBuilder &g, const SdpaProblem &p, const SdpaBuffers &s, Value bh,
                   Value qTile)
      : GpuBlock(g, p, s, kBlockRows, bh, qTile), b(g.b), loc(g.loc), BK(keyTile(p)),
        elt(p.elementType), tf32(p.elementType.isF32()),
        chunk(tf32 ? frag::kLdmatrixRowB32 : frag::kLdmatrixRowB16) {}

  void build() {
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    ks = memref::AllocaOp::create(b, loc, MemRefType::get({2 * BK, p.d}, elt, AffineMap(), wg));
    vs = memref::AllocaOp::create(b, loc, MemRefType::get({2 * BK, p.dv}, elt, AffineMap(), wg));
    tiles = tileRange(BK);
    forEachThread(g, kThreads, [&](Value t) { threadBody(t); });
  }

private:
  OpBuilder &b;
  Location loc;
  int64_t BK;
  Type elt;
  /// f32 operands as TF32 (mma.sync m16n8k8): Q read into registers from
  /// global memory, every operand rounded (cvt.rna), V read per element.
  bool tf32;
  /// Elements per 16 bytes: one cp.async, one ldmatrix row, one swizzled
  /// chunk.
  int64_t chunk;
  KeyVisibility::Range tiles;
  Value ks, vs;
  // Per thread.
  Value tid, warp, lane, rowA, rowB;

  Type tokenType() { return nvgpu::DeviceAsyncTokenType::get(b.getContext()); }
  VectorType fragA() { return VectorType::get({4, 2}, elt); }
  VectorType fragB() { return VectorType::get({2, 2}, elt); }
  VectorType fragC() { return VectorType::get({2, 2}, g.f32()); }

  /// The physical column of the 16-byte chunk starting at `col` in row
  /// `row` of a swizzled tile (FragmentLayout.h: swizzledChunk).
  Value swizzle(Value row, Value col) {
    return frag::swizzledChunk(LaneExpr{&g, row}, LaneExpr{&g, col}, int(chunk)).v;
  }
  /// Element `col` of row `row` of a swizzled tile.
  Value swizzledElement(Value tile, Value row, Value col) {
    Value phys = frag::swizzledColumn(LaneExpr{&g, row}, LaneExpr{&g, col}, int(chunk)).v;
    return g.load(tile, {row, phys});
  }

  /// cp.async of rows [row0, row0 + rows) of src[bIdx, head] (width
  /// elements each) into tile rows [base, base + rows), 16 bytes per copy,
  /// appended to `tokens`; rows at or past `limit` are zero-filled (their
  /// source row clamped so that the address stays inside the buffer). With
  /// `keys`, src is K or V and row r is key r: SdpaBuffers::keyAt's
  /// indices, which read a paged cache in place (block table[b, r / BS],
  /// clamped into the cache, row r % BS: a 16-byte chunk never leaves a
  /// key's row).
  void copyRows(Value src, Value head, Value row0, Value limit, Value tile, Value base,
                int64_t rows, int64_t width, SmallVectorImpl<Value> &tokens, bool keys) {
    int64_t chunksPerRow = width / chunk, chunks = rows * chunksPerRow;
    assert(chunks % kThreads == 0 && "every thread copies the same number of chunks");
    for (int64_t i = 0; i < chunks / kThreads; ++i) {
      Value id = g.add(tid, g.idx(i * kThreads));
      Value r = g.div(id, g.idx(chunksPerRow));
      Value col = g.mul(g.rem(id, g.idx(chunksPerRow)), g.idx(chunk));
      Value row = g.add(row0, r);
      Value valid = g.lt(row, limit);
      Value srcRow = g.maxI(g.minI(row, g.sub(limit, g.idx(1))), g.idx(0));
      Value n = g.select(valid, g.idx(chunk), g.idx(0));
      Value dstRow = g.add(r, base);
      SmallVector<Value, 4> at = keys ? s.keyAt(g, bIdx, head, srcRow, col)
                                      : SmallVector<Value, 4>{bIdx, head, srcRow, col};
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType(), tile, ValueRange{dstRow, swizzle(dstRow, col)}, src, at,
          b.getIndexAttr(chunk), n, b.getUnitAttr()));
    }
  }
  /// Commits the copies issued so far as one group.
  void commit() { ptx::CpAsyncCommitGroupOp::create(b, loc); }
  /// Waits until at most `pending` committed groups are in flight.
  void waitGroups(int32_t pending) { ptx::CpAsyncWaitGroupOp::create(b, loc, pending); }
  /// The K and V rows of tile `kTile` into the stage at row `base`.
  void copyKeyValueTile(Value kTile, Value base) {
    Value k0 = g.mul(kTile, g.idx(BK));
    SmallVector<Value> tokens;
    copyRows(s.k, hk, k0, keys->keyCount(), ks, base, BK, p.d, tokens, /*keys=*/true);
    copyRows(s.v, hk, k0, keys->keyCount(), vs, base, BK, p.dv, tokens, /*keys=*/true);
    commit();
  }

  void barrier() { ptx::BarSyncOp::create(b, loc); }

  /// ldmatrix.x4 at tile[row, col] (col: the logical column of the lane's
  /// chunk; the swizzle is applied here): four registers of 16-bit pairs
  /// (fragA), or of one 32-bit element each (fragATf32).
  Value ldmatrix(Value tile, Value row, Value col, bool transpose, VectorType type) {
    return nvgpu::LdMatrixOp::create(b, loc, type, tile,
                                     ValueRange{row, swizzle(row, col)},
                                     b.getBoolAttr(transpose), b.getI32IntegerAttr(4));
  }

  /// The two B fragments (registers 0,1 and 2,3) of an ldmatrix.x4 result.
  std::pair<Value, Value> splitB(Value x4) {
    auto half = [&](int64_t r) {
      Value r0 = vector::ExtractOp::create(b, loc, x4, ArrayRef<int64_t>{r});
      Value r1 = vector::ExtractOp::create(b, loc, x4, ArrayRef<int64_t>{r + 1});
      Value e = arith::ConstantOp::create(b, loc, fragB(),
                                          DenseElementsAttr::get(fragB(), b.getZeroAttr(elt)));
      e = vector::InsertOp::create(b, loc, r0, e, ArrayRef<int64_t>{0});
      return Value(vector::InsertOp::create(b, loc, r1, e, ArrayRef<int64_t>{1}));
    };
    return {half(0), half(2)};
  }

  Value mma(Value a, Value bb, Value c) {
    if (tf32)
      return nvgpu::MmaSyncOp::create(b, loc, a, bb, c,
                                      ArrayRef<int64_t>{frag::kMmaM, frag::kMmaN, frag::kMmaKTf32},
                                      /*tf32Enabled=*/true);
    return nvgpu::MmaSyncOp::create(b, loc, a, bb, c,
                                    ArrayRef<int64_t>{frag::kMmaM, frag::kMmaN, frag::kMmaK});
  }

  // --- f16 / bf16 ------------------------------------------------------------
  /// S += Q·Kᵀ for the tile at stage row `base`: per pair of n-tiles and
  /// k-step of 16 dims, one ldmatrix.x4 gives both B fragments.
  void scoresHalf(ArrayRef<Value> qFrag, Value base, LaneExpr l, SmallVectorImpl<Value> &sAcc) {
    // This lane's ldmatrix address in K's [n][k] tile.
    frag::CoordOf<LaneExpr> kAddr = frag::ldmatrixAddressBNMajor(l);
    Value kRow = kAddr.row.v, kCol = kAddr.col.v;
    for (int64_t j2 = 0; j2 < int64_t(sAcc.size()) / 2; ++j2)
      for (int64_t kk = 0; kk < p.d / frag::kMmaK; ++kk) {
        Value x4 = ldmatrix(ks, g.add(base, g.add(kRow, g.idx(16 * j2))),
                            g.add(kCol, g.idx(frag::kMmaK * kk)), false, fragA());
        auto [b0, b1] = splitB(x4);
        sAcc[2 * j2] = mma(qFrag[kk], b0, sAcc[2 * j2]);
        sAcc[2 * j2 + 1] = mma(qFrag[kk], b1, sAcc[2 * j2 + 1]);
      }
  }
  /// acc += P·V for the tile at stage row `base`: P rounded to f16/bf16 in
  /// registers is the A operand (accumulatorForA), V's B fragments come by
  /// ldmatrix.x4.trans from its [k][n] tile.
  void valuesHalf(ArrayRef<Value> pr, Value base, LaneExpr l, SmallVectorImpl<Value> &acc) {
    frag::CoordOf<LaneExpr> vAddr = frag::ldmatrixAddressBKMajor(l);
    Value vRow = vAddr.row.v, vCol = vAddr.col.v;
    for (int64_t st = 0; st < BK / frag::kMmaK; ++st) {
      SmallVector<Value> elems;
      for (int v = 0; v < frag::kValuesA; ++v) {
        frag::AccumulatorSource src = frag::accumulatorForA(v);
        elems.push_back(
            arith::TruncFOp::create(b, loc, elt, pr[4 * (2 * st + src.tile) + src.value]));
      }
      Value pa = fragment(fragA(), elems);
      for (int64_t n2 = 0; n2 < int64_t(acc.size()) / 2; ++n2) {
        Value x4 = ldmatrix(vs, g.add(base, g.add(vRow, g.idx(16 * st))),
                            g.add(vCol, g.idx(16 * n2)), true, fragA());
        auto [b0, b1] = splitB(x4);
        acc[2 * n2] = mma(pa, b0, acc[2 * n2]);
        acc[2 * n2 + 1] = mma(pa, b1, acc[2 * n2 + 1]);
      }
    }
  }

  // --- TF32 ----------------------------------------------------------------
  VectorType fragATf32() { return VectorType::get({frag::kValuesATf32, 1}, g.f32()); }
  VectorType fragBTf32() { return VectorType::get({frag::kValuesBTf32, 1}, g.f32()); }
  /// x rounded to TF32 (cvt.rna.tf32.f32: 10 mantissa bits, ties away from
  /// zero), still an f32: what the tensor core then reads exactly.
  Value roundTf32(Value x) {
    Value bits = ptx::CvtRnaTf32Op::create(b, loc, b.getI32Type(), x);
    return arith::BitcastOp::create(b, loc, g.f32(), bits);
  }
  Value fragment(VectorType t, ArrayRef<Value> values) {
    return vector::FromElementsOp::create(b, loc, t, values);
  }
  /// The A fragments of this lane's Q rows, one per k-step of 8 dims, read
  /// from global memory (once per block) and rounded. Rows past Tq read the
  /// last row (their results are never stored).
  SmallVector<Value> loadQTf32(LaneExpr l, Value warpRow) {
    SmallVector<Value> q;
    Value last = g.sub(s.tq, g.idx(1));
    for (int64_t kk = 0; kk < p.d / frag::kMmaKTf32; ++kk) {
      SmallVector<Value> vals;
      for (int v = 0; v < frag::kValuesATf32; ++v) {
        frag::CoordOf<LaneExpr> e = frag::mmaATf32(l, v);
        Value row = g.minI(g.add(g.add(q0, warpRow), e.row.v), last);
        Value col = g.add(e.col.v, g.idx(frag::kMmaKTf32 * kk));
        vals.push_back(roundTf32(g.load(s.q, {bIdx, hIdx, row, col})));
      }
      q.push_back(fragment(fragATf32(), vals));
    }
    return q;
  }
  /// S += Q·Kᵀ for the tile at stage row `base`, TF32: per pair of n-tiles
  /// and k-step of 8 dims, one 32-bit ldmatrix.x4 gives both B fragments.
  void scoresTf32(ArrayRef<Value> qFrag, Value base, LaneExpr l, SmallVectorImpl<Value> &sAcc) {
    // This lane's ldmatrix address in K's [n][k] tile.
    frag::CoordOf<LaneExpr> kAddr = frag::ldmatrixAddressBNMajorTf32(l);
    Value kRow = kAddr.row.v, kCol = kAddr.col.v;
    for (int64_t j2 = 0; j2 < int64_t(sAcc.size()) / 2; ++j2)
      for (int64_t kk = 0; kk < p.d / frag::kMmaKTf32; ++kk) {
        // Four 32-bit registers: the B fragments of n-tiles 2·j2, 2·j2 + 1.
        Value x4 = ldmatrix(ks, g.add(base, g.add(kRow, g.idx(16 * j2))),
                            g.add(kCol, g.idx(frag::kMmaKTf32 * kk)), false, fragATf32());
        for (int64_t t = 0; t < 2; ++t) {
          Value b0 = roundTf32(at1(x4, 2 * t)), b1 = roundTf32(at1(x4, 2 * t + 1));
          sAcc[2 * j2 + t] = mma(qFrag[kk], fragment(fragBTf32(), {b0, b1}), sAcc[2 * j2 + t]);
        }
      }
  }
  /// acc += P·V for the tile at stage row `base`, TF32: k-step st takes the
  /// 8 keys of n-tile st with its columns permuted (keyOfColumnTf32), so
  /// that P's accumulators are the A operand as they lie; each lane reads
  /// its two V values of every n-tile from the swizzled tile.
  void valuesTf32(ArrayRef<Value> pr, Value base, LaneExpr l, SmallVectorImpl<Value> &acc) {
    for (int64_t st = 0; st < BK / frag::kMmaKTf32; ++st) {
      SmallVector<Value> pa;
      for (int v = 0; v < frag::kValuesATf32; ++v)
        pa.push_back(roundTf32(pr[4 * st + frag::accumulatorForATf32(v)]));
      Value a = fragment(fragATf32(), pa);
      for (int64_t n = 0; n < int64_t(acc.size()); ++n) {
        SmallVector<Value> vb;
        for (int v = 0; v < frag::kValuesBTf32; ++v) {
          frag::CoordOf<LaneExpr> e = frag::mmaBTf32(l, v);
          Value key = g.add(base, g.add(g.idx(frag::kMmaKTf32 * st),
                                        frag::keyOfColumnTf32(e.row).v));
          Value col = g.add(e.col.v, g.idx(frag::kMmaN * n));
          vb.push_back(roundTf32(swizzledElement(vs, key, col)));
        }
        acc[n] = mma(a, fragment(fragBTf32(), vb), acc[n]);
      }
    }
  }
  Value at1(Value v, int64_t i) {
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i, 0});
  }
  Value zeroC() {
    return arith::ConstantOp::create(b, loc, fragC(),
                                     DenseElementsAttr::get(fragC(), b.getF32FloatAttr(0.0f)));
  }
  Value at(Value v, int64_t i) {
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i / 2, i % 2});
  }
  /// 2^x with the GPU's ex2.approx (the emulation evaluates FlashCore's
  /// exp2 in its place): -inf gives 0.
  Value ex2(Value x) {
    return ptx::Ex2ApproxOp::create(b, loc, g.f32(), x);
  }
  /// The reduction of x over the 4 lanes of a quad (xor shuffles 1, 2).
  Value quad(Value x, bool isMax) {
    for (int32_t off : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, x, off, frag::kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = isMax ? g.fmax(x, other) : g.fadd(x, other);
    }
    return x;
  }

  /// A row's state once its keys are done: the maximum m (log2 units),
  /// the sum l at m, and the factor that normalises the accumulator.
  struct RowTotals {
    Value m, l, inverse;
  };
  /// The totals of a row whose keys gave maximum m and sum l (summed over
  /// the quad). With attention sinks the head's sink (`sink`, in log2
  /// units) joins here, once: at M = max(m, sink), l' = l·2^(m - M) +
  /// 2^(sink - M), and the accumulator (at m) is normalised by 2^(m - M) /
  /// l'. Both weights come from the merge rule (KernelBuilder::mergeWeight:
  /// 0 where M = -inf, so a row with no key and no sink keeps l' = 0 and
  /// gives 0).
  RowTotals finishRow(Value m, Value l, Value sink) {
    if (!sink)
      return {m, l, g.inverseRowSum(l)};
    Value top = g.fmax(m, sink);
    Value reference = g.mergeReference(top);
    auto hwExp2 = [&](Value x) { return ex2(x); };
    Value keyWeight = g.mergeWeight(m, reference, 1.0, hwExp2);
    Value total = g.fma(l, keyWeight, g.mergeWeight(sink, reference, 1.0, hwExp2));
    return {top, total, g.fmul(keyWeight, g.inverseRowSum(total))};
  }

  void threadBody(Value t) {
    tid = t;
    warp = g.div(tid, g.idx(frag::kWarpSize));
    lane = g.rem(tid, g.idx(frag::kWarpSize));
    LaneExpr l{&g, lane};
    Value warpRow = g.mul(warp, g.idx(16));
    // The two rows of the warp's 16 whose accumulators this lane holds
    // (mmaC: values 0, 1 and 2, 3).
    rowA = g.add(g.add(q0, warpRow), frag::mmaC(l, 0).row.v);
    rowB = g.add(g.add(q0, warpRow), frag::mmaC(l, 2).row.v);

    SmallVector<Value> qFrag;
    if (tf32) {
      qFrag = loadQTf32(l, warpRow);
    } else {
      // Q: cp.async into the K stages, then the A fragments into registers.
      SmallVector<Value> qTokens;
      copyRows(s.q, hIdx, q0, s.tq, ks, g.idx(0), kBlockRows, p.d, qTokens, /*keys=*/false);
      commit();
      waitGroups(0);
      barrier();
      // The ldmatrix address of this lane (A, row-major).
      frag::CoordOf<LaneExpr> a = frag::ldmatrixAddressA(l);
      Value aRow = g.add(warpRow, a.row.v), aCol = a.col.v;
      for (int64_t kk = 0; kk < p.d / 16; ++kk)
        qFrag.push_back(ldmatrix(ks, aRow, g.add(aCol, g.idx(16 * kk)), false, fragA()));
      barrier();
    }

    // Prologue: the first tile into stage 0.
    copyKeyValueTile(tiles.begin, g.idx(0));

    int64_t nTiles = BK / 8, dvTiles = p.dv / 8;
    // m = -inf and l = 0 per row, with or without attention sinks: a sink
    // joins the row's sum once, after the keys (finishRow), so that m is
    // the largest score and P = 2^(s - m) ≤ 1 keeps f16's precision when
    // the sink is far above every score (with m the sink, P would be an
    // f16 subnormal or 0 there).
    Value m0 = g.negInf(), l0 = g.f(0.0);
    SmallVector<Value> init = {m0, m0, l0, l0};
    for (int64_t n = 0; n < dvTiles; ++n)
      init.push_back(zeroC());
    SmallVector<Value> state = g.loopCarry(
        tiles.begin, tiles.end, 1, init, [&](Value kTile, ValueRange carried) {
          Value k0 = g.mul(kTile, g.idx(BK));
          Value odd = g.rem(g.sub(kTile, tiles.begin), g.idx(2));
          Value base = g.mul(odd, g.idx(BK));       // this tile's stage
          Value nextBase = g.mul(g.sub(g.idx(1), odd), g.idx(BK));
          // Prefetch the next tile into the other stage (zero-filled past the
          // keys: the last iteration's prefetch is never read), then wait for
          // everything but it.
          copyKeyValueTile(g.add(kTile, g.idx(1)), nextBase);
          waitGroups(1);
          barrier();

          // S = Q·Kᵀ, nTiles n-tiles of 8 keys.
          SmallVector<Value> sAcc(nTiles, zeroC());
          if (tf32)
            scoresTf32(qFrag, base, l, sAcc);
          else
            scoresHalf(qFrag, base, l, sAcc);

          // Scores in log2 units. A tile every row of the block sees whole
          // (most tiles below a causal diagonal, all without causal, window
          // or key lengths) skips the per-key rules; a mask always applies,
          // a mask function unless its bounds over the tile say it keeps
          // every key (ModBounds.h; block-uniform, as the tile is).
          auto scores = [&](bool rules) {
            SmallVector<Value> x;
            for (int64_t j = 0; j < nTiles; ++j)
              for (int v = 0; v < 4; ++v) {
                // Value v of n-tile j: row rowA or rowB, key k0 + 8j +
                // mmaC(lane, v).col.
                Value row = v < 2 ? rowA : rowB;
                Value key = g.add(k0, (8 * j + frag::mmaC(l, v).col).v);
                x.push_back(scoreAt(at(sAcc[j], v), row, key, /*slopes=*/nullptr, rules));
              }
            return x;
          };
          SmallVector<Value> x;
          if (s.mask) {
            x = scores(true);
          } else {
            Value whole = keys->allVisible(q0, [&] { return rowEnd(); }, k0, BK);
            if (p.maskMod) {
              std::optional<MaskVerdict> bounds = boundMaskFunction(
                  g, *p.maskMod, bIdx, {hIdx, hIdx}, {q0, g.sub(rowEnd(), g.idx(1))},
                  {k0, g.add(k0, g.idx(BK - 1))}, s.captures, tileScanLimit(kBlockRows, BK));
              whole = bounds ? g.andI(whole, bounds->allKept)
                             : arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
            }
            SmallVector<Type> types(nTiles * 4, g.f32());
            auto branch = scf::IfOp::create(b, loc, types, whole, /*withElse=*/true);
            for (bool rules : {false, true}) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(rules ? branch.elseBlock() : branch.thenBlock());
              scf::YieldOp::create(b, loc, scores(rules));
            }
            x.assign(branch.getResults().begin(), branch.getResults().end());
          }
          // Row maxima (values 0, 1: row A; 2, 3: row B).
          Value mxA = g.negInf(), mxB = g.negInf();
          for (int64_t i = 0; i < nTiles * 4; ++i) {
            if (i % 4 < 2)
              mxA = g.fmax(mxA, x[i]);
            else
              mxB = g.fmax(mxB, x[i]);
          }
          mxA = quad(mxA, true);
          mxB = quad(mxB, true);
          Value mNewA = g.fmax(carried[0], mxA), mNewB = g.fmax(carried[1], mxB);
          Value mSafeA = g.mergeReference(mNewA), mSafeB = g.mergeReference(mNewB);
          auto hwExp2 = [&](Value x) { return ex2(x); };
          Value alphaA = g.mergeWeight(carried[0], mSafeA, 1.0, hwExp2);
          Value alphaB = g.mergeWeight(carried[1], mSafeB, 1.0, hwExp2);
          Value sumA = g.f(0.0), sumB = g.f(0.0);
          SmallVector<Value> pr(nTiles * 4);
          for (int64_t j = 0; j < nTiles; ++j)
            for (int v = 0; v < 4; ++v) {
              Value pv = ex2(g.fsub(x[4 * j + v], v < 2 ? mSafeA : mSafeB));
              pr[4 * j + v] = pv;
              if (v < 2)
                sumA = g.fadd(sumA, pv);
              else
                sumB = g.fadd(sumB, pv);
            }
          Value lA = g.fma(alphaA, carried[2], sumA);
          Value lB = g.fma(alphaB, carried[3], sumB);

          // acc *= α (per row), then acc += P·V.
          Value alphaV = vector::FromElementsOp::create(
              b, loc, fragC(), ValueRange{alphaA, alphaA, alphaB, alphaB});
          SmallVector<Value> acc;
          for (int64_t n = 0; n < dvTiles; ++n)
            acc.push_back(g.fmul(carried[4 + n], alphaV));
          if (tf32)
            valuesTf32(pr, base, l, acc);
          else
            valuesHalf(pr, base, l, acc);
          // The stage just read is the next prefetch's target.
          barrier();
          SmallVector<Value> next = {mNewA, mNewB, lA, lB};
          next.append(acc.begin(), acc.end());
          return next;
        });
    // The last prefetch (zero-fill) completes before the block ends.
    waitGroups(0);

    // O = acc / l, l summed over the quad; rows past Tq are not written.
    // For attn.sdpa_partial also lse = ln2·m + ln l (-inf for a row that
    // saw no key), written by the quad's first lane.
    // (The head's sink in log2 units, loaded once for both rows.)
    Value sink = s.sinks ? g.fmul(g.load(s.sinks, {hIdx}), g.f(kLog2E)) : Value();
    RowTotals totalsA = finishRow(state[0], quad(state[2], false), sink);
    RowTotals totalsB = finishRow(state[1], quad(state[3], false), sink);
    Value quadLead =
        s.lse ? g.cmpI(arith::CmpIPredicate::eq, g.rem(lane, g.idx(4)), g.idx(0)) : Value();
    Type outElt = p.resultType.getElementType();
    for (int half = 0; half < 2; ++half) {
      Value row = half ? rowB : rowA;
      const RowTotals &t = half ? totalsB : totalsA;
      g.ifThen(g.lt(row, s.tq), [&] {
        if (s.lse)
          g.ifThen(quadLead, [&] {
            Value lse = g.fma(t.m, g.f(1.0 / kLog2E), g.logPolynomial(t.l));
            g.store(lse, s.lse, {bIdx, hIdx, row});
          });
        for (int64_t n = 0; n < dvTiles; ++n)
          for (int v = 2 * half; v < 2 * half + 2; ++v) {
            Value col = (8 * n + frag::mmaC(l, v).col).v;
            Value o = g.fmul(at(state[4 + n], v), t.inverse);
            if (outElt != g.f32())
              o = arith::TruncFOp::create(b, loc, outElt, o);
            g.store(o, s.out, {bIdx, hIdx, row, col});
          }
      });
    }
  }
};

} // namespace

bool mlir::attn::tensorCoreKernelTakes(const SdpaProblem &p, bool tf32, std::string &why) {
  Type e = p.elementType;
  if (e.isF32() && !tf32) {
    why = "the tensor-core kernel takes f32 operands only as TF32, when asked (tf32=true)";
    return false;
  }
  if (!e.isF16() && !e.isBF16() && !e.isF32()) {
    why = "the tensor-core kernel takes f16, bf16 and (as TF32) f32 operands only";
    return false;
  }
  auto dimOk = [](int64_t d) { return d == 64 || d == 128; };
  if (!dimOk(p.d) || !dimOk(p.dv)) {
    why = "the tensor-core kernel takes head dims 64 and 128 only (D = " +
          std::to_string(p.d) + ", Dv = " + std::to_string(p.dv) + ")";
    return false;
  }
  return true;
}

void mlir::attn::buildTensorCoreSchedule(KernelBuilder &g, const SdpaProblem &p,
                                         const SdpaBuffers &s) {
  forEachBlock(g, p, s, kBlockRows, [&](Value bh, Value qTile) {
    TensorCoreKernel(g, p, s, bh, qTile).build();
  });
}
