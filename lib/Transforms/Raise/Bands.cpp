//===- Bands.cpp - masks that keep a band of key − query positions --------===//
#include "Bands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <vector>

using namespace mlir;
using namespace mlir::attn::raise;


namespace {
/// ci·i + cj·j + c, and whether the value is known non-negative.
struct Linear {
  int64_t ci = 0, cj = 0, c = 0;
  bool nonNegative = true;
};
} // namespace

static std::optional<Linear> linearOf(AffineExpr e, unsigned i, unsigned j) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    Linear l;
    if (d.getPosition() == i)
      l.ci = 1;
    else if (d.getPosition() == j)
      l.cj = 1;
    else
      return std::nullopt;
    return l;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    Linear l;
    l.c = c.getValue();
    l.nonNegative = l.c >= 0;
    return l;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  auto a = linearOf(bin.getLHS(), i, j), b = linearOf(bin.getRHS(), i, j);
  if (!a || !b)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add)
    return Linear{a->ci + b->ci, a->cj + b->cj, a->c + b->c,
                  a->nonNegative && b->nonNegative};
  if (e.getKind() == AffineExprKind::Mul && b->ci == 0 && b->cj == 0)
    return Linear{a->ci * b->c, a->cj * b->c, a->c * b->c,
                  a->nonNegative && b->nonNegative};
  return std::nullopt;
}

