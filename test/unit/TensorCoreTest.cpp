//===- TensorCoreTest.cpp - the tensor-core kernel, emulated, vs the reference ===//
//
// f16/bf16 sdpa with head dims 64/128 takes the mma.sync FlashAttention-2
// schedule in both GPU pipelines; attn-gpu-schedule-pipeline runs it on the
// CPU with the block's 128 threads in lockstep and the warp instructions
// through the fragment table. Each case against the double reference on
// the same (rounded) inputs. Tolerances: the output is rounded once to the
// input type (2^-11 f16, 2^-8 bf16 relative) and P is rounded to it before
// P·V, as on the GPU: 2e-3 (f16) and 1.6e-2 (bf16) of the largest output.
// f32 with tf32=true takes the same schedule with TF32 operands (Q, K, P, V
// rounded to 10 mantissa bits, ties away; f32 accumulators and output), on
// unrounded f32 inputs: 1e-3 of the largest output (measured 2.3-3.6e-4 with
// inputs in [-1, 1)); with Q in [-16, 16) (peaked attention, scores up to
// ~20, whose TF32 error grows with their size) 4e-3 (measured 1.5e-3).
//
//===----------------------------------------------------------------------===//
#include "NumericsTest.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace attn::testing;
using attn::runtime::ElementType;
using attn::runtime::Pipeline;
namespace ref = attn::ref;

