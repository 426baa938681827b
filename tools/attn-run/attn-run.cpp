//===- attn-run.cpp - JIT-compile, run, check and time attn functions -----===//
//
//   attn-run FILE.mlir [--entry=NAME] [--pipeline=reference|cpu|gpu|gpu-schedule]
//            [--input=PATH.npy ...] [--random-inputs --seed=N]
//            [--output=PATH.npy ...] [--compare-with=reference]
//            [--repeat=N] [--json] [--tile-q=N --tile-k=N --num-threads=N]
//            [--dump-object=PATH]
//
// Exit status: 0 success, 1 the IR does not parse, verify or lower, 2 bad
// invocation or bad input (one line on stderr).
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime/CudaRuntime.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
namespace rt = ::attn::runtime;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("attn-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                      cl::Required, cl::cat(runCategory));
static cl::opt<std::string> entryName("entry",
                                      cl::desc("Function to run (default: the "
                                               "first public function)"), cl::cat(runCategory));
static cl::opt<std::string> pipelineOpt("pipeline", cl::init("reference"),
                                        cl::desc("reference | cpu | gpu | gpu-schedule"), cl::cat(runCategory));
static cl::alias targetAlias("target", cl::desc("Alias for --pipeline"),
                             cl::aliasopt(pipelineOpt), cl::cat(runCategory));
static cl::list<std::string> inputs("input",
                                    cl::desc("A .npy file per argument, in order"), cl::cat(runCategory));
static cl::opt<bool> randomInputs("random-inputs",
                                  cl::desc("Bind seeded random data to every "
                                           "argument (static shapes only)"), cl::cat(runCategory));
static cl::opt<unsigned> seed("seed", cl::init(0),
                              cl::desc("Seed for --random-inputs"), cl::cat(runCategory));
static cl::list<std::string> outputs("output",
                                     cl::desc("A .npy file per result, in order"), cl::cat(runCategory));
static cl::opt<std::string> compareWith(
    "compare-with", cl::desc("Also run this pipeline (e.g. reference) and print "
                             "the max absolute and relative error"), cl::cat(runCategory));
static cl::opt<unsigned> repeat("repeat", cl::init(0),
                                cl::desc("Time N runs; print median and GFLOP/s"), cl::cat(runCategory));
static cl::opt<bool> jsonOut("json", cl::desc("Print one JSON object"), cl::cat(runCategory));
static cl::opt<int64_t> tileQ("tile-q",
                              cl::desc("Query rows per tile of the fused kernel (default: the "
                                       "pipeline's; each pipeline checks its own rule)"),
                              cl::cat(runCategory));
static cl::opt<int64_t> tileK("tile-k",
                              cl::desc("Keys per tile of the fused kernel (default: the "
                                       "pipeline's)"),
                              cl::cat(runCategory));
static cl::opt<int64_t> numThreads("num-threads", cl::init(0),
                                cl::desc("cpu pipeline: worker threads (0: all cores)"), cl::cat(runCategory));
static cl::opt<std::string> gpuChip("gpu-chip",
                                    cl::desc("gpu pipeline: target chip (default: the device's)"),
                                    cl::cat(runCategory));
static cl::opt<std::string> gpuFormat("gpu-format", cl::init("isa"),
                                      cl::desc("gpu pipeline: isa (PTX) | bin (cubin) | fatbin"),
                                      cl::cat(runCategory));
static cl::opt<std::string> dumpObject("dump-object",
                                       cl::desc("Write the JIT'd object file here"), cl::cat(runCategory));

/// One line on stderr and exit status `code`.
[[noreturn]] static void fail(int code, const llvm::Twine &msg) {
  llvm::errs() << "attn-run: " << msg << "\n";
  std::exit(code);
}

static std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

static std::vector<rt::HostTensor> randomTensors(const rt::CompiledFunction &fn) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<rt::HostTensor> out;
  for (auto [i, spec] : llvm::enumerate(fn.argSpecs())) {
    for (int64_t d : spec.shape)
      if (d < 0)
        fail(2, "--random-inputs: argument #" + llvm::Twine(i) + " " + spec.str() +
                    " has dynamic dims; pass --input files instead");
    rt::HostTensor t = rt::HostTensor::zeros(spec.dtype, spec.shape);
    for (int64_t k = 0, n = t.numel(); k < n; ++k)
      t.setFromFloat(k, spec.dtype == rt::DType::Bool ? float(gen() % 4 != 0)
                                                       : uni(gen));
    out.push_back(std::move(t));
  }
  return out;
}

