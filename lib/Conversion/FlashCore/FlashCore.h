//===- FlashCore.h - what every fused attention kernel shares ---*- C++ -*-===//
//
// The FlashAttention core the CPU kernel (AttnToLoops), the GPU kernel
// schedule (AttnToGpu) and the reference lowering (AttnToLinalg) build on,
// so that each rule is written once:
//
//   SdpaProblem    what one attn.sdpa asks for (dims, GQA group, scale·log2e,
//                  causal kind, mask kind), read once from the op, with the
//                  reason when a kernel cannot take it;
//   SdpaBuffers    its operands as buffers, run-time dims and the output;
//   FlashBuilder   scalar and vector arithmetic, loads/stores, loops, and
//                  the one exp2 (NaN in, NaN out; -inf in, 0 out);
//   KeyVisibility  which keys a query row sees (causal limit per row and per
//                  tile): the window and key-length rules extend it;
//   maskOperandDims / maskIndices   numpy broadcasting of the mask operand;
//   TileState      the per-Q-tile online-softmax state (running max m,
//                  running sum l, accumulator) a caller can merge.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_FLASHCORE_FLASHCORE_H
#define ATTN_LIB_CONVERSION_FLASHCORE_FLASHCORE_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <limits>
#include <optional>
#include <string>

namespace mlir::attn::flash {

inline constexpr double kLog2E = 1.4426950408889634;

/// The mask operand's kind.
enum class MaskKind { None, Keep, Additive };

/// What a kernel can take beyond the common case (f32, no dropout, static
/// head counts and head dims).
struct KernelSupport {
  StringRef name;            ///< "CPU kernel", "GPU kernel": for reasons
  bool lowPrecision = false; ///< f16/bf16 operands (computed in f32)
};

/// What one attn.sdpa asks for, read once from the op.
struct SdpaProblem {
  mutable SdpaOp op; // accessors are non-const
  RankedTensorType queryType, keyType, valueType, resultType;
  RankedTensorType maskType; ///< null without a mask
  Type elementType;
  int64_t heads = 0, kvHeads = 0, d = 0, dv = 0;
  int64_t group = 1; ///< query heads per K/V head (GQA)
  double scale = 1.0, scaleLog2 = kLog2E; ///< scale and scale·log2(e)
  std::optional<CausalKind> causal;
  MaskKind maskKind = MaskKind::None;

  /// Reads `op`; fails with `reason` set when a kernel with `support`
  /// cannot take it.
  static FailureOr<SdpaProblem> analyze(SdpaOp op, KernelSupport support,
                                        std::string &reason);
};

/// The problem's operands as buffers and its run-time dims, plus the freshly
/// allocated [B, H, Tq, Dv] output.
struct SdpaBuffers {
  Value q, k, v, mask, out;
  Value batch, tq, tk; ///< index values
};

/// Converts the operands to buffers (of the type `bufferType` gives each
/// tensor type) and allocates the output at the builder's insertion point.
SdpaBuffers materializeBuffers(OpBuilder &b, const SdpaProblem &p,
                               function_ref<MemRefType(RankedTensorType)> bufferType);

/// The output buffer as the op's result tensor.
Value outputTensor(OpBuilder &b, const SdpaProblem &p, const SdpaBuffers &bufs);

/// Scalar and vector IR-building helpers bound to one builder and location.
/// `width` is the vector length of vec()/splat()/vload(); arithmetic on
/// values works on scalars and vectors alike.
struct FlashBuilder {
  OpBuilder &b;
  Location loc;
  int64_t width = 1;

  Type f32() { return b.getF32Type(); }
  VectorType vec() { return VectorType::get({width}, f32()); }

  // Index arithmetic.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minI(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxI(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmpI(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value lt(Value x, Value y) { return cmpI(arith::CmpIPredicate::slt, x, y); }
  Value le(Value x, Value y) { return cmpI(arith::CmpIPredicate::sle, x, y); }
  Value gt(Value x, Value y) { return cmpI(arith::CmpIPredicate::sgt, x, y); }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value ceilDiv(Value x, int64_t d) {
    return arith::CeilDivSIOp::create(b, loc, x, idx(d));
  }

