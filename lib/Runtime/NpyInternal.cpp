//===- NpyInternal.cpp - helpers shared by the .npy and .npz code ---------===//
//
// The definitions behind NpyInternal.h: error and escaping helpers, the
// checked file open and read, and the parser of the subset of Python
// literals a .npy header uses (strings, booleans, integers, None, tuples
// and lists, nested at most 16 deep).
//
//===----------------------------------------------------------------------===//

#include "NpyInternal.h"

#include "llvm/ADT/ArrayRef.h"

#include <system_error>

using namespace llvm;

namespace attn::runtime::detail {

Error npyError(const std::string &path, const Twine &problem) {
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           path + ": " + problem);
}

std::string escape(StringRef s, size_t maxLen) {
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

//===----------------------------------------------------------------------===//
// Header parser: the subset of Python literals a .npy header uses.
//===----------------------------------------------------------------------===//

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

namespace {

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

bool parseHeaderDict(StringRef text,
                     std::vector<std::pair<std::string, PyValue>> &entries,
                     std::string &error) {
  HeaderParser parser(text);
  if (parser.parseDict(entries))
    return true;
  error = parser.error;
  return false;
}

} // namespace attn::runtime::detail
