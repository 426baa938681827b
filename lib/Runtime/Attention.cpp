//===- Attention.cpp - the compile-and-call API ---------------------------===//
#include "attn/Attention.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Transforms/Passes.h"
#include "attn/Runtime/CudaRuntime.h"
#include "attn/Runtime/Jit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

namespace attn {

namespace rt = attn::runtime;

static bool validType(ElementType t) {
  return t == ElementType::F32 || t == ElementType::F16 || t == ElementType::Bool ||
         t == ElementType::I32 || t == ElementType::I64 || t == ElementType::BF16 ||
         t == ElementType::I8;
}

static std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

std::string TensorInfo::str() const {
  return rt::TensorSpec{type, shape}.str();
}

//===----------------------------------------------------------------------===//
// Specs → IR
//===----------------------------------------------------------------------===//

namespace {
/// Reads a spec's sizes, keeping the first error: -1 (where allowed) is a
/// dynamic dim.
struct DimReader {
  std::string error;

  int64_t dim(const char *name, int64_t v, bool mayBeDynamic) {
    if (v == -1 && mayBeDynamic)
      return mlir::ShapedType::kDynamic;
    if (v <= 0 && error.empty())
      error = std::string(name) + " must be positive" +
              (mayBeDynamic ? " or -1 (given at call time)" : "") + ", got " +
              std::to_string(v);
    return v;
  }
};

/// One attn function built with the op builders (result types inferred by
/// the ops), printed as the text Kernel::compile parses.
class FunctionBuilder {
public:
  explicit FunctionBuilder(ElementType type)
      : ctx(mlir::MLIRContext::Threading::DISABLED), b(&ctx), loc(b.getUnknownLoc()) {
    // linalg, tensor, arith and math for the sinks' gradient
    // (buildSinksAdjoint: a reduction beside attn.sdpa_grad).
    ctx.loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                    mlir::tensor::TensorDialect, mlir::arith::ArithDialect,
                    mlir::math::MathDialect>();
    module = mlir::ModuleOp::create(loc);
    elt = type == ElementType::F16    ? mlir::Type(b.getF16Type())
          : type == ElementType::BF16 ? mlir::Type(b.getBF16Type())
                                      : mlir::Type(b.getF32Type());
  }

  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, elt);
  }
  /// The mask argument type: i1 (keep) or the float type (additive).
  mlir::RankedTensorType mask(MaskKind kind, llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, kind == MaskKind::Keep
                                                  ? mlir::Type(b.getI1Type())
                                                  : elt);
  }
  mlir::FloatAttr f32(double v) { return b.getF32FloatAttr(static_cast<float>(v)); }
  /// ALiBi slopes [H] or [B,H] (always f32) and key lengths [B] (i32).
  mlir::RankedTensorType slopes(int64_t h) {
    return mlir::RankedTensorType::get({h}, b.getF32Type());
  }
  mlir::RankedTensorType slopes(int64_t batch, int64_t h) {
    return mlir::RankedTensorType::get({batch, h}, b.getF32Type());
  }
  mlir::RankedTensorType lengths(int64_t batch) {
    return mlir::RankedTensorType::get({batch}, b.getI32Type());
  }
  /// #attn.window with -1 = unbounded.
  mlir::attn::WindowAttr window(int64_t left, int64_t right) {
    auto bound = [](int64_t v) {
      return v < 0 ? std::optional<int64_t>() : std::optional<int64_t>(v);
    };
    return mlir::attn::WindowAttr::get(b.getContext(), bound(left), bound(right),
                                       std::nullopt);
  }
  mlir::attn::CausalKindAttr causal(Causal c) {
    if (c == Causal::None)
      return {};
    return mlir::attn::CausalKindAttr::get(
        &ctx, c == Causal::TopLeft ? mlir::attn::CausalKind::top_left
                                   : mlir::attn::CausalKind::bottom_right);
  }

  /// func.func @name(args) -> (the op's results) { return op(args) }, printed.
  std::string build(llvm::StringRef name, llvm::ArrayRef<mlir::Type> args,
                    llvm::function_ref<mlir::ValueRange(mlir::OpBuilder &, mlir::Location,
                                                        mlir::ValueRange)>
                        body) {
    b.setInsertionPointToEnd(module->getBody());
    auto fn = mlir::func::FuncOp::create(b, loc, name, b.getFunctionType(args, {}));
    mlir::Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    mlir::ValueRange results = body(b, loc, entry->getArguments());
    mlir::func::ReturnOp::create(b, loc, results);
    fn.setFunctionType(b.getFunctionType(args, results.getTypes()));
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return text;
  }

  mlir::OpBuilder &builder() { return b; }

