//===- attn-run.cpp - JIT-compile, run, check and time attn functions -----===//
//
//   attn-run FILE.mlir [--entry=NAME] [--pipeline=reference|cpu|gpu|gpu-schedule|ring]
//            [--input=[NAME=]PATH.npy ... | --input=PATH.npz ...]
//            [--random-inputs --seed=N] [--strict-inputs]
//            [--output=PATH.npy ...] [--compare-with=reference]
//            [--expect=PATH.npy ... --atol=A --rtol=R]
//            [--repeat=N [--min-seconds=S]] [--json] [--tile-q=N --tile-k=N --vector-width=N --num-threads=N]
//            [--dump-object=PATH] [--quiet] [--verbose]
//
// Exit status: 0 success, 1 the IR does not parse, verify or lower, or a
// result does not match its --expect file, 2 bad invocation or bad input
// (one line on stderr).
//
// The flags and the run as named phases (checkOptions, parseProgram,
// chooseEntry, readFiles, compileOrExit, bindArguments, firstCall,
// compareResults, timeCalls, reportRun) live here; Inputs.cpp reads and
// binds the input files, Report.cpp measures and prints, Diagnostics.cpp
// writes stderr, Ring.cpp runs --pipeline=ring.
//
//===----------------------------------------------------------------------===//
#include "Diagnostics.h"
#include "Inputs.h"
#include "Report.h"
#include "Ring.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime/CudaRuntime.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
namespace rt = ::attn::runtime;
namespace cl = llvm::cl;
using namespace attnrun;

namespace {
/// A count: like cl::parser<unsigned>, but a negative number gets its own
/// message instead of "value invalid for uint argument".
struct CountParser : public cl::parser<unsigned> {
  using cl::parser<unsigned>::parser;
  bool parse(cl::Option &o, llvm::StringRef argName, llvm::StringRef arg,
             unsigned &value) {
    long long v;
    if (arg.starts_with("-") && !arg.getAsInteger(0, v) && v < 0)
      return o.error("must not be negative, got " + arg);
    return cl::parser<unsigned>::parse(o, argName, arg, value);
  }
};
} // namespace

