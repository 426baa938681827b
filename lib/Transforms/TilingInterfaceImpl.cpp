//===- TilingInterfaceImpl.cpp - attn.sdpa / sdpa_partial tiled upstream --===//
//
// TilingInterface, PartialReductionOpInterface and AggregatedOpInterface for
// the attention ops (attn/Transforms/TilingInterfaceImpl.h). The iteration
// space is [B, H, Tq, Tk]; a tile is the same op on slices of its operands,
// with the causal diagonal moved to the tile's origin. The key reduction is
// split IREE's way: each block of keys gives an attn.sdpa_partial (output
// and log-sum-exp), and the blocks are merged with attn.merge_partial, the
// one online-softmax merge rule (FlashCore's mergeWeight).
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/TilingInterfaceImpl.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Transforms/Passes.h"
#include "Conversion/AttnToLinalg/LinalgBuilders.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The dims of the iteration space.
enum Dim : unsigned { kBatch = 0, kHead = 1, kRow = 2, kKey = 3 };

/// Whether two sizes are known to be equal: one constant, one value, or
/// `tensor.dim` of one tensor at one index (the driver passes an uncut
/// dim's size as the iteration domain gave it; a tile asks again).
bool sameSize(OpFoldResult a, OpFoldResult b) {
  std::optional<int64_t> ca = getConstantIntValue(a), cb = getConstantIntValue(b);
  if (ca || cb)
    return ca && cb && *ca == *cb;
  auto va = dyn_cast<Value>(a), vb = dyn_cast<Value>(b);
  if (va == vb)
    return true;
  auto da = va.getDefiningOp<tensor::DimOp>(), db = vb.getDefiningOp<tensor::DimOp>();
  return da && db && da.getSource() == db.getSource() && da.getConstantIndex() &&
         da.getConstantIndex() == db.getConstantIndex();
}

/// One tile of the iteration space, with the whole op's sizes.
struct Tile {
  ArrayRef<OpFoldResult> offsets, sizes;
  SmallVector<OpFoldResult> whole;
  /// Whether the tile cuts dim `d` (starts past 0 or ends before the end).
  bool cuts(unsigned d) const {
    return !isZeroInteger(offsets[d]) || !sameSize(sizes[d], whole[d]);
  }
  bool cutsAny() const { return cuts(kBatch) || cuts(kHead) || cuts(kRow) || cuts(kKey); }
};

template <typename OpTy>
SmallVector<OpFoldResult> wholeSizes(OpBuilder &b, OpTy op) {
  Location loc = op.getLoc();
  return {tensor::getMixedSize(b, loc, op.getQuery(), 0),
          tensor::getMixedSize(b, loc, op.getQuery(), 1),
          tensor::getMixedSize(b, loc, op.getQuery(), 2),
          tensor::getMixedSize(b, loc, op.getKey(), 2)};
}

Value diagonalOf(SdpaOp) { return {}; }
Value diagonalOf(SdpaPartialOp op) { return op.getDiagonal(); }

/// Query heads per K/V head, when both head counts are static.
std::optional<int64_t> groupSize(Value query, Value key) {
  int64_t h = cast<RankedTensorType>(query.getType()).getDimSize(1);
  int64_t hkv = cast<RankedTensorType>(key.getType()).getDimSize(1);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv) || hkv == 0)
    return std::nullopt;
  return h / hkv;
}

/// Whether the op has one query row (Tq = 1, static): decode.
bool singleRow(Value query) {
  return cast<RankedTensorType>(query.getType()).getDimSize(2) == 1;
}