private:
  mlir::MLIRContext ctx;
  mlir::OpBuilder b;
  mlir::Location loc;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Type elt;
};

/// The mask shape: `maskShape` if given (rank <= 4), else [B,H,Tq,Tk].
Status maskShape(DimReader &r, const std::vector<int64_t> &given,
                 llvm::ArrayRef<int64_t> full, std::vector<int64_t> &shape) {
  if (given.empty()) {
    shape.assign(full.begin(), full.end());
    return Status();
  }
  if (given.size() > 4)
    return Status::error("maskShape has rank " + std::to_string(given.size()) +
                         "; a mask broadcasts to [B,H,Tq,Tk] (rank <= 4)");
  shape.clear();
  for (int64_t d : given)
    shape.push_back(r.dim("maskShape entries", d, true));
  return Status();
}
} // namespace

/// The feature inputs (slopes [H] f32, key lengths [B] i32) and attributes
/// (softcap, window) SdpaSpec and MhaSpec share.
template <typename Spec>
static Status checkFeatures(const Spec &s, const char *specName) {
  if (s.alibiPerBatch && !s.alibi)
    return Status::error(std::string(specName) + ".alibiPerBatch needs alibi");
  if (s.softcap < 0 || !std::isfinite(s.softcap))
    return Status::error(std::string(specName) + ".softcap must be 0 (none) or a "
                         "positive finite number, got " + std::to_string(s.softcap));
  if (s.windowLeft < -1 || s.windowRight < -1)
    return Status::error(std::string(specName) + ".windowLeft/windowRight must be "
                         ">= 0 or -1 (unbounded), got " +
                         std::to_string(s.windowLeft) + ", " +
                         std::to_string(s.windowRight));
  if (!(s.dropoutRate >= 0 && s.dropoutRate < 1))
    return Status::error(std::string(specName) + ".dropoutRate must lie in [0, 1), got " +
                         std::to_string(s.dropoutRate));
  if (s.runtimeSeed && s.dropoutRate == 0)
    return Status::error(std::string(specName) + ".runtimeSeed needs a dropoutRate");
  return Status();
}

/// The inputs both specs take after the mask, in their order: ALiBi
/// slopes, key lengths, sinks f32 [H], the run-time dropout seed.
template <typename Spec>
static void addFeatureArgs(const Spec &s, FunctionBuilder &fb, int64_t b, int64_t h,
                           llvm::SmallVectorImpl<mlir::Type> &args) {
  if (s.alibi)
    args.push_back(s.alibiPerBatch ? fb.slopes(b, h) : fb.slopes(h));
  if (s.keyLengths)
    args.push_back(fb.lengths(b));
  if (s.sinks)
    args.push_back(mlir::RankedTensorType::get({h}, fb.builder().getF32Type()));
  if (s.runtimeSeed)
    args.push_back(mlir::RankedTensorType::get({}, fb.builder().getI64Type()));
}

template <typename Spec, typename Op>
static void setFeatureAttrs(const Spec &s, FunctionBuilder &fb, Op op) {
  if (s.softcap != 0)
    op.setSoftcapAttr(fb.f32(s.softcap));
  if (s.windowLeft >= 0 || s.windowRight >= 0)
    op.setWindowAttr(fb.window(s.windowLeft, s.windowRight));
}

