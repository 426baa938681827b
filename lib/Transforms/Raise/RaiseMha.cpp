//===- RaiseMha.cpp - projections, head split/merge and sdpa → attn.mha ---===//
//
// The last step of attn-raise: once the attention is an attn.sdpa and the
// contractions around it are attn.project, the head split and merge are
// still slices, reshapes and transposes. The whole block becomes one
// attn.mha when Q, K and V are each provably
// split_heads(slice(project(x, W) (+ b))) and the output projection reads
// merge_heads(sdpa).
//
// The proof is by index maps. Each view between a projection and the sdpa
// (tensor.extract_slice, expand_shape, collapse_shape, cast and
// linalg.transpose) maps an index of its result to an index of its source
// by an affine function; composed, X[i] = P[A·i + c], and a head split is
// one form of A and c. Static shapes only.
//
//===----------------------------------------------------------------------===//

#include "RaiseMha.h"
#include "RaiseAttention.h"
#include "attn/Dialect/AttnDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

namespace mlir::attn::raise {
namespace {

using Vec = SmallVector<int64_t>;

/// X[i] = Src[Σ_d i_d·cols[d] + offset] for a tensor X reached from Src
/// through views: cols[d] (of Src's rank) is how Src's index moves with
/// X's dim d.
struct ViewMap {
  Vec sizes;
  SmallVector<Vec> cols;
  Vec offset;

  static ViewMap identity(ArrayRef<int64_t> shape) {
    ViewMap m;
    m.sizes.assign(shape.begin(), shape.end());
    m.offset.assign(shape.size(), 0);
    for (size_t d = 0; d < shape.size(); ++d) {
      m.cols.emplace_back(shape.size(), 0);
      m.cols.back()[d] = 1;
    }
    return m;
  }
};

Vec scaled(ArrayRef<int64_t> v, int64_t s) {
  Vec r(v.begin(), v.end());
  for (int64_t &x : r)
    x *= s;
  return r;
}

Vec unitVec(size_t rank, size_t d, int64_t s = 1) {
  Vec r(rank, 0);
  r[d] = s;
  return r;
}

/// `m` pushed through `op` (source → result), or nullopt where the
/// result's index is not an affine function of the source's (a collapse of
/// dims that are not nested) or `op` is not a view.
std::optional<ViewMap> through(Operation *op, const ViewMap &m) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape())
    return std::nullopt;
  ViewMap r;
  r.offset = m.offset;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    ArrayRef<int64_t> offsets = slice.getStaticOffsets(), sizes = slice.getStaticSizes(),
                      strides = slice.getStaticStrides();
    if (ShapedType::isDynamicShape(offsets) || ShapedType::isDynamicShape(sizes) ||
        ShapedType::isDynamicShape(strides))
      return std::nullopt;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (size_t d = 0; d < m.cols.size(); ++d) {
      for (size_t s = 0; s < r.offset.size(); ++s)
        r.offset[s] += offsets[d] * m.cols[d][s];
      if (dropped.test(d))
        continue;
      r.cols.push_back(scaled(m.cols[d], strides[d]));
      r.sizes.push_back(sizes[d]);
    }
    return r;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    r.sizes.assign(resultType.getShape().begin(), resultType.getShape().end());
    r.cols.resize(r.sizes.size());
    for (auto [src, group] : llvm::enumerate(expand.getReassociationIndices())) {
      int64_t inner = 1;
      for (int64_t d : llvm::reverse(group)) {
        r.cols[d] = scaled(m.cols[src], inner);
        inner *= r.sizes[d];
      }
    }
    return r;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (ReassociationIndices group : collapse.getReassociationIndices()) {
      // Consecutive dims (size 1 ones aside) must nest: the outer one
      // moves the source index by the inner one's step times its size.
      // The merged dim steps as the innermost non-unit one.
      std::optional<int64_t> inner, innermost;
      int64_t size = 1;
      for (int64_t d : llvm::reverse(group)) {
        size *= m.sizes[d];
        if (m.sizes[d] == 1)
          continue;
        if (inner && m.cols[d] != scaled(m.cols[*inner], m.sizes[*inner]))
          return std::nullopt;
        if (!innermost)
          innermost = d;
        inner = d;
      }
      r.cols.push_back(innermost ? m.cols[*innermost] : Vec(m.offset.size(), 0));
      r.sizes.push_back(size);
    }
    return r;
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    for (int64_t d : transpose.getPermutation()) {
      r.cols.push_back(m.cols[d]);
      r.sizes.push_back(m.sizes[d]);
    }
    return r;
  }
  if (isa<tensor::CastOp>(op)) {
    r.cols = m.cols;
    r.sizes.assign(resultType.getShape().begin(), resultType.getShape().end());
    return r;
  }
  return std::nullopt;
}

