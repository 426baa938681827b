//===- Report.h - attn-run's measurements and its report --------*- C++ -*-===//
//
// What attn-run measures about a run (FLOPs, errors against a reference
// pipeline or --expect files, what the pipeline used) and the report it
// prints on stdout, as text or as one JSON object.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_ATTN_RUN_REPORT_H
#define ATTN_TOOLS_ATTN_RUN_REPORT_H

#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnrun {

namespace rt = ::attn::runtime;

struct FlopCount {
  double full = 0;      ///< every (i, j) pair of every attention
  double effective = 0; ///< the pairs causal, window and key lengths leave visible
};


/// FLOPs of one call: 2·B·H·Tq·Tk·(D + Dv) per sdpa/mha attention (4·B·H·
/// Tq·Tk·D when Dv = D), 2·B·T·In·Out per projection, 2·B·H·Tq·Tk·D per
/// scores/weighted_sum. The effective count takes, for an sdpa or mha with
/// a causal mask, a window or key lengths (read from the inputs), only the
/// visible pairs. nullopt when a dim is unknown.
std::optional<FlopCount> countFlops(mlir::func::FuncOp fn,
                                    llvm::ArrayRef<rt::HostTensor> args);

struct ErrorStats {
  double maxAbs = 0, maxRel = 0;
};

/// max |a - b| and max |a - b| / max |b| (normwise relative error); NaN in
/// exactly one of a, b counts as an infinite error.
ErrorStats compare(const rt::HostTensor &a, const rt::HostTensor &b);

/// A result against its --expect file.
struct ExpectCheck {
  std::string file;
  double atol = 0, rtol = 0;
  std::string shapeMismatch; ///< non-empty: the shapes differ (nothing compared)
  ErrorStats stats;
  int64_t numel = 0, mismatches = 0;
  int64_t worst = -1; ///< flat index of the worst element, -1 if none fails
  double worstGot = 0, worstExpected = 0;
  std::vector<int64_t> worstIndex;
  bool ok() const { return shapeMismatch.empty() && mismatches == 0; }
};

/// allclose: |got - expected| <= atol + rtol * |expected| everywhere; NaN
/// matches only NaN, an infinity only the same infinity. The worst element
/// is the one furthest beyond its allowance. `atolGiven`/`rtolGiven`:
/// --atol/--rtol where given, else the dtype's defaults.
ExpectCheck checkExpected(const rt::HostTensor &got, const rt::HostTensor &expected,
                          const std::string &file, std::optional<double> atolGiven,
                          std::optional<double> rtolGiven);

/// %.6g.
std::string num(double d);

/// "12 of 4096 elements differ by more than atol + rtol * |expected| (atol
/// 1e-05, rtol 0.0001); the worst at [0,1,2,3]: got 0.51, expected 0.5".
std::string mismatchText(const ExpectCheck &c);

/// The OpenMP team size the compiled code's parallel loops get (the
/// OpenMP runtime is loaded into this process by the JIT): --num-threads
/// when given for cpu, else omp_get_max_threads() (OMP_NUM_THREADS or one
/// per available core). 1 for the reference pipeline; nullopt for gpu.
std::optional<int64_t> threadsUsed(rt::Pipeline p, int64_t numThreads);

/// The median of timings (the mean of the middle two for an even count;
/// 0 for none).
double median(std::vector<double> v);

/// The widest vector ISA the target features enable.
std::string isaOf(llvm::StringRef features);

/// Everything the report says about one run.
struct RunReport {
  std::string file, entry;
  rt::Pipeline pipeline = rt::Pipeline::Reference;
  std::optional<rt::Pipeline> refPipeline;
  const rt::CompiledFunction *fn = nullptr;
  const std::vector<rt::HostTensor> *results = nullptr;
  std::vector<std::string> outputs;
  double rssBeforeRun = 0, runPeakRss = 0;
  bool peakReset = false;
  std::optional<FlopCount> flops;
  unsigned repeat = 0;
  std::optional<double> medianMs, gflops, effGflops, kernelMs, kernelGflops,
      kernelEffGflops;
  std::vector<ErrorStats> errors; ///< per result, against refPipeline
  std::vector<ExpectCheck> checks; ///< per result, against --expect
  std::optional<std::string> skippedComparison;
  std::optional<int64_t> usedThreads, usedTileQ, usedTileK, usedVectorWidth;
  std::string isa;
  bool expectFailed = false;
  bool verbose = false;
};

/// The report on stdout: one JSON object (--json) or text.
void printJsonReport(const RunReport &report);
void printTextReport(const RunReport &report);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTN_RUN_REPORT_H
