//===- AttnToGpu.cpp - attn.sdpa to a GPU kernel schedule -----------------===//
//
// One attn.sdpa becomes one kernel, first written as a schedule of scf.forall
// loops (runnable on the CPU), then mapped to gpu.launch:
//
//   forall (bh, qTile) → blocks:                      -- one block per pair
//     QsT[D][TQ], Ks[TK][D], Vs[TK][Dv], accT[Dv][TQ],    -- allocateShared
//       m[TQ], l[TQ]
//     forall t → threads: m = -inf, l = 0, accT = 0       -- initRunningState
//     forall t → threads: QsT = Q[b, h, qTile]ᵀ           -- loadQueryTile
//     for kTile in the tiles the Q tile sees:             -- never loads tiles beyond
//                                                            the causal limit, outside
//                                                            the window or past the
//                                                            key length
//       forall t → threads: Ks, Vs = K, V[b, h/G, kTile]  -- loadKeyValueTile
//       forall t → threads: row = qTile·TQ + t            -- one query row per thread
//         s_j = scale·log2e · QsT[:][t]·Ks[j], softcap,   -- scoreRow
//               + ALiBi, + mask, keep rules
//         m' = max(m, max_j s_j); p_j = 2^(s_j - m');     -- onlineSoftmaxRow
//         α = 2^(m - m'); l = α·l + Σ p_j
//         accT[:][t] = α·accT[:][t] + Σ_j p_j Vs[j]       -- accumulateRow
//     forall t → threads: O[b, h, row] = accT[:][t] / l   -- writeOutput
//
// Each thread-level forall finishes before the next starts: that is the
// barrier. The problem record, arithmetic, exp2, tanh, the key visibility
// rules (key length, causal, window) and tile bounds, the softcap, the ALiBi
// bias and mask indexing are the shared FlashAttention core's (../FlashCore).
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "Conversion/FlashCore/FlashCore.h"
#include "Conversion/FlashCore/ModFunctions.h"
#include "GpuBlock.h"
#include "SdpaGradKernel.h"
#include "TensorCoreKernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

// The dialects the pass loads (dependentDialects in Passes.td).
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "attn/GPU/PtxDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

namespace {

/// Workgroup bytes for tiles tq × tk: K and V tiles, the Q tile, the
/// accumulator and the row statistics, all f32.
int64_t sharedBytes(int64_t tq, int64_t tk, int64_t d, int64_t dv) {
  return 4 * (tk * (d + dv) + d * tq + dv * tq + 2 * tq);
}

/// The body of one thread block (bh, qTile): one query row per thread, K/V
/// tiles staged in workgroup memory.
class GpuKernel : GpuBlock {
public:
  /// The block's indices and rules are emitted here.
  GpuKernel(KernelBuilder &g, const SdpaProblem &p, const SdpaBuffers &s, int64_t tq,
            int64_t tk, Value bh, Value qTile)
      : GpuBlock(g, p, s, tq, bh, qTile), TQ(tq), TK(tk) {}

  void build() {
    allocateShared();
    initRunningState();
    loadQueryTile();
    // Only the K/V tiles holding a key some row of this Q tile sees.
    KeyVisibility::Range tiles = tileRange(TK);
    g.loop(tiles.begin, tiles.end, 1, [&](Value kTile) {
      Value k0 = g.mul(kTile, g.idx(TK));
      loadKeyValueTile(k0);
      forEachThread(g, TQ, [&](Value t) {
        Value row = g.add(q0, t);
        g.ifThen(g.lt(row, s.tq), [&] {
          Value tileMax = scoreRow(t, row, k0);
          Value alpha = onlineSoftmaxRow(t, tileMax);
          accumulateRow(t, alpha);
        });
      });
    });
    writeOutput(TileState{mS, lS, accT});
  }

private:
  int64_t TQ, TK;
  Value qsT, ks, vs, accT, mS, lS; // workgroup buffers
  Value sRow;                 // this thread's scores / probabilities, [TK]

