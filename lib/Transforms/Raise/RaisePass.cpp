//===- RaisePass.cpp - attn-raise ----------------------------------------===//
//
// Every contraction of the function is tried as the P·V of an attention
// (RaiseAttention.cpp), in program order; then the projections around each
// raised one become attn.project, and a whole block attn.mha
// (RaiseMha.cpp). What dies with a raised one (its softmax, its scores, a
// block's views) is erased after.
//
//===----------------------------------------------------------------------===//
#include "RaiseAttention.h"
#include "RaiseMha.h"
#include "attn/Transforms/Passes.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

/// Erases `op`, which has no users left, and then every producer that has
/// none after it; `erased` collects them across calls.
void eraseWithDeadProducers(RewriterBase &rewriter, Operation *op,
                            DenseSet<Operation *> &erased) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    if (erased.contains(next) || !next->use_empty() || !isOpTriviallyDead(next))
      continue;
    for (Value operand : next->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(next);
    rewriter.eraseOp(next);
  }
}

/// True when every batch loop of `c` has static size 1: a plain matmul.
bool unitBatch(Contraction c) {
  SmallVector<int64_t> ranges = c.op.getStaticLoopRanges();
  return llvm::all_of(c.batch, [&](unsigned b) { return ranges[b] == 1; });
}

/// Contractions without batch dims whose result reaches `v` through views
/// and elementwise generics: the Q/K/V projections of an attention (their
/// slices, head splits and bias adds in between).
void collectProducers(Value v, llvm::SetVector<Operation *> &found, int depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return;
  if (auto c = asContraction(def)) {
    if (unitBatch(*c))
      found.insert(def);
    return;
  }
  if (isView(def))
    return collectProducers(viewSource(def), found, depth + 1);
  if (auto generic = dyn_cast<linalg::GenericOp>(def);
      generic && generic.getNumReductionLoops() == 0)
    for (Value in : generic.getDpsInputs())
      if (isa<RankedTensorType>(in.getType()))
        collectProducers(in, found, depth + 1);
}

/// Contractions without batch dims that take `v`, through views, as their
/// left operand: the output projection.
void collectConsumers(Value v, llvm::SetVector<Operation *> &found, int depth = 0) {
  if (depth > 16)
    return;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(user) ||
        (isa<linalg::TransposeOp>(user) && use.getOperandNumber() == 0)) {
      collectConsumers(user->getResult(0), found, depth + 1);
      continue;
    }
    if (auto c = asContraction(user); c && unitBatch(*c) && use.getOperandNumber() == 0)
      found.insert(user);
  }
}

/// y = x·W (or x·Wᵀ) as attn.project, when x is [M, K] and W [K, N] or
/// [N, K]: the fused CPU lowering's packed-panel GEMM instead of loops.
FailureOr<Value> raiseProjection(RewriterBase &rewriter, Operation *op) {
  Contraction c = *asContraction(op);
  SmallVector<AffineMap> maps = c.op.getIndexingMapsArray();
  MLIRContext *ctx = op->getContext();
  // Batch dims of size 1 (TOSA's rank-3 matmul) lead every operand.
  auto dims = [&](std::initializer_list<unsigned> ds) {
    SmallVector<AffineExpr> exprs;
    for (unsigned b : c.batch)
      exprs.push_back(getAffineDimExpr(b, ctx));
    for (unsigned d : ds)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(c.op.getNumLoops(), 0, exprs, ctx);
  };
  if (maps[0] != dims({c.m, c.k}) || maps[2] != dims({c.m, c.n}))
    return failure();
  WeightLayout layout;
  if (maps[1] == dims({c.k, c.n}))
    layout = WeightLayout::in_out;
  else if (maps[1] == dims({c.n, c.k}))
    layout = WeightLayout::out_in;
  else
    return failure();
  Value x = c.op.getDpsInputOperand(0)->get(), w = c.op.getDpsInputOperand(1)->get();
  Type element = getElementTypeOrSelf(x.getType());
  if (getElementTypeOrSelf(w.getType()) != element ||
      getElementTypeOrSelf(op->getResult(0).getType()) != element ||
      !isa<Float32Type, Float16Type, BFloat16Type>(element))
    return failure();
  rewriter.setInsertionPoint(op);
  if (!c.batch.empty()) {
    // W [1…, K, N] as [K, N].
    ReassociationIndices first;
    for (unsigned d = 0; d <= c.batch.size(); ++d)
      first.push_back(d);
    SmallVector<ReassociationIndices> groups{first, {static_cast<int64_t>(c.batch.size() + 1)}};
    w = tensor::CollapseShapeOp::create(rewriter, op->getLoc(), w, groups);
  }
  return ProjectOp::create(rewriter, op->getLoc(), op->getResult(0).getType(), x, w, Value(),
                           WeightLayoutAttr::get(ctx, layout))
      .getResult();
}

