//===- SpecToMlir.cpp - the API's specs as attn IR ------------------------===//
//
// sdpaToMlir and mhaToMlir (attn/Attention.h): an SdpaSpec or MhaSpec as a
// function of attn ops, the text Kernel::compileSdpa / compileMha compile.
//
//===----------------------------------------------------------------------===//
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
          : type == ElementType::F64  ? mlir::Type(b.getF64Type())
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
  /// The spec's element type (of Q, K, V, the output and a float mask).
  mlir::Type elementType() const { return elt; }

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

/// The element types a spec's tensors may have (f64: for checking).
static bool isSpecFloatType(ElementType t) {
  return t == ElementType::F32 || t == ElementType::F16 || t == ElementType::BF16 ||
         t == ElementType::F64;
}

Status sdpaToMlir(const SdpaSpec &s, std::string &mlir) {
  if (!isSpecFloatType(s.type))
    return Status::error("SdpaSpec.type must be F32, F16, BF16 or F64");
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
  bool tokensFirst[3] = {s.queryTokensFirst, s.keyTokensFirst, s.valueTokensFirst};
  if ((tokensFirst[0] || tokensFirst[1] || tokensFirst[2]) && s.part != SdpaPart::Output)
    return Status::error("SdpaSpec: tokens-first inputs need part Output");
  FunctionBuilder fb(s.type);
  llvm::SmallVector<mlir::Type> args = {
      tokensFirst[0] ? fb.tensor({b, tq, h, d}) : fb.tensor({b, h, tq, d}),
      tokensFirst[1] ? fb.tensor({b, tk, hkv, d}) : fb.tensor({b, hkv, tk, d}),
      tokensFirst[2] ? fb.tensor({b, tk, hkv, dv}) : fb.tensor({b, hkv, tk, dv})};
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
  // sdpa_partial's O and log-sum-exp: f32, f64 for f64.
  mlir::Type acc = mlir::attn::accumulatorType(fb.elementType());
  size_t firstExtra = 3;
  if (s.part == SdpaPart::Gradients) {
    // O (sdpa_partial's), dO, the log-sum-exp.
    args.insert(args.begin() + 3, {mlir::RankedTensorType::get({b, h, tq, dv}, acc),
                                   fb.tensor({b, h, tq, dv}),
                                   mlir::RankedTensorType::get({b, h, tq}, acc)});
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
    // Tokens-first inputs: their [B, heads, T, D] transposes.
    mlir::Value qkv[3] = {a[0], a[1], a[2]};
    for (int i = 0; i < 3; ++i) {
      if (!tokensFirst[i])
        continue;
      llvm::SmallVector<mlir::OpFoldResult> sizes =
          mlir::tensor::getMixedSizes(ob, loc, qkv[i]);
      std::swap(sizes[1], sizes[2]);
      auto element = mlir::cast<mlir::RankedTensorType>(qkv[i].getType()).getElementType();
      mlir::Value init = mlir::tensor::EmptyOp::create(ob, loc, sizes, element);
      qkv[i] = mlir::linalg::TransposeOp::create(ob, loc, qkv[i], init,
                                                 llvm::ArrayRef<int64_t>{0, 2, 1, 3})
                   .getResult()[0];
    }
    auto op = mlir::attn::SdpaOp::create(ob, loc, qkv[0], qkv[1], qkv[2], mask);
    setCommon(op);
    setSinks(op);
    return op->getResults();
  });
  return Status();
}

Status mhaToMlir(const MhaSpec &s, std::string &mlir) {
  if (!isSpecFloatType(s.type))
    return Status::error("MhaSpec.type must be F32, F16, BF16 or F64");
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

} // namespace attn
