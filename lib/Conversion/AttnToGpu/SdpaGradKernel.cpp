//===- SdpaGradKernel.cpp - attn.sdpa_grad to GPU kernel schedules --------===//
//
// FlashAttention-2's backward on CUDA cores, as two kernel schedules of
// scf.forall loops (runnable on the CPU, mapped to gpu.launch like the
// forward, AttnToGpu.cpp). Each gradient element is summed by one thread in
// a fixed order: no atomics, the same bits on every run (docs/training.md).
//
//   forall (b·Hkv, kTile) → blocks, NK threads     -- KeyTileKernel: dK, dV
//     KsT[D][NK], VsT[Dv][NK], dKT[D][NK], dVT[Dv][NK], Qs[MQ][D],
//       dOs[MQ][Dv], lse2[MQ], dRow[MQ]
//     forall t: KsT, VsT = K, V[b, hk, kTile]ᵀ; dKT, dVT = 0
//     for each query head h of the group, each Q tile of MQ rows that
//         sees a key of the tile (causal limit, window, key length):
//       forall t: Qs, dOs = Q, dO[b, h, qTile]; lse2 = lse·log2e,
//                 dRow = rowsum(dO ∘ O)
//       forall t → key j = kTile·NK + t, for each row i of the Q tile:
//         s  = the score (GpuBlock::scoreAt: scale, softcap, score
//              function, ALiBi, masks, keep rules)
//         p  = 2^(s − lse2_i)                        (0 where lse = −inf)
//         dS = p·(dO_i·V_j − dRow_i)·softcap'·f'
//         dVT[:, t] += p·dO_i;  dKT[:, t] += dS·Q_i
//     forall t: dK = scale·dKT[:, t], dV = dVT[:, t]
//
//   forall (b·H, qTile) → blocks, TQ threads       -- QueryTileKernel: dQ
//     QsT[D][TQ], dOsT[Dv][TQ], dQT[D][TQ], Ks[TK][D], Vs[TK][Dv],
//       lse2[TQ], dRow[TQ]
//     forall t: QsT, dOsT = Q, dO[b, h, qTile]ᵀ; lse2, dRow of row t; dQT = 0
//     for kTile in the tiles the Q tile sees:
//       forall t: Ks, Vs = K, V[b, h/G, kTile]
//       forall t → row i = qTile·TQ + t, for each key j: p, dS as above;
//         dQT[:, t] += dS·K_j
//     forall t: dQ = scale·dQT[:, t]
//
// The dQ kernel recomputes the scores and dP (the price of determinism
// without atomics, as on the CPU). A thread-level forall completes before
// the next starts: the barrier.
//
//===----------------------------------------------------------------------===//
#include "SdpaGradKernel.h"

#include "Conversion/FlashCore/FlashCore.h"
#include "GpuBlock.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace {

/// Workgroup bytes of the dK/dV kernel: K, V and their gradients for
/// `threads` keys, Q and dO for `step` rows, two row statistics.
int64_t keyKernelBytes(int64_t threads, int64_t step, int64_t d, int64_t dv) {
  return 4 * (2 * threads * (d + dv) + step * (d + dv) + 2 * step);
}

/// Workgroup bytes of the dQ kernel: Q, dO and dQ for `threads` rows, K and
/// V for `step` keys, two row statistics.
int64_t queryKernelBytes(int64_t threads, int64_t step, int64_t d, int64_t dv) {
  return 4 * (threads * (2 * d + dv) + step * (d + dv) + 2 * threads);
}

/// The parts of the backward both kernels share.
class GradKernelBase {
protected:
  GradKernelBase(KernelBuilder &g, const SdpaProblem &p, const SdpaBuffers &s,
                 const GradBuffers &gb)
      : g(g), p(p), s(s), gb(gb) {}

  KernelBuilder &g;
  const SdpaProblem &p;
  const SdpaBuffers &s;
  const GradBuffers &gb;

  Value shared(ArrayRef<int64_t> shape) {
    auto wg = gpu::AddressSpaceAttr::get(g.b.getContext(), gpu::AddressSpace::Workgroup);
    return memref::AllocaOp::create(g.b, g.loc,
                                    MemRefType::get(shape, g.f32(), AffineMap(), wg));
  }