Status sdpaToMlir(const SdpaSpec &s, std::string &mlir) {
  if (s.type != ElementType::F32 && s.type != ElementType::F16 &&
      s.type != ElementType::BF16)
    return Status::error("SdpaSpec.type must be F32, F16 or BF16");
  DimReader r;
  int64_t b = r.dim("batch", s.batch, true);
  int64_t h = r.dim("heads", s.heads, false);
  int64_t hkv = s.kvHeads == 0 ? h : r.dim("kvHeads", s.kvHeads, false);
  int64_t tq = r.dim("queryLen", s.queryLen, true);
  int64_t tk = r.dim("keyLen", s.keyLen, true);
  int64_t d = r.dim("headDim", s.headDim, false);
  int64_t dv = s.valueDim == 0 ? d : r.dim("valueDim", s.valueDim, false);
  if (!r.error.empty())
    return Status::error("SdpaSpec: " + r.error);
  FunctionBuilder fb(s.type);
  llvm::SmallVector<mlir::Type> args = {fb.tensor({b, h, tq, d}), fb.tensor({b, hkv, tk, d}),
                                        fb.tensor({b, hkv, tk, dv})};
  if (s.mask != MaskKind::None) {
    std::vector<int64_t> shape;
    if (Status st = maskShape(r, s.maskShape, {b, h, tq, tk}, shape); !st.ok())
      return st;
    if (!r.error.empty())
      return Status::error("SdpaSpec: " + r.error);
    args.push_back(fb.mask(s.mask, shape));
  }
  if (Status st = checkFeatures(s, "SdpaSpec"); !st.ok())
    return st;
  if (s.maskGrad && (s.part != SdpaPart::Gradients || s.mask != MaskKind::Additive))
    return Status::error("SdpaSpec.maskGrad needs part Gradients and an additive mask");
  addFeatureArgs(s, fb, b, h, args);
  mlir::Type f32 = fb.builder().getF32Type();
  size_t firstExtra = 3;
  if (s.part == SdpaPart::Gradients) {
    // O (f32, sdpa_partial's), dO, the log-sum-exp.
    args.insert(args.begin() + 3, {mlir::RankedTensorType::get({b, h, tq, dv}, f32),
                                   fb.tensor({b, h, tq, dv}),
                                   mlir::RankedTensorType::get({b, h, tq}, f32)});
    firstExtra = 6;
  }
  llvm::SmallVector<mlir::Value> results;
  mlir = fb.build("sdpa", args, [&](mlir::OpBuilder &ob, mlir::Location loc,
                                    mlir::ValueRange a) -> mlir::ValueRange {
    size_t next = firstExtra;
    mlir::Value mask = s.mask != MaskKind::None ? a[next++] : mlir::Value();
    mlir::Value slopes = s.alibi ? a[next++] : mlir::Value();
    mlir::Value lengths = s.keyLengths ? a[next++] : mlir::Value();
    mlir::Value sinks = s.sinks ? a[next++] : mlir::Value();
    mlir::Value seed = s.runtimeSeed ? a[next++] : mlir::Value();
    // attn.sdpa_grad takes no sinks: the lse it is given counts them.
    auto setSinks = [&](auto op) {
      if (sinks)
        op.getSinksMutable().assign(sinks);
    };
    auto setCommon = [&](auto op) {
      if (slopes)
        op.getAlibiSlopesMutable().assign(slopes);
      if (lengths)
        op.getKeyLengthsMutable().assign(lengths);
      setFeatureAttrs(s, fb, op);
      if (s.scale != 0)
        op.setScaleAttr(fb.f32(s.scale));
      op.setCausalAttr(fb.causal(s.causal));
      if (s.dropoutRate != 0) {
        op.setDropoutRateAttr(fb.f32(s.dropoutRate));
        if (seed)
          op.getRuntimeSeedMutable().assign(seed);
        else
          op.setDropoutSeedAttr(ob.getI64IntegerAttr(s.dropoutSeed));
      }
    };
    if (s.part == SdpaPart::OutputWithLse) {
      auto op = mlir::attn::SdpaPartialOp::create(
          ob, loc, a[0], a[1], a[2], mask, /*alibi_slopes=*/mlir::Value(),
          /*key_lengths=*/mlir::Value(), /*sinks=*/mlir::Value(), /*diagonal=*/mlir::Value(),
          /*runtime_seed=*/mlir::Value(), /*captures=*/mlir::ValueRange(), /*scale=*/nullptr,
          /*causal=*/nullptr,
          /*softcap=*/nullptr, /*window=*/nullptr, /*dropout_rate=*/nullptr,
          /*dropout_seed=*/nullptr);
      setCommon(op);
      setSinks(op);
      return op->getResults();
    }
    if (s.part == SdpaPart::Gradients) {
      // With maskGrad, a fourth result: the additive mask's gradient.
      mlir::Type maskGradType = s.maskGrad && mask ? mask.getType() : mlir::Type();
      auto op = mlir::attn::SdpaGradOp::create(ob, loc, a[0].getType(), a[1].getType(),
                                               a[2].getType(), maskGradType, a[0], a[1], a[2],
                                               a[3], a[4], a[5], mask, /*alibi_slopes=*/mlir::Value(),
                                               /*key_lengths=*/mlir::Value(),
                                               /*runtime_seed=*/mlir::Value(),
                                               /*captures=*/mlir::ValueRange(), /*scale=*/nullptr,
                                               /*causal=*/nullptr, /*softcap=*/nullptr,
                                               /*window=*/nullptr, /*dropout_rate=*/nullptr,
                                               /*dropout_seed=*/nullptr);
      setCommon(op);
      if (!sinks)
        return op->getResults();
      // dsinks from O, dO and the lse (attn-differentiate's rule).
      results.assign(op->result_begin(), op->result_end());
      results.push_back(mlir::attn::buildSinksAdjoint(ob, loc, a[4], a[3], a[5], sinks));
      return results;
    }
    auto op = mlir::attn::SdpaOp::create(ob, loc, a[0], a[1], a[2], mask);
    setCommon(op);
    setSinks(op);
    return op->getResults();
  });
  return Status();
}

