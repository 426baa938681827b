//===- ModFunctions.h - score and mask functions in a kernel ----*- C++ -*-===//
//
// Emits the body of a score or mask function (attn.score_mod, attn.mask_mod,
// attn.sdpa's score_mod / mask_mod regions) where a lowering needs its
// value: one element at a time (the reference lowering, inside a
// linalg.generic, reading captured tensors) or `width` keys at a time (the
// fused CPU kernel, in vector registers, reading captured buffers).
//
// Vectorised across the key lanes: the kv position becomes the vector
// k0 + (0, 1, …, width-1); b, h and q stay scalars; an op whose operands
// are all scalars stays scalar (hoistable), one with a vector operand
// becomes its vector form; scf.if becomes a select of both branches (every
// op of a function is pure, and reads are clamped). A read of a capture
// clamps each index into the capture's shape, then loads: a scalar load
// when no index varies with the lane, one vector load when only the last
// index does and it is kv or -kv plus a lane-invariant offset (in bounds,
// reversed for -kv; else the gather below), a gather when only the last index varies, lane by lane
// otherwise. tanh, exp and exp2 of f32 use the kernels' own polynomials
// (KernelBuilder), the same on every lane.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_FLASHCORE_MODFUNCTIONS_H
#define ATTN_LIB_CONVERSION_FLASHCORE_MODFUNCTIONS_H

#include "FlashCore.h"

namespace mlir::attn::flash {

/// Where a function is evaluated.
struct ModPoint {
  Value score;   ///< score functions: f32 (width 1) or vector<width x f32>
  Value b, h, q; ///< index
  Value kv;      ///< index: the key, or the first of `width` consecutive keys
};

/// Emits `body` (a score or mask function of `kind`) at the builder's point
/// for `fb.width` consecutive keys (1: scalars) and returns its value: f32
/// or i1, or vectors of them. `captures` are the capture operands, as
/// tensors (width 1 only) or as buffers.
Value emitModFunction(KernelBuilder &fb, Region &body, ModKind kind, const ModPoint &at,
                      ValueRange captures);

/// The score function on scores `x` in log2 units (f32 or a vector, as the
/// fused kernels keep them): f(x·ln2, b, h, q, kv)·log2(e). `at.score` is
/// ignored.
Value scoreModLog2(KernelBuilder &fb, Region &body, ModPoint at, Value x, ValueRange captures);

} // namespace mlir::attn::flash

#endif // ATTN_LIB_CONVERSION_FLASHCORE_MODFUNCTIONS_H
