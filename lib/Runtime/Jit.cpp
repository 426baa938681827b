//===- Jit.cpp - compile an attn function once, call it many times --------===//
#include "attn/Runtime/Jit.h"
#include "attn/Runtime/WarpEmulation.h"
#include "attn/Runtime/Mpi.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runtime/CudaRuntime.h"

#include "attn/Runtime/GuardedAlloc.h"
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

static std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

static llvm::Error err(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

char CompileError::ID = 0;

static llvm::Error compileError(CompileErrorKind kind, const llvm::Twine &msg) {
  return llvm::make_error<CompileError>(kind, msg.str());
}

/// A JIT step's own error, as a compile error of `kind`.
static llvm::Error asCompileError(CompileErrorKind kind, llvm::Error e) {
  return compileError(kind, llvm::toString(std::move(e)));
}

void registerJitDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<mlir::attn::AttnDialect>();
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

/// The runner's view of a function argument or result type.
llvm::Expected<TensorSpec> specOf(Type t, const llvm::Twine &what) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt)
    return err(what + " has type " + llvm::Twine(typeStr(t)) +
               "; only ranked tensors can be passed");
  TensorSpec spec;
  Type e = rt.getElementType();
  if (e.isF32())
    spec.dtype = DType::F32;
  else if (e.isF16())
    spec.dtype = DType::F16;
  else if (e.isInteger(1))
    spec.dtype = DType::Bool;
  else if (e.isBF16())
    spec.dtype = DType::BF16;
  else if (e.isSignlessInteger(32))
    spec.dtype = DType::I32;
  else if (e.isSignlessInteger(64))
    spec.dtype = DType::I64;
  else
    return err(what + " has element type " + llvm::Twine(typeStr(e)) +
               "; .npy exchange supports f32, f16, bf16 (as float32), i1, i32 and i64");
  for (int64_t d : rt.getShape())
    spec.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return spec;
}

static std::vector<std::vector<int64_t>> shapesOf(llvm::ArrayRef<HostTensor> inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor &t : inputs)
    shapes.push_back(t.shape);
  return shapes;
}

llvm::Error checkInputShapes(ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<HostTensor> inputs) {
  std::vector<std::vector<int64_t>> shapes = shapesOf(inputs);
  return checkInputShapes(module, entry, shapes, nullptr);
}

/// A clone of `entry` with its arguments given `shapes` and every attn
/// result re-inferred in order (InferTypeOpInterface); null when the
/// function cannot be specialised that way (no such function, arity or rank
/// mismatch, or another op whose types depend on the arguments).
static OwningOpRef<func::FuncOp>
specialise(ModuleOp module, llvm::StringRef entry,
           llvm::ArrayRef<std::vector<int64_t>> shapes) {
  auto original = module.lookupSymbol<func::FuncOp>(entry);
  if (!original || original.isExternal() ||
      original.getNumArguments() != shapes.size())
    return nullptr;
  OwningOpRef<func::FuncOp> fn = original.clone();
  Block &body = fn->getBody().front();
  for (auto [arg, shape] : llvm::zip(body.getArguments(), shapes)) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || t.getRank() != (int64_t)shape.size())
      return nullptr;
    auto concrete = RankedTensorType::get(shape, t.getElementType());
    if (concrete != t)
      arg.setType(concrete);
  }
  // Any other op that consumes a retyped value ends the specialisation (its
  // types are not ours to infer).
  for (Operation &op : body.without_terminator()) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    SmallVector<Type, 1> inferred;
    if (infer && isa<mlir::attn::AttnDialect>(op.getDialect()) &&
        succeeded(infer.inferReturnTypes(op.getContext(), op.getLoc(), op.getOperands(),
                                         op.getRawDictionaryAttrs(),
                                         op.getPropertiesStorage(), op.getRegions(),
                                         inferred))) {
      for (auto [result, type] : llvm::zip(op.getResults(), inferred))
        result.setType(type);
      continue;
    }
    bool dependsOnArgs = llvm::any_of(op.getOperands(), [&](Value v) {
      auto ba = dyn_cast<BlockArgument>(v);
      return (ba && ba.getOwner() == &body) ||
             (v.getDefiningOp() && isa<mlir::attn::AttnDialect>(v.getDefiningOp()->getDialect()));
    });
    if (dependsOnArgs)
      return nullptr;
  }
  return fn;
}

