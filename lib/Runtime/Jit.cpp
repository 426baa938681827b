//===- Jit.cpp - compile an attn function once, call it many times --------===//
#include "attn/Runtime/Jit.h"
#include "attn/Runtime/WarpEmulation.h"
#include "attn/Runtime/Mpi.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/GPU/PtxDialect.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runtime/CudaRuntime.h"

#include "attn/Runtime/GuardedAlloc.h"
#include "attn/Runtime/MemrefCopy.h"
#include "attn/Runtime/PackedCall.h"

#include "Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

using namespace mlir;

namespace attn::runtime {

llvm::Error err(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

char CompileError::ID = 0;

llvm::Error compileError(CompileErrorKind kind, const llvm::Twine &msg) {
  return llvm::make_error<CompileError>(kind, msg.str());
}

/// A JIT step's own error, as a compile error of `kind`.
static llvm::Error asCompileError(CompileErrorKind kind, llvm::Error e) {
  return compileError(kind, llvm::toString(std::move(e)));
}

void registerJitDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<mlir::attn::AttnDialect, mlir::attn::ptx::PtxDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  // GPU: gpu.binary / gpu.launch_func on the host, NVVM in the kernel.
  registerAllToLLVMIRTranslations(registry);
}

llvm::StringRef pipelineName(Pipeline p) {
  switch (p) {
  case Pipeline::Reference:
    return "reference";
  case Pipeline::Cpu:
    return "cpu";
  case Pipeline::Gpu:
    return "gpu";
  case Pipeline::GpuSchedule:
    return "gpu-schedule";
  case Pipeline::Ring:
    return "ring";
  }
  return "?";
}

llvm::Expected<Pipeline> parsePipeline(llvm::StringRef name) {
  if (name == "reference")
    return Pipeline::Reference;
  if (name == "cpu")
    return Pipeline::Cpu;
  if (name == "gpu")
    return Pipeline::Gpu;
  if (name == "gpu-schedule")
    return Pipeline::GpuSchedule;
  if (name == "ring")
    return Pipeline::Ring;
  return err("unknown pipeline '" + name +
             "' (expected reference, cpu, gpu, gpu-schedule or ring)");
}

llvm::Expected<std::string> entryFunctionName(ModuleOp module,
                                              llvm::StringRef requested) {
  if (!requested.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(requested);
    if (!fn || fn.isExternal())
      return err("no function named '" + requested + "'");
    return requested.str();
  }
  for (auto f : module.getOps<func::FuncOp>())
    if (f.isPublic() && !f.isExternal())
      return f.getSymName().str();
  return err("no public function");
}

std::string TensorSpec::str() const {
  std::string s = dtypeName(dtype).str() + "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ",";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

CompiledFunction::~CompiledFunction() = default;

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, llvm::StringRef entry,
                          Pipeline pipeline, const JitOptions &options) {
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return compileError(CompileErrorKind::NoFunction,
                        "no function named '" + entry + "' with a body");
  std::unique_ptr<CompiledFunction> cf(new CompiledFunction());
  // A ring is sharded first: its signature is one rank's share.
  OwningOpRef<ModuleOp> sharded;
  if (pipeline == Pipeline::Ring) {
    auto s = shardRing(module, options.ranks);
    if (!s)
      return s.takeError();
    sharded = std::move(*s);
    module = *sharded;
    fn = module.lookupSymbol<func::FuncOp>(entry);
  }
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    cf->argShard.push_back(shardSpecOf(fn.getArgAttrDict(i)));
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    cf->resultShard.push_back(shardSpecOf(fn.getResultAttrDict(i)));
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    auto s = specOf(t, "argument #" + llvm::Twine(i) + " of '" + entry + "'");
    if (!s)
      return asCompileError(CompileErrorKind::UnsupportedSignature, s.takeError());
    cf->args.push_back(*s);
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto s = specOf(t, "result #" + llvm::Twine(i) + " of '" + entry + "'");
    if (!s)
      return asCompileError(CompileErrorKind::UnsupportedSignature, s.takeError());
    cf->results.push_back(*s);
  }
  if (pipeline == Pipeline::Ring) {
    std::string why;
    if (!::attn::mpi::available(why))
      return compileError(CompileErrorKind::NoDevice, why);
  }
  std::string chip = options.gpuChip;
  if (pipeline == Pipeline::Gpu) {
    std::string why = cudaUnavailableReason();
    if (!why.empty())
      return compileError(CompileErrorKind::NoDevice,
                          "pipeline 'gpu' needs an NVIDIA GPU: " + why);
    if (chip.empty())
      chip = cudaDeviceChip();
  }

