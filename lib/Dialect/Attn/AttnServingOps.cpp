//===- AttnServingOps.cpp - attn.gather_pages -----------------------------===//
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
