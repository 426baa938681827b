//===- attn-run.cpp - JIT-compile, run, check and time attn functions -----===//
//
//   attn-run FILE.mlir [--entry=NAME] [--pipeline=reference|cpu|gpu|gpu-schedule]
//            [--input=[NAME=]PATH.npy ... | --input=PATH.npz ...]
//            [--random-inputs --seed=N] [--strict-inputs]
//            [--output=PATH.npy ...] [--compare-with=reference]
//            [--expect=PATH.npy ... --atol=A --rtol=R]
//            [--repeat=N] [--json] [--tile-q=N --tile-k=N --num-threads=N]
//            [--dump-object=PATH] [--quiet] [--verbose]
//
// Exit status: 0 success, 1 the IR does not parse, verify or lower, or a
// result does not match its --expect file, 2 bad invocation or bad input
// (one line on stderr).
//
//===----------------------------------------------------------------------===//
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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
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
#include <thread>

#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
namespace rt = ::attn::runtime;
namespace cl = llvm::cl;

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
                                        cl::desc("reference | cpu | gpu | gpu-schedule"), cl::cat(runCategory));
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
// stderr: progress, notes, warnings, errors
//===----------------------------------------------------------------------===//

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
static Progress progress;

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
static DiagnosticStream diagnosticStream;

/// One line on stderr and exit status `code`.
[[noreturn]] static void fail(int code, const llvm::Twine &msg) {
  progress.clear();
  llvm::errs() << "attn-run: " << msg << "\n";
  std::exit(code);
}

static std::vector<std::string> warnings;
static void warn(const llvm::Twine &msg) {
  progress.clear();
  llvm::errs() << "attn-run: warning: " << msg << "\n";
  warnings.push_back(msg.str());
}

/// The input conversion notes (off stderr with --quiet), kept for --json.
static std::vector<std::string> conversionNotes;
static void note(const llvm::Twine &msg) {
  conversionNotes.push_back(msg.str());
  if (quiet)
    return;
  progress.clear();
  llvm::errs() << "attn-run: note: " << msg << "\n";
}

static std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

/// A JSON number, or null for inf and NaN (which JSON cannot hold).
static llvm::json::Value jsonNumber(double d) {
  if (std::isfinite(d))
    return d;
  return nullptr;
}

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
    // An abbreviation ("--pipe") counts as close.
    if (name.size() >= 3 && key.starts_with(name))
      dist = std::min(dist, 1u);
    unsigned allowed = key.size() <= 4 ? 1 : key.size() <= 8 ? 2 : 3;
    if (dist <= allowed && dist < bestDist) {
      bestDist = dist;
      best = ("--" + key + (body.contains('=') ? "=" + value : "")).str();
    }
  }
  return best;
}

/// Parses the command line; a bad one is one line on stderr and exit 2.
static void parseCommandLine(int argc, char **argv) {
  cl::HideUnrelatedOptions(runCategory);
  std::string cliErrors;
  llvm::raw_string_ostream cliErrorStream(cliErrors);
  if (cl::ParseCommandLineOptions(argc, argv,
                                  "attn-run: JIT-compile, run, check and time "
                                  "attn functions\n",
                                  &cliErrorStream))
    return;
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
  if (given(numThreads) && p != rt::Pipeline::Cpu && ref != rt::Pipeline::Cpu)
    warn("--num-threads applies only to --pipeline=cpu, not " +
         rt::pipelineName(p) + "; ignored");
  if (given(seed) && !randomInputs)
    warn("--seed applies only with --random-inputs; ignored");
  if ((given(gpuChip) || given(gpuFormat)) && p != rt::Pipeline::Gpu &&
      ref != rt::Pipeline::Gpu)
    warn(llvm::Twine(given(gpuChip) ? "--gpu-chip" : "--gpu-format") +
         " applies only to --pipeline=gpu, not " + rt::pipelineName(p) + "; ignored");
  if ((given(atolOpt) || given(rtolOpt)) && expects.empty())
    warn(llvm::Twine(given(atolOpt) ? "--atol" : "--rtol") +
         " applies only with --expect; ignored");
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// The dtype an argument or result of this type is exchanged as; nullopt
/// when it has none (the compile step says why).
static std::optional<rt::DType> dtypeOf(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt)
    return std::nullopt;
  Type e = rt.getElementType();
  if (e.isF32())
    return rt::DType::F32;
  if (e.isF16())
    return rt::DType::F16;
  if (e.isInteger(1))
    return rt::DType::Bool;
  return std::nullopt;
}

