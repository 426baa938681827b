//===- AttnShapes.h - shape rules shared by builders and verifiers -*- C++ -*-===//
//
// Each op's result shape is computed by one function here; builders use it to
// infer the result type and verifiers compare the declared type against it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_DIALECT_ATTNSHAPES_H
#define ATTN_LIB_DIALECT_ATTNSHAPES_H

#include "attn/Dialect/AttnDialect.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::attn::shapes {

inline constexpr int64_t kDyn = ShapedType::kDynamic;

inline RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
/// Dim `i` of `v`, or dynamic when `v` has no such dim (bad rank: the
/// verifier reports it).
inline int64_t dimOf(Value v, int64_t i) {
  RankedTensorType t = tensorType(v);
  return i >= 0 && i < t.getRank() ? t.getDimSize(i) : kDyn;
}
inline bool isDyn(int64_t d) { return ShapedType::isDynamic(d); }
/// Two dims that may still be equal at run time.
inline bool agree(int64_t a, int64_t b) { return isDyn(a) || isDyn(b) || a == b; }
inline int64_t mulDims(int64_t a, int64_t b) {
  return isDyn(a) || isDyn(b) ? kDyn : a * b;
}
inline int64_t divDims(int64_t a, int64_t b) {
  return isDyn(a) || isDyn(b) || b == 0 ? kDyn : a / b;
}
inline std::string dimStr(int64_t d) {
  return isDyn(d) ? std::string("?") : std::to_string(d);
}

/// Index of the input-width and output-width dims of a projection weight.
inline int64_t weightInDim(WeightLayout l) { return l == WeightLayout::out_in ? 1 : 0; }
inline int64_t weightOutDim(WeightLayout l) { return l == WeightLayout::out_in ? 0 : 1; }

llvm::SmallVector<int64_t> projectShape(Value input, Value weight, WeightLayout layout);
llvm::SmallVector<int64_t> splitHeadsShape(Value input, int64_t numHeads);
llvm::SmallVector<int64_t> mergeHeadsShape(Value input);
llvm::SmallVector<int64_t> scoresShape(Value query, Value key);
llvm::SmallVector<int64_t> weightedSumShape(Value probs, Value value);
llvm::SmallVector<int64_t> sdpaShape(Value query, Value value);
llvm::SmallVector<int64_t> mhaShape(Value queryInput, Value wo, WeightLayout layout);

llvm::SmallVector<int64_t> gatherPagesShape(Value cache, Value table, KvLayout layout);

/// The result type of `shape` with `like`'s element type.
RankedTensorType resultType(ArrayRef<int64_t> shape, Value like);

/// Dim `i` of `v`, a constant when static.
OpFoldResult mixedDim(OpBuilder &b, Location loc, Value v, int64_t i);
/// x·y, folded when both are constants.
OpFoldResult foldMul(OpBuilder &b, Location loc, OpFoldResult x, OpFoldResult y);

/// Fails (with a diagnostic where a location is given) unless every named
/// operand is a ranked tensor: the shape rules read their dims.
LogicalResult requireRanked(std::optional<Location> loc, StringRef opName,
                            std::initializer_list<std::pair<StringRef, Value>> operands);

/// The one result type `result()` gives, once the named operands are known
/// to be ranked tensors (else an error naming the first that is not).
LogicalResult inferOne(std::optional<Location> loc, StringRef opName,
                       std::initializer_list<std::pair<StringRef, Value>> operands,
                       function_ref<RankedTensorType()> result, SmallVectorImpl<Type> &types);

} // namespace mlir::attn::shapes

#endif // ATTN_LIB_DIALECT_ATTNSHAPES_H
