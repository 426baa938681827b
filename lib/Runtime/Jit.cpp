//===- Jit.cpp - compile an attn function once, call it many times --------===//
#include "attn/Runtime/Jit.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

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

void registerJitDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<mlir::attn::AttnDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

llvm::StringRef pipelineName(Pipeline p) {
  switch (p) {
  case Pipeline::Reference:
    return "reference";
  case Pipeline::Cpu:
    return "cpu";
  case Pipeline::Gpu:
    return "gpu";
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
  return err("unknown pipeline '" + name + "' (expected reference, cpu or gpu)");
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
static llvm::Expected<TensorSpec> specOf(Type t, const llvm::Twine &what) {
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
  else
    return err(what + " has element type " + llvm::Twine(typeStr(e)) +
               "; .npy exchange supports f32, f16 and i1");
  for (int64_t d : rt.getShape())
    spec.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return spec;
}

llvm::Error checkInputShapes(ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<HostTensor> inputs) {
  auto original = module.lookupSymbol<func::FuncOp>(entry);
  if (!original || original.getNumArguments() != inputs.size())
    return llvm::Error::success(); // arity errors are reported elsewhere
  OwningOpRef<func::FuncOp> fn = original.clone();
  Block &body = fn->getBody().front();
  bool changed = false;
  for (auto [arg, in] : llvm::zip(body.getArguments(), inputs)) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || t.getRank() != (int64_t)in.shape.size())
      return llvm::Error::success();
    auto concrete = RankedTensorType::get(in.shape, t.getElementType());
    if (concrete != t) {
      arg.setType(concrete);
      changed = true;
    }
  }
  if (!changed)
    return llvm::Error::success();
  // Re-infer every attn result in order; any other op that consumes a
  // retyped value ends the check (its types are not ours to infer).
  for (Operation &op : body.without_terminator()) {
    RankedTensorType inferred = mlir::attn::inferResultType(&op);
    if (inferred) {
      op.getResult(0).setType(inferred);
      continue;
    }
    bool dependsOnArgs = llvm::any_of(op.getOperands(), [&](Value v) {
      auto ba = dyn_cast<BlockArgument>(v);
      return (ba && ba.getOwner() == &body) ||
             (v.getDefiningOp() && isa<mlir::attn::AttnDialect>(v.getDefiningOp()->getDialect()));
    });
    if (dependsOnArgs)
      return llvm::Error::success();
  }
  std::string first;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (first.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      first = d.str();
    return success();
  });
  for (Operation &op : body.without_terminator())
    if (isa<mlir::attn::AttnDialect>(op.getDialect()) && failed(verify(&op)))
      return err("the inputs' shapes do not fit together: " + first);
  return llvm::Error::success();
}

CompiledFunction::~CompiledFunction() = default;

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, llvm::StringRef entry,
                          Pipeline pipeline, const JitOptions &options) {
  MLIRContext *ctx = module.getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return err("no function named '" + entry + "' with a body");
  std::unique_ptr<CompiledFunction> cf(new CompiledFunction());
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    auto s = specOf(t, "argument #" + llvm::Twine(i) + " of '" + entry + "'");
    if (!s)
      return s.takeError();
    cf->args.push_back(*s);
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto s = specOf(t, "result #" + llvm::Twine(i) + " of '" + entry + "'");
    if (!s)
      return s.takeError();
    cf->results.push_back(*s);
  }
  if (pipeline == Pipeline::Gpu)
    return err("pipeline '" + pipelineName(pipeline) +
               "' does not exist yet (available: reference, cpu)");

  // Lower a clone; the caller's module stays as it was.
  OwningOpRef<ModuleOp> clone = module.clone();
  clone->lookupSymbol<func::FuncOp>(entry)->setAttr("llvm.emit_c_interface",
                                                    UnitAttr::get(ctx));
  std::string diags;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        diags += (diags.empty() ? "" : "; ") + d.str();
      return success();
    });
    PassManager pm(ctx);
    if (pipeline == Pipeline::Cpu) {
      mlir::attn::CpuPipelineOptions cpu;
      cpu.tileQ = options.tileQ;
      cpu.tileK = options.tileK;
      cpu.threads = options.threads;
      mlir::attn::buildCpuPipeline(pm, cpu);
    } else {
      mlir::attn::buildReferencePipeline(pm, mlir::attn::ReferencePipelineOptions());
    }
    if (failed(pm.run(*clone)))
      return err("lowering through the " + pipelineName(pipeline) +
                 " pipeline failed: " + diags);
  }

  static std::once_flag nativeInit;
  std::call_once(nativeInit, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  // Compile for this machine's CPU and its features (AVX2/FMA here), not a
  // generic x86-64.
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return jtmb.takeError();
  llvm::CodeGenOptLevel cgLevel =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                              : llvm::CodeGenOptLevel::Default;
  jtmb->setCodeGenOptLevel(cgLevel);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return tm.takeError();
  cf->cpu = (*tm)->getTargetCPU().str();
  cf->features = (*tm)->getTargetFeatureString().str();
  auto transformer = makeOptimizingTransformer(options.optLevel, 0, tm->get());
  ExecutionEngineOptions eo;
  eo.transformer = transformer;
  eo.jitCodeGenOptLevel = cgLevel;
  eo.enableObjectDump = options.keepObject;
  eo.enableGDBNotificationListener = false;
  eo.enablePerfNotificationListener = false;
  // The CPU pipeline's threads are OpenMP's.
  llvm::StringRef libs[] = {ATTN_OPENMP_LIBRARY};
  if (pipeline == Pipeline::Cpu)
    eo.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*clone, eo, std::move(*tm));
  if (!engine)
    return engine.takeError();
  cf->engine = std::move(*engine);
  auto packed = cf->engine->lookupPacked(("_mlir_ciface_" + entry).str());
  if (!packed)
    return packed.takeError();
  cf->packed = *packed;
  return cf;
}

