//===- NpyConvert.cpp - NumPy arrays converted to host tensors ------------===//
//
// toHostTensor: what NumPy writes (float64, integer masks, big endian,
// Fortran order) turned into a HostTensor of the dtype a destination
// wants, each conversion correctly rounded and named in a note; and the
// float64 -> float32/float16 roundings it uses.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/HostTensor.h"

#include "NpyInternal.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace llvm;

namespace attn::runtime {

using namespace detail;

float doubleToFloat(double d) {
  // The smallest magnitude that rounds to inf: halfway between FLT_MAX and
  // 2^128 (a tie, which goes to the even 2^128).
  if (std::fabs(d) >= 0x1.ffffffp127)
    return std::copysign(std::numeric_limits<float>::infinity(), d);
  return static_cast<float>(d); // in range (or NaN): round to nearest even
}

uint16_t doubleToHalf(double d) {
  if (std::isnan(d))
    return floatToHalf(static_cast<float>(d));
  if (std::fabs(d) >= 65520.0) // rounds to inf
    return floatToHalf(std::copysign(std::numeric_limits<float>::infinity(), d));
  // Round to binary32 with round-to-odd, then to binary16 with round to
  // nearest even: binary32 has 24 >= 2 * 11 + 2 bits, so the result is the
  // correctly rounded binary16 (no double-rounding error).
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d) {
    uint32_t bits = bit_cast<uint32_t>(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d))
      --bits; // one ulp toward zero: the truncated value
    bits |= 1u;
    f = bit_cast<float>(bits);
  }
  return floatToHalf(f);
}

namespace {

/// The element at `p` (itemSize bytes, little endian) as a double.
double loadAsDouble(const uint8_t *p, NpyArray::Kind kind, unsigned itemSize) {
  switch (kind) {
  case NpyArray::Kind::Bool:
    return *p ? 1.0 : 0.0;
  case NpyArray::Kind::Float:
    if (itemSize == 8)
      return bit_cast<double>(support::endian::read64le(p));
    if (itemSize == 4)
      return bit_cast<float>(support::endian::read32le(p));
    return halfToFloat(support::endian::read16le(p));
  case NpyArray::Kind::Int:
  case NpyArray::Kind::UInt:
    break;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < itemSize; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  if (kind == NpyArray::Kind::Int && itemSize < 8 && (v >> (8 * itemSize - 1)) & 1)
    v |= ~uint64_t(0) << (8 * itemSize); // sign-extend
  return kind == NpyArray::Kind::Int ? static_cast<double>(static_cast<int64_t>(v))
                                       : static_cast<double>(v);
}

/// Column-major -> row-major, element by element.
std::vector<uint8_t> fortranToC(ArrayRef<uint8_t> src, ArrayRef<int64_t> shape,
                                size_t itemSize) {
  std::vector<uint8_t> dst(src.size());
  int64_t n = static_cast<int64_t>(src.size() / itemSize);
  if (n == 0)
    return dst;
  size_t rank = shape.size();
  // Column-major strides (elements) and a row-major odometer over them.
  std::vector<int64_t> stride(rank), idx(rank, 0);
  int64_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    stride[k] = s;
    s *= shape[k];
  }
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst.data() + static_cast<size_t>(i) * itemSize,
                src.data() + static_cast<size_t>(off) * itemSize, itemSize);
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < shape[k]) {
        off += stride[k];
        break;
      }
      off -= stride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
  return dst;
}

} // namespace

