//===- Diagnostics.cpp - attn-run's stderr: progress, notes, errors -------===//
//
// The MLIR diagnostic stream that clears the progress line, and the
// warnings and conversion notes kept for the --json report.
//
//===----------------------------------------------------------------------===//
#include "Diagnostics.h"

#include <cstdlib>

namespace attnrun {

Progress progress;

namespace {
/// Standard error for MLIR diagnostics: clears the progress line first.
class DiagnosticStream : public llvm::raw_ostream {
public:
  DiagnosticStream() {
    SetUnbuffered();
    enable_colors(llvm::errs().has_colors());
  }
  bool is_displayed() const override { return llvm::errs().is_displayed(); }

private:
  void write_impl(const char *ptr, size_t size) override {
    progress.clear();
    llvm::errs().write(ptr, size);
    pos += size;
  }
  uint64_t current_pos() const override { return pos; }
  uint64_t pos = 0;
};
} // namespace

llvm::raw_ostream &diagnosticStream() {
  static DiagnosticStream stream;
  return stream;
}

void fail(int code, const llvm::Twine &msg) {
  progress.clear();
  llvm::errs() << "attn-run: " << msg << "\n";
  std::exit(code);
}

static std::vector<std::string> warningList;
static std::vector<std::string> noteList;
static bool quietNotes = false;

void warn(const llvm::Twine &msg) {
  progress.clear();
  llvm::errs() << "attn-run: warning: " << msg << "\n";
  warningList.push_back(msg.str());
}

void note(const llvm::Twine &msg) {
  noteList.push_back(msg.str());
  if (quietNotes)
    return;
  progress.clear();
  llvm::errs() << "attn-run: note: " << msg << "\n";
}

void setNotesQuiet(bool quiet) { quietNotes = quiet; }

const std::vector<std::string> &warnings() { return warningList; }
const std::vector<std::string> &conversionNotes() { return noteList; }

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

} // namespace attnrun
