//===- Attention.cpp - the compile-and-call API ---------------------------===//
#include "attn/Attention.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Transforms/Passes.h"
#include "attn/Runtime/CudaRuntime.h"
#include "attn/Runtime/GuardedAlloc.h"
#include "attn/Runtime/Jit.h"
#include "attn/Runtime/PackedCall.h"

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
#include "llvm/ADT/ScopeExit.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace attn {

namespace rt = attn::runtime;

static bool validType(ElementType t) {
  return t == ElementType::F32 || t == ElementType::F16 || t == ElementType::Bool ||
         t == ElementType::I32 || t == ElementType::I64 || t == ElementType::BF16 ||
         t == ElementType::I8 || t == ElementType::F64 || t == ElementType::F8E4M3;
}

namespace {
/// Where Kernel::call packs strided inputs, one slot per input position,
/// kept per thread from call to call: memory allocated afresh for every
/// call faults in every page of it again, which took longer than the copy
/// (bench/NOTES.md, 2026-12-07: Strided inputs). A slot grows to the
/// largest input seen at its position; after a call the slots are kept
/// while they hold at most kKeptBytes in all, else freed.
class PackScratch {
public:
  static constexpr size_t kKeptBytes = size_t(256) << 20;

  static PackScratch &ofThisThread() {
    thread_local PackScratch scratch;
    return scratch;
  }
  uint8_t *slot(size_t i, size_t bytes) {
    if (slots.size() <= i)
      slots.resize(i + 1);
    Slot &s = slots[i];
    if (s.capacity < bytes) {
      s.data.reset(new uint8_t[bytes]);
      s.capacity = bytes;
      attn::runtime::adviseHugePages(s.data.get(), bytes);
    }
    return s.data.get();
  }
  void trim() {
    size_t total = 0;
    for (const Slot &s : slots)
      total += s.capacity;
    if (total > kKeptBytes)
      slots.clear();
  }

private:
  struct Slot {
    std::unique_ptr<uint8_t[]> data;
    size_t capacity = 0;
  };
  std::vector<Slot> slots;
};
} // namespace

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

/// The bytes [first, last) a tensor's elements span (empty for no
/// elements).
static rt::ByteSpan byteSpan(const TensorRef &t) {
  auto base = reinterpret_cast<uintptr_t>(t.data);
  std::vector<int64_t> strides = t.strides.empty() ? rt::rowMajorStrides(t.shape) : t.strides;
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 0)
      return {base, base};
    int64_t reach = (t.shape[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  auto es = static_cast<int64_t>(rt::dtypeSize(t.type));
  return {base + lo * es, base + (hi + 1) * es};
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

  // Contiguous inputs are passed as they are; others are packed into this
  // thread's scratch (uninitialised: the copy writes every byte).
  PackScratch &scratch = PackScratch::ofThisThread();
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
    uint8_t *packed = scratch.slot(i, static_cast<size_t>(numel) * es);
    rt::copyStrided(static_cast<const uint8_t *>(t.data), t.strides, packed,
                    rt::rowMajorStrides(t.shape), t.shape, es);
    data.push_back(packed);
  }
  auto trim = llvm::make_scope_exit([&] { scratch.trim(); });

  // Outputs that are dense, row-major and overlap no input (nor each
  // other) are the compiled code's destinations: a result it allocates is
  // written there, with no copy (attn-result-destinations).
  std::vector<rt::ResultDestination> destinations(outputs.size());
  std::vector<rt::ByteSpan> outputSpans;
  for (const TensorRef &o : outputs)
    outputSpans.push_back(byteSpan(o));
  if (!im.deviceResident && im.fn->takesResultDestinations()) {
    std::vector<rt::ByteSpan> inputSpans;
    for (const TensorRef &t : inputs)
      inputSpans.push_back(byteSpan(t));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TensorRef &o = outputs[i];
      if (!isRowMajor(o) || !o.data)
        continue;
      auto [lo, hi] = outputSpans[i];
      if (rt::overlapsOthers(i, outputSpans, inputSpans))
        continue;
      destinations[i] = {o.data, o.shape};
      // Often fresh memory (torch.empty) the kernel writes first: huge
      // pages make those writes fault once per 2 MiB (as for the copy
      // below).
      attn::runtime::adviseHugePages(o.data, hi - lo);
    }
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
        if (destinations[i].data && r.data == destinations[i].data)
          return; // written in place
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
        // A large output is often fresh memory (torch.empty): huge pages
        // make its first writes fault once per 2 MiB.
        auto [lo, hi] = outputSpans[i];
        if (hi > lo)
          attn::runtime::adviseHugePages(reinterpret_cast<void *>(lo), hi - lo);
        rt::copyStrided(r.data, r.strides, static_cast<uint8_t *>(o.data), dst,
                        o.shape, rt::dtypeSize(o.type));
      },
      nullptr, destinations);
  if (e)
    return Status::error(llvm::toString(std::move(e)));
  if (!sinkError.empty())
    return Status::error(sinkError);
  return Status();
}

} // namespace attn