Status mhaToMlir(const MhaSpec &s, std::string &mlir) {
  if (s.type != ElementType::F32 && s.type != ElementType::F16 &&
      s.type != ElementType::BF16)
    return Status::error("MhaSpec.type must be F32, F16 or BF16");
  DimReader r;
  int64_t b = r.dim("batch", s.batch, true);
  int64_t tq = r.dim("queryLen", s.queryLen, true);
  int64_t tk = r.dim("keyLen", s.keyLen, true);
  r.dim("embedDim", s.embedDim, false);
  r.dim("numHeads", s.numHeads, false);
  int64_t ekv = s.kvEmbedDim == 0 ? s.embedDim : s.kvEmbedDim;
  int64_t hkv = s.numKvHeads == 0 ? s.numHeads : s.numKvHeads;
  r.dim("kvEmbedDim", ekv, false);
  r.dim("numKvHeads", hkv, false);
  if (!r.error.empty())
    return Status::error("MhaSpec: " + r.error);
  if (s.headDim == 0 && s.embedDim % s.numHeads != 0)
    return Status::error("MhaSpec: embedDim " + std::to_string(s.embedDim) +
                         " is not divisible by numHeads " +
                         std::to_string(s.numHeads) + "; set headDim");
  int64_t d = s.headDim == 0 ? s.embedDim / s.numHeads : s.headDim;
  int64_t eo = s.outDim == 0 ? s.embedDim : s.outDim;
  r.dim("headDim", d, false);
  r.dim("outDim", eo, false);
  if (!r.error.empty())
    return Status::error("MhaSpec: " + r.error);
  FunctionBuilder fb(s.type);
  // query_input, kv_input, wq, wk, wv, wo, then bq, bk, bv, bo, then the mask.
  llvm::SmallVector<mlir::Type> args = {
      fb.tensor({b, tq, s.embedDim}),        fb.tensor({b, tk, ekv}),
      fb.tensor({s.numHeads * d, s.embedDim}), fb.tensor({hkv * d, ekv}),
      fb.tensor({hkv * d, ekv}),             fb.tensor({eo, s.numHeads * d})};
  if (s.bias)
    for (int64_t n : {s.numHeads * d, hkv * d, hkv * d, eo})
      args.push_back(fb.tensor({n}));
  if (s.mask != MaskKind::None) {
    std::vector<int64_t> shape;
    if (Status st = maskShape(r, s.maskShape, {b, s.numHeads, tq, tk}, shape); !st.ok())
      return st;
    if (!r.error.empty())
      return Status::error("MhaSpec: " + r.error);
    args.push_back(fb.mask(s.mask, shape));
  }
  if (Status st = checkFeatures(s, "MhaSpec"); !st.ok())
    return st;
  addFeatureArgs(s, fb, b, s.numHeads, args);
  mlir = fb.build("mha", args, [&](mlir::OpBuilder &ob, mlir::Location loc,
                                   mlir::ValueRange a) -> mlir::ValueRange {
    mlir::Value none;
    size_t next = 6;
    mlir::Value bq = s.bias ? a[next++] : none, bk = s.bias ? a[next++] : none,
                bv = s.bias ? a[next++] : none, bo = s.bias ? a[next++] : none;
    mlir::Value mask = s.mask != MaskKind::None ? a[next++] : none;
    mlir::Value slopes = s.alibi ? a[next++] : none;
    mlir::Value lengths = s.keyLengths ? a[next++] : none;
    mlir::Value sinks = s.sinks ? a[next++] : none;
    mlir::Value seed = s.runtimeSeed ? a[next++] : none;
    auto op = mlir::attn::MhaOp::create(
        ob, loc, a[0], a[1], a[2], a[3], a[4], a[5], bq, bk, bv, bo, mask,
        slopes, lengths, sinks, /*rope_cos=*/none,
        /*rope_sin=*/none, seed, /*captures=*/mlir::ValueRange(),
        ob.getI64IntegerAttr(s.numHeads),
        s.numKvHeads != 0 ? ob.getI64IntegerAttr(hkv) : mlir::IntegerAttr(),
        s.scale != 0 ? fb.f32(s.scale) : mlir::FloatAttr(), fb.causal(s.causal),
        /*softcap=*/mlir::FloatAttr(), /*window=*/mlir::attn::WindowAttr(),
        /*rope_style=*/mlir::attn::RopeStyleAttr(),
        s.dropoutRate != 0 ? fb.f32(s.dropoutRate) : mlir::FloatAttr(),
        s.dropoutRate != 0 && !s.runtimeSeed ? ob.getI64IntegerAttr(s.dropoutSeed)
                                             : mlir::IntegerAttr(),
        mlir::attn::WeightLayoutAttr::get(ob.getContext(),
                                          mlir::attn::WeightLayout::out_in));
    setFeatureAttrs(s, fb, op);
    return op->getResults();
  });
  return Status();
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

struct Kernel::Impl {
  std::string source;
  std::string entry;
  std::vector<TensorInfo> inputs, outputs;
  std::unique_ptr<rt::CompiledFunction> fn;
  bool deviceResident = false; // every TensorRef is a CUDA device buffer
  // The parsed module stays for the call-time shape checks, which run one at
  // a time and are cached per input-shape combination.
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  struct ShapeCheck {
    std::string error;
    std::vector<std::vector<int64_t>> resultShapes; // empty: unknown
    std::vector<std::optional<rt::KeyLengthBound>> keyBounds; // per input
    std::vector<rt::BlockTableCheck> blockTables;
  };
  mutable std::mutex mutex;
  mutable std::map<std::vector<std::vector<int64_t>>, ShapeCheck> checked;

  /// The (cached) check of one input-shape combination; entries of
  /// `checked` are never removed, so the one returned stays valid.
  const ShapeCheck &checkShapes(const std::vector<std::vector<int64_t>> &shapes) const {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = checked.find(shapes);
    if (it == checked.end()) {
      ShapeCheck c;
      if (llvm::Error e = rt::checkInputShapes(*module, entry, shapes, &c.resultShapes))
        c.error = llvm::toString(std::move(e));
      else {
        c.keyBounds = rt::keyLengthBounds(*module, entry, shapes);
        c.blockTables = rt::blockTableChecks(*module, entry, shapes);
      }
      it = checked.emplace(shapes, std::move(c)).first;
    }
    return it->second;
  }
};

Kernel::Kernel() : impl(std::make_unique<Impl>()) {}
Kernel::~Kernel() = default;

const std::vector<TensorInfo> &Kernel::inputs() const { return impl->inputs; }
const std::vector<TensorInfo> &Kernel::outputs() const { return impl->outputs; }
const std::string &Kernel::mlir() const { return impl->source; }

/// Appends an error diagnostic to `diags` as "location: message", one per
/// line (the text a Status carries); other severities are dropped.
static mlir::LogicalResult collectError(mlir::Diagnostic &d, std::string &diags) {
  if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    d.getLocation().print(os);
    diags += (diags.empty() ? "" : "\n") + loc + ": " + d.str();
  }
  return mlir::success();
}

