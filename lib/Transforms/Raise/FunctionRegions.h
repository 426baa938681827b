//===- FunctionRegions.h - terms as score and mask functions ----*- C++ -*-===//
//
// What attn-raise cannot name (a softcap, ALiBi or a bias table written
// out, a mask computed from a tensor, a run-time bound) it can still write
// as attn.sdpa's score and mask function regions: the term is emitted op by
// op over the function's (score, b, h, q, kv) arguments, every tensor it
// reads becomes a capture.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TRANSFORMS_RAISE_FUNCTIONREGIONS_H
#define ATTN_TRANSFORMS_RAISE_FUNCTIONREGIONS_H

#include "ElementTerm.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::attn::raise {

/// Which point dims are the functions' b, h, q and kv: the batch dims
/// (the last is h, the others fold into b, with their static sizes), the
/// queries and the keys.
struct FunctionPositions {
  SmallVector<int> batch;
  SmallVector<int64_t> batchSizes;
  int queries, keys;
};

class FunctionBuilder {
public:
  FunctionBuilder(RewriterBase &rewriter, Location loc, FunctionPositions positions,
                  const Term *scores)
      : rewriter(rewriter), loc(loc), positions(std::move(positions)), scores(scores) {}

  /// Makes every leaf of `t` other than the scores a capture (a scalar as
  /// a rank-0 tensor, built at the rewriter's insertion point).
  LogicalResult addCaptures(const Term *t, std::string &why);
  ArrayRef<Value> getCaptures() const { return captures; }

  /// The body of a score function: `scale · t` with the scores as the
  /// function's score argument.
  LogicalResult buildScore(Region &region, const Term *t, double scale, std::string &why);
  /// The body of a mask function: every condition (negated where its flag
  /// is false) holds.
  LogicalResult buildMask(Region &region, ArrayRef<std::pair<const Term *, bool>> conditions,
                          std::string &why);

private:
  Block *createBody(Region &region, bool score);
  Value emit(OpBuilder &b, const Term *t, std::string &why);
  Value emitIndex(OpBuilder &b, AffineExpr e, std::string &why);

  RewriterBase &rewriter;
  Location loc;
  FunctionPositions positions;
  const Term *scores;
  SmallVector<Value> captures;
  llvm::DenseMap<Value, unsigned> captureOf; ///< source value → capture number
  // Per body being built:
  Block *body = nullptr;
  SmallVector<Value> pointValues; ///< per point dim: its index in the body
  llvm::DenseMap<const Term *, Value> emitted;
};

/// True when `t` may be −inf or NaN where its inputs are finite scores: a
/// masking constant, a log, a division by a non-constant, a read of a
/// tensor that is not a finite constant.
bool mayBeMinusInf(const Term *t, const Term *scores);

} // namespace mlir::attn::raise

#endif // ATTN_TRANSFORMS_RAISE_FUNCTIONREGIONS_H
