//===- AttentionLayouts.cpp - Q, K, V and O to and from [B, H, T, D] -----===//
//
// attn-raise's reshapes: a labelled tensor to the dim order the sdpa
// wants (unit dims dropped or inserted, one transpose), batch dims folded
// into or unfolded from sdpa's B and H.
//
//===----------------------------------------------------------------------===//
#include "RaiseAttention.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::attn::raise;

std::optional<Contraction> mlir::attn::raise::asContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() || linalgOp.getNumDpsInputs() != 2 ||
      linalgOp.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(linalgOp))
    return std::nullopt;
  // linalg contractions accumulate into their init: only a zero init is a
  // plain product.
  Value init = linalgOp.getDpsInitOperand(0)->get();
  unsigned rank = cast<RankedTensorType>(init.getType()).getRank();
  TermBuilder terms(op->getContext(), rank, rank, [](Value) { return false; });
  const Term *start =
      terms.build(init, AffineMap::getMultiDimIdentityMap(rank, op->getContext()));
  if (!start->isConstant() || start->constant != 0)
    return std::nullopt;
  auto dims = linalg::inferContractionDims(linalgOp);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  return Contraction{linalgOp, SmallVector<unsigned>(dims->batch.begin(), dims->batch.end()), dims->m[0], dims->n[0],
                     dims->k[0]};
}

FailureOr<Value> AttentionRaiser::arrange(Labelled in, ArrayRef<int> order,
                                          bool unitsAllowed) {
  Location loc = pv.op.getLoc();
  Value t = in.tensor;
  auto type = cast<RankedTensorType>(t.getType());
  // 1. Drop the unit dims.
  SmallVector<int> present;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (auto [d, label] : llvm::enumerate(in.labels)) {
    pending.push_back(d);
    if (label == kUnit || !llvm::is_contained(order, label)) {
      if (type.getDimSize(d) != 1)
        return fail("an operand has a dim the sdpa has no place for");
      continue;
    }
    present.push_back(label);
    groups.push_back(pending);
    pending.clear();
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  if (present.size() != in.labels.size())
    t = tensor::CollapseShapeOp::create(rewriter, loc, t, groups);
  // 2. Transpose into `order`.
  SmallVector<int64_t> perm(present.size());
  llvm::iota_range<int64_t> all(0, present.size(), false);
  llvm::copy(all, perm.begin());
  llvm::sort(perm, [&](int64_t a, int64_t b) {
    return llvm::find(order, present[a]) < llvm::find(order, present[b]);
  });
  if (!llvm::is_sorted(perm)) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, t);
    SmallVector<OpFoldResult> permuted;
    for (int64_t p : perm)
      permuted.push_back(sizes[p]);
    Value init = tensor::EmptyOp::create(rewriter, loc, permuted, type.getElementType());
    t = linalg::TransposeOp::create(rewriter, loc, t, init, perm)->getResult(0);
  }
  // 3. Insert unit dims for the labels `in` lacks (always for a dim of
  // size 1).
  if (present.size() == order.size())
    return t;
  for (int label : order)
    if (!llvm::is_contained(present, label) && !unitsAllowed &&
        !(label >= 0 && ranges[label] == 1))
      return fail("an operand lacks a dim the sdpa needs");
  auto sorted = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> expand;
  ReassociationIndices units;
  unsigned next = 0;
  for (auto [d, label] : llvm::enumerate(order)) {
    units.push_back(d);
    if (next < present.size() && present[perm[next]] == label) {
      shape.push_back(sorted.getDimSize(next++));
      expand.push_back(units);
      units.clear();
    } else {
      shape.push_back(1);
    }
  }
  if (!units.empty() && !expand.empty())
    expand.back().append(units.begin(), units.end());
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, resultType, t, expand).getResult();
}

/// [b₁…b_n, x, y] as [B, H, x, y].
Value AttentionRaiser::toRank4(Value v, unsigned batchCount) {
  Location loc = pv.op.getLoc();
  auto type = cast<RankedTensorType>(v.getType());
  if (batchCount == 2)
    return v;
  if (batchCount > 2) {
    ReassociationIndices first;
    for (unsigned d = 0; d + 1 < batchCount; ++d)
      first.push_back(d);
    SmallVector<ReassociationIndices> groups{first};
    for (unsigned d = batchCount - 1; d < batchCount + 2; ++d)
      groups.push_back({d});
    return tensor::CollapseShapeOp::create(rewriter, loc, v, groups);
  }
  unsigned added = 2 - batchCount;
  SmallVector<int64_t> shape(added, 1);
  llvm::append_range(shape, type.getShape());
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices first;
  for (unsigned d = 0; d <= added; ++d)
    first.push_back(d);
  groups.push_back(first);
  for (unsigned d = added + 1; d < 4; ++d)
    groups.push_back({d});
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, resultType, v, groups);
}

/// [B, H, x, y] as [b₁…b_n, x, y].
Value AttentionRaiser::fromRank4(Value v, unsigned batchCount,
                                 ArrayRef<OpFoldResult> batchSizes) {
  Location loc = pv.op.getLoc();
  auto type = cast<RankedTensorType>(v.getType());
  if (batchCount == 2)
    return v;
  if (batchCount < 2) {
    unsigned dropped = 2 - batchCount;
    ReassociationIndices first;
    for (unsigned d = 0; d <= dropped; ++d)
      first.push_back(d);
    SmallVector<ReassociationIndices> groups{first};
    for (unsigned d = dropped + 1; d < 4; ++d)
      groups.push_back({d});
    return tensor::CollapseShapeOp::create(rewriter, loc, v, groups);
  }
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  ReassociationIndices first;
  for (unsigned d = 0; d + 1 < batchCount; ++d) {
    first.push_back(d);
    std::optional<int64_t> c = getConstantIntValue(batchSizes[d]);
    shape.push_back(c ? *c : ShapedType::kDynamic);
    sizes.push_back(batchSizes[d]);
  }
  SmallVector<ReassociationIndices> groups{first};
  for (unsigned d = 1; d < 4; ++d) {
    groups.push_back({static_cast<int64_t>(batchCount - 2 + d)});
    shape.push_back(type.getDimSize(d));
    sizes.push_back(tensor::getMixedSize(rewriter, loc, v, d));
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, resultType, v, groups, sizes);
}

Value AttentionRaiser::swapHeadFactors(Value v, int64_t outer, int64_t inner) {
  Location loc = pv.op.getLoc();
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> groups{{0}, {1, 2}, {3}, {4}};
  auto expandedType = RankedTensorType::get(
      {type.getDimSize(0), outer, inner, type.getDimSize(2), type.getDimSize(3)},
      type.getElementType());
  Value e = tensor::ExpandShapeOp::create(rewriter, loc, expandedType, v, groups);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, e);
  std::swap(sizes[1], sizes[2]);
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  Value t = linalg::TransposeOp::create(rewriter, loc, e, init, ArrayRef<int64_t>{0, 2, 1, 3, 4})
                ->getResult(0);
  return tensor::CollapseShapeOp::create(rewriter, loc, t, groups);
}