static cl::OptionCategory runCategory("attn-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                      cl::Required, cl::cat(runCategory));
static cl::opt<std::string> entryName("entry",
                                      cl::desc("Function to run (default: the "
                                               "first public function)"), cl::cat(runCategory));
static cl::opt<std::string> pipelineOpt("pipeline", cl::init("reference"),
                                        cl::desc("reference | cpu | gpu | gpu-schedule | ring (under mpirun: "
                                                 "ring attention over MPI)"), cl::cat(runCategory));
static cl::alias targetAlias("target", cl::desc("Alias for --pipeline"),
                             cl::aliasopt(pipelineOpt), cl::cat(runCategory));
static cl::list<std::string> inputs(
    "input",
    cl::desc("PATH.npy: the next argument, in order; NAME=PATH.npy: the "
             "argument named %NAME in the signature (or #N: N=PATH.npy); "
             "PATH.npz: every argument named by a member (q.npy -> %q; arr_N "
             "-> argument N)"),
    cl::value_desc("[NAME=]PATH"), cl::cat(runCategory));
static cl::opt<bool> strictInputs(
    "strict-inputs",
    cl::desc("Reject input and --expect files that need a conversion "
             "(float64, integer masks, big endian, Fortran order) instead of "
             "converting them with a note"),
    cl::cat(runCategory));
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
static cl::list<std::string> expects(
    "expect",
    cl::desc("A .npy file per result, in order, that the result must match "
             "(|result - expected| <= atol + rtol * |expected| everywhere); "
             "a mismatch is exit status 1"),
    cl::value_desc("PATH.npy"), cl::cat(runCategory));
static cl::opt<double> atolOpt(
    "atol", cl::desc("--expect: absolute tolerance (default: 1e-5 for float32 "
                     "results, 1e-3 for float16, 0 for bool)"),
    cl::cat(runCategory));
static cl::opt<double> rtolOpt(
    "rtol", cl::desc("--expect: relative tolerance (default: 1e-4 for float32 "
                     "results, 1e-3 for float16, 0 for bool)"),
    cl::cat(runCategory));
static cl::opt<unsigned, false, CountParser>
    repeat("repeat", cl::init(0), cl::desc("Time N runs; print median and GFLOP/s"),
           cl::cat(runCategory));
static cl::opt<double> minSeconds(
    "min-seconds",
    cl::desc("--repeat: keep timing runs past N until they add up to at least S seconds "
             "(the median is over every timed run; \"repeat\" in the report says how many)"),
    cl::value_desc("S"), cl::init(0), cl::cat(runCategory));
static cl::opt<std::string> raiseOpt(
    "raise", cl::ValueOptional,
    cl::desc("Raise linalg attention chains to attn.sdpa first (attn-raise, "
             "with its options if given: --raise=\"zero-empty-rows=1\") in "
             "--pipeline's run; --compare-with runs the function as written"),
    cl::value_desc("OPTIONS"), cl::cat(runCategory));
static cl::opt<bool> jsonOut("json", cl::desc("Print one JSON object"), cl::cat(runCategory));
static cl::opt<int64_t> tileQ("tile-q",
                              cl::desc("Query rows per tile of the fused kernel (default: the "
                                       "pipeline's; each pipeline checks its own rule)"),
                              cl::cat(runCategory));
static cl::opt<int64_t> tileK("tile-k",
                              cl::desc("Keys per tile of the fused kernel (default: the "
                                       "pipeline's)"),
                              cl::cat(runCategory));
static cl::opt<int64_t> vectorWidthOpt(
    "vector-width",
    cl::desc("cpu pipeline: f32 lanes per vector of the fused kernel (default: the host's "
             "widest, 16 with AVX-512, 8 with AVX2; e.g. 8 on an AVX-512 host runs the AVX2 "
             "schedule)"),
    cl::cat(runCategory));
static cl::opt<bool> bf16DotOpt(
    "bf16-dot",
    cl::desc("cpu pipeline: bf16 prefill tiles and projections multiply on AVX512-BF16 dot products "
             "(vdpbf16ps; =false: f32 FMAs after widening). Default: the host's choice, "
             "on where they are faster (AMD Zen 4 and later), off on Intel, where "
             "vdpbf16ps runs at half the f32 FMA rate; refused on a CPU without them"),
    cl::cat(runCategory));
static cl::opt<bool> amxOpt(
    "amx",
    cl::desc("cpu pipeline: bf16 prefill tiles multiply on Intel AMX tiles (tdpbf16ps; "
             "=false: the bf16-dot or f32 path). Default: on where the host has AMX-BF16 "
             "and Linux grants this process its state; refused elsewhere unless "
             "--emulate-amx"),
    cl::cat(runCategory));
static cl::opt<bool> emulateAmxOpt(
    "emulate-amx",
    cl::desc("cpu pipeline: run the AMX tiles as vector code (attn-emulate-amx) on any "
             "CPU, with --amx implied: the AMX path's layouts and numerics, slowly"),
    cl::cat(runCategory));
static cl::opt<int64_t> prepackLimitOpt(
    "prepack-limit-mib",
    cl::desc("cpu pipeline: the most MiB of keys the fused kernel transposes once per call "
             "instead of once per query tile (0: never; default: the pipeline's, 32)"),
    cl::cat(runCategory));
static cl::opt<bool> tf32Opt(
    "tf32",
    cl::desc("gpu, gpu-schedule: f32 sdpa with head dims 64/128 take the tensor-core kernel "
             "with TF32 operands (10 mantissa bits; compare with --rtol/--atol of f16)"),
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
static cl::opt<bool> quiet(
    "quiet",
    cl::desc("No progress lines and no conversion notes on stderr (warnings "
             "and errors are still printed)"),
    cl::cat(runCategory));
static cl::opt<bool> verbose(
    "verbose",
    cl::desc("Also print the full CPU feature string and the pipeline's "
             "configuration (--json: cpu_features_all)"),
    cl::cat(runCategory));

//===----------------------------------------------------------------------===//
// The command line
//===----------------------------------------------------------------------===//

/// The attn-run flag nearest to an unknown `arg` ("--pipline=cpu" ->
/// "--pipeline=cpu"), if one is close enough to be a typo.
static std::optional<std::string> nearestFlag(llvm::StringRef arg) {
  llvm::StringRef body = arg.ltrim('-');
  auto [name, value] = body.split('=');
  if (name.empty())
    return std::nullopt;
  std::optional<std::string> best;
  unsigned bestDist = ~0u;
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *o = entry.second;
    llvm::StringRef key = entry.first;
    if (!llvm::is_contained(o->Categories, &runCategory) || o->ArgStr.empty())
      continue;
    unsigned dist = name.edit_distance(key, /*AllowReplacements=*/true);
    // An abbreviation ("--pipe") or the flag's last word ("--threads" for
    // "--num-threads") counts as close.
    if (name.size() >= 3 && (key.starts_with(name) || key.ends_with(("-" + name).str())))
      dist = std::min(dist, 1u);
    unsigned allowed = key.size() <= 4 ? 1 : key.size() <= 8 ? 2 : 3;
    if (dist <= allowed && dist < bestDist) {
      bestDist = dist;
      best = ("--" + key + (body.contains('=') ? "=" + value : "")).str();
    }
  }
  return best;
}

/// The LLVM/MLIR libraries register options of their own (hidden from
/// --help); the parser accepts them, but none means anything to attn-run
/// (`--threads=4` parsed and did nothing where `--num-threads=4` was
/// meant): a library option given on the command line is an error naming
/// the nearest attn-run flag. MLIR's own `--mlir-*` debugging flags are
/// left usable.
static void refuseLibraryOptions() {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *o = entry.second;
    bool ours = llvm::any_of(o->Categories, [](cl::OptionCategory *c) {
      return c == &runCategory || c->getName() == "Generic Options"; // --help, --version
    });
    if (!o->getNumOccurrences() || ours || entry.first.starts_with("mlir-"))
      continue;
    std::string arg = ("--" + entry.first).str();
    if (std::optional<std::string> near = nearestFlag(arg))
      fail(2, "'" + arg + "' is an option of the LLVM libraries, not of attn-run; did you "
                          "mean '" + *near + "'?");
    fail(2, "'" + arg + "' is an option of the LLVM libraries, not of attn-run "
                        "(attn-run --help lists the flags)");
  }
}

