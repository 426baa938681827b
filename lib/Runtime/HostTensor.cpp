//===- HostTensor.cpp - Host tensors and .npy I/O -------------------------===//
//
// The .npy format (https://numpy.org/doc/stable/reference/generated/
// numpy.lib.format.html):
//   "\x93NUMPY" major minor  header_len (uint16 LE for 1.0, uint32 LE for
//   2.0/3.0)  header (a Python dict literal with exactly the keys 'descr',
//   'fortran_order', 'shape', padded with spaces, ending in '\n')  data.
//
// readNpy validates everything against the real file size before it
// allocates, so a hostile header can neither crash it nor make it allocate
// more than the file holds.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>

using namespace llvm;

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// DType
//===----------------------------------------------------------------------===//

StringRef dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float32";
  case DType::F16:
    return "float16";
  case DType::Bool:
    return "bool";
  }
  return "unknown";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::F16:
    return 2;
  case DType::Bool:
    return 1;
  }
  return 0;
}

StringRef dtypeDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::Bool:
    return "|b1";
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

HostTensor HostTensor::zeros(DType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(static_cast<size_t>(t.numel()) * dtypeSize(dtype), 0);
  return t;
}

float HostTensor::getAsFloat(int64_t flatIndex) const {
  size_t size = dtypeSize(dtype);
  assert(flatIndex >= 0 &&
         static_cast<size_t>(flatIndex) * size + size <= bytes.size() &&
         "flat index out of range");
  const uint8_t *p = bytes.data() + static_cast<size_t>(flatIndex) * size;
  switch (dtype) {
  case DType::F32:
    return bit_cast<float>(support::endian::read32le(p));
  case DType::F16:
    return halfToFloat(support::endian::read16le(p));
  case DType::Bool:
    return *p ? 1.0f : 0.0f;
  }
  return 0.0f;
}

void HostTensor::setFromFloat(int64_t flatIndex, float v) {
  size_t size = dtypeSize(dtype);
  assert(flatIndex >= 0 &&
         static_cast<size_t>(flatIndex) * size + size <= bytes.size() &&
         "flat index out of range");
  uint8_t *p = bytes.data() + static_cast<size_t>(flatIndex) * size;
  switch (dtype) {
  case DType::F32:
    support::endian::write32le(p, bit_cast<uint32_t>(v));
    return;
  case DType::F16:
    support::endian::write16le(p, floatToHalf(v));
    return;
  case DType::Bool:
    *p = v != 0.0f ? 1 : 0;
    return;
  }
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr uint64_t kMaxHeaderLen = 1u << 20; // numpy itself allows 10000
const char *const kSupported =
    "(supported: float32 '<f4', float16 '<f2', bool '|b1')";

Error npyError(const std::string &path, const Twine &problem) {
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           path + ": " + problem);
}

/// Printable ASCII as is, anything else as \xNN, so a message stays on one
/// line whatever bytes the file holds.
std::string escape(StringRef s, size_t maxLen = 64) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == maxLen) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// Python's repr of a shape tuple: (), (5,), (2, 3).
std::string shapeRepr(ArrayRef<std::string> dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  if (dims.size() == 1)
    s += ",";
  return s + ")";
}

std::string shapeRepr(ArrayRef<int64_t> dims) {
  std::vector<std::string> strs;
  for (int64_t d : dims)
    strs.push_back(std::to_string(d));
  return shapeRepr(strs);
}

/// Reads up to n bytes (fewer only at end of file).
Expected<size_t> readFully(sys::fs::file_t fd, char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    Expected<size_t> r =
        sys::fs::readNativeFile(fd, MutableArrayRef<char>(buf + got, n - got));
    if (!r)
      return r.takeError();
    if (*r == 0)
      break;
    got += *r;
  }
  return got;
}

struct FileCloser {
  sys::fs::file_t fd;
  ~FileCloser() { sys::fs::closeFile(fd); }
};

//===----------------------------------------------------------------------===//
// Header parser: the subset of Python literals a .npy header uses.
//===----------------------------------------------------------------------===//

struct PyValue {
  enum class Kind { Str, Bool, Int, None, Tuple, List } kind = Kind::None;
  std::string str;            // Str: the contents; Int: normalized digits
  bool boolean = false;       // Bool
  bool negative = false;      // Int
  std::vector<PyValue> elems; // Tuple, List
};

std::string reprValue(const PyValue &v) {
  switch (v.kind) {
  case PyValue::Kind::Str:
    return "'" + escape(v.str) + "'";
  case PyValue::Kind::Bool:
    return v.boolean ? "True" : "False";
  case PyValue::Kind::Int:
    return (v.negative ? "-" : "") + v.str;
  case PyValue::Kind::None:
    return "None";
  case PyValue::Kind::Tuple:
  case PyValue::Kind::List: {
    bool tuple = v.kind == PyValue::Kind::Tuple;
    std::string s = tuple ? "(" : "[";
    for (size_t i = 0; i < v.elems.size(); ++i) {
      s += (i ? ", " : "") + reprValue(v.elems[i]);
      if (s.size() > 80)
        return s + "...";
    }
    if (tuple && v.elems.size() == 1)
      s += ",";
    return s + (tuple ? ")" : "]");
  }
  }
  return "?";
}

