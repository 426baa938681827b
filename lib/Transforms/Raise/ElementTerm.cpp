//===- ElementTerm.cpp - what one element of a tensor computes ------------===//
#include "ElementTerm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::raise;

//===----------------------------------------------------------------------===//
// Term queries
//===----------------------------------------------------------------------===//

bool Term::reads(Value v) const {
  if (kind == Kind::Leaf)
    return tensor == v;
  return llvm::any_of(operands, [&](const Term *t) { return t->reads(v); });
}

bool Term::dependsOn(unsigned dim, unsigned reducedDim) const {
  switch (kind) {
  case Kind::Constant:
    return false;
  case Kind::Leaf:
    return map.isFunctionOfDim(dim);
  case Kind::Index:
    return index.isFunctionOfDim(dim);
  case Kind::Reduce:
    if (dim == reducedDim)
      return false; // bound by the reduction
    [[fallthrough]];
  case Kind::Op:
    return llvm::any_of(operands,
                        [&](const Term *t) { return t->dependsOn(dim, reducedDim); });
  }
  return true;
}

bool mlir::attn::raise::sameTerm(const Term *a, const Term *b) {
  if (a == b)
    return true;
  if (a->kind != b->kind || a->operands.size() != b->operands.size())
    return false;
  switch (a->kind) {
  case Term::Kind::Constant:
    return a->constant == b->constant;
  case Term::Kind::Leaf:
    return a->tensor == b->tensor && a->map == b->map;
  case Term::Kind::Index:
    return a->index == b->index;
  case Term::Kind::Op:
    if (a->name != b->name || a->predicate != b->predicate)
      return false;
    break;
  case Term::Kind::Reduce:
    if (a->reduction != b->reduction)
      return false;
    break;
  }
  for (auto [x, y] : llvm::zip_equal(a->operands, b->operands))
    if (!sameTerm(x, y))
      return false;
  return true;
}

const Term *mlir::attn::raise::stripFloatCasts(const Term *t) {
  while (t->isOp("arith.extf") || t->isOp("arith.truncf"))
    t = t->operands[0];
  return t;
}

//===----------------------------------------------------------------------===//
// TermBuilder
//===----------------------------------------------------------------------===//

const Term *TermBuilder::make(Term t) {
  terms.push_back(std::move(t));
  return &terms.back();
}

const Term *TermBuilder::constant(double value, Type type) {
  Term t{Term::Kind::Constant, type};
  t.constant = value;
  return make(std::move(t));
}

const Term *TermBuilder::leaf(Value v, AffineMap map) {
  Term t{Term::Kind::Leaf, getElementTypeOrSelf(v.getType())};
  t.tensor = v;
  t.map = map;
  return make(std::move(t));
}

/// Evaluates an op of constants: the scale `1 / sqrt(64)` written as three
/// ops is one number.
const Term *TermBuilder::fold(Term t) {
  if (t.kind != Term::Kind::Op ||
      !llvm::all_of(t.operands, [](const Term *o) { return o->isConstant(); }))
    return make(std::move(t));
  auto arg = [&](unsigned n) { return t.operands[n]->constant; };
  std::optional<double> v;
  StringRef n = t.name;
  if (t.operands.size() == 1) {
    if (n == "arith.negf")
      v = -arg(0);
    else if (n == "math.sqrt")
      v = std::sqrt(arg(0));
    else if (n == "math.rsqrt")
      v = 1.0 / std::sqrt(arg(0));
    else if (n == "math.exp")
      v = std::exp(arg(0));
    else if (n == "math.log")
      v = std::log(arg(0));
    else if (n == "arith.extf" || n == "arith.truncf" || n == "arith.sitofp" ||
             n == "arith.index_cast" || n == "arith.extsi")
      v = arg(0);
  } else if (t.operands.size() == 2) {
    if (n == "arith.addf" || n == "arith.addi")
      v = arg(0) + arg(1);
    else if (n == "arith.subf" || n == "arith.subi")
      v = arg(0) - arg(1);
    else if (n == "arith.mulf" || n == "arith.muli")
      v = arg(0) * arg(1);
    else if (n == "arith.divf")
      v = arg(0) / arg(1);
    else if (n == "math.powf")
      v = std::pow(arg(0), arg(1));
  }
  if (!v)
    return make(std::move(t));
  return constant(*v, t.type);
}

