//===- AttnDialect.h - the attn dialect, its attributes and ops -*- C++ -*-===//
#ifndef ATTN_DIALECT_ATTNDIALECT_H
#define ATTN_DIALECT_ATTNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnDialect.h.inc"
#include "attn/Dialect/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnAttrs.h.inc"

#include "attn/Dialect/AttnInterfaces.h.inc"

namespace mlir::attn {
/// Fails, with a diagnostic suggesting the right spelling, when `op` carries
/// an attribute it does not define whose name has no dialect prefix (a
/// misspelt or foreign attribute would otherwise be ignored silently).
/// Dialect-prefixed discardable attributes (`foo.bar`) are allowed.
LogicalResult verifyNoUnknownAttributes(Operation *op);

/// What attention on `elt` data accumulates in and keeps its partial results
/// in (sdpa_partial's O and lse, logsumexp, merge_partial, sdpa_grad's
/// lse): f64 for f64, f32 for f32, f16 and bf16.
inline Type accumulatorType(Type elt) {
  return elt.isF64() ? elt : Float32Type::get(elt.getContext());
}

/// The diagonal d(i) the causal and window keep rules of an op measure
/// from: the causal kind when the op has one, else the window's align, else
/// bottom_right (FlashAttention's convention).
CausalKind keepRuleDiagonal(std::optional<CausalKind> causal, WindowAttr window);

/// While alive, hears every failed dim check of the attn verifiers on this
/// thread: the value, the dim, and the size the op expected there. The AOT
/// compiler uses it to walk test shapes towards ones the ops accept
/// (lib/Runtime/ShapeRelations.cpp); verifiers behave the same with or
/// without a listener. Listeners nest; the innermost hears. The callback is
/// referenced, not copied: it must outlive the listener.
class DimMismatchListener {
public:
  using Callback = llvm::function_ref<void(Value, int64_t dim, int64_t expected)>;
  explicit DimMismatchListener(Callback callback);
  ~DimMismatchListener();
  DimMismatchListener(const DimMismatchListener &) = delete;
  DimMismatchListener &operator=(const DimMismatchListener &) = delete;
  /// Tells this thread's innermost listener, if any.
  static void notify(Value v, int64_t dim, int64_t expected);

private:
  Callback callback;
  DimMismatchListener *outer;
};

/// The two kinds of programmable function (AttnModOps.td): a score
/// function (f32 score, b, h, q, kv, captures...) -> f32 and a mask
/// function (b, h, q, kv, captures...) -> i1.
enum class ModKind { Score, Mask };

/// Checks a score or mask function region of `op` (named `name` in
/// messages): one block whose arguments are the kind's scalars followed by
/// one per capture (of the capture's type), only arith/math ops on scalars,
/// scf.if/scf.yield and tensor.extract of a capture inside, ending in
/// attn.yield of an f32 (score) or i1 (mask). Each message names the
/// problem and the op at fault.
LogicalResult verifyModFunction(Operation *op, Region &region, ModKind kind,
                                ValueRange captures, StringRef name);

/// The number of leading block arguments of a `kind` function before its
/// captures: 5 (score, b, h, q, kv) or 4 (b, h, q, kv).
inline unsigned modFunctionPositions(ModKind kind) { return kind == ModKind::Score ? 5 : 4; }

/// Op trait of every attn op: verifyNoUnknownAttributes.
template <typename ConcreteType>
class StrictAttributes : public OpTrait::TraitBase<ConcreteType, StrictAttributes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyNoUnknownAttributes(op);
  }
};
} // namespace mlir::attn

#define GET_OP_CLASSES
#include "attn/Dialect/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTNDIALECT_H