Status Kernel::compile(const std::string &mlirText, const std::string &entry,
                       const CompileOptions &options,
                       std::unique_ptr<Kernel> &out) {
  out.reset();
  if (options.target != Target::Cpu && options.target != Target::Reference &&
      options.target != Target::Gpu)
    return Status::error("unknown target");
  if (options.deviceResident && options.target != Target::Gpu)
    return Status::error("deviceResident needs Target::Gpu");
  if (options.tf32 && options.target != Target::Gpu)
    return Status::error("tf32 needs Target::Gpu (the CPU kernels keep f32 precision)");
  if (options.optLevel > 3)
    return Status::error("optLevel must be 0..3, got " +
                         std::to_string(options.optLevel));
  std::unique_ptr<Kernel> k(new Kernel());
  Impl &im = *k->impl;
  im.source = mlirText;
  im.entry = entry;
  mlir::DialectRegistry registry;
  rt::registerJitDialects(registry);
  im.context = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diags;
  {
    mlir::ScopedDiagnosticHandler handler(
        im.context.get(), [&](mlir::Diagnostic &d) { return collectError(d, diags); });
    im.module = mlir::parseSourceString<mlir::ModuleOp>(
        mlirText, mlir::ParserConfig(im.context.get()), "input");
    if (!im.module)
      return Status::error("the IR does not parse or verify:\n" + diags);
  }
  rt::JitOptions jo;
  static_cast<PipelineOptions &>(jo) = options; // one options struct
  im.deviceResident = options.deviceResident;
  auto fn = rt::CompiledFunction::compile(
      *im.module, entry,
      options.target == Target::Cpu         ? rt::Pipeline::Cpu
      : options.target == Target::Reference ? rt::Pipeline::Reference
                                            : rt::Pipeline::Gpu,
      jo);
  if (!fn)
    return Status::error(llvm::toString(fn.takeError()));
  im.fn = std::move(*fn);
  for (const rt::TensorSpec &s : im.fn->argSpecs())
    im.inputs.push_back({s.dtype, s.shape});
  for (const rt::TensorSpec &s : im.fn->resultSpecs())
    im.outputs.push_back({s.dtype, s.shape});
  out = std::move(k);
  return Status();
}