  void allocateShared() {
    auto wg = gpu::AddressSpaceAttr::get(g.b.getContext(), gpu::AddressSpace::Workgroup);
    auto shared = [&](ArrayRef<int64_t> shape) -> Value {
      return memref::AllocaOp::create(
          g.b, g.loc, MemRefType::get(shape, g.f32(), AffineMap(), wg));
    };
    qsT = shared({p.d, TQ});
    ks = shared({TK, p.d});
    vs = shared({TK, p.dv});
    accT = shared({p.dv, TQ});
    mS = shared({TQ});
    lS = shared({TQ});
  }

  /// m = -inf, l = 0, accT[:][t] = 0; with attention sinks m = the head's
  /// sink (in log2 units) and l = 1, as if the row had seen one more score
  /// that weighs no value.
  void initRunningState() {
    Value sinkM = s.sinks ? g.fmul(g.load(s.sinks, {hIdx}), g.f(kLog2E)) : g.negInf();
    Value sinkL = g.f(s.sinks ? 1.0 : 0.0);
    forEachThread(g, TQ, [&](Value t) {
      g.store(sinkM, mS, {t});
      g.store(sinkL, lS, {t});
      g.loop(g.idx(0), g.idx(p.dv), 1, [&](Value c) { g.store(g.f(0.0), accT, {c, t}); });
    });
  }

  /// QsT[c][i] = Q[b, h, q0 + i, c] (0 past Tq), once per block: the key
  /// loop reads Q from workgroup memory, thread t the column t (no bank
  /// conflicts), instead of from global memory for every multiply-add.
  void loadQueryTile() {
    forEachThread(g, TQ, [&](Value t) {
      g.loop(t, g.idx(TQ * p.d), TQ, [&](Value e) {
        Value i = g.div(e, g.idx(p.d)), c = g.rem(e, g.idx(p.d));
        Value row = g.add(q0, i);
        Value x = g.ifElse(
            g.lt(row, s.tq), g.f32(),
            [&] { return g.loadF32(s.q, {bIdx, hIdx, row, c}); }, [&] { return g.f(0.0); });
        g.store(x, qsT, {c, i});
      });
    });
  }

  /// Ks[j][c] = K[b, h/G, k0 + j, c], Vs likewise (0 past L; from the
  /// paged caches through the block table when K/V are attn.gather_pages
  /// of them), all threads together: thread t takes elements t, t + TQ,
  /// ... so that neighbouring threads read neighbouring addresses.
  void loadKeyValueTile(Value k0) {
    forEachThread(g, TQ, [&](Value t) {
      loadTile(s.k, ks, p.d, k0, t);
      loadTile(s.v, vs, p.dv, k0, t);
    });
  }

  void loadTile(Value src, Value tile, int64_t width, Value k0, Value t) {
    g.loop(t, g.idx(TK * width), TQ, [&](Value e) {
      Value j = g.div(e, g.idx(width)), c = g.rem(e, g.idx(width));
      Value kj = g.add(k0, j);
      // (s.keyAt: the row of a paged cache through the block table.)
      Value x = g.ifElse(
          g.lt(kj, keys->keyCount()), g.f32(),
          [&] { return g.loadF32(src, s.keyAt(g, bIdx, hk, kj, c)); }, [&] { return g.f(0.0); });
      g.store(x, tile, {j, c});
    });
  }

  /// s_j = scale·log2e · Q[row]·Ks[j], softcapped, plus the ALiBi bias and
  /// log2e·mask, or -inf where the key is hidden, into sRow; returns
  /// max_j s_j.
  Value scoreRow(Value t, Value row, Value k0) {
    sRow = memref::AllocaOp::create(g.b, g.loc, MemRefType::get({TK}, g.f32()));
    SmallVector<Value> mx =
        g.loopCarry(g.idx(0), g.idx(TK), 1, {g.negInf()}, [&](Value j, ValueRange a) {
          Value kj = g.add(k0, j);
          SmallVector<Value> dot = g.loopCarry(
              g.idx(0), g.idx(p.d), 1, {g.f(0.0)}, [&](Value c, ValueRange acc) {
                return SmallVector<Value>{
                    g.fma(g.load(qsT, {c, t}), g.load(ks, {j, c}), acc[0])};
              });
          Value sc = scoreAt(dot[0], row, kj);
          g.store(sc, sRow, {j});
          return SmallVector<Value>{g.fmax(a[0], sc)};
        });
    return mx[0];
  }

