//===- ElementTerm.h - what one element of a tensor computes ----*- C++ -*-===//
//
// attn-raise reads generic IR (linalg on tensors, elementwise arith/math on
// tensors) as scalar expressions: the value of one element of a tensor as a
// function of a point of an iteration space. Bodies of elementwise and
// reducing linalg ops are inlined, broadcasts, transposes and unit-dim
// reshapes become index maps, fills and splats become constants. Whatever
// is not read through (function arguments, contractions, unknown ops) is a
// leaf: `tensor[map(point)]`. The patterns then match softmax, scales and
// masks on these terms, whichever way the source compiler split them into
// ops.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TRANSFORMS_RAISE_ELEMENTTERM_H
#define ATTN_TRANSFORMS_RAISE_ELEMENTTERM_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <functional>
#include <optional>

namespace mlir::attn::raise {

/// One node of an element's expression.
struct Term {
  enum class Kind {
    Constant, ///< `constant` (integers and i1 too)
    Leaf,     ///< `tensor[map(point)]`
    Index,    ///< the affine function `index` of the point
    Op,       ///< arith/math op `name` of `operands` (`predicate` for compares)
    Reduce,   ///< max or sum of `operands[0]` over the point's reduced dim
  };
  enum class Reduction { Max, Sum };

  Term(Kind kind, Type type) : kind(kind), type(type) {}

  Kind kind;
  Type type;                           ///< the element type
  double constant = 0;                 ///< Constant
  Value tensor;                        ///< Leaf
  AffineMap map;                       ///< Leaf
  AffineExpr index;                    ///< Index
  StringRef name;                      ///< Op: the op's name, e.g. "arith.addf"
  int64_t predicate = -1;              ///< Op: cmpf/cmpi predicate
  Reduction reduction = Reduction::Sum; ///< Reduce
  SmallVector<const Term *, 3> operands; ///< Op; Reduce: {body, init}

  bool isConstant() const { return kind == Kind::Constant; }
  bool isOp(StringRef opName) const { return kind == Kind::Op && name == opName; }
  /// True when the term reads `v` somewhere.
  bool reads(Value v) const;
  /// True when the term depends on point dim `dim` (outside reductions over it).
  bool dependsOn(unsigned dim, unsigned reducedDim) const;
};

/// Structural equality (same leaves read at the same maps, same ops).
bool sameTerm(const Term *a, const Term *b);
/// `t` without float extensions and truncations around it.
const Term *stripFloatCasts(const Term *t);

/// Builds terms over a point space of `rank` dims whose dim `reducedDim` is
/// the one reductions run over (the keys of an attention).
class TermBuilder {
public:
  /// `stop(v)`: true when `v` must stay a leaf even if it could be read
  /// through (the contractions the pattern matches itself).
  TermBuilder(MLIRContext *context, unsigned rank, unsigned reducedDim,
              std::function<bool(Value)> stop)
      : context(context), rank(rank), reducedDim(reducedDim), stop(stop) {}

  /// Element `map(point)` of `v` (a ranked tensor): `map` has `rank` dims
  /// and one result per dim of `v`.
  const Term *build(Value v, AffineMap map);

  unsigned getRank() const { return rank; }
  unsigned getReducedDim() const { return reducedDim; }

private:
  const Term *make(Term t);
  const Term *leaf(Value v, AffineMap map);
  const Term *constant(double value, Type type);
  const Term *fold(Term t);
  const Term *buildFromDef(Value v, AffineMap map);
  /// The term of `yielded` inside a linalg body whose block arguments are
  /// `args` (null where the argument is not available) and whose
  /// linalg.index ops give `indices`.
  const Term *fromBody(Value yielded, ArrayRef<const Term *> args,
                       ArrayRef<AffineExpr> indices,
                       llvm::DenseMap<Value, const Term *> &seen);

  MLIRContext *context;
  unsigned rank, reducedDim;
  std::function<bool(Value)> stop; // owned: callers pass temporaries
  std::deque<Term> terms;
  llvm::DenseMap<std::pair<Value, AffineMap>, const Term *> memo;
};

} // namespace mlir::attn::raise

#endif // ATTN_TRANSFORMS_RAISE_ELEMENTTERM_H
