//===- AttnServingOps.cpp - attn.gather_pages, attn.dequantize ------------===//
//
// The verifier, result type and shape reification of the serving ops
// (AttnServingOps.td).
//
//===----------------------------------------------------------------------===//
#include "AttnChecker.h"
#include "AttnShapes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::shapes;

/// [B, Hkv, MB·BS, D] for a cache [NB, BS, Hkv, D] (nhd) or [NB, Hkv, BS, D]
/// (hnd) and a table [B, MB].
SmallVector<int64_t> shapes::gatherPagesShape(Value cache, Value table, KvLayout layout) {
  int64_t bs = layout == KvLayout::nhd ? 1 : 2, heads = 3 - bs;
  return {dimOf(table, 0), dimOf(cache, heads), mulDims(dimOf(table, 1), dimOf(cache, bs)),
          dimOf(cache, 3)};
}

LogicalResult GatherPagesOp::verify() {
  detail::Checker c(*this);
  Value cache = getCache(), table = getTable();
  if (failed(c.rank("cache", cache, 4,
                    getLayout() == KvLayout::nhd ? "[NB,BS,Hkv,D]" : "[NB,Hkv,BS,D]")) ||
      failed(c.rank("table", table, 2, "[B,MB]")))
    return failure();
  if (Value len = getLengths())
    if (failed(c.rank("lengths", len, 1, "[B]")) ||
        failed(c.dim("lengths", len, 0, "batch", dimOf(table, 0), "batch B, dim 0 of 'table'")))
      return failure();
  return c.result(gatherPagesShape(cache, table, getLayout()),
                  tensorType(cache).getElementType());
}

LogicalResult GatherPagesOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"cache", a.getCache()}, {"table", a.getTable()}},
      [&] {
        return resultType(gatherPagesShape(a.getCache(), a.getTable(), a.getLayout()),
                          a.getCache());
      },
      types);
}

LogicalResult GatherPagesOp::reifyResultShapes(OpBuilder &b, ReifiedRankedShapedTypeDims &out) {
  Location loc = getLoc();
  Value cache = getCache(), table = getTable();
  out.push_back({mixedDim(b, loc, table, 0), mixedDim(b, loc, cache, getHeadsDim()),
                 foldMul(b, loc, mixedDim(b, loc, table, 1),
                         mixedDim(b, loc, cache, getBlockSizeDim())),
                 mixedDim(b, loc, cache, 3)});
  return success();
}

LogicalResult DequantizeOp::verify() {
  detail::Checker c(*this);
  Value x = getInput(), scale = getScale();
  if (failed(c.rank("input", x, 4, "[B,Hkv,T,D]")))
    return failure();
  // One scale for the tensor (rank 0), or one per token and head.
  if (!hasTensorScale() && failed(c.rank("scale", scale, 3, "[B,Hkv,T] or rank 0")))
    return failure();
  static const char *names[] = {"batch", "heads", "tokens"};
  for (int64_t i = 0; i < 3 && !hasTensorScale(); ++i)
    if (failed(c.dim("scale", scale, i, names[i], dimOf(x, i),
                     Twine("dim ") + Twine(i) + " of 'input'")))
      return failure();
  // The input's shape (a dynamic dim agrees with any); the element type is
  // the result's own (any float).
  RankedTensorType rt = getType();
  if (rt.getRank() != 4)
    return emitOpError() << "result rank is " << rt.getRank() << ", expected 4 ([B,Hkv,T,D])";
  for (int64_t i = 0; i < 4; ++i)
    if (!agree(rt.getDimSize(i), dimOf(x, i)))
      return emitOpError() << "result dim " << i << " is " << dimStr(rt.getDimSize(i))
                           << ", expected " << dimStr(dimOf(x, i)) << " (dim " << i
                           << " of 'input')";
  return success();
}

LogicalResult DequantizeOp::reifyResultShapes(OpBuilder &b, ReifiedRankedShapedTypeDims &out) {
  Location loc = getLoc();
  Value x = getInput();
  out.push_back({mixedDim(b, loc, x, 0), mixedDim(b, loc, x, 1), mixedDim(b, loc, x, 2),
                 mixedDim(b, loc, x, 3)});
  return success();
}

/// The result's shape is the input's; its element type is the op's own
/// (any float), so only the shape is inferred (InferShapedTypeOpInterface,
/// not InferTypeOpInterface).
LogicalResult DequantizeOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<ShapedTypeComponents> &inferred) {
  auto in = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  if (!in)
    return failure();
  inferred.emplace_back(in.getShape());
  return success();
}

/// [1, H, Tq, Dv]: the query's rows with the value's head dim.
static SmallVector<int64_t> varlenShape(Value q, Value v) {
  return {dimOf(q, 0), dimOf(q, 1), dimOf(q, 2), dimOf(v, 3)};
}

