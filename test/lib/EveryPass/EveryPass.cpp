//===- EveryPass.cpp - every pipeline on one file, in one process ---------===//
//
// attn-every-pass FILE PIPELINE...
//
// The in-process half of test/Robustness/every_pass.py: parses FILE split
// at `// -----` (as attn-opt -split-input-file does) and runs each textual
// PIPELINE (e.g. "attn-cpu-pipeline{tile-q=4}" or "attn-decompose,
// convert-attn-to-linalg"), with the verifier after every pass, on a fresh
// copy of every chunk. One line per pipeline, in order:
//
//   <index> ok        every chunk succeeded
//   <index> diag      some chunk failed, and each failed chunk emitted an
//                     error diagnostic
//   <index> silent    some chunk failed without emitting one
//
// Per chunk, unlike attn-opt -split-input-file, whose exit status and
// stderr say only whether the file as a whole failed and whether any error
// was printed: one chunk failing silently beside another's diagnostic
// reads there as a diagnosed failure. A crash or a hang ends the process;
// every_pass.py then runs that file's pairs one attn-opt process each,
// which names the culprit (with attn-opt's per-file rule). One process per file
// instead of one per (file, pipeline) saves ~0.13 s of start-up per run
// (loading libMLIR/libLLVM and registering every dialect and pass), most of
// a run's cost on the suite's small files.
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"
#include "attn/InitAttn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace mlir;

namespace {
enum class Outcome { Ok, Diagnosed, Silent };

/// What one pipeline did over all chunks of a file.
struct Tally {
  bool failed = false;
  bool silent = false; // some chunk failed without an error diagnostic
  Outcome outcome() const {
    return silent ? Outcome::Silent : failed ? Outcome::Diagnosed : Outcome::Ok;
  }
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 3) {
    llvm::errs() << "usage: attn-every-pass FILE PIPELINE...\n";
    return 2;
  }
  registerAllPasses();
  DialectRegistry registry;
  attn::registerAllAttn(registry);
  attn::test::registerTestPasses();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(argv[1], &error);
  if (!input) {
    llvm::errs() << "attn-every-pass: " << error << "\n";
    return 2;
  }
  std::vector<std::string> pipelines(argv + 2, argv + argc);
  // Each pipeline parses once, up front: a bad pipeline is the harness's
  // error, not a finding.
  {
    MLIRContext ctx(registry);
    for (const std::string &p : pipelines) {
      PassManager pm(&ctx, ModuleOp::getOperationName(), OpPassManager::Nesting::Implicit);
      if (failed(parsePassPipeline(p, pm, llvm::errs()))) {
        llvm::errs() << "attn-every-pass: cannot parse pipeline '" << p << "'\n";
        return 2;
      }
    }
  }

  // Every (chunk, pipeline) run gets a fresh context, as a fresh attn-opt
  // process would: dialects load only as the input and the passes need
  // them, so a pass that creates ops of a dialect it did not declare still
  // fails here as it does in attn-opt.
  std::vector<Tally> tallies(pipelines.size());
  (void)splitAndProcessBuffer(
      std::move(input),
      [&](std::unique_ptr<llvm::MemoryBuffer> chunk, const llvm::MemoryBufferRef &,
          raw_ostream &) -> LogicalResult {
        llvm::SourceMgr sources;
        sources.AddNewSourceBuffer(std::move(chunk), llvm::SMLoc());
        for (auto [i, p] : llvm::enumerate(pipelines)) {
          MLIRContext ctx(registry);
          bool diagnosed = false;
          ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
            if (d.getSeverity() == DiagnosticSeverity::Error)
              diagnosed = true;
            return success(); // swallowed: the harness needs the outcome only
          });
          // A chunk that does not parse fails every pipeline with the
          // parser's diagnostic, as in attn-opt.
          OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &ctx);
          bool ok = false;
          if (module) {
            PassManager pm(&ctx, ModuleOp::getOperationName(),
                           OpPassManager::Nesting::Implicit);
            (void)parsePassPipeline(p, pm, llvm::errs());
            pm.enableVerifier(true);
            ok = succeeded(pm.run(*module));
          }
          if (!ok) {
            tallies[i].failed = true;
            tallies[i].silent |= !diagnosed;
          }
        }
        return success();
      },
      llvm::nulls());
  for (auto [i, t] : llvm::enumerate(tallies)) {
    static const char *names[] = {"ok", "diag", "silent"};
    llvm::outs() << i << " " << names[static_cast<int>(t.outcome())] << "\n";
  }
  llvm::outs().flush();
  return 0;
}
