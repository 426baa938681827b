//===- attn-aot.cpp - compile an attn function ahead of time --------------===//
//
//   attn-aot file.mlir [--entry=F] [--pipeline=cpu|reference|gpu]
//            [--name=NAME] [-o DIR] [--target-cpu=host|<llvm cpu>]
//            [--gpu-chips=sm_80,sm_90] [--device-resident] [--tile-q=N --tile-k=N
//            --vector-width=N --num-threads=N --min-work-items=N -O N]
//
// writes DIR/NAME.o (position-independent object: the compiled code and the
// attn_aot_kernel record NAME_kernel) and DIR/NAME.h (the C entry point);
// for the gpu pipeline also DIR/NAME.<chip>.fatbin, the embedded kernels.
// Link the object with libattn_aot (and libomp for the cpu pipeline).
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/Aot.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = attn::runtime;

static cl::OptionCategory aotCategory("attn-aot options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                      cl::Required, cl::cat(aotCategory));
static cl::opt<std::string> entryName("entry",
                                      cl::desc("Function to compile (default: the "
                                               "first public function)"),
                                      cl::cat(aotCategory));
static cl::opt<std::string> pipelineOpt("pipeline", cl::init("cpu"),
                                        cl::desc("cpu | reference | gpu | ring"),
                                        cl::cat(aotCategory));
static cl::opt<std::string> kernelName("name",
                                       cl::desc("C name of the kernel (default: the "
                                                "function's name)"),
                                       cl::cat(aotCategory));
static cl::opt<std::string> outDir("o", cl::init("."), cl::desc("Output directory"),
                                   cl::cat(aotCategory));
static cl::opt<std::string> targetCpu(
    "target-cpu",
    cl::desc("CPU for the host code: host, or an LLVM CPU name such as x86-64-v3 "
             "(default: host for cpu/reference, x86-64 for gpu)"),
    cl::cat(aotCategory));
static cl::list<std::string> gpuChips("gpu-chips", cl::CommaSeparated,
                                      cl::desc("gpu: chips to build (default sm_80,sm_90)"),
                                      cl::cat(aotCategory));
static cl::opt<bool> deviceResident(
    "device-resident",
    cl::desc("gpu: inputs and outputs are CUDA device buffers (no host copies)"),
    cl::cat(aotCategory));
static cl::opt<bool> tf32Opt(
    "tf32",
    cl::desc("gpu: f32 sdpa with head dims 64/128 run on tensor cores with TF32 operands"),
    cl::cat(aotCategory));
static cl::opt<int64_t> tileQ("tile-q", cl::desc("Query rows per tile"), cl::cat(aotCategory));
static cl::opt<int64_t> tileK("tile-k", cl::desc("Keys per tile"), cl::cat(aotCategory));
static cl::opt<int64_t> vectorWidth("vector-width",
                                    cl::desc("cpu: f32 lanes (default: the target's widest)"),
                                    cl::cat(aotCategory));
static cl::opt<bool> bf16Dot("bf16-dot",
                            cl::desc("cpu: bf16 prefill tiles and projections on AVX512-BF16 dot products "
                                     "(default: where the target CPU has them and they are "
                                     "faster, AMD Zen 4 and later)"),
                            cl::cat(aotCategory));
static cl::opt<bool> amxOpt("amx",
                            cl::desc("cpu: bf16 prefill tiles on Intel AMX tiles (tdpbf16ps); "
                                     "off by default, since the program must first ask Linux "
                                     "for the AMX state (docs/cpu.md, \"AMX tiles\"); "
                                     "refused for a target CPU without AMX-BF16"),
                            cl::cat(aotCategory));
static cl::opt<int64_t> numThreads("num-threads",
                                   cl::desc("cpu: worker threads the key split plans for "
                                            "(default: this machine's)"),
                                   cl::cat(aotCategory));
static cl::opt<int64_t> minWorkItems("min-work-items",
                                     cl::desc("cpu: split keys below this many work items"),
                                     cl::cat(aotCategory));
static cl::opt<int64_t> ranks("ranks",
                             cl::desc("ring: the MPI ranks P each attn.ring sdpa is "
                                      "sharded over"),
                             cl::init(1), cl::cat(aotCategory));
static cl::opt<unsigned> optLevel("O", cl::init(3), cl::desc("LLVM optimisation level"),
                                  cl::Prefix, cl::cat(aotCategory));

[[noreturn]] static void fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-aot: " << msg << "\n";
  std::exit(1);
}

static void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    fail(path + ": " + ec.message());
  out.os() << bytes;
  out.keep();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(aotCategory);
  cl::ParseCommandLineOptions(argc, argv, "attn ahead-of-time compiler\n");

  auto pipeline = rt::parsePipeline(pipelineOpt);
  if (!pipeline)
    fail(llvm::toString(pipeline.takeError()));
  DialectRegistry registry;
  rt::registerJitDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (!buffer)
    fail(inputFile + ": cannot open file: " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    return 1;
  auto chosen = rt::entryFunctionName(*module, entryName);
  if (!chosen)
    fail(inputFile + ": " + llvm::toString(chosen.takeError()) +
         (entryName.empty() ? " to compile" : ""));
  auto entry = module->lookupSymbol<func::FuncOp>(*chosen);

  rt::AotOptions options;
  options.name = kernelName.empty() ? entry.getSymName().str() : kernelName.getValue();
  options.targetCpu = targetCpu;
  if (!gpuChips.empty())
    options.gpuChips.assign(gpuChips.begin(), gpuChips.end());
  auto set = [](cl::opt<int64_t> &o, std::optional<int64_t> &slot) {
    if (o.getNumOccurrences())
      slot = o.getValue();
  };
  set(tileQ, options.jit.tileQ);
  set(tileK, options.jit.tileK);
  set(vectorWidth, options.jit.vectorWidth);
  set(minWorkItems, options.jit.minWorkItems);
  if (bf16Dot.getNumOccurrences())
    options.jit.bf16Dot = bf16Dot.getValue();
  if (amxOpt.getNumOccurrences())
    options.jit.amx = amxOpt.getValue();
  options.jit.threads = numThreads;
  options.jit.deviceResident = deviceResident;
  options.jit.tf32 = tf32Opt;
  options.jit.ranks = ranks;
  if (ranks < 1)
    fail("--ranks must be >= 1, got " + llvm::Twine(ranks));
  options.jit.optLevel = optLevel;
  if (options.jit.optLevel > 3)
    fail("-O" + llvm::Twine(options.jit.optLevel) + ": expected 0 to 3");

  auto art = rt::compileAot(*module, entry.getSymName(), *pipeline, options);
  if (!art)
    fail(llvm::toString(art.takeError()));
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    fail(outDir + ": " + ec.message());
  auto path = [&](llvm::StringRef suffix) {
    llvm::SmallString<256> p(outDir);
    llvm::sys::path::append(p, options.name + suffix);
    return std::string(p);
  };
  writeFile(path(".o"), art->object);
  writeFile(path(".h"), art->header);
  for (auto &[chip, bytes] : art->gpuBinaries)
    writeFile(path("." + chip + ".fatbin"), bytes);
  llvm::outs() << "attn-aot: " << path(".o") << " (" << art->object.size()
               << " bytes, host code for " << art->targetCpu << ")";
  for (auto &[chip, bytes] : art->gpuBinaries)
    llvm::outs() << ", " << chip << " " << bytes.size() << " bytes";
  llvm::outs() << ", " << path(".h") << "\n";
  for (const std::string &u : art->unfusedOps)
    llvm::outs() << "attn-aot: remark: " << u << "\n";
  return 0;
}
