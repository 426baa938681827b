//===- AttnToGpu.cpp - attn.sdpa to a GPU kernel schedule -----------------===//
//
// One attn.sdpa becomes one kernel, first written as a schedule of scf.forall
// loops (runnable on the CPU), then mapped to gpu.launch:
//
//   forall (bh, qTile) → blocks:                      -- one block per pair
//     Ks[TK][D], Vs[TK][Dv], accT[Dv][TQ], m[TQ], l[TQ]   -- workgroup memory
//     forall t → threads: m[t] = -inf, l[t] = 0, accT[:][t] = 0
//     for kTile below the causal limit of the Q tile:     -- never loads tiles above
//       forall t → threads: Ks, Vs = K, V[b, h/G, kTile]  -- cooperative, coalesced
//       forall t → threads: row = qTile·TQ + t            -- one query row per thread
//         s_j = scale·log2e · q_row·Ks[j] (+ mask)        -- -inf where masked
//         m' = max(m, max_j s_j); p_j = 2^(s_j - m'); α = 2^(m - m')
//         l = α·l + Σ p_j;  accT[:][t] = α·accT[:][t] + Σ_j p_j Vs[j]
//     forall t → threads: O[b, h, row] = accT[:][t] / l  (0 where l = 0)
//
// Each thread-level forall finishes before the next starts: that is the
// barrier. attn-emulate-gpu-schedule runs this on the CPU; attn-map-schedule-
// to-gpu turns it into gpu.launch + gpu.barrier + device buffers.
//
//===----------------------------------------------------------------------===//
#include "attn/Conversion/Passes.h"

#include "../Common/ScfBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#define GEN_PASS_DEF_ATTNEMULATEGPUSCHEDULE
#define GEN_PASS_DEF_ATTNMAPSCHEDULETOGPU
#include "attn/Dialect/AttnConversion.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr double kLog2E = 1.4426950408889634;
/// Static shared memory a kernel may use without opting in.
constexpr int64_t kSharedBytes = 48 * 1024;

/// Scalar IR-building helpers bound to one builder and location.
struct Gen {
  OpBuilder &b;
  Location loc;

  Type f32() { return b.getF32Type(); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f(double v) {
    return arith::ConstantOp::create(b, loc, f32(), b.getF32FloatAttr(v));
  }
  Value negInf() { return f(-std::numeric_limits<double>::infinity()); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minI(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxI(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmpI(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value lt(Value x, Value y) { return cmpI(arith::CmpIPredicate::slt, x, y); }
  Value le(Value x, Value y) { return cmpI(arith::CmpIPredicate::sle, x, y); }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value ceilDiv(Value x, int64_t d) {
    return arith::CeilDivSIOp::create(b, loc, x, idx(d));
  }
  Value load(Value m, ValueRange ivs) { return memref::LoadOp::create(b, loc, m, ivs); }
  /// A load converted to f32 (f16/bf16 extended).
  Value loadF32(Value m, ValueRange ivs) {
    Value v = load(m, ivs);
    if (v.getType() != f32())
      v = arith::ExtFOp::create(b, loc, f32(), v);
    return v;
  }
  void store(Value v, Value m, ValueRange ivs) {
    memref::StoreOp::create(b, loc, v, m, ivs);
  }

  /// for (iv = lb; iv < ub; iv += step) body(iv)
  void loop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    scf_builders::buildFor(b, loc, lb, ub, step, body);
  }
  void loop(int64_t lb, int64_t ub, function_ref<void(Value)> body) {
    loop(idx(lb), idx(ub), idx(1), body);
  }
  /// A loop carrying `init`; body returns the next values.
  SmallVector<Value> loopCarry(int64_t lb, int64_t ub, ValueRange init,
                               function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return scf_builders::buildForCarry(b, loc, idx(lb), idx(ub), idx(1), init, body);
  }
  void ifThen(Value cond, function_ref<void()> body) {
    scf_builders::buildIfThen(b, loc, cond, body);
  }
  /// A forall over `n` threads (`#gpu.thread<x>`).
  void threads(int64_t n, function_ref<void(Value)> body) {
    auto mapping = b.getArrayAttr(
        {gpu::GPUThreadMappingAttr::get(b.getContext(), gpu::MappingId::DimX)});
    scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
                          ValueRange{}, mapping,
                          [&](OpBuilder &nb, Location, ValueRange ivs) {
                            OpBuilder::InsertionGuard g(b);
                            b.setInsertionPoint(nb.getInsertionBlock(),
                                                nb.getInsertionPoint());
                            body(ivs[0]);
                            scf::InParallelOp::create(b, loc);
                          });
  }

  /// 2^x with plain arithmetic (the same code on CPU and GPU, no libdevice):
  /// x clamped to [-127, 127], n = round(x), Cephes' degree-6 polynomial for
  /// 2^f on [-0.5, 0.5], 2^n built in the exponent bits; x <= -127
  /// (including -inf) gives exactly 0, NaN stays NaN.
  Value exp2(Value x) {
    Value c = arith::MaximumFOp::create(b, loc, x, f(-127.0));
    c = arith::MinimumFOp::create(b, loc, c, f(127.0));
    // c + 128.5 >= 1.5, so truncation is floor: n = floor(c + 0.5).
    Value ni = arith::SubIOp::create(
        b, loc,
        arith::FPToSIOp::create(b, loc, b.getI32Type(), fadd(c, f(128.5))),
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(128)));
    Value n = arith::SIToFPOp::create(b, loc, f32(), ni);
    Value fr = fsub(c, n);
    const double *coeffs = scf_builders::kExp2Coefficients;
    Value p = f(coeffs[0]);
    for (int i = 1; i < 6; ++i)
      p = fadd(fmul(p, fr), f(coeffs[i]));
    p = fadd(fmul(p, fr), f(1.0));
    Value biased = arith::AddIOp::create(
        b, loc, ni, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(127)));
    Value bits = arith::ShLIOp::create(
        b, loc, biased, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(23)));
    Value r = fmul(p, arith::BitcastOp::create(b, loc, f32(), bits));
    Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    return select(isNan, x, r);
  }
};

