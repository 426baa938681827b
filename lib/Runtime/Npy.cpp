//===- Npy.cpp - .npy reading and writing ---------------------------------===//
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
// Helpers
//===----------------------------------------------------------------------===//

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr uint64_t kMaxHeaderLen = 1u << 20; // numpy itself allows 10000

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
/// Reads the data of `a` (its header parsed; the data start at byte
/// `dataStart` of the file) instead of the whole array.
using ReadDataFn = function_ref<Error(NpyArray &a, uint64_t dataStart)>;

Expected<NpyArray> parseNpy(const std::string &path, uint64_t fileSize,
                            ReadFn readFully, bool strict, ReadDataFn readData = nullptr) {
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
  std::string parseError;
  if (!parseHeaderDict(header, entries, parseError))
    return npyError(path, "malformed header: " + parseError);
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
  if (readData) {
    if (Error e = readData(a, dataStart))
      return std::move(e);
    return a;
  }
  a.bytes.resize(static_cast<size_t>(nbytes));
  got = readFully(reinterpret_cast<char *>(a.bytes.data()), a.bytes.size());
  if (!got)
    return readError(got.takeError());
  if (*got < nbytes)
    return npyError(path, "truncated data: expected " + Twine(nbytes) +
                              " bytes, found " + Twine(*got));
  return a;
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

std::optional<ElementType> NpyArray::exactDType() const {
  if (kind == Kind::Bool)
    return ElementType::Bool;
  if (kind == Kind::Int && itemSize == 1)
    return ElementType::I8;
  if (kind == Kind::Int && !bigEndian && (itemSize == 4 || itemSize == 8))
    return itemSize == 4 ? ElementType::I32 : ElementType::I64;
  if (kind != Kind::Float || bigEndian)
    return std::nullopt;
  if (itemSize == 8)
    return ElementType::F64;
  if (itemSize == 4)
    return ElementType::F32;
  if (itemSize == 2)
    return ElementType::F16;
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

/// An array readNpy's rules accept (an exact dtype, C order) as a
/// HostTensor; bool bytes become 0 or 1.
static HostTensor exactHostTensor(NpyArray &&a) {
  HostTensor t;
  t.dtype = *a.exactDType();
  t.shape = std::move(a.shape);
  t.bytes = std::move(a.bytes);
  if (t.dtype == ElementType::Bool)
    for (uint8_t &b : t.bytes)
      b = b != 0;
  return t;
}

Expected<HostTensor> readNpyRows(const std::string &path, int64_t dim,
                                 function_ref<Expected<std::vector<int64_t>>(int64_t)> rowsOf) {
  uint64_t fileSize = 0;
  Expected<sys::fs::file_t> fdOr = openRegularFile(path, fileSize);
  if (!fdOr)
    return fdOr.takeError();
  FileCloser closer{*fdOr};
  sys::fs::file_t fd = *fdOr;
  auto readRows = [&](NpyArray &a, uint64_t dataStart) -> Error {
    int64_t rank = static_cast<int64_t>(a.shape.size());
    if (dim < 0 || dim >= rank)
      return npyError(path, "has rank " + Twine(rank) + ", no dim " + Twine(dim) +
                                " to take rows of");
    Expected<std::vector<int64_t>> rows = rowsOf(a.shape[dim]);
    if (!rows)
      return rows.takeError();
    int64_t outer = 1, rowBytes = a.itemSize;
    for (int64_t i = 0; i < dim; ++i)
      outer *= a.shape[i];
    for (int64_t i = dim + 1; i < rank; ++i)
      rowBytes *= a.shape[i];
    int64_t whole = a.shape[dim], n = static_cast<int64_t>(rows->size());
    a.bytes.resize(static_cast<size_t>(outer * n * rowBytes));
    for (int64_t g : *rows)
      if (g < 0 || g >= whole)
        return npyError(path, "row " + Twine(g) + " is outside dim " + Twine(dim) +
                                  " of length " + Twine(whole));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < n;) {
        // One read per run of consecutive rows.
        int64_t run = 1;
        while (k + run < n && (*rows)[k + run] == (*rows)[k] + run)
          ++run;
        char *dst = reinterpret_cast<char *>(a.bytes.data()) + (o * n + k) * rowBytes;
        uint64_t at = dataStart + static_cast<uint64_t>((o * whole + (*rows)[k]) * rowBytes);
        int64_t bytes = run * rowBytes;
        for (int64_t done = 0; done < bytes;) {
          Expected<size_t> got = sys::fs::readNativeFileSlice(
              fd, MutableArrayRef<char>(dst + done, bytes - done), at + done);
          if (!got)
            return npyError(path, "read error: " +
                                      errorToErrorCode(got.takeError()).message());
          if (*got == 0)
            return npyError(path, "truncated data");
          done += static_cast<int64_t>(*got);
        }
        k += run;
      }
    a.shape[dim] = n;
    return Error::success();
  };
  Expected<NpyArray> a = parseNpy(
      path, fileSize, [&](char *buf, size_t n) { return readFully(fd, buf, n); },
      /*strict=*/true, readRows);
  if (!a)
    return a.takeError();
  return exactHostTensor(std::move(*a));
}

Expected<HostTensor> readNpy(const std::string &path) {
  Expected<NpyArray> a = readNpyFile(path, /*strict=*/true);
  if (!a)
    return a.takeError();
  return exactHostTensor(std::move(*a));
}
//===----------------------------------------------------------------------===//
// writeNpy
//===----------------------------------------------------------------------===//

Error writeNpy(const std::string &path, const HostTensor &t) {
  // bfloat16 has no npy dtype: written as float32 (exactly: every bfloat16
  // is a float32). An inconsistent tensor falls through to the checks below.
  if (t.dtype == ElementType::BF16 && t.numel() >= 0 &&
      t.bytes.size() == static_cast<size_t>(t.numel()) * 2) {
    HostTensor widened = HostTensor::zeros(ElementType::F32, t.shape);
    for (int64_t i = 0, n = t.numel(); i < n; ++i)
      widened.setFromFloat(i, t.getAsFloat(i));
    return writeNpy(path, widened);
  }
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

  // A regular file appears whole or not at all: the bytes go to a temporary
  // file beside it, renamed over `path` once written, so that a process
  // killed mid-write (a lost ring rank, a signal) leaves no half-written
  // .npy. Other paths (/dev/stdout, a pipe) are written in place.
  sys::fs::file_status status;
  bool special = !sys::fs::status(path, status) && !sys::fs::is_regular_file(status);
  std::optional<sys::fs::TempFile> tmp;
  int fd;
  if (special) {
    if (std::error_code ec = sys::fs::openFileForWrite(path, fd))
      return npyError(path, "cannot open file for writing: " + ec.message());
  } else {
    Expected<sys::fs::TempFile> made = sys::fs::TempFile::create(path + ".partial-%%%%%%");
    if (!made)
      return npyError(path, "cannot open file for writing: " + toString(made.takeError()));
    tmp.emplace(std::move(*made));
    fd = tmp->FD;
  }
  raw_fd_ostream os(fd, /*shouldClose=*/special);
  os << out;
  if (t.dtype == ElementType::Bool) {
    std::vector<char> norm(t.bytes.size());
    for (size_t i = 0; i < t.bytes.size(); ++i)
      norm[i] = t.bytes[i] != 0;
    os.write(norm.data(), norm.size());
  } else {
    os.write(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  }
  if (special)
    os.close();
  else
    os.flush();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    if (tmp)
      consumeError(tmp->discard());
    return npyError(path, "write error: " + ec.message());
  }
  if (tmp)
    if (Error e = tmp->keep(path))
      return npyError(path, "cannot write: " + toString(std::move(e)));
  return Error::success();
}

} // namespace attn::runtime