/// Static dim, or the run-time dim when `v` is an entry argument.
static std::optional<double> dimValue(Value v, int64_t i,
                                      llvm::ArrayRef<rt::HostTensor> args) {
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.isDynamicDim(i))
    return t.getDimSize(i);
  if (auto ba = dyn_cast<BlockArgument>(v))
    if (ba.getArgNumber() < args.size())
      return args[ba.getArgNumber()].shape[i];
  return std::nullopt;
}

/// FLOPs of one call: 4·B·H·Tq·Tk·D per sdpa/mha attention, 2·B·T·In·Out per
/// projection, 2·B·H·Tq·Tk·D per scores/weighted_sum. nullopt when a dim is
/// unknown.
static std::optional<double> countFlops(func::FuncOp fn,
                                        llvm::ArrayRef<rt::HostTensor> args) {
  double total = 0;
  bool known = true;
  auto prod = [&](std::initializer_list<std::optional<double>> xs) {
    double p = 1;
    for (auto x : xs) {
      if (!x) {
        known = false;
        return 0.0;
      }
      p *= *x;
    }
    return p;
  };
  fn.walk([&](Operation *op) {
    if (auto s = dyn_cast<mlir::attn::SdpaOp>(op)) {
      Value q = s.getQuery(), k = s.getKey();
      total += 4 * prod({dimValue(q, 0, args), dimValue(q, 1, args), dimValue(q, 2, args),
                         dimValue(k, 2, args), dimValue(q, 3, args)});
    } else if (auto m = dyn_cast<mlir::attn::MhaOp>(op)) {
      Value xq = m.getQueryInput(), xkv = m.getKvInput();
      bool outIn = m.getLayout() == mlir::attn::WeightLayout::out_in;
      auto out = [&](Value w) { return dimValue(w, outIn ? 0 : 1, args); };
      auto in = [&](Value w) { return dimValue(w, outIn ? 1 : 0, args); };
      auto b = dimValue(xq, 0, args), tq = dimValue(xq, 1, args),
           tk = dimValue(xkv, 1, args);
      double h = m.getNumHeads();
      auto qOut = out(m.getWq());
      std::optional<double> d;
      if (qOut)
        d = *qOut / h;
      total += 2 * prod({b, tq, in(m.getWq()), qOut});
      total += 2 * prod({b, tk, in(m.getWk()), out(m.getWk())});
      total += 2 * prod({b, tk, in(m.getWv()), out(m.getWv())});
      total += 2 * prod({b, tq, in(m.getWo()), out(m.getWo())});
      total += 4 * prod({b, h, tq, tk, d});
    } else if (auto p = dyn_cast<mlir::attn::ProjectOp>(op)) {
      auto xt = cast<RankedTensorType>(p.getInput().getType());
      double lead = 1;
      for (int64_t i = 0; i < xt.getRank(); ++i) {
        auto d = dimValue(p.getInput(), i, args);
        if (!d) {
          known = false;
          return;
        }
        lead *= *d;
      }
      bool outIn = p.getLayout() == mlir::attn::WeightLayout::out_in;
      total += 2 * lead * prod({dimValue(p.getWeight(), outIn ? 0 : 1, args)});
    } else if (isa<mlir::attn::ScoresOp, mlir::attn::WeightedSumOp>(op)) {
      Value a = op->getOperand(0), r = op->getResult(0);
      auto rt4 = cast<RankedTensorType>(r.getType());
      // scores: 2·B·H·Tq·Tk·D; weighted_sum: 2·B·H·Tq·Dv·Tk.
      std::optional<double> inner = dimValue(a, 3, args); // D or Tk
      std::optional<double> last =
          rt4.isDynamicDim(3) ? std::nullopt : std::optional<double>(rt4.getDimSize(3));
      total += 2 * prod({dimValue(a, 0, args), dimValue(a, 1, args),
                         dimValue(a, 2, args), inner, last});
    }
  });
  if (!known)
    return std::nullopt;
  return total;
}