/// Why `op` cannot compute `tile` on its own, or "" when it can. Each rule
/// names a feature whose meaning depends on positions in the whole op that
/// a tile of the same op would not see.
template <typename OpTy>
std::string refusal(OpTy op, const Tile &tile) {
  if (!tile.cutsAny())
    return "";
  FloatAttr rate = op.getDropoutRateAttr();
  if (rate && !rate.getValue().isZero())
    return "dropout draws its mask from the flat index of the whole op; a tile "
           "would draw another mask";
  bool rows = tile.cuts(kRow), keys = tile.cuts(kKey);
  if ((rows || keys) && op.getAlibiSlopes())
    return "ALiBi distances are measured from the whole op's diagonal; tile "
           "only batch and heads";
  CausalKindAttr causal = op.getCausalAttr();
  WindowAttr window = op.getWindowAttr();
  std::optional<CausalKind> kind;
  if (causal)
    kind = causal.getValue();
  bool windowed = window && !window.isUnbounded();
  bool usesDiagonal = causal || windowed;
  // With key lengths the bottom-right diagonal is i + len[b] - Tq: per
  // batch row. A key block's lengths are len - k0 (tileOperands), so only
  // the causal diagonal of a single query row (j <= len - 1, i.e. j < len:
  // dropped) survives a key split.
  bool lengthDiagonal = op.getKeyLengths() && usesDiagonal &&
                        keepRuleDiagonal(kind, window) == CausalKind::bottom_right;
  if (keys && lengthDiagonal && !(causal && !windowed && singleRow(op.getQuery())))
    return "the bottom-right diagonal with key lengths depends on each batch "
           "row's length; split the keys only of a single query row";
  if (rows && lengthDiagonal)
    return "the bottom-right diagonal with key lengths depends on each batch "
           "row's length; do not tile the query rows";
  if (keys && op.getSinks())
    return "a sink joins each row's denominator once; a key tile would count "
           "it again";
  if (tile.cuts(kHead)) {
    std::optional<int64_t> g = groupSize(op.getQuery(), op.getKey());
    if (!g)
      return "the query heads per K/V head are not static; do not tile the heads";
    std::optional<int64_t> hs = getConstantIntValue(tile.sizes[kHead]);
    if (*g != 1 && (!hs || (*hs != 1 && *hs % *g != 0)))
      return "a head tile must be 1 head or a multiple of the " + std::to_string(*g) +
             " query heads that share a K/V head";
  }
  return "";
}

/// `src[offsets][sizes]` (unit strides), recorded in `slices`.
Value slice(OpBuilder &b, Location loc, Value src, ArrayRef<OpFoldResult> offsets,
            ArrayRef<OpFoldResult> sizes, SmallVectorImpl<Operation *> &slices) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  auto s = tensor::ExtractSliceOp::create(b, loc, src, offsets, sizes, strides);
  slices.push_back(s);
  return s;
}

/// clamp(len - k0, 0, size) elementwise (i32 or i64 lengths).
Value blockLengths(OpBuilder &b, Location loc, Value len, OpFoldResult k0,
                   OpFoldResult size) {
  auto t = cast<RankedTensorType>(len.getType());
  Type elt = t.getElementType();
  auto asElt = [&](OpFoldResult v) -> Value {
    return arith::IndexCastOp::create(b, loc, elt, getValueOrCreateConstantIndexOp(b, loc, v));
  };
  Value start = asElt(k0), count = asElt(size);
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(elt, 0));
  return linalg_lowering::elementwise(
      b, loc, len, {}, {}, t, tensor::getMixedSizes(b, loc, len),
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value rest = arith::SubIOp::create(nb, l, args[0], start);
        return arith::MinSIOp::create(nb, l, arith::MaxSIOp::create(nb, l, rest, zero), count);
      });
}

/// The operands of one tile, and its causal kind and diagonal.
struct TileOperands {
  Value query, key, value, mask, alibiSlopes, keyLengths, sinks, diagonal;
  CausalKindAttr causal;
  WindowAttr window;
  /// The op's captures, plus `origin` when the tile cuts the op and it has
  /// a score or mask function.
  SmallVector<Value> captures;
  /// tensor<4xindex> [b0, h0, q0, k0]: where the tile starts in the whole
  /// op; the functions add it to their positions.
  Value origin;
  SmallVector<Operation *> slices;
};