/// Parses the command line; a bad one is one line on stderr and exit 2.
static void parseCommandLine(int argc, char **argv) {
  cl::HideUnrelatedOptions(runCategory);
  std::string cliErrors;
  llvm::raw_string_ostream cliErrorStream(cliErrors);
  if (cl::ParseCommandLineOptions(argc, argv,
                                  "attn-run: JIT-compile, run, check and time "
                                  "attn functions\n",
                                  &cliErrorStream)) {
    refuseLibraryOptions();
    return;
  }
  // LLVM prefixes its messages with the program name; keep the first one.
  llvm::StringRef first = llvm::StringRef(cliErrors).trim().split('\n').first;
  llvm::StringRef prog = argv[0];
  first.consume_front(prog);
  first.consume_front("attn-run");
  first.consume_front(":");
  first = first.trim();
  // A bad option value is reported by the option itself, on stderr, already
  // as "attn-run: for the --X option: ...": nothing more to say.
  if (first.empty())
    std::exit(2);
  // "Unknown command line argument '--pipline=cpu'.  Try: '... --help'":
  // name the nearest attn-run flag (LLVM's own guess may be one of the
  // hidden options of the libraries).
  constexpr llvm::StringLiteral unknown = "Unknown command line argument '";
  if (first.starts_with(unknown)) {
    llvm::StringRef arg = first.drop_front(unknown.size());
    arg = arg.take_front(arg.rfind("'."));
    if (std::optional<std::string> near = nearestFlag(arg))
      fail(2, unknown + arg + "'; did you mean '" + *near + "'?");
    fail(2, unknown + arg + "' (attn-run --help lists the flags)");
  }
  fail(2, first);
}