void CompiledFunction::dumpObject(llvm::StringRef path) const {
  engine->dumpToObjectFile(path);
}

llvm::Error CompiledFunction::checkInputs(llvm::ArrayRef<HostTensor> inputs) const {
  if (inputs.size() != args.size())
    return err("the function takes " + llvm::Twine(args.size()) +
               " inputs, got " + llvm::Twine(inputs.size()));
  for (auto [i, t] : llvm::enumerate(inputs)) {
    const TensorSpec &s = args[i];
    TensorSpec got{t.dtype, t.shape};
    if (t.dtype != s.dtype)
      return err("input #" + llvm::Twine(i) + ": dtype " + dtypeName(t.dtype) +
                 ", expected " + dtypeName(s.dtype) + " (" + s.str() + ")");
    if (t.shape.size() != s.shape.size())
      return err("input #" + llvm::Twine(i) + ": rank " +
                 llvm::Twine(t.shape.size()) + " " + got.str() + ", expected rank " +
                 llvm::Twine(s.shape.size()) + " " + s.str());
    for (size_t d = 0; d < s.shape.size(); ++d)
      if (s.shape[d] >= 0 && s.shape[d] != t.shape[d])
        return err("input #" + llvm::Twine(i) + ": shape " + got.str() +
                   " does not match " + s.str() + " at dim " + llvm::Twine(d));
  }
  return llvm::Error::success();
}

/// A ranked memref descriptor: {allocated, aligned, offset, sizes[R], strides[R]}.
static std::vector<int64_t> descriptorFor(const HostTensor &t) {
  int64_t rank = t.shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(t.bytes.data());
  d[0] = d[1] = ptr;
  d[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    d[3 + i] = t.shape[i];
    d[3 + rank + i] = stride;
    stride *= t.shape[i];
  }
  return d;
}

double peakRssMiB() {
  double mib = -1;
  if (FILE *f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kb;
    while (std::fgets(line, sizeof(line), f))
      if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) {
        mib = kb / 1024.0;
        break;
      }
    std::fclose(f);
  }
  return mib;
}

llvm::Expected<std::vector<HostTensor>>
CompiledFunction::call(llvm::ArrayRef<HostTensor> inputs, CallStats *stats) const {
  if (llvm::Error e = checkInputs(inputs))
    return std::move(e);
  std::vector<std::vector<int64_t>> descs;
  for (const HostTensor &t : inputs)
    descs.push_back(descriptorFor(t));
  // The C interface returns all results through one struct of descriptors
  // (each all 8-byte fields, so they lie back to back).
  size_t resultWords = 0;
  for (const TensorSpec &s : results)
    resultWords += 3 + 2 * s.shape.size();
  std::vector<int64_t> resultBuf(resultWords);
  std::vector<void *> pointers;
  if (!results.empty())
    pointers.push_back(resultBuf.data());
  for (auto &d : descs)
    pointers.push_back(d.data());
  std::vector<void *> packedArgs;
  for (void *&p : pointers)
    packedArgs.push_back(&p);
  packed(packedArgs.data());
  if (stats)
    stats->peakRssAfterKernelMiB = peakRssMiB();

  std::set<int64_t> inputBuffers, freed;
  for (const HostTensor &t : inputs)
    inputBuffers.insert(reinterpret_cast<int64_t>(t.bytes.data()));
  std::vector<HostTensor> outs;
  size_t at = 0;
  for (const TensorSpec &s : results) {
    int64_t rank = s.shape.size();
    const int64_t *d = resultBuf.data() + at;
    at += 3 + 2 * rank;
    std::vector<int64_t> shape(d + 3, d + 3 + rank);
    HostTensor out = HostTensor::zeros(s.dtype, shape);
    size_t es = dtypeSize(s.dtype);
    auto *base = reinterpret_cast<const uint8_t *>(d[1]) + d[2] * es;
    int64_t n = out.numel();
    // Row-major contiguous (the usual case): one copy.
    bool contiguous = true;
    for (int64_t k = rank - 1, expect = 1; k >= 0; --k) {
      if (shape[k] != 1 && d[3 + rank + k] != expect)
        contiguous = false;
      expect *= shape[k];
    }
    if (contiguous && n > 0)
      std::memcpy(out.bytes.data(), base, n * es);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t flat = 0; !contiguous && flat < n; ++flat) {
      int64_t off = 0;
      for (int64_t k = 0; k < rank; ++k)
        off += idx[k] * d[3 + rank + k];
      std::memcpy(out.bytes.data() + flat * es, base + off * es, es);
      for (int64_t k = rank - 1; k >= 0; --k) {
        if (++idx[k] < shape[k])
          break;
        idx[k] = 0;
      }
    }
    // Results are owned by the caller (ownership-based deallocation), except
    // when one aliases an input or an earlier result.
    int64_t allocated = d[0];
    if (allocated && !inputBuffers.count(allocated) && freed.insert(allocated).second)
      std::free(reinterpret_cast<void *>(allocated));
    outs.push_back(std::move(out));
  }
  return outs;
}

} // namespace attn::runtime