/// Paged caches of sdpa_varlen: query [1,H,Tq,D], key [NB,BS,Hkv,D] and
/// value [NB,BS,Hkv,Dv] ([NB,Hkv,BS,·] for hnd).
static LogicalResult verifyPagedKeys(attn::detail::Checker &c, Value q, Value k, Value v,
                                     KvLayout layout) {
  bool nhd = layout == KvLayout::nhd;
  StringRef cacheLayout = nhd ? "[NB,BS,Hkv,D]" : "[NB,Hkv,BS,D]";
  int64_t bsDim = nhd ? 1 : 2, headsDim = nhd ? 2 : 1;
  if (failed(c.rank("query", q, 4, "[1,H,Tq,D]")) ||
      failed(c.rank("key", k, 4, cacheLayout)) || failed(c.rank("value", v, 4, cacheLayout)) ||
      failed(c.sameElementType("key", k, "query", q)) ||
      failed(c.sameElementType("value", v, "query", q)) ||
      failed(c.headsDivide("query", dimOf(q, 1), "key", dimOf(k, headsDim))) ||
      failed(c.dim("key", k, 3, "head dim", dimOf(q, 3), "head dim D of 'query'")) ||
      failed(c.dim("value", v, 0, "blocks", dimOf(k, 0), "blocks NB of 'key'")) ||
      failed(c.dim("value", v, bsDim, "block size", dimOf(k, bsDim), "block size BS of 'key'")) ||
      failed(c.dim("value", v, headsDim, "heads", dimOf(k, headsDim), "heads Hkv of 'key'")))
    return failure();
  return success();
}

LogicalResult SdpaVarlenOp::verify() {
  detail::Checker c(*this);
  Value q = getQuery(), k = getKey(), v = getValue();
  Value table = getBlockTable();
  if (table) {
    if (failed(verifyPagedKeys(c, q, k, v, getCacheLayout())))
      return failure();
  } else if (getLayoutAttr()) {
    return emitOpError() << "attribute 'layout' describes paged caches: it needs a "
                            "'block_table'";
  } else if (failed(detail::verifyQueryKey(c, q, k)) ||
             failed(c.rank("value", v, 4, "[1,Hkv,Tk,Dv]")) ||
             failed(c.sameElementType("value", v, "query", q)) ||
             failed(c.dim("value", v, 1, "heads", dimOf(k, 1), "heads Hkv of 'key'")) ||
             failed(c.dim("value", v, 2, "length", dimOf(k, 2), "length Tk of 'key'"))) {
    return failure();
  }
  // One batch row: the sequences are along the rows (of the queries, and
  // of the keys unless they are paged).
  SmallVector<std::pair<StringRef, Value>, 3> rowed{{"query", q}};
  if (!table)
    rowed.append({{"key", k}, {"value", v}});
  for (auto [name, x] : rowed)
    if (failed(c.dim(name, x, 0, "batch", 1, "the sequences lie along the rows")))
      return failure();
  Value cuq = getCuSeqlensQ(), cuk = getCuSeqlensK();
  if (failed(c.rank("cu_seqlens_q", cuq, 1, "[B+1]")) ||
      failed(c.rank("cu_seqlens_k", cuk, 1, "[B+1]")) ||
      failed(c.dim("cu_seqlens_k", cuk, 0, "size", dimOf(cuq, 0),
                   "B+1, the size of 'cu_seqlens_q'")))
    return failure();
  if (dimOf(cuq, 0) == 0)
    return emitOpError() << "operand 'cu_seqlens_q' is empty: it holds B+1 >= 1 offsets";
  if (table) {
    int64_t sequences = ShapedType::isDynamic(dimOf(cuq, 0)) ? ShapedType::kDynamic
                                                             : dimOf(cuq, 0) - 1;
    if (failed(c.rank("block_table", table, 2, "[B,MB]")) ||
        failed(c.dim("block_table", table, 0, "batch", sequences,
                     "B, one less than the size of 'cu_seqlens_q'")))
      return failure();
  }
  if (Value s = getAlibiSlopes())
    if (failed(c.slopes(s, 1, dimOf(q, 1))))
      return failure();
  if (Value s = getSinks())
    if (failed(c.sinks(s, dimOf(q, 1))))
      return failure();
  if (failed(c.positiveFinite("scale", detail::optF(getScaleAttr()))) ||
      failed(c.positiveFinite("softcap", detail::optF(getSoftcapAttr()))) ||
      failed(c.windowAlign(getWindowAttr(), getCausalAttr())))
    return failure();
  return c.result(varlenShape(q, v), tensorType(q).getElementType());
}

LogicalResult SdpaVarlenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &types) {
  return inferOne(
      loc, getOperationName(), {{"query", a.getQuery()}, {"value", a.getValue()}},
      [&] { return resultType(varlenShape(a.getQuery(), a.getValue()), a.getQuery()); },
      types);
}

LogicalResult SdpaVarlenOp::reifyResultShapes(OpBuilder &b, ReifiedRankedShapedTypeDims &out) {
  Location loc = getLoc();
  out.push_back({mixedDim(b, loc, getQuery(), 0), mixedDim(b, loc, getQuery(), 1),
                 mixedDim(b, loc, getQuery(), 2), mixedDim(b, loc, getValue(), 3)});
  return success();
}