class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : s(text) {}

  /// Parses `{key: value, ...}` followed only by whitespace.
  bool parseDict(std::vector<std::pair<std::string, PyValue>> &entries) {
    skipWs();
    if (!consume('{'))
      return fail("expected '{'");
    skipWs();
    while (!peekIs('}')) {
      std::string key;
      if (!peekIs('\'') && !peekIs('"'))
        return fail("expected a string key");
      if (!parseString(key))
        return false;
      skipWs();
      if (!consume(':'))
        return fail("expected ':' after key '" + escape(key) + "'");
      skipWs();
      PyValue value;
      if (!parseValue(value, 0))
        return false;
      entries.emplace_back(std::move(key), std::move(value));
      skipWs();
      if (consume(',')) {
        skipWs();
        continue;
      }
      if (!peekIs('}'))
        return fail("expected ',' or '}'");
    }
    ++pos; // '}'
    skipWs();
    if (pos != s.size())
      return fail("unexpected text after '}'");
    return true;
  }

  std::string error;

private:
  static constexpr int kMaxDepth = 16;
  StringRef s;
  size_t pos = 0;

  bool atEnd() const { return pos >= s.size(); }
  bool peekIs(char c) const { return !atEnd() && s[pos] == c; }
  bool consume(char c) {
    if (!peekIs(c))
      return false;
    ++pos;
    return true;
  }
  void skipWs() {
    while (!atEnd() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' ||
                        s[pos] == '\r' || s[pos] == '\f' || s[pos] == '\v'))
      ++pos;
  }
  std::string found() const {
    if (atEnd())
      return "end of header";
    return "'" + escape(s.substr(pos, 1)) + "'";
  }
  bool fail(const std::string &msg) {
    if (error.empty())
      error = msg + ", found " + found() + " at offset " + std::to_string(pos);
    return false;
  }

  bool parseString(std::string &out) {
    char quote = s[pos++];
    while (!atEnd() && s[pos] != quote) {
      if (s[pos] == '\n')
        return fail("unterminated string");
      if (s[pos] == '\\' && pos + 1 < s.size())
        ++pos; // take the escaped character literally
      out += s[pos++];
    }
    if (!consume(quote))
      return fail("unterminated string");
    return true;
  }

  static bool isIdentChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
  }

  bool parseValue(PyValue &v, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    if (atEnd())
      return fail("expected a value");
    char c = s[pos];
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::Str;
      return parseString(v.str);
    }
    if (c == '(' || c == '[')
      return parseSequence(v, depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      v.kind = PyValue::Kind::Int;
      if (c == '-' || c == '+') {
        v.negative = c == '-';
        ++pos;
      }
      size_t start = pos;
      while (!atEnd() && s[pos] >= '0' && s[pos] <= '9')
        ++pos;
      if (pos == start)
        return fail("expected digits");
      v.str = s.substr(start, pos - start).ltrim('0').str();
      if (v.str.empty())
        v.str = "0", v.negative = false;
      if (!atEnd() && (s[pos] == 'L' || s[pos] == 'l')) // Python 2 long
        ++pos;
      if (!atEnd() && (isIdentChar(s[pos]) || s[pos] == '.'))
        return fail("unsupported number literal");
      return true;
    }
    size_t start = pos;
    while (!atEnd() && isIdentChar(s[pos]))
      ++pos;
    StringRef word = s.substr(start, pos - start);
    if (word == "True" || word == "False") {
      v.kind = PyValue::Kind::Bool;
      v.boolean = word == "True";
      return true;
    }
    if (word == "None") {
      v.kind = PyValue::Kind::None;
      return true;
    }
    pos = start;
    return fail("expected a value");
  }

  /// ( ), (v,), (v, w, ...), (v) == v, [ ... ].
  bool parseSequence(PyValue &v, int depth) {
    char open = s[pos++];
    char close = open == '(' ? ')' : ']';
    v.kind = open == '(' ? PyValue::Kind::Tuple : PyValue::Kind::List;
    bool sawComma = false;
    skipWs();
    while (!consume(close)) {
      PyValue elem;
      if (!parseValue(elem, depth + 1))
        return false;
      v.elems.push_back(std::move(elem));
      skipWs();
      if (consume(',')) {
        sawComma = true;
        skipWs();
        continue;
      }
      if (!peekIs(close))
        return fail(std::string("expected ',' or '") + close + "'");
    }
    if (open == '(' && !sawComma && v.elems.size() == 1) {
      PyValue inner = std::move(v.elems[0]); // parenthesized expression
      v = std::move(inner);
    }
    return true;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// .npy parsing (files and memory)
//===----------------------------------------------------------------------===//

namespace {

/// Reads up to n bytes into buf (fewer only at the end of the input).
using ReadFn = function_ref<Expected<size_t>(char *buf, size_t n)>;

const char *const kSupportedRaw =
    "(supported: bool '|b1', integers 'i1' to 'i8' and 'u1' to 'u8', floats "
    "'f2', 'f4', 'f8')";

/// The dtype of a descr such as '<f8', '|u1', '>i4'; false if it is none of
/// the supported ones.
bool parseDescr(StringRef d, NpyArray &a) {
  if (d.size() < 3)
    return false;
  char order = d[0], kind = d[1];
  unsigned size = 0;
  if (d.drop_front(2).getAsInteger(10, size))
    return false;
  switch (kind) {
  case 'b':
    if (size != 1)
      return false;
    a.kind = NpyArray::Kind::Bool;
    break;
  case 'i':
  case 'u':
    if (size != 1 && size != 2 && size != 4 && size != 8)
      return false;
    a.kind = kind == 'i' ? NpyArray::Kind::Int : NpyArray::Kind::UInt;
    break;
  case 'f':
    if (size != 2 && size != 4 && size != 8)
      return false;
    a.kind = NpyArray::Kind::Float;
    break;
  default:
    return false;
  }
  const bool littleHost = endianness::native == endianness::little;
  if (order == '|') {
    if (size != 1) // NumPy writes '|' only for one-byte dtypes
      return false;
    a.bigEndian = false;
  } else if (order == '<') {
    a.bigEndian = false;
  } else if (order == '>') {
    a.bigEndian = size > 1;
  } else if (order == '=') {
    a.bigEndian = size > 1 && !littleHost;
  } else {
    return false;
  }
  a.itemSize = size;
  a.descr = d.str();
  return true;
}

/// The .npy format, from a sequential source of `fileSize` bytes. `strict`:
/// only what is exactly a HostTensor (readNpy's errors), else NpyArray.
Expected<NpyArray> parseNpy(const std::string &path, uint64_t fileSize,
                            ReadFn readFully, bool strict) {
  if (fileSize == 0)
    return npyError(path, "empty file");
  auto readError = [&](Error e) {
    return npyError(path,
                    "read error: " + errorToErrorCode(std::move(e)).message());
  };

  // Magic and version.
  char pre[12];
  Expected<size_t> got = readFully(pre, 8);
  if (!got)
    return readError(got.takeError());
  if (std::memcmp(pre, kMagic, std::min<size_t>(*got, kMagicLen)) != 0)
    return npyError(path, "bad magic (not a .npy file)");
  if (*got < 8)
    return npyError(path, "truncated header: the file has only " +
                              Twine(*got) + " bytes");
  unsigned major = static_cast<uint8_t>(pre[6]);
  unsigned minor = static_cast<uint8_t>(pre[7]);
  if (minor != 0 || major < 1 || major > 3)
    return npyError(path, "unsupported .npy version " + Twine(major) + "." +
                              Twine(minor));

  // Header length.
  size_t lenSize = major == 1 ? 2 : 4;
  got = readFully(pre + 8, lenSize);
  if (!got)
    return readError(got.takeError());
  if (*got < lenSize)
    return npyError(path, "truncated header: the file has only " +
                              Twine(8 + *got) + " bytes");
  uint64_t headerLen =
      major == 1 ? support::endian::read16le(pre + 8)
                 : static_cast<uint64_t>(support::endian::read32le(pre + 8));
  uint64_t headerStart = 8 + lenSize;
  if (headerLen > fileSize - headerStart)
    return npyError(path, "header length " + Twine(headerLen) +
                              " runs past the end of the file");
  if (headerLen > kMaxHeaderLen)
    return npyError(path, "header length " + Twine(headerLen) +
                              " exceeds the limit of " + Twine(kMaxHeaderLen) +
                              " bytes");
  std::string header(static_cast<size_t>(headerLen), '\0');
  got = readFully(header.data(), header.size());
  if (!got)
    return readError(got.takeError());
  if (*got < header.size())
    return npyError(path, "header length " + Twine(headerLen) +
                              " runs past the end of the file");

  // Parse the dict.
  std::vector<std::pair<std::string, PyValue>> entries;
  HeaderParser parser(header);
  if (!parser.parseDict(entries))
    return npyError(path, "malformed header: " + parser.error);
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    const PyValue **slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot)
      return npyError(path, "malformed header: unexpected key '" +
                                escape(key) + "'");
    if (*slot)
      return npyError(path,
                      "malformed header: duplicate key '" + key + "'");
    *slot = &value;
  }
  for (auto [name, value] : {std::pair<const char *, const PyValue *>{
                                 "descr", descr},
                             {"fortran_order", fortran},
                             {"shape", shape}})
    if (!value)
      return npyError(path, Twine("malformed header: missing key '") + name +
                                "'");

  // dtype.
  const char *supported = strict ? kSupported : kSupportedRaw;
  if (descr->kind == PyValue::Kind::List)
    return npyError(path, Twine("unsupported dtype: structured dtypes are not "
                                "supported ") +
                              supported);
  if (descr->kind != PyValue::Kind::Str)
    return npyError(path, "malformed header: 'descr' must be a string, got " +
                              reprValue(*descr));
  NpyArray a;
  StringRef d = descr->str;
  if (!parseDescr(d, a))
    return npyError(path, "unsupported dtype '" + escape(d) + "' " + supported);
  if (strict && !a.exactDType()) {
    if (a.kind == NpyArray::Kind::Float && a.itemSize <= 4 && a.bigEndian)
      return npyError(path, "big-endian dtype '" + d + "' is not supported");
    return npyError(path, "unsupported dtype '" + escape(d) + "' " + supported);
  }

  // Order.
  if (fortran->kind != PyValue::Kind::Bool)
    return npyError(path,
                    "malformed header: 'fortran_order' must be True or False, "
                    "got " +
                        reprValue(*fortran));
  if (fortran->boolean && strict)
    return npyError(path, "Fortran-order arrays are not supported");
  a.fortranOrder = fortran->boolean;

  // Shape.
  if (shape->kind != PyValue::Kind::Tuple)
    return npyError(path,
                    "malformed header: 'shape' must be a tuple of integers, "
                    "got " +
                        reprValue(*shape));
  std::vector<std::string> dimText;
  for (const PyValue &e : shape->elems) {
    if (e.kind != PyValue::Kind::Int)
      return npyError(path,
                      "malformed header: 'shape' must be a tuple of integers, "
                      "got " +
                          reprValue(*shape));
    if (e.negative)
      return npyError(path, "malformed header: negative dimension in shape " +
                                reprValue(*shape));
    dimText.push_back(e.str);
  }
  std::string shapeText = shapeRepr(dimText);
  if (shapeText.size() > 200)
    shapeText = shapeText.substr(0, 200) + "...";
  const uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t nbytes = a.itemSize;
  bool zero = false, overflow = false;
  for (const std::string &text : dimText) {
    uint64_t dim = 0;
    for (char c : text) {
      if (dim > (kMax - (c - '0')) / 10) {
        overflow = true;
        break;
      }
      dim = dim * 10 + (c - '0');
    }
    if (overflow)
      break;
    a.shape.push_back(static_cast<int64_t>(dim));
    if (dim == 0)
      zero = true;
    else if (nbytes > kMax / dim)
      overflow = true;
    else
      nbytes *= dim;
  }
  if (overflow)
    return npyError(path, "shape " + shapeText + " overflows");
  if (zero)
    nbytes = 0;

  // Data.
  uint64_t dataStart = headerStart + headerLen;
  uint64_t available = fileSize - dataStart;
  if (available < nbytes)
    return npyError(path, "truncated data: expected " + Twine(nbytes) +
                              " bytes, found " + Twine(available));
  if (available > nbytes)
    return npyError(path, Twine(available - nbytes) +
                              " unexpected bytes after the data: shape " +
                              shapeText + " " + a.dtypeStr() + " needs " +
                              Twine(nbytes) + " bytes, found " +
                              Twine(available));
  a.bytes.resize(static_cast<size_t>(nbytes));
  got = readFully(reinterpret_cast<char *>(a.bytes.data()), a.bytes.size());
  if (!got)
    return readError(got.takeError());
  if (*got < nbytes)
    return npyError(path, "truncated data: expected " + Twine(nbytes) +
                              " bytes, found " + Twine(*got));
  return a;
}