  /// Rows first .. first + rows of src[bIdx, head, ·, :] (width columns)
  /// into the workgroup tile dst, as dst[r][c] or, `transposed`, dst[c][r];
  /// 0 for rows at or past `end`. Thread t of `threads` takes elements t,
  /// t + threads, ... (neighbouring threads read neighbouring addresses).
  void loadRows(Value t, int64_t threads, Value src, Value bIdx, Value head, Value first,
                Value end, int64_t rows, int64_t width, Value dst, bool transposed) {
    g.loop(t, g.idx(rows * width), threads, [&](Value e) {
      Value r = g.div(e, g.idx(width)), c = g.rem(e, g.idx(width));
      Value row = g.add(first, r);
      Value x = g.ifElse(
          g.lt(row, end), g.f32(), [&] { return g.loadF32(src, {bIdx, head, row, c}); },
          [&] { return g.f(0.0); });
      g.store(x, dst, transposed ? ValueRange{c, r} : ValueRange{r, c});
    });
  }

  /// Σ_{c < n} a(c)·b(c), in column order.
  Value dotOver(int64_t n, function_ref<Value(Value)> a, function_ref<Value(Value)> b) {
    return g.loopCarry(g.idx(0), g.idx(n), 1, {g.f(0.0)}, [&](Value c, ValueRange acc) {
      return SmallVector<Value>{g.fma(a(c), b(c), acc[0])};
    })[0];
  }

  /// lse2[r] = lse[b, h, row]·log2e and dRow[r] = Σ_c dO[b,h,row,c]·O[b,h,row,c]
  /// (0 and 0 past Tq).
  void rowStatistics(Value bIdx, Value h, Value row, Value r, Value lse2, Value dRow) {
    g.ifThenElse(
        g.lt(row, s.tq),
        [&] {
          g.store(g.fmul(g.load(gb.lse, {bIdx, h, row}), g.f(kLog2E)), lse2, {r});
          SmallVector<Value> sum = g.loopCarry(
              g.idx(0), g.idx(p.dv), 1, {g.f(0.0)}, [&](Value c, ValueRange acc) {
                return SmallVector<Value>{g.fma(g.loadF32(gb.dO, {bIdx, h, row, c}),
                                                g.loadF32(gb.o, {bIdx, h, row, c}), acc[0])};
              });
          g.store(sum[0], dRow, {r});
        },
        [&] {
          g.store(g.f(0.0), lse2, {r});
          g.store(g.f(0.0), dRow, {r});
        });
  }

  /// (p, dS) of one score: p = 2^(s − lse2) (0 on a row with lse = −inf),
  /// dS = p·(dp − dRow)·softcap'·f' (0 where p = 0: a slope that is not
  /// finite at a hidden score never reaches dS).
  std::pair<Value, Value> probabilityAndGradient(Value sc, Value l2, Value dp, Value d,
                                                 const GpuBlock::ScoreSlopes &slopes) {
    Value zero = g.f(0.0);
    Value empty = g.cmpF(arith::CmpFPredicate::OEQ, l2, g.negInf());
    Value pv = g.select(empty, zero, g.exp2(g.fsub(sc, l2)));
    Value ds = g.fmul(pv, g.fsub(dp, d));
    if (slopes.softcap)
      ds = g.fmul(ds, slopes.softcap);
    if (slopes.scoreMod)
      ds = g.select(g.cmpF(arith::CmpFPredicate::OEQ, pv, zero), zero,
                    g.fmul(ds, slopes.scoreMod));
    return {pv, ds};
  }

  /// dst[b, h, row, c] = factor·accT[c][t] for c < n, rounded to dst's type.
  void writeRow(Value dst, Value bIdx, Value h, Value row, Value accT, Value t, int64_t n,
                double factor) {
    g.loop(g.idx(0), g.idx(n), 1, [&](Value c) {
      Value x = g.load(accT, {c, t});
      if (factor != 1.0)
        x = g.fmul(x, g.f(factor));
      g.storeFromF32(x, dst, {bIdx, h, row, c});
    });
  }
};

/// One block of the dK/dV kernel: NK keys of K/V head hk, one per thread.
class KeyTileKernel : GradKernelBase {
public:
  KeyTileKernel(KernelBuilder &g, const SdpaProblem &p, const SdpaBuffers &s,
                const GradBuffers &gb, int64_t keysPerBlock, int64_t rowsPerStep)
      : GradKernelBase(g, p, s, gb), NK(keysPerBlock), MQ(rowsPerStep) {}