struct AttnRaisePass : public mlir::attn::impl::AttnRaiseBase<AttnRaisePass> {
  using AttnRaiseBase::AttnRaiseBase;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (asContraction(op))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> raised, raisedSdpas;
    for (Operation *candidate : candidates) {
      Outcome outcome;
      AttentionRaiser raiser(rewriter, *asContraction(candidate), zeroEmptyRows, outcome);
      FailureOr<Value> result = raiser.run();
      if (failed(result)) {
        if (report && outcome.attentionLike)
          candidate->emitRemark("attn-raise: not raised: ") << outcome.why;
        continue;
      }
      if (report) {
        InFlightDiagnostic remark = candidate->emitRemark("attn-raise: raised to attn.sdpa");
        for (const std::string &note : outcome.notes)
          remark << "; " << note;
      }
      rewriter.replaceAllUsesWith(candidate->getResult(0), *result);
      raised.push_back(candidate);
      raisedSdpas.push_back(outcome.sdpa);
    }
    // The projections around each raised attention become attn.project.
    llvm::SetVector<Operation *> projections;
    for (Operation *op : raisedSdpas) {
      auto sdpa = cast<SdpaOp>(op);
      for (Value in : {sdpa.getQuery(), sdpa.getKey(), sdpa.getValue()})
        collectProducers(in, projections);
      collectConsumers(sdpa.getResult(), projections);
    }
    if (raiseProjections)
      for (Operation *op : projections) {
        FailureOr<Value> project = raiseProjection(rewriter, op);
        if (failed(project))
          continue;
        if (report)
          op->emitRemark("attn-raise: projection raised to attn.project");
        rewriter.replaceAllUsesWith(op->getResult(0), *project);
        raised.push_back(op);
      }
    // The softmax and scores chains die with their P·V, the contractions
    // with their attn.project.
    DenseSet<Operation *> erased;
    for (Operation *op : llvm::reverse(raised))
      eraseWithDeadProducers(rewriter, op, erased);
    if (!raiseProjections || !raiseMha)
      return;
    // With the projections raised, each whole block becomes one attn.mha
    // (RaiseMha.cpp) where the head split and merge are proven; its views
    // and projections die with the output projection. (A fresh set: new
    // ops may reuse the erased ones' addresses.)
    DenseSet<Operation *> erasedBlocks;
    for (Operation *op : raisedSdpas) {
      std::string why;
      FailureOr<Operation *> dead = raiseBlockToMha(rewriter, cast<SdpaOp>(op), why);
      if (failed(dead)) {
        if (report && !why.empty())
          emitRemark(op->getLoc(), "attn-raise: not raised to attn.mha: ") << why;
        continue;
      }
      if (report)
        emitRemark(op->getLoc(), "attn-raise: the block raised to attn.mha");
      eraseWithDeadProducers(rewriter, *dead, erasedBlocks);
    }
  }
};

} // namespace