/// What the kernel needs to know about one sdpa.
struct Problem {
  Value q, k, v, mask, out; // buffers
  Value batch, tq, tk;      // index values
  int64_t heads, d, dv, group;
  double scaleLog2;
  std::optional<CausalKind> causal;
  bool keepMask = false;
  Type outElt;
};

/// Workgroup bytes for tiles tq × tk.
int64_t sharedBytes(int64_t tq, int64_t tk, int64_t d, int64_t dv) {
  return 4 * (tk * (d + dv) + dv * tq + 2 * tq);
}

class GpuKernel {
public:
  GpuKernel(Gen &g, const Problem &p, int64_t tq, int64_t tk)
      : g(g), p(p), TQ(tq), TK(tk) {}

  /// The body of block (bh, qTile).
  void build(Value bh, Value qTile) {
    Value hIdx = g.rem(bh, g.idx(p.heads));
    Value bIdx = g.div(bh, g.idx(p.heads));
    Value hk = g.div(hIdx, g.idx(p.group));
    Value q0 = g.mul(qTile, g.idx(TQ));

    auto wg = gpu::AddressSpaceAttr::get(g.b.getContext(),
                                         gpu::AddressSpace::Workgroup);
    auto shared = [&](ArrayRef<int64_t> shape) -> Value {
      return memref::AllocaOp::create(
          g.b, g.loc, MemRefType::get(shape, g.f32(), AffineMap(), wg));
    };
    Value ks = shared({TK, p.d}), vs = shared({TK, p.dv});
    Value accT = shared({p.dv, TQ}), mS = shared({TQ}), lS = shared({TQ});

    g.threads(TQ, [&](Value t) {
      g.store(g.negInf(), mS, {t});
      g.store(g.f(0.0), lS, {t});
      g.loop(0, p.dv, [&](Value c) { g.store(g.f(0.0), accT, {c, t}); });
    });

    // Keys this Q tile can see: the causal limit of its last row.
    // Key j is visible to row i iff j <= i + causalOffset.
    Value kEnd = p.tk;
    if (p.causal) {
      causalOffset =
          *p.causal == CausalKind::bottom_right ? g.sub(p.tk, p.tq) : g.idx(0);
      Value lastRow = g.sub(g.minI(g.add(q0, g.idx(TQ)), p.tq), g.idx(1));
      kEnd = g.maxI(g.idx(0),
                    g.minI(p.tk, g.add(g.add(lastRow, causalOffset), g.idx(1))));
    }
    Value numKTiles = g.ceilDiv(kEnd, TK);
    g.loop(g.idx(0), numKTiles, g.idx(1), [&](Value kt) {
      Value k0 = g.mul(kt, g.idx(TK));
      g.threads(TQ, [&](Value t) {
        loadTile(p.k, ks, p.d, bIdx, hk, k0, t);
        loadTile(p.v, vs, p.dv, bIdx, hk, k0, t);
      });
      g.threads(TQ, [&](Value t) {
        Value row = g.add(q0, t);
        g.ifThen(g.lt(row, p.tq), [&] { updateRow(ks, vs, accT, mS, lS, bIdx, hIdx, row, k0, t); });
      });
    });

    g.threads(TQ, [&](Value t) {
      Value row = g.add(q0, t);
      g.ifThen(g.lt(row, p.tq), [&] {
        Value l = g.load(lS, {t});
        Value positive = arith::CmpFOp::create(g.b, g.loc, arith::CmpFPredicate::OGT, l, g.f(0.0));
        Value inv = g.select(positive, arith::DivFOp::create(g.b, g.loc, g.f(1.0), l), g.f(0.0));
        // NaN sums propagate (a NaN score makes its row NaN).
        Value isNan = arith::CmpFOp::create(g.b, g.loc, arith::CmpFPredicate::UNO, l, l);
        inv = g.select(isNan, l, inv);
        g.loop(0, p.dv, [&](Value c) {
          Value x = g.fmul(g.load(accT, {c, t}), inv);
          if (p.outElt != g.f32())
            x = arith::TruncFOp::create(g.b, g.loc, p.outElt, x);
          g.store(x, p.out, {bIdx, hIdx, row, c});
        });
      });
    });
  }

private:
  Gen &g;
  const Problem &p;
  int64_t TQ, TK;
  /// Tk - Tq for bottom_right, 0 for top_left; set by build() when causal.
  Value causalOffset;