static std::optional<Linear> linearOf(const Term *t, unsigned i, unsigned j) {
  switch (t->kind) {
  case Term::Kind::Constant:
    if (t->constant != std::floor(t->constant))
      return std::nullopt;
    return Linear{0, 0, static_cast<int64_t>(t->constant), t->constant >= 0};
  case Term::Kind::Index:
    return linearOf(t->index, i, j);
  case Term::Kind::Op: {
    StringRef n = t->name;
    if (n == "arith.index_cast" || n == "arith.index_castui" || n == "arith.extsi" ||
        n == "arith.sitofp" || n == "arith.uitofp" || n == "arith.extf")
      return linearOf(t->operands[0], i, j);
    if (t->operands.size() != 2)
      return std::nullopt;
    auto a = linearOf(t->operands[0], i, j), b = linearOf(t->operands[1], i, j);
    if (!a || !b)
      return std::nullopt;
    if (n == "arith.addi" || n == "arith.addf")
      return Linear{a->ci + b->ci, a->cj + b->cj, a->c + b->c,
                    a->nonNegative && b->nonNegative};
    if (n == "arith.subi" || n == "arith.subf")
      return Linear{a->ci - b->ci, a->cj - b->cj, a->c - b->c, false};
    if ((n == "arith.muli" || n == "arith.mulf") && b->ci == 0 && b->cj == 0)
      return Linear{a->ci * b->c, a->cj * b->c, a->c * b->c,
                    a->nonNegative && b->nonNegative};
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

/// An i1 term without the round trips through wider integers source
/// compilers leave (`trunci(extui(c))`, `extui(c) != 0`); `negated` flips
/// for `extui(c) == 0` and `c xor true`.
static const Term *stripBoolCasts(const Term *t, bool &negated) {
  while (true) {
    if ((t->isOp("arith.trunci") || t->isOp("arith.extui") || t->isOp("arith.extsi")) &&
        t->operands[0]->type.isInteger(1) == t->type.isInteger(1) &&
        t->operands[0]->type.isInteger(1)) {
      t = t->operands[0];
      continue;
    }
    if (t->isOp("arith.trunci") && t->type.isInteger(1)) {
      // trunci(ext(c : i1)) = c
      const Term *inner = t->operands[0];
      if ((inner->isOp("arith.extui") || inner->isOp("arith.extsi")) &&
          inner->operands[0]->type.isInteger(1)) {
        t = inner->operands[0];
        continue;
      }
      // Chains of extensions and truncations of an i1.
      while ((inner->isOp("arith.extui") || inner->isOp("arith.extsi") ||
              inner->isOp("arith.trunci")) && !inner->type.isInteger(1))
        inner = inner->operands[0];
      if (inner->type.isInteger(1)) {
        t = inner;
        continue;
      }
      return t;
    }
    if (t->isOp("arith.cmpi") && t->operands[1]->isConstant() &&
        t->operands[1]->constant == 0 &&
        (t->predicate == static_cast<int64_t>(arith::CmpIPredicate::ne) ||
         t->predicate == static_cast<int64_t>(arith::CmpIPredicate::eq))) {
      const Term *inner = t->operands[0];
      while (inner->isOp("arith.extui") || inner->isOp("arith.trunci"))
        inner = inner->operands[0];
      if (!inner->type.isInteger(1))
        return t;
      if (t->predicate == static_cast<int64_t>(arith::CmpIPredicate::eq))
        negated = !negated;
      t = inner;
      continue;
    }
    if (t->isOp("arith.xori") && t->operands[1]->isConstant() &&
        t->operands[1]->constant == 1 && t->type.isInteger(1)) {
      negated = !negated;
      t = t->operands[0];
      continue;
    }
    return t;
  }
}

std::optional<Band> mlir::attn::raise::analyzeBand(const Term *cond, unsigned i,
                                                   unsigned j, std::string &why) {
  bool negated = false;
  cond = stripBoolCasts(cond, negated);
  std::optional<Band> band;
  if (cond->isConstant()) {
    if (cond->constant == 0) {
      why = "the mask keeps no key at all";
      return std::nullopt;
    }
    band = Band{};
  } else if (cond->isOp("arith.andi") && !negated) {
    auto a = analyzeBand(cond->operands[0], i, j, why);
    if (!a)
      return std::nullopt;
    auto b = analyzeBand(cond->operands[1], i, j, why);
    if (!b)
      return std::nullopt;
    return intersect(*a, *b);
  } else if (cond->isOp("arith.cmpi") || cond->isOp("arith.cmpf")) {
    auto a = linearOf(cond->operands[0], i, j), b = linearOf(cond->operands[1], i, j);
    if (!a || !b) {
      why = "the mask compares positions with something other than constants";
      return std::nullopt;
    }
    Linear l{a->ci - b->ci, a->cj - b->cj, a->c - b->c};
    if (l.cj == 0 || l.ci != -l.cj || (l.cj != 1 && l.cj != -1)) {
      why = "the mask is not a function of the key position minus the query position";
      return std::nullopt;
    }
    // l = s·x + c with x = j − i; the condition is `l pred 0`.
    enum Rel { LT, LE, GT, GE, EQ, NE, Bad } rel = Bad;
    bool isUnsigned = false;
    if (cond->isOp("arith.cmpi")) {
      using P = arith::CmpIPredicate;
      switch (static_cast<P>(cond->predicate)) {
      case P::slt: rel = LT; break;
      case P::sle: rel = LE; break;
      case P::sgt: rel = GT; break;
      case P::sge: rel = GE; break;
      case P::eq: rel = EQ; break;
      case P::ne: rel = NE; break;
      case P::ult: rel = LT; isUnsigned = true; break;
      case P::ule: rel = LE; isUnsigned = true; break;
      case P::ugt: rel = GT; isUnsigned = true; break;
      case P::uge: rel = GE; isUnsigned = true; break;
      }
    } else {
      using P = arith::CmpFPredicate;
      switch (static_cast<P>(cond->predicate)) {
      case P::OLT: case P::ULT: rel = LT; break;
      case P::OLE: case P::ULE: rel = LE; break;
      case P::OGT: case P::UGT: rel = GT; break;
      case P::OGE: case P::UGE: rel = GE; break;
      case P::OEQ: case P::UEQ: rel = EQ; break;
      case P::ONE: case P::UNE: rel = NE; break;
      default: break;
      }
    }
    if (isUnsigned && !(a->nonNegative && b->nonNegative)) {
      why = "the mask compares possibly negative positions unsigned";
      return std::nullopt;
    }
    if (rel == Bad || rel == NE) {
      why = "the mask's comparison is not an ordering";
      return std::nullopt;
    }
    // s·x + c REL 0  ⇔  x REL' t
    int64_t t = l.cj == 1 ? -l.c : l.c;
    if (l.cj == -1)
      rel = rel == LT ? GT : rel == LE ? GE : rel == GT ? LT : rel == GE ? LE : rel;
    band = Band{};
    switch (rel) {
    case LT: band->hi = t - 1; break;
    case LE: band->hi = t; break;
    case GT: band->lo = t + 1; break;
    case GE: band->lo = t; break;
    case EQ: band->lo = band->hi = t; break;
    default: break;
    }
  } else {
    why = "the mask is not a comparison of positions";
    return std::nullopt;
  }
  if (!negated)
    return band;
  return complement(*band, why);
}

Band mlir::attn::raise::intersect(const Band &a, const Band &b) {
  auto pick = [](std::optional<int64_t> x, std::optional<int64_t> y, bool max) {
    if (!x)
      return y;
    if (!y)
      return x;
    return std::optional<int64_t>(max ? std::max(*x, *y) : std::min(*x, *y));
  };
  return Band{pick(a.lo, b.lo, true), pick(a.hi, b.hi, false)};
}

std::optional<Band> mlir::attn::raise::complement(const Band &band, std::string &why) {
  if (band.lo && band.hi) {
    why = "the mask keeps everything outside a band";
    return std::nullopt;
  }
  if (band.hi)
    return Band{*band.hi + 1, std::nullopt};
  if (band.lo)
    return Band{std::nullopt, *band.lo - 1};
  why = "the mask keeps no key at all";
  return std::nullopt;
}

std::optional<Band> mlir::attn::raise::bandOfConstant(const Term *leaf, unsigned queries,
                                                      unsigned keys, int64_t tq, int64_t tk,
                                                      bool additive) {
  if (leaf->kind != Term::Kind::Leaf)
    return std::nullopt;
  DenseElementsAttr dense;
  if (!matchPattern(leaf->tensor, m_Constant(&dense)))
    return std::nullopt;
  if (ShapedType::isDynamic(tq) || ShapedType::isDynamic(tk) || tq * tk > (1 << 24))
    return std::nullopt;
  auto type = cast<RankedTensorType>(leaf->tensor.getType());
  SmallVector<int> role; // per tensor dim: 0 constant index, 1 query, 2 key
  for (AffineExpr e : leaf->map.getResults()) {
    if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
      role.push_back(0);
    else if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == queries)
      role.push_back(1);
    else if (d && d.getPosition() == keys)
      role.push_back(2);
    else
      return std::nullopt;
  }
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int64_t d = type.getRank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * type.getDimSize(d + 1);
  // Each element: 1 kept, 0 dropped, -1 neither.
  std::vector<int8_t> kept;
  if (!additive) {
    if (!dense.getElementType().isInteger(1))
      return std::nullopt;
    for (bool b : dense.getValues<bool>())
      kept.push_back(b ? 1 : 0);
  } else {
    if (!isa<FloatType>(dense.getElementType()))
      return std::nullopt;
    for (APFloat f : dense.getValues<APFloat>()) {
      double v = f.convertToDouble();
      kept.push_back(v == 0 ? 1 : v <= -1e30 ? 0 : -1);
    }
  }
  auto keep = [&](int64_t i, int64_t j) -> std::optional<bool> {
    int64_t flat = 0;
    for (auto [d, r] : llvm::enumerate(role))
      flat += strides[d] * (r == 1 ? i : r == 2 ? j : 0);
    int8_t k = kept[dense.isSplat() ? 0 : flat];
    if (k < 0)
      return std::nullopt;
    return k == 1;
  };
  std::optional<int64_t> lo, hi;
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j) {
      std::optional<bool> k = keep(i, j);
      if (!k)
        return std::nullopt;
      if (*k) {
        lo = lo ? std::min(*lo, j - i) : j - i;
        hi = hi ? std::max(*hi, j - i) : j - i;
      }
    }
  if (!lo)
    return std::nullopt;
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j)
      if (*keep(i, j) != (*lo <= j - i && j - i <= *hi))
        return std::nullopt;
  Band band;
  if (*lo > -(tq - 1))
    band.lo = *lo;
  if (*hi < tk - 1)
    band.hi = *hi;
  return band;
}