/// `shape`'s identity pushed through `views` in order, or nullopt.
std::optional<ViewMap> compose(ArrayRef<int64_t> shape, ArrayRef<Operation *> views) {
  ViewMap m = ViewMap::identity(shape);
  for (Operation *view : views) {
    std::optional<ViewMap> next = through(view, m);
    if (!next)
      return std::nullopt;
    m = *next;
  }
  return m;
}

/// `g` is `P + b` with b a bias along P's last dim (1-D, or TOSA's
/// [1, …, 1, N] read at zeros): its P and b.
std::optional<std::pair<Value, Value>> asBiasAdd(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add || body.getOperations().size() != 2)
    return std::nullopt;
  unsigned rank = g.getNumLoops();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, g.getContext());
  AffineMap last = AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, g.getContext()));
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[2] != id)
    return std::nullopt;
  auto isBiasMap = [&](AffineMap map, Value operand) {
    if (map == last)
      return true;
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape() || map.getNumResults() != type.getRank() ||
        map.getResults().back() != last.getResult(0))
      return false;
    // Each leading dim of size 1 read at 0: a constant, or a loop of one
    // iteration (TOSA's batch of 1).
    SmallVector<int64_t> loops = g.getStaticLoopRanges();
    for (auto [e, size] : llvm::zip(map.getResults().drop_back(), type.getShape().drop_back())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (size != 1 || (e != getAffineConstantExpr(0, g.getContext()) &&
                        !(dim && loops[dim.getPosition()] == 1)))
        return false;
    }
    return true;
  };
  for (unsigned full : {0u, 1u}) {
    unsigned bias = 1 - full;
    if (maps[full] != id || !isBiasMap(maps[bias], g.getDpsInputOperand(bias)->get()))
      continue;
    Value a = body.getArgument(full), b = body.getArgument(bias);
    if ((add.getLhs() == a && add.getRhs() == b) || (add.getLhs() == b && add.getRhs() == a))
      return std::make_pair(g.getDpsInputOperand(full)->get(), g.getDpsInputOperand(bias)->get());
  }
  return std::nullopt;
}

/// One of Q, K, V as split_heads(slice(project(x, W) (+ b))): the
/// projection, its bias, and the columns [col0, col0 + width) of its
/// output that the heads read.
struct HeadSplit {
  ProjectOp project;
  Value bias;
  int64_t col0 = 0, width = 0;
};