llvm::Error checkInputShapes(ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<std::vector<int64_t>> shapes,
                             std::vector<std::vector<int64_t>> *resultShapes) {
  if (resultShapes)
    resultShapes->clear();
  // Arity and rank errors are reported elsewhere.
  OwningOpRef<func::FuncOp> fn = specialise(module, entry, shapes);
  if (!fn)
    return llvm::Error::success();
  Block &body = fn->getBody().front();
  std::string first;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (first.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      first = d.str();
    return success();
  });
  for (Operation &op : body.without_terminator())
    if (isa<mlir::attn::AttnDialect>(op.getDialect()) && failed(verify(&op)))
      return err("the inputs' shapes do not fit together: " + first);
  if (resultShapes) {
    std::vector<std::vector<int64_t>> out;
    for (Value v : body.getTerminator()->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !t.hasStaticShape())
        return llvm::Error::success();
      out.emplace_back(t.getShape().begin(), t.getShape().end());
    }
    *resultShapes = std::move(out);
  }
  return llvm::Error::success();
}

bool inputShapesCheckable(ModuleOp module, llvm::StringRef entry,
                          llvm::ArrayRef<std::vector<int64_t>> shapes) {
  return static_cast<bool>(specialise(module, entry, shapes));
}

std::vector<std::optional<KeyLengthBound>>
keyLengthBounds(ModuleOp module, llvm::StringRef entry,
                llvm::ArrayRef<std::vector<int64_t>> shapes) {
  std::vector<std::optional<KeyLengthBound>> bounds(shapes.size());
  OwningOpRef<func::FuncOp> fn = specialise(module, entry, shapes);
  if (!fn)
    return bounds;
  Block &body = fn->getBody().front();
  auto record = [&](Operation *op, Value lengths, Value keys, int64_t dim) {
    auto arg = dyn_cast_or_null<BlockArgument>(lengths);
    if (!arg || arg.getOwner() != &body)
      return;
    int64_t tk = cast<RankedTensorType>(keys.getType()).getDimSize(dim);
    if (ShapedType::isDynamic(tk))
      return;
    std::optional<KeyLengthBound> &slot = bounds[arg.getArgNumber()];
    KeyLengthBound b{tk, op->getName().getStringRef().str()};
    if (!slot || tk < slot->keyLen)
      slot = b; // the tightest bound when one argument feeds several ops
  };
  fn->walk([&](Operation *op) {
    if (auto sdpa = dyn_cast<mlir::attn::SdpaOp>(op))
      record(op, sdpa.getKeyLengths(), sdpa.getKey(), 2);
    else if (auto mask = dyn_cast<mlir::attn::MaskOp>(op))
      record(op, mask.getKeyLengths(), mask.getInput(), 3);
    else if (auto mha = dyn_cast<mlir::attn::MhaOp>(op))
      record(op, mha.getKeyLengths(), mha.getKvInput(), 1);
  });
  return bounds;
}

std::string KeyLengthBound::check(int64_t element, int64_t len) const {
  if (len >= 0 && len <= keyLen)
    return "";
  return "element " + std::to_string(element) + " is " + std::to_string(len) +
         ", outside [0, Tk = " + std::to_string(keyLen) + "] of '" + op + "'";
}

llvm::Error checkInputValues(ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<HostTensor> inputs) {
  std::vector<std::vector<int64_t>> shapes = shapesOf(inputs);
  std::vector<std::optional<KeyLengthBound>> bounds =
      keyLengthBounds(module, entry, shapes);
  for (auto [i, bound] : llvm::enumerate(bounds)) {
    if (!bound)
      continue;
    const HostTensor &t = inputs[i];
    for (int64_t k = 0, n = t.numel(); k < n; ++k)
      if (std::string problem = bound->check(k, t.getAsInt(k)); !problem.empty())
        return err("key lengths (argument #" + llvm::Twine(i) + ") " + problem);
  }
  return llvm::Error::success();
}