template <typename OpTy>
TileOperands tileOperands(OpBuilder &b, OpTy op, const Tile &tile) {
  Location loc = op.getLoc();
  TileOperands t;
  ArrayRef<OpFoldResult> off = tile.offsets, sz = tile.sizes;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  auto last = [&](Value v) { return tensor::getMixedSize(b, loc, v, 3); };
  t.query = slice(b, loc, op.getQuery(), {off[kBatch], off[kHead], off[kRow], zero},
                  {sz[kBatch], sz[kHead], sz[kRow], last(op.getQuery())}, t.slices);
  // K/V heads: query head h reads K/V head h / g (refusal() checked the
  // tile is one head or whole groups).
  OpFoldResult kvOff = off[kHead], kvSize = sz[kHead];
  if (tile.cuts(kHead)) {
    int64_t g = *groupSize(op.getQuery(), op.getKey());
    if (g != 1) {
      kvOff = affine::makeComposedFoldedAffineApply(
          b, loc, linalg_lowering::kvHead(b.getAffineDimExpr(0), g), {off[kHead]});
      int64_t hs = *getConstantIntValue(sz[kHead]);
      kvSize = b.getIndexAttr(hs == 1 ? 1 : hs / g);
    }
  } else {
    kvSize = tensor::getMixedSize(b, loc, op.getKey(), 1);
  }
  t.key = slice(b, loc, op.getKey(), {off[kBatch], kvOff, off[kKey], zero},
                {sz[kBatch], kvSize, sz[kKey], last(op.getKey())}, t.slices);
  t.value = slice(b, loc, op.getValue(), {off[kBatch], kvOff, off[kKey], zero},
                  {sz[kBatch], kvSize, sz[kKey], last(op.getValue())}, t.slices);
  // The mask broadcasts to [B,H,Tq,Tk] from the right; a static 1 stays 1.
  if (Value m = op.getMask()) {
    auto mt = cast<RankedTensorType>(m.getType());
    SmallVector<OpFoldResult> mo, ms;
    for (int64_t i = 0, r = mt.getRank(); i < r; ++i) {
      unsigned d = 4 - r + i;
      bool broadcast = mt.getDimSize(i) == 1;
      mo.push_back(broadcast ? zero : off[d]);
      ms.push_back(broadcast ? one : sz[d]);
    }
    t.mask = slice(b, loc, m, mo, ms, t.slices);
  }
  if (Value s = op.getAlibiSlopes()) {
    if (cast<RankedTensorType>(s.getType()).getRank() == 1)
      t.alibiSlopes = slice(b, loc, s, {off[kHead]}, {sz[kHead]}, t.slices);
    else
      t.alibiSlopes = slice(b, loc, s, {off[kBatch], off[kHead]},
                            {sz[kBatch], sz[kHead]}, t.slices);
  }
  if (Value len = op.getKeyLengths()) {
    t.keyLengths = slice(b, loc, len, {off[kBatch]}, {sz[kBatch]}, t.slices);
    // A key block starting at k0 holds clamp(len - k0, 0, its size) of the
    // row's keys (the whole op clamps len to [0, Tk] the same way).
    if (tile.cuts(kKey))
      t.keyLengths = blockLengths(b, loc, t.keyLengths, off[kKey], sz[kKey]);
  }
  if (Value s = op.getSinks())
    t.sinks = slice(b, loc, s, {off[kHead]}, {sz[kHead]}, t.slices);

  // Score and mask functions take positions in the whole op: the tile
  // passes its origin as one more capture (copyFunctions adds it).
  t.captures.assign(op.getCaptures().begin(), op.getCaptures().end());
  if ((op.hasScoreMod() || op.hasMaskMod()) && tile.cutsAny()) {
    SmallVector<Value> origin;
    for (OpFoldResult o : off)
      origin.push_back(getValueOrCreateConstantIndexOp(b, loc, o));
    t.origin = tensor::FromElementsOp::create(b, loc, origin);
    t.captures.push_back(t.origin);
  }

  // Causal and a sliding window measure from the diagonal d(i). Query row
  // i of the tile is row q0 + i of the whole op and key j is key k0 + j,
  // so the tile's diagonal is top-left shifted by d + q0 - k0, with d the
  // whole op's shift (top_left: 0 or diagonal(%d); bottom_right: Tk - Tq).
  t.causal = op.getCausalAttr();
  t.window = op.getWindowAttr();
  t.diagonal = diagonalOf(op);
  bool windowed = t.window && !t.window.isUnbounded();
  if (op.getKeyLengths() && tile.cuts(kKey) && t.causal &&
      t.causal.getValue() == CausalKind::bottom_right) {
    // One query row (refusal() checked): j <= len - 1 is j < len, which the
    // block's lengths keep.
    t.causal = nullptr;
  }
  if ((t.causal || windowed) && (tile.cuts(kRow) || tile.cuts(kKey))) {
    std::optional<CausalKind> kind;
    if (t.causal)
      kind = t.causal.getValue();
    AffineExpr d0, q0, k0;
    bindSymbols(b.getContext(), d0, q0, k0);
    OpFoldResult base = t.diagonal ? OpFoldResult(t.diagonal) : zero;
    if (keepRuleDiagonal(kind, t.window) == CausalKind::bottom_right) {
      AffineExpr tk, tq;
      bindSymbols(b.getContext(), tk, tq);
      base = affine::makeComposedFoldedAffineApply(b, loc, tk - tq,
                                                   {tile.whole[kKey], tile.whole[kRow]});
    }
    OpFoldResult d = affine::makeComposedFoldedAffineApply(
        b, loc, d0 + q0 - k0, {base, off[kRow], off[kKey]});
    t.diagonal = getValueOrCreateConstantIndexOp(b, loc, d);
    MLIRContext *ctx = b.getContext();
    if (t.causal)
      t.causal = CausalKindAttr::get(ctx, CausalKind::top_left);
    if (t.window)
      t.window = WindowAttr::get(ctx, t.window.getLeft(), t.window.getRight(),
                                 t.causal ? std::nullopt
                                          : std::optional<CausalKind>(CausalKind::top_left));
  }
  return t;
}

