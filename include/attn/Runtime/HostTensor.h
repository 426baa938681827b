//===- HostTensor.h - Host tensors and .npy I/O ------------------*- C++ -*-===//
//
// A dense host tensor (raw little-endian bytes plus dtype and shape) and a
// reader/writer for NumPy's .npy format (versions 1.0, 2.0 and 3.0).
//
// readNpy never crashes and never allocates more than the file holds: every
// problem is reported as a one-line llvm::Error "<path>: <problem>".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOSTTENSOR_H
#define ATTN_RUNTIME_HOSTTENSOR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::runtime {

/// Element types. npy descr: F32 '<f4', F16 '<f2', Bool '|b1' (on a
/// little-endian host '=f4' and '=f2' are accepted as well).
enum class DType { F32, F16, Bool };

/// "float32", "float16", "bool".
llvm::StringRef dtypeName(DType dtype);
/// 4, 2, 1.
size_t dtypeSize(DType dtype);
/// The npy descr written for a dtype: "<f4", "<f2", "|b1".
llvm::StringRef dtypeDescr(DType dtype);

/// A dense tensor in C (row-major) order; `bytes` holds the elements little
/// endian, numel() * dtypeSize(dtype) bytes. Bool elements are bytes 0 or 1.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< empty: a scalar (numel 1)
  std::vector<uint8_t> bytes;

  int64_t numel() const;
  static HostTensor zeros(DType dtype, std::vector<int64_t> shape);
  /// The element at a row-major index as a float (F16 converted, Bool 0/1).
  float getAsFloat(int64_t flatIndex) const;
  /// Stores v at a row-major index (F16 rounded to nearest even, Bool
  /// v != 0).
  void setFromFloat(int64_t flatIndex, float v);
};

/// IEEE binary16 <-> binary32. floatToHalf rounds to nearest even; overflow
/// gives inf, NaN stays NaN (quiet), denormals are exact both ways.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);

/// Reads a .npy file (version 1.0, 2.0 or 3.0; C order; dtype float32,
/// float16 or bool, little endian). Errors are one line: "<path>: <problem>".
llvm::Expected<HostTensor> readNpy(const std::string &path);

/// Writes a version 1.0 .npy file (2.0 if the header would not fit), the
/// header padded with spaces and a final newline so the data starts at a
/// multiple of 64 bytes, exactly as numpy.save does.
llvm::Error writeNpy(const std::string &path, const HostTensor &t);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_HOSTTENSOR_H
