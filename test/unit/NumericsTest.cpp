//===- NumericsTest.cpp - JIT helpers for the numerics tests --------------===//
#include "NumericsTest.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace attn;
using namespace attn::testing;

std::string attn::testing::causalAttr(ref::Causal c) {
  switch (c) {
  case ref::Causal::None:
    return "";
  case ref::Causal::TopLeft:
    return "causal = #attn.causal<top_left>";
  case ref::Causal::BottomRight:
    return "causal = #attn.causal<bottom_right>";
  }
  return "";
}

std::string attn::testing::tensorType(const std::vector<int64_t> &shape,
                                      const std::string &elt) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + elt + ">";
}

struct Jitted::Impl {
  mlir::MLIRContext ctx;
  std::unique_ptr<runtime::CompiledFunction> fn;
  explicit Impl(mlir::DialectRegistry &r) : ctx(r) {}
};

Jitted::Jitted(const std::string &source, const std::string &entry,
               runtime::Pipeline pipeline, const runtime::JitOptions &options) {
  mlir::DialectRegistry registry;
  runtime::registerJitDialects(registry);
  impl = std::make_unique<Impl>(registry);
  impl->ctx.loadAllAvailableDialects();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &impl->ctx);
  if (!module) {
    ADD_FAILURE() << "does not parse:\n" << source;
    return;
  }
  // The reference pipeline is the unfused oracle: these tests check what
  // it lowers to, and LLVM's O3 on its loops was most of their time
  // (bench/NOTES.md, 2026-12-06: Test suite time: the reference grids at
  // O0). The fused pipelines keep the level asked for (default O3).
  runtime::JitOptions jitOptions = options;
  if (pipeline == runtime::Pipeline::Reference)
    jitOptions.optLevel = 0;
  auto compiled =
      runtime::CompiledFunction::compile(*module, entry, pipeline, jitOptions);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError()) << "\n" << source;
    return;
  }
  impl->fn = std::move(*compiled);
  fn = impl->fn.get();
}

Jitted::~Jitted() = default;

std::vector<ref::Tensor> Jitted::run(const std::vector<ref::Tensor> &inputs,
                                     const std::vector<runtime::ElementType> &dtypes) {
  std::vector<runtime::HostTensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    runtime::ElementType dt = i < dtypes.size() ? dtypes[i] : runtime::ElementType::F32;
    auto t = runtime::HostTensor::zeros(dt, inputs[i].shape);
    for (int64_t k = 0; k < t.numel(); ++k)
      t.setFromFloat(k, static_cast<float>(inputs[i].data[k]));
    args.push_back(std::move(t));
  }
  std::vector<ref::Tensor> out;
  if (!fn)
    return out;
  auto results = fn->call(args);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return out;
  }
  for (auto &r : *results) {
    ref::Tensor t(r.shape);
    for (int64_t k = 0; k < r.numel(); ++k)
      t.data[k] = r.getAsFloat(k);
    out.push_back(std::move(t));
  }
  return out;
}

void attn::testing::roundTo(ref::Tensor &t, runtime::ElementType dtype) {
  auto h = runtime::HostTensor::zeros(dtype, t.shape);
  for (int64_t i = 0; i < h.numel(); ++i) {
    h.setFromFloat(i, static_cast<float>(t.data[i]));
    t.data[i] = h.getAsFloat(i);
  }
}

ref::Tensor attn::testing::randomTensor(std::vector<int64_t> shape,
                                        std::mt19937 &gen, double lo, double hi) {
  std::uniform_real_distribution<double> uni(lo, hi);
  ref::Tensor t(std::move(shape));
  for (double &x : t.data)
    x = static_cast<float>(uni(gen)); // representable in f32
  return t;
}

double attn::testing::relativeError(const ref::Tensor &got,
                                    const ref::Tensor &want) {
  if (got.shape != want.shape)
    return INFINITY;
  double maxErr = 0, maxRef = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    double a = got.data[i], b = want.data[i];
    if (!std::isfinite(a) || !std::isfinite(b)) {
      bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same)
        return INFINITY;
      continue;
    }
    maxErr = std::max(maxErr, std::fabs(a - b));
    maxRef = std::max(maxRef, std::fabs(b));
  }
  return maxRef > 0 ? maxErr / maxRef : maxErr;
}

bool attn::testing::allFinite(const ref::Tensor &t) {
  for (double x : t.data)
    if (!std::isfinite(x))
      return false;
  return true;
}