  /// tile[j][c] = src[b, hk, k0 + j, c] (0 past Tk); thread t takes
  /// elements t, t + TQ, ... so that neighbouring threads read neighbouring
  /// addresses.
  void loadTile(Value src, Value tile, int64_t width, Value bIdx, Value hk,
                Value k0, Value t) {
    g.loop(t, g.idx(TK * width), g.idx(TQ), [&](Value e) {
      Value j = g.div(e, g.idx(width)), c = g.rem(e, g.idx(width));
      Value kj = g.add(k0, j);
      auto ifOp = scf::IfOp::create(
          g.b, g.loc, TypeRange{g.f32()}, g.lt(kj, p.tk), /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(g.b);
        g.b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(g.b, g.loc, g.loadF32(src, {bIdx, hk, kj, c}));
        g.b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(g.b, g.loc, g.f(0.0));
      }
      g.store(ifOp.getResult(0), tile, {j, c});
    });
  }

  /// The mask element for (b, h, row, key) with numpy broadcasting (static
  /// 1 dims read index 0).
  Value maskValue(Value bIdx, Value hIdx, Value row, Value kj) {
    auto mt = cast<MemRefType>(p.mask.getType());
    Value full[4] = {bIdx, hIdx, row, kj};
    SmallVector<Value> ivs;
    int64_t r = mt.getRank();
    for (int64_t i = 0; i < r; ++i)
      ivs.push_back(mt.getDimSize(i) == 1 ? g.idx(0) : full[4 - r + i]);
    return g.load(p.mask, ivs);
  }

