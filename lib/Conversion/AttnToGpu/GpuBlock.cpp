//===- GpuBlock.cpp - the score of one (row, key) in the GPU kernels -----===//
//
// One rule for the CUDA-core forward and the backward kernels: the order in
// which scale, softcap, the score function, ALiBi and the masks apply is the
// CPU kernel's and the reference lowering's (docs/ops.md, attn.sdpa).
//
//===----------------------------------------------------------------------===//
#include "GpuBlock.h"

#include "Conversion/FlashCore/ModFunctions.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;

Value GpuBlock::scoreAt(Value dot, Value row, Value kj, ScoreSlopes *slopes,
                        bool keepRules) {
  Value sc = softcapScores(g, p, g.fmul(dot, g.f(p.scaleLog2)));
  if (slopes && p.softcap) {
    // d(c·tanh(x/c))/dx = 1 - tanh², the same in log2 units.
    Value t = g.fmul(sc, g.f(1.0 / (*p.softcap * kLog2E)));
    slopes->softcap = g.fsub(g.f(1.0), g.fmul(t, t));
  }
  ModPoint at{Value(), bIdx, hIdx, row, kj};
  if (p.scoreMod) {
    if (slopes && p.scoreModGrad) {
      // The derivative region at the score in natural units (log2 units
      // cancel in it).
      ModPoint slopeAt = at;
      slopeAt.score = g.fmul(sc, g.f(1.0 / kLog2E));
      slopes->scoreMod =
          emitModFunction(g, *p.scoreModGrad, ModKind::Score, slopeAt, s.captures);
    }
    sc = scoreModLog2(g, *p.scoreMod, at, sc, s.captures);
  }
  if (alibi)
    sc = g.fadd(sc, alibi->at(row, kj));
  if (!keepRules)
    return sc;
  Value visible = keys->isVisible(row, kj);
  if (p.maskMod)
    visible = g.andI(visible, emitModFunction(g, *p.maskMod, ModKind::Mask, at, s.captures));
  if (s.mask) {
    // Reading the mask past Tq or Tk is out of bounds: clamp the indices.
    Value rc = g.minI(row, g.sub(s.tq, g.idx(1)));
    Value kc = g.minI(kj, g.sub(s.tk, g.idx(1)));
    Value mv = g.load(s.mask, maskIndices(g, p.maskType, bIdx, hIdx, rc, kc));
    if (p.maskKind == MaskKind::Keep) {
      visible = g.andI(visible, mv);
    } else {
      if (mv.getType() != g.f32())
        mv = arith::ExtFOp::create(g.b, g.loc, g.f32(), mv);
      sc = g.fma(mv, g.f(kLog2E), sc);
    }
  }
  return g.select(visible, sc, g.negInf());
}