/// Options that the chosen pipeline (or mode) does not use: one warning
/// each.
static void warnInapplicable(rt::Pipeline p, std::optional<rt::Pipeline> ref) {
  auto given = [](const cl::Option &o) { return o.getNumOccurrences() > 0; };
  bool tiled = p != rt::Pipeline::Reference || (ref && *ref != rt::Pipeline::Reference);
  if ((given(tileQ) || given(tileK)) && !tiled)
    warn(llvm::Twine(given(tileQ) && given(tileK) ? "--tile-q and --tile-k do"
                     : given(tileQ)               ? "--tile-q does"
                                                  : "--tile-k does") +
         " not apply to --pipeline=reference (it has no tiled kernel); ignored");
  // The CPU kernel's options: for cpu (and ring, whose ranks run it).
  bool cpuKernel = p == rt::Pipeline::Cpu || p == rt::Pipeline::Ring || ref == rt::Pipeline::Cpu;
  for (const cl::Option *o : std::initializer_list<const cl::Option *>{&numThreads, &vectorWidthOpt,
                                                                &bf16DotOpt, &amxOpt, &emulateAmxOpt,
                                                                &prepackLimitOpt})
    if (given(*o) && !cpuKernel)
      warn("--" + o->ArgStr + " applies only to --pipeline=cpu, not " + rt::pipelineName(p) +
           "; ignored");
  if (given(tf32Opt) && p != rt::Pipeline::Gpu && p != rt::Pipeline::GpuSchedule)
    warn("--tf32 applies only to --pipeline=gpu and gpu-schedule, not " +
         rt::pipelineName(p) + "; ignored");
  if (given(seed) && !randomInputs)
    warn("--seed applies only with --random-inputs; ignored");
  if ((given(gpuChip) || given(gpuFormat)) && p != rt::Pipeline::Gpu &&
      ref != rt::Pipeline::Gpu)
    warn(llvm::Twine(given(gpuChip) ? "--gpu-chip" : "--gpu-format") +
         " applies only to --pipeline=gpu, not " + rt::pipelineName(p) + "; ignored");
  if (given(minSeconds) && repeat == 0)
    warn("--min-seconds applies only with --repeat; ignored");
  else if (given(minSeconds) && p == rt::Pipeline::Ring)
    warn("--min-seconds does not apply to --pipeline=ring (its ranks time --repeat runs in "
         "step); ignored");
  if ((given(atolOpt) || given(rtolOpt)) && expects.empty())
    warn(llvm::Twine(given(atolOpt) ? "--atol" : "--rtol") +
         " applies only with --expect; ignored");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// The phases of a run
//===----------------------------------------------------------------------===//

namespace {
/// The program as parsed: the module and, for text input, the parser's
/// record of the source names of block arguments (func.func @f(%q: ...) ->
/// "q", for --input=q=PATH).
struct Program {
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module;
  AsmParserState asmState;
  bool haveAsmState = false;
};

/// The pipelines --pipeline and --compare-with name.
struct Pipelines {
  rt::Pipeline run = rt::Pipeline::Reference;
  std::optional<rt::Pipeline> compare;
};
} // namespace

/// Phase 1: the flags alone, before any file is read; exit 2 on a bad one.
static Pipelines checkOptions() {
  if (numThreads < 0)
    fail(2, "--num-threads must be 0 (one per core) or more, got " + llvm::Twine(numThreads));
  for (auto [opt, value] : {std::pair<cl::opt<double> *, const char *>{&atolOpt, "--atol"},
                            {&rtolOpt, "--rtol"},
                            {&minSeconds, "--min-seconds"}})
    if (opt->getNumOccurrences() && !(*opt >= 0 && std::isfinite(*opt)))
      fail(2, llvm::Twine(value) + " must be a finite number >= 0, got " + num(*opt));
  Pipelines pipes;
  auto pipeline = rt::parsePipeline(pipelineOpt);
  if (!pipeline)
    fail(2, errorText(pipeline.takeError()));
  pipes.run = *pipeline;
  if (!compareWith.empty()) {
    auto p = rt::parsePipeline(compareWith);
    if (!p)
      fail(2, "--compare-with: " + errorText(p.takeError()));
    pipes.compare = *p;
  }
  // The GPU pipeline needs a driver and a device: say so in one line.
  if (pipes.run == rt::Pipeline::Gpu || pipes.compare == rt::Pipeline::Gpu) {
    std::string why = rt::cudaUnavailableReason();
    if (!why.empty())
      fail(2, "--pipeline=gpu: " + why);
  }
  if (!inputs.empty() && randomInputs)
    fail(2, "--input and --random-inputs are exclusive");
  warnInapplicable(pipes.run, pipes.compare);
  return pipes;
}

/// Phase 2: reads and parses the program (text or bytecode); false when it
/// does not parse (the diagnostics are printed).
static bool parseProgram(MLIRContext &ctx, Program &program) {
  if (llvm::sys::fs::is_directory(inputFile))
    fail(2, inputFile + ": is a directory");
  auto buffer = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buffer)
    fail(2, inputFile + ": cannot open file: " + buffer.getError().message());
  program.sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  progress.show("parsing " + inputFile);
  SourceMgrDiagnosticHandler handler(program.sourceMgr, &ctx, diagnosticStream());
  const llvm::MemoryBuffer *main =
      program.sourceMgr.getMemoryBuffer(program.sourceMgr.getMainFileID());
  if (isBytecode(main->getMemBufferRef())) {
    program.module = parseSourceFile<ModuleOp>(program.sourceMgr, &ctx);
  } else {
    ParserConfig config(&ctx);
    Block block;
    if (succeeded(parseAsmSourceFile(program.sourceMgr, &block, config, &program.asmState))) {
      program.module = detail::constructContainerOpForParserIfNecessary<ModuleOp>(
          &block, &ctx, FileLineColLoc::get(&ctx, main->getBufferIdentifier(), 0, 0));
      program.haveAsmState = true;
    }
  }
  if (!program.module)
    progress.clear();
  return static_cast<bool>(program.module);
}