  /// One query row against one K/V tile: scores, mask, online softmax,
  /// accumulate.
  void updateRow(Value ks, Value vs, Value accT, Value mS, Value lS, Value bIdx,
                 Value hIdx, Value row, Value k0, Value t) {
    Value sbuf = memref::AllocaOp::create(g.b, g.loc, MemRefType::get({TK}, g.f32()));
    Value scale = g.f(p.scaleLog2);
    SmallVector<Value> mTile = g.loopCarry(0, TK, {g.negInf()}, [&](Value j, ValueRange a) {
      Value kj = g.add(k0, j);
      SmallVector<Value> dot = g.loopCarry(0, p.d, {g.f(0.0)}, [&](Value c, ValueRange acc) {
        Value x = g.fmul(g.loadF32(p.q, {bIdx, hIdx, row, c}), g.load(ks, {j, c}));
        return SmallVector<Value>{g.fadd(acc[0], x)};
      });
      Value s = g.fmul(dot[0], scale);
      Value visible = g.lt(kj, p.tk);
      if (p.causal)
        visible = g.andI(visible, g.le(kj, g.add(row, causalOffset)));
      if (p.mask) {
        // Reading the mask past Tk is out of bounds: clamp the index.
        Value kc = g.minI(kj, g.sub(p.tk, g.idx(1)));
        Value mv = maskValue(bIdx, hIdx, row, kc);
        if (p.keepMask) {
          visible = g.andI(visible, mv);
        } else {
          if (mv.getType() != g.f32())
            mv = arith::ExtFOp::create(g.b, g.loc, g.f32(), mv);
          s = g.fadd(s, g.fmul(mv, g.f(kLog2E)));
        }
      }
      s = g.select(visible, s, g.negInf());
      g.store(s, sbuf, {j});
      return SmallVector<Value>{g.fmax(a[0], s)};
    });
    Value mOld = g.load(mS, {t});
    Value mNew = g.fmax(mOld, mTile[0]);
    // Nothing visible yet: subtract 0 instead of -inf (no inf - inf).
    Value allMasked = arith::CmpFOp::create(g.b, g.loc, arith::CmpFPredicate::OEQ, mNew, g.negInf());
    Value mSafe = g.select(allMasked, g.f(0.0), mNew);
    Value alpha = g.exp2(g.fsub(mOld, mSafe));
    SmallVector<Value> sum = g.loopCarry(0, TK, {g.f(0.0)}, [&](Value j, ValueRange a) {
      Value pj = g.exp2(g.fsub(g.load(sbuf, {j}), mSafe));
      g.store(pj, sbuf, {j});
      return SmallVector<Value>{g.fadd(a[0], pj)};
    });
    g.store(g.fadd(g.fmul(alpha, g.load(lS, {t})), sum[0]), lS, {t});
    g.store(mNew, mS, {t});
    g.loop(0, p.dv, [&](Value c) {
      Value init = g.fmul(alpha, g.load(accT, {c, t}));
      SmallVector<Value> acc = g.loopCarry(0, TK, {init}, [&](Value j, ValueRange a) {
        return SmallVector<Value>{g.fadd(a[0], g.fmul(g.load(sbuf, {j}), g.load(vs, {j, c})))};
      });
      g.store(acc[0], accT, {c, t});
    });
  }
};

/// sdpa(q, k, v[, mask]) → the kernel schedule on buffers.
struct SdpaToGpuSchedule : OpRewritePattern<SdpaOp> {
  SdpaToGpuSchedule(MLIRContext *ctx, GpuTiling tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(SdpaOp op, PatternRewriter &rewriter) const override {
    auto qT = cast<RankedTensorType>(op.getQuery().getType());
    auto kT = cast<RankedTensorType>(op.getKey().getType());
    auto vT = cast<RankedTensorType>(op.getValue().getType());
    if (auto rate = op.getDropoutRateAttr(); rate && !rate.getValue().isZero())
      return op.emitOpError("dropout is not supported by the GPU kernel");
    if (qT.isDynamicDim(3) || vT.isDynamicDim(3) || qT.isDynamicDim(1) ||
        kT.isDynamicDim(1))
      return op.emitOpError(
          "the GPU kernel needs static head counts and head dims");
    std::optional<double> scale = op.getEffectiveScale();
    if (!scale)
      return op.emitOpError("no scale");
    int64_t d = qT.getDimSize(3), dv = vT.getDimSize(3);
    int64_t tq = tiling.tileQ, tk = tiling.tileK;
    while (tk > 1 && sharedBytes(tq, tk, d, dv) > kSharedBytes)
      tk /= 2;
    if (sharedBytes(tq, tk, d, dv) > kSharedBytes)
      return op.emitOpError() << "head dims D = " << d << ", Dv = " << dv
                              << " with tile-q = " << tq
                              << " need more than 48 KiB of shared memory";

    Location loc = op.getLoc();
    Gen g{rewriter, loc};
    Problem p;
    auto toBuffer = [&](Value t) -> Value {
      auto tt = cast<RankedTensorType>(t.getType());
      return bufferization::ToBufferOp::create(
          rewriter, loc, MemRefType::get(tt.getShape(), tt.getElementType()), t,
          /*read_only=*/true);
    };
    p.q = toBuffer(op.getQuery());
    p.k = toBuffer(op.getKey());
    p.v = toBuffer(op.getValue());
    if (Value m = op.getMask()) {
      p.mask = toBuffer(m);
      p.keepMask = cast<RankedTensorType>(m.getType()).getElementType().isInteger(1);
    }
    p.batch = memref::DimOp::create(rewriter, loc, p.q, 0);
    p.tq = memref::DimOp::create(rewriter, loc, p.q, 2);
    p.tk = memref::DimOp::create(rewriter, loc, p.k, 2);
    p.heads = qT.getDimSize(1);
    p.d = d;
    p.dv = dv;
    p.group = qT.getDimSize(1) / kT.getDimSize(1);
    p.scaleLog2 = *scale * kLog2E;
    if (auto c = op.getCausalAttr())
      p.causal = c.getValue();
    auto outT = cast<RankedTensorType>(op.getType());
    p.outElt = outT.getElementType();
    SmallVector<Value> dynSizes;
    if (outT.isDynamicDim(0))
      dynSizes.push_back(p.batch);
    if (outT.isDynamicDim(2))
      dynSizes.push_back(p.tq);
    p.out = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(outT.getShape(), p.outElt), dynSizes,
        rewriter.getI64IntegerAttr(64));

    Value bh = g.mul(p.batch, g.idx(p.heads));
    Value numQTiles = g.ceilDiv(p.tq, tq);
    auto mapping = rewriter.getArrayAttr(
        {gpu::GPUBlockMappingAttr::get(rewriter.getContext(), gpu::MappingId::DimX),
         gpu::GPUBlockMappingAttr::get(rewriter.getContext(), gpu::MappingId::DimY)});
    scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{bh, numQTiles}, ValueRange{}, mapping,
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          GpuKernel(g, p, tq, tk).build(ivs[0], ivs[1]);
          scf::InParallelOp::create(rewriter, loc);
        });
    Value result = bufferization::ToTensorOp::create(rewriter, loc, outT, p.out,
                                                     /*restrict=*/true, /*writable=*/true);
    rewriter.replaceOp(op, result);
    return success();
  }

  GpuTiling tiling;
};