namespace {

struct TcCase {
  int64_t b, h, hkv, tq, tk, d, dv;
  ref::Causal causal;
  ref::Mask::Kind mask;
  ElementType dtype;
  /// Q drawn from [-qRange, qRange): 1 gives scores of standard deviation
  /// ~0.3 (softmax near uniform); 16 gives peaked attention (~5, the
  /// largest ~20), where TF32's error on a score grows with its size.
  double qRange = 1;
};

void PrintTo(const TcCase &c, std::ostream *os) {
  *os << c.b << "x" << c.h << "/" << c.hkv << " Tq" << c.tq << " Tk" << c.tk << " D" << c.d
      << " Dv" << c.dv << " causal" << int(c.causal) << " mask" << int(c.mask)
      << (c.dtype == ElementType::BF16 ? " bf16" : c.dtype == ElementType::F32 ? " tf32" : " f16")
      << (c.qRange != 1 ? " q*" + std::to_string(int(c.qRange)) : "");
}

class TensorCore : public ::testing::TestWithParam<TcCase> {};

TEST_P(TensorCore, EmulatedKernelMatchesReference) {
  const TcCase &c = GetParam();
  std::string elt = c.dtype == ElementType::BF16 ? "bf16" : c.dtype == ElementType::F32 ? "f32" : "f16";
  std::string qT = tensorType({c.b, c.h, c.tq, c.d}, elt),
              kT = tensorType({c.b, c.hkv, c.tk, c.d}, elt),
              vT = tensorType({c.b, c.hkv, c.tk, c.dv}, elt),
              oT = tensorType({c.b, c.h, c.tq, c.dv}, elt),
              mT = c.mask == ref::Mask::Kind::None
                       ? ""
                       : tensorType({c.b, 1, c.tq, c.tk},
                                    c.mask == ref::Mask::Kind::Keep ? "i1" : elt);
  std::ostringstream src;
  src << "func.func @f(%q: " << qT << ", %k: " << kT << ", %v: " << vT
      << (mT.empty() ? "" : ", %m: " + mT) << ") -> " << oT << " {\n  %o = attn.sdpa %q, %k, %v"
      << (mT.empty() ? "" : ", %m") << (c.causal == ref::Causal::None ? "" : " {" + causalAttr(c.causal) + "}") << " : (" << qT << ", " << kT
      << ", " << vT << (mT.empty() ? "" : ", " + mT) << ") -> " << oT
      << "\n  return %o : " << oT << "\n}\n";

  std::mt19937 gen(c.tq * 131 + c.tk * 7 + c.d);
  auto q = randomTensor({c.b, c.h, c.tq, c.d}, gen, -c.qRange, c.qRange),
       k = randomTensor({c.b, c.hkv, c.tk, c.d}, gen),
       v = randomTensor({c.b, c.hkv, c.tk, c.dv}, gen);
  for (ref::Tensor *x : {&q, &k, &v})
    roundTo(*x, c.dtype);
  ref::Mask m;
  m.kind = c.mask;
  std::vector<ref::Tensor> inputs = {q, k, v};
  std::vector<ElementType> dtypes = {c.dtype, c.dtype, c.dtype};
  if (c.mask != ref::Mask::Kind::None) {
    m.values = ref::Tensor({c.b, 1, c.tq, c.tk});
    std::uniform_real_distribution<double> uni(-2.0, 2.0);
    for (double &x : m.values.data)
      x = c.mask == ref::Mask::Kind::Keep ? (gen() % 4 != 0 ? 1.0 : 0.0) : float(uni(gen));
    if (c.mask == ref::Mask::Kind::Add)
      roundTo(m.values, c.dtype);
    inputs.push_back(m.values);
    dtypes.push_back(c.mask == ref::Mask::Kind::Keep ? ElementType::Bool : c.dtype);
  }
  ref::SdpaOptions o;
  o.causal = c.causal;
  if (c.mask != ref::Mask::Kind::None)
    o.mask = &m;
  ref::Tensor want = ref::sdpa(q, k, v, o);

  attn::runtime::JitOptions options;
  options.tf32 = c.dtype == ElementType::F32;
  Jitted j(src.str(), "f", Pipeline::GpuSchedule, options);
  ASSERT_TRUE(j.ok());
  auto out = j.run(inputs, dtypes);
  ASSERT_EQ(out.size(), 1u);
  double tol = c.dtype == ElementType::BF16 ? 1.6e-2
               : c.dtype == ElementType::F32 ? (c.qRange > 1 ? 4e-3 : 1e-3)
                                       : 2e-3;
  EXPECT_LE(relativeError(out[0], want), tol);
}

using C = ref::Causal;
using M = ref::Mask::Kind;
INSTANTIATE_TEST_SUITE_P(
    Grid, TensorCore,
    ::testing::Values(
        // Decode and tiny query counts, keys that fill no tile evenly.
        TcCase{1, 4, 1, 1, 1000, 64, 64, C::None, M::None, ElementType::F16},
        TcCase{1, 8, 2, 7, 4099, 128, 128, C::BottomRight, M::None, ElementType::F16},
        TcCase{2, 2, 2, 2, 33, 64, 64, C::TopLeft, M::None, ElementType::BF16},
        // Several Q tiles, partial last tiles, both causal alignments.
        TcCase{2, 4, 2, 100, 130, 64, 64, C::BottomRight, M::None, ElementType::F16},
        TcCase{1, 2, 2, 130, 100, 64, 64, C::TopLeft, M::None, ElementType::F16},
        TcCase{1, 2, 1, 128, 96, 128, 64, C::BottomRight, M::None, ElementType::BF16},
        TcCase{1, 2, 2, 65, 257, 128, 128, C::None, M::None, ElementType::BF16},
        // Dv != D, GQA, masks (rows fully masked by the keep mask included
        // when causal hides the rest).
        TcCase{1, 4, 2, 70, 200, 64, 128, C::None, M::Keep, ElementType::F16},
        TcCase{2, 2, 1, 64, 64, 128, 128, C::TopLeft, M::Add, ElementType::F16},
        TcCase{1, 4, 4, 90, 90, 64, 64, C::BottomRight, M::Keep, ElementType::BF16},
        TcCase{1, 2, 2, 33, 129, 128, 64, C::None, M::Add, ElementType::BF16},
        // f32 as TF32: 32-key tiles at head dim 64, 16-key tiles when a head
        // dim is 128; Q read from global memory, V per element.
        TcCase{1, 4, 1, 1, 1000, 64, 64, C::None, M::None, ElementType::F32},
        TcCase{1, 8, 2, 7, 4099, 128, 128, C::BottomRight, M::None, ElementType::F32},
        TcCase{2, 4, 2, 100, 130, 64, 64, C::BottomRight, M::None, ElementType::F32},
        TcCase{1, 2, 2, 130, 100, 64, 64, C::TopLeft, M::None, ElementType::F32},
        TcCase{1, 2, 1, 128, 96, 128, 64, C::BottomRight, M::None, ElementType::F32},
        TcCase{1, 4, 2, 70, 200, 64, 128, C::None, M::Keep, ElementType::F32},
        TcCase{2, 2, 1, 64, 64, 128, 128, C::TopLeft, M::Add, ElementType::F32},
        TcCase{1, 2, 2, 33, 129, 128, 64, C::None, M::Add, ElementType::F32},
        // Peaked attention: large scores, where TF32 is least accurate.
        TcCase{1, 4, 2, 100, 300, 64, 64, C::BottomRight, M::None, ElementType::F32, 16},
        TcCase{1, 2, 2, 64, 200, 128, 128, C::None, M::None, ElementType::F32, 16},
        TcCase{1, 4, 2, 100, 300, 64, 64, C::BottomRight, M::None, ElementType::F16, 16}));

} // namespace
