//===- LinalgBuilders.h - what the reference patterns build from -*- C++ -*-===//
//
// Small builders the reference lowering's patterns share (AttnToLinalg.cpp,
// SoftmaxToLinalg.cpp, SdpaGradToLinalg.cpp) and the vector-Jacobian rules
// (lib/Transforms/Differentiate/VjpRules.cpp): compute types and casts,
// empty and filled tensors, one contraction or elementwise linalg.generic,
// the GQA head map and group sums.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLINALG_LINALGBUILDERS_H
#define ATTN_LIB_CONVERSION_ATTNTOLINALG_LINALGBUILDERS_H

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::attn::linalg_lowering {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

inline RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Scalar float cast to `to` (extf/truncf or nothing).
inline Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

inline Value floatConst(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}

inline Value negInf(OpBuilder &b, Location loc, Type t) {
  return floatConst(b, loc, t, -std::numeric_limits<double>::infinity());
}

/// The reified result sizes of `op`.
inline SmallVector<OpFoldResult> resultSizes(OpBuilder &b, Operation *op) {
  ReifiedRankedShapedTypeDims dims;
  LogicalResult ok = reifyResultShapes(b, op, dims);
  assert(succeeded(ok) && "attn ops reify their result shapes");
  (void)ok;
  return dims[0];
}

inline Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elt) {
  return tensor::EmptyOp::create(b, loc, sizes, elt);
}

inline Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Type elt,
             double value) {
  Value init = emptyTensor(b, loc, sizes, elt);
  return linalg::FillOp::create(b, loc, ValueRange{floatConst(b, loc, elt, value)},
                                ValueRange{init})
      .getResult(0);
}

/// Sizes of all dims of `v` except the last.
inline SmallVector<OpFoldResult> leadingSizes(OpBuilder &b, Location loc, Value v) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  sizes.pop_back();
  return sizes;
}

/// Rounds an f32 accumulator to `elt` (no-op for f32).
inline Value roundTo(OpBuilder &b, Location loc, Value acc, Type elt,
              ArrayRef<OpFoldResult> sizes) {
  if (tensorType(acc).getElementType() == elt)
    return acc;
  int64_t rank = sizes.size();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, TypeRange{RankedTensorType::get(tensorType(acc).getShape(), elt)},
             ValueRange{acc}, ValueRange{emptyTensor(b, loc, sizes, elt)},
             ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(rank, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, castFloat(nb, nl, args[0], elt));
             })
      .getResult(0);
}

/// A contraction out[outDims] += a[aDims] * b[bDims] over `numLoops` loops
/// whose kinds are `iters`, accumulated in the compute type and rounded to
/// the result element type.
inline Value contraction(OpBuilder &b, Location loc, Value lhs, AffineMap lhsMap,
                  Value rhs, AffineMap rhsMap, Value acc, AffineMap accMap,
                  ArrayRef<IteratorType> iters) {
  Type accElt = tensorType(acc).getElementType();
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs},
             ValueRange{acc}, ArrayRef<AffineMap>{lhsMap, rhsMap, accMap}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = castFloat(nb, nl, args[0], accElt);
               Value y = castFloat(nb, nl, args[1], accElt);
               Value prod = arith::MulFOp::create(nb, nl, x, y);
               linalg::YieldOp::create(nb, nl,
                                       arith::AddFOp::create(nb, nl, args[2], prod).getResult());
             })
      .getResult(0);
}

/// An elementwise generic over `input` (same shape result of type
/// `resultType`), with extra `inputs` read through `extraMaps`; `body` gets
/// the builder, the location, the block arguments (input, extras..., out).
inline Value elementwise(OpBuilder &b, Location loc, Value input, ValueRange extras,
                  ArrayRef<AffineMap> extraMaps, RankedTensorType resultType,
                  ArrayRef<OpFoldResult> sizes,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = resultType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps{id};
  maps.append(extraMaps.begin(), extraMaps.end());
  maps.push_back(id);
  SmallVector<Value> inputs{input};
  inputs.append(extras.begin(), extras.end());
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs,
             ValueRange{emptyTensor(b, loc, sizes, resultType.getElementType())},
             maps, SmallVector<IteratorType>(rank, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args));
             })
      .getResult(0);
}

/// H / Hkv for query heads `h` and key/value heads `hkv`, which must be
/// static for the affine head map.
inline FailureOr<int64_t> groupSize(Operation *op, int64_t h, int64_t hkv,
                             ConversionPatternRewriter &rewriter) {
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv))
    return rewriter.notifyMatchFailure(op, "dynamic head counts");
  return h / hkv;
}

/// (b, h, ...) -> (b, h floordiv g, ...) selecting the key/value head.
inline AffineExpr kvHead(AffineExpr h, int64_t g) { return g == 1 ? h : h.floorDiv(g); }

/// `x` [B, H, T, n] viewed as [B, Hkv, G, T, n].
inline Value splitGroups(OpBuilder &b, Location loc, Value x, int64_t hkv, int64_t g) {
  auto t = tensorType(x);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  SmallVector<OpFoldResult> out{sizes[0], b.getIndexAttr(hkv), b.getIndexAttr(g), sizes[2],
                                sizes[3]};
  auto type = RankedTensorType::get(
      {t.getDimSize(0), hkv, g, t.getDimSize(2), t.getDimSize(3)}, t.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, x,
                                       SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
                                       out);
}

/// out[b, g, j, n] = Σ_{r, i} lhs[b, g, r, i, j] · rhs[b, g, r, i, n]: the
/// transposed product summed over the query heads of each group, in
/// accumulatorType of lhs's element type.
inline Value groupedTransposedProduct(OpBuilder &b, Location loc, Value lhs, Value rhs,
                               ArrayRef<OpFoldResult> outSizes) {
  MLIRContext *ctx = b.getContext();
  // Loops (b, g, r, i, j, n): n innermost, so that the loop nest's inner
  // loop is out[j, :] += lhs[i, j] · rhs[i, :] over contiguous rows.
  AffineExpr bb, g, r, i, j, n;
  bindDims(ctx, bb, g, r, i, j, n);
  auto map = [&](ArrayRef<AffineExpr> e) { return AffineMap::get(6, 0, e, ctx); };
  Value acc = filled(b, loc, outSizes, accumulatorType(tensorType(lhs).getElementType()), 0.0);
  return contraction(b, loc, lhs, map({bb, g, r, i, j}), rhs, map({bb, g, r, i, n}), acc,
                     map({bb, g, j, n}), {kPar, kPar, kRed, kRed, kPar, kPar});
}

} // namespace mlir::attn::linalg_lowering

#endif // ATTN_LIB_CONVERSION_ATTNTOLINALG_LINALGBUILDERS_H