struct ConvertAttnToGpuPass
    : mlir::attn::impl::ConvertAttnToGpuBase<ConvertAttnToGpuPass> {
  using ConvertAttnToGpuBase::ConvertAttnToGpuBase;
  void runOnOperation() override {
    if (tileQ < 1 || tileQ > 1024 || tileK < 1) {
      getOperation()->emitError()
          << "convert-attn-to-gpu: tile-q must be in [1, 1024] and tile-k "
             "positive, got tile-q="
          << static_cast<int64_t>(tileQ) << " tile-k=" << static_cast<int64_t>(tileK);
      return signalPassFailure();
    }
    // Each sdpa is rewritten on its own (not by a greedy driver) so that a
    // refusal is an error, not an op silently left behind.
    SdpaToGpuSchedule pattern(&getContext(), GpuTiling{tileQ, tileK});
    PatternRewriter rewriter(&getContext());
    bool failedOp = false;
    SmallVector<SdpaOp> ops;
    getOperation()->walk([&](SdpaOp op) { ops.push_back(op); });
    for (SdpaOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(pattern.matchAndRewrite(op, rewriter)))
        failedOp = true;
    }
    if (failedOp)
      signalPassFailure();
  }
};

//===----------------------------------------------------------------------===//
// Emulation on the CPU
//===----------------------------------------------------------------------===//

bool hasMapping(scf::ForallOp op, bool threads) {
  std::optional<ArrayAttr> mapping = op.getMapping();
  if (!mapping || mapping->empty())
    return false;
  Attribute first = (*mapping)[0];
  return threads ? isa<gpu::GPUThreadMappingAttr>(first)
                 : isa<gpu::GPUBlockMappingAttr>(first);
}