FailureOr<HeadSplit> matchHeadSplit(Value x, std::string &why, StringRef name) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<Operation *> views;
  Value root = x;
  while (Operation *def = root.getDefiningOp()) {
    if (!isView(def))
      break;
    views.push_back(def);
    root = viewSource(def);
  }
  HeadSplit split;
  Operation *def = root.getDefiningOp();
  if (auto g = dyn_cast_or_null<linalg::GenericOp>(def)) {
    std::optional<std::pair<Value, Value>> biasAdd = asBiasAdd(g);
    if (!biasAdd) {
      why = (name + " is read through a generic that is not a bias add").str();
      return failure();
    }
    def = biasAdd->first.getDefiningOp();
    split.bias = biasAdd->second;
  }
  split.project = dyn_cast_or_null<ProjectOp>(def);
  if (!split.project) {
    why = (name + " does not come from a projection through views").str();
    return failure();
  }
  auto rootType = cast<RankedTensorType>(root.getType());
  if (!rootType.hasStaticShape() || !type.hasStaticShape() ||
      (rootType.getRank() != 2 && rootType.getRank() != 3)) {
    why = (name + "'s projection is not static of rank 2 or 3").str();
    return failure();
  }
  std::reverse(views.begin(), views.end()); // projection → X
  std::optional<ViewMap> composed = compose(rootType.getShape(), views);
  if (!composed) {
    why = (name + " is not a slice of its projection's output under reshapes "
                  "and transposes").str();
    return failure();
  }
  const ViewMap &m = *composed;
  // X [B, H, T, D] over P [B·T, N] or [B, T, N]: d and h walk the columns
  // (h by D), t the rows, b the rows by T (or P's batch).
  size_t r = rootType.getRank();
  int64_t b = type.getDimSize(0), h = type.getDimSize(1), t = type.getDimSize(2),
          d = type.getDimSize(3);
  bool rows = r == 2 ? rootType.getDimSize(0) == b * t
                     : rootType.getDimSize(0) == b && rootType.getDimSize(1) == t;
  bool ok = rows && m.cols[3] == unitVec(r, r - 1) && (h == 1 || m.cols[1] == unitVec(r, r - 1, d)) &&
            (t == 1 || m.cols[2] == unitVec(r, r - 2)) &&
            (b == 1 || m.cols[0] == (r == 2 ? unitVec(r, 0, t) : unitVec(r, 0)));
  for (size_t s = 0; ok && s + 1 < r; ++s)
    ok = m.offset[s] == 0;
  if (!ok) {
    why = (name + " is not a head split of its projection's output").str();
    return failure();
  }
  split.col0 = m.offset[r - 1];
  split.width = h * d;
  return split;
}

/// The output projection that reads merge_heads(o): the project op, or
/// failure with `why`.
FailureOr<ProjectOp> matchHeadMerge(Value o, std::string &why) {
  auto type = cast<RankedTensorType>(o.getType());
  SmallVector<Operation *> views;
  Value cur = o;
  ProjectOp project;
  for (;;) {
    if (!cur.hasOneUse()) {
      why = "the attention's output has other users than one output projection";
      return failure();
    }
    OpOperand &use = *cur.getUses().begin();
    Operation *user = use.getOwner();
    if (auto p = dyn_cast<ProjectOp>(user); p && use.getOperandNumber() == 0) {
      project = p;
      break;
    }
    if (!isView(user) || use.getOperandNumber() != 0) {
      why = "the attention's output reaches no projection through views";
      return failure();
    }
    views.push_back(user);
    cur = user->getResult(0);
  }
  if (views.empty() || !isa<tensor::CollapseShapeOp>(views.back()) || !type.hasStaticShape()) {
    why = "the output projection does not read the heads merged by a reshape";
    return failure();
  }
  std::optional<ViewMap> composed = compose(type.getShape(), ArrayRef(views).drop_back());
  if (!composed) {
    why = "the heads are not merged by reshapes and transposes";
    return failure();
  }
  const ViewMap &m = *composed;
  // Before the last collapse: [b,] t, h, d (size-1 dims aside), each
  // reading its own dim of O [B, H, T, Dv]; the collapse then merges h
  // with d, last, and nothing else with them.
  auto collapse = cast<tensor::CollapseShapeOp>(views.back());
  SmallVector<int> roles; // per dim before the collapse: O's dim, or -1
  for (auto [size, col] : llvm::zip(m.sizes, m.cols)) {
    int role = -1;
    for (int d = 0; d < 4 && size != 1; ++d)
      if (col == unitVec(4, d))
        role = d;
    if (size != 1 && role < 0) {
      why = "the heads are not merged by reshapes and transposes";
      return failure();
    }
    roles.push_back(size == 1 ? -1 : role);
  }
  SmallVector<int> order; // O's dims in the order they appear
  for (int role : roles)
    if (role >= 0)
      order.push_back(role);
  SmallVector<int> want;
  for (int d : {0, 2, 1, 3})
    if (type.getDimSize(d) != 1)
      want.push_back(d);
  bool ok = order == want && llvm::all_of(m.offset, [](int64_t x) { return x == 0; });
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  for (auto [g, group] : llvm::enumerate(groups))
    for (int64_t d : group)
      if (roles[d] == 1 || roles[d] == 3)
        ok = ok && g + 1 == groups.size();
      else if (roles[d] == 0 || roles[d] == 2)
        ok = ok && g + 1 < groups.size();
  auto yType = cast<RankedTensorType>(cur.getType());
  ok = ok && (yType.getRank() == 2 || yType.getRank() == 3);
  if (!ok) {
    why = "the output projection does not read merge_heads of the attention";
    return failure();
  }
  return project;
}

