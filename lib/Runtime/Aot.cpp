//===- Aot.cpp - ahead-of-time compilation of attn functions --------------===//
//
// The JIT's lowering (lowerToLLVMDialect), then, instead of an execution
// engine: translation to LLVM IR, a packed `void(void **)` wrapper around
// the C interface, allocation calls renamed to the guarded allocator,
// everything internal except `<name>_kernel` (the attn_aot_kernel that
// describes the function), and one object file for the target CPU. GPU
// kernels get one variant per chip, linked into the same object.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/Aot.h"

#include "Lowering.h"

#include "attn-c/Aot.h"
#include "attn/Runtime/DimRelations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <map>
#include <set>

using namespace mlir;

namespace attn::runtime {

static llvm::Error aotError(CompileErrorKind kind, const llvm::Twine &msg) {
  return llvm::make_error<CompileError>(kind, msg.str());
}

//===----------------------------------------------------------------------===//
// LLVM IR: the packed wrapper, the guarded allocator, the kernel record.
//===----------------------------------------------------------------------===//

/// void packed(void **args): args[i] points at the i-th argument of `fn`.
static llvm::Function *makePacked(llvm::Module &m, llvm::Function *fn,
                                  const llvm::Twine &name) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  // External until the variants are linked (the linker drops unreferenced
  // internal functions); internal once the kernel record refers to it.
  auto *packed =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", packed));
  llvm::SmallVector<llvm::Value *> args;
  for (llvm::Argument &arg : fn->args()) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, packed->getArg(0), arg.getArgNo());
    llvm::Value *at = b.CreateLoad(ptr, slot);
    args.push_back(b.CreateLoad(arg.getType(), at));
  }
  b.CreateCall(fn, args);
  b.CreateRetVoid();
  return packed;
}

/// The compiled code allocates through libattn_aot's guarded allocator (a
/// failed allocation becomes an error status, as in the JIT).
static void useGuardedAllocator(llvm::Module &m) {
  for (auto [from, to] : {std::pair<const char *, const char *>{"malloc", "attnGuardedMalloc"},
                          {"aligned_alloc", "attnGuardedAlignedAlloc"},
                          {"posix_memalign", "attnGuardedPosixMemalign"},
                          {"free", "attnGuardedFree"},
                          // strided memref.copy (libattn_aot's, not
                          // libmlir_c_runner_utils')
                          {"memrefCopy", "attnMemrefCopy"}})
    if (llvm::Function *f = m.getFunction(from); f && f->isDeclaration()) {
      if (llvm::Function *existing = m.getFunction(to)) {
        f->replaceAllUsesWith(existing);
        f->eraseFromParent();
      } else {
        f->setName(to);
      }
    }
}

/// Every definition internal: two kernels compiled from functions of the
/// same name (or with the same GPU module names) link into one program.
/// Drops the attn attributes (attn.shard on a ring's arguments and result,
/// attn.ring_ranks on its function) from the lowered functions: they were
/// read into the artifacts already, and LLVM IR translation has no use for
/// them (it would warn about each, printing the whole function).
static void dropAttnAttributes(ModuleOp module) {
  auto isAttn = [](NamedAttribute a) { return a.getName().strref().starts_with("attn."); };
  auto filtered = [&](DictionaryAttr d) {
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute a : d)
      if (!isAttn(a))
        kept.push_back(a);
    return DictionaryAttr::get(d.getContext(), kept);
  };
  module.walk([&](LLVM::LLVMFuncOp fn) {
    SmallVector<StringAttr> names;
    for (NamedAttribute a : fn->getDiscardableAttrs())
      if (isAttn(a))
        names.push_back(a.getName());
    for (StringAttr n : names)
      fn->removeAttr(n);
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (DictionaryAttr d = fn.getArgAttrDict(i))
        fn.setArgAttrs(i, filtered(d));
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      if (DictionaryAttr d = fn.getResultAttrDict(i))
        fn.setResultAttrs(i, filtered(d));
  });
}

static void internalize(llvm::Module &m, llvm::StringRef keep = "") {
  for (llvm::GlobalValue &g : m.global_values())
    if (!g.isDeclaration() && !g.hasLocalLinkage() && !g.getName().starts_with("llvm.") &&
        g.getName() != keep)
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
}