/// Checks that `path` is a regular file and opens it; the caller closes.
Expected<sys::fs::file_t> openRegularFile(const std::string &path,
                                          uint64_t &fileSize) {
  // stat first: never open (and block on) a fifo or a device.
  sys::fs::file_status st;
  if (std::error_code ec = sys::fs::status(path, st))
    return npyError(path, "cannot open file: " + ec.message());
  if (st.type() == sys::fs::file_type::directory_file)
    return npyError(path, "is a directory");
  if (st.type() != sys::fs::file_type::regular_file)
    return npyError(path, "not a regular file");

  Expected<sys::fs::file_t> fdOr = sys::fs::openNativeFileForRead(path);
  if (!fdOr)
    return npyError(path, "cannot open file: " +
                              errorToErrorCode(fdOr.takeError()).message());
  // Re-check on the open file (it may have been replaced since the stat).
  std::error_code ec = sys::fs::status(*fdOr, st);
  if (ec || st.type() != sys::fs::file_type::regular_file) {
    sys::fs::closeFile(*fdOr);
    return ec ? npyError(path, "cannot stat file: " + ec.message())
              : npyError(path, "not a regular file");
  }
  fileSize = st.getSize();
  return *fdOr;
}

Expected<NpyArray> readNpyFile(const std::string &path, bool strict) {
  uint64_t fileSize = 0;
  Expected<sys::fs::file_t> fdOr = openRegularFile(path, fileSize);
  if (!fdOr)
    return fdOr.takeError();
  FileCloser closer{*fdOr};
  sys::fs::file_t fd = *fdOr;
  return parseNpy(path, fileSize,
                  [&](char *buf, size_t n) { return readFully(fd, buf, n); },
                  strict);
}

} // namespace

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string NpyArray::dtypeStr() const {
  switch (kind) {
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int" + std::to_string(itemSize * 8);
  case Kind::UInt:
    return "uint" + std::to_string(itemSize * 8);
  case Kind::Float:
    return "float" + std::to_string(itemSize * 8);
  }
  return "unknown";
}

