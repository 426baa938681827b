//===- NpyInternal.h - helpers shared by the .npy and .npz code -*- C++ -*-===//
//
// Internal to lib/Runtime: the error and escaping helpers, the file
// reading helpers and the .npy header's Python-literal parser that
// Npy.cpp (.npy), NpyConvert.cpp (conversions) and Npz.cpp (.npz)
// share. Not part of the public API (include/attn/Runtime/HostTensor.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_RUNTIME_NPYINTERNAL_H
#define ATTN_LIB_RUNTIME_NPYINTERNAL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::runtime::detail {

/// What readNpy (and toHostTensor without conversions) accepts.
inline constexpr const char *kSupported =
    "(supported: float32 '<f4', float16 '<f2', float64 '<f8', bool '|b1', int8 '|i1', "
    "int32 '<i4', int64 '<i8')";

/// "<path>: <problem>" as an llvm::Error.
llvm::Error npyError(const std::string &path, const llvm::Twine &problem);

/// Printable ASCII as is, anything else as \xNN, so a message stays on one
/// line whatever bytes the file holds.
std::string escape(llvm::StringRef s, size_t maxLen = 64);

/// Reads up to n bytes (fewer only at end of file).
llvm::Expected<size_t> readFully(llvm::sys::fs::file_t fd, char *buf, size_t n);

/// Closes a file descriptor at the end of a scope.
struct FileCloser {
  llvm::sys::fs::file_t fd;
  ~FileCloser() { llvm::sys::fs::closeFile(fd); }
};

/// Checks that `path` is a regular file and opens it; the caller closes.
llvm::Expected<llvm::sys::fs::file_t> openRegularFile(const std::string &path,
                                                      uint64_t &fileSize);

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

/// Python's repr of a parsed value, for messages.
std::string reprValue(const PyValue &v);

/// Parses `{key: value, ...}` followed only by whitespace; on failure,
/// `error` says what and where.
bool parseHeaderDict(llvm::StringRef text,
                     std::vector<std::pair<std::string, PyValue>> &entries,
                     std::string &error);

} // namespace attn::runtime::detail

#endif // ATTN_LIB_RUNTIME_NPYINTERNAL_H
