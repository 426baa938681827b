//===- Attention.cpp - the compile-and-call API ---------------------------===//
#include "attn/Attention.h"

#include "attn/Runtime/Jit.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

namespace attn {

namespace rt = attn::runtime;

static rt::DType toDType(ElementType t) {
  switch (t) {
  case ElementType::F32:
    return rt::DType::F32;
  case ElementType::F16:
    return rt::DType::F16;
  case ElementType::Bool:
    return rt::DType::Bool;
  }
  return rt::DType::F32;
}

static ElementType fromDType(rt::DType t) {
  switch (t) {
  case rt::DType::F32:
    return ElementType::F32;
  case rt::DType::F16:
    return ElementType::F16;
  case rt::DType::Bool:
    return ElementType::Bool;
  }
  return ElementType::F32;
}

static bool validType(ElementType t) {
  return t == ElementType::F32 || t == ElementType::F16 || t == ElementType::Bool;
}

static std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

std::string TensorInfo::str() const {
  return rt::TensorSpec{toDType(type), shape}.str();
}

//===----------------------------------------------------------------------===//
// Specs → IR
//===----------------------------------------------------------------------===//

namespace {
/// Builds `tensor<AxBx...xT>` text and checks sizes on the way.
struct IrWriter {
  std::string error;

  std::string dim(const char *name, int64_t v, bool mayBeDynamic) {
    if (v == -1 && mayBeDynamic)
      return "?";
    if (v <= 0 && error.empty())
      error = std::string(name) + " must be positive" +
              (mayBeDynamic ? " or -1 (given at call time)" : "") + ", got " +
              std::to_string(v);
    return std::to_string(v);
  }
  static std::string tensor(const std::vector<std::string> &dims, const char *elt) {
    std::string s = "tensor<";
    for (const std::string &d : dims)
      s += d + "x";
    return s + elt + ">";
  }
};

const char *eltName(ElementType t) {
  return t == ElementType::F16 ? "f16" : t == ElementType::Bool ? "i1" : "f32";
}

std::string f32Literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9e : f32", v);
  return buf;
}

/// `{scale = ..., causal = ..., ...}` (empty when nothing is set).
std::string attrDict(std::vector<std::string> entries) {
  if (entries.empty())
    return "";
  std::string s = " {";
  for (size_t i = 0; i < entries.size(); ++i)
    s += (i ? ", " : "") + entries[i];
  return s + "}";
}

std::string causalEntry(Causal c) {
  return c == Causal::TopLeft ? "causal = #attn.causal<top_left>"
                              : "causal = #attn.causal<bottom_right>";
}

/// The mask argument type, default [B,H,Tq,Tk].
Status maskType(IrWriter &w, MaskKind kind, ElementType floatType,
                const std::vector<int64_t> &maskShape,
                const std::vector<std::string> &full, std::string &type) {
  std::vector<std::string> dims = full;
  if (!maskShape.empty()) {
    if (maskShape.size() > 4)
      return Status::error("maskShape has rank " +
                           std::to_string(maskShape.size()) +
                           "; a mask broadcasts to [B,H,Tq,Tk] (rank <= 4)");
    dims.clear();
    for (int64_t d : maskShape)
      dims.push_back(w.dim("maskShape entries", d, true));
  }
  type = IrWriter::tensor(dims, kind == MaskKind::Keep ? "i1" : eltName(floatType));
  return Status();
}
} // namespace

Status sdpaToMlir(const SdpaSpec &s, std::string &mlir) {
  if (s.type == ElementType::Bool || !validType(s.type))
    return Status::error("SdpaSpec.type must be F32 or F16");
  IrWriter w;
  std::string b = w.dim("batch", s.batch, true);
  std::string h = w.dim("heads", s.heads, false);
  std::string hkv = s.kvHeads == 0 ? h : w.dim("kvHeads", s.kvHeads, false);
  std::string tq = w.dim("queryLen", s.queryLen, true);
  std::string tk = w.dim("keyLen", s.keyLen, true);
  std::string d = w.dim("headDim", s.headDim, false);
  std::string dv = s.valueDim == 0 ? d : w.dim("valueDim", s.valueDim, false);
  if (!w.error.empty())
    return Status::error("SdpaSpec: " + w.error);
  const char *e = eltName(s.type);
  std::string qt = IrWriter::tensor({b, h, tq, d}, e);
  std::string kt = IrWriter::tensor({b, hkv, tk, d}, e);
  std::string vt = IrWriter::tensor({b, hkv, tk, dv}, e);
  std::string ot = IrWriter::tensor({b, h, tq, dv}, e);
  std::string args = "%q: " + qt + ", %k: " + kt + ", %v: " + vt;
  std::string operands = "%q, %k, %v", types = qt + ", " + kt + ", " + vt;
  if (s.mask != MaskKind::None) {
    std::string mt;
    if (Status st = maskType(w, s.mask, s.type, s.maskShape, {b, h, tq, tk}, mt);
        !st.ok())
      return st;
    if (!w.error.empty())
      return Status::error("SdpaSpec: " + w.error);
    args += ", %mask: " + mt;
    operands += ", %mask";
    types += ", " + mt;
  }
  std::vector<std::string> attrs;
  if (s.scale != 0)
    attrs.push_back("scale = " + f32Literal(s.scale));
  if (s.causal != Causal::None)
    attrs.push_back(causalEntry(s.causal));
  if (s.dropoutRate != 0) {
    attrs.push_back("dropout_rate = " + f32Literal(s.dropoutRate));
    attrs.push_back("dropout_seed = " + std::to_string(s.dropoutSeed) + " : i64");
  }
  mlir = "func.func @sdpa(" + args + ") -> " + ot + " {\n" +
         "  %out = attn.sdpa " + operands + attrDict(attrs) + " : (" + types +
         ") -> " + ot + "\n  return %out : " + ot + "\n}\n";
  return Status();
}