std::optional<DType> NpyArray::exactDType() const {
  if (kind == Kind::Bool)
    return DType::Bool;
  if (kind != Kind::Float || bigEndian)
    return std::nullopt;
  if (itemSize == 4)
    return DType::F32;
  if (itemSize == 2)
    return DType::F16;
  return std::nullopt;
}

Expected<NpyArray> readNpyArray(const std::string &path) {
  return readNpyFile(path, /*strict=*/false);
}

Expected<NpyArray> parseNpyArray(StringRef name, ArrayRef<uint8_t> bytes) {
  size_t pos = 0;
  return parseNpy(
      name.str(), bytes.size(),
      [&](char *buf, size_t n) -> Expected<size_t> {
        size_t k = std::min(n, bytes.size() - pos);
        if (k)
          std::memcpy(buf, bytes.data() + pos, k);
        pos += k;
        return k;
      },
      /*strict=*/false);
}

Expected<HostTensor> readNpy(const std::string &path) {
  Expected<NpyArray> a = readNpyFile(path, /*strict=*/true);
  if (!a)
    return a.takeError();
  HostTensor t;
  t.dtype = *a->exactDType();
  t.shape = std::move(a->shape);
  t.bytes = std::move(a->bytes);
  if (t.dtype == DType::Bool)
    for (uint8_t &b : t.bytes)
      b = b != 0;
  return t;
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

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
                                  std::optional<DType> target,
                                  bool allowConversions,
                                  std::vector<std::string> *applied) {
  std::string path = name.str();
  std::optional<DType> exact = a.exactDType();
  bool needsSwap = a.bigEndian && a.itemSize > 1;
  bool needsTranspose = a.fortranOrder && a.shape.size() >= 2;
  // The dtype the tensor gets, and whether the values are converted.
  std::optional<DType> out;
  bool convertValues = false;
  if (exact && (!target || *target == *exact)) {
    out = exact;
  } else if (target && (*target == DType::F32 || *target == DType::F16) &&
             a.kind == NpyArray::Kind::Float && a.itemSize == 8) {
    out = target, convertValues = true;
  } else if (target == DType::Bool && (a.kind == NpyArray::Kind::Int ||
                                       a.kind == NpyArray::Kind::UInt)) {
    out = target, convertValues = true;
  } else if (exact) {
    out = exact; // a mismatch the caller's dtype check reports
  } else if (a.kind == NpyArray::Kind::Float && a.itemSize <= 4 && a.bigEndian) {
    // Big-endian float32/float16: byte-swapped into its own dtype.
    out = a.itemSize == 4 ? DType::F32 : DType::F16;
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
    why += "; accepted: float32 '<f4', float16 '<f2', bool '|b1', float64 for "
           "float32/float16 and integers for bool)";
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
    if (t.dtype == DType::Bool)
      for (uint8_t &b : t.bytes)
        b = b != 0;
  } else {
    t.bytes.assign(static_cast<size_t>(a.numel()) * dtypeSize(*out), 0);
    for (int64_t i = 0, n = a.numel(); i < n; ++i) {
      const uint8_t *p = data.data() + static_cast<size_t>(i) * a.itemSize;
      uint8_t *q = t.bytes.data() + static_cast<size_t>(i) * dtypeSize(*out);
      switch (*out) {
      case DType::F32:
        support::endian::write32le(q, bit_cast<uint32_t>(doubleToFloat(loadAsDouble(p, a.kind, a.itemSize))));
        break;
      case DType::F16:
        support::endian::write16le(q, doubleToHalf(loadAsDouble(p, a.kind, a.itemSize)));
        break;
      case DType::Bool: {
        uint8_t any = 0;
        for (unsigned k = 0; k < a.itemSize; ++k)
          any |= p[k];
        *q = any != 0;
        break;
      }
      }
    }
    notes.push_back("converted " + a.dtypeStr() + " to " + dtypeName(*out).str() +
                    (*out == DType::Bool ? " (nonzero = true)" : ""));
  }
  if (applied)
    applied->insert(applied->end(), notes.begin(), notes.end());
  return t;
}