/// The op's score_mod / mask_mod regions copied onto `tiled`. With an
/// origin capture, each copy takes it as a last argument and adds it to
/// its positions (b, h, q, kv: after the score in a score function), so
/// that a function sees the positions of the whole op.
void copyFunctions(Operation *op, Operation *tiled, Value origin) {
  for (auto [index, from, to] :
       llvm::enumerate(op->getRegions(), tiled->getRegions())) {
    if (from.empty())
      continue;
    IRMapping map;
    from.cloneInto(&to, map);
    if (!origin)
      continue;
    Block &entry = to.front();
    Location loc = op->getLoc();
    BlockArgument o = entry.addArgument(origin.getType(), loc);
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    // Region 0 is score_mod (score, b, h, q, kv, ...), 1 is mask_mod.
    unsigned first = index == 0 ? 1 : 0;
    for (unsigned d = 0; d < 4; ++d) {
      BlockArgument pos = entry.getArgument(first + d);
      Value c = arith::ConstantIndexOp::create(b, loc, d);
      Value start = tensor::ExtractOp::create(b, loc, o, ValueRange{c});
      Value shifted = arith::AddIOp::create(b, loc, pos, start);
      pos.replaceAllUsesExcept(shifted, shifted.getDefiningOp());
    }
  }
}

/// The sdpa_partial of one tile (also attn.sdpa's tile when its diagonal
/// moves: attn.sdpa has no diagonal operand).
template <typename OpTy>
SdpaPartialOp createPartial(OpBuilder &b, OpTy op, const TileOperands &t) {
  auto p = SdpaPartialOp::create(b, op.getLoc(), t.query, t.key, t.value, t.mask,
                                 t.alibiSlopes, t.keyLengths, t.sinks, t.diagonal,
                                 op.getRuntimeSeed(), t.captures,
                                 op.getScaleAttr(), t.causal, op.getSoftcapAttr(),
                                 t.window, op.getDropoutRateAttr(),
                                 op.getDropoutSeedAttr());
  copyFunctions(op, p, t.origin);
  return p;
}

FailureOr<TilingResult> tiledImplementation(OpBuilder &b, SdpaPartialOp op, const Tile &tile) {
  TileOperands t = tileOperands(b, op, tile);
  SdpaPartialOp p = createPartial(b, op, t);
  return TilingResult{{p}, SmallVector<Value>(p->getResults()), t.slices};
}

FailureOr<TilingResult> tiledImplementation(OpBuilder &b, SdpaOp op, const Tile &tile) {
  TileOperands t = tileOperands(b, op, tile);
  if (!t.diagonal) {
    auto s = SdpaOp::create(b, op.getLoc(), t.query, t.key, t.value, t.mask, t.alibiSlopes,
                            t.keyLengths, t.sinks, op.getRuntimeSeed(), t.captures,
                            op.getScaleAttr(),
                            t.causal, op.getSoftcapAttr(), t.window,
                            op.getDropoutRateAttr(), op.getDropoutSeedAttr());
    copyFunctions(op, s, t.origin);
    return TilingResult{{s}, SmallVector<Value>(s->getResults()), t.slices};
  }
  // A causal tile off the diagonal: sdpa_partial's output (f32) in the
  // op's element type.
  SdpaPartialOp p = createPartial(b, op, t);
  Type elt = cast<RankedTensorType>(op.getType()).getElementType();
  Value o = linalg_lowering::roundTo(b, op.getLoc(), p.getResult(), elt,
                                    tensor::getMixedSizes(b, op.getLoc(), p.getResult()));
  SmallVector<Operation *> ops{p};
  if (Operation *c = o.getDefiningOp(); c && c != p)
    ops.push_back(c);
  return TilingResult{ops, {o}, t.slices};
}