namespace {
/// Private constants for the kernel record.
struct RecordBuilder {
  llvm::Module &m;
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);

  llvm::Constant *string(llvm::StringRef s) {
    auto *init = llvm::ConstantDataArray::getString(ctx, s);
    auto *g = new llvm::GlobalVariable(m, init->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, init, "attn.aot.str");
    return g;
  }
  llvm::Constant *int64s(llvm::ArrayRef<int64_t> values) {
    if (values.empty())
      return llvm::ConstantPointerNull::get(ptr);
    llvm::SmallVector<uint64_t> v(values.begin(), values.end());
    auto *init = llvm::ConstantDataArray::get(ctx, v);
    return new llvm::GlobalVariable(m, init->getType(), true,
                                    llvm::GlobalValue::PrivateLinkage, init, "attn.aot.i64");
  }
  llvm::Constant *i(int64_t v) { return llvm::ConstantInt::get(i64, v); }
};
} // namespace

// attn::ElementType takes the C ABI's values (attn/ElementType.h).
static_assert(int(ElementType::F32) == ATTN_AOT_F32 && int(ElementType::F16) == ATTN_AOT_F16 &&
                  int(ElementType::Bool) == ATTN_AOT_BOOL &&
                  int(ElementType::I32) == ATTN_AOT_I32 &&
                  int(ElementType::I64) == ATTN_AOT_I64 &&
                  int(ElementType::BF16) == ATTN_AOT_BF16 &&
                  int(ElementType::I8) == ATTN_AOT_I8 &&
                  int(ElementType::F64) == ATTN_AOT_F64 &&
                  int(ElementType::F8E4M3) == ATTN_AOT_F8E4M3,
              "attn::ElementType and attn_aot_dtype must agree");

static int64_t aotDType(ElementType d) { return static_cast<int64_t>(d); }

/// `<name>_kernel`, the attn_aot_kernel of attn-c/Aot.h (field for field).
static void emitKernelRecord(llvm::Module &m, const AotOptions &options,
                             llvm::StringRef entry, Pipeline pipeline,
                             const AotArtifacts &art,
                             llvm::ArrayRef<std::pair<std::string, llvm::Function *>> variants) {
  RecordBuilder r{m};
  auto specs = [&](llvm::ArrayRef<TensorSpec> list, std::vector<int64_t> &dtypes,
                   std::vector<int64_t> &ranks, std::vector<int64_t> &shapes) {
    for (const TensorSpec &s : list) {
      dtypes.push_back(aotDType(s.dtype));
      ranks.push_back(s.shape.size());
      shapes.insert(shapes.end(), s.shape.begin(), s.shape.end());
    }
  };
  std::vector<int64_t> inD, inR, inS, outD, outR, outS, links, keyLengths;
  specs(art.args, inD, inR, inS);
  specs(art.results, outD, outR, outS);
  links = art.relations.dimLinks();
  std::vector<int64_t> divisors = art.relations.classDivisors();
  for (const ShapeRelations::KeyLengths &k : art.relations.keyLengths)
    keyLengths.insert(keyLengths.end(),
                      {k.input, k.boundDim ? k.boundDim->input : -1,
                       k.boundDim ? k.boundDim->dim : -1, k.bound});

  auto *variantType = llvm::StructType::get(r.ctx, {r.ptr, r.ptr});
  std::vector<llvm::Constant *> vs;
  for (auto &[target, fn] : variants)
    vs.push_back(llvm::ConstantStruct::get(variantType, {r.string(target), fn}));
  auto *variantArray = llvm::ConstantArray::get(
      llvm::ArrayType::get(variantType, vs.size()), vs);
  auto *variantGlobal = new llvm::GlobalVariable(
      m, variantArray->getType(), true, llvm::GlobalValue::PrivateLinkage, variantArray,
      "attn.aot.variants");

  llvm::Constant *fields[] = {
      r.i(ATTN_AOT_ABI_VERSION),
      r.string(options.name),
      r.string(entry),
      r.string(pipelineName(pipeline)),
      r.i(art.args.size()),
      r.i(art.results.size()),
      r.int64s(inD),
      r.int64s(inR),
      r.int64s(inS),
      r.int64s(outD),
      r.int64s(outR),
      r.int64s(outS),
      r.i(links.size() / aot::LinkFields),
      r.int64s(links),
      r.i(divisors.size() / aot::DivisorFields),
      r.int64s(divisors),
      r.i(keyLengths.size() / 4),
      r.int64s(keyLengths),
      r.i(vs.size()),
      variantGlobal,
      r.i(pipeline == Pipeline::Gpu && options.jit.deviceResident),
      r.i(art.resultDestinations),
  };
  llvm::SmallVector<llvm::Type *> types;
  for (llvm::Constant *c : fields)
    types.push_back(c->getType()->isIntegerTy() ? r.i64 : static_cast<llvm::Type *>(r.ptr));
  auto *recordType = llvm::StructType::get(r.ctx, types);
  new llvm::GlobalVariable(m, recordType, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantStruct::get(recordType, fields),
                           options.name + "_kernel");
}