//===----------------------------------------------------------------------===//
// .npz: zip archives (stored or deflated members)
//===----------------------------------------------------------------------===//

namespace {

/// A raw DEFLATE (RFC 1951) decoder, after zlib's contrib/puff: canonical
/// Huffman codes decoded a bit at a time, every read and every back
/// reference bounds-checked, the output capped at `limit` bytes.
class Inflater {
public:
  Inflater(ArrayRef<uint8_t> in, size_t limit) : in(in), limit(limit) {}

  /// Decodes the whole stream into `out`; an empty string on success, else
  /// what is wrong.
  std::string run(std::vector<uint8_t> &result) {
    out.reserve(limit);
    int last;
    do {
      last = bits(1);
      int type = bits(2);
      if (!err.empty())
        break;
      if (type == 0)
        stored();
      else if (type == 1)
        fixed();
      else if (type == 2)
        dynamic();
      else
        fail("invalid block type 3");
    } while (!last && err.empty());
    if (err.empty())
      result = std::move(out);
    return err;
  }

private:
  struct Huffman {
    uint16_t count[16] = {}; // codes of each length
    uint16_t symbol[288] = {}; // symbols ordered by code
  };

  ArrayRef<uint8_t> in;
  size_t limit;
  size_t pos = 0;
  uint32_t bitBuf = 0;
  int bitCnt = 0;
  std::vector<uint8_t> out;
  std::string err;

  void fail(const std::string &msg) {
    if (err.empty())
      err = msg;
  }

  int bits(int need) {
    uint32_t val = bitBuf;
    while (bitCnt < need) {
      if (pos >= in.size()) {
        fail("unexpected end of the compressed data");
        return 0;
      }
      val |= static_cast<uint32_t>(in[pos++]) << bitCnt;
      bitCnt += 8;
    }
    bitBuf = val >> need;
    bitCnt -= need;
    return static_cast<int>(val & ((1u << need) - 1));
  }

  bool emit(uint8_t b) {
    if (out.size() >= limit) {
      fail("more data than the declared size");
      return false;
    }
    out.push_back(b);
    return true;
  }

  void stored() {
    bitBuf = 0, bitCnt = 0; // to a byte boundary
    if (in.size() - pos < 4)
      return fail("unexpected end of the compressed data");
    unsigned len = in[pos] | (in[pos + 1] << 8);
    unsigned nlen = in[pos + 2] | (in[pos + 3] << 8);
    pos += 4;
    if (len != (~nlen & 0xffffu))
      return fail("stored block length does not match its complement");
    if (in.size() - pos < len)
      return fail("unexpected end of the compressed data");
    if (limit - out.size() < len)
      return fail("more data than the declared size");
    out.insert(out.end(), in.begin() + pos, in.begin() + pos + len);
    pos += len;
  }