/// TilingInterface for attn.sdpa and attn.sdpa_partial.
template <typename OpTy>
struct SdpaTiling : TilingInterface::ExternalModel<SdpaTiling<OpTy>, OpTy> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::parallel, utils::IteratorType::parallel,
            utils::IteratorType::parallel, utils::IteratorType::reduction};
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(op);
    SmallVector<Range> r;
    for (OpFoldResult s : wholeSizes(b, cast<OpTy>(op)))
      r.push_back(Range{b.getIndexAttr(0), s, b.getIndexAttr(1)});
    return r;
  }

  FailureOr<TilingResult> getTiledImplementation(Operation *op, OpBuilder &b,
                                                 ArrayRef<OpFoldResult> offsets,
                                                 ArrayRef<OpFoldResult> sizes) const {
    auto sdpa = cast<OpTy>(op);
    Tile tile{offsets, sizes, wholeSizes(b, sdpa)};
    if (tile.cuts(kKey))
      return op->emitOpError("cannot tile the keys as a full reduction (a tile's "
                             "softmax is its own); split them with "
                             "tile_reduction_using_forall (blocks of attn.sdpa_partial "
                             "merged by attn.merge_partial)");
    if (std::string why = refusal(sdpa, tile); !why.empty())
      return op->emitOpError("cannot be tiled here: ") << why;
    return tiledImplementation(b, sdpa, tile);
  }

  LogicalResult getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                                      ArrayRef<OpFoldResult> offsets,
                                      ArrayRef<OpFoldResult> sizes,
                                      SmallVector<OpFoldResult> &resultOffsets,
                                      SmallVector<OpFoldResult> &resultSizes) const {
    auto sdpa = cast<OpTy>(op);
    resultOffsets.assign({offsets[kBatch], offsets[kHead], offsets[kRow]});
    resultSizes.assign({sizes[kBatch], sizes[kHead], sizes[kRow]});
    if (resultNumber == 0) { // the output [B,H,Tq,Dv]; result 1 is the lse
      resultOffsets.push_back(b.getIndexAttr(0));
      resultSizes.push_back(tensor::getMixedSize(b, op->getLoc(), sdpa.getValue(), 3));
    }
    return success();
  }
};