/// Phase 3: the function to run (--entry, or the module's one entry).
static func::FuncOp chooseEntry(ModuleOp module) {
  auto chosen = rt::entryFunctionName(module, entryName);
  if (!chosen)
    fail(2, inputFile + ": " + llvm::toString(chosen.takeError()) +
                (entryName.empty() ? " to run" : ""));
  return module.lookupSymbol<func::FuncOp>(*chosen);
}

/// Whether a ring run reads each rank's share of its inputs only: plain
/// .npy files given by position (no conversions); anything else is read
/// whole first.
static bool ringReadsShares(rt::Pipeline p) {
  return p == rt::Pipeline::Ring && !inputs.empty() &&
         llvm::all_of(inputs, [](const std::string &in) {
           return !llvm::StringRef(in).contains('=') && llvm::StringRef(in).ends_with(".npy");
         });
}

/// Phase 4: the --input files (unless a ring reads shares) and the
/// --expect files, read before compiling so that bad files fail fast.
static void readFiles(const Program &program, func::FuncOp entry, bool ringShares,
                      std::vector<rt::HostTensor> &args, std::vector<rt::HostTensor> &expected) {
  std::string name = entry.getSymName().str();
  std::vector<std::string> argNames =
      argumentNames(entry, program.haveAsmState ? &program.asmState : nullptr);
  if (!inputs.empty() && !ringShares) {
    progress.show("reading inputs");
    args = readInputs(entry, argNames, name, inputs, strictInputs);
  }
  auto atMostOnePerResult = [&](size_t count, const char *flag) {
    if (count > entry.getNumResults())
      fail(2, "got " + llvm::Twine(count) + " " + flag + " files, but '" + name + "' has " +
                  llvm::Twine(entry.getNumResults()) + " result(s)");
  };
  atMostOnePerResult(outputs.size(), "--output");
  atMostOnePerResult(expects.size(), "--expect");
  expected = readExpected(entry, expects, strictInputs);
}

/// The pipelines' options from the flags (a flag not given keeps the
/// pipeline's default).
static rt::JitOptions jitOptions() {
  rt::JitOptions jit;
  jit.keepObject = !dumpObject.empty();
  if (tileQ.getNumOccurrences())
    jit.tileQ = tileQ;
  if (tileK.getNumOccurrences())
    jit.tileK = tileK;
  if (vectorWidthOpt.getNumOccurrences())
    jit.vectorWidth = vectorWidthOpt;
  if (bf16DotOpt.getNumOccurrences())
    jit.bf16Dot = bf16DotOpt;
  if (amxOpt.getNumOccurrences())
    jit.amx = amxOpt;
  jit.emulateAmx = emulateAmxOpt;
  if (prepackLimitOpt.getNumOccurrences())
    jit.prepackLimitMiB = prepackLimitOpt;
  jit.tf32 = tf32Opt;
  jit.threads = numThreads;
  jit.gpuChip = gpuChip;
  jit.gpuFormat = gpuFormat;
  return jit;
}