  // Float constants and arithmetic (scalar or vector operands).
  Value f(double v) {
    return arith::ConstantOp::create(b, loc, f32(), b.getF32FloatAttr(v));
  }
  Value splat(double v) { return constantLike(vec(), v); }
  Value negInf() { return f(-std::numeric_limits<double>::infinity()); }
  /// A constant of type `t` (f32 or a vector of f32) holding `v`.
  Value constantLike(Type t, double v);
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, loc, x, y); }
  Value cmpF(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  /// x·y + acc: vector.fma on vectors; on scalars a multiply-add with the
  /// `contract` flag (one fma instruction where the target has it).
  Value fma(Value x, Value y, Value acc);
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value bcast(Value s) { return vector::BroadcastOp::create(b, loc, vec(), s); }

  /// The factor that normalises a row by its running sum l (f32): 1/l, and
  /// 0 where l = 0 (a row that saw no key gives 0); NaN stays NaN.
  Value inverseRowSum(Value l) {
    Value empty = cmpF(arith::CmpFPredicate::OEQ, l, f(0.0));
    return select(empty, f(0.0), fdiv(f(1.0), l));
  }

  /// 2^x (x f32 or a vector of f32) with plain arithmetic, the same code on
  /// CPU and GPU: x clamped to [-127, 127], n = round(x), Cephes' degree-6
  /// polynomial for 2^(x-n) on [-0.5, 0.5], 2^n built in the exponent bits.
  /// x <= -127 (-inf included) gives exactly 0; NaN in, NaN out.
  Value exp2(Value x);

  // Memory.
  Value load(Value m, ValueRange ivs) { return memref::LoadOp::create(b, loc, m, ivs); }
  /// A load extended to f32 (from f16/bf16).
  Value loadF32(Value m, ValueRange ivs);
  void store(Value v, Value m, ValueRange ivs) {
    memref::StoreOp::create(b, loc, v, m, ivs);
  }
  Value vload(Value m, ValueRange ivs) {
    return vector::LoadOp::create(b, loc, vec(), m, ivs);
  }
  void vstore(Value v, Value m, ValueRange ivs) {
    vector::StoreOp::create(b, loc, v, m, ivs);
  }

  // Structured control flow; each body is emitted with `b` inside it.
  /// for (iv = lb; iv < ub; iv += step) body(iv)
  void loop(Value lb, Value ub, int64_t step, function_ref<void(Value)> body);
  /// A loop carrying `init`; body(iv, carried) returns the next values.
  SmallVector<Value> loopCarry(Value lb, Value ub, int64_t step, ValueRange init,
                               function_ref<SmallVector<Value>(Value, ValueRange)> body);
  /// if (cond) body()
  void ifThen(Value cond, function_ref<void()> body);
  /// cond ? then() : otherwise(), each yielding one value.
  Value ifElse(Value cond, Type type, function_ref<Value()> then,
               function_ref<Value()> otherwise);
};

/// Which keys query row i sees: all keys j < Tk, and, when causal,
/// j <= i + offset with offset 0 (top_left) or Tk - Tq (bottom_right).
class KeyVisibility {
public:
  KeyVisibility(FlashBuilder &fb, std::optional<CausalKind> causal, Value tq,
                Value tk);

  bool isCausal() const { return causal.has_value(); }
  /// One past the last key any of the rows [.., rowEnd) sees, in [0, Tk];
  /// `rowEnd` is built only when the limit depends on it.
  Value keyEnd(function_ref<Value()> rowEnd);
  /// The last key row i sees (may be < 0 or >= Tk; clamp when indexing).
  Value lastVisible(Value row);
  /// Whether key `key` is visible from row `row` (i1).
  Value isVisible(Value row, Value key);

private:
  FlashBuilder &fb;
  std::optional<CausalKind> causal;
  Value tk, offset;
};

/// For each dim of a mask of type `maskType` (right-aligned against
/// [B, H, Tq, Tk], numpy broadcasting), the position in (b, h, q, k) it is
/// indexed by, or nullopt where a static 1 is broadcast (index 0).
SmallVector<std::optional<unsigned>> maskOperandDims(ShapedType maskType);

/// The indices into a mask of type `maskType` for element (b, h, q, k).
SmallVector<Value> maskIndices(FlashBuilder &fb, ShapedType maskType, Value b,
                               Value h, Value q, Value k);

/// The online-softmax state of one Q tile: running max m[row] and running
/// sum l[row] (log2 units), and the unnormalised accumulator acc[row][c].
/// Partial states over disjoint key ranges merge by
///   m = max(m1, m2), l = 2^(m1-m)·l1 + 2^(m2-m)·l2,
///   acc = 2^(m1-m)·acc1 + 2^(m2-m)·acc2;  O = acc / l.
struct TileState {
  Value m, l, acc; ///< buffers: [rows], [rows], layout chosen by the kernel
};

} // namespace mlir::attn::flash

#endif // ATTN_LIB_CONVERSION_FLASHCORE_FLASHCORE_H