/// The source names of the entry's arguments (`%q` -> "q"), from the
/// parser's record of the block argument definitions; empty strings where
/// unknown (bytecode input).
static std::vector<std::string> argumentNames(func::FuncOp f, const AsmParserState *state) {
  std::vector<std::string> names(f.getNumArguments());
  if (!state || f.isExternal())
    return names;
  const AsmParserState::BlockDefinition *def = state->getBlockDef(&f.getBody().front());
  if (!def)
    return names;
  for (auto [i, a] : llvm::enumerate(def->arguments)) {
    if (i >= names.size() || !a.loc.isValid())
      break;
    llvm::StringRef text(a.loc.Start.getPointer(),
                         a.loc.End.getPointer() - a.loc.Start.getPointer());
    text.consume_front("%");
    names[i] = text.str();
  }
  return names;
}

/// "argument #1 (k)" / "argument #1".
static std::string argLabel(size_t i, llvm::ArrayRef<std::string> names) {
  std::string s = "argument #" + std::to_string(i);
  if (i < names.size() && !names[i].empty())
    s += " (" + names[i] + ")";
  return s;
}

/// A raw array read from a file (or archive member) and where it goes.
struct BoundInput {
  std::string label; ///< path, or archive:member.npy
  rt::NpyArray array;
};

/// Converts a raw array for a destination of `target`; notes what was
/// converted, or, with --strict-inputs, makes any conversion an error.
static rt::HostTensor convertInput(const BoundInput &in, std::optional<rt::DType> target,
                                   const std::string &destination) {
  std::vector<std::string> applied;
  auto t = rt::toHostTensor(in.array, in.label, target, !strictInputs, &applied);
  if (!t) {
    std::string msg = errorText(t.takeError());
    if (strictInputs) {
      // Would it have been converted without --strict-inputs?
      auto lenient = rt::toHostTensor(in.array, in.label, target, true);
      if (lenient)
        msg += " (--strict-inputs)";
      else
        llvm::consumeError(lenient.takeError());
    }
    fail(2, msg);
  }
  if (!applied.empty())
    note(in.label + ": " + llvm::join(applied, ", ") + " for " + destination);
  return std::move(*t);
}

static rt::NpyArray readArray(const std::string &path) {
  auto a = rt::readNpyArray(path);
  if (!a)
    fail(2, errorText(a.takeError()));
  return std::move(*a);
}

