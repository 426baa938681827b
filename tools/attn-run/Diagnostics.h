//===- Diagnostics.h - attn-run's stderr: progress, notes, errors ---*- C++ -*-===//
//
// Everything attn-run says on stderr goes through here: the progress line
// (rewritten in place on a terminal), MLIR diagnostics (which clear it
// first), conversion notes and warnings (both kept for --json), and the
// one-line errors that end the run with an exit status.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_ATTN_RUN_DIAGNOSTICS_H
#define ATTN_TOOLS_ATTN_RUN_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <string>
#include <vector>

namespace attnrun {

/// One progress line on stderr, rewritten in place; only when stderr is a
/// terminal and --quiet is not given. Cleared before anything else is
/// printed.
class Progress {
public:
  void enable(bool on) { enabled = on; }
  void show(const llvm::Twine &text) {
    if (!enabled)
      return;
    std::string line = ("attn-run: " + text).str();
    size_t pad = shownLen > line.size() ? shownLen - line.size() : 0;
    llvm::errs() << "\r" << line << std::string(pad, ' ');
    llvm::errs().flush();
    shownLen = line.size();
    last = std::chrono::steady_clock::now();
  }
  /// "running i/N", at most ten times a second (and the last one).
  void count(llvm::StringRef what, unsigned i, unsigned n) {
    if (!enabled)
      return;
    auto now = std::chrono::steady_clock::now();
    if (i != 1 && i != n && now - last < std::chrono::milliseconds(100))
      return;
    show(what + " " + llvm::Twine(i) + "/" + llvm::Twine(n));
  }
  void clear() {
    if (!enabled || shownLen == 0)
      return;
    llvm::errs() << "\r" << std::string(shownLen, ' ') << "\r";
    llvm::errs().flush();
    shownLen = 0;
  }

private:
  bool enabled = false;
  size_t shownLen = 0;
  std::chrono::steady_clock::time_point last;
};
extern Progress progress;

/// Standard error for MLIR diagnostics: clears the progress line first.
llvm::raw_ostream &diagnosticStream();

/// One line on stderr and exit status `code`.
[[noreturn]] void fail(int code, const llvm::Twine &msg);

/// "attn-run: warning: ..." on stderr, kept for --json.
void warn(const llvm::Twine &msg);

/// An input conversion note: on stderr unless quiet, kept for --json.
void note(const llvm::Twine &msg);
/// --quiet: notes only for --json, not on stderr.
void setNotesQuiet(bool quiet);

/// The warnings and conversion notes given so far.
const std::vector<std::string> &warnings();
const std::vector<std::string> &conversionNotes();

std::string errorText(llvm::Error e);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTN_RUN_DIAGNOSTICS_H