  // The cpu kernel's thread count is decided here, for this machine, and
  // compiled in: left to the OpenMP runtime's default, it is whatever the
  // process last set through omp_set_num_threads, and a library that binds
  // its omp_* calls to the runtime the JIT loaded sets it for us (PyTorch
  // imported after a first compile: 1 thread here, bench/NOTES.md).
  JitOptions lowering = options;
  if (pipeline == Pipeline::Cpu)
    lowering.threads = workerThreads(options.threads);
  // Lower a clone; the caller's module stays as it was.
  OwningOpRef<ModuleOp> clone = module.clone();
  // The cpu pipeline's entry takes a destination per result (the caller's
  // output, written without a copy: callContiguous).
  bool destinations = pipeline == Pipeline::Cpu;
  if (llvm::Error e = lowerToLLVMDialect(*clone, entry, pipeline, lowering, chip,
                                         hostCpuTarget(), cf->usedTiling, cf->unfused,
                                         destinations))
    return e;
  cf->resultDestinations = destinations;

  initializeNativeTarget();
  // Compile for this machine's CPU and its features (AVX2/FMA here), not a
  // generic x86-64.
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return asCompileError(CompileErrorKind::JitFailed, jtmb.takeError());
  llvm::Expected<unsigned> optLevel = cappedOptLevel(options.optLevel);
  if (!optLevel)
    return asCompileError(CompileErrorKind::BadOption, optLevel.takeError());
  llvm::CodeGenOptLevel cgLevel = codeGenOptLevel(*optLevel);
  jtmb->setCodeGenOptLevel(cgLevel);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return asCompileError(CompileErrorKind::JitFailed, tm.takeError());
  cf->cpu = (*tm)->getTargetCPU().str();
  cf->features = (*tm)->getTargetFeatureString().str();
  llvm::TargetMachine *machine = tm->get();
  auto transformer = [level = *optLevel, machine](llvm::Module *m) -> llvm::Error {
    return optimizeLLVMModule(*m, level, machine);
  };
  ExecutionEngineOptions eo;
  eo.transformer = transformer;
  eo.jitCodeGenOptLevel = cgLevel;
  eo.enableObjectDump = options.keepObject;
  eo.enableGDBNotificationListener = false;
  // ATTN_PERF_JIT set: LLVM's perf listener writes a jitdump of the
  // compiled code, so that `perf inject --jit` names and annotates it
  // (docs/attn-run.md, "Profiling the compiled code").
  eo.enablePerfNotificationListener = std::getenv("ATTN_PERF_JIT") != nullptr;
  // The CPU pipeline's threads are OpenMP's.
  llvm::StringRef libs[] = {ATTN_OPENMP_LIBRARY};
  if (pipeline == Pipeline::Cpu || pipeline == Pipeline::GpuSchedule ||
      pipeline == Pipeline::Ring)
    eo.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*clone, eo, std::move(*tm));
  if (!engine)
    return asCompileError(CompileErrorKind::JitFailed, engine.takeError());
  cf->engine = std::move(*engine);
  cf->pipeline = pipeline;
  cf->deviceResident = options.deviceResident;
  // The compiled code allocates through the guarded allocator (a failed
  // allocation becomes an AllocationError), and on the GPU path calls our
  // mgpu* runtime.
  cf->engine->registerSymbols([pipeline](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](llvm::StringRef name, void *addr) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(addr),
                             llvm::JITSymbolFlags::Exported};
    };
    for (auto [name, addr] : guardedAllocSymbols())
      add(name, addr);
    // Strided copies of generic IR (an insert_slice, a concat).
    for (auto [name, addr] : ::attn::runtime::memrefCopySymbols())
      add(name, addr);
    if (pipeline == Pipeline::Gpu)
      for (auto [name, addr] : cudaRuntimeSymbols())
        add(name, addr);
    if (pipeline == Pipeline::GpuSchedule)
      for (auto [name, addr] : warpEmulationSymbols())
        add(name, addr);
    if (pipeline == Pipeline::Ring)
      for (auto [name, addr] : ::attn::mpi::runtimeSymbols())
        add(name, addr);
    return map;
  });
  if (pipeline == Pipeline::Gpu) {
    // The module's constructors (kernel loading).
    takeCudaError();
    cf->engine->initialize();
    std::string e = takeCudaError();
    if (!e.empty())
      return compileError(CompileErrorKind::NoDevice, "loading the GPU kernels failed: " + e);
  }
  auto packed = cf->engine->lookupPacked(("_mlir_ciface_" + entry).str());
  if (!packed)
    return asCompileError(CompileErrorKind::JitFailed, packed.takeError());
  cf->packed = *packed;
  return cf;
}

