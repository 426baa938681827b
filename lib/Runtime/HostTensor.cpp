//===- HostTensor.cpp - host tensors and their element types ------------===//
//
// ElementType names and sizes, f16/bf16 <-> f32 conversions, and the
// HostTensor element accessors. Reading and writing .npy files is
// Npy.cpp.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/HostTensor.h"

#include "NpyInternal.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>

using namespace llvm;

namespace attn::runtime {

using namespace detail;

//===----------------------------------------------------------------------===//
// ElementType
//===----------------------------------------------------------------------===//

StringRef dtypeName(ElementType dtype) {
  switch (dtype) {
  case ElementType::F32:
    return "float32";
  case ElementType::F16:
    return "float16";
  case ElementType::Bool:
    return "bool";
  case ElementType::I32:
    return "int32";
  case ElementType::I64:
    return "int64";
  case ElementType::BF16:
    return "bfloat16";
  case ElementType::I8:
    return "int8";
  case ElementType::F64:
    return "float64";
  case ElementType::F8E4M3:
    return "float8_e4m3fn";
  }
  return "unknown";
}

size_t dtypeSize(ElementType dtype) {
  switch (dtype) {
  case ElementType::F32:
    return 4;
  case ElementType::F16:
    return 2;
  case ElementType::Bool:
    return 1;
  case ElementType::I32:
    return 4;
  case ElementType::I64:
    return 8;
  case ElementType::BF16:
    return 2;
  case ElementType::I8:
    return 1;
  case ElementType::F64:
    return 8;
  case ElementType::F8E4M3:
    return 1;
  }
  return 0;
}

StringRef dtypeDescr(ElementType dtype) {
  switch (dtype) {
  case ElementType::F32:
    return "<f4";
  case ElementType::F16:
    return "<f2";
  case ElementType::Bool:
    return "|b1";
  case ElementType::I32:
    return "<i4";
  case ElementType::I64:
    return "<i8";
  case ElementType::BF16:
    return "<f4"; // written as float32
  case ElementType::I8:
    return "|i1";
  case ElementType::F64:
    return "<f8";
  case ElementType::F8E4M3:
    return "|u1"; // its bytes
  }
  return "";
}

//===----------------------------------------------------------------------===//
// binary16
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or denormal: mant * 2^-24, exact in float.
    float mag = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -mag : mag;
  }
  uint32_t bits;
  if (exp == 0x1f) // inf / NaN (payload kept)
    bits = sign | 0x7f800000u | (mant << 13);
  else // rebias 15 -> 127
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  return bit_cast<float>(bits);
}

//===----------------------------------------------------------------------===//
// fp8 e4m3 (OCP E4M3FN)
//===----------------------------------------------------------------------===//

float e4m3ToFloat(uint8_t x) {
  unsigned exp = (x >> 3) & 0xfu, mant = x & 7u;
  float mag;
  if ((x & 0x7fu) == 0x7fu)
    mag = std::numeric_limits<float>::quiet_NaN();
  else if (exp == 0) // zero or subnormal: mant · 2^-9
    mag = std::ldexp(static_cast<float>(mant), -9);
  else
    mag = std::ldexp(static_cast<float>(8 + mant), static_cast<int>(exp) - 10);
  return (x & 0x80u) ? -mag : mag;
}

uint8_t floatToE4m3(float f) {
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f))
    return sign | 0x7f;
  float a = std::fabs(f);
  if (a >= 448.0f) // saturates (E4M3FN has no infinity)
    return sign | 0x7e;
  // The nearest of the finite magnitudes 0x00 .. 0x7e (in increasing
  // order of value), ties to the even code.
  uint8_t lo = 0, hi = 0x7e;
  while (lo < hi) { // the first code >= a
    uint8_t mid = static_cast<uint8_t>((lo + hi) / 2);
    if (e4m3ToFloat(mid) < a)
      lo = static_cast<uint8_t>(mid + 1);
    else
      hi = mid;
  }
  if (lo > 0) {
    float above = e4m3ToFloat(lo), below = e4m3ToFloat(static_cast<uint8_t>(lo - 1));
    if (a - below < above - a || (a - below == above - a && ((lo - 1) & 1) == 0))
      --lo;
  }
  return sign | lo;
}

uint16_t floatToHalf(float f) {
  uint32_t x = bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) // NaN: quiet it, keep the top payload bits
    return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x3ffu);
  if (abs >= 0x477ff000u) // >= 65520 (incl. inf) rounds to inf
    return sign | 0x7c00u;
  if (abs >= 0x38800000u) { // >= 2^-14: a normal half
    uint32_t h = (abs - 0x38000000u) >> 13; // rebias 127 -> 15
    uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
      ++h; // may carry into the exponent, which is correct
    return sign | static_cast<uint16_t>(h);
  }
  // Below 2^-14: a half denormal m * 2^-24 (or zero).
  uint32_t e = abs >> 23;
  if (e < 102) // < 2^-25: rounds to zero
    return sign;
  uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - e; // in [14, 24]
  uint32_t m = mant >> shift;
  uint32_t rem = mant & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (m & 1u)))
    ++m; // may become 0x400, the smallest normal, which is correct
  return sign | static_cast<uint16_t>(m);
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostTensor HostTensor::zeros(ElementType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(static_cast<size_t>(t.numel()) * dtypeSize(dtype), 0);
  return t;
}