/// The splat value of a constant tensor or the value of a scalar constant.
static std::optional<double> constantValue(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (!dense.isSplat())
      return std::nullopt;
    attr = dense.getSplatValue<Attribute>();
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isInteger(1))
      return i.getValue().getBoolValue() ? 1.0 : 0.0;
    return static_cast<double>(i.getValue().getSExtValue());
  }
  return std::nullopt;
}

/// An arith or math op with one result: what a term can hold.
static bool isArithOrMath(Operation *def) {
  return def && def->getNumResults() == 1 && def->getDialect() &&
         isa<arith::ArithDialect, math::MathDialect>(def->getDialect());
}

/// The Op term of `def` (its name and compare predicate), operands to add.
static Term opTerm(Operation *def, Type type) {
  Term t{Term::Kind::Op, type};
  t.name = def->getName().getStringRef();
  if (auto pred = def->getAttrOfType<IntegerAttr>("predicate"))
    t.predicate = pred.getInt();
  return t;
}

const Term *TermBuilder::build(Value v, AffineMap map) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type) { // a scalar: a constant, arith/math of scalars, or opaque
    if (auto c = constantValue(v))
      return constant(*c, v.getType());
    Operation *def = v.getDefiningOp();
    if (isArithOrMath(def) &&
        llvm::none_of(def->getOperandTypes(), [](Type t) { return isa<ShapedType>(t); })) {
      Term t = opTerm(def, v.getType());
      for (Value operand : def->getOperands())
        t.operands.push_back(build(operand, AffineMap()));
      return fold(std::move(t));
    }
    return leaf(v, AffineMap::get(rank, 0, {}, context));
  }
  // A unit dim is read at 0 whatever the map says.
  SmallVector<AffineExpr> results(map.getResults());
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (size == 1)
      results[d] = getAffineConstantExpr(0, context);
  map = AffineMap::get(rank, 0, results, context);
  auto key = std::make_pair(v, map);
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  const Term *t = nullptr;
  if (!stop(v))
    t = buildFromDef(v, map);
  if (!t)
    t = leaf(v, map);
  memo[key] = t;
  return t;
}

/// Index maps through reshapes: `group` of the expanded dims holds one
/// dim of the collapsed tensor.
static AffineExpr linearize(ArrayRef<AffineExpr> expanded, ArrayRef<int64_t> sizes) {
  // A collapse read back through an expand: the exprs are the
  // delinearisation of one index E (E mod n_last, (E floordiv s) mod n, …),
  // which stays in bounds, so the linearisation is E itself.
  if (auto last = dyn_cast<AffineBinaryOpExpr>(expanded.back());
      last && last.getKind() == AffineExprKind::Mod &&
      last.getRHS() == getAffineConstantExpr(sizes.back(), last.getContext())) {
    AffineExpr e = last.getLHS();
    int64_t stride = 1;
    bool roundTrip = true;
    for (int64_t k = expanded.size() - 1; k >= 0 && roundTrip; --k) {
      roundTrip = expanded[k] == e.floorDiv(stride) % sizes[k];
      stride *= sizes[k];
    }
    if (roundTrip)
      return e;
  }
  AffineExpr sum;
  int64_t stride = 1;
  for (int64_t k = expanded.size() - 1; k >= 0; --k) {
    AffineExpr term = expanded[k] * stride;
    sum = sum ? sum + term : term;
    stride *= sizes[k];
  }
  return sum;
}