void CompiledFunction::dumpObject(llvm::StringRef path) const {
  engine->dumpToObjectFile(path);
}

llvm::Error CompiledFunction::checkInputs(llvm::ArrayRef<HostTensor> inputs) const {
  std::vector<ElementType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor &t : inputs) {
    dtypes.push_back(t.dtype);
    shapes.push_back(t.shape);
  }
  return checkArgs(dtypes, shapes);
}

llvm::Error
CompiledFunction::checkArgs(llvm::ArrayRef<ElementType> dtypes,
                            llvm::ArrayRef<std::vector<int64_t>> shapes) const {
  if (shapes.size() != args.size())
    return err("the function takes " + llvm::Twine(args.size()) +
               " inputs, got " + llvm::Twine(shapes.size()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const TensorSpec &s = args[i];
    TensorSpec got{dtypes[i], shapes[i]};
    if (dtypes[i] != s.dtype)
      return err("input #" + llvm::Twine(i) + ": dtype " + dtypeName(dtypes[i]) +
                 ", expected " + dtypeName(s.dtype) + " (" + s.str() + ")" +
                 (s.dtype == ElementType::F8E4M3 ? "; fp8 is passed as its bytes, a uint8 array"
                                                 : ""));
    if (shapes[i].size() != s.shape.size())
      return err("input #" + llvm::Twine(i) + ": rank " +
                 llvm::Twine(shapes[i].size()) + " " + got.str() +
                 ", expected rank " + llvm::Twine(s.shape.size()) + " " + s.str());
    for (size_t d = 0; d < s.shape.size(); ++d) {
      if (shapes[i][d] < 0)
        return err("input #" + llvm::Twine(i) + ": negative size " +
                   llvm::Twine(shapes[i][d]) + " at dim " + llvm::Twine(d));
      if (s.shape[d] >= 0 && s.shape[d] != shapes[i][d])
        return err("input #" + llvm::Twine(i) + ": shape " + got.str() +
                   " does not match " + s.str() + " at dim " + llvm::Twine(d));
    }
  }
  return llvm::Error::success();
}

char AllocationError::ID = 0;

void AllocationError::log(llvm::raw_ostream &os) const {
  os << "the compiled code could not allocate " << bytes << " bytes ("
     << formatBytes(bytes) << "); the call was abandoned";
}

llvm::Error CompiledFunction::callContiguous(
    llvm::ArrayRef<const void *> inputs,
    llvm::ArrayRef<std::vector<int64_t>> shapes,
    llvm::function_ref<void(size_t, const ResultBuffer &)> sink,
    CallStats *stats, llvm::ArrayRef<ResultDestination> destinations) const {
  if (inputs.size() != shapes.size())
    return err("callContiguous: " + llvm::Twine(inputs.size()) +
               " buffers but " + llvm::Twine(shapes.size()) + " shapes");
  std::vector<ElementType> dtypes;
  for (size_t i = 0; i < inputs.size() && i < args.size(); ++i)
    dtypes.push_back(args[i].dtype);
  dtypes.resize(inputs.size(), ElementType::F32);
  if (llvm::Error e = checkArgs(dtypes, shapes))
    return e;
  std::vector<int64_t> ranks;
  std::vector<size_t> elementSizes;
  for (const TensorSpec &s : results) {
    ranks.push_back(s.shape.size());
    elementSizes.push_back(dtypeSize(s.dtype));
  }
  if (pipeline == Pipeline::Gpu) {
    takeCudaError();
    takeGpuKernelMs();
  }
  // A failed GPU run still returns (meaningless) results that must be freed.
  std::string gpuError;
  auto afterCall = [&] {
    if (stats)
      stats->peakRssAfterKernelMiB = peakRssMiB();
    if (pipeline == Pipeline::Gpu) {
      double ms = takeGpuKernelMs();
      if (stats)
        stats->gpuKernelMs = ms;
      gpuError = takeCudaError();
    }
    return gpuError.empty();
  };
  uint64_t failedBytes = 0;
  // Device-resident results are device buffers: they reach the sink (unless
  // the run failed) and are freed here with cuMemFree, never std::free.
  bool device = pipeline == Pipeline::Gpu && deviceResident;
  // One per result (null where the caller gave none) for an entry that
  // takes them.
  std::vector<ResultDestination> dests;
  if (resultDestinations) {
    dests.resize(results.size());
    for (size_t i = 0; i < destinations.size() && i < dests.size(); ++i)
      if (destinations[i].data && destinations[i].shape.size() == results[i].shape.size())
        dests[i] = destinations[i];
  }
  if (!callPacked(packed, std::vector<const void *>(inputs.begin(), inputs.end()),
                  shapes.vec(), ranks, elementSizes,
                  [&] { return afterCall() || device; },
                  [&](size_t i, const ResultView &r) {
                    if (gpuError.empty())
                      sink(i, ResultBuffer{r.data, llvm::ArrayRef<int64_t>(r.shape, r.rank),
                                           llvm::ArrayRef<int64_t>(r.strides, r.rank)});
                    if (device && r.allocated)
                      cudaFree(r.allocated);
                  },
                  failedBytes, /*freeResults=*/!device,
                  resultDestinations ? &dests : nullptr))
    return llvm::make_error<AllocationError>(failedBytes);
  if (!gpuError.empty())
    return err("the GPU run failed: " + gpuError);
  return llvm::Error::success();
}

void copyStrided(const uint8_t *src, llvm::ArrayRef<int64_t> srcStrides,
                 uint8_t *dst, llvm::ArrayRef<int64_t> dstStrides,
                 llvm::ArrayRef<int64_t> shape, size_t elementSize) {
  copyStridedRaw(src, srcStrides.data(), dst, dstStrides.data(), shape.data(),
                 shape.size(), elementSize);
}

std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  return rowMajorStridesRaw(shape.data(), shape.size());
}

