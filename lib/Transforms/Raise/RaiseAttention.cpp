//===- RaiseAttention.cpp - a linalg attention chain into attn.sdpa -----===//
//
// Anchored on a contraction O = P·V (linalg.matmul, batch_matmul, or a
// contraction generic, with any operand transposition), the pattern reads
// P as an element term (ElementTerm.h) and matches
//
//   P = exp(X − rowconst) / Σ_keys exp(X − rowconst)      (or · 1/Σ, or
//       exp(X − (max + log Σ exp(X − max))))
//   X = scales, at most one additive mask tensor, and keep-masks
//       (select(keep, ·, −inf) or + select(keep, 0, −inf)) around
//   S = Q·Kᵀ, another contraction
//
// and replaces O by an attn.sdpa between reshapes that bring Q, K, V, the
// mask and O to sdpa's [B, H, T, D] layout. Keep-masks that are bands of
// key minus query position become `causal` and `window`; a mask tensor
// becomes sdpa's mask operand. What is not proven equal is left alone,
// with the reason (the `report` option).
//
//===----------------------------------------------------------------------===//
#include "RaiseAttention.h"
#include "FunctionRegions.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

bool containsExp(const Term *t) {
  if (t->isOp("math.exp") || t->isOp("math.exp2"))
    return true;
  return llvm::any_of(t->operands, containsExp);
}

/// A constant below every finite score: −inf or ≤ −1e30 (−FLT_MAX is how
/// Hugging Face masks).
bool isMaskingConstant(const Term *t) {
  t = stripFloatCasts(t);
  return t->isConstant() && t->constant <= -1e30;
}

bool isZero(const Term *t) {
  t = stripFloatCasts(t);
  return t->isConstant() && t->constant == 0;
}

} // namespace

/// The one operand of a binary op that is a constant, and the other.
bool mlir::attn::raise::splitConstant(const Term *t, const Term *&other, double &c) {
  for (unsigned i = 0; i < 2; ++i) {
    const Term *a = stripFloatCasts(t->operands[i]);
    if (a->isConstant()) {
      c = a->constant;
      other = t->operands[1 - i];
      return true;
    }
  }
  return false;
}


LogicalResult AttentionRaiser::matchShiftedExp(const Term *e, const Term *&x) {
  e = stripFloatCasts(e);
  if (!e->isOp("math.exp"))
    return fail("the probabilities are not exp(·) divided by their sum over the keys");
  const Term *arg = stripFloatCasts(e->operands[0]);
  unsigned keys = pv.k;
  if (arg->isOp("arith.subf") && !arg->operands[1]->dependsOn(keys, keys)) {
    // exp(x − c) / Σ exp(x − c) is softmax(x) for any c constant along the
    // row; the source's c is usually the row max.
    x = arg->operands[0];
    return success();
  }
  x = arg;
  outcome.notes.push_back("the source's softmax does not subtract the row max; "
                          "attn.sdpa does (an overflow to inf or NaN there is a "
                          "finite result here)");
  return success();
}