  /// m' = max(m, tileMax), p_j = 2^(s_j - m') in sRow, α = 2^(m - m'),
  /// l = α·l + Σ_j p_j, m = m'; returns α. A row with nothing visible yet
  /// subtracts 0 instead of -inf (no inf - inf).
  Value onlineSoftmaxRow(Value t, Value tileMax) {
    Value mOld = g.load(mS, {t});
    Value mNew = g.fmax(mOld, tileMax);
    Value mSafe = g.mergeReference(mNew);
    Value alpha = g.mergeWeight(mOld, mSafe);
    SmallVector<Value> sum =
        g.loopCarry(g.idx(0), g.idx(TK), 1, {g.f(0.0)}, [&](Value j, ValueRange a) {
          Value pj = g.exp2(g.fsub(g.load(sRow, {j}), mSafe));
          g.store(pj, sRow, {j});
          return SmallVector<Value>{g.fadd(a[0], pj)};
        });
    g.store(g.fma(alpha, g.load(lS, {t}), sum[0]), lS, {t});
    g.store(mNew, mS, {t});
    return alpha;
  }

  /// accT[c][t] = α·accT[c][t] + Σ_j p_j · Vs[j][c].
  void accumulateRow(Value t, Value alpha) {
    g.loop(g.idx(0), g.idx(p.dv), 1, [&](Value c) {
      Value init = g.fmul(alpha, g.load(accT, {c, t}));
      SmallVector<Value> acc =
          g.loopCarry(g.idx(0), g.idx(TK), 1, {init}, [&](Value j, ValueRange a) {
            return SmallVector<Value>{
                g.fma(g.load(sRow, {j}), g.load(vs, {j, c}), a[0])};
          });
      g.store(acc[0], accT, {c, t});
    });
  }