/// The byte offset of element `flatIndex` (row-major) of `t`.
static size_t elementOffset(const HostTensor &t, int64_t flatIndex) {
  size_t size = dtypeSize(t.dtype);
  assert(flatIndex >= 0 &&
         static_cast<size_t>(flatIndex) * size + size <= t.bytes.size() &&
         "flat index out of range");
  return static_cast<size_t>(flatIndex) * size;
}

float bfloat16ToFloat(uint16_t h) {
  return bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

uint16_t floatToBfloat16(float f) {
  uint32_t bits = bit_cast<uint32_t>(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // quiet NaN
  // Round to nearest even on the 16 bits dropped (carries into the
  // exponent: the largest finite values round to inf).
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float HostTensor::getAsFloat(int64_t flatIndex) const {
  const uint8_t *p = bytes.data() + elementOffset(*this, flatIndex);
  switch (dtype) {
  case ElementType::F32:
    return bit_cast<float>(support::endian::read32le(p));
  case ElementType::F16:
    return halfToFloat(support::endian::read16le(p));
  case ElementType::Bool:
    return *p ? 1.0f : 0.0f;
  case ElementType::I32:
  case ElementType::I64:
  case ElementType::I8:
    return static_cast<float>(getAsInt(flatIndex));
  case ElementType::BF16:
    return bfloat16ToFloat(support::endian::read16le(p));
  case ElementType::F64:
    return static_cast<float>(bit_cast<double>(support::endian::read64le(p)));
  case ElementType::F8E4M3:
    return e4m3ToFloat(*p);
  }
  return 0.0f;
}

double HostTensor::getAsDouble(int64_t flatIndex) const {
  if (dtype != ElementType::F64)
    return getAsFloat(flatIndex);
  return bit_cast<double>(
      support::endian::read64le(bytes.data() + elementOffset(*this, flatIndex)));
}

int64_t HostTensor::getAsInt(int64_t flatIndex) const {
  const uint8_t *p = bytes.data() + elementOffset(*this, flatIndex);
  switch (dtype) {
  case ElementType::I32:
    return static_cast<int32_t>(support::endian::read32le(p));
  case ElementType::I64:
    return static_cast<int64_t>(support::endian::read64le(p));
  case ElementType::I8:
    return static_cast<int8_t>(*p);
  case ElementType::Bool:
    return *p ? 1 : 0;
  case ElementType::F32:
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::F64:
  case ElementType::F8E4M3: {
    float f = getAsFloat(flatIndex);
    if (std::isnan(f))
      return 0;
    if (f >= 9.2e18f)
      return INT64_MAX;
    if (f <= -9.2e18f)
      return INT64_MIN;
    return static_cast<int64_t>(f);
  }
  }
  return 0;
}

void HostTensor::setFromFloat(int64_t flatIndex, float v) {
  uint8_t *p = bytes.data() + elementOffset(*this, flatIndex);
  switch (dtype) {
  case ElementType::F32:
    support::endian::write32le(p, bit_cast<uint32_t>(v));
    return;
  case ElementType::F16:
    support::endian::write16le(p, floatToHalf(v));
    return;
  case ElementType::Bool:
    *p = v != 0.0f ? 1 : 0;
    return;
  case ElementType::I32: {
    double r = std::isnan(v) ? 0.0 : std::nearbyint(static_cast<double>(v));
    r = std::min<double>(std::max<double>(r, INT32_MIN), INT32_MAX);
    support::endian::write32le(p, static_cast<uint32_t>(static_cast<int32_t>(r)));
    return;
  }
  case ElementType::I64: {
    double r = std::isnan(v) ? 0.0 : std::nearbyint(static_cast<double>(v));
    int64_t i = r >= 9.2e18 ? INT64_MAX : r <= -9.2e18 ? INT64_MIN : static_cast<int64_t>(r);
    support::endian::write64le(p, static_cast<uint64_t>(i));
    return;
  }
  case ElementType::BF16:
    support::endian::write16le(p, floatToBfloat16(v));
    return;
  case ElementType::F64:
    support::endian::write64le(p, bit_cast<uint64_t>(static_cast<double>(v)));
    return;
  case ElementType::I8: {
    double r = std::isnan(v) ? 0.0 : std::nearbyint(static_cast<double>(v));
    *p = static_cast<uint8_t>(static_cast<int8_t>(std::min(std::max(r, -128.0), 127.0)));
    return;
  }
  case ElementType::F8E4M3:
    *p = floatToE4m3(v);
    return;
  }
}

} // namespace attn::runtime