/// --pipeline=ring, under mpirun: every rank runs this; rank 0 reports.
static int runRingMode(ModuleOp module, func::FuncOp entry, const Pipelines &pipes,
                       std::vector<rt::HostTensor> args, bool ringShares,
                       const rt::JitOptions &jit) {
  if (!expects.empty() || !dumpObject.empty() || pipes.compare == rt::Pipeline::Ring)
    fail(2, "--pipeline=ring takes neither --expect, --dump-object nor "
            "--compare-with=ring (compare with reference or cpu)");
  RingRun run;
  run.file = inputFile;
  run.entry = entry.getSymName().str();
  run.module = module;
  run.entryFn = entry;
  run.inputs = std::move(args);
  if (ringShares)
    run.inputPaths = std::vector<std::string>(inputs.begin(), inputs.end());
  run.random = randomInputs;
  run.seed = seed;
  run.outputs = outputs;
  run.compareWith = pipes.compare;
  run.repeat = repeat;
  run.json = jsonOut;
  run.jit = jit;
  progress.clear();
  return runRing(run);
}

/// Phase 5: compiles `name` through pipeline `p` (--raise applies to
/// --pipeline's run; --compare-with runs the function as written). IR that
/// does not lower is exit 1; everything about the invocation (options,
/// signature, device) is exit 2.
static std::unique_ptr<rt::CompiledFunction>
compileOrExit(Program &program, llvm::StringRef name, rt::Pipeline p, rt::JitOptions options,
              std::optional<std::string> raise) {
  progress.show("compiling through the " + rt::pipelineName(p) + " pipeline");
  SourceMgrDiagnosticHandler handler(program.sourceMgr, program.module->getContext(),
                                     diagnosticStream());
  options.raise = std::move(raise);
  auto fn = rt::CompiledFunction::compile(*program.module, name, p, options);
  if (fn)
    return std::move(*fn);
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

/// Phase 6: the arguments (random ones drawn now that the signature is
/// known) checked against the signature, the shape relations and the
/// value rules; exit 2 naming the first mismatch.
static void bindArguments(const rt::CompiledFunction &fn, ModuleOp module,
                          const std::string &name, std::vector<rt::HostTensor> &args) {
  if (randomInputs)
    args = randomTensors(fn, module, name, seed);
  if (llvm::Error e = fn.checkInputs(args))
    fail(2, name + ": " + errorText(std::move(e)));
  if (llvm::Error e = rt::checkInputShapes(module, name, args))
    fail(2, name + ": " + errorText(std::move(e)));
  if (llvm::Error e = rt::checkInputValues(module, name, args))
    fail(2, name + ": " + errorText(std::move(e)));
}

/// Why the reference lowering would not fit in memory for these arguments:
/// it materialises [B,H,Tq,Tk] scores, about four such buffers live at once
/// (scores, exponentials, probabilities: the "reference extra MiB" column
/// of bench/sdpa/RESULTS.md); nullopt when it fits or cannot be told.
static std::optional<std::string> referenceTooBig(ModuleOp module, const std::string &name,
                                                  const std::vector<rt::HostTensor> &args) {
  constexpr uint64_t kLiveScoreBuffers = 4;
  std::vector<std::vector<int64_t>> argShapes;
  for (const rt::HostTensor &t : args)
    argShapes.push_back(t.shape);
  std::optional<uint64_t> one = rt::referenceScoresBytes(module, name, argShapes);
  std::optional<uint64_t> avail = rt::availableMemoryBytes();
  if (!one || !avail || kLiveScoreBuffers * *one <= *avail)
    return std::nullopt;
  return "the reference lowering needs about " + rt::formatBytes(kLiveScoreBuffers * *one) +
         " (" + std::to_string(kLiveScoreBuffers) + " [B,H,Tq,Tk] f32 buffers of " +
         rt::formatBytes(*one) + ") and " + rt::formatBytes(*avail) +
         " of memory are available";
}

/// A failed call exits: 2 with the size where compiled code could not
/// allocate, else 1.
[[noreturn]] static void exitOnCallError(llvm::Error e) {
  llvm::handleAllErrors(
      std::move(e), [&](const rt::AllocationError &a) { fail(2, a.message()); },
      [&](const llvm::ErrorInfoBase &b) { fail(1, b.message()); });
  fail(1, "call failed");
}

/// Phase 7: the first call, with its memory (peak RSS during it minus RSS
/// before it: inputs and compiled code excluded, the output and any
/// scratch counted); writes the --output files.
static std::vector<rt::HostTensor> firstCall(rt::CompiledFunction &fn,
                                             const std::vector<rt::HostTensor> &args,
                                             RunReport &report) {
  progress.show("running @" + report.entry);
  report.peakReset = resetPeakRss();
  report.rssBeforeRun = currentRssMiB();
  rt::CompiledFunction::CallStats stats;
  auto results = fn.call(args, &stats);
  report.runPeakRss = stats.peakRssAfterKernelMiB >= 0 ? stats.peakRssAfterKernelMiB
                                                       : peakRssOrLifetimeMiB();
  if (!results)
    exitOnCallError(results.takeError());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (llvm::Error e = rt::writeNpy(outputs[i], (*results)[i]))
      fail(2, errorText(std::move(e)));
  return std::move(*results);
}

/// Phase 8: the results against --compare-with's pipeline (skipped, with
/// a note, where the reference lowering would not fit) and against the
/// --expect files.
static void compareResults(Program &program, const rt::JitOptions &jit,
                           const std::vector<rt::HostTensor> &args,
                           const std::vector<rt::HostTensor> &results,
                           const std::vector<rt::HostTensor> &expected, RunReport &report) {
  const std::string &name = report.entry;
  if (report.refPipeline == rt::Pipeline::Reference)
    report.skippedComparison = referenceTooBig(*program.module, name, args);
  if (report.skippedComparison) {
    progress.clear();
    llvm::errs() << "attn-run: skipping --compare-with=reference: " << *report.skippedComparison
                 << "\n";
  }
  if (report.refPipeline && !report.skippedComparison) {
    std::unique_ptr<rt::CompiledFunction> ref =
        compileOrExit(program, name, *report.refPipeline, jit, std::nullopt);
    progress.show("running @" + name + " through the " +
                  rt::pipelineName(*report.refPipeline) + " pipeline");
    auto reference = ref->call(args);
    if (!reference)
      exitOnCallError(reference.takeError());
    progress.show("comparing with " + rt::pipelineName(*report.refPipeline));
    for (size_t i = 0; i < results.size(); ++i)
      report.errors.push_back(compare(results[i], (*reference)[i]));
  }
  std::optional<double> atolGiven, rtolGiven;
  if (atolOpt.getNumOccurrences())
    atolGiven = atolOpt;
  if (rtolOpt.getNumOccurrences())
    rtolGiven = rtolOpt;
  for (auto [i, e] : llvm::enumerate(expected)) {
    progress.show("comparing result #" + llvm::Twine(i) + " with " + expects[i]);
    report.checks.push_back(checkExpected(results[i], e, expects[i], atolGiven, rtolGiven));
  }
  report.expectFailed =
      llvm::any_of(report.checks, [](const ExpectCheck &c) { return !c.ok(); });
}

/// Phase 9: --repeat timed calls (and with --min-seconds more, until they
/// add up to it: a call of a few milliseconds timed 5 times is at the mercy
/// of one burst of a shared machine's load); medians, and GFLOP/s where the
/// flops are known. GPU: the kernels alone too (CUDA events), without the
/// host<->device copies.
static void timeCalls(rt::CompiledFunction &fn, const std::vector<rt::HostTensor> &args,
                      RunReport &report) {
  if (repeat == 0)
    return;
  std::vector<double> ms, kms;
  double timedMs = 0;
  // The outputs of one call are the next call's destinations (written in
  // place by the cpu pipeline, as a caller reusing its buffers would).
  std::vector<rt::HostTensor> out;
  for (unsigned r = 0; r < repeat || timedMs < minSeconds * 1e3; ++r) {
    progress.count("running", r + 1, std::max<unsigned>(repeat, r + 1));
    rt::CompiledFunction::CallStats st;
    auto t0 = std::chrono::steady_clock::now();
    llvm::Error e = fn.callInto(args, out, &st);
    auto t1 = std::chrono::steady_clock::now();
    if (e)
      exitOnCallError(std::move(e));
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    timedMs += ms.back();
    if (st.gpuKernelMs >= 0)
      kms.push_back(st.gpuKernelMs);
  }
  const std::optional<FlopCount> &flops = report.flops;
  report.repeat = ms.size();
  report.medianMs = median(ms);
  if (flops) {
    report.gflops = flops->full / (*report.medianMs * 1e6);
    report.effGflops = flops->effective / (*report.medianMs * 1e6);
  }
  if (!kms.empty()) {
    report.kernelMs = median(kms);
    if (flops && *report.kernelMs > 0) {
      report.kernelGflops = flops->full / (*report.kernelMs * 1e6);
      report.kernelEffGflops = flops->effective / (*report.kernelMs * 1e6);
    }
  }
}

/// Phase 10: what the pipeline used (its defaults where no option was
/// given), the --expect mismatches on stderr, the report on stdout; the
/// exit status.
static int reportRun(const rt::CompiledFunction &fn, RunReport &report) {
  report.usedTileQ = fn.tiling().tileQ;
  report.usedTileK = fn.tiling().tileK;
  report.usedVectorWidth = fn.tiling().vectorWidth;
  report.usedThreads = threadsUsed(report.pipeline, numThreads);
  report.isa = isaOf(fn.targetFeatures());
  report.verbose = verbose;
  for (auto [i, c] : llvm::enumerate(report.checks))
    if (!c.ok())
      llvm::errs() << "attn-run: result #" << i << " does not match " << c.file << ": "
                   << mismatchText(c) << "\n";
  if (jsonOut)
    printJsonReport(report);
  else
    printTextReport(report);
  return report.expectFailed ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  // Keep freed buffers in the heap so that repeated calls reuse them rather
  // than mapping and faulting in fresh pages for every output (a page fault
  // costs microseconds on a VM: ~20 ms per call for a 3 MiB result).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  parseCommandLine(argc, argv);
  setNotesQuiet(quiet);
  progress.enable(!quiet && isatty(STDERR_FILENO));
  Pipelines pipes = checkOptions();

  DialectRegistry registry;
  rt::registerJitDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  Program program;
  if (!parseProgram(ctx, program))
    return 1;
  func::FuncOp entry = chooseEntry(*program.module);
  std::string name = entry.getSymName().str();
  bool ringShares = ringReadsShares(pipes.run);
  std::vector<rt::HostTensor> args, expected;
  readFiles(program, entry, ringShares, args, expected);
  rt::JitOptions jit = jitOptions();
  if (pipes.run == rt::Pipeline::Ring)
    return runRingMode(*program.module, entry, pipes, std::move(args), ringShares, jit);

  std::unique_ptr<rt::CompiledFunction> fn =
      compileOrExit(program, name, pipes.run, jit,
                    raiseOpt.getNumOccurrences() ? std::optional<std::string>(raiseOpt)
                                                 : std::nullopt);
  // Say once per op what the fused pipeline left to the reference lowering.
  progress.clear();
  for (const std::string &n : fn->unfusedOps())
    llvm::errs() << "attn-run: " << n << "\n";
  if (!dumpObject.empty())
    fn->dumpObject(dumpObject);
  bindArguments(*fn, *program.module, name, args);
  if (pipes.run == rt::Pipeline::Reference)
    if (std::optional<std::string> why = referenceTooBig(*program.module, name, args))
      fail(2, "--pipeline=reference: " + *why);

  RunReport report;
  report.file = inputFile;
  report.entry = name;
  report.pipeline = pipes.run;
  report.refPipeline = pipes.compare;
  report.fn = fn.get();
  report.outputs = outputs;
  std::vector<rt::HostTensor> results = firstCall(*fn, args, report);
  report.results = &results;
  compareResults(program, jit, args, results, expected, report);
  report.flops = countFlops(entry, args);
  timeCalls(*fn, args, report);
  progress.clear();
  return reportRun(*fn, report);
}