/// `x` [B·T, E] as [B, T, E] (rank 3 stays).
Value asBatched(RewriterBase &rewriter, Location loc, Value x, int64_t b) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() == 3)
    return x;
  auto to = RankedTensorType::get({b, type.getDimSize(0) / b, type.getDimSize(1)},
                                  type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, to, x,
                                       SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

/// Columns [col0, col0 + width) of the projection's output: its weight's
/// rows (out_in) or columns (in_out) and its bias's entries.
Value sliceOutputs(RewriterBase &rewriter, Location loc, Value w, WeightLayout layout,
                   int64_t col0, int64_t width) {
  auto type = cast<RankedTensorType>(w.getType());
  unsigned outDim = type.getRank() == 1 ? 0 : layout == WeightLayout::out_in ? 0 : 1;
  if (col0 == 0 && type.getDimSize(outDim) == width)
    return w;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(rewriter.getIndexAttr(d == outDim ? col0 : 0));
    sizes.push_back(rewriter.getIndexAttr(d == outDim ? width : type.getDimSize(d)));
    strides.push_back(rewriter.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(rewriter, loc, w, offsets, sizes, strides);
}

/// True when a projection produces `x` through views and generics, or
/// reads it through views: the attention has a block around it.
bool nextToProjection(Value x, bool forward) {
  if (!forward) {
    Operation *def = x.getDefiningOp();
    while (def && (isView(def) || isa<linalg::GenericOp>(def)))
      def = (isView(def) ? viewSource(def) : def->getOperand(0)).getDefiningOp();
    return isa_and_nonnull<ProjectOp>(def);
  }
  for (Operation *user : x.getUsers())
    if (isa<ProjectOp>(user) || (isView(user) && nextToProjection(user->getResult(0), true)))
      return true;
  return false;
}

} // namespace

FailureOr<Operation *> raiseBlockToMha(RewriterBase &rewriter, SdpaOp sdpa, std::string &why) {
  if (cast<RankedTensorType>(sdpa.getQuery().getType()).getRank() != 4) {
    why = "the sdpa is not rank 4";
    return failure();
  }
  if (sdpa.getRuntimeSeed() || sdpa.getDropoutRate()) {
    why = "the attention has dropout";
    return failure();
  }
  if (!nextToProjection(sdpa.getQuery(), false) && !nextToProjection(sdpa.getKey(), false) &&
      !nextToProjection(sdpa.getValue(), false) && !nextToProjection(sdpa.getResult(), true)) {
    why.clear(); // no block around it: not a near miss
    return failure();
  }
  FailureOr<HeadSplit> q = matchHeadSplit(sdpa.getQuery(), why, "Q");
  if (failed(q))
    return failure();
  FailureOr<HeadSplit> k = matchHeadSplit(sdpa.getKey(), why, "K");
  if (failed(k))
    return failure();
  FailureOr<HeadSplit> v = matchHeadSplit(sdpa.getValue(), why, "V");
  if (failed(v))
    return failure();
  FailureOr<ProjectOp> out = matchHeadMerge(sdpa.getResult(), why);
  if (failed(out))
    return failure();
  if (k->project.getInput() != v->project.getInput()) {
    why = "K and V are projections of different inputs";
    return failure();
  }
  WeightLayout layout = q->project.getLayout();
  if (k->project.getLayout() != layout || v->project.getLayout() != layout ||
      out->getLayout() != layout) {
    why = "the projections' weights have different layouts";
    return failure();
  }
  if (!q->bias != !k->bias || !q->bias != !v->bias) {
    why = "some of the Q/K/V projections have a bias and some not";
    return failure();
  }
  if (out->getBias()) {
    why = "the output projection has its own bias operand";
    return failure();
  }
  Value xq = q->project.getInput(), xkv = k->project.getInput();
  auto qType = cast<RankedTensorType>(sdpa.getQuery().getType());
  auto kType = cast<RankedTensorType>(sdpa.getKey().getType());
  // (matchHeadSplit proved the projections' rows are [B·T] or [B, T].)
  int64_t batch = qType.getDimSize(0);

  Location loc = sdpa.getLoc();
  rewriter.setInsertionPoint(*out);
  Value xq3 = asBatched(rewriter, loc, xq, batch);
  Value xkv3 = xkv == xq ? xq3 : asBatched(rewriter, loc, xkv, batch);
  auto weight = [&](HeadSplit &s) {
    return sliceOutputs(rewriter, loc, s.project.getWeight(), layout, s.col0, s.width);
  };
  auto bias = [&](HeadSplit &s) {
    if (!s.bias)
      return Value();
    Value b = s.bias;
    auto type = cast<RankedTensorType>(b.getType());
    if (type.getRank() > 1) { // [1, …, 1, N] as [N]
      ReassociationIndices all(type.getRank());
      std::iota(all.begin(), all.end(), 0);
      b = tensor::CollapseShapeOp::create(rewriter, loc, b, SmallVector<ReassociationIndices>{all});
    }
    return sliceOutputs(rewriter, loc, b, layout, s.col0, s.width);
  };
  Value wq = weight(*q), wk = weight(*k), wv = weight(*v);
  Value bq = bias(*q), bk = bias(*k), bv = bias(*v);
  Value wo = out->getWeight();
  auto outType = cast<RankedTensorType>(out->getResult().getType());
  int64_t eo = outType.getDimSize(outType.getRank() - 1);
  auto mhaType = RankedTensorType::get({batch, qType.getDimSize(2), eo}, qType.getElementType());
  int64_t heads = qType.getDimSize(1), kvHeads = kType.getDimSize(1);
  auto mha = MhaOp::create(
      rewriter, loc, mhaType, xq3, xkv3, wq, wk, wv, wo, bq, bk, bv, /*bo=*/Value(),
      sdpa.getMask(), sdpa.getAlibiSlopes(), sdpa.getKeyLengths(), sdpa.getSinks(),
      /*rope_cos=*/Value(), /*rope_sin=*/Value(), /*runtime_seed=*/Value(), sdpa.getCaptures(),
      rewriter.getI64IntegerAttr(heads),
      kvHeads != heads ? rewriter.getI64IntegerAttr(kvHeads) : IntegerAttr(),
      sdpa.getScaleAttr(), sdpa.getCausalAttr(), sdpa.getSoftcapAttr(), sdpa.getWindowAttr(),
      /*rope_style=*/RopeStyleAttr(), /*dropout_rate=*/FloatAttr(), /*dropout_seed=*/IntegerAttr(),
      WeightLayoutAttr::get(rewriter.getContext(), layout));
  for (auto [from, to] : {std::pair{&sdpa.getScoreMod(), &mha.getScoreMod()},
                          std::pair{&sdpa.getMaskMod(), &mha.getMaskMod()}})
    if (!from->empty())
      rewriter.cloneRegionBefore(*from, *to, to->end());
  Value result = mha.getResult();
  if (outType.getRank() == 2)
    result = tensor::CollapseShapeOp::create(rewriter, loc, outType, result,
                                             SmallVector<ReassociationIndices>{{0, 1}, {2}});
  rewriter.replaceAllUsesWith(out->getResult(), result);
  return out->getOperation();
}

} // namespace mlir::attn::raise