/// Reads the --input files and binds them to the entry's arguments:
/// NAME=PATH and .npz members by name, then plain paths in order to the
/// arguments left. Returns the tensors in argument order (converted to
/// the arguments' dtypes), or, when only plain .npy paths are given, in the
/// order given (the caller checks the count).
static std::vector<rt::HostTensor> readInputs(func::FuncOp entry,
                                              llvm::ArrayRef<std::string> names,
                                              const std::string &fnName) {
  size_t numArgs = entry.getNumArguments();
  auto argumentList = [&] {
    std::string s;
    for (size_t i = 0; i < numArgs; ++i)
      s += (i ? ", " : "") + (names[i].empty() ? "#" + std::to_string(i) : names[i]);
    return s;
  };
  auto argByName = [&](llvm::StringRef name) -> std::optional<size_t> {
    for (size_t i = 0; i < numArgs; ++i)
      if (!names[i].empty() && names[i] == name)
        return i;
    return std::nullopt;
  };
  std::vector<std::optional<BoundInput>> bound(numArgs);
  std::vector<BoundInput> positional;
  bool byName = false;
  auto bind = [&](size_t i, BoundInput in, const std::string &how) {
    if (bound[i])
      fail(2, fnName + ": " + argLabel(i, names) + " is given twice: by " +
                  bound[i]->label + " and by " + how);
    bound[i] = std::move(in);
  };
  for (const std::string &text : inputs) {
    llvm::StringRef value = text;
    std::optional<size_t> target;
    std::string path = text;
    auto [prefix, rest] = value.split('=');
    if (value.contains('=') && !prefix.empty() && !prefix.contains('/')) {
      unsigned index;
      if (std::optional<size_t> i = argByName(prefix))
        target = *i;
      else if (!prefix.getAsInteger(10, index)) {
        if (index >= numArgs)
          fail(2, "--input=" + text + ": '" + fnName + "' has " + llvm::Twine(numArgs) +
                      " argument(s)");
        target = index;
      } else if (!llvm::sys::fs::exists(text)) {
        fail(2, "--input=" + text + ": '" + fnName + "' has no argument named '" +
                    prefix + "' (its arguments: " + argumentList() + ")");
      }
      if (target)
        path = rest.str();
    }
    if (rt::isZipFile(path)) {
      if (target)
        fail(2, "--input=" + text +
                    ": an .npz archive binds its members by name; pass it as --input=" +
                    path);
      auto members = rt::readNpz(path);
      if (!members)
        fail(2, errorText(members.takeError()));
      byName = true;
      for (rt::NpzMember &m : *members) {
        std::optional<size_t> i = argByName(m.name);
        unsigned index;
        llvm::StringRef n = m.name;
        if (!i && n.consume_front("arr_") && !n.getAsInteger(10, index) && index < numArgs)
          i = index; // np.savez(a, b): arr_0, arr_1
        std::string label = path + ":" + m.name + ".npy";
        if (!i)
          fail(2, label + ": '" + fnName + "' has no argument named '" + m.name +
                      "' (its arguments: " + argumentList() + ")");
        bind(*i, BoundInput{label, std::move(m.array)}, label);
      }
      continue;
    }
    BoundInput in{path, readArray(path)};
    if (target) {
      byName = true;
      bind(*target, std::move(in), "--input=" + text);
    } else {
      positional.push_back(std::move(in));
    }
  }

  std::vector<rt::HostTensor> args;
  if (!byName) {
    // Plain paths in order: the count is checked before converting (so
    // that a surplus file is an arity error, not a dtype one).
    if (positional.size() != numArgs)
      fail(2, fnName + ": the function takes " + llvm::Twine(numArgs) + " inputs, got " +
                  llvm::Twine(positional.size()));
    for (auto [i, in] : llvm::enumerate(positional))
      args.push_back(convertInput(in, dtypeOf(entry.getArgumentTypes()[i]), argLabel(i, names)));
    return args;
  }
  // Plain paths fill the arguments that no name bound, in order.
  size_t next = 0;
  for (BoundInput &in : positional) {
    while (next < numArgs && bound[next])
      ++next;
    if (next == numArgs)
      fail(2, fnName + ": the function takes " + llvm::Twine(numArgs) +
                  " inputs, got more (" + in.label + " binds none)");
    bound[next] = std::move(in);
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < numArgs; ++i)
    if (!bound[i])
      missing.push_back(argLabel(i, names));
  if (!missing.empty())
    fail(2, fnName + ": no input for " + llvm::join(missing, ", "));
  for (size_t i = 0; i < numArgs; ++i)
    args.push_back(convertInput(*bound[i], dtypeOf(entry.getArgumentTypes()[i]),
                                argLabel(i, names)));
  return args;
}

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

//===----------------------------------------------------------------------===//
// FLOPs
//===----------------------------------------------------------------------===//

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

/// The (query i, key j) pairs of a Tq x Tk score matrix that a causal mask
/// leaves visible: top_left keeps j <= i, bottom_right keeps
/// j <= i + Tk - Tq; all Tq * Tk without one.
static double visiblePairs(double tq, double tk,
                           std::optional<mlir::attn::CausalKind> causal) {
  if (!causal)
    return tq * tk;
  double shift = *causal == mlir::attn::CausalKind::bottom_right ? tk - tq : 0;
  // Row i sees clamp(i + shift + 1, 0, Tk) keys: sum it in closed form over
  // the rows where it is 0, rising, and Tk.
  auto rowSum = [&](double lo, double hi) { // sum of (i + shift + 1), i in [lo, hi)
    if (hi <= lo)
      return 0.0;
    double a = lo + shift + 1, b = hi - 1 + shift + 1;
    return (a + b) * (hi - lo) / 2;
  };
  double firstVisible = std::clamp(-shift, 0.0, tq);        // rows before see none
  double firstFull = std::clamp(tk - shift - 1, 0.0, tq);   // rows from here see all
  firstFull = std::max(firstFull, firstVisible);
  return rowSum(firstVisible, firstFull) + (tq - firstFull) * tk;
}

struct FlopCount {
  double full = 0;      ///< every (i, j) pair of every attention
  double effective = 0; ///< the pairs a causal mask leaves visible
};