/// Resident set size now, in MiB (from /proc/self/statm).
static double currentRssMiB() {
  long pages = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return resident * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

/// Resets the kernel's peak-RSS mark (VmHWM) so that the next reading
/// covers only what follows; false where the kernel does not allow it.
static bool resetPeakRss() {
  FILE *f = std::fopen("/proc/self/clear_refs", "w");
  if (!f)
    return false;
  bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

/// Peak resident set size since the last reset, in MiB; falls back to the
/// process-lifetime peak where /proc has no VmHWM.
static double peakRssOrLifetimeMiB() {
  double mib = rt::peakRssMiB();
  if (mib >= 0)
    return mib;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0; // kilobytes on Linux
}

struct ErrorStats {
  double maxAbs = 0, maxRel = 0;
};

/// max |a - b| and max |a - b| / max |b| (normwise relative error); NaN in
/// exactly one of a, b counts as an infinite error.
static ErrorStats compare(const rt::HostTensor &a, const rt::HostTensor &b) {
  ErrorStats s;
  double maxRef = 0;
  for (int64_t i = 0, n = a.numel(); i < n; ++i) {
    double x = a.getAsFloat(i), y = b.getAsFloat(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y))
        s.maxAbs = INFINITY;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y)
        s.maxAbs = INFINITY;
      continue;
    }
    s.maxAbs = std::max(s.maxAbs, std::fabs(x - y));
    maxRef = std::max(maxRef, std::fabs(y));
  }
  s.maxRel = maxRef > 0 ? s.maxAbs / maxRef : s.maxAbs;
  return s;
}