LogicalResult AttentionRaiser::matchSoftmax(const Term *p, const Term *&x) {
  p = stripFloatCasts(p);
  unsigned keys = pv.k;
  // A NaN guard: select(isnan(p), 0, p), or select(rowmax == -inf, 0, p),
  // zeroes exactly the rows that keep no key, as sdpa does.
  if (p->isOp("arith.select")) {
    const Term *c = p->operands[0], *t = p->operands[1], *f = p->operands[2];
    bool isNan = c->isOp("arith.cmpf") &&
                 c->predicate == static_cast<int64_t>(arith::CmpFPredicate::UNO) &&
                 sameTerm(c->operands[0], c->operands[1]);
    bool emptyRow = false;
    if (c->isOp("arith.cmpf") &&
        c->predicate == static_cast<int64_t>(arith::CmpFPredicate::OEQ))
      for (unsigned i = 0; i < 2; ++i) {
        const Term *m = stripFloatCasts(c->operands[i]), *n = stripFloatCasts(c->operands[1 - i]);
        emptyRow |= m->kind == Term::Kind::Reduce && m->reduction == Term::Reduction::Max &&
                    n->isConstant() && n->constant == -INFINITY;
      }
    if ((isNan || emptyRow) && isZero(t)) {
      nanGuard = true;
      p = stripFloatCasts(f);
    }
  }
  const Term *numerator = nullptr, *denominator = nullptr;
  if (p->isOp("arith.divf")) {
    numerator = p->operands[0];
    denominator = p->operands[1];
  } else if (p->isOp("arith.mulf")) {
    for (unsigned i = 0; i < 2 && !numerator; ++i) {
      const Term *r = stripFloatCasts(p->operands[1 - i]);
      if (r->isOp("arith.divf") && r->operands[0]->isConstant() &&
          r->operands[0]->constant == 1.0) {
        numerator = p->operands[i];
        denominator = r->operands[1];
      }
    }
  } else if (p->isOp("math.exp")) {
    // exp(x − lse) with lse = m + log Σ exp(x − m), or log Σ exp(x).
    const Term *arg = stripFloatCasts(p->operands[0]);
    if (!arg->isOp("arith.subf") || arg->operands[1]->dependsOn(keys, keys))
      return fail("the probabilities are exp(·) of something other than "
                  "the scores minus a row constant");
    const Term *lse = stripFloatCasts(arg->operands[1]);
    const Term *logTerm = lse;
    if (lse->isOp("arith.addf")) {
      for (unsigned i = 0; i < 2; ++i)
        if (stripFloatCasts(lse->operands[i])->isOp("math.log"))
          logTerm = stripFloatCasts(lse->operands[i]);
    }
    if (!logTerm->isOp("math.log"))
      return fail("exp(x − c) with c not a log-sum-exp of x");
    const Term *sum = stripFloatCasts(logTerm->operands[0]);
    if (sum->kind != Term::Kind::Reduce || sum->reduction != Term::Reduction::Sum)
      return fail("exp(x − c) with c not a log-sum-exp of x");
    const Term *inner = nullptr;
    if (failed(matchShiftedExp(sum->operands[0], inner)))
      return failure();
    if (!sameTerm(stripFloatCasts(inner), stripFloatCasts(arg->operands[0])))
      return fail("the log-sum-exp is taken of a different value than the exponent's");
    x = arg->operands[0];
    return success();
  }
  if (!numerator)
    return fail("the probabilities are not exp(·) divided by their sum over the keys");
  const Term *sum = stripFloatCasts(denominator);
  if (sum->kind != Term::Kind::Reduce || sum->reduction != Term::Reduction::Sum)
    return fail("the divisor is not a sum over the keys");
  if (!isZero(sum->operands[1]))
    return fail("the sum over the keys does not start from 0");
  if (!sameTerm(stripFloatCasts(sum->operands[0]), stripFloatCasts(numerator)))
    return fail("the divisor sums something other than the numerator");
  return matchShiftedExp(numerator, x);
}

LogicalResult AttentionRaiser::classifyMask(const Term *m, ScoresChain &chain,
                                            bool scaledAfter) {
  m = stripFloatCasts(m);
  if (std::optional<Band> band = bandOfConstant(m, pv.m, pv.k, ranges[pv.m], ranges[pv.k], /*additive=*/true)) {
    chain.finiteFill = true; // its dropped entries may be finite
    chain.constantBands.push_back(*band);
    return success();
  }
  if (m->isOp("arith.select")) {
    // + select(keep, 0, −inf) or + select(drop, −inf, 0)
    const Term *t = m->operands[1], *f = m->operands[2];
    if (isZero(t) && isMaskingConstant(f)) {
      chain.finiteFill |= std::isfinite(stripFloatCasts(f)->constant);
      chain.keeps.push_back({m->operands[0], true});
      return success();
    }
    if (isMaskingConstant(t) && isZero(f)) {
      chain.finiteFill |= std::isfinite(stripFloatCasts(t)->constant);
      chain.keeps.push_back({m->operands[0], false});
      return success();
    }
  }
  if (m->kind != Term::Kind::Leaf)
    return fail("the additive mask is computed from other values; only a mask "
                "tensor or a select of 0 and -inf is raised");
  if (scaledAfter)
    return fail("a scale is applied after the additive mask (sdpa adds the mask "
                "to the scaled scores)");
  if (chain.additive)
    return fail("two additive mask tensors");
  chain.additive = m;
  return success();
}

