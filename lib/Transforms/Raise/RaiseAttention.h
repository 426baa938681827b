//===- RaiseAttention.h - attn-raise internals ------------------*- C++ -*-===//
//
// The pieces of attn-raise the pass, the attention matcher and the layout
// helpers share: labelled tensors, contractions, and the raiser of one
// P·V contraction.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TRANSFORMS_RAISE_RAISEATTENTION_H
#define ATTN_TRANSFORMS_RAISE_RAISEATTENTION_H

#include "Bands.h"
#include "ElementTerm.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::attn::raise {


/// Labels of tensor dims: a point dim (≥ 0), or one of these.
constexpr int kUnit = -1;     // a static size-1 dim every read indexes at 0
constexpr int kHeadDim = -2;  // Q·Kᵀ's contracted dim D

/// A tensor whose dims hold the labelled dims.
struct Labelled {
  Value tensor;
  SmallVector<int> labels;
  /// K/V read through a tiled head repeat (`repeat`, not
  /// `repeat_interleave`): query head h reads head h mod Hkv of `tensor`.
  bool tiledHeads = false;
};

/// A linalg contraction with one m, n and k loop.
struct Contraction {
  linalg::LinalgOp op;
  SmallVector<unsigned> batch;
  unsigned m, n, k;
};

/// `op` as a contraction with one m, n and k loop, if it is one.
std::optional<Contraction> asContraction(Operation *op);

/// A view the raise reads through: tensor.extract_slice, expand_shape,
/// collapse_shape, cast, linalg.transpose.
bool isView(Operation *op);
/// The tensor a view (isView) reads.
Value viewSource(Operation *op);

/// The one operand of binary op `t` that is a constant (`c`), and the
/// other (`other`).
bool splitConstant(const Term *t, const Term *&other, double &c);


/// What raising one P·V contraction found out.
struct Outcome {
  bool attentionLike = false; ///< P involves an exp: worth a report
  std::string why;            ///< why it was left alone
  SmallVector<std::string> notes;
  Operation *sdpa = nullptr; ///< the attn.sdpa it became
};

/// What the scores chain X contributes to the sdpa.
struct ScoresChain {
  const Term *scores = nullptr; ///< the Q·Kᵀ leaf
  double scale = 1.0;
  const Term *additive = nullptr; ///< an additive mask tensor (a leaf)
  /// i1 terms and whether they keep where true (false: where false).
  SmallVector<std::pair<const Term *, bool>> keeps;
  /// Bands kept by constant mask tensors (a causal buffer).
  SmallVector<Band> constantBands;
  /// What is left of the scores chain when it is no named feature: the
  /// score function `functionScale · function(S)`.
  const Term *function = nullptr;
  double functionScale = 1.0;
  /// A masking constant that is finite (-FLT_MAX) made a keep-mask: a row
  /// it drops whole is a mean of V in the source, not NaN.
  bool finiteFill = false;
};

class AttentionRaiser {
public:
  AttentionRaiser(RewriterBase &rewriter, Contraction pv, bool zeroEmptyRows,
                  Outcome &outcome)
      : rewriter(rewriter), pv(pv), zeroEmptyRows(zeroEmptyRows), outcome(outcome),
        context(pv.op->getContext()) {}

  /// The sdpa's result in O's layout, or failure with outcome.why.
  FailureOr<Value> run();

private:
  LogicalResult fail(const Twine &why) {
    outcome.why = why.str();
    return failure();
  }
  LogicalResult matchSoftmax(const Term *p, const Term *&x);
  LogicalResult matchShiftedExp(const Term *e, const Term *&x);
  LogicalResult peelScores(const Term *x, ScoresChain &chain);
  LogicalResult classifyMask(const Term *m, ScoresChain &chain, bool scaledAfter);
  bool containsScores(const Term *t);
  LogicalResult toFunction(const Term *x, ScoresChain &chain, const Twine &otherwise);
  Labelled lookThrough(Labelled in, double *scale, int headLabel = kUnit);
  /// lookThrough's one attempt: reads no further than where `stop` holds.
  Labelled lookThroughUntil(Labelled in, double *scale, int headLabel,
                            const std::function<bool(Value)> &stop);
  FailureOr<Value> arrange(Labelled in, ArrayRef<int> order, bool unitsAllowed);
  Value toRank4(Value v, unsigned batchCount);
  Value fromRank4(Value v, unsigned batchCount, ArrayRef<OpFoldResult> batchSizes);
  /// [B, H, x, y] with its heads reordered: H read as [outer, inner],
  /// transposed to [inner, outer] (head o·inner + i moves to i·outer + o).
  Value swapHeadFactors(Value v, int64_t outer, int64_t inner);

  RewriterBase &rewriter;
  Contraction pv;
  bool zeroEmptyRows;
  Outcome &outcome;
  MLIRContext *context;
  SmallVector<int64_t> ranges; ///< P·V's static loop ranges
  bool nanGuard = false;        ///< P is NaN-guarded (empty rows are 0)
};

} // namespace mlir::attn::raise

#endif // ATTN_TRANSFORMS_RAISE_RAISEATTENTION_H