/// FLOPs of one call: 2·B·H·Tq·Tk·(D + Dv) per sdpa/mha attention (4·B·H·
/// Tq·Tk·D when Dv = D), 2·B·T·In·Out per projection, 2·B·H·Tq·Tk·D per
/// scores/weighted_sum. The effective count takes, for a causal sdpa or
/// mha, only the visible pairs. nullopt when a dim is unknown.
static std::optional<FlopCount> countFlops(func::FuncOp fn,
                                           llvm::ArrayRef<rt::HostTensor> args) {
  FlopCount total;
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
  auto both = [&](double f) {
    total.full += f;
    total.effective += f;
  };
  auto attention = [&](std::optional<double> b, std::optional<double> h,
                       std::optional<double> tq, std::optional<double> tk,
                       std::optional<double> d, std::optional<double> dv,
                       std::optional<mlir::attn::CausalKind> causal) {
    double perPair = 2 * prod({b, h, d}) + 2 * prod({b, h, dv});
    double pairs = prod({tq, tk});
    if (!known)
      return;
    total.full += perPair * pairs;
    total.effective += perPair * visiblePairs(*tq, *tk, causal);
  };
  fn.walk([&](Operation *op) {
    if (auto s = dyn_cast<mlir::attn::SdpaOp>(op)) {
      Value q = s.getQuery(), k = s.getKey(), v = s.getValue();
      attention(dimValue(q, 0, args), dimValue(q, 1, args), dimValue(q, 2, args),
                dimValue(k, 2, args), dimValue(q, 3, args), dimValue(v, 3, args),
                s.getCausal());
    } else if (auto m = dyn_cast<mlir::attn::MhaOp>(op)) {
      Value xq = m.getQueryInput(), xkv = m.getKvInput();
      bool outIn = m.getLayout() == mlir::attn::WeightLayout::out_in;
      auto out = [&](Value w) { return dimValue(w, outIn ? 0 : 1, args); };
      auto in = [&](Value w) { return dimValue(w, outIn ? 1 : 0, args); };
      auto b = dimValue(xq, 0, args), tq = dimValue(xq, 1, args),
           tk = dimValue(xkv, 1, args);
      double h = m.getNumHeads();
      double hkv = m.getNumKvHeads().value_or(m.getNumHeads());
      // Wq has H·D outputs, Wv Hkv·Dv.
      auto perHead = [&](std::optional<double> width, double heads) -> std::optional<double> {
        if (!width)
          return std::nullopt;
        return *width / heads;
      };
      both(2 * prod({b, tq, in(m.getWq()), out(m.getWq())}));
      both(2 * prod({b, tk, in(m.getWk()), out(m.getWk())}));
      both(2 * prod({b, tk, in(m.getWv()), out(m.getWv())}));
      both(2 * prod({b, tq, in(m.getWo()), out(m.getWo())}));
      attention(b, h, tq, tk, perHead(out(m.getWq()), h), perHead(out(m.getWv()), hkv),
                m.getCausal());
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
      both(2 * lead * prod({dimValue(p.getWeight(), outIn ? 0 : 1, args)}));
    } else if (isa<mlir::attn::ScoresOp, mlir::attn::WeightedSumOp>(op)) {
      Value a = op->getOperand(0), r = op->getResult(0);
      auto rt4 = cast<RankedTensorType>(r.getType());
      // scores: 2·B·H·Tq·Tk·D; weighted_sum: 2·B·H·Tq·Dv·Tk.
      std::optional<double> inner = dimValue(a, 3, args); // D or Tk
      std::optional<double> last =
          rt4.isDynamicDim(3) ? std::nullopt : std::optional<double>(rt4.getDimSize(3));
      both(2 * prod({dimValue(a, 0, args), dimValue(a, 1, args), dimValue(a, 2, args),
                     inner, last}));
    }
  });
  if (!known)
    return std::nullopt;
  return total;
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
// Comparisons
//===----------------------------------------------------------------------===//

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

/// Default tolerances per result dtype.
static std::pair<double, double> defaultTolerances(rt::DType d) {
  switch (d) {
  case rt::DType::F32:
    return {1e-5, 1e-4};
  case rt::DType::F16:
    return {1e-3, 1e-3};
  case rt::DType::Bool:
    return {0, 0};
  }
  return {0, 0};
}

/// allclose: |got - expected| <= atol + rtol * |expected| everywhere; NaN
/// matches only NaN, an infinity only the same infinity. The worst element
/// is the one furthest beyond its allowance.
static ExpectCheck checkExpected(const rt::HostTensor &got, const rt::HostTensor &expected,
                                 const std::string &file) {
  ExpectCheck c;
  c.file = file;
  auto [atol, rtol] = defaultTolerances(got.dtype);
  c.atol = atolOpt.getNumOccurrences() ? atolOpt : atol;
  c.rtol = rtolOpt.getNumOccurrences() ? rtolOpt : rtol;
  if (got.shape != expected.shape) {
    c.shapeMismatch = "the result is " + rt::TensorSpec{got.dtype, got.shape}.str() + ", " +
                      file + " holds " +
                      rt::TensorSpec{expected.dtype, expected.shape}.str();
    return c;
  }
  c.stats = compare(got, expected);
  c.numel = got.numel();
  double worstExcess = -INFINITY;
  for (int64_t i = 0; i < c.numel; ++i) {
    double x = got.getAsFloat(i), y = expected.getAsFloat(i);
    double excess;
    if (std::isnan(x) || std::isnan(y))
      excess = std::isnan(x) && std::isnan(y) ? -INFINITY : INFINITY;
    else if (std::isinf(x) || std::isinf(y))
      excess = x == y ? -INFINITY : INFINITY;
    else
      excess = std::fabs(x - y) - (c.atol + c.rtol * std::fabs(y));
    if (excess <= 0)
      continue;
    ++c.mismatches;
    if (excess > worstExcess) {
      worstExcess = excess;
      c.worst = i, c.worstGot = x, c.worstExpected = y;
    }
  }
  if (c.worst >= 0) {
    c.worstIndex.assign(got.shape.size(), 0);
    int64_t rem = c.worst;
    for (size_t k = got.shape.size(); k-- > 0;) {
      c.worstIndex[k] = got.shape[k] ? rem % got.shape[k] : 0;
      rem = got.shape[k] ? rem / got.shape[k] : 0;
    }
  }
  return c;
}

/// %.6g.
static std::string num(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return buf;
}

static std::string indexStr(llvm::ArrayRef<int64_t> idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i)
    s += (i ? "," : "") + std::to_string(idx[i]);
  return s + "]";
}