Expected<HostTensor> toHostTensor(const NpyArray &a, StringRef name,
                                  std::optional<ElementType> target,
                                  bool allowConversions,
                                  std::vector<std::string> *applied) {
  std::string path = name.str();
  std::optional<ElementType> exact = a.exactDType();
  bool needsSwap = a.bigEndian && a.itemSize > 1;
  bool needsTranspose = a.fortranOrder && a.shape.size() >= 2;
  // The dtype the tensor gets, and whether the values are converted.
  std::optional<ElementType> out;
  bool convertValues = false;
  if (exact && (!target || *target == *exact)) {
    out = exact;
  } else if (target && (*target == ElementType::F32 || *target == ElementType::F16) &&
             a.kind == NpyArray::Kind::Float && a.itemSize == 8) {
    out = target, convertValues = true;
  } else if (target == ElementType::BF16 && a.kind == NpyArray::Kind::Float) {
    // No npy dtype is bfloat16: any float array is rounded to it.
    out = target, convertValues = true;
  } else if (target == ElementType::F8E4M3 && a.itemSize == 1 &&
             (a.kind == NpyArray::Kind::UInt || a.kind == NpyArray::Kind::Int)) {
    // No npy dtype is fp8: its bytes, as uint8 (or int8).
    out = target;
  } else if ((target == ElementType::Bool || target == ElementType::I32 ||
              target == ElementType::I64) &&
             (a.kind == NpyArray::Kind::Int || a.kind == NpyArray::Kind::UInt)) {
    out = target, convertValues = true;
  } else if (exact) {
    out = exact; // a mismatch the caller's dtype check reports
  } else if (a.kind == NpyArray::Kind::Float && a.itemSize <= 4 && a.bigEndian) {
    // Big-endian float32/float16: byte-swapped into its own dtype.
    out = a.itemSize == 4 ? ElementType::F32 : ElementType::F16;
  }

  if (!allowConversions) {
    // Exactly what readNpy accepts.
    if (!exact) {
      if (a.kind == NpyArray::Kind::Float && a.itemSize <= 4 && a.bigEndian)
        return npyError(path, "big-endian dtype '" + a.descr + "' is not supported");
      return npyError(path, "unsupported dtype '" + escape(a.descr) + "' " + kSupported);
    }
    if (a.fortranOrder)
      return npyError(path, "Fortran-order arrays are not supported");
    out = exact, convertValues = false;
    needsSwap = needsTranspose = false;
  }
  if (!out) {
    std::string why = "unsupported dtype '" + escape(a.descr) + "' (" + a.dtypeStr();
    if (target)
      why += " for a " + dtypeName(*target).str() + " destination";
    why += "; accepted: float32 '<f4', float16 '<f2', float64 '<f8', bool '|b1', int8 '|i1', "
           "int32 '<i4', int64 '<i8', float64 for float32/float16, integers for "
           "bool/int32/int64 and uint8 '|u1' bytes for float8_e4m3fn)";
    return npyError(path, why);
  }

  std::vector<std::string> notes;
  std::vector<uint8_t> data = a.bytes;
  if (needsSwap) {
    for (size_t i = 0; i + a.itemSize <= data.size(); i += a.itemSize)
      std::reverse(data.begin() + i, data.begin() + i + a.itemSize);
    notes.push_back("byte-swapped from big-endian '" + a.descr + "'");
  }
  if (needsTranspose) {
    data = fortranToC(data, a.shape, a.itemSize);
    notes.push_back("transposed from Fortran order");
  }
  HostTensor t;
  t.dtype = *out;
  t.shape = a.shape;
  if (!convertValues) {
    t.bytes = std::move(data);
    if (t.dtype == ElementType::Bool)
      for (uint8_t &b : t.bytes)
        b = b != 0;
  } else {
    t.bytes.assign(static_cast<size_t>(a.numel()) * dtypeSize(*out), 0);
    for (int64_t i = 0, n = a.numel(); i < n; ++i) {
      const uint8_t *p = data.data() + static_cast<size_t>(i) * a.itemSize;
      uint8_t *q = t.bytes.data() + static_cast<size_t>(i) * dtypeSize(*out);
      switch (*out) {
      case ElementType::F32:
        support::endian::write32le(q, bit_cast<uint32_t>(doubleToFloat(loadAsDouble(p, a.kind, a.itemSize))));
        break;
      case ElementType::F16:
        support::endian::write16le(q, doubleToHalf(loadAsDouble(p, a.kind, a.itemSize)));
        break;
      case ElementType::BF16:
        support::endian::write16le(
            q, floatToBfloat16(doubleToFloat(loadAsDouble(p, a.kind, a.itemSize))));
        break;
      case ElementType::Bool: {
        uint8_t any = 0;
        for (unsigned k = 0; k < a.itemSize; ++k)
          any |= p[k];
        *q = any != 0;
        break;
      }
      case ElementType::F64: // only ever exact (no conversion targets float64)
        support::endian::write64le(q, bit_cast<uint64_t>(loadAsDouble(p, a.kind, a.itemSize)));
        break;
      case ElementType::F8E4M3: // never converted (its bytes, above)
      case ElementType::I8: // only ever exact (no conversion targets int8)
      case ElementType::I32:
      case ElementType::I64: {
        // Exact integer conversion; a value that does not fit is an error.
        uint64_t raw = 0;
        for (unsigned k = 0; k < a.itemSize; ++k)
          raw |= static_cast<uint64_t>(p[k]) << (8 * k);
        bool negative = false;
        if (a.kind == NpyArray::Kind::Int) {
          if (a.itemSize < 8 && (raw >> (8 * a.itemSize - 1)) & 1)
            raw |= ~uint64_t(0) << (8 * a.itemSize);
          negative = static_cast<int64_t>(raw) < 0;
        }
        bool fits;
        if (*out == ElementType::I64)
          fits = negative || a.kind == NpyArray::Kind::Int ||
                 raw <= static_cast<uint64_t>(INT64_MAX);
        else
          fits = negative ? static_cast<int64_t>(raw) >= INT32_MIN
                          : raw <= static_cast<uint64_t>(INT32_MAX);
        if (!fits)
          return npyError(path, "element " + std::to_string(i) + " (" +
                                    (negative ? std::to_string(static_cast<int64_t>(raw))
                                              : std::to_string(raw)) +
                                    ") does not fit " + dtypeName(*out).str());
        if (*out == ElementType::I32)
          support::endian::write32le(q, static_cast<uint32_t>(raw));
        else
          support::endian::write64le(q, raw);
        break;
      }
      }
    }
    notes.push_back("converted " + a.dtypeStr() + " to " + dtypeName(*out).str() +
                    (*out == ElementType::Bool ? " (nonzero = true)" : ""));
  }
  if (applied)
    applied->insert(applied->end(), notes.begin(), notes.end());
  return t;
}

} // namespace attn::runtime