struct AttnEmulateGpuSchedulePass
    : mlir::attn::impl::AttnEmulateGpuScheduleBase<AttnEmulateGpuSchedulePass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    // Workgroup/private buffers become ordinary (per-iteration) buffers.
    AttrTypeReplacer replacer;
    replacer.addReplacement([](MemRefType t) -> std::optional<Type> {
      if (!isa_and_nonnull<gpu::AddressSpaceAttr>(t.getMemorySpace()))
        return std::nullopt;
      return MemRefType::get(t.getShape(), t.getElementType(), t.getLayout());
    });
    replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/false,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForallOp> threadLoops, blockLoops;
    root->walk([&](scf::ForallOp op) {
      if (hasMapping(op, /*threads=*/true))
        threadLoops.push_back(op);
      else if (hasMapping(op, /*threads=*/false))
        blockLoops.push_back(op);
    });
    // Threads in order: each loop completes before the next (the barrier).
    for (scf::ForallOp op : threadLoops) {
      rewriter.setInsertionPoint(op);
      if (failed(scf::forallToForLoop(rewriter, op)))
        return signalPassFailure();
    }
    // Blocks are independent: run them in parallel.
    for (scf::ForallOp op : blockLoops) {
      rewriter.setInsertionPoint(op);
      if (failed(scf::forallToParallelLoop(rewriter, op)))
        return signalPassFailure();
    }
  }
};

//===----------------------------------------------------------------------===//
// Mapping to gpu.launch
//===----------------------------------------------------------------------===//