const Term *TermBuilder::buildFromDef(Value v, AffineMap map) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return nullptr;
  if (auto c = constantValue(v))
    return constant(*c, getElementTypeOrSelf(v.getType()));

  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return build(cast.getSource(), map);

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    // Source dim s is the linearisation of its group of result dims.
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    SmallVector<AffineExpr> src;
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      SmallVector<AffineExpr> exprs;
      SmallVector<int64_t> sizes;
      for (int64_t d : group) {
        if (shape[d] == 1)
          continue;
        exprs.push_back(map.getResult(d));
        sizes.push_back(shape[d]);
      }
      if (exprs.empty()) {
        src.push_back(getAffineConstantExpr(0, context));
        continue;
      }
      if (llvm::any_of(ArrayRef(sizes).drop_front(), ShapedType::isDynamic))
        return nullptr;
      src.push_back(linearize(exprs, sizes));
    }
    return build(expand.getSrc(), AffineMap::get(rank, 0, src, context));
  }

  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    // Result dim r is the linearisation of its group of source dims.
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    SmallVector<AffineExpr> src(shape.size());
    for (auto [r, group] : llvm::enumerate(collapse.getReassociationIndices())) {
      SmallVector<int64_t> nonUnit;
      for (int64_t d : group) {
        src[d] = getAffineConstantExpr(0, context);
        if (shape[d] != 1)
          nonUnit.push_back(d);
      }
      if (nonUnit.size() == 1) {
        src[nonUnit[0]] = map.getResult(r);
        continue;
      }
      int64_t stride = 1;
      for (int64_t k = nonUnit.size() - 1; k >= 0; --k) {
        int64_t size = shape[nonUnit[k]];
        if (ShapedType::isDynamic(size))
          return nullptr;
        src[nonUnit[k]] = map.getResult(r).floorDiv(stride) % size;
        stride *= size;
      }
    }
    return build(collapse.getSrc(), AffineMap::get(rank, 0, src, context));
  }

  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
    if (!linalgOp.hasPureTensorSemantics())
      return nullptr;
    unsigned r = cast<OpResult>(v).getResultNumber();
    OpOperand *init = linalgOp.getDpsInitOperand(r);
    AffineMap out = linalgOp.getMatchingIndexingMap(init);
    unsigned loops = linalgOp.getNumLoops();
    SmallVector<unsigned> reductions;
    linalgOp.getReductionDims(reductions);
    if (reductions.size() > 1)
      return nullptr;
    // phi: the op's loop dims as functions of the point.
    SmallVector<AffineExpr> phi(loops);
    for (auto [p, e] : llvm::enumerate(out.getResults())) {
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        phi[d.getPosition()] = map.getResult(p);
        continue;
      }
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c || c.getValue() != 0)
        return nullptr;
    }
    bool reducing = !reductions.empty();
    if (reducing && reducedDim >= rank)
      return nullptr; // this point space has no dim to reduce over
    if (reducing) {
      if (map.isFunctionOfDim(reducedDim))
        return nullptr; // not a reduction over the keys of this point
      phi[reductions[0]] = getAffineDimExpr(reducedDim, context);
    }
    if (llvm::any_of(phi, [](AffineExpr e) { return !e; }))
      return nullptr;
    AffineMap phiMap = AffineMap::get(rank, 0, phi, context);

    Block *body = linalgOp.getBlock();
    SmallVector<const Term *> args(body->getNumArguments(), nullptr);
    for (OpOperand &operand : linalgOp->getOpOperands()) {
      if (linalgOp.isDpsInit(&operand) && (reducing || !linalgOp.payloadUsesValueFromOperand(&operand)))
        continue;
      BlockArgument arg = linalgOp.getMatchingBlockArgument(&operand);
      if (!isa<ShapedType>(operand.get().getType())) {
        args[arg.getArgNumber()] = build(operand.get(), AffineMap());
        continue;
      }
      AffineMap m = linalgOp.getMatchingIndexingMap(&operand).compose(phiMap);
      args[arg.getArgNumber()] = build(operand.get(), m);
    }
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    Value yielded = yield.getOperand(r);
    llvm::DenseMap<Value, const Term *> seen;
    if (!reducing)
      return fromBody(yielded, args, phi, seen);

    // A reduction: yielded = combine(x, acc) with acc the init's argument.
    Value acc = linalgOp.getMatchingBlockArgument(init);
    Operation *combine = yielded.getDefiningOp();
    if (!combine || combine->getBlock() != body)
      return nullptr;
    Term::Reduction kind;
    Value x;
    auto other = [&](Value a, Value b) -> Value {
      return a == acc ? b : b == acc ? a : Value();
    };
    if (isa<arith::AddFOp>(combine)) {
      kind = Term::Reduction::Sum;
      x = other(combine->getOperand(0), combine->getOperand(1));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine)) {
      kind = Term::Reduction::Max;
      x = other(combine->getOperand(0), combine->getOperand(1));
    } else if (auto select = dyn_cast<arith::SelectOp>(combine)) {
      // select(cmpf(gt, a, b), a, b) and select(cmpf(lt, a, b), b, a).
      auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
      if (!cmp)
        return nullptr;
      using P = arith::CmpFPredicate;
      P pred = cmp.getPredicate();
      bool gt = pred == P::OGT || pred == P::OGE || pred == P::UGT || pred == P::UGE;
      bool lt = pred == P::OLT || pred == P::OLE || pred == P::ULT || pred == P::ULE;
      Value t = select.getTrueValue(), f = select.getFalseValue();
      bool isMax = (gt && cmp.getLhs() == t && cmp.getRhs() == f) ||
                   (lt && cmp.getLhs() == f && cmp.getRhs() == t);
      if (!isMax)
        return nullptr;
      kind = Term::Reduction::Max;
      x = other(t, f);
    } else {
      return nullptr;
    }
    if (!x)
      return nullptr;
    const Term *bodyTerm = fromBody(x, args, phi, seen);
    if (!bodyTerm)
      return nullptr;
    const Term *initTerm = build(init->get(), out.compose(phiMap));
    Term t{Term::Kind::Reduce, getElementTypeOrSelf(v.getType())};
    t.reduction = kind;
    t.operands = {bodyTerm, initTerm};
    return make(std::move(t));
  }

  // Elementwise arith/math on whole tensors (TOSA-like, or written by hand).
  if (isArithOrMath(def) && def->hasTrait<OpTrait::Elementwise>()) {
    Term t = opTerm(def, getElementTypeOrSelf(v.getType()));
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()))
        return nullptr;
      t.operands.push_back(build(operand, map));
    }
    return fold(std::move(t));
  }
  return nullptr;
}