llvm::Error lowerToLLVMDialect(ModuleOp clone, llvm::StringRef entry,
                               Pipeline pipeline, const JitOptions &options,
                               const std::string &chip, const CpuTarget &target,
                               CompiledFunction::Tiling &usedTiling,
                               std::vector<std::string> &unfused) {
  MLIRContext *ctx = clone.getContext();
  clone.lookupSymbol<func::FuncOp>(entry)->setAttr("llvm.emit_c_interface",
                                                   UnitAttr::get(ctx));
  // Only `entry` and what it calls are compiled (and reported on).
  for (auto other : llvm::make_early_inc_range(clone.getOps<func::FuncOp>()))
    if (other.getSymName() != entry &&
        SymbolTable::symbolKnownUseEmpty(other, clone.getOperation()))
      other.erase();
  std::string diags;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      diags += (diags.empty() ? "" : "; ") + d.str();
    if (d.getSeverity() == DiagnosticSeverity::Remark) {
      // convert-attn-to-loops{report-unfused}: "file:line:col: <remark>".
      std::string where;
      if (auto fl = dyn_cast<FileLineColLoc>(d.getLocation()))
        where = (fl.getFilename().strref() + ":" + llvm::Twine(fl.getLine()) + ":" +
                 llvm::Twine(fl.getColumn()) + ": ")
                    .str();
      unfused.push_back(where + d.str());
    }
    return success();
  });
  PassManager pm(ctx);
  // Unset tile sizes keep each pipeline's own default; each fused
  // lowering checks its own rule before anything runs. (A ring was
  // sharded before: the rest of its lowering is the CPU pipeline's.)
  if (pipeline == Pipeline::Cpu || pipeline == Pipeline::Ring) {
    mlir::attn::CpuPipelineOptions cpu;
    if (options.tileQ)
      cpu.tileQ = *options.tileQ;
    if (options.tileK)
      cpu.tileK = *options.tileK;
    // The target's widest vectors, narrowed until tile-k holds a whole
    // number of 2-vector blocks (small tiles keep working).
    int64_t width = target.vectorWidth;
    while (width > 1 && cpu.tileK % (2 * width) != 0)
      width /= 2;
    cpu.vectorWidth = options.vectorWidth.value_or(width);
    usedTiling = {int64_t(cpu.tileQ), int64_t(cpu.tileK), int64_t(cpu.vectorWidth)};
    cpu.threads = options.threads;
    if (options.bf16Dot.value_or(false) && !target.hasBf16Dot)
      return compileError(CompileErrorKind::BadOption,
                          "bf16-dot needs AVX512-BF16 (vdpbf16ps), which the target CPU "
                          "lacks");
    cpu.bf16Dot = options.bf16Dot.value_or(target.prefersBf16Dot);
    usedTiling.bf16Dot = bool(cpu.bf16Dot);
    // Split the keys (flash-decoding) when there are fewer than two work
    // items per thread.
    cpu.minWorkItems = options.minWorkItems.value_or(2 * workerThreads(options.threads));
    cpu.reportUnfused = true;
    std::string bad = mlir::attn::checkAttnToLoopsOptions(
        {cpu.tileQ, cpu.tileK, cpu.vectorWidth, /*reportUnfused=*/true, cpu.minWorkItems});
    if (!bad.empty())
      return compileError(CompileErrorKind::BadOption, bad);
    mlir::attn::buildCpuPipeline(pm, cpu);
  } else if (pipeline == Pipeline::Gpu || pipeline == Pipeline::GpuSchedule) {
    mlir::attn::GpuPipelineOptions gpu;
    if (options.tileQ)
      gpu.tileQ = *options.tileQ;
    if (options.tileK)
      gpu.tileK = *options.tileK;
    usedTiling = {int64_t(gpu.tileQ), int64_t(gpu.tileK), std::nullopt};
    std::string bad = mlir::attn::checkAttnToGpuOptions({gpu.tileQ, gpu.tileK});
    if (!bad.empty())
      return compileError(CompileErrorKind::BadOption, bad);
    gpu.chip = chip.empty() ? "sm_90" : chip;
    gpu.format = options.gpuFormat;
    gpu.deviceResident = options.gpuDeviceResident;
    gpu.tf32 = options.gpuTf32;
    // Which sdpa keep the CUDA-core kernel (with the reason), among the
    // remarks the compiled function reports.
    gpu.reportKernel = true;
    if (pipeline == Pipeline::Gpu)
      mlir::attn::buildGpuPipeline(pm, gpu);
    else
      mlir::attn::buildGpuSchedulePipeline(pm, gpu);
  } else {
    mlir::attn::buildReferencePipeline(pm, mlir::attn::ReferencePipelineOptions());
  }
  if (failed(pm.run(clone)))
    return compileError(CompileErrorKind::LoweringFailed,
                        "lowering through the " + pipelineName(pipeline) +
                            " pipeline failed: " + diags);
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>> shardRing(ModuleOp module, int64_t ranks) {
  OwningOpRef<ModuleOp> sharded = module.clone();
  std::string diags;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      diags += (diags.empty() ? "" : "; ") + d.str();
    return success();
  });
  PassManager pm(module.getContext());
  mlir::attn::AttnShardOptions shard;
  shard.ranks = ranks;
  pm.addPass(mlir::attn::createAttnShard(shard));
  pm.addPass(mlir::attn::createAttnLowerMpi());
  if (failed(pm.run(*sharded)))
    return compileError(CompileErrorKind::LoweringFailed,
                        "lowering through the ring pipeline failed: " + diags);
  return sharded;
}