  void build(Value bkv, Value kTile) {
    bIdx = g.div(bkv, g.idx(p.kvHeads));
    hk = g.rem(bkv, g.idx(p.kvHeads));
    k0 = g.mul(kTile, g.idx(NK));
    ksT = shared({p.d, NK});
    vsT = shared({p.dv, NK});
    dkT = shared({p.d, NK});
    dvT = shared({p.dv, NK});
    qs = shared({MQ, p.d});
    dOs = shared({MQ, p.dv});
    lse2 = shared({MQ});
    dRow = shared({MQ});
    Value keyCount = KeyVisibility(g, p, s, bIdx).keyCount();
    loadKeyValueTile(keyCount);
    Value kEnd = g.minI(g.add(k0, g.idx(NK)), keyCount);
    Value qTiles = g.ceilDiv(s.tq, MQ);
    g.loop(g.idx(0), g.idx(p.group), 1, [&](Value gi) {
      Value h = g.add(g.mul(hk, g.idx(p.group)), gi);
      GpuBlock rules(g, p, s, MQ, bIdx, h, hk);
      g.loop(g.idx(0), qTiles, 1, [&](Value qTile) {
        Value i0 = g.mul(qTile, g.idx(MQ));
        Value iEnd = g.minI(g.add(i0, g.idx(MQ)), s.tq);
        // Only Q tiles with a row that sees a key of this tile.
        KeyVisibility::Range seen = rules.keys->keyRange([&] { return i0; }, [&] { return iEnd; });
        Value overlaps = g.andI(g.lt(seen.begin, seen.end),
                                g.andI(g.lt(seen.begin, kEnd), g.gt(seen.end, k0)));
        g.ifThen(overlaps, [&] {
          loadQueryRows(h, i0);
          accumulate(rules, i0, g.sub(iEnd, i0));
        });
      });
    });
    forEachThread(g, NK, [&](Value t) {
      Value kj = g.add(k0, t);
      g.ifThen(g.lt(kj, s.tk), [&] {
        writeRow(gb.dk, bIdx, hk, kj, dkT, t, p.d, p.scale);
        writeRow(gb.dv, bIdx, hk, kj, dvT, t, p.dv, 1.0);
      });
    });
  }

private:
  int64_t NK, MQ;
  Value bIdx, hk, k0;
  Value ksT, vsT, dkT, dvT, qs, dOs, lse2, dRow; // workgroup buffers

  /// KsT[c][j] = K[b, hk, k0 + j, c] (0 past the key count), VsT likewise,
  /// thread t taking elements t, t + NK, ... (neighbouring threads read
  /// neighbouring addresses); dKT, dVT = 0.
  void loadKeyValueTile(Value keyCount) {
    forEachThread(g, NK, [&](Value t) {
      loadRows(t, NK, s.k, bIdx, hk, k0, keyCount, NK, p.d, ksT, /*transposed=*/true);
      loadRows(t, NK, s.v, bIdx, hk, k0, keyCount, NK, p.dv, vsT, /*transposed=*/true);
      g.loop(g.idx(0), g.idx(p.d), 1, [&](Value c) { g.store(g.f(0.0), dkT, {c, t}); });
      g.loop(g.idx(0), g.idx(p.dv), 1, [&](Value c) { g.store(g.f(0.0), dvT, {c, t}); });
    });
  }

  /// Qs[i][c] = Q[b, h, i0 + i, c], dOs likewise (0 past Tq), and the rows'
  /// statistics.
  void loadQueryRows(Value h, Value i0) {
    forEachThread(g, NK, [&](Value t) {
      loadRows(t, NK, s.q, bIdx, h, i0, s.tq, MQ, p.d, qs, /*transposed=*/false);
      loadRows(t, NK, gb.dO, bIdx, h, i0, s.tq, MQ, p.dv, dOs, /*transposed=*/false);
      g.loop(t, g.idx(MQ), NK, [&](Value r) {
        rowStatistics(bIdx, h, g.add(i0, r), r, lse2, dRow);
      });
    });
  }