Status differentiate(const std::string &mlirText, const std::string &functions,
                     std::string &out) {
  mlir::DialectRegistry registry;
  rt::registerJitDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diags;
  mlir::ScopedDiagnosticHandler handler(
      &ctx, [&](mlir::Diagnostic &d) { return collectError(d, diags); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(mlirText, mlir::ParserConfig(&ctx), "input");
  if (!module)
    return Status::error("the IR does not parse or verify:\n" + diags);
  mlir::PassManager pm(&ctx);
  mlir::attn::AttnDifferentiateOptions opts;
  opts.functions = functions;
  pm.addPass(mlir::attn::createAttnDifferentiate(opts));
  if (mlir::failed(pm.run(*module)))
    return Status::error("attn-differentiate failed:\n" + diags);
  out.clear();
  llvm::raw_string_ostream os(out);
  module->print(os);
  return Status();
}

Status Kernel::compileSdpa(const SdpaSpec &spec, const CompileOptions &options,
                           std::unique_ptr<Kernel> &out) {
  std::string text;
  if (Status s = sdpaToMlir(spec, text); !s.ok())
    return s;
  return compile(text, "sdpa", options, out);
}

Status Kernel::compileMha(const MhaSpec &spec, const CompileOptions &options,
                          std::unique_ptr<Kernel> &out) {
  std::string text;
  if (Status s = mhaToMlir(spec, text); !s.ok())
    return s;
  return compile(text, "mha", options, out);
}

/// Checks one caller tensor against its spec (dtype, rank, static sizes,
/// strides, data); `what` is e.g. "input #1".
static Status checkRef(const TensorRef &t, const TensorInfo &info,
                       const std::string &what, bool isOutput) {
  if (!validType(t.type))
    return Status::error(what + ": invalid element type");
  if (t.type != info.type)
    return Status::error(what + ": element type " +
                         rt::dtypeName(t.type).str() + ", expected " +
                         info.str());
  if (t.shape.size() != info.shape.size())
    return Status::error(what + ": rank " + std::to_string(t.shape.size()) +
                         " " + shapeStr(t.shape) + ", expected " + info.str());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] < 0)
      return Status::error(what + ": negative size at dim " + std::to_string(d));
    if (info.shape[d] >= 0 && info.shape[d] != t.shape[d])
      return Status::error(what + ": shape " + shapeStr(t.shape) +
                           " does not match " + info.str() + " at dim " +
                           std::to_string(d));
  }
  if (!t.strides.empty() && t.strides.size() != t.shape.size())
    return Status::error(what + ": " + std::to_string(t.strides.size()) +
                         " strides for rank " + std::to_string(t.shape.size()));
  int64_t numel = 1;
  for (int64_t s : t.shape)
    numel *= s;
  for (size_t d = 0; d < t.strides.size(); ++d) {
    if (t.strides[d] < 0)
      return Status::error(what + ": negative stride at dim " + std::to_string(d));
    if (isOutput && t.strides[d] == 0 && t.shape[d] > 1)
      return Status::error(what + ": stride 0 at dim " + std::to_string(d) +
                           " of size " + std::to_string(t.shape[d]) +
                           " would write one element several times");
  }
  if (numel > 0 && !t.data)
    return Status::error(what + ": null data pointer");
  return Status();
}