LogicalResult AttentionRaiser::peelScores(const Term *x, ScoresChain &chain) {
  bool scaledAfter = false; // a scale other than 1 met before (outside) here
  while (true) {
    x = stripFloatCasts(x);
    const Term *inner;
    double c;
    if (x->kind == Term::Kind::Leaf) {
      if (!asContraction(x->tensor.getDefiningOp()))
        return fail("the scores are not a contraction Q·Kᵀ");
      chain.scores = x;
      return success();
    }
    if ((x->isOp("arith.mulf") || x->isOp("arith.divf")) && splitConstant(x, inner, c) &&
        (x->isOp("arith.mulf") || inner == x->operands[0])) {
      double factor = x->isOp("arith.mulf") ? c : 1.0 / c;
      if (!(factor > 0) || !std::isfinite(factor))
        return fail("the scores are scaled by a constant that is not positive and finite");
      chain.scale *= factor;
      scaledAfter |= factor != 1.0;
      x = inner;
      continue;
    }
    if (x->isOp("arith.mulf") || x->isOp("arith.divf"))
      return toFunction(x, chain, "the scores are scaled by a value that is not a constant");
    if (x->isOp("arith.addf")) {
      const Term *a = x->operands[0], *b = x->operands[1];
      bool aScores = containsScores(a), bScores = containsScores(b);
      if (aScores == bScores)
        return toFunction(x, chain, "an addition to the scores that is not a mask");
      if (failed(classifyMask(aScores ? b : a, chain, scaledAfter))) {
        std::string why = outcome.why;
        return toFunction(x, chain, why);
      }
      x = aScores ? a : b;
      continue;
    }
    if (x->isOp("arith.select")) {
      const Term *t = x->operands[1], *f = x->operands[2];
      if (isMaskingConstant(f) && containsScores(t)) {
        chain.finiteFill |= std::isfinite(stripFloatCasts(f)->constant);
        chain.keeps.push_back({x->operands[0], true});
        x = t;
        continue;
      }
      if (isMaskingConstant(t) && containsScores(f)) {
        chain.finiteFill |= std::isfinite(stripFloatCasts(t)->constant);
        chain.keeps.push_back({x->operands[0], false});
        x = f;
        continue;
      }
      return toFunction(x, chain, "a select on the scores that is not a mask with -inf");
    }
    return toFunction(x, chain,
                      llvm::formatv("the scores pass through {0}",
                                    x->kind == Term::Kind::Op ? x->name
                                                              : StringRef("a reduction")));
  }
}

/// The rest of the scores chain, `x`, as a score function of the scores,
/// when it is one: it reads one Q·Kᵀ, reduces nothing, and never rounds the
/// scores through integers (masking in integers changes what the source
/// computes). `otherwise` is the reason given when it is not.
LogicalResult AttentionRaiser::toFunction(const Term *x, ScoresChain &chain,
                                          const Twine &otherwise) {
  const Term *leaf = nullptr;
  bool ok = true;
  std::function<void(const Term *)> visit = [&](const Term *t) {
    if (t->kind == Term::Kind::Reduce || t->isOp("arith.fptosi") || t->isOp("arith.fptoui"))
      ok = false;
    if (t->kind == Term::Kind::Leaf && asContraction(t->tensor.getDefiningOp())) {
      if (leaf && !sameTerm(leaf, t))
        ok = false;
      leaf = t;
    }
    for (const Term *o : t->operands)
      visit(o);
  };
  visit(x);
  if (!ok || !leaf)
    return fail(otherwise);
  chain.scores = leaf;
  chain.function = x;
  chain.functionScale = chain.scale;
  chain.scale = 1.0;
  outcome.notes.push_back(("as a score function: " + otherwise).str());
  return success();
}

/// True when `t` reads a contraction's result: the scores side of a sum.
bool AttentionRaiser::containsScores(const Term *t) {
  if (t->kind == Term::Kind::Leaf)
    return static_cast<bool>(asContraction(t->tensor.getDefiningOp()));
  return llvm::any_of(t->operands, [&](const Term *o) { return containsScores(o); });
}