  /// Thread t's key against the `rows` rows of the Q tile at i0.
  void accumulate(GpuBlock &rules, Value i0, Value rows) {
    forEachThread(g, NK, [&](Value t) {
      Value kj = g.add(k0, t);
      g.ifThen(g.lt(kj, s.tk), [&] {
        g.loop(g.idx(0), rows, 1, [&](Value i) {
          Value row = g.add(i0, i);
          GpuBlock::ScoreSlopes slopes;
          Value sc = rules.scoreAt(dot(qs, ksT, i, t, p.d), row, kj, &slopes);
          std::pair<Value, Value> pds = probabilityAndGradient(
              sc, g.load(lse2, {i}), dot(dOs, vsT, i, t, p.dv), g.load(dRow, {i}), slopes);
          Value pv = pds.first, ds = pds.second;
          g.loop(g.idx(0), g.idx(p.dv), 1, [&](Value c) {
            g.store(g.fma(pv, g.load(dOs, {i, c}), g.load(dvT, {c, t})), dvT, {c, t});
          });
          g.loop(g.idx(0), g.idx(p.d), 1, [&](Value c) {
            g.store(g.fma(ds, g.load(qs, {i, c}), g.load(dkT, {c, t})), dkT, {c, t});
          });
        });
      });
    });
  }

  /// Σ_c rowsBuf[i][c]·colsT[c][t] over n columns.
  Value dot(Value rowsBuf, Value colsT, Value i, Value t, int64_t n) {
    return dotOver(n, [&](Value c) { return g.load(rowsBuf, {i, c}); },
                   [&](Value c) { return g.load(colsT, {c, t}); });
  }
};

/// One block of the dQ kernel: TQ query rows of head h, one per thread.
class QueryTileKernel : GradKernelBase {
public:
  QueryTileKernel(KernelBuilder &g, const SdpaProblem &p, const SdpaBuffers &s,
                  const GradBuffers &gb, int64_t rowsPerBlock, int64_t keysPerStep)
      : GradKernelBase(g, p, s, gb), TQ(rowsPerBlock), TK(keysPerStep) {}

  void build(Value bh, Value qTile) {
    GpuBlock rules(g, p, s, TQ, bh, qTile);
    qsT = shared({p.d, TQ});
    dOsT = shared({p.dv, TQ});
    dqT = shared({p.d, TQ});
    ks = shared({TK, p.d});
    vs = shared({TK, p.dv});
    lse2 = shared({TQ});
    dRow = shared({TQ});
    loadQueryTile(rules);
    KeyVisibility::Range tiles = rules.tileRange(TK);
    g.loop(tiles.begin, tiles.end, 1, [&](Value kTile) {
      Value k0 = g.mul(kTile, g.idx(TK));
      loadKeyValueTile(rules, k0);
      accumulate(rules, k0);
    });
    forEachThread(g, TQ, [&](Value t) {
      Value row = g.add(rules.q0, t);
      g.ifThen(g.lt(row, s.tq), [&] {
        writeRow(s.out, rules.bIdx, rules.hIdx, row, dqT, t, p.d, p.scale);
      });
    });
  }

private:
  int64_t TQ, TK;
  Value qsT, dOsT, dqT, ks, vs, lse2, dRow; // workgroup buffers

  /// QsT[c][i] = Q[b, h, q0 + i, c], dOsT likewise (0 past Tq); row t's
  /// statistics; dQT[:, t] = 0.
  void loadQueryTile(GpuBlock &rules) {
    forEachThread(g, TQ, [&](Value t) {
      loadRows(t, TQ, s.q, rules.bIdx, rules.hIdx, rules.q0, s.tq, TQ, p.d, qsT,
               /*transposed=*/true);
      loadRows(t, TQ, gb.dO, rules.bIdx, rules.hIdx, rules.q0, s.tq, TQ, p.dv, dOsT,
               /*transposed=*/true);
      rowStatistics(rules.bIdx, rules.hIdx, g.add(rules.q0, t), t, lse2, dRow);
      g.loop(g.idx(0), g.idx(p.d), 1, [&](Value c) { g.store(g.f(0.0), dqT, {c, t}); });
    });
  }