static bool isRowMajor(const TensorRef &t) {
  if (t.strides.empty())
    return true;
  std::vector<int64_t> rm = rt::rowMajorStrides(t.shape);
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1 && t.strides[d] != rm[d])
      return false;
  return true;
}

Status Kernel::resultShapes(const std::vector<std::vector<int64_t>> &inputShapes,
                            std::vector<std::vector<int64_t>> &shapes) const {
  const Impl &im = *impl;
  shapes.clear();
  if (inputShapes.size() != im.inputs.size())
    return Status::error("the kernel takes " + std::to_string(im.inputs.size()) +
                         " inputs, got " + std::to_string(inputShapes.size()));
  static char noData; // checkRef wants a pointer; nothing is read
  for (size_t i = 0; i < inputShapes.size(); ++i) {
    TensorRef shapeOnly{im.inputs[i].type, &noData, inputShapes[i], {}};
    if (Status s = checkRef(shapeOnly, im.inputs[i], "input #" + std::to_string(i),
                            false);
        !s.ok())
      return s;
  }
  const Impl::ShapeCheck &check = im.checkShapes(inputShapes);
  if (!check.error.empty())
    return Status::error(check.error);
  if (check.resultShapes.size() != im.outputs.size())
    return Status::error("the result shapes are not known before the call");
  shapes = check.resultShapes;
  return Status();
}