const Term *TermBuilder::fromBody(Value yielded, ArrayRef<const Term *> args,
                                  ArrayRef<AffineExpr> indices,
                                  llvm::DenseMap<Value, const Term *> &seen) {
  if (auto it = seen.find(yielded); it != seen.end())
    return it->second;
  const Term *result = nullptr;
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (!isa<linalg::LinalgOp>(owner))
      result = build(yielded, AffineMap()); // a scalar from outside the body
    else if (arg.getArgNumber() < args.size())
      result = args[arg.getArgNumber()];
    seen[yielded] = result;
    return result;
  }
  Operation *def = yielded.getDefiningOp();
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    AffineExpr e = indices[index.getDim()];
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      result = constant(c.getValue(), yielded.getType());
    } else {
      Term t{Term::Kind::Index, yielded.getType()};
      t.index = e;
      result = make(std::move(t));
    }
  } else if (auto c = constantValue(yielded)) {
    result = constant(*c, yielded.getType());
  } else if (!isa<linalg::LinalgOp>(def->getParentOp())) {
    result = build(yielded, AffineMap()); // a scalar from outside the body
  } else if (isArithOrMath(def)) {
    Term t = opTerm(def, yielded.getType());
    bool ok = true;
    for (Value operand : def->getOperands()) {
      const Term *o = fromBody(operand, args, indices, seen);
      if (!o) {
        ok = false;
        break;
      }
      t.operands.push_back(o);
    }
    if (ok)
      result = fold(std::move(t));
  }
  seen[yielded] = result;
  return result;
}
