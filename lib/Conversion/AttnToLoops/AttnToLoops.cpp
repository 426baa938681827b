//===- AttnToLoops.cpp - the convert-attn-to-loops pass -------------------===//
//
// The fused CPU lowering: attn.sdpa and attn.sdpa_partial (f32, f16 or
// bf16) become parallel FlashAttention-2 loop nests on buffers,
// attn.merge_partial and attn.block_mask parallel loops, attn.project a packed-panel GEMM;
// anything the kernels do not take is left to the reference lowering.
// One idea per file:
//
//   AttnToLoops.cpp          the pass, its option check, the unfused report
//   PopulatePatterns.h       the pattern files' entry points
//   SdpaToLoops.cpp          the sdpa pattern: row tiles, the key prepack,
//                            key splits and their merge
//   FlashKernel.{h,cpp}      one Q tile's FlashAttention-2 loop (prefill)
//   DecodeTile.cpp           its decode steps: K and V read in place
//   ProjectToLoops.cpp       attn.project
//   MergePartialToLoops.cpp  attn.merge_partial
//   BlockMaskToLoops.cpp     attn.block_mask: tiles bounded, else evaluated
//   SdpaGradToLoops.cpp      attn.sdpa_grad: the deterministic backward
//   Microkernels.{h,cpp}     transposes, fold trees, the FMA register block
//
//===----------------------------------------------------------------------===//
#include "FlashKernel.h"
#include "PopulatePatterns.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

// The dialects the pass loads (dependentDialects in Passes.td).
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLOOPS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::flash;
using namespace mlir::attn::loops;

namespace {

struct ConvertAttnToLoopsPass
    : mlir::attn::impl::ConvertAttnToLoopsBase<ConvertAttnToLoopsPass> {
  using ConvertAttnToLoopsBase::ConvertAttnToLoopsBase;
  void runOnOperation() override {
    // By name: the options struct's field order is the .td's.
    ConvertAttnToLoopsOptions options;
    options.tileQ = tileQ;
    options.tileK = tileK;
    options.vectorWidth = vectorWidth;
    options.reportUnfused = reportUnfused;
    options.minWorkItems = minWorkItems;
    options.prepackLimitMiB = prepackLimitMiB;
    options.bf16Dot = bf16Dot;
    options.amx = amx;
    options.amxFp16 = amxFp16;
    options.avx2 = avx2;
    if (std::string bad = checkAttnToLoopsOptions(options); !bad.empty()) {
      getOperation()->emitError() << bad;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateAttnToLoopsPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (reportUnfused)
      remarkUnfused();
  }

  /// A remark at every sdpa the kernel did not take (with the reason), at
  /// every projection the packed-panel kernel did not take, and at the head
  /// of every primitive chain attn-fuse could not raise to sdpa: they take
  /// the unfused reference lowering.
  void remarkUnfused() {
    constexpr const char *kCost =
        "; it takes the unfused reference lowering, which materialises the "
        "[B,H,Tq,Tk] scores (tens of times slower at long sequences, see "
        "bench/RESULTS.md)";
    // attn.sdpa and attn.sdpa_partial: the reason the analysis refused it.
    auto remarkIfRefused = [&](auto sdpaLike) {
      std::string reason;
      if (failed(SdpaProblem::analyze(sdpaLike, cpuKernelSupport(), reason)))
        sdpaLike.emitRemark() << sdpaLike->getName() << " not fused: " << reason << kCost;
    };
    getOperation()->walk([&](Operation *op) {
      if (auto sdpa = dyn_cast<SdpaOp>(op)) {
        remarkIfRefused(sdpa);
      } else if (auto partial = dyn_cast<SdpaPartialOp>(op)) {
        remarkIfRefused(partial);
      } else if (auto grad = dyn_cast<SdpaGradOp>(op)) {
        if (std::string why = sdpaGradRefusal(grad, vectorWidth); !why.empty())
          grad.emitRemark() << "attn.sdpa_grad not fused: " << why << kCost;
      } else if (auto project = dyn_cast<ProjectOp>(op)) {
        project.emitRemark() << "attn.project not tiled: "
                             << projectRefusal(project, vectorWidth)
                             << "; it takes the reference lowering (plain loops)";
      } else if (auto scores = dyn_cast<ScoresOp>(op)) {
        scores.emitRemark()
            << "attn.scores not fused: a scores/softmax/weighted_sum chain that attn-fuse "
               "could not raise to attn.sdpa (an intermediate is used elsewhere, "
               "e.g. the attention weights are returned)"
            << kCost;
      }
    });
  }
};
} // namespace

std::string mlir::attn::checkAttnToLoopsOptions(const ConvertAttnToLoopsOptions &o) {
  if (o.minWorkItems < 0)
    return "convert-attn-to-loops: min-work-items must be >= 0, got " +
           std::to_string(o.minWorkItems);
  // (At most 2^30 MiB, so that the byte count cannot overflow.)
  if (o.prepackLimitMiB < 0 || o.prepackLimitMiB > (int64_t(1) << 30))
    return "convert-attn-to-loops: prepack-limit-mib must be in [0, 2^30], got " +
           std::to_string(o.prepackLimitMiB);
  if (o.tileQ > 0 && o.tileQ % kRowBlock == 0 && o.vectorWidth > 0 && o.tileK > 0 &&
      o.tileK % (2 * o.vectorWidth) == 0)
    return {};
  return "convert-attn-to-loops: tile-q must be a positive multiple of " +
         std::to_string(kRowBlock) +
         " and tile-k a positive multiple of 2 x vector-width, got tile-q=" +
         std::to_string(o.tileQ) + " tile-k=" + std::to_string(o.tileK) +
         " vector-width=" + std::to_string(o.vectorWidth);
}

void mlir::attn::populateAttnToLoopsPatterns(RewritePatternSet &patterns,
                                             const ConvertAttnToLoopsOptions &options) {
  populateSdpaToLoopsPatterns(patterns, options);
  populateProjectToLoopsPatterns(patterns, options);
  populateMergePartialToLoopsPatterns(patterns, options);
  populateBlockMaskToLoopsPatterns(patterns, options);
  populateSdpaGradToLoopsPatterns(patterns, options);
}