Status Kernel::call(const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs) const {
  const Impl &im = *impl;
  if (inputs.size() != im.inputs.size())
    return Status::error("the kernel takes " + std::to_string(im.inputs.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  if (outputs.size() != im.outputs.size())
    return Status::error("the kernel has " + std::to_string(im.outputs.size()) +
                         " outputs, got " + std::to_string(outputs.size()));
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Status s = checkRef(inputs[i], im.inputs[i], "input #" + std::to_string(i), false);
        !s.ok())
      return s;
    shapes.push_back(inputs[i].shape);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (Status s = checkRef(outputs[i], im.outputs[i], "output #" + std::to_string(i), true);
        !s.ok())
      return s;
  // Device buffers are not packed or scattered here: dense row-major only.
  if (im.deviceResident) {
    for (size_t i = 0; i < inputs.size() + outputs.size(); ++i) {
      const TensorRef &t = i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
      if (!isRowMajor(t))
        return Status::error((i < inputs.size() ? "input #" + std::to_string(i)
                                                : "output #" + std::to_string(i - inputs.size())) +
                             ": a device-resident kernel takes dense row-major buffers");
    }
  }

  // Do the call-time sizes fit together? Decided once per shape combination.
  const Impl::ShapeCheck *check = &im.checkShapes(shapes);
  if (!check->error.empty())
    return Status::error(check->error);
  const std::vector<std::vector<int64_t>> &resultShapes = check->resultShapes;
  const std::vector<std::optional<rt::KeyLengthBound>> &keyBounds = check->keyBounds;
  // Key lengths must lie in [0, Tk] (the kernels clamp; a caller's length
  // outside the range is an error, not a silently different result).
  for (size_t i = 0; i < keyBounds.size() && i < inputs.size(); ++i) {
    if (!keyBounds[i])
      continue;
    const TensorRef &t = inputs[i];
    int64_t n = t.shape.empty() ? 1 : t.shape[0];
    int64_t stride = t.strides.empty() ? 1 : t.strides[0];
    const void *values = t.data;
    std::vector<int64_t> host;
    if (im.deviceResident && n) {
      // On the device: look at a host copy.
      host.resize(n);
      std::string why = rt::cudaCopySync(host.data(), t.data,
                                         n * rt::dtypeSize(t.type));
      if (!why.empty())
        return Status::error("input #" + std::to_string(i) + " (key lengths): " + why);
      values = host.data();
    }
    for (int64_t k = 0; k < n; ++k) {
      int64_t len = t.type == ElementType::I32
                        ? static_cast<const int32_t *>(values)[k * stride]
                        : static_cast<const int64_t *>(values)[k * stride];
      if (std::string problem = keyBounds[i]->check(k, len); !problem.empty())
        return Status::error("input #" + std::to_string(i) + " (key lengths) " + problem);
    }
  }
  // Block ids a sequence uses must name a block of the cache (the kernels
  // clamp them; the caller's bad id is an error, not a different result).
  for (const rt::BlockTableCheck &c : check->blockTables) {
    if (im.deviceResident)
      break; // (device tables are not copied back to be checked)
    const TensorRef &t = inputs[c.tableArg];
    auto integer = [](const TensorRef &r, int64_t offset) -> int64_t {
      return r.type == ElementType::I32 ? static_cast<const int32_t *>(r.data)[offset]
                                        : static_cast<const int64_t *>(r.data)[offset];
    };
    auto strideOf = [](const TensorRef &r, size_t d) -> int64_t {
      if (!r.strides.empty())
        return r.strides[d];
      int64_t s = 1;
      for (size_t k = d + 1; k < r.shape.size(); ++k)
        s *= r.shape[k];
      return s;
    };
    std::string problem = c.check(
        t.shape[0], t.shape[1],
        [&](int64_t b, int64_t i) { return integer(t, b * strideOf(t, 0) + i * strideOf(t, 1)); },
        [&](int64_t b) {
          const TensorRef &len = inputs[c.lengthsArg];
          return integer(len, b * strideOf(len, 0));
        });
    if (!problem.empty())
      return Status::error("input #" + std::to_string(c.tableArg) + " (block table) " + problem);
  }
  for (size_t i = 0; i < resultShapes.size() && i < outputs.size(); ++i)
    if (outputs[i].shape != resultShapes[i])
      return Status::error("output #" + std::to_string(i) + ": shape " +
                           shapeStr(outputs[i].shape) + ", the result is " +
                           shapeStr(resultShapes[i]) + " for these inputs");

  // Nothing to write (a batch or length of 0): the compiled code is not run;
  // the CPU kernels divide their work by such sizes (SIGFPE with batch 0).
  if (!outputs.empty() && resultShapes.size() == outputs.size() &&
      std::all_of(outputs.begin(), outputs.end(), [](const TensorRef &o) {
        return std::find(o.shape.begin(), o.shape.end(), 0) != o.shape.end();
      }))
    return Status();

  // Contiguous inputs are passed as they are; others are packed.
  std::vector<std::vector<uint8_t>> scratch(inputs.size());
  std::vector<const void *> data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorRef &t = inputs[i];
    if (isRowMajor(t)) {
      data.push_back(t.data);
      continue;
    }
    size_t es = rt::dtypeSize(t.type);
    int64_t numel = 1;
    for (int64_t s : t.shape)
      numel *= s;
    scratch[i].resize(numel * es);
    rt::copyStrided(static_cast<const uint8_t *>(t.data), t.strides,
                    scratch[i].data(), rt::rowMajorStrides(t.shape), t.shape, es);
    data.push_back(scratch[i].data());
  }

  std::string sinkError;
  llvm::Error e = im.fn->callContiguous(
      data, shapes,
      [&](size_t i, const rt::CompiledFunction::ResultBuffer &r) {
        const TensorRef &o = outputs[i];
        if (r.shape.vec() != o.shape) {
          if (sinkError.empty())
            sinkError = "output #" + std::to_string(i) + ": shape " +
                        shapeStr(o.shape) + ", the result is " +
                        shapeStr(r.shape.vec());
          return;
        }
        if (im.deviceResident) {
          // A fresh dense device buffer (gpu.alloc): one device copy.
          int64_t numel = 1;
          for (int64_t s : o.shape)
            numel *= s;
          std::string why = rt::cudaCopySync(o.data, r.data,
                                             numel * rt::dtypeSize(o.type));
          if (!why.empty() && sinkError.empty())
            sinkError = "output #" + std::to_string(i) + ": " + why;
          return;
        }
        std::vector<int64_t> dst =
            o.strides.empty() ? rt::rowMajorStrides(o.shape) : o.strides;
        rt::copyStrided(r.data, r.strides, static_cast<uint8_t *>(o.data), dst,
                        o.shape, rt::dtypeSize(o.type));
      });
  if (e)
    return Status::error(llvm::toString(std::move(e)));
  if (!sinkError.empty())
    return Status::error(sinkError);
  return Status();
}

} // namespace attn
