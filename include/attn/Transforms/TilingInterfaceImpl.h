//===- TilingInterfaceImpl.h - attn ops as upstream tileable ops -*- C++ -*-===//
//
// The attention ops seen by MLIR's structured-op machinery:
//
// - attn.sdpa and attn.sdpa_partial implement `TilingInterface` over the
//   iteration space [B, H, Tq, Tk] (parallel, parallel, parallel,
//   reduction), so `scf::tileUsingSCF` and the transform dialect's
//   `transform.structured.tile_using_forall` / `tile_using_for` tile them;
// - both implement `PartialReductionOpInterface`: the key reduction splits
//   into blocks of attn.sdpa_partial computed in parallel
//   (`transform.structured.tile_reduction_using_forall`, the
//   `PartialReductionOuterParallel` strategy) and merged by one rule,
//   attn.merge_partial (attn.sdpa's merged output cast to its type:
//   flash-decoding);
// - attn.sdpa implements linalg's `AggregatedOpInterface`:
//   `decomposeOperation` is attn-decompose's expansion
//   (`transform.structured.decompose_interface`).
//
// What a tile may not cut is refused with a reason (docs/tiling.md).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TRANSFORMS_TILINGINTERFACEIMPL_H
#define ATTN_TRANSFORMS_TILINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace attn {

/// Attaches the interfaces above to the attn ops (external models: the
/// dialect library itself does not depend on the tiling machinery).
void registerTilingInterfaceExternalModels(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_TRANSFORMS_TILINGINTERFACEIMPL_H
