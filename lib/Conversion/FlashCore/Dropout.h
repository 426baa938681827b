//===- Dropout.h - the attn.dropout generator, once ----------- -*- C++ -*-===//
//
// The counter-based generator of attn.dropout (and of attn.sdpa's
// dropout_rate / dropout_seed), written once for every lowering that
// drops elements: the reference lowering of attn.dropout (AttnToLinalg)
// and the fused CPU kernel (AttnToLoops), which must drop the same ones.
// The definition is in attn.dropout's description (AttnPrimitiveOps.td):
//
//   z = seed + (n + 1)·0x9E3779B97F4A7C15, then the splitmix64 finaliser
//   keep = (z >> 40) >= ceil(rate·2^24)
//
// with n the element's row-major flat index in the tensor dropped from
// ([B,H,Tq,Tk] probabilities for sdpa).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_FLASHCORE_DROPOUT_H
#define ATTN_LIB_CONVERSION_FLASHCORE_DROPOUT_H

#include "FlashCore.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn::flash {

/// Whether the elements at the flat indices `flat` (i64, or a vector of
/// i64: one lane per element) are kept; i1 of the same shape. `seed` is an
/// i64 value (a constant, or the run-time seed operand's element).
Value dropoutKeeps(OpBuilder &b, Location loc, Value flat, Value seed, float rate);

/// The seed of an op with dropout as an i64 value: the element of its
/// run-time seed operand `runtimeSeed` (a tensor<i64> or memref<i64>) if
/// given, else the constant `seed`.
Value dropoutSeedValue(OpBuilder &b, Location loc, Value runtimeSeed, int64_t seed);

/// The factor a kept element is multiplied by: 1 / (1 - rate), in double
/// (rounded to the compute type by the caller).
double dropoutScale(float rate);

/// The dropout factors of the w = e.width elements at flat indices first,
/// first + 1, ... (`first` an index): 1 / (1 - rate) where the element is
/// kept, 0 where it is dropped, as an f32 vector.
Value dropoutFactors(KernelBuilder &e, Value first, Value seed, float rate);

/// The row-major flat index of element (b, h, q, key) of the [B, H, Tq, Tk]
/// probabilities, as an index.
Value probabilityIndex(KernelBuilder &e, Value b, int64_t heads, Value h, Value tq, Value q,
                       Value tk, Value key);

} // namespace mlir::attn::flash

#endif // ATTN_LIB_CONVERSION_FLASHCORE_DROPOUT_H
