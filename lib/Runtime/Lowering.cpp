//===- Lowering.cpp - the lowering the JIT and attn-aot share -------------===//
//
// Signatures and the checks of inputs against them, the pipelines'
// lowering to the LLVM dialect, the ring's sharding, and the LLVM
// optimisation of the result (Lowering.h). Compiling and calling the
// result is Jit.cpp's; the machine's facts are HostInfo.cpp's.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Mpi.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;

namespace attn::runtime {

static std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::optional<ElementType> elementTypeOf(Type e) {
  if (e.isF32())
    return ElementType::F32;
  if (e.isF16())
    return ElementType::F16;
  if (e.isInteger(1))
    return ElementType::Bool;
  if (e.isBF16())
    return ElementType::BF16;
  if (e.isSignlessInteger(32))
    return ElementType::I32;
  if (e.isSignlessInteger(64))
    return ElementType::I64;
  if (e.isSignlessInteger(8))
    return ElementType::I8;
  if (e.isF64())
    return ElementType::F64;
  if (isa<Float8E4M3FNType>(e))
    return ElementType::F8E4M3;
  return std::nullopt;
}

/// The runner's view of a function argument or result type.
llvm::Expected<TensorSpec> specOf(Type t, const llvm::Twine &what) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt)
    return err(what + " has type " + llvm::Twine(typeStr(t)) +
               "; only ranked tensors can be passed");
  TensorSpec spec;
  Type e = rt.getElementType();
  std::optional<ElementType> dtype = elementTypeOf(e);
  if (!dtype)
    return err(what + " has element type " + llvm::Twine(typeStr(e)) +
               "; .npy exchange supports f32, f16, bf16 (as float32), f64, i1, i8, i32 "
               "and i64");
  spec.dtype = *dtype;
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
/// result re-inferred in order (InferTypeOpInterface, else the shape from
/// InferShapedTypeOpInterface with the result's element type); null when the
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
  bool retyped = false;
  for (auto [arg, shape] : llvm::zip(body.getArguments(), shapes)) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || t.getRank() != (int64_t)shape.size())
      return nullptr;
    auto concrete = RankedTensorType::get(shape, t.getElementType());
    if (concrete != t) {
      arg.setType(concrete);
      retyped = true;
    }
  }
  // Arguments of exactly their declared (static) types: every op keeps its
  // types, whatever dialect it is from (generic IR, before attn-raise).
  if (!retyped)
    return fn;
  // Any other op that consumes a retyped value ends the specialisation (its
  // types are not ours to infer).
  for (Operation &op : body.without_terminator()) {
    // Score and mask functions take one block argument per capture, of the
    // capture's type: they follow the captures' new types.
    if (auto capturing = dyn_cast<mlir::attn::CapturingOpInterface>(op))
      capturing.syncCaptureArgumentTypes();
    bool ours = isa<mlir::attn::AttnDialect>(op.getDialect());
    SmallVector<Type, 1> inferred;
    if (auto infer = dyn_cast<InferTypeOpInterface>(op);
        ours && infer &&
        succeeded(infer.inferReturnTypes(op.getContext(), op.getLoc(), op.getOperands(),
                                         op.getRawDictionaryAttrs(),
                                         op.getPropertiesStorage(), op.getRegions(),
                                         inferred))) {
      for (auto [result, type] : llvm::zip(op.getResults(), inferred))
        result.setType(type);
      continue;
    }
    // Ops that infer only their results' shapes (attn.dequantize: its
    // element type is its own) keep their element types.
    SmallVector<ShapedTypeComponents, 1> shapes;
    if (auto infer = dyn_cast<InferShapedTypeOpInterface>(op);
        ours && infer &&
        succeeded(infer.inferReturnTypeComponents(
            op.getContext(), op.getLoc(), ValueShapeRange(op.getOperands()),
            op.getRawDictionaryAttrs(), op.getPropertiesStorage(), op.getRegions(), shapes)) &&
        shapes.size() == op.getNumResults() &&
        llvm::all_of(shapes, [](const ShapedTypeComponents &c) { return c.hasRank(); })) {
      for (auto [result, c] : llvm::zip(op.getResults(), shapes))
        result.setType(RankedTensorType::get(
            c.getDims(), cast<ShapedType>(result.getType()).getElementType()));
      continue;
    }
    // The shape-only upstream ops of tokens-first operands (the Python
    // serving calls'): tensor.dim and tensor.empty keep their types here
    // (only the attn ops are verified), and a linalg.transpose's result is
    // its input's shape permuted.
    if (isa<tensor::DimOp, tensor::EmptyOp>(op))
      continue;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      auto input = cast<RankedTensorType>(transpose.getInput().getType());
      SmallVector<int64_t> shape;
      for (int64_t from : transpose.getPermutation())
        shape.push_back(input.getDimSize(from));
      for (Value result : transpose->getResults())
        result.setType(RankedTensorType::get(shape, input.getElementType()));
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
    // Through slices and casts of the argument (a tiled program slices the
    // lengths per batch tile): every element the op reads is the
    // argument's.
    while (lengths && isa_and_nonnull<tensor::ExtractSliceOp, tensor::CastOp>(
                          lengths.getDefiningOp()))
      lengths = lengths.getDefiningOp()->getOperand(0);
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
    else if (auto partial = dyn_cast<mlir::attn::SdpaPartialOp>(op))
      record(op, partial.getKeyLengths(), partial.getKey(), 2);
    else if (auto grad = dyn_cast<mlir::attn::SdpaGradOp>(op))
      record(op, grad.getKeyLengths(), grad.getKey(), 2);
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

std::vector<BlockTableCheck> blockTableChecks(ModuleOp module, llvm::StringRef entry,
                                              llvm::ArrayRef<std::vector<int64_t>> shapes) {
  std::vector<BlockTableCheck> checks;
  OwningOpRef<func::FuncOp> fn = specialise(module, entry, shapes);
  if (!fn)
    return checks;
  Block &body = fn->getBody().front();
  auto argNumber = [&](Value v) -> int64_t {
    auto arg = dyn_cast_or_null<BlockArgument>(v);
    return arg && arg.getOwner() == &body ? int64_t(arg.getArgNumber()) : -1;
  };
  fn->walk([&](mlir::attn::GatherPagesOp op) {
    auto cache = cast<RankedTensorType>(op.getCache().getType());
    BlockTableCheck c{argNumber(op.getTable()), argNumber(op.getLengths()), cache.getDimSize(0),
                      cache.getDimSize(op.getBlockSizeDim()),
                      op->getName().getStringRef().str()};
    if (c.tableArg < 0 || (op.getLengths() && c.lengthsArg < 0) ||
        ShapedType::isDynamic(c.numBlocks) || ShapedType::isDynamic(c.blockSize))
      return;
    checks.push_back(c);
  });
  // sdpa_varlen's paged keys: sequence b has cu_seqlens_k[b+1] − [b] keys.
  fn->walk([&](mlir::attn::SdpaVarlenOp op) {
    Value table = op.getBlockTable();
    if (!table)
      return;
    auto cache = cast<RankedTensorType>(op.getKey().getType());
    int64_t bsDim = op.getCacheLayout() == mlir::attn::KvLayout::nhd ? 1 : 2;
    BlockTableCheck c{argNumber(table), argNumber(op.getCuSeqlensK()), cache.getDimSize(0),
                      cache.getDimSize(bsDim), op->getName().getStringRef().str(),
                      /*cumulativeLengths=*/true};
    if (c.tableArg < 0 || c.lengthsArg < 0 || ShapedType::isDynamic(c.numBlocks) ||
        ShapedType::isDynamic(c.blockSize))
      return;
    checks.push_back(c);
  });
  return checks;
}

std::string BlockTableCheck::check(int64_t batch, int64_t maxBlocks,
                                   llvm::function_ref<int64_t(int64_t, int64_t)> entry,
                                   llvm::function_ref<int64_t(int64_t)> length) const {
  for (int64_t b = 0; b < batch; ++b) {
    int64_t used = maxBlocks;
    if (cumulativeLengths) {
      int64_t len = length(b + 1) - length(b);
      if (len < 0 || len > maxBlocks * blockSize)
        return "sequence " + std::to_string(b) + " has " + std::to_string(len) +
               " keys (cu_seqlens_k[" + std::to_string(b + 1) + "] - [" + std::to_string(b) +
               "]), outside [0, MB*BS = " + std::to_string(maxBlocks * blockSize) + "] of '" +
               op + "'";
      used = blockSize > 0 ? (len + blockSize - 1) / blockSize : 0;
    } else if (lengthsArg >= 0) {
      int64_t len = std::clamp<int64_t>(length(b), 0, maxBlocks * blockSize);
      used = blockSize > 0 ? (len + blockSize - 1) / blockSize : 0;
    }
    for (int64_t i = 0; i < used; ++i)
      if (int64_t id = entry(b, i); id < 0 || id >= numBlocks)
        return "element [" + std::to_string(b) + ", " + std::to_string(i) + "] is " +
               std::to_string(id) + ", outside [0, NB = " + std::to_string(numBlocks) +
               ") of '" + op + "'";
  }
  return "";
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
  for (const BlockTableCheck &c : blockTableChecks(module, entry, shapes)) {
    const HostTensor &t = inputs[c.tableArg];
    int64_t maxBlocks = t.shape[1];
    std::string problem = c.check(
        t.shape[0], maxBlocks, [&](int64_t b, int64_t i) { return t.getAsInt(b * maxBlocks + i); },
        [&](int64_t b) { return inputs[c.lengthsArg].getAsInt(b); });
    if (!problem.empty())
      return err("block table (argument #" + llvm::Twine(c.tableArg) + ") " + problem);
  }
  return llvm::Error::success();
}

llvm::Error lowerToLLVMDialect(ModuleOp clone, llvm::StringRef entry,
                               Pipeline pipeline, const JitOptions &options,
                               const std::string &chip, const CpuTarget &target,
                               CompiledFunction::Tiling &usedTiling,
                               std::vector<std::string> &unfused,
                               bool &resultDestinations) {
  MLIRContext *ctx = clone.getContext();
  clone.lookupSymbol<func::FuncOp>(entry)->setAttr("llvm.emit_c_interface",
                                                   UnitAttr::get(ctx));
  // Only `entry` and what it calls are compiled (and reported on).
  for (auto other : llvm::make_early_inc_range(clone.getOps<func::FuncOp>()))
    if (other.getSymName() != entry &&
        SymbolTable::symbolKnownUseEmpty(other, clone.getOperation()))
      other.erase();
  resultDestinations =
      resultDestinations && pipeline == Pipeline::Cpu &&
      SymbolTable::symbolKnownUseEmpty(clone.lookupSymbol<func::FuncOp>(entry), clone);
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
  if (options.raise) {
    std::unique_ptr<Pass> raise = mlir::attn::createAttnRaise();
    std::string bad;
    if (failed(raise->initializeOptions(*options.raise, [&](const Twine &msg) {
          bad = msg.str();
          return failure();
        })))
      return compileError(CompileErrorKind::BadOption,
                          "attn-raise options '" + *options.raise + "': " +
                              (bad.empty() ? std::string("not understood") : bad));
    pm.addPass(std::move(raise));
  }
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
    // AMX: the host's choice where it has the tiles and may use them;
    // emulated, on any CPU.
    if (options.amx.value_or(false) && !options.emulateAmx) {
      if (!target.hasAmx)
        return compileError(CompileErrorKind::BadOption,
                            "amx needs AMX-BF16 (tdpbf16ps), which the target CPU lacks "
                            "(emulate-amx runs the tiles as vector code)");
      if (target.amxRefused)
        return compileError(CompileErrorKind::BadOption,
                            "amx: Linux refused this process the AMX tile state "
                            "(arch_prctl ARCH_REQ_XCOMP_PERM)");
    }
    cpu.amx = options.amx.value_or(options.emulateAmx || target.amxPermitted);
    cpu.amxFp16 = cpu.amx && (options.emulateAmx || target.hasAmxFp16);
    cpu.emulateAmx = options.emulateAmx;
    cpu.avx2 = target.hasAvx2;
    usedTiling.amx = bool(cpu.amx);
    usedTiling.emulatedAmx = cpu.amx && options.emulateAmx;
    // Split the keys (flash-decoding) when there are fewer than two work
    // items per thread.
    cpu.minWorkItems = options.minWorkItems.value_or(2 * workerThreads(options.threads));
    if (options.prepackLimitMiB)
      cpu.prepackLimitMiB = *options.prepackLimitMiB;
    cpu.reportUnfused = true;
    cpu.resultDestinations = resultDestinations;
    std::string bad = mlir::attn::checkAttnToLoopsOptions(cpu.loopOptions());
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
    gpu.chip = chip.empty() ? "sm_90" : chip;
    gpu.format = options.gpuFormat;
    gpu.deviceResident = options.deviceResident;
    gpu.tf32 = options.tf32;
    // Which sdpa keep the CUDA-core kernel (with the reason), among the
    // remarks the compiled function reports.
    gpu.reportKernel = true;
    std::string bad = mlir::attn::checkAttnToGpuOptions(gpu.kernelOptions());
    if (!bad.empty())
      return compileError(CompileErrorKind::BadOption, bad);
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
    // Inline assembly in the kernels (x86vector's AVX2 8 × 8 transpose
    // blends with vblendps) is parsed by the target's assembler.
    llvm::InitializeNativeTargetAsmParser();
  });
}

llvm::Expected<unsigned> cappedOptLevel(unsigned requested) {
  const char *cap = std::getenv("ATTN_MAX_OPT_LEVEL");
  if (!cap || !*cap)
    return requested;
  if (cap[1] != '\0' || cap[0] < '0' || cap[0] > '3')
    return llvm::createStringError("ATTN_MAX_OPT_LEVEL='" + std::string(cap) +
                                   "': expected 0, 1, 2 or 3");
  return std::min(requested, unsigned(cap[0] - '0'));
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

} // namespace attn::runtime