int main(int argc, char **argv) {
  // Keep freed buffers in the heap so that repeated calls reuse them rather
  // than mapping and faulting in fresh pages for every output (a page fault
  // costs microseconds on a VM: ~20 ms per call for a 3 MiB result).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  cl::HideUnrelatedOptions(runCategory);
  std::string cliErrors;
  llvm::raw_string_ostream cliErrorStream(cliErrors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "attn-run: JIT-compile, run, check and time "
                                   "attn functions\n",
                                   &cliErrorStream)) {
    // Bad invocation: one line, exit status 2.
    // LLVM prefixes its messages with the program name; keep the first one.
    llvm::StringRef first = llvm::StringRef(cliErrors).trim().split('\n').first;
    llvm::StringRef prog = argv[0];
    first.consume_front(prog);
    first.consume_front("attn-run");
    first.consume_front(":");
    fail(2, first.trim());
  }
  auto pipeline = rt::parsePipeline(pipelineOpt);
  if (!pipeline)
    fail(2, errorText(pipeline.takeError()));
  std::optional<rt::Pipeline> refPipeline;
  if (!compareWith.empty()) {
    auto p = rt::parsePipeline(compareWith);
    if (!p)
      fail(2, "--compare-with: " + errorText(p.takeError()));
    refPipeline = *p;
  }
  // The GPU pipeline needs a driver and a device: say so in one line.
  if (*pipeline == rt::Pipeline::Gpu || refPipeline == rt::Pipeline::Gpu) {
    std::string why = rt::cudaUnavailableReason();
    if (!why.empty())
      fail(2, "--pipeline=gpu: " + why);
  }
  if (!inputs.empty() && randomInputs)
    fail(2, "--input and --random-inputs are exclusive");

  // Read the program.
  if (llvm::sys::fs::is_directory(inputFile))
    fail(2, inputFile + ": is a directory");
  auto buffer = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buffer)
    fail(2, inputFile + ": cannot open file: " + buffer.getError().message());
  DialectRegistry registry;
  rt::registerJitDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  {
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
    module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
    if (!module)
      return 1; // the diagnostics are printed
  }

  // Choose the entry.
  func::FuncOp entry;
  if (!entryName.empty()) {
    entry = module->lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal())
      fail(2, inputFile + ": no function named '" + entryName + "'");
  } else {
    for (auto f : module->getOps<func::FuncOp>())
      if (f.isPublic() && !f.isExternal()) {
        entry = f;
        break;
      }
    if (!entry)
      fail(2, inputFile + ": no public function to run");
  }
  std::string name = entry.getSymName().str();

  // Load inputs before compiling so bad files fail fast.
  std::vector<rt::HostTensor> args;
  for (const std::string &path : inputs) {
    auto t = rt::readNpy(path);
    if (!t)
      fail(2, errorText(t.takeError()));
    args.push_back(std::move(*t));
  }
  if (outputs.size() > entry.getNumResults())
    fail(2, "got " + llvm::Twine(outputs.size()) + " --output files, but '" + name +
                "' has " + llvm::Twine(entry.getNumResults()) + " result(s)");

  rt::JitOptions jit;
  jit.keepObject = !dumpObject.empty();
  if (tileQ.getNumOccurrences())
    jit.tileQ = tileQ;
  if (tileK.getNumOccurrences())
    jit.tileK = tileK;
  jit.threads = numThreads;
  jit.gpuChip = gpuChip;
  jit.gpuFormat = gpuFormat;
  auto compiled = [&](rt::Pipeline p) {
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
    auto fn = rt::CompiledFunction::compile(*module, name, p, jit);
    if (!fn) {
      // IR that does not lower is exit 1; everything about the invocation
      // (options, signature, device) is exit 2.
      int code = 2;
      std::string msg;
      llvm::handleAllErrors(
          fn.takeError(),
          [&](const rt::CompileError &e) {
            if (e.getKind() == rt::CompileErrorKind::LoweringFailed ||
                e.getKind() == rt::CompileErrorKind::JitFailed)
              code = 1;
            msg = e.getMessage();
          },
          [&](const llvm::ErrorInfoBase &e) { msg = e.message(); });
      fail(code, msg);
    }
    return std::move(*fn);
  };
  std::unique_ptr<rt::CompiledFunction> fn = compiled(*pipeline);
  // Say once per op what the fused pipeline left to the reference lowering.
  for (const std::string &note : fn->unfusedOps())
    llvm::errs() << "attn-run: " << note << "\n";
  if (!dumpObject.empty())
    fn->dumpObject(dumpObject);

  if (randomInputs)
    args = randomTensors(*fn);
  if (llvm::Error e = fn->checkInputs(args))
    fail(2, name + ": " + errorText(std::move(e)));
  if (llvm::Error e = rt::checkInputShapes(*module, name, args))
    fail(2, name + ": " + errorText(std::move(e)));

  // The reference lowering materialises [B,H,Tq,Tk] scores: say up front
  // when one such buffer alone does not fit in the memory left.
  std::vector<std::vector<int64_t>> argShapes;
  for (const rt::HostTensor &t : args)
    argShapes.push_back(t.shape);
  auto referenceTooBig = [&]() -> std::optional<std::string> {
    // About four such buffers are live at once (scores, exponentials,
    // probabilities: bench/RESULTS.md measures 2.7-3.7x one buffer at
    // T = 2048).
    constexpr uint64_t kLiveScoreBuffers = 4;
    std::optional<uint64_t> one = rt::referenceScoresBytes(*module, name, argShapes);
    std::optional<uint64_t> avail = rt::availableMemoryBytes();
    if (!one || !avail || kLiveScoreBuffers * *one <= *avail)
      return std::nullopt;
    return "the reference lowering needs about " +
           rt::formatBytes(kLiveScoreBuffers * *one) + " (" +
           std::to_string(kLiveScoreBuffers) + " [B,H,Tq,Tk] f32 buffers of " +
           rt::formatBytes(*one) + ") and " + rt::formatBytes(*avail) +
           " of memory are available";
  };
  if (*pipeline == rt::Pipeline::Reference)
    if (std::optional<std::string> why = referenceTooBig())
      fail(2, "--pipeline=reference: " + *why);
  // A call whose compiled code could not allocate is exit 2 with the size.
  auto callFailed = [&](llvm::Error e) {
    int code = 1;
    llvm::handleAllErrors(
        std::move(e), [&](const rt::AllocationError &a) { code = 2; fail(code, a.message()); },
        [&](const llvm::ErrorInfoBase &b) { fail(code, b.message()); });
  };

  // Memory of the first call alone: peak RSS during it minus RSS before it
  // (inputs, compiled code) covers the output and any scratch.
  bool peakReset = resetPeakRss();
  double rssBeforeRun = currentRssMiB();
  rt::CompiledFunction::CallStats stats;
  auto results = fn->call(args, &stats);
  double runPeakRss = stats.peakRssAfterKernelMiB >= 0 ? stats.peakRssAfterKernelMiB
                                                       : peakRssOrLifetimeMiB();
  if (!results)
    callFailed(results.takeError());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (llvm::Error e = rt::writeNpy(outputs[i], (*results)[i]))
      fail(2, errorText(std::move(e)));

  std::vector<ErrorStats> errors;
  std::optional<std::string> skippedComparison;
  if (refPipeline == rt::Pipeline::Reference)
    skippedComparison = referenceTooBig();
  if (skippedComparison)
    llvm::errs() << "attn-run: skipping --compare-with=reference: " << *skippedComparison
                 << "\n";
  if (refPipeline && !skippedComparison) {
    std::unique_ptr<rt::CompiledFunction> ref = compiled(*refPipeline);
    auto expected = ref->call(args);
    if (!expected)
      callFailed(expected.takeError());
    for (size_t i = 0; i < results->size(); ++i)
      errors.push_back(compare((*results)[i], (*expected)[i]));
  }

  std::optional<double> medianMs, gflops, kernelMs, kernelGflops;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  if (repeat > 0) {
    std::vector<double> ms, kms;
    for (unsigned r = 0; r < repeat; ++r) {
      rt::CompiledFunction::CallStats st;
      auto t0 = std::chrono::steady_clock::now();
      auto out = fn->call(args, &st);
      auto t1 = std::chrono::steady_clock::now();
      if (!out)
        callFailed(out.takeError());
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      if (st.gpuKernelMs >= 0)
        kms.push_back(st.gpuKernelMs);
    }
    medianMs = median(ms);
    auto flops = countFlops(entry, args);
    if (flops)
      gflops = *flops / (*medianMs * 1e6);
    // GPU: the kernels alone (CUDA events), without the host<->device copies.
    if (!kms.empty()) {
      kernelMs = median(kms);
      if (flops && *kernelMs > 0)
        kernelGflops = *flops / (*kernelMs * 1e6);
    }
  }

  if (jsonOut) {
    llvm::json::Object obj{{"file", inputFile},
                           {"entry", name},
                           {"pipeline", rt::pipelineName(*pipeline)},
                           {"cpu", fn->targetCpu()},
                           {"cpu_features", fn->targetFeatures()}};
    llvm::json::Array outs;
    for (auto &t : *results)
      outs.push_back(llvm::json::Object{
          {"dtype", rt::dtypeName(t.dtype)},
          {"shape", llvm::json::Array(llvm::ArrayRef<int64_t>(t.shape))}});
    obj["outputs"] = std::move(outs);
    obj["rss_before_run_mib"] = rssBeforeRun;
    obj["run_peak_rss_mib"] = runPeakRss;
    obj["run_peak_rss_is_per_call"] = peakReset;
    if (medianMs) {
      obj["median_ms"] = *medianMs;
      obj["repeat"] = static_cast<int64_t>(repeat);
      obj["gflops"] = gflops ? llvm::json::Value(*gflops) : llvm::json::Value(nullptr);
    }
    if (kernelMs) {
      obj["gpu_kernel_median_ms"] = *kernelMs;
      obj["gpu_kernel_gflops"] =
          kernelGflops ? llvm::json::Value(*kernelGflops) : llvm::json::Value(nullptr);
    }
    if (!errors.empty()) {
      double a = 0, r = 0;
      for (auto &e : errors) {
        a = std::max(a, e.maxAbs);
        r = std::max(r, e.maxRel);
      }
      obj["compare_with"] = rt::pipelineName(*refPipeline);
      obj["max_abs_error"] = a;
      obj["max_rel_error"] = r;
    }
    if (skippedComparison)
      obj["comparison_skipped"] = *skippedComparison;
    llvm::json::Array unfused;
    for (const std::string &note : fn->unfusedOps())
      unfused.push_back(note);
    obj["unfused"] = std::move(unfused);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(obj))) << "\n";
    return 0;
  }

  llvm::outs() << "attn-run: @" << name << " from " << inputFile << " through the "
               << rt::pipelineName(*pipeline) << " pipeline (JIT for "
               << fn->targetCpu() << ")\n";
  for (auto [i, t] : llvm::enumerate(*results)) {
    rt::TensorSpec s{t.dtype, t.shape};
    llvm::outs() << "result #" << i << ": " << s.str();
    if (i < outputs.size())
      llvm::outs() << " -> " << outputs[i];
    llvm::outs() << "\n";
  }
  for (auto [i, e] : llvm::enumerate(errors))
    llvm::outs() << llvm::formatv("result #{0} vs {1}: max_abs_error {2:e} "
                                  "max_rel_error {3:e}\n",
                                  i, rt::pipelineName(*refPipeline), e.maxAbs,
                                  e.maxRel);
  if (medianMs) {
    llvm::outs() << llvm::formatv("time: median {0:f3} ms over {1} runs", *medianMs,
                                  unsigned(repeat));
    if (gflops)
      llvm::outs() << llvm::formatv(", {0:f2} GFLOP/s", *gflops);
    llvm::outs() << "\n";
    if (kernelMs) {
      llvm::outs() << llvm::formatv("gpu kernels: median {0:f3} ms", *kernelMs);
      if (kernelGflops)
        llvm::outs() << llvm::formatv(", {0:f2} TFLOP/s", *kernelGflops / 1000);
      llvm::outs() << "\n";
    }
  }
  return 0;
}
