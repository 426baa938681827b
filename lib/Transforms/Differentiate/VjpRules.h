//===- VjpRules.h - what the attn ops' VJP rules share ---------*- C++ -*-===//
//
// The builders the vector-Jacobian rules of VjpRules.cpp and
// ScoreFunctionVjp.cpp share (internal to the Differentiate folder).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_TRANSFORMS_DIFFERENTIATE_VJPRULES_H
#define ATTN_LIB_TRANSFORMS_DIFFERENTIATE_VJPRULES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::vjp {

using TermFn = function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)>;

/// out[outMap] = Σ, over the loops `iters` marks as reductions, of
/// term(the inputs read through `maps`, widened to f32) — the product of
/// the inputs when no term is given —, accumulated in f32 (f64 for an f64
/// `elt`) and rounded to `elt`; `sizes` are the result's.
Value reduceTerms(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<AffineMap> maps,
                  AffineMap outMap, ArrayRef<utils::IteratorType> iters,
                  ArrayRef<OpFoldResult> sizes, Type elt, TermFn term = nullptr);

/// out[i...] = body(first[i...], the others read through `otherMaps`, all
/// widened to f32, f64 for f64), computed in that type and rounded to
/// first's element type.
Value pointwise(OpBuilder &b, Location loc, Value first, ValueRange others,
                ArrayRef<AffineMap> otherMaps, TermFn body);

/// dy where the forward's result y is not −inf, 0 where it is (the keep
/// rules' derivative: a masked score is the constant −inf).
Value keptAdjoint(OpBuilder &b, Location loc, Value dy, Value y);

/// Whether `v` is computed from an argument of the function (an adjoint can
/// reach one; attn.no_grad arguments are constants), following operands
/// back through their defining ops.
bool dependsOnArgument(Value v);

/// Fills the empty region `dst` with d f / d score of the score function
/// in `src` (ScoreFunctionVjp.cpp).
LogicalResult buildScoreDerivative(OpBuilder &b, Location loc, Region &src, Region &dst);

/// Attaches the rules of attn.score_mod and attn.mask_mod.
void attachScoreFunctionVjps(MLIRContext *ctx);

} // namespace mlir::attn::vjp

#endif // ATTN_LIB_TRANSFORMS_DIFFERENTIATE_VJPRULES_H
