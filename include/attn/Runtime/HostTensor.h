//===- HostTensor.h - Host tensors and .npy I/O ------------------*- C++ -*-===//
//
// A dense host tensor (raw little-endian bytes plus dtype and shape), a
// reader/writer for NumPy's .npy format (versions 1.0, 2.0 and 3.0), a
// reader of .npz archives, and the explicit conversions from what NumPy
// writes (float64, integer masks, big endian, Fortran order) to a tensor.
//
// readNpy never crashes and never allocates more than the file holds: every
// problem is reported as a one-line llvm::Error "<path>: <problem>".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOSTTENSOR_H
#define ATTN_RUNTIME_HOSTTENSOR_H

#include "attn/ElementType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::runtime {

/// The project's one element-type enum (attn/ElementType.h). npy descr:
/// F32 '<f4', F16 '<f2', Bool '|b1', I32 '<i4', I64 '<i8' (on a
/// little-endian host '=f4', '=i4', ... are accepted as well). BF16 has no
/// npy dtype: it is read from float arrays (rounded) and written as float32.
using attn::ElementType;

/// "float32", "float16", "bool", "int32", "int64", "bfloat16".
llvm::StringRef dtypeName(ElementType dtype);
/// 4, 2, 1, 4, 8, 2.
size_t dtypeSize(ElementType dtype);
/// The npy descr written for a dtype: "<f4", "<f2", "|b1", "<i4", "<i8";
/// "<f4" for BF16 (written as float32).
llvm::StringRef dtypeDescr(ElementType dtype);

/// A dense tensor in C (row-major) order; `bytes` holds the elements little
/// endian, numel() * dtypeSize(dtype) bytes. Bool elements are bytes 0 or 1.
struct HostTensor {
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape; ///< empty: a scalar (numel 1)
  std::vector<uint8_t> bytes;

  int64_t numel() const;
  static HostTensor zeros(ElementType dtype, std::vector<int64_t> shape);
  /// The element at a row-major index as a float (F16 converted, Bool 0/1,
  /// integers converted).
  float getAsFloat(int64_t flatIndex) const;
  /// The element as a double: F64 exactly, every other type as getAsFloat.
  double getAsDouble(int64_t flatIndex) const;
  /// Stores v at a row-major index (F16 rounded to nearest even, Bool
  /// v != 0, integers rounded to nearest and saturated).
  void setFromFloat(int64_t flatIndex, float v);
  /// The element at a row-major index as an integer (floats truncated).
  int64_t getAsInt(int64_t flatIndex) const;
};

/// IEEE binary16 <-> binary32. floatToHalf rounds to nearest even; overflow
/// gives inf, NaN stays NaN (quiet), denormals are exact both ways.
float halfToFloat(uint16_t h);
/// fp8 e4m3 (OCP E4M3FN: bias 7, no infinities, S.1111.111 NaN) <->
/// binary32. floatToE4m3 rounds to nearest even and saturates at ±448.
float e4m3ToFloat(uint8_t x);
uint8_t floatToE4m3(float f);
uint16_t floatToHalf(float f);
/// bfloat16 <-> binary32. floatToBfloat16 rounds to nearest even; NaN stays
/// a (quiet) NaN.
float bfloat16ToFloat(uint16_t h);
uint16_t floatToBfloat16(float f);

/// Reads a .npy file (version 1.0, 2.0 or 3.0; C order; dtype float32,
/// float16 or bool, little endian). Errors are one line: "<path>: <problem>".
llvm::Expected<HostTensor> readNpy(const std::string &path);

/// Reads only some rows of dim `dim` of a .npy file (what readNpy accepts):
/// `rowsOf(length of dim)` gives the rows, in the order they are wanted
/// (or an error); the result has that many rows in dim `dim`. Reads the
/// header and those rows, nothing else (a rank's share of a tensor larger
/// than its memory).
llvm::Expected<HostTensor>
readNpyRows(const std::string &path, int64_t dim,
            llvm::function_ref<llvm::Expected<std::vector<int64_t>>(int64_t)> rowsOf);

//===----------------------------------------------------------------------===//
// Raw arrays: what a .npy file holds, before any conversion
//===----------------------------------------------------------------------===//

