//===- ElementType.h - The element types kernels exchange -------*- C++ -*-===//
//
// The one element-type enum of the project: the public API (TensorRef,
// TensorInfo), the runtime (HostTensor, the JIT's signatures) and the npy
// reader all use it. Its values are those of the C ABI's attn_aot_dtype
// (include/attn-c/Aot.h), checked where the AOT compiler maps one to the
// other. No MLIR or LLVM here: the npy support code and API users include it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ELEMENTTYPE_H
#define ATTN_ELEMENTTYPE_H

namespace attn {

/// float32; float16 (IEEE binary16, as uint16_t bits); bool (one byte, 0 or
/// 1); int32 and int64 (index-like operands: key lengths, tables); bfloat16
/// (the upper 16 bits of an IEEE binary32); int8 (quantised K/V caches,
/// attn.dequantize); float64 (for checking: gradcheck, finite differences;
/// the reference lowering computes it in f64); fp8 e4m3 (OCP FP8 E4M3FN,
/// one byte; quantised K/V caches: in .npy files and NumPy arrays its
/// bytes as uint8).
enum class ElementType {
  F32 = 0,
  F16 = 1,
  Bool = 2,
  I32 = 3,
  I64 = 4,
  BF16 = 5,
  I8 = 6,
  F64 = 7,
  F8E4M3 = 8
};

} // namespace attn

#endif // ATTN_ELEMENTTYPE_H