//===----------------------------------------------------------------------===//
// The header.
//===----------------------------------------------------------------------===//

static std::string makeHeader(const AotOptions &o, llvm::StringRef entry,
                              Pipeline pipeline, const AotArtifacts &art) {
  std::string guard = "ATTN_AOT_" + llvm::StringRef(o.name).upper() + "_H";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "/* Generated by attn-aot: function @" << entry << ", pipeline "
     << pipelineName(pipeline) << ", host code for " << art.targetCpu;
  if (pipeline == Pipeline::Gpu) {
    os << ", GPU variants";
    for (auto &[chip, bin] : art.gpuBinaries)
      os << " " << chip;
  }
  if (pipeline == Pipeline::Gpu && o.jit.deviceResident)
    os << ", device-resident (inputs and outputs are CUDA device buffers)";
  if (pipeline == Pipeline::Gpu && o.jit.tf32)
    os << ", f32 attention with head dims 64/128 on tensor cores with TF32 operands";
  if (pipeline == Pipeline::Ring)
    os << ", ring attention over " << o.jit.ranks << " MPI ranks";
  os << ".\n * Link the object with libattn_aot";
  if (pipeline == Pipeline::Cpu)
    os << " and libomp";
  if (pipeline == Pipeline::Ring)
    os << ", libattn_mpi, libmpi and libomp; call\n * MPI_Init_thread(..., "
          "MPI_THREAD_FUNNELED, ...) first and call the kernel on every rank\n"
          " * of a communicator of exactly "
       << o.jit.ranks << " ranks, each passing its share";
  os << ". Do not edit. */\n";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n#include \"attn-c/Aot.h\"\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  os << "/* Inputs (dense, row-major; ? = given at call time):\n";
  auto shareOf = [](const std::optional<ShardSpec> &s) -> std::string {
    if (!s)
      return "";
    return " (this rank's share of dim " + std::to_string(s->dim) + ", " + s->layout +
           " layout)";
  };
  for (auto [i, spec] : llvm::enumerate(art.args))
    os << " *   #" << i << " " << spec.str() << shareOf(art.argShards[i]) << "\n";
  os << " * Outputs:\n";
  for (auto [i, spec] : llvm::enumerate(art.results))
    os << " *   #" << i << " " << spec.str() << shareOf(art.resultShards[i]) << "\n";
  std::vector<std::string> relations = art.relations.describe();
  if (!relations.empty() || !art.relations.keyLengths.empty()) {
    os << " * Checked before each call:\n";
    for (const std::string &line : relations)
      os << " *   " << line << "\n";
  }
  for (const ShapeRelations::KeyLengths &k : art.relations.keyLengths) {
    os << " *   input #" << k.input << " (key lengths) in [0, ";
    if (k.boundDim)
      os << "input #" << k.boundDim->input << " dim " << k.boundDim->dim;
    else
      os << k.bound;
    os << "]\n";
  }
  os << " */\n";
  os << "extern const attn_aot_kernel " << o.name << "_kernel;\n\n";
  os << "/* 0 on success, else an attn_aot_status (attn_aot_last_error()). */\n";
  os << "static inline int " << o.name << "(const attn_tensor inputs["
     << std::max<size_t>(1, art.args.size()) << "], attn_tensor outputs["
     << std::max<size_t>(1, art.results.size()) << "]) {\n";
  os << "  return attn_aot_call(&" << o.name << "_kernel, inputs, " << art.args.size()
     << ", outputs, " << art.results.size() << ");\n}\n\n";
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return s;
}