/// An array as a .npy file stores it: any boolean, integer or floating-point
/// dtype, either byte order, C or Fortran order. readNpy() accepts only what
/// is exactly a HostTensor; readNpyArray() accepts all of this, and
/// toHostTensor() converts it explicitly, saying what it did.
struct NpyArray {
  enum class Kind { Bool, Int, UInt, Float };
  Kind kind = Kind::Float;
  unsigned itemSize = 4;     ///< bytes per element: 1, 2, 4 or 8
  bool bigEndian = false;    ///< elements stored most significant byte first
  bool fortranOrder = false; ///< column-major element order
  std::string descr;         ///< as written in the header, e.g. "<f8"
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; ///< numel() * itemSize bytes, as in the file

  int64_t numel() const;
  /// NumPy's name of the dtype: "float64", "int32", "uint8", "bool".
  std::string dtypeStr() const;
  /// The HostTensor dtype this is without any conversion (little-endian
  /// float32/float16/int32/int64 or bool); nullopt otherwise.
  std::optional<ElementType> exactDType() const;
};

/// Reads a .npy file of any boolean ('|b1'), signed or unsigned integer
/// ('i1'..'i8', 'u1'..'u8') or float ('f2', 'f4', 'f8') dtype, either byte
/// order, C or Fortran order. Errors are one line: "<path>: <problem>", with
/// the same guarantees as readNpy.
llvm::Expected<NpyArray> readNpyArray(const std::string &path);

/// The same from bytes in memory (e.g. a member of an .npz archive); errors
/// are "<name>: <problem>".
llvm::Expected<NpyArray> parseNpyArray(llvm::StringRef name,
                                       llvm::ArrayRef<uint8_t> bytes);

/// One array of an .npz archive: `name` is the member's file name without
/// its ".npy" suffix (the keyword of np.savez, or arr_0, arr_1, ...).
struct NpzMember {
  std::string name;
  NpyArray array;
};

/// Reads an .npz archive (what np.savez and np.savez_compressed write: a zip
/// archive, zip64 included, of .npy members, stored or deflated; the CRC-32
/// of every member is checked). Members are returned in archive order.
/// Errors are one line: "<path>: <problem>", or "<path>:<member>: <problem>"
/// for a problem inside one member. Never allocates more than a member can
/// hold (its declared size, itself bounded by deflate's largest ratio).
llvm::Expected<std::vector<NpzMember>> readNpz(const std::string &path);

/// True when `path` is a regular file that starts like a zip archive
/// ("PK\x03\x04", or "PK\x05\x06" for an empty one); false otherwise,
/// including when it cannot be read (readNpyArray then says why).
bool isZipFile(const std::string &path);

/// Converts a raw array into a HostTensor for a destination of dtype
/// `target` (nullopt: keep the array's own dtype). `name` prefixes errors.
///
/// With `allowConversions`, the array may be byte-swapped (big endian),
/// transposed into C order (Fortran order), converted from float64 to a
/// float32/float16 target (rounded to nearest even), or, for a Bool target,
/// converted from any integer dtype (nonzero = true), or, for an int32/int64
/// target, converted from any integer dtype whose values fit (a value that
/// does not fit is an error naming it); each conversion done
/// is appended to `applied` as a short phrase ("byte-swapped from big-endian
/// '>f8'", "transposed from Fortran order", "converted float64 to float32",
/// "converted int64 to bool (nonzero = true)"). An array whose own dtype is a
/// HostTensor dtype other than `target` is returned as that dtype (the
/// caller's dtype check reports the mismatch). Without `allowConversions`
/// every such case is the error readNpy gives.
llvm::Expected<HostTensor> toHostTensor(const NpyArray &array,
                                        llvm::StringRef name,
                                        std::optional<ElementType> target,
                                        bool allowConversions,
                                        std::vector<std::string> *applied = nullptr);

/// IEEE binary64 -> binary16, rounded to nearest even once (no double
/// rounding through binary32).
uint16_t doubleToHalf(double d);
/// IEEE binary64 -> binary32, rounded to nearest even; overflow gives inf.
float doubleToFloat(double d);

/// Writes a version 1.0 .npy file (2.0 if the header would not fit), the
/// header padded with spaces and a final newline so the data starts at a
/// multiple of 64 bytes, exactly as numpy.save does.
llvm::Error writeNpy(const std::string &path, const HostTensor &t);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_HOSTTENSOR_H