/// "12 of 4096 elements differ by more than atol + rtol * |expected| (atol
/// 1e-05, rtol 0.0001); the worst at [0,1,2,3]: got 0.51, expected 0.5".
static std::string mismatchText(const ExpectCheck &c) {
  if (!c.shapeMismatch.empty())
    return c.shapeMismatch;
  return std::to_string(c.mismatches) + " of " + std::to_string(c.numel) +
         " elements differ by more than atol + rtol * |expected| (atol " + num(c.atol) +
         ", rtol " + num(c.rtol) + "); the worst at " + indexStr(c.worstIndex) + ": got " +
         num(c.worstGot) + ", expected " + num(c.worstExpected);
}

//===----------------------------------------------------------------------===//
// What the pipeline used
//===----------------------------------------------------------------------===//

/// The OpenMP team size the compiled code's parallel loops get (the
/// OpenMP runtime is loaded into this process by the JIT): --num-threads
/// when given for cpu, else omp_get_max_threads() (OMP_NUM_THREADS or one
/// per available core). 1 for the reference pipeline; nullopt for gpu.
static std::optional<int64_t> threadsUsed(rt::Pipeline p) {
  if (p == rt::Pipeline::Reference)
    return 1;
  if (p == rt::Pipeline::Gpu)
    return std::nullopt;
  if (p == rt::Pipeline::Cpu && numThreads > 0)
    return numThreads;
  using MaxThreads = int (*)();
  if (auto f = reinterpret_cast<MaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads")))
    return f();
  if (const char *env = std::getenv("OMP_NUM_THREADS")) {
    int64_t n;
    if (!llvm::StringRef(env).split(',').first.trim().getAsInteger(10, n) && n > 0)
      return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

/// The widest vector ISA the target features enable.
static std::string isaOf(llvm::StringRef features) {
  llvm::SmallVector<llvm::StringRef> list;
  features.split(list, ',');
  auto has = [&](llvm::StringRef f) { return llvm::is_contained(list, ("+" + f).str()); };
  for (const char *isa : {"avx512f", "avx2", "avx", "sse4.2", "sse2", "sve2", "sve", "neon"})
    if (has(isa))
      return llvm::StringRef(isa) == "avx512f" ? "avx512" : isa;
  return "generic";
}

/// The enabled features that matter to the compiled kernels (vector width,
/// FMA, half and bfloat16 conversions), in a fixed order.
static std::string shortFeatures(llvm::StringRef features) {
  llvm::SmallVector<llvm::StringRef> list;
  features.split(list, ',');
  std::vector<std::string> kept;
  for (const char *f : {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512vl",
                        "avx512bw", "avx512dq", "avx512fp16", "avx512bf16", "neon",
                        "fullfp16", "bf16", "sve", "sve2"})
    if (llvm::is_contained(list, ("+" + llvm::StringRef(f)).str()))
      kept.push_back(("+" + llvm::StringRef(f)).str());
  return llvm::join(kept, ",");
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
  progress.enable(!quiet && isatty(STDERR_FILENO));
  if (numThreads < 0)
    fail(2, "--num-threads must be 0 (one per core) or more, got " + llvm::Twine(numThreads));
  for (auto [opt, value] : {std::pair<cl::opt<double> *, const char *>{&atolOpt, "--atol"},
                            {&rtolOpt, "--rtol"}})
    if (opt->getNumOccurrences() && !(*opt >= 0 && std::isfinite(*opt)))
      fail(2, llvm::Twine(value) + " must be a finite number >= 0, got " + num(*opt));
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
  warnInapplicable(*pipeline, refPipeline);

  // Read the program, keeping the parser's record of the source names of
  // block arguments (func.func @f(%q: ...) -> "q") for --input=q=PATH.
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
  AsmParserState asmState;
  bool haveAsmState = false;
  {
    progress.show("parsing " + inputFile);
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagnosticStream);
    const llvm::MemoryBuffer *main = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
    if (isBytecode(main->getMemBufferRef())) {
      module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
    } else {
      ParserConfig config(&ctx);
      Block block;
      if (succeeded(parseAsmSourceFile(sourceMgr, &block, config, &asmState))) {
        module = detail::constructContainerOpForParserIfNecessary<ModuleOp>(
            &block, &ctx, FileLineColLoc::get(&ctx, main->getBufferIdentifier(), 0, 0));
        haveAsmState = true;
      }
    }
    if (!module) {
      progress.clear();
      return 1; // the diagnostics are printed
    }
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
  std::vector<std::string> argNames =
      argumentNames(entry, haveAsmState ? &asmState : nullptr);

  // Load inputs (and --expect files) before compiling so bad files fail
  // fast.
  std::vector<rt::HostTensor> args;
  if (!inputs.empty()) {
    progress.show("reading inputs");
    args = readInputs(entry, argNames, name);
  }
  if (outputs.size() > entry.getNumResults())
    fail(2, "got " + llvm::Twine(outputs.size()) + " --output files, but '" + name +
                "' has " + llvm::Twine(entry.getNumResults()) + " result(s)");
  if (expects.size() > entry.getNumResults())
    fail(2, "got " + llvm::Twine(expects.size()) + " --expect files, but '" + name +
                "' has " + llvm::Twine(entry.getNumResults()) + " result(s)");
  std::vector<rt::HostTensor> expected;
  for (auto [i, path] : llvm::enumerate(expects)) {
    if (rt::isZipFile(path))
      fail(2, "--expect=" + path + ": an .npz archive; --expect takes one .npy per result");
    BoundInput in{path, readArray(path)};
    expected.push_back(convertInput(in, dtypeOf(entry.getResultTypes()[i]),
                                    "result #" + std::to_string(i)));
  }

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
    progress.show("compiling through the " + rt::pipelineName(p) + " pipeline");
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagnosticStream);
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
  progress.clear();
  for (const std::string &n : fn->unfusedOps())
    llvm::errs() << "attn-run: " << n << "\n";
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
  progress.show("running @" + name);
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
  if (skippedComparison) {
    progress.clear();
    llvm::errs() << "attn-run: skipping --compare-with=reference: " << *skippedComparison
                 << "\n";
  }
  if (refPipeline && !skippedComparison) {
    std::unique_ptr<rt::CompiledFunction> ref = compiled(*refPipeline);
    progress.show("running @" + name + " through the " + rt::pipelineName(*refPipeline) +
                  " pipeline");
    auto reference = ref->call(args);
    if (!reference)
      callFailed(reference.takeError());
    progress.show("comparing with " + rt::pipelineName(*refPipeline));
    for (size_t i = 0; i < results->size(); ++i)
      errors.push_back(compare((*results)[i], (*reference)[i]));
  }
  std::vector<ExpectCheck> checks;
  for (auto [i, e] : llvm::enumerate(expected)) {
    progress.show("comparing result #" + llvm::Twine(i) + " with " + expects[i]);
    checks.push_back(checkExpected((*results)[i], e, expects[i]));
  }

  std::optional<double> medianMs, gflops, effGflops, kernelMs, kernelGflops,
      kernelEffGflops;
  std::optional<FlopCount> flops = countFlops(entry, args);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  if (repeat > 0) {
    std::vector<double> ms, kms;
    for (unsigned r = 0; r < repeat; ++r) {
      progress.count("running", r + 1, repeat);
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
    if (flops) {
      gflops = flops->full / (*medianMs * 1e6);
      effGflops = flops->effective / (*medianMs * 1e6);
    }
    // GPU: the kernels alone (CUDA events), without the host<->device copies.
    if (!kms.empty()) {
      kernelMs = median(kms);
      if (flops && *kernelMs > 0) {
        kernelGflops = flops->full / (*kernelMs * 1e6);
        kernelEffGflops = flops->effective / (*kernelMs * 1e6);
      }
    }
  }
  progress.clear();

  // What the pipeline used: its defaults where no option was given.
  std::optional<int64_t> usedTileQ = fn->tiling().tileQ, usedTileK = fn->tiling().tileK,
                         usedVectorWidth = fn->tiling().vectorWidth;
  std::optional<int64_t> usedThreads = threadsUsed(*pipeline);
  std::string isa = isaOf(fn->targetFeatures());
  bool expectFailed = llvm::any_of(checks, [](const ExpectCheck &c) { return !c.ok(); });
  for (auto [i, c] : llvm::enumerate(checks))
    if (!c.ok())
      llvm::errs() << "attn-run: result #" << i << " does not match " << c.file << ": "
                   << mismatchText(c) << "\n";
  int status = expectFailed ? 1 : 0;

  if (jsonOut) {
    auto optInt = [](std::optional<int64_t> v) {
      return v ? llvm::json::Value(*v) : llvm::json::Value(nullptr);
    };
    llvm::json::Object obj{{"file", inputFile},
                           {"entry", name},
                           {"pipeline", rt::pipelineName(*pipeline)},
                           {"cpu", fn->targetCpu()},
                           {"cpu_features", shortFeatures(fn->targetFeatures())},
                           {"isa", isa},
                           {"threads", optInt(usedThreads)},
                           {"tile_q", optInt(usedTileQ)},
                           {"tile_k", optInt(usedTileK)}};
    if (usedVectorWidth)
      obj["vector_width"] = *usedVectorWidth;
    if (verbose)
      obj["cpu_features_all"] = fn->targetFeatures();
    llvm::json::Array outs;
    for (auto &t : *results)
      outs.push_back(llvm::json::Object{
          {"dtype", rt::dtypeName(t.dtype)},
          {"shape", llvm::json::Array(llvm::ArrayRef<int64_t>(t.shape))}});
    obj["outputs"] = std::move(outs);
    obj["rss_before_run_mib"] = rssBeforeRun;
    obj["run_peak_rss_mib"] = runPeakRss;
    obj["run_peak_rss_is_per_call"] = peakReset;
    if (flops) {
      obj["flops"] = flops->full;
      obj["effective_flops"] = flops->effective;
    }
    if (medianMs) {
      obj["median_ms"] = *medianMs;
      obj["repeat"] = static_cast<int64_t>(repeat);
      obj["gflops"] = gflops ? llvm::json::Value(*gflops) : llvm::json::Value(nullptr);
      obj["effective_gflops"] =
          effGflops ? llvm::json::Value(*effGflops) : llvm::json::Value(nullptr);
    }
    if (kernelMs) {
      obj["gpu_kernel_median_ms"] = *kernelMs;
      obj["gpu_kernel_gflops"] =
          kernelGflops ? llvm::json::Value(*kernelGflops) : llvm::json::Value(nullptr);
      obj["gpu_kernel_effective_gflops"] =
          kernelEffGflops ? llvm::json::Value(*kernelEffGflops) : llvm::json::Value(nullptr);
    }
    if (!errors.empty()) {
      double a = 0, r = 0;
      for (auto &e : errors) {
        a = std::max(a, e.maxAbs);
        r = std::max(r, e.maxRel);
      }
      obj["compare_with"] = rt::pipelineName(*refPipeline);
      obj["max_abs_error"] = jsonNumber(a);
      obj["max_rel_error"] = jsonNumber(r);
    }
    if (!errors.empty() || !checks.empty()) {
      // One entry per result: its errors against --compare-with and its
      // --expect file, each where given.
      llvm::json::Array perResult;
      for (size_t i = 0; i < results->size(); ++i) {
        llvm::json::Object entry{{"result", static_cast<int64_t>(i)}};
        if (i < errors.size())
          entry["compare_with"] = llvm::json::Object{
              {"pipeline", rt::pipelineName(*refPipeline)},
              {"max_abs_error", jsonNumber(errors[i].maxAbs)},
              {"max_rel_error", jsonNumber(errors[i].maxRel)}};
        if (i < checks.size()) {
          const ExpectCheck &c = checks[i];
          llvm::json::Object x{{"file", c.file},
                               {"ok", c.ok()},
                               {"atol", c.atol},
                               {"rtol", c.rtol}};
          if (!c.shapeMismatch.empty()) {
            x["shape_mismatch"] = c.shapeMismatch;
          } else {
            x["max_abs_error"] = jsonNumber(c.stats.maxAbs);
            x["max_rel_error"] = jsonNumber(c.stats.maxRel);
            x["mismatches"] = c.mismatches;
            x["numel"] = c.numel;
            if (c.worst >= 0)
              x["worst"] = llvm::json::Object{
                  {"index", llvm::json::Array(llvm::ArrayRef<int64_t>(c.worstIndex))},
                  {"got", jsonNumber(c.worstGot)},
                  {"expected", jsonNumber(c.worstExpected)}};
          }
          entry["expect"] = std::move(x);
        }
        perResult.push_back(std::move(entry));
      }
      obj["result_errors"] = std::move(perResult);
    }
    if (!checks.empty())
      obj["expect_ok"] = !expectFailed;
    if (skippedComparison)
      obj["comparison_skipped"] = *skippedComparison;
    llvm::json::Array unfused;
    for (const std::string &n : fn->unfusedOps())
      unfused.push_back(n);
    obj["unfused"] = std::move(unfused);
    llvm::json::Array conversions;
    for (const std::string &n : conversionNotes)
      conversions.push_back(n);
    obj["conversions"] = std::move(conversions);
    llvm::json::Array warned;
    for (const std::string &w : warnings)
      warned.push_back(w);
    obj["warnings"] = std::move(warned);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(obj))) << "\n";
    return status;
  }

  llvm::outs() << "attn-run: @" << name << " from " << inputFile << " through the "
               << rt::pipelineName(*pipeline) << " pipeline (JIT for "
               << fn->targetCpu() << ")\n";
  if (verbose) {
    llvm::outs() << "isa: " << isa << "; threads: "
                 << (usedThreads ? std::to_string(*usedThreads) : "n/a");
    if (usedTileQ)
      llvm::outs() << "; tile-q " << *usedTileQ << ", tile-k " << *usedTileK;
    if (usedVectorWidth)
      llvm::outs() << ", vector-width " << *usedVectorWidth;
    llvm::outs() << "\ncpu features: " << fn->targetFeatures() << "\n";
  }
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
  for (auto [i, c] : llvm::enumerate(checks)) {
    llvm::outs() << "result #" << i << " vs " << c.file << ": ";
    if (!c.shapeMismatch.empty()) {
      llvm::outs() << "MISMATCH: " << c.shapeMismatch << "\n";
      continue;
    }
    llvm::outs() << llvm::formatv("max_abs_error {0:e} max_rel_error {1:e}, ", c.stats.maxAbs,
                                  c.stats.maxRel);
    if (c.ok())
      llvm::outs() << "ok (atol " << num(c.atol) << ", rtol " << num(c.rtol) << ")\n";
    else
      llvm::outs() << "MISMATCH: " << mismatchText(c) << "\n";
  }
  if (medianMs) {
    llvm::outs() << llvm::formatv("time: median {0:f3} ms over {1} runs", *medianMs,
                                  unsigned(repeat));
    if (gflops)
      llvm::outs() << llvm::formatv(", {0:f2} GFLOP/s, effective {1:f2} GFLOP/s", *gflops,
                                    *effGflops);
    llvm::outs() << "\n";
    if (kernelMs) {
      llvm::outs() << llvm::formatv("gpu kernels: median {0:f3} ms", *kernelMs);
      if (kernelGflops)
        llvm::outs() << llvm::formatv(", {0:f2} TFLOP/s, effective {1:f2} TFLOP/s",
                                      *kernelGflops / 1000, *kernelEffGflops / 1000);
      llvm::outs() << "\n";
    }
  }
  return status;
}