llvm::Expected<std::vector<HostTensor>>
CompiledFunction::call(llvm::ArrayRef<HostTensor> inputs, CallStats *stats) const {
  std::vector<HostTensor> outs;
  if (llvm::Error e = callInto(inputs, outs, stats))
    return std::move(e);
  return outs;
}

llvm::Error CompiledFunction::callInto(llvm::ArrayRef<HostTensor> inputs,
                                       std::vector<HostTensor> &outputs,
                                       CallStats *stats) const {
  if (pipeline == Pipeline::Gpu && deviceResident)
    return err("a device-resident function takes device buffers: use callContiguous");
  if (llvm::Error e = checkInputs(inputs))
    return e;
  std::vector<const void *> data;
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor &t : inputs) {
    data.push_back(t.bytes.data());
    shapes.push_back(t.shape);
  }
  // The outputs of an earlier call are the destinations, where they still
  // have the result's dtype and overlap no input (a caller may pass an
  // output back in).
  outputs.resize(results.size());
  std::vector<ResultDestination> dests(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    HostTensor &o = outputs[i];
    if (o.dtype != results[i].dtype || o.bytes.empty())
      continue;
    const uint8_t *lo = o.bytes.data(), *hi = lo + o.bytes.size();
    bool overlaps = false;
    for (const HostTensor &t : inputs)
      overlaps |= !t.bytes.empty() && t.bytes.data() < hi && lo < t.bytes.data() + t.bytes.size();
    if (!overlaps && o.bytes.size() == size_t(o.numel()) * dtypeSize(o.dtype))
      dests[i] = {o.bytes.data(), o.shape};
  }
  return callContiguous(
      data, shapes,
      [&](size_t i, const ResultBuffer &r) {
        if (dests[i].data && r.data == dests[i].data)
          return; // written in place
        HostTensor &out = outputs[i];
        size_t bytes = 1;
        for (int64_t s : r.shape)
          bytes *= s;
        bytes *= dtypeSize(results[i].dtype);
        std::vector<int64_t> dense = rowMajorStrides(r.shape);
        bool rowMajor = true; // a dim of size 1 may have any stride
        for (size_t d = 0; d < r.shape.size(); ++d)
          rowMajor &= r.shape[d] == 1 || r.strides[d] == dense[d];
        out.dtype = results[i].dtype;
        out.shape = r.shape.vec();
        if (rowMajor) {
          // One copy, without zero-filling the output first (the whole
          // output is written once instead of twice).
          out.bytes.assign(r.data, r.data + bytes);
          return;
        }
        out.bytes.resize(bytes);
        copyStrided(r.data, r.strides, out.bytes.data(), dense, r.shape,
                    dtypeSize(out.dtype));
      },
      stats, dests);
}

} // namespace attn::runtime