  /// Ks[j][c] = K[b, h/G, k0 + j, c], Vs likewise (0 past the key count).
  void loadKeyValueTile(GpuBlock &rules, Value k0) {
    Value keyCount = rules.keys->keyCount();
    forEachThread(g, TQ, [&](Value t) {
      loadRows(t, TQ, s.k, rules.bIdx, rules.hk, k0, keyCount, TK, p.d, ks, /*transposed=*/false);
      loadRows(t, TQ, s.v, rules.bIdx, rules.hk, k0, keyCount, TK, p.dv, vs,
               /*transposed=*/false);
    });
  }

  /// Thread t's row against the tile's keys: dQT[:, t] += dS·K_j.
  void accumulate(GpuBlock &rules, Value k0) {
    forEachThread(g, TQ, [&](Value t) {
      Value row = g.add(rules.q0, t);
      g.ifThen(g.lt(row, s.tq), [&] {
        Value l2 = g.load(lse2, {t}), d = g.load(dRow, {t});
        g.loop(g.idx(0), g.idx(TK), 1, [&](Value j) {
          Value kj = g.add(k0, j);
          GpuBlock::ScoreSlopes slopes;
          Value sc = rules.scoreAt(dotT(qsT, ks, t, j, p.d), row, kj, &slopes);
          Value ds = probabilityAndGradient(sc, l2, dotT(dOsT, vs, t, j, p.dv), d, slopes).second;
          g.loop(g.idx(0), g.idx(p.d), 1, [&](Value c) {
            g.store(g.fma(ds, g.load(ks, {j, c}), g.load(dqT, {c, t})), dqT, {c, t});
          });
        });
      });
    });
  }

  /// Σ_c colsT[c][t]·rowsBuf[j][c] over n columns.
  Value dotT(Value colsT, Value rowsBuf, Value t, Value j, int64_t n) {
    return dotOver(n, [&](Value c) { return g.load(colsT, {c, t}); },
                   [&](Value c) { return g.load(rowsBuf, {j, c}); });
  }
};

/// Identity-layout buffers: what gpu.memcpy and the device copies need.
MemRefType identityBuffer(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

} // namespace

LogicalResult mlir::attn::rewriteSdpaGradToGpuSchedule(RewriterBase &rewriter, SdpaGradOp op,
                                                       int64_t tileQ, int64_t tileK,
                                                       std::string &reason) {
  KernelSupport support{"GPU backward", /*lowPrecision=*/true, /*modFunctions=*/true,
                        /*pagedKeys=*/false, /*sinks=*/false};
  FailureOr<SdpaProblem> problem = SdpaProblem::analyze(op, support, reason);
  if (failed(problem))
    return failure();
  const SdpaProblem &p = *problem;
  if (op.getGradMask()) {
    reason = "the mask's gradient (grad_mask) is the [B,H,Tq,Tk] score gradient, which the "
             "GPU backward never forms";
    return failure();
  }
  auto keyFit = fitShared(tileQ, tileK, [&](int64_t t, int64_t st) {
    return keyKernelBytes(t, st, p.d, p.dv);
  });
  auto queryFit = fitShared(tileQ, tileK, [&](int64_t t, int64_t st) {
    return queryKernelBytes(t, st, p.d, p.dv);
  });
  if (!keyFit || !queryFit) {
    reason = "head dims D = " + std::to_string(p.d) + ", Dv = " + std::to_string(p.dv) +
             " need more than 48 KiB of shared memory in the GPU backward even with 16 "
             "threads and steps of 1";
    return failure();
  }

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  KernelBuilder g{rewriter, loc};
  SdpaBuffers s = materializeBuffers(rewriter, p, identityBuffer); // s.out: dQ
  GradBuffers gb = materializeGradBuffers(rewriter, op, s, identityBuffer);

  int64_t nk = keyFit->first, mq = keyFit->second;
  forEachBlockOf(g, g.mul(s.batch, g.idx(p.kvHeads)), g.ceilDiv(s.tk, nk),
                 [&](Value bkv, Value kTile) {
                   KeyTileKernel(g, p, s, gb, nk, mq).build(bkv, kTile);
                 });
  int64_t tq = queryFit->first, tk = queryFit->second;
  forEachBlock(g, p, s, tq, [&](Value bh, Value qTile) {
    QueryTileKernel(g, p, s, gb, tq, tk).build(bh, qTile);
  });

  rewriter.replaceOp(op, gradResultTensors(rewriter, p, s, gb));
  return success();
}
