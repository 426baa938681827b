//===- NumericsTest.h - JIT attn IR and compare with the reference -*- C++ -*-===//
//
// Shared by the numerics tests of every lowering: builds IR text, compiles
// it through a pipeline, runs it on host tensors and compares with the
// double-precision reference in Reference/ (test/unit/Reference).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_NUMERICSTEST_H
#define ATTN_TEST_UNIT_NUMERICSTEST_H

#include "Reference/Reference.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace attn::testing {

/// "tensor<2x?x64xf32>" with -1 for a dynamic dim.
std::string tensorType(const std::vector<int64_t> &shape,
                       const std::string &elt = "f32");

/// "causal = #attn.causal<top_left>" / "<bottom_right>", or "" for none:
/// the attribute an attn.sdpa takes for `c`.
std::string causalAttr(ref::Causal c);

/// A function compiled through a pipeline, with its own MLIR context.
class Jitted {
public:
  /// Parses `source`, compiles `entry`; fails the current test on error.
  Jitted(const std::string &source, const std::string &entry,
         runtime::Pipeline pipeline, const runtime::JitOptions &options = {});
  ~Jitted();
  bool ok() const { return fn != nullptr; }
  /// The ops the pipeline left to the unfused reference lowering.
  const std::vector<std::string> &unfusedOps() const { return fn->unfusedOps(); }
  /// The compiled function, for tests of its calls.
  runtime::CompiledFunction &function() const { return *fn; }
  /// Runs on reference tensors converted to `dtypes` (F32 unless given).
  std::vector<ref::Tensor> run(const std::vector<ref::Tensor> &inputs,
                               const std::vector<runtime::ElementType> &dtypes = {});

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  runtime::CompiledFunction *fn = nullptr;
};

/// Uniform [-1, 1) values from a seeded generator.
ref::Tensor randomTensor(std::vector<int64_t> shape, std::mt19937 &gen,
                         double lo = -1.0, double hi = 1.0);

/// Rounds every element of `t` to `dtype` (F16, BF16; F32: to float), as
/// Jitted::run converts it: a reference computed on the result sees the
/// values the compiled code gets.
void roundTo(ref::Tensor &t, runtime::ElementType dtype);

/// max |a - b| / max |b|; NaN or inf where only one side has it is an
/// infinite error, and where both agree it is no error.
double relativeError(const ref::Tensor &got, const ref::Tensor &want);
bool allFinite(const ref::Tensor &t);

} // namespace attn::testing

#endif // ATTN_TEST_UNIT_NUMERICSTEST_H
