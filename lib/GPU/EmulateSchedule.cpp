//===- EmulateSchedule.cpp - run a GPU kernel schedule on the CPU ---------===//
//
// attn-emulate-gpu-schedule: workgroup/private address spaces dropped,
// thread-mapped scf.forall → sequential scf.for (each completes before the
// next, as after a barrier), or its threads in lockstep where it uses warp
// instructions (Lockstep.cpp); block-mapped scf.forall → scf.parallel.
//
//===----------------------------------------------------------------------===//
#include "attn/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "Lockstep.h"
#include "ScheduleMapping.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMULATEGPUSCHEDULE
#include "attn/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnEmulateGpuSchedulePass
    : mlir::attn::impl::AttnEmulateGpuScheduleBase<AttnEmulateGpuSchedulePass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    // Workgroup/private buffers become ordinary (per-iteration) buffers.
    AttrTypeReplacer replacer;
    replacer.addReplacement([](MemRefType t) -> std::optional<Type> {
      if (!isa_and_nonnull<gpu::AddressSpaceAttr>(t.getMemorySpace()))
        return std::nullopt;
      return MemRefType::get(t.getShape(), t.getElementType(), t.getLayout());
    });
    replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/false,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForallOp> threadLoops, blockLoops;
    root->walk([&](scf::ForallOp op) {
      if (hasGpuMapping(op, /*threads=*/true))
        threadLoops.push_back(op);
      else if (hasGpuMapping(op, /*threads=*/false))
        blockLoops.push_back(op);
    });
    // Threads in order: each loop completes before the next (the barrier).
    // A loop with warp instructions or barriers inside runs its threads in
    // lockstep instead (lanes as vector elements).
    for (scf::ForallOp op : threadLoops) {
      rewriter.setInsertionPoint(op);
      if (needsLockstep(op) ? failed(runInLockstep(rewriter, op))
                            : failed(scf::forallToForLoop(rewriter, op)))
        return signalPassFailure();
    }
    // Blocks are independent: run them in parallel.
    for (scf::ForallOp op : blockLoops) {
      rewriter.setInsertionPoint(op);
      if (failed(scf::forallToParallelLoop(rewriter, op)))
        return signalPassFailure();
    }
  }
};

} // namespace
