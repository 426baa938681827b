//===- AttentionLayouts.cpp - Q, K, V and O to and from [B, H, T, D] -----===//
//
// attn-raise's reshapes: a labelled tensor to the dim order the sdpa
// wants (unit dims dropped or inserted, one transpose), batch dims folded
// into or unfolded from sdpa's B and H; and the reading of Q, K and V
// through transposes, broadcasts and head repeats (lookThrough).
//
//===----------------------------------------------------------------------===//
#include "RaiseAttention.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::attn::raise;

bool mlir::attn::raise::isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::CastOp, linalg::TransposeOp>(op);
}

Value mlir::attn::raise::viewSource(Operation *op) {
  if (auto t = dyn_cast<linalg::TransposeOp>(op))
    return t.getInput();
  return op->getOperand(0);
}

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

/// Reads through transposes, broadcasts of unit dims and (when `scale` is
/// given) a multiplication by a constant to the tensor they start from.
/// With `headLabel`, K/V repeated per query head group (GQA written as
/// repeat_interleave: head h reads head h floordiv G of the source) are
/// read through too: the source keeps its Hkv heads under that label. So
/// are K/V repeated by tiling (`repeat`: head h reads head h mod Hkv), which
/// the result marks `tiledHeads`.
///
/// Reading as far as it goes can end past the tensor that holds the heads:
/// at a projection's [B·T, H·D] output beneath the head split, where the
/// repeat is no longer one dim's floordiv. Then a second attempt stops at
/// the head split's expand_shape.
Labelled AttentionRaiser::lookThrough(Labelled in, double *scale, int headLabel) {
  Labelled out = lookThroughUntil(in, scale, headLabel, [](Value) { return false; });
  if (out.tensor != in.tensor)
    return out;
  return lookThroughUntil(in, scale, headLabel, [](Value v) {
    return v.getDefiningOp<tensor::ExpandShapeOp>() != nullptr;
  });
}

Labelled AttentionRaiser::lookThroughUntil(Labelled in, double *scale, int headLabel,
                                           const std::function<bool(Value)> &stop) {
  auto type = cast<RankedTensorType>(in.tensor.getType());
  unsigned rank = type.getRank();
  TermBuilder terms(context, rank, rank, stop);
  const Term *t = terms.build(in.tensor, AffineMap::getMultiDimIdentityMap(rank, context));
  double factor = 1.0;
  const Term *inner;
  double c;
  if (scale && (t->isOp("arith.mulf") || t->isOp("arith.divf")) && splitConstant(t, inner, c) &&
      (t->isOp("arith.mulf") || inner == t->operands[0]) && inner->kind == Term::Kind::Leaf) {
    factor = t->isOp("arith.mulf") ? c : 1.0 / c;
    if (!(factor > 0) || !std::isfinite(factor))
      return in;
    t = inner;
  }
  if (t->kind != Term::Kind::Leaf || t->tensor == in.tensor)
    return in;
  if (getElementTypeOrSelf(t->tensor.getType()) != type.getElementType())
    return in;
  Labelled out{t->tensor, {}};
  SmallVector<bool> used(rank, false);
  auto sourceType = cast<RankedTensorType>(t->tensor.getType());
  for (auto [pos, e] : llvm::enumerate(t->map.getResults())) {
    // (h floordiv G) mod Hkv, or h floordiv G: a repeated head.
    AffineExpr inner = e;
    if (auto mod = dyn_cast<AffineBinaryOpExpr>(e); mod && mod.getKind() == AffineExprKind::Mod &&
        mod.getRHS() == getAffineConstantExpr(sourceType.getDimSize(pos), context))
      inner = mod.getLHS();
    if (auto div = dyn_cast<AffineBinaryOpExpr>(inner);
        div && div.getKind() == AffineExprKind::FloorDiv && isa<AffineDimExpr>(div.getLHS()) &&
        isa<AffineConstantExpr>(div.getRHS())) {
      unsigned d = cast<AffineDimExpr>(div.getLHS()).getPosition();
      int64_t group = cast<AffineConstantExpr>(div.getRHS()).getValue();
      if (in.labels[d] != headLabel || headLabel == kUnit || used[d] ||
          ShapedType::isDynamic(type.getDimSize(d)) ||
          sourceType.getDimSize(pos) * group != type.getDimSize(d))
        return in;
      used[d] = true;
      out.labels.push_back(headLabel);
      continue;
    }
    if (auto d = dyn_cast<AffineDimExpr>(inner); d && inner != e) {
      // h mod Hkv: a tiled repeat of the heads.
      unsigned h = d.getPosition();
      if (in.labels[h] != headLabel || headLabel == kUnit || used[h] ||
          ShapedType::isDynamic(type.getDimSize(h)) ||
          type.getDimSize(h) % sourceType.getDimSize(pos) != 0)
        return in;
      used[h] = true;
      out.tiledHeads = true;
      out.labels.push_back(headLabel);
      continue;
    }
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (used[d.getPosition()])
        return in;
      used[d.getPosition()] = true;
      out.labels.push_back(in.labels[d.getPosition()]);
    } else if (isa<AffineConstantExpr>(e)) {
      out.labels.push_back(kUnit);
    } else {
      return in; // a reshape that is not a repeat
    }
  }
  // Every non-unit dim of `in` must still be there.
  for (unsigned d = 0; d < rank; ++d)
    if (!used[d] && type.getDimSize(d) != 1)
      return in;
  if (scale)
    *scale *= factor;
  return out;
}