  /// O[b, h, row, c] = accT[c][t] / l (0 where l = 0; a NaN sum stays NaN);
  /// for attn.sdpa_partial also lse[b, h, row] = ln2·m + ln l (-inf for a
  /// row that saw no key).
  void writeOutput(const TileState &state) {
    forEachThread(g, TQ, [&](Value t) {
      Value row = g.add(q0, t);
      g.ifThen(g.lt(row, s.tq), [&] {
        Value l = g.load(state.l, {t});
        if (s.lse)
          g.store(g.fma(g.load(state.m, {t}), g.f(1.0 / kLog2E), g.logPolynomial(l)), s.lse,
                  {bIdx, hIdx, row});
        Value inv = g.inverseRowSum(l);
        Type outElt = p.resultType.getElementType();
        g.loop(g.idx(0), g.idx(p.dv), 1, [&](Value c) {
          Value x = g.fmul(g.load(state.acc, {c, t}), inv);
          if (outElt != g.f32())
            x = arith::TruncFOp::create(g.b, g.loc, outElt, x);
          g.store(x, s.out, {bIdx, hIdx, row, c});
        });
      });
    });
  }
};

/// Identity-layout buffers: what gpu.memcpy and the device copies need.
MemRefType identityBuffer(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// sdpa(q, k, v[, mask]) or sdpa_partial → the kernel schedule on
/// buffers, at the op; fails with `reason` (and the IR untouched) when the
/// kernel cannot take it.
template <typename OpTy>
LogicalResult rewriteSdpaToGpuSchedule(RewriterBase &rewriter, OpTy op,
                                       int64_t tileQ, int64_t tileK, bool tensorCores,
                                       bool tf32, bool reportKernel, std::string &reason) {
  FailureOr<SdpaProblem> problem = SdpaProblem::analyze(
      op,
      KernelSupport{"GPU kernel", /*lowPrecision=*/true, /*modFunctions=*/true,
                    /*pagedKeys=*/true, /*sinks=*/true},
      reason);
  if (failed(problem))
    return failure();
  const SdpaProblem &p = *problem;
  std::string why = "tensor-cores=false";
  if (tensorCores && tensorCoreKernelTakes(p, tf32, why)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    KernelBuilder g{rewriter, op.getLoc()};
    SdpaBuffers s = materializeBuffers(rewriter, p, identityBuffer);
    buildTensorCoreSchedule(g, p, s);
    rewriter.replaceOp(op, resultTensors(rewriter, p, s));
    return success();
  }
  if (reportKernel)
    op.emitRemark() << op->getName() << " takes the CUDA-core GPU kernel, not the tensor-core one: "
                    << why;
  // Fit 48 KiB: halve tile-k down to 8 keys, then tile-q down to 16 rows
  // (large head dims), then tile-k further.
  auto fit = fitShared(tileQ, tileK, [&](int64_t q, int64_t k) {
    return sharedBytes(q, k, p.d, p.dv);
  });
  if (!fit) {
    reason = "head dims D = " + std::to_string(p.d) + ", Dv = " + std::to_string(p.dv) +
             " need more than 48 KiB of shared memory even with tile-q = " +
             std::to_string(std::min<int64_t>(tileQ, 16)) + " and tile-k = 1";
    return failure();
  }
  int64_t tq = fit->first, tk = fit->second;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  KernelBuilder g{rewriter, op.getLoc()};
  SdpaBuffers s = materializeBuffers(rewriter, p, identityBuffer);
  forEachBlock(g, p, s, tq, [&](Value bh, Value qTile) {
    GpuKernel(g, p, s, tq, tk, bh, qTile).build();
  });
  rewriter.replaceOp(op, resultTensors(rewriter, p, s));
  return success();
}

struct ConvertAttnToGpuPass
    : mlir::attn::impl::ConvertAttnToGpuBase<ConvertAttnToGpuPass> {
  using ConvertAttnToGpuBase::ConvertAttnToGpuBase;
  void runOnOperation() override {
    if (std::string bad = checkAttnToGpuOptions({tileQ, tileK}); !bad.empty()) {
      getOperation()->emitError() << bad;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    auto forward = [&](auto op, std::string &reason) {
      return rewriteSdpaToGpuSchedule(rewriter, op, tileQ, tileK, tensorCores, tf32,
                                      reportKernel, reason);
    };
    // Every sdpa is rewritten or refused with its reason: none is silently
    // left behind.
    bool refused = false;
    rewriteEach<SdpaOp>(forward, [&](Operation *op, StringRef reason) {
      op->emitOpError(reason);
      refused = true;
    });
    // A training step's forward (sdpa_partial: O and the log-sum-exp) and
    // backward take the GPU kernels where they apply; any other (dropout,
    // the mask's gradient, ...) keeps the reference route on the host,
    // with the reason under report-kernel.
    auto keepOnHost = [&](Operation *op, StringRef reason) {
      if (reportKernel)
        op->emitRemark() << op->getName() << " keeps the reference route on the host: "
                         << reason;
    };
    rewriteEach<SdpaPartialOp>(forward, keepOnHost);
    rewriteEach<SdpaGradOp>(
        [&](SdpaGradOp op, std::string &reason) {
          return rewriteSdpaGradToGpuSchedule(rewriter, op, tileQ, tileK, reason);
        },
        keepOnHost);
    if (refused)
      signalPassFailure();
  }

  /// rewrite(op, reason) for every OpTy (collected first: the rewrites
  /// replace them); onRefusal(op, reason) where it fails.
  template <typename OpTy, typename Rewrite>
  void rewriteEach(Rewrite rewrite, function_ref<void(Operation *, StringRef)> onRefusal) {
    SmallVector<OpTy> ops;
    getOperation()->walk([&](OpTy op) { ops.push_back(op); });
    for (OpTy op : ops) {
      std::string reason;
      if (failed(rewrite(op, reason)))
        onRefusal(op, reason);
    }
  }
};

} // namespace

std::string mlir::attn::checkAttnToGpuOptions(const ConvertAttnToGpuOptions &o) {
  if (o.tileQ >= 1 && o.tileQ <= 1024 && o.tileK >= 1)
    return {};
  return "convert-attn-to-gpu: tile-q must be in [1, 1024] and tile-k positive, got "
         "tile-q=" +
         std::to_string(o.tileQ) + " tile-k=" + std::to_string(o.tileK);
}