std::optional<ShardSpec> shardSpecOf(DictionaryAttr attrs) {
  auto info = attrs ? attrs.getAs<DictionaryAttr>("attn.shard") : DictionaryAttr();
  if (!info)
    return std::nullopt;
  auto dim = info.getAs<IntegerAttr>("dim");
  auto layout = info.getAs<mlir::attn::RingLayoutAttr>("layout");
  if (!dim || !layout)
    return std::nullopt;
  ShardSpec spec;
  spec.dim = dim.getInt();
  spec.layout = mlir::attn::stringifyRingLayout(layout.getValue()).str();
  return spec;
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::CodeGenOptLevel codeGenOptLevel(unsigned optLevel) {
  return optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
         : optLevel == 0 ? llvm::CodeGenOptLevel::None
                         : llvm::CodeGenOptLevel::Default;
}

llvm::Error optimizeLLVMModule(llvm::Module &m, unsigned optLevel,
                               llvm::TargetMachine *tm) {
  // Divisions the kernels mark `arcp` (the softcap's tanh) may become a
  // reciprocal estimate plus one Newton step (vrcp14ps: ~2^-28 relative)
  // instead of a divide; divisions without the flag are untouched.
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      f.addFnAttr("reciprocal-estimates", "divf:1,vec-divf:1");
  return makeOptimizingTransformer(optLevel, 0, tm)(&m);
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

  // Lower a clone; the caller's module stays as it was.
  OwningOpRef<ModuleOp> clone = module.clone();
  if (llvm::Error e = lowerToLLVMDialect(*clone, entry, pipeline, options, chip,
                                         hostCpuTarget(), cf->usedTiling, cf->unfused))
    return e;

  initializeNativeTarget();
  // Compile for this machine's CPU and its features (AVX2/FMA here), not a
  // generic x86-64.
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return asCompileError(CompileErrorKind::JitFailed, jtmb.takeError());
  llvm::CodeGenOptLevel cgLevel = codeGenOptLevel(options.optLevel);
  jtmb->setCodeGenOptLevel(cgLevel);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return asCompileError(CompileErrorKind::JitFailed, tm.takeError());
  cf->cpu = (*tm)->getTargetCPU().str();
  cf->features = (*tm)->getTargetFeatureString().str();
  llvm::TargetMachine *machine = tm->get();
  unsigned optLevel = options.optLevel;
  auto transformer = [optLevel, machine](llvm::Module *m) -> llvm::Error {
    return optimizeLLVMModule(*m, optLevel, machine);
  };
  ExecutionEngineOptions eo;
  eo.transformer = transformer;
  eo.jitCodeGenOptLevel = cgLevel;
  eo.enableObjectDump = options.keepObject;
  eo.enableGDBNotificationListener = false;
  eo.enablePerfNotificationListener = false;
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
  cf->deviceResident = options.gpuDeviceResident;
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
  std::vector<DType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor &t : inputs) {
    dtypes.push_back(t.dtype);
    shapes.push_back(t.shape);
  }
  return checkArgs(dtypes, shapes);
}