Status mhaToMlir(const MhaSpec &s, std::string &mlir) {
  if (s.type == ElementType::Bool || !validType(s.type))
    return Status::error("MhaSpec.type must be F32 or F16");
  IrWriter w;
  std::string b = w.dim("batch", s.batch, true);
  std::string tq = w.dim("queryLen", s.queryLen, true);
  std::string tk = w.dim("keyLen", s.keyLen, true);
  w.dim("embedDim", s.embedDim, false);
  w.dim("numHeads", s.numHeads, false);
  int64_t ekv = s.kvEmbedDim == 0 ? s.embedDim : s.kvEmbedDim;
  int64_t hkv = s.numKvHeads == 0 ? s.numHeads : s.numKvHeads;
  w.dim("kvEmbedDim", ekv, false);
  w.dim("numKvHeads", hkv, false);
  if (!w.error.empty())
    return Status::error("MhaSpec: " + w.error);
  if (s.headDim == 0 && s.embedDim % s.numHeads != 0)
    return Status::error("MhaSpec: embedDim " + std::to_string(s.embedDim) +
                         " is not divisible by numHeads " +
                         std::to_string(s.numHeads) + "; set headDim");
  int64_t d = s.headDim == 0 ? s.embedDim / s.numHeads : s.headDim;
  int64_t eo = s.outDim == 0 ? s.embedDim : s.outDim;
  w.dim("headDim", d, false);
  w.dim("outDim", eo, false);
  if (!w.error.empty())
    return Status::error("MhaSpec: " + w.error);
  const char *e = eltName(s.type);
  auto n = [](int64_t v) { return std::to_string(v); };
  std::vector<std::pair<std::string, std::string>> in = {
      {"%xq", IrWriter::tensor({b, tq, n(s.embedDim)}, e)},
      {"%xkv", IrWriter::tensor({b, tk, n(ekv)}, e)},
      {"%wq", IrWriter::tensor({n(s.numHeads * d), n(s.embedDim)}, e)},
      {"%wk", IrWriter::tensor({n(hkv * d), n(ekv)}, e)},
      {"%wv", IrWriter::tensor({n(hkv * d), n(ekv)}, e)},
      {"%wo", IrWriter::tensor({n(eo), n(s.numHeads * d)}, e)}};
  std::string operands = "%xq, %xkv, %wq, %wk, %wv, %wo";
  if (s.bias) {
    in.push_back({"%bq", IrWriter::tensor({n(s.numHeads * d)}, e)});
    in.push_back({"%bk", IrWriter::tensor({n(hkv * d)}, e)});
    in.push_back({"%bv", IrWriter::tensor({n(hkv * d)}, e)});
    in.push_back({"%bo", IrWriter::tensor({n(eo)}, e)});
    operands += " qkv_bias(%bq, %bk, %bv) out_bias(%bo)";
  }
  if (s.mask != MaskKind::None) {
    std::string mt;
    if (Status st = maskType(w, s.mask, s.type, s.maskShape,
                             {b, n(s.numHeads), tq, tk}, mt);
        !st.ok())
      return st;
    if (!w.error.empty())
      return Status::error("MhaSpec: " + w.error);
    in.push_back({"%mask", mt});
    operands += " mask(%mask)";
  }
  std::string args, types;
  for (size_t i = 0; i < in.size(); ++i) {
    args += (i ? ", " : "") + in[i].first + ": " + in[i].second;
    types += (i ? ", " : "") + in[i].second;
  }
  std::vector<std::string> attrs = {"num_heads = " + n(s.numHeads) + " : i64"};
  if (s.numKvHeads != 0)
    attrs.push_back("num_kv_heads = " + n(hkv) + " : i64");
  if (s.scale != 0)
    attrs.push_back("scale = " + f32Literal(s.scale));
  if (s.causal != Causal::None)
    attrs.push_back(causalEntry(s.causal));
  std::string ot = IrWriter::tensor({b, tq, n(eo)}, e);
  mlir = "func.func @mha(" + args + ") -> " + ot + " {\n" +
         "  %out = attn.mha " + operands + attrDict(attrs) + " : (" + types +
         ") -> " + ot + "\n  return %out : " + ot + "\n}\n";
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
  // The parsed module stays for the call-time shape checks, which run one at
  // a time and are cached per input-shape combination.
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  struct ShapeCheck {
    std::string error;
    std::vector<std::vector<int64_t>> resultShapes; // empty: unknown
  };
  mutable std::mutex mutex;
  mutable std::map<std::vector<std::vector<int64_t>>, ShapeCheck> checked;
};