  /// Decodes one symbol (or -1 with err set).
  int decode(const Huffman &h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= 15; ++len) {
      code |= bits(1);
      if (!err.empty())
        return -1;
      int count = h.count[len];
      if (code - count < first)
        return h.symbol[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    fail("invalid Huffman code");
    return -1;
  }

  /// Builds a canonical code from code lengths; returns 0 for a complete
  /// code, > 0 for an incomplete one, < 0 for an over-subscribed one.
  static int construct(Huffman &h, const uint16_t *length, int n) {
    for (int len = 0; len <= 15; ++len)
      h.count[len] = 0;
    for (int s = 0; s < n; ++s)
      h.count[length[s]]++;
    if (h.count[0] == n)
      return 0; // no codes: complete, but decoding fails
    int left = 1;
    for (int len = 1; len <= 15; ++len) {
      left <<= 1;
      left -= h.count[len];
      if (left < 0)
        return left;
    }
    uint16_t offs[16];
    offs[1] = 0;
    for (int len = 1; len < 15; ++len)
      offs[len + 1] = offs[len] + h.count[len];
    for (int s = 0; s < n; ++s)
      if (length[s] != 0)
        h.symbol[offs[length[s]]++] = static_cast<uint16_t>(s);
    return left;
  }

  void codes(const Huffman &lencode, const Huffman &distcode) {
    static const uint16_t lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10,  11, 13,
                                       15, 17, 19, 23, 27, 31, 35, 43,  51, 59,
                                       67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint16_t lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static const uint16_t dbase[30] = {
        1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static const uint16_t dext[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                      6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
      int sym = decode(lencode);
      if (sym < 0)
        return;
      if (sym < 256) {
        if (!emit(static_cast<uint8_t>(sym)))
          return;
        continue;
      }
      if (sym == 256)
        return; // end of block
      sym -= 257;
      if (sym >= 29)
        return fail("invalid length symbol");
      size_t len = lbase[sym] + bits(lext[sym]);
      int dsym = decode(distcode);
      if (dsym < 0)
        return;
      if (dsym >= 30)
        return fail("invalid distance symbol");
      size_t dist = dbase[dsym] + bits(dext[dsym]);
      if (!err.empty())
        return;
      if (dist > out.size())
        return fail("distance too far back");
      if (limit - out.size() < len)
        return fail("more data than the declared size");
      size_t from = out.size() - dist;
      for (size_t i = 0; i < len; ++i)
        out.push_back(out[from + i]);
    }
  }

  void fixed() {
    static Huffman lencode, distcode;
    static std::once_flag once;
    std::call_once(once, [] {
      uint16_t lengths[288];
      int s = 0;
      for (; s < 144; ++s)
        lengths[s] = 8;
      for (; s < 256; ++s)
        lengths[s] = 9;
      for (; s < 280; ++s)
        lengths[s] = 7;
      for (; s < 288; ++s)
        lengths[s] = 8;
      construct(lencode, lengths, 288);
      for (s = 0; s < 30; ++s)
        lengths[s] = 5;
      construct(distcode, lengths, 30);
    });
    codes(lencode, distcode);
  }

  void dynamic() {
    static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                      11, 4,  12, 3, 13, 2, 14, 1, 15};
    int nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
    if (!err.empty())
      return;
    if (nlen > 286 || ndist > 30)
      return fail("bad code-length counts");
    uint16_t lengths[320] = {};
    for (int i = 0; i < ncode; ++i)
      lengths[order[i]] = static_cast<uint16_t>(bits(3));
    if (!err.empty())
      return;
    Huffman lencode, distcode;
    if (construct(lencode, lengths, 19) != 0)
      return fail("incomplete code-length code");
    for (int i = 0; i < nlen + ndist;) {
      int sym = decode(lencode);
      if (sym < 0)
        return;
      if (sym < 16) {
        lengths[i++] = static_cast<uint16_t>(sym);
        continue;
      }
      uint16_t len = 0;
      int repeat;
      if (sym == 16) {
        if (i == 0)
          return fail("repeat with no first length");
        len = lengths[i - 1];
        repeat = 3 + bits(2);
      } else if (sym == 17) {
        repeat = 3 + bits(3);
      } else {
        repeat = 11 + bits(7);
      }
      if (!err.empty())
        return;
      if (i + repeat > nlen + ndist)
        return fail("too many code lengths");
      while (repeat--)
        lengths[i++] = len;
    }
    if (lengths[256] == 0)
      return fail("no end-of-block code");
    int left = construct(lencode, lengths, nlen);
    if (left < 0 || (left > 0 && nlen - lencode.count[0] != 1))
      return fail("invalid literal/length code");
    left = construct(distcode, lengths + nlen, ndist);
    if (left < 0 || (left > 0 && ndist - distcode.count[0] != 1))
      return fail("invalid distance code");
    codes(lencode, distcode);
  }
};

uint16_t rd16(const uint8_t *p) { return support::endian::read16le(p); }
uint32_t rd32(const uint8_t *p) { return support::endian::read32le(p); }
uint64_t rd64(const uint8_t *p) { return support::endian::read64le(p); }

} // namespace

bool isZipFile(const std::string &path) {
  uint64_t size = 0;
  Expected<sys::fs::file_t> fdOr = openRegularFile(path, size);
  if (!fdOr) {
    consumeError(fdOr.takeError());
    return false;
  }
  FileCloser closer{*fdOr};
  char head[4];
  Expected<size_t> got = readFully(*fdOr, head, 4);
  if (!got) {
    consumeError(got.takeError());
    return false;
  }
  return *got == 4 && (std::memcmp(head, "PK\x03\x04", 4) == 0 ||
                       std::memcmp(head, "PK\x05\x06", 4) == 0);
}

Expected<std::vector<NpzMember>> readNpz(const std::string &path) {
  uint64_t fileSize = 0;
  Expected<sys::fs::file_t> fdOr = openRegularFile(path, fileSize);
  if (!fdOr)
    return fdOr.takeError();
  FileCloser closer{*fdOr};
  if (fileSize == 0)
    return npyError(path, "empty file");
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getOpenFile(
      *fdOr, path, fileSize, /*RequiresNullTerminator=*/false);
  if (!buf)
    return npyError(path, "read error: " + buf.getError().message());
  ArrayRef<uint8_t> z(reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
                      (*buf)->getBufferSize());
  auto bad = [&](const Twine &why) { return npyError(path, why); };
  auto corrupt = [&](const Twine &why) {
    return npyError(path, "not a valid zip archive: " + why);
  };

  // The end of central directory record: 22 bytes, then a comment of up to
  // 64 KiB that must reach the end of the file exactly.
  if (z.size() < 22)
    return corrupt("too short");
  std::optional<uint64_t> eocd;
  uint64_t lowest = z.size() >= 22 + 0xffff ? z.size() - 22 - 0xffff : 0;
  for (uint64_t e = z.size() - 22 + 1; e-- > lowest;)
    if (std::memcmp(z.data() + e, "PK\x05\x06", 4) == 0 &&
        e + 22 + rd16(z.data() + e + 20) == z.size()) {
      eocd = e;
      break;
    }
  if (!eocd)
    return corrupt("no end of central directory record");
  const uint8_t *e = z.data() + *eocd;
  uint64_t disk = rd16(e + 4), cdDisk = rd16(e + 6);
  uint64_t entriesHere = rd16(e + 8), entries = rd16(e + 10);
  uint64_t cdSize = rd32(e + 12), cdOffset = rd32(e + 16);
  if (entries == 0xffff || entriesHere == 0xffff || cdSize == 0xffffffff ||
      cdOffset == 0xffffffff) {
    // zip64: a locator right before the record points at the zip64 record.
    if (*eocd < 20 || std::memcmp(e - 20, "PK\x06\x07", 4) != 0)
      return corrupt("no zip64 end of central directory locator");
    uint64_t at = rd64(e - 20 + 8);
    if (at > z.size() || z.size() - at < 56 ||
        std::memcmp(z.data() + at, "PK\x06\x06", 4) != 0)
      return corrupt("bad zip64 end of central directory record");
    const uint8_t *e64 = z.data() + at;
    disk = rd32(e64 + 16), cdDisk = rd32(e64 + 20);
    entriesHere = rd64(e64 + 24), entries = rd64(e64 + 32);
    cdSize = rd64(e64 + 40), cdOffset = rd64(e64 + 48);
  }
  if (disk != 0 || cdDisk != 0 || entriesHere != entries)
    return bad("multi-disk zip archives are not supported");
  if (cdOffset > z.size() || cdSize > z.size() - cdOffset)
    return corrupt("the central directory runs past the end of the file");
  if (entries > cdSize / 46)
    return corrupt("more entries than the central directory holds");

  std::vector<NpzMember> members;
  std::set<std::string> seen;
  uint64_t p = cdOffset;
  for (uint64_t n = 0; n < entries; ++n) {
    if (cdOffset + cdSize - p < 46 || std::memcmp(z.data() + p, "PK\x01\x02", 4) != 0)
      return corrupt("bad central directory entry #" + Twine(n));
    const uint8_t *c = z.data() + p;
    unsigned flags = rd16(c + 8), method = rd16(c + 10);
    uint32_t crc = rd32(c + 16);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
    unsigned nameLen = rd16(c + 28), extraLen = rd16(c + 30), commentLen = rd16(c + 32);
    uint64_t startDisk = rd16(c + 34), local = rd32(c + 42);
    if (cdOffset + cdSize - p < 46ull + nameLen + extraLen + commentLen)
      return corrupt("bad central directory entry #" + Twine(n));
    std::string memberName(reinterpret_cast<const char *>(c + 46), nameLen);
    std::string where = path + ":" + escape(memberName, 200);
    // zip64 extra field: the 64-bit values of the fields saturated above.
    for (const uint8_t *x = c + 46 + nameLen, *xe = x + extraLen; xe - x >= 4;) {
      unsigned id = rd16(x), len = rd16(x + 2);
      if (static_cast<size_t>(xe - x - 4) < len)
        break;
      if (id == 0x0001) {
        const uint8_t *f = x + 4, *fe = f + len;
        auto take = [&](uint64_t &v, uint64_t saturated, int width) {
          if (v != saturated)
            return true;
          if (fe - f < width)
            return false;
          v = width == 8 ? rd64(f) : rd32(f);
          f += width;
          return true;
        };
        if (!take(usize, 0xffffffff, 8) || !take(csize, 0xffffffff, 8) ||
            !take(local, 0xffffffff, 8) || !take(startDisk, 0xffff, 4))
          return corrupt("bad zip64 extra field of '" + escape(memberName) + "'");
      }
      x += 4 + len;
    }
    p += 46ull + nameLen + extraLen + commentLen;

    if (startDisk != 0)
      return bad("multi-disk zip archives are not supported");
    if (flags & 1)
      return npyError(where, "encrypted members are not supported");
    if (method != 0 && method != 8)
      return npyError(where, "compression method " + Twine(method) +
                                 " is not supported (stored and deflated are)");
    StringRef nm(memberName);
    if (nm.ends_with("/"))
      continue; // a directory entry
    if (!nm.ends_with(".npy"))
      return npyError(where, "not a .npy member (an .npz archive holds only "
                             ".npy files)");
    std::string key = nm.drop_back(4).str();
    if (!seen.insert(key).second)
      return npyError(where, "duplicate member");

    // The local header: its own name and extra lengths place the data.
    if (local > z.size() || z.size() - local < 30 ||
        std::memcmp(z.data() + local, "PK\x03\x04", 4) != 0)
      return npyError(where, "bad local header");
    uint64_t dataStart = local + 30 + rd16(z.data() + local + 26) +
                         rd16(z.data() + local + 28);
    if (dataStart > z.size() || csize > z.size() - dataStart)
      return npyError(where, "member data runs past the end of the file");
    ArrayRef<uint8_t> data = z.slice(dataStart, csize);
    std::vector<uint8_t> inflated;
    if (method == 8) {
      // No DEFLATE stream expands more than 1032:1 (258-byte matches coded
      // in 2 bits); a bigger declared size is a lie, not an allocation.
      if (usize / 1032 > csize + 1)
        return npyError(where, "declared size " + Twine(usize) +
                                   " is impossible for " + Twine(csize) +
                                   " compressed bytes");
      std::string why = Inflater(data, usize).run(inflated);
      if (!why.empty())
        return npyError(where, "invalid deflate data: " + why);
      if (inflated.size() != usize)
        return npyError(where, "inflated to " + Twine(inflated.size()) +
                                   " bytes, the archive declares " + Twine(usize));
      data = inflated;
    } else if (usize != csize) {
      return npyError(where, "stored member of " + Twine(csize) +
                                 " bytes declares " + Twine(usize));
    }
    if (llvm::crc32(data) != crc)
      return npyError(where, "CRC-32 mismatch (the archive is damaged)");
    Expected<NpyArray> a = parseNpyArray(where, data);
    if (!a)
      return a.takeError();
    members.push_back({std::move(key), std::move(*a)});
  }
  return members;
}

//===----------------------------------------------------------------------===//
// writeNpy
//===----------------------------------------------------------------------===//

Error writeNpy(const std::string &path, const HostTensor &t) {
  // Validate the tensor.
  const uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t nbytes = dtypeSize(t.dtype);
  bool zero = false;
  for (int64_t d : t.shape) {
    if (d < 0)
      return npyError(path, "cannot write a tensor with a negative dimension "
                            "in shape " +
                                shapeRepr(t.shape));
    if (d == 0)
      zero = true;
    else if (nbytes > kMax / static_cast<uint64_t>(d))
      return npyError(path, "shape " + shapeRepr(t.shape) + " overflows");
    else
      nbytes *= static_cast<uint64_t>(d);
  }
  if (zero)
    nbytes = 0;
  if (t.bytes.size() != nbytes)
    return npyError(path, "cannot write tensor: it holds " +
                              Twine(t.bytes.size()) + " bytes but shape " +
                              shapeRepr(t.shape) + " " + dtypeName(t.dtype) +
                              " needs " + Twine(nbytes));

  // The header, exactly as numpy.lib.format._wrap_header writes it
  // (numpy >= 1.23 adds spare space after the dict so the first axis can
  // grow in place).
  std::string dict = "{'descr': '" + dtypeDescr(t.dtype).str() +
                     "', 'fortran_order': False, 'shape': " +
                     shapeRepr(t.shape) + ", }";
  if (!t.shape.empty()) {
    size_t digits = std::to_string(t.shape[0]).size();
    if (digits < 21)
      dict.append(21 - digits, ' ');
  }
  size_t hlen = dict.size() + 1; // + '\n'
  unsigned major = 1;
  size_t prefix = kMagicLen + 2 + 2;
  size_t padlen = 64 - (prefix + hlen) % 64;
  if (hlen + padlen > 0xffff) {
    major = 2;
    prefix = kMagicLen + 2 + 4;
    padlen = 64 - (prefix + hlen) % 64;
  }
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  uint32_t total = static_cast<uint32_t>(hlen + padlen);
  char lenBytes[4];
  if (major == 1) {
    support::endian::write16le(lenBytes, static_cast<uint16_t>(total));
    out.append(lenBytes, 2);
  } else {
    support::endian::write32le(lenBytes, total);
    out.append(lenBytes, 4);
  }
  out += dict;
  out.append(padlen, ' ');
  out += '\n';

  int fd;
  if (std::error_code ec = sys::fs::openFileForWrite(path, fd))
    return npyError(path, "cannot open file for writing: " + ec.message());
  raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << out;
  if (t.dtype == DType::Bool) {
    std::vector<char> norm(t.bytes.size());
    for (size_t i = 0; i < t.bytes.size(); ++i)
      norm[i] = t.bytes[i] != 0;
    os.write(norm.data(), norm.size());
  } else {
    os.write(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  }
  os.close();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return npyError(path, "write error: " + ec.message());
  }
  return Error::success();
}

} // namespace attn::runtime
