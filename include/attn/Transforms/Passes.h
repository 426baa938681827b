//===- Passes.h - attn-to-attn passes ---------------------------*- C++ -*-===//
#ifndef ATTN_TRANSFORMS_PASSES_H
#define ATTN_TRANSFORMS_PASSES_H

#include "attn/Dialect/AttnDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Transforms/Passes.h.inc"

/// mha → project/split_heads/sdpa/merge_heads/project.
void populateDecomposeMhaPatterns(RewritePatternSet &patterns);
/// sdpa → scores/scale/mask/softmax/dropout/weighted_sum.
void populateDecomposeSdpaPatterns(RewritePatternSet &patterns);
/// sdpa_varlen → a loop over its sequences of sdpa on slices of the rows.
void populateDecomposeVarlenPatterns(RewritePatternSet &patterns);
/// The primitive chain of one sdpa / sdpa_partial, built at `b`'s insertion
/// point: the values that replace the op's results (what attn-decompose
/// and AggregatedOpInterface::decomposeOperation use); failure when the
/// head dim is dynamic and no scale is given.
FailureOr<SmallVector<Value>> decomposeSdpa(OpBuilder &b, SdpaOp op);
FailureOr<SmallVector<Value>> decomposeSdpaPartial(OpBuilder &b, SdpaPartialOp op);
/// scores/scale/mask/softmax/dropout/weighted_sum → sdpa.
void populateFuseSdpaPatterns(RewritePatternSet &patterns);
/// The vector-Jacobian rules (DifferentiableOpInterface) of sdpa, project,
/// split_heads, merge_heads and scale, as external models
/// (lib/Transforms/Differentiate/VjpRules.cpp). attn-differentiate adds
/// them itself.
void registerDifferentiableOpModels(DialectRegistry &registry);
/// The unit argument attribute that makes a function argument a constant
/// for attn-differentiate (no gradient result; values computed only from
/// such arguments need no gradient), and whether `arg` carries it.
inline constexpr llvm::StringLiteral kNoGradAttr = "attn.no_grad";
bool isNoGradArgument(BlockArgument arg);
/// Whether attn-differentiate takes `op`'s backward through its primitive
/// chain: a score function reading a float capture that gets a gradient
/// (a learned bias table). Other score and mask functions go to
/// attn.sdpa_grad's regions (the fused backward).
bool scoreFunctionNeedsChain(SdpaOp op);
/// The gradient of attention sinks ([H] f32) whose rows `y` ([B,H,T,n]: the
/// output O, or the probabilities P) and their adjoint `dy` have the row
/// log-sum-exp `lse` ([B,H,T] f32, sinks included):
/// dsinks[h] = −Σ_{b,i} exp(sinks[h] − lse[b,h,i]) · Σ_n dy·y, in f32 (the
/// rule attn-differentiate uses beside attn.sdpa_grad and for attn.softmax).
Value buildSinksAdjoint(OpBuilder &b, Location loc, Value dy, Value y, Value lse, Value sinks);

/// f32 math.exp2 / math.tanh (scalar or vector) → the polynomials of
/// KernelBuilder::exp2Polynomial / tanhFromExp2 (attn-expand-math).
void populateExpandMathPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "attn/Transforms/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_PASSES_H