Kernel::Kernel() : impl(std::make_unique<Impl>()) {}
Kernel::~Kernel() = default;

const std::vector<TensorInfo> &Kernel::inputs() const { return impl->inputs; }
const std::vector<TensorInfo> &Kernel::outputs() const { return impl->outputs; }
const std::string &Kernel::mlir() const { return impl->source; }

Status Kernel::compile(const std::string &mlirText, const std::string &entry,
                       const CompileOptions &options,
                       std::unique_ptr<Kernel> &out) {
  out.reset();
  if (options.target != Target::Cpu && options.target != Target::Reference)
    return Status::error("unknown target");
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
    mlir::ScopedDiagnosticHandler handler(im.context.get(),
                                          [&](mlir::Diagnostic &d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
        std::string loc;
        llvm::raw_string_ostream os(loc);
        d.getLocation().print(os);
        diags += (diags.empty() ? "" : "\n") + loc + ": " + d.str();
      }
      return mlir::success();
    });
    im.module = mlir::parseSourceString<mlir::ModuleOp>(
        mlirText, mlir::ParserConfig(im.context.get()), "input");
    if (!im.module)
      return Status::error("the IR does not parse or verify:\n" + diags);
  }
  rt::JitOptions jo;
  jo.optLevel = options.optLevel;
  jo.tileQ = options.tileQ;
  jo.tileK = options.tileK;
  jo.threads = options.threads;
  auto fn = rt::CompiledFunction::compile(
      *im.module, entry,
      options.target == Target::Cpu ? rt::Pipeline::Cpu : rt::Pipeline::Reference,
      jo);
  if (!fn)
    return Status::error(llvm::toString(fn.takeError()));
  im.fn = std::move(*fn);
  for (const rt::TensorSpec &s : im.fn->argSpecs())
    im.inputs.push_back({fromDType(s.dtype), s.shape});
  for (const rt::TensorSpec &s : im.fn->resultSpecs())
    im.outputs.push_back({fromDType(s.dtype), s.shape});
  out = std::move(k);
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
                         rt::dtypeName(toDType(t.type)).str() + ", expected " +
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

  // Do the call-time sizes fit together? Decided once per shape combination.
  std::vector<std::vector<int64_t>> resultShapes;
  {
    std::lock_guard<std::mutex> lock(im.mutex);
    auto it = im.checked.find(shapes);
    if (it == im.checked.end()) {
      Impl::ShapeCheck c;
      if (llvm::Error e = rt::checkInputShapes(*im.module, im.entry, shapes,
                                               &c.resultShapes))
        c.error = llvm::toString(std::move(e));
      it = im.checked.emplace(shapes, std::move(c)).first;
    }
    if (!it->second.error.empty())
      return Status::error(it->second.error);
    resultShapes = it->second.resultShapes;
  }
  for (size_t i = 0; i < resultShapes.size() && i < outputs.size(); ++i)
    if (outputs[i].shape != resultShapes[i])
      return Status::error("output #" + std::to_string(i) + ": shape " +
                           shapeStr(outputs[i].shape) + ", the result is " +
                           shapeStr(resultShapes[i]) + " for these inputs");

  // Contiguous inputs are passed as they are; others are packed.
  std::vector<std::vector<uint8_t>> scratch(inputs.size());
  std::vector<const void *> data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorRef &t = inputs[i];
    if (isRowMajor(t)) {
      data.push_back(t.data);
      continue;
    }
    size_t es = rt::dtypeSize(toDType(t.type));
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
        std::vector<int64_t> dst =
            o.strides.empty() ? rt::rowMajorStrides(o.shape) : o.strides;
        rt::copyStrided(r.data, r.strides, static_cast<uint8_t *>(o.data), dst,
                        o.shape, rt::dtypeSize(toDType(o.type)));
      });
  if (e)
    return Status::error(llvm::toString(std::move(e)));
  if (!sinkError.empty())
    return Status::error(sinkError);
  return Status();
}

} // namespace attn