struct AttnMapScheduleToGpuPass
    : mlir::attn::impl::AttnMapScheduleToGpuBase<AttnMapScheduleToGpuPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> blockLoops;
    getOperation()->walk([&](scf::ForallOp op) {
      if (hasMapping(op, /*threads=*/false) &&
          !op->getParentOfType<scf::ForallOp>())
        blockLoops.push_back(op);
    });
    for (scf::ForallOp op : blockLoops)
      if (failed(mapToLaunch(op)))
        return signalPassFailure();
  }

  LogicalResult mapToLaunch(scf::ForallOp forall) {
    MLIRContext *ctx = &getContext();
    Location loc = forall.getLoc();
    if (forall.getRank() > 3 || forall.getNumResults() != 0)
      return forall.emitOpError("cannot map: more than 3 block dims or results");
    for (OpFoldResult lb : forall.getMixedLowerBound())
      if (getConstantIntValue(lb) != 0)
        return forall.emitOpError("cannot map: non-zero lower bound");
    for (OpFoldResult st : forall.getMixedStep())
      if (getConstantIntValue(st) != 1)
        return forall.emitOpError("cannot map: non-unit step");
    // The block size: the largest thread-level trip count inside.
    int64_t blockSize = 1;
    SmallVector<scf::ForallOp> threadLoops;
    WalkResult wr = forall.getBody()->walk([&](scf::ForallOp inner) {
      if (!hasMapping(inner, /*threads=*/true) || inner.getRank() != 1) {
        inner.emitOpError("cannot map: nested loops must be 1-d thread loops");
        return WalkResult::interrupt();
      }
      std::optional<int64_t> ub = getConstantIntValue(inner.getMixedUpperBound()[0]);
      if (!ub || getConstantIntValue(inner.getMixedLowerBound()[0]) != 0 ||
          getConstantIntValue(inner.getMixedStep()[0]) != 1) {
        inner.emitOpError("cannot map: thread loops need 0..static bound, step 1");
        return WalkResult::interrupt();
      }
      blockSize = std::max(blockSize, *ub);
      threadLoops.push_back(inner);
      return WalkResult::advance();
    });
    if (wr.wasInterrupted())
      return failure();
    if (blockSize > 1024)
      return forall.emitOpError("cannot map: more than 1024 threads per block");

    IRRewriter rewriter(ctx);
    rewriter.setInsertionPoint(forall);
    // Buffers the kernel touches get device copies.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(forall.getRegion(), captured);
    struct DeviceCopy {
      Value host, device;
      bool read = false, written = false;
    };
    SmallVector<DeviceCopy> copies;
    for (Value v : captured) {
      auto mt = dyn_cast<MemRefType>(v.getType());
      if (!mt)
        continue;
      if (!mt.getLayout().isIdentity())
        return forall.emitOpError("cannot map: buffer with a non-identity layout");
      DeviceCopy c;
      c.host = v;
      for (Operation *user : v.getUsers()) {
        if (!forall->isProperAncestor(user))
          continue;
        if (isa<memref::StoreOp>(user))
          c.written = true;
        else
          c.read = true;
      }
      SmallVector<Value> dyn;
      for (int64_t i = 0; i < mt.getRank(); ++i)
        if (mt.isDynamicDim(i))
          dyn.push_back(memref::DimOp::create(rewriter, loc, v, i));
      c.device = gpu::AllocOp::create(rewriter, loc, mt, /*asyncToken=*/Type(),
                                      ValueRange{}, dyn, ValueRange{})
                     .getMemref();
      if (c.read)
        gpu::MemcpyOp::create(rewriter, loc, TypeRange{}, ValueRange{}, c.device, v);
      copies.push_back(c);
    }

    // The grid: the forall's trip counts, 1 for missing dims.
    SmallVector<Value> grid;
    for (OpFoldResult ub : forall.getMixedUpperBound())
      grid.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, ub));
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    while (grid.size() < 3)
      grid.push_back(one);
    Value bx = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
    auto launch = gpu::LaunchOp::create(rewriter, loc, grid[0], grid[1], grid[2],
                                        bx, one, one);
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToEnd(&body);
    auto terminator = gpu::TerminatorOp::create(rewriter, loc);

    // Move the forall body in; its ivs are the block ids.
    Block *forallBody = forall.getBody();
    forallBody->getTerminator()->erase();
    gpu::KernelDim3 ids = launch.getBlockIds();
    Value idVals[3] = {ids.x, ids.y, ids.z};
    SmallVector<Value> repl;
    for (unsigned i = 0; i < forall.getRank(); ++i)
      repl.push_back(idVals[i]);
    rewriter.inlineBlockBefore(forallBody, terminator, repl);
    rewriter.eraseOp(forall);
    for (DeviceCopy &c : copies)
      c.host.replaceUsesWithIf(c.device, [&](OpOperand &use) {
        return launch->isProperAncestor(use.getOwner());
      });

    // Thread loops → predicated bodies + barrier.
    Value tid = launch.getThreadIds().x;
    for (scf::ForallOp inner : threadLoops) {
      rewriter.setInsertionPoint(inner);
      int64_t n = *getConstantIntValue(inner.getMixedUpperBound()[0]);
      Block *innerBody = inner.getBody();
      innerBody->getTerminator()->erase();
      if (n == blockSize) {
        rewriter.inlineBlockBefore(innerBody, inner, ValueRange{tid});
      } else {
        Value nv = arith::ConstantIndexOp::create(rewriter, loc, n);
        Value active = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, tid, nv);
        auto ifOp = scf::IfOp::create(rewriter, loc, active, /*withElse=*/false);
        rewriter.inlineBlockBefore(innerBody, ifOp.thenBlock()->getTerminator(),
                                   ValueRange{tid});
      }
      gpu::BarrierOp::create(rewriter, loc);
      rewriter.eraseOp(inner);
    }

    // Allocation scopes dissolve; workgroup buffers become attributions and
    // private ones move to the top of the kernel.
    SmallVector<memref::AllocaScopeOp> scopes;
    launch.getBody().walk([&](memref::AllocaScopeOp s) { scopes.push_back(s); });
    for (memref::AllocaScopeOp s : llvm::reverse(scopes)) {
      Block *sb = &s.getBodyRegion().front();
      Operation *ret = sb->getTerminator();
      SmallVector<Value> results(ret->getOperands());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(sb, s);
      rewriter.replaceOp(s, results);
    }
    SmallVector<memref::AllocaOp> allocas;
    launch.getBody().walk([&](memref::AllocaOp a) { allocas.push_back(a); });
    for (memref::AllocaOp a : allocas) {
      MemRefType t = a.getType();
      if (!t.hasStaticShape())
        return a.emitOpError("cannot map: dynamically sized kernel buffer");
      if (auto as = dyn_cast_or_null<gpu::AddressSpaceAttr>(t.getMemorySpace());
          as && as.getValue() == gpu::AddressSpace::Workgroup) {
        BlockArgument attr = launch.addWorkgroupAttribution(t, a.getLoc());
        rewriter.replaceOp(a, attr);
      } else {
        a->moveBefore(&body, body.begin());
      }
    }

    // Results back, device buffers freed.
    rewriter.setInsertionPointAfter(launch);
    for (DeviceCopy &c : copies)
      if (c.written)
        gpu::MemcpyOp::create(rewriter, loc, TypeRange{}, ValueRange{}, c.host, c.device);
    for (DeviceCopy &c : copies)
      gpu::DeallocOp::create(rewriter, loc, TypeRange{}, ValueRange{}, c.device);
    return success();
  }
};

} // namespace

void mlir::attn::populateAttnToGpuPatterns(RewritePatternSet &patterns,
                                           const GpuTiling &tiling) {
  patterns.add<SdpaToGpuSchedule>(patterns.getContext(), tiling);
}