//===----------------------------------------------------------------------===//
// compileAot
//===----------------------------------------------------------------------===//

static bool isCIdentifier(llvm::StringRef s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

llvm::Expected<AotArtifacts> compileAot(ModuleOp module, llvm::StringRef entry,
                                        Pipeline pipeline, const AotOptions &options) {
  if (!isCIdentifier(options.name))
    return aotError(CompileErrorKind::BadOption,
                    "the kernel name '" + options.name + "' is not a C identifier");
  if (pipeline == Pipeline::GpuSchedule)
    return aotError(CompileErrorKind::BadOption,
                    "attn-aot compiles the cpu, reference, gpu and ring pipelines");
  if (options.jit.deviceResident && pipeline != Pipeline::Gpu)
    return aotError(CompileErrorKind::BadOption, "--device-resident needs the gpu pipeline");
  if (options.jit.tf32 && pipeline != Pipeline::Gpu)
    return aotError(CompileErrorKind::BadOption, "--tf32 needs the gpu pipeline");
  if (pipeline == Pipeline::Gpu && options.gpuChips.empty())
    return aotError(CompileErrorKind::BadOption, "the gpu pipeline needs at least one chip");
  if (!module.lookupSymbol<func::FuncOp>(entry) ||
      module.lookupSymbol<func::FuncOp>(entry).isExternal())
    return aotError(CompileErrorKind::NoFunction,
                    "no function named '" + entry + "' with a body");
  // A ring is sharded first: the kernel takes one rank's share.
  OwningOpRef<ModuleOp> sharded;
  if (pipeline == Pipeline::Ring) {
    auto s = shardRing(module, options.jit.ranks);
    if (!s)
      return s.takeError();
    sharded = std::move(*s);
    module = *sharded;
  }
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  AotArtifacts art;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    art.argShards.push_back(shardSpecOf(fn.getArgAttrDict(i)));
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    art.resultShards.push_back(shardSpecOf(fn.getResultAttrDict(i)));
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    auto s = specOf(t, "argument #" + llvm::Twine(i) + " of '" + entry + "'");
    if (!s)
      return aotError(CompileErrorKind::UnsupportedSignature, llvm::toString(s.takeError()));
    art.args.push_back(*s);
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto s = specOf(t, "result #" + llvm::Twine(i) + " of '" + entry + "'");
    if (!s)
      return aotError(CompileErrorKind::UnsupportedSignature, llvm::toString(s.takeError()));
    art.results.push_back(*s);
  }
  for (const TensorSpec &s : art.args)
    if (s.shape.size() > ATTN_AOT_MAX_RANK)
      return aotError(CompileErrorKind::UnsupportedSignature,
                      "an argument of rank " + llvm::Twine(s.shape.size()) +
                          " (the AOT API takes up to " + llvm::Twine(ATTN_AOT_MAX_RANK) + ")");
  llvm::Expected<ShapeRelations> relations = deriveShapeRelations(module, entry, art.args);
  if (!relations)
    return aotError(CompileErrorKind::UnsupportedSignature,
                    llvm::toString(relations.takeError()));
  art.relations = std::move(*relations);

  // The target machine: host or named CPU, position-independent code.
  initializeNativeTarget();
  std::string cpu = options.targetCpu.empty()
                        ? (pipeline == Pipeline::Gpu ? "x86-64" : "host")
                        : options.targetCpu;
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(llvm::sys::getProcessTriple())};
  if (cpu == "host") {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host)
      return aotError(CompileErrorKind::JitFailed, llvm::toString(host.takeError()));
    jtmb = std::move(*host);
  } else {
    jtmb.setCPU(cpu);
  }
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  llvm::Expected<unsigned> optLevel = cappedOptLevel(options.jit.optLevel);
  if (!optLevel)
    return aotError(CompileErrorKind::BadOption, llvm::toString(optLevel.takeError()));
  jtmb.setCodeGenOptLevel(codeGenOptLevel(*optLevel));
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    return aotError(CompileErrorKind::BadOption,
                    "target CPU '" + cpu + "': " + llvm::toString(tm.takeError()));
  llvm::MCSubtargetInfo const *sti = (*tm)->getMCSubtargetInfo();
  if (cpu != "host" && !sti->isCPUStringValid(cpu))
    return aotError(CompileErrorKind::BadOption, "unknown target CPU '" + cpu + "'");
  art.targetCpu = (*tm)->getTargetCPU().str();
  art.targetFeatures = (*tm)->getTargetFeatureString().str();
  CpuTarget cpuTarget = cpuTargetOf(art.targetCpu, [&](llvm::StringRef f) {
    return sti->checkFeatures(("+" + f).str());
  });

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> linked;
  std::vector<std::pair<std::string, llvm::Function *>> variantFns;
  std::vector<std::string> targets =
      pipeline == Pipeline::Gpu ? options.gpuChips : std::vector<std::string>{"cpu"};
  std::vector<std::pair<std::string, std::string>> packedNames;
  for (const std::string &target : targets) {
    OwningOpRef<ModuleOp> clone = module.clone();
    JitOptions jit = options.jit;
    jit.gpuFormat = "fatbin";
    std::vector<std::string> unfused;
    // The cpu entry takes a destination per result: attn_aot_call passes
    // the caller's outputs, which the kernel writes without a copy (the
    // header's C signatures are unchanged).
    bool destinations = pipeline == Pipeline::Cpu;
    if (llvm::Error e = lowerToLLVMDialect(*clone, entry, pipeline, jit,
                                           pipeline == Pipeline::Gpu ? target : "",
                                           cpuTarget, art.tiling, unfused, destinations))
      return std::move(e);
    if (target == targets.front()) {
      art.unfusedOps = unfused;
      art.resultDestinations = destinations;
    }
    clone->walk([&](gpu::BinaryOp bin) {
      for (Attribute a : bin.getObjects())
        if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
          art.gpuBinaries.push_back({target, obj.getObject().str()});
    });
    dropAttnAttributes(*clone);
    std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(*clone, llvmCtx, options.name);
    if (!m)
      return aotError(CompileErrorKind::JitFailed, "translation to LLVM IR failed");
    m->setDataLayout((*tm)->createDataLayout());
    m->setTargetTriple((*tm)->getTargetTriple());
    llvm::Function *ciface = m->getFunction(("_mlir_ciface_" + entry).str());
    if (!ciface)
      return aotError(CompileErrorKind::JitFailed, "no C interface for '" + entry + "'");
    std::string packedName = options.name + "__" + target + "__entry";
    makePacked(*m, ciface, packedName);
    useGuardedAllocator(*m);
    internalize(*m, packedName);
    packedNames.push_back({target, packedName});
    if (!linked) {
      linked = std::move(m);
    } else if (llvm::Linker::linkModules(*linked, std::move(m))) {
      return aotError(CompileErrorKind::JitFailed, "linking the " + target + " variant failed");
    }
  }
  for (auto &[target, name] : packedNames) {
    llvm::Function *f = linked->getFunction(name);
    if (!f)
      return aotError(CompileErrorKind::JitFailed, "lost the entry of " + target);
    variantFns.push_back({target, f});
  }
  emitKernelRecord(*linked, options, entry, pipeline, art, variantFns);
  for (auto &[target, f] : variantFns)
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
  if (llvm::Error e = optimizeLLVMModule(*linked, *optLevel, tm->get()))
    return aotError(CompileErrorKind::JitFailed, llvm::toString(std::move(e)));

  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if ((*tm)->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return aotError(CompileErrorKind::JitFailed, "the target cannot emit object files");
  codegen.run(*linked);
  art.object = buffer.str().str();
  art.header = makeHeader(options, entry, pipeline, art);
  return art;
}

} // namespace attn::runtime