llvm::Error
CompiledFunction::checkArgs(llvm::ArrayRef<DType> dtypes,
                            llvm::ArrayRef<std::vector<int64_t>> shapes) const {
  if (shapes.size() != args.size())
    return err("the function takes " + llvm::Twine(args.size()) +
               " inputs, got " + llvm::Twine(shapes.size()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const TensorSpec &s = args[i];
    TensorSpec got{dtypes[i], shapes[i]};
    if (dtypes[i] != s.dtype)
      return err("input #" + llvm::Twine(i) + ": dtype " + dtypeName(dtypes[i]) +
                 ", expected " + dtypeName(s.dtype) + " (" + s.str() + ")");
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

int64_t workerThreads(int64_t requested) {
  if (requested > 0)
    return requested;
  // The OpenMP runtime's own answer once it is loaded (the JIT loads it).
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

int64_t hostVectorWidth() { return hostCpuTarget().vectorWidth; }

CpuTarget cpuTargetOf(llvm::StringRef cpu, llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  CpuTarget t;
  bool avx512 = hasFeature("avx512f");
  t.vectorWidth = avx512 ? 16 : 8;
  t.hasBf16Dot = avx512 && hasFeature("avx512bf16");
  t.prefersBf16Dot = t.hasBf16Dot && cpu.starts_with("znver");
  return t;
}

CpuTarget hostCpuTarget() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return cpuTargetOf(llvm::sys::getHostCPUName(), [&](llvm::StringRef f) {
    auto it = features.find(f);
    return it != features.end() && it->second;
  });
}

char AllocationError::ID = 0;

void AllocationError::log(llvm::raw_ostream &os) const {
  os << "the compiled code could not allocate " << bytes << " bytes ("
     << formatBytes(bytes) << "); the call was abandoned";
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double v = bytes / 1024.0;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

/// A "Key:   N kB" line of a /proc file, in bytes.
static std::optional<uint64_t> procKb(const char *path, const char *key) {
  std::optional<uint64_t> out;
  if (FILE *f = std::fopen(path, "r")) {
    char line[256];
    size_t n = std::strlen(key);
    while (std::fgets(line, sizeof(line), f))
      if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
        unsigned long long kb;
        if (std::sscanf(line + n + 1, " %llu", &kb) == 1)
          out = kb * 1024ull;
        break;
      }
    std::fclose(f);
  }
  return out;
}

double peakRssMiB() {
  std::optional<uint64_t> hwm = procKb("/proc/self/status", "VmHWM");
  return hwm ? *hwm / (1024.0 * 1024.0) : -1;
}

std::optional<uint64_t> availableMemoryBytes() {
  std::optional<uint64_t> avail = procKb("/proc/meminfo", "MemAvailable");
  struct rlimit lim;
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    uint64_t used = procKb("/proc/self/status", "VmSize").value_or(0);
    uint64_t left = lim.rlim_cur > used ? lim.rlim_cur - used : 0;
    avail = avail ? std::min(*avail, left) : left;
  }
  return avail;
}

std::optional<uint64_t> referenceScoresBytes(ModuleOp module, llvm::StringRef entry,
                                             llvm::ArrayRef<std::vector<int64_t>> shapes) {
  OwningOpRef<func::FuncOp> fn = specialise(module, entry, shapes);
  if (!fn)
    return std::nullopt;
  std::optional<uint64_t> largest;
  bool unknown = false;
  auto account = [&](llvm::ArrayRef<int64_t> dims) {
    uint64_t n = 4;
    for (int64_t d : dims) {
      if (ShapedType::isDynamic(d)) {
        unknown = true;
        return;
      }
      n *= static_cast<uint64_t>(d);
    }
    largest = std::max(largest.value_or(0), n);
  };
  auto dim = [](Value v, int64_t i) { return cast<RankedTensorType>(v.getType()).getDimSize(i); };
  fn->walk([&](Operation *op) {
    if (auto s = dyn_cast<mlir::attn::SdpaOp>(op))
      account({dim(s.getQuery(), 0), dim(s.getQuery(), 1), dim(s.getQuery(), 2),
               dim(s.getKey(), 2)});
    else if (auto s = dyn_cast<mlir::attn::ScoresOp>(op))
      account(s.getType().getShape());
    else if (auto m = dyn_cast<mlir::attn::MhaOp>(op))
      account({dim(m.getQueryInput(), 0), static_cast<int64_t>(m.getNumHeads()),
               dim(m.getQueryInput(), 1), dim(m.getKvInput(), 1)});
  });
  if (unknown)
    return std::nullopt;
  return largest;
}

llvm::Error CompiledFunction::callContiguous(
    llvm::ArrayRef<const void *> inputs,
    llvm::ArrayRef<std::vector<int64_t>> shapes,
    llvm::function_ref<void(size_t, const ResultBuffer &)> sink,
    CallStats *stats) const {
  if (inputs.size() != shapes.size())
    return err("callContiguous: " + llvm::Twine(inputs.size()) +
               " buffers but " + llvm::Twine(shapes.size()) + " shapes");
  std::vector<DType> dtypes;
  for (size_t i = 0; i < inputs.size() && i < args.size(); ++i)
    dtypes.push_back(args[i].dtype);
  dtypes.resize(inputs.size(), DType::F32);
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
                  failedBytes, /*freeResults=*/!device))
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
  if (pipeline == Pipeline::Gpu && deviceResident)
    return err("a device-resident function takes device buffers: use callContiguous");
  if (llvm::Error e = checkInputs(inputs))
    return std::move(e);
  std::vector<const void *> data;
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor &t : inputs) {
    data.push_back(t.bytes.data());
    shapes.push_back(t.shape);
  }
  std::vector<HostTensor> outs;
  llvm::Error e = callContiguous(
      data, shapes,
      [&](size_t i, const ResultBuffer &r) {
        std::vector<int64_t> dense = rowMajorStrides(r.shape);
        bool rowMajor = true; // a dim of size 1 may have any stride
        for (size_t d = 0; d < r.shape.size(); ++d)
          rowMajor &= r.shape[d] == 1 || r.strides[d] == dense[d];
        if (rowMajor) {
          // One copy, without zero-filling the output first (the whole
          // output is written once instead of twice).
          HostTensor out;
          out.dtype = results[i].dtype;
          out.shape = r.shape.vec();
          out.bytes.assign(r.data, r.data + out.numel() * dtypeSize(out.dtype));
          outs.push_back(std::move(out));
          return;
        }
        HostTensor out = HostTensor::zeros(results[i].dtype, r.shape.vec());
        copyStrided(r.data, r.strides, out.bytes.data(), dense, r.shape,
                    dtypeSize(out.dtype));
        outs.push_back(std::move(out));
      },
      stats);
  if (e)
    return std::move(e);
  return outs;
}

} // namespace attn::runtime
