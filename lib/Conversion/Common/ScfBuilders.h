//===- ScfBuilders.h - structured-loop helpers for the attn lowerings -----===//
//
// The loop, carried loop and if-then builders that the fused CPU lowering
// (AttnToLoops) and the GPU schedule (AttnToGpu) both write their kernels
// with: each body is emitted with `b` positioned inside the new region, so
// the kernels read as straight-line C++.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_COMMON_SCFBUILDERS_H
#define ATTN_LIB_CONVERSION_COMMON_SCFBUILDERS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::scf_builders {

/// for (iv = lb; iv < ub; iv += step) body(iv)
inline void buildFor(OpBuilder &b, Location loc, Value lb, Value ub, Value step,
                     function_ref<void(Value)> body) {
  scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                     [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                       OpBuilder::InsertionGuard g(b);
                       b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                       body(iv);
                       scf::YieldOp::create(b, loc);
                     });
}

/// A loop carrying `init`; `body(iv, carried)` returns the next values.
inline SmallVector<Value>
buildForCarry(OpBuilder &b, Location loc, Value lb, Value ub, Value step,
              ValueRange init,
              function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto op = scf::ForOp::create(
      b, loc, lb, ub, step, init,
      [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(iv, args));
      });
  return SmallVector<Value>(op.getResults());
}

/// if (cond) body()
inline void buildIfThen(OpBuilder &b, Location loc, Value cond,
                        function_ref<void()> body) {
  scf::IfOp::create(b, loc, cond, [&](OpBuilder &nb, Location) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    body();
    scf::YieldOp::create(b, loc);
  });
}

/// Cephes' degree-6 polynomial for 2^f on [-0.5, 0.5], highest power
/// first; the constant term 1 follows. Both lowerings compute 2^x as
/// 2^round(x) (built in the exponent bits) times this polynomial.
inline constexpr double kExp2Coefficients[6] = {
    1.535336188319500e-4, 1.339887440266574e-3, 9.618437357674640e-3,
    5.550332471162809e-2, 2.402264791363012e-1, 6.931472028550421e-1};

} // namespace mlir::attn::scf_builders

#endif // ATTN_LIB_CONVERSION_COMMON_SCFBUILDERS_H