FailureOr<Value> AttentionRaiser::run() {
  linalg::LinalgOp op = pv.op;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned loops = op.getNumLoops();
  ranges = op.getStaticLoopRanges();
  TermBuilder terms(context, loops, pv.k, [](Value v) {
    return static_cast<bool>(asContraction(v.getDefiningOp()));
  });
  // P reads the queries and the keys, V the keys and the output columns:
  // P is the operand with an exp in it, on either side (O[e, i] = Σ V·P
  // makes the queries the contraction's n).
  int pIndex = -1;
  const Term *p = nullptr;
  for (int i = 0; i < 2 && pIndex < 0; ++i) {
    bool readsM = maps[i].isFunctionOfDim(pv.m), readsN = maps[i].isFunctionOfDim(pv.n);
    if (readsM == readsN)
      continue;
    const Term *candidate = terms.build(op.getDpsInputOperand(i)->get(), maps[i]);
    if (!containsExp(candidate))
      continue;
    pIndex = i;
    p = candidate;
    if (readsN)
      std::swap(pv.m, pv.n); // from here on pv.m is the queries
  }
  if (pIndex < 0)
    return fail("not a product of probabilities and values");
  outcome.attentionLike = true;
  OpOperand *vOperand = op.getDpsInputOperand(1 - pIndex);

  const Term *x = nullptr;
  if (failed(matchSoftmax(p, x)))
    return failure();
  ScoresChain chain;
  if (failed(peelScores(x, chain)))
    return failure();

  // The scores' contraction: its loops as labels of this point space.
  Contraction qk = *asContraction(chain.scores->tensor.getDefiningOp());
  AffineMap qkOut = qk.op.getIndexingMapMatchingResult(cast<OpResult>(chain.scores->tensor));
  constexpr int kUnassigned = -10;
  SmallVector<int> qkLabel(qk.op.getNumLoops(), kUnassigned);
  SmallVector<unsigned> unitLoops; // read at 0: size-1 dims
  for (auto [pos, e] : llvm::enumerate(qkOut.getResults())) {
    auto loop = dyn_cast<AffineDimExpr>(e);
    if (!loop)
      return fail("the scores' contraction writes a constant index");
    AffineExpr read = chain.scores->map.getResult(pos);
    if (auto d = dyn_cast<AffineDimExpr>(read))
      qkLabel[loop.getPosition()] = d.getPosition();
    else if (isa<AffineConstantExpr>(read))
      unitLoops.push_back(loop.getPosition());
    else
      return fail("the scores are read at something other than a query, key or batch index");
  }
  qkLabel[qk.k] = kHeadDim;
  int queries = pv.m, keys = pv.k;
  // A size-1 dim (a batch of 1, a single query) is read at 0 whatever its
  // loop: give each such loop of the scores the point dim of size 1 it
  // stands for (queries for Q·Kᵀ's rows, keys for its columns, batch dims
  // in order).
  auto taken = [&](int label) { return llvm::is_contained(qkLabel, label); };
  for (unsigned loop : unitLoops) {
    SmallVector<int> wanted;
    if (loop == qk.m)
      wanted = {queries, keys};
    else if (loop == qk.n)
      wanted = {keys, queries};
    else
      wanted.assign(pv.batch.begin(), pv.batch.end());
    for (int label : wanted)
      if (ranges[label] == 1 && !taken(label)) {
        qkLabel[loop] = label;
        break;
      }
    if (qkLabel[loop] == kUnassigned)
      return fail("the scores are read at something other than a query, key or batch index");
  }
  bool mIsQuery = qkLabel[qk.m] == queries && qkLabel[qk.n] == keys;
  bool nIsQuery = qkLabel[qk.n] == queries && qkLabel[qk.m] == keys;
  if (!mIsQuery && !nIsQuery)
    return fail("the scores' rows and columns are not the queries and the keys");
  for (unsigned b : qk.batch)
    if (!llvm::is_contained(pv.batch, static_cast<unsigned>(qkLabel[b])))
      return fail("the scores' batch dims are not P·V's");
  if (qk.batch.size() != pv.batch.size())
    return fail("the scores and P·V have different batch dims");
  for (auto [n, b] : llvm::enumerate(qk.batch))
    for (unsigned other : ArrayRef(qk.batch).drop_front(n + 1))
      if (qkLabel[b] == qkLabel[other])
        return fail("two batch dims of the scores are read at one index");

  SmallVector<AffineMap> qkMaps = qk.op.getIndexingMapsArray();
  auto labelsOf = [&](AffineMap map, ArrayRef<int> loopLabels) {
    SmallVector<int> labels;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        labels.push_back(loopLabels[d.getPosition()]);
      else
        labels.push_back(kUnit);
    }
    return labels;
  };
  unsigned qIndex = qkMaps[0].isFunctionOfDim(mIsQuery ? qk.m : qk.n) ? 0 : 1;
  Labelled query{qk.op.getDpsInputOperand(qIndex)->get(), labelsOf(qkMaps[qIndex], qkLabel)};
  Labelled key{qk.op.getDpsInputOperand(1 - qIndex)->get(),
               labelsOf(qkMaps[1 - qIndex], qkLabel)};
  SmallVector<int> pointLabels;
  for (unsigned d = 0; d < loops; ++d)
    pointLabels.push_back(d);
  Labelled value{vOperand->get(), labelsOf(maps[1 - pIndex], pointLabels)};
  query = lookThrough(query, &chain.scale);
  // sdpa's H is the last batch dim: K/V repeated along it are read with
  // their own (fewer) heads, if both are.
  int heads = pv.batch.empty() ? kUnit : static_cast<int>(pv.batch.back());
  double keyScale = 1.0;
  Labelled groupedKey = lookThrough(key, &keyScale, heads);
  Labelled groupedValue = lookThrough(value, nullptr, heads);
  auto headsOf = [&](const Labelled &l) -> int64_t {
    for (auto [d, label] : llvm::enumerate(l.labels))
      if (label == heads)
        return cast<RankedTensorType>(l.tensor.getType()).getDimSize(d);
    return 1;
  };
  if (headsOf(groupedKey) == headsOf(groupedValue) &&
      groupedKey.tiledHeads == groupedValue.tiledHeads) {
    key = groupedKey;
    value = groupedValue;
    chain.scale *= keyScale;
  } else {
    key = lookThrough(key, &chain.scale);
    value = lookThrough(value, nullptr);
  }

  Type elementType = getElementTypeOrSelf(query.tensor.getType());
  if (getElementTypeOrSelf(key.tensor.getType()) != elementType ||
      getElementTypeOrSelf(value.tensor.getType()) != elementType ||
      getElementTypeOrSelf(op->getResult(0).getType()) != elementType)
    return fail("Q, K, V and the output do not have one element type");
  if (!isa<Float32Type, Float16Type, BFloat16Type>(elementType))
    return fail("the element type is not f32, f16 or bf16");
  float scale = static_cast<float>(chain.scale);
  if (!(scale > 0) || !std::isfinite(scale))
    return fail("the product of the scales is not a positive finite f32");

  // Keep-masks: bands of key − query position become causal and window.
  int64_t tq = ranges[queries], tk = ranges[keys];
  bool staticLengths = !ShapedType::isDynamic(tq) && !ShapedType::isDynamic(tk);
  Band band;
  std::optional<Labelled> mask;
  SmallVector<std::pair<const Term *, bool>> modKeeps; // the mask function's
  for (auto [cond, keepWhenTrue] : chain.keeps) {
    std::string why;
    const Term *c = cond;
    if (!keepWhenTrue) {
      // keep where the condition is false: analyse its negation
      std::optional<Band> dropped = analyzeBand(c, queries, keys, why);
      if (dropped) {
        std::optional<Band> kept = complement(*dropped, why);
        if (!kept)
          return fail(why);
        band = intersect(band, *kept);
        continue;
      }
    } else if (std::optional<Band> kept = analyzeBand(c, queries, keys, why)) {
      band = intersect(band, *kept);
      continue;
    }
    if (std::optional<Band> kept = bandOfConstant(c, queries, keys, tq, tk, /*additive=*/false); kept && keepWhenTrue) {
      chain.constantBands.push_back(*kept);
      continue;
    }
    // Not a band: an i1 tensor is sdpa's keep-mask operand; anything else
    // a mask function.
    if (c->kind == Term::Kind::Leaf && c->type.isInteger(1) && keepWhenTrue && !mask &&
        !chain.additive) {
      mask = Labelled{c->tensor, labelsOf(c->map, pointLabels)};
      continue;
    }
    if (c->reads(chain.scores->tensor))
      return fail("a keep condition that reads the scores");
    modKeeps.push_back({c, keepWhenTrue});
  }
  for (const Band &kept : chain.constantBands)
    band = intersect(band, kept);
  if (chain.additive) {
    if (mask)
      return fail("an i1 mask and an additive mask together");
    if (chain.additive->type != elementType)
      return fail("the additive mask's element type is not the scores'");
    mask = Labelled{chain.additive->tensor, labelsOf(chain.additive->map, pointLabels)};
  }

  CausalKindAttr causal;
  WindowAttr window;
  bool rowsKeepAKey = true;
  if (band.lo || band.hi) {
    if (band.lo && band.hi && *band.lo > *band.hi)
      return fail("the mask keeps no key at all");
    if (band.hi && *band.hi < 0)
      rowsKeepAKey = false;
    if (band.lo && !(staticLengths && tq - 1 + *band.lo <= tk - 1))
      rowsKeepAKey = false;
    std::optional<int64_t> shift; // the diagonal: j − i = shift
    if (band.hi && *band.hi == 0) {
      causal = CausalKindAttr::get(context, CausalKind::top_left);
      shift = 0;
    } else if (band.hi && staticLengths && *band.hi == tk - tq) {
      causal = CausalKindAttr::get(context, CausalKind::bottom_right);
      shift = tk - tq;
    }
    if (causal) {
      if (band.lo)
        window = WindowAttr::get(context, *shift - *band.lo, std::nullopt, std::nullopt);
    } else if ((!band.lo || *band.lo <= 0) && (!band.hi || *band.hi >= 0)) {
      std::optional<int64_t> left, right;
      if (band.lo)
        left = -*band.lo;
      if (band.hi)
        right = *band.hi;
      window = WindowAttr::get(context, left, right, CausalKind::top_left);
    } else if (staticLengths && (!band.lo || *band.lo <= tk - tq) &&
               (!band.hi || *band.hi >= tk - tq)) {
      std::optional<int64_t> left, right;
      if (band.lo)
        left = tk - tq - *band.lo;
      if (band.hi)
        right = *band.hi - (tk - tq);
      window = WindowAttr::get(context, left, right, CausalKind::bottom_right);
    } else {
      return fail(llvm::formatv("the mask keeps the band {0} <= key - query <= {1}, which "
                                "does not hold either diagonal",
                                band.lo ? std::to_string(*band.lo) : "-inf",
                                band.hi ? std::to_string(*band.hi) : "inf"));
    }
  }
  if (mask || !modKeeps.empty())
    rowsKeepAKey = false; // a mask tensor or function can drop a whole row
  if (chain.function && mayBeMinusInf(chain.function, chain.scores))
    rowsKeepAKey = false; // so can a score function that yields -inf
  if (!rowsKeepAKey && nanGuard && !chain.finiteFill) {
    // The source zeroes a row that keeps no key, as sdpa does.
    rowsKeepAKey = true;
    outcome.notes.push_back("the source's NaN guard zeroes the rows that keep no key, as "
                            "attn.sdpa does");
  }
  if (!rowsKeepAKey) {
    if (!zeroEmptyRows)
      return fail("a query row may keep no key: the source gives NaN (or a mean of V) "
                  "there and attn.sdpa gives 0; pass zero-empty-rows to raise anyway");
    outcome.notes.push_back("a query row that keeps no key gives 0 here where the source "
                            "gives NaN or a mean of V (zero-empty-rows)");
  }

  // Build the sdpa in [B, H, T, D].
  SmallVector<int> batch(pv.batch.begin(), pv.batch.end());
  unsigned nb = batch.size();
  auto orderOf = [&](int a, int b) {
    SmallVector<int> order(batch);
    order.push_back(a);
    order.push_back(b);
    return order;
  };
  if (mask && nb > 2)
    return fail("a mask with more than two batch dims");
  rewriter.setInsertionPoint(op);
  FailureOr<Value> q = arrange(query, orderOf(queries, kHeadDim), false);
  if (failed(q))
    return failure();
  FailureOr<Value> k = arrange(key, orderOf(keys, kHeadDim), false);
  if (failed(k))
    return failure();
  FailureOr<Value> v = arrange(value, orderOf(keys, pv.n), false);
  if (failed(v))
    return failure();
  Value maskValue;
  if (mask) {
    FailureOr<Value> m = arrange(*mask, orderOf(queries, keys), true);
    if (failed(m))
      return failure();
    maskValue = toRank4(*m, nb);
  }
  SmallVector<OpFoldResult> batchSizes;
  for (unsigned d = 0; d < nb; ++d)
    batchSizes.push_back(tensor::getMixedSize(rewriter, op.getLoc(), *q, d));
  Value q4 = toRank4(*q, nb), k4 = toRank4(*k, nb), v4 = toRank4(*v, nb);
  // K/V repeated by tiling: query head h = g·Hkv + j reads K/V head j. The
  // sdpa groups query heads j·G … j·G + G − 1 on K/V head j, so Q's heads
  // (and a per-head mask's) are reordered into that grouping and the
  // output's back: two head transposes instead of a G-fold K/V copy.
  int64_t tiledGroup = 1, kvHeads = cast<RankedTensorType>(k4.getType()).getDimSize(1);
  if (key.tiledHeads) {
    int64_t h = cast<RankedTensorType>(q4.getType()).getDimSize(1);
    if (ShapedType::isDynamic(h) || ShapedType::isDynamic(kvHeads) || h % kvHeads)
      return fail("K/V repeated by tiling over a dynamic number of heads");
    tiledGroup = h / kvHeads;
  }
  if (tiledGroup > 1) {
    if (chain.function || !modKeeps.empty())
      return fail("a score or mask function with K/V repeated by tiling (it reads the "
                  "query head, which the raise reorders)");
    q4 = swapHeadFactors(q4, tiledGroup, kvHeads);
    if (maskValue && cast<RankedTensorType>(maskValue.getType()).getDimSize(1) != 1)
      maskValue = swapHeadFactors(maskValue, tiledGroup, kvHeads);
    outcome.notes.push_back("K/V repeated by tiling: the query heads are reordered into "
                            "groups and the output's back (no K/V copy)");
  }
  auto q4Type = cast<RankedTensorType>(q4.getType());
  auto v4Type = cast<RankedTensorType>(v4.getType());
  auto resultType = RankedTensorType::get(
      {q4Type.getDimSize(0), q4Type.getDimSize(1), q4Type.getDimSize(2), v4Type.getDimSize(3)},
      elementType);
  // Score and mask functions: what no named feature holds.
  std::optional<FunctionBuilder> functions;
  if (chain.function || !modKeeps.empty()) {
    if (nb > 2 && llvm::any_of(ArrayRef(batch).drop_back(),
                               [&](int d) { return ShapedType::isDynamic(ranges[d]); }))
      return fail("a score or mask function over dynamic batch dims");
    FunctionPositions positions{batch, {}, queries, keys};
    for (int d : batch)
      positions.batchSizes.push_back(ranges[d]);
    functions.emplace(rewriter, op.getLoc(), positions, chain.scores);
    std::string why;
    if (chain.function && failed(functions->addCaptures(chain.function, why)))
      return fail(why);
    for (auto [c, keepWhenTrue] : modKeeps)
      if (failed(functions->addCaptures(c, why)))
        return fail(why);
  }
  auto sdpaOp = SdpaOp::create(
      rewriter, op.getLoc(), resultType, q4, k4, v4, maskValue, Value(), Value(), Value(),
      /*runtime_seed=*/Value(), functions ? ValueRange(functions->getCaptures()) : ValueRange(),
      rewriter.getF32FloatAttr(scale), causal, FloatAttr(), window, FloatAttr(), IntegerAttr());
  if (functions) {
    std::string why;
    if (chain.function &&
        failed(functions->buildScore(sdpaOp.getScoreMod(), chain.function, chain.functionScale,
                                     why))) {
      rewriter.eraseOp(sdpaOp);
      return fail(why);
    }
    if (!modKeeps.empty() && failed(functions->buildMask(sdpaOp.getMaskMod(), modKeeps, why))) {
      rewriter.eraseOp(sdpaOp);
      return fail(why);
    }
  }
  Value sdpa = sdpaOp.getResult();
  outcome.sdpa = sdpa.getDefiningOp();
  if (tiledGroup > 1)
    sdpa = swapHeadFactors(sdpa, kvHeads, tiledGroup);
  Value o = fromRank4(sdpa, nb, batchSizes);
  // [batch…, queries, columns] into the output's own order.
  SmallVector<int> outLabels = labelsOf(op.getMatchingIndexingMap(op.getDpsInitOperand(0)),
                                        pointLabels);
  Labelled arranged{o, orderOf(queries, pv.n)};
  // The output's dims in order: transpose `o` so that its labels become outLabels.
  FailureOr<Value> result = arrange(arranged, outLabels, false);
  if (failed(result))
    return failure();
  if (result->getType() != op->getResult(0).getType())
    *result = tensor::CastOp::create(rewriter, op.getLoc(), op->getResult(0).getType(), *result);
  return *result;
}