/// PartialReductionOpInterface for attn.sdpa_partial and attn.sdpa: the
/// keys split into blocks, one attn.sdpa_partial (O, lse) per block,
/// stacked along a leading dim and merged by attn.merge_partial (for
/// attn.sdpa, the merged O in its element type: flash-decoding).
template <typename OpTy>
struct SdpaPartialReduction
    : PartialReductionOpInterface::ExternalModel<SdpaPartialReduction<OpTy>, OpTy> {
  static LogicalResult checkDims(Operation *op, const SetVector<unsigned> &dims) {
    if (dims.size() != 1 || dims[0] != kKey)
      return op->emitOpError("splits only its key dim (") << kKey << ") into partial reductions";
    return success();
  }

  FailureOr<SmallVector<Value>>
  generateInitialTensorForPartialReduction(Operation *op, OpBuilder &b, Location loc,
                                           ArrayRef<OpFoldResult> sizes,
                                           const SetVector<unsigned> &reductionDims) const {
    if (failed(checkDims(op, reductionDims)))
      return failure();
    auto p = cast<OpTy>(op);
    SmallVector<OpFoldResult> whole = wholeSizes(b, p);
    // [blocks, B, H, Tq, Dv] outputs (0) and [blocks, B, H, Tq] lse (-inf):
    // merge_partial's identity.
    SmallVector<OpFoldResult> lseShape{sizes[kKey], whole[kBatch], whole[kHead], whole[kRow]};
    SmallVector<OpFoldResult> outShape(lseShape);
    outShape.push_back(tensor::getMixedSize(b, loc, p.getValue(), 3));
    Type f32 = b.getF32Type();
    return SmallVector<Value>{
        linalg_lowering::filled(b, loc, outShape, f32, 0.0),
        linalg_lowering::filled(b, loc, lseShape, f32, -std::numeric_limits<double>::infinity())};
  }

  FailureOr<TilingResult>
  tileToPartialReduction(Operation *op, OpBuilder &b, Location loc,
                         ReductionTilingStrategy strategy, ValueRange init,
                         ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                         const SetVector<unsigned> &reductionDims,
                         ArrayRef<OpFoldResult> splitReductionIvs) const {
    if (failed(checkDims(op, reductionDims)))
      return failure();
    if (strategy != ReductionTilingStrategy::PartialReductionOuterParallel)
      return op->emitOpError("splits its keys only into parallel blocks "
                             "(tile_reduction_using_forall): a block's partial "
                             "result is not accumulated in place");
    auto p = cast<OpTy>(op);
    Tile tile{offsets, sizes, wholeSizes(b, p)};
    if (std::string why = refusal(p, tile); !why.empty())
      return op->emitOpError("cannot be tiled here: ") << why;
    TileOperands t = tileOperands(b, p, tile);
    SdpaPartialOp block = createPartial(b, p, t);
    return TilingResult{{block}, SmallVector<Value>(block->getResults()), t.slices};
  }

  LogicalResult getPartialResultTilePosition(
      Operation *op, OpBuilder &b, unsigned resultNumber, ReductionTilingStrategy,
      ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
      const SetVector<unsigned> &, ArrayRef<OpFoldResult> splitReductionIvs,
      SmallVector<OpFoldResult> &resultOffsets, SmallVector<OpFoldResult> &resultSizes) const {
    auto p = cast<OpTy>(op);
    resultOffsets.assign({splitReductionIvs[0], offsets[kBatch], offsets[kHead], offsets[kRow]});
    resultSizes.assign({b.getIndexAttr(1), sizes[kBatch], sizes[kHead], sizes[kRow]});
    if (resultNumber == 0) {
      resultOffsets.push_back(b.getIndexAttr(0));
      resultSizes.push_back(tensor::getMixedSize(b, op->getLoc(), p.getValue(), 3));
    }
    return success();
  }

  FailureOr<MergeResult> mergeReductions(Operation *op, OpBuilder &b, Location loc,
                                         ValueRange partial,
                                         const SetVector<unsigned> &reductionDims) const {
    if (failed(checkDims(op, reductionDims)))
      return failure();
    // Block i of a stacked partial, without the block dim.
    auto block = [&](OpBuilder &nb, Value stacked, OpFoldResult i) -> Value {
      auto t = cast<RankedTensorType>(stacked.getType());
      SmallVector<OpFoldResult> offs(t.getRank(), nb.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(nb, loc, stacked);
      SmallVector<OpFoldResult> strides(t.getRank(), nb.getIndexAttr(1));
      offs[0] = i;
      sizes[0] = nb.getIndexAttr(1);
      auto type = tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
          t.getRank() - 1, t, sizes);
      return tensor::ExtractSliceOp::create(nb, loc, type, stacked, offs, sizes, strides);
    };
    Value out = partial[0], lse = partial[1];
    Value first[2] = {block(b, out, b.getIndexAttr(0)), block(b, lse, b.getIndexAttr(0))};
    Value lb = arith::ConstantIndexOp::create(b, loc, 1);
    Value ub = tensor::DimOp::create(b, loc, out, 0);
    Value step = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, step, ValueRange{first[0], first[1]},
        [&](OpBuilder &nb, Location l, Value i, ValueRange acc) {
          auto m = MergePartialOp::create(nb, l, acc[0], acc[1], block(nb, out, i),
                                          block(nb, lse, i));
          scf::YieldOp::create(nb, l, m.getResults());
        });
    if constexpr (std::is_same_v<OpTy, SdpaOp>) {
      // attn.sdpa: the merged output in its element type.
      Type elt = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
      Value o = loop.getResult(0);
      // (The merge op reported is the loop, as for sdpa_partial: one handle
      // for tile_reduction_using_forall's combining op.)
      Value cast = linalg_lowering::roundTo(b, loc, o, elt, tensor::getMixedSizes(b, loc, o));
      return MergeResult{{loop}, {cast}};
    }
    return MergeResult{{loop}, SmallVector<Value>(loop.getResults())};
  }
};

/// AggregatedOpInterface: decomposeOperation is attn-decompose's expansion.
struct SdpaAggregate : linalg::AggregatedOpInterface::ExternalModel<SdpaAggregate, SdpaOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op, OpBuilder &b) const {
    return decomposeSdpa(b, cast<SdpaOp>(op));
  }
};

} // namespace

void mlir::attn::registerTilingInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    SdpaOp::attachInterface<SdpaTiling<SdpaOp>, SdpaPartialReduction<SdpaOp>, SdpaAggregate>(*ctx);
    SdpaPartialOp::attachInterface<SdpaTiling<SdpaPartialOp>,
                                   SdpaPartialReduction<SdpaPartialOp>>(*ctx);
  });
}
