//===- PartialTest.cpp - attn.sdpa_partial / merge_partial numerics -------===//
//
// attn.sdpa_partial through the cpu (fused kernel) and reference pipelines
// against the double reference: O = sdpa(...) and lse = log Σ_j exp(S'),
// computed here from the reference's masked scores. attn.merge_partial of
// two partials over the two halves of the keys must equal the reference
// sdpa over all keys (and its lse): the rule ring attention relies on.
//
//===----------------------------------------------------------------------===//
#include "NumericsTest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

using namespace attn;
using namespace attn::testing;
using runtime::ElementType;
using runtime::Pipeline;

namespace {

struct PartialCase {
  int64_t tq, tk, h, hkv, d, dv;
  ref::Causal causal;
  bool keepMask;
  ElementType dtype;
  std::optional<double> softcap;
};

std::string eltName(ElementType d) {
  return d == ElementType::F16 ? "f16" : d == ElementType::BF16 ? "bf16" : "f32";
}

std::string caseName(const PartialCase &c) {
  std::ostringstream os;
  os << "Tq" << c.tq << "_Tk" << c.tk << "_H" << c.h << "_Hkv" << c.hkv << "_D" << c.d << "_Dv"
     << c.dv << "_"
     << (c.causal == ref::Causal::None      ? "nocausal"
         : c.causal == ref::Causal::TopLeft ? "topleft"
                                            : "bottomright")
     << (c.keepMask ? "_mask" : "") << "_" << eltName(c.dtype) << (c.softcap ? "_softcap" : "");
  return os.str();
}

void PrintTo(const PartialCase &c, std::ostream *os) { *os << caseName(c); }

/// lse[b,h,i] = log Σ_j exp(s[b,h,i,j]) in double; -inf for an all -inf row.
ref::Tensor logSumExp(const ref::Tensor &s) {
  int64_t n = s.shape.back();
  std::vector<int64_t> shape(s.shape.begin(), s.shape.end() - 1);
  ref::Tensor out(shape);
  for (int64_t r = 0; r < out.numel(); ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j)
      m = std::max(m, s.data[r * n + j]);
    if (std::isinf(m) && m < 0) {
      out.data[r] = m;
      continue;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j)
      sum += std::exp(s.data[r * n + j] - m);
    out.data[r] = m + std::log(sum);
  }
  return out;
}

class SdpaPartial : public ::testing::TestWithParam<std::tuple<PartialCase, Pipeline>> {};

TEST_P(SdpaPartial, MatchesReferenceOutputAndLogSumExp) {
  auto [c, pipeline] = GetParam();
  std::string elt = eltName(c.dtype);
  std::string q = tensorType({1, c.h, c.tq, c.d}, elt), k = tensorType({1, c.hkv, c.tk, c.d}, elt),
              v = tensorType({1, c.hkv, c.tk, c.dv}, elt), m = tensorType({c.tq, c.tk}, "i1"),
              o = tensorType({1, c.h, c.tq, c.dv}), l = tensorType({1, c.h, c.tq});
  double scale = 0.3;
  std::ostringstream ir;
  ir << "func.func @f(%q: " << q << ", %k: " << k << ", %v: " << v
     << (c.keepMask ? ", %m: " + m : "") << ") -> (" << o << ", " << l << ") {\n"
     << "  %o, %l = attn.sdpa_partial %q, %k, %v" << (c.keepMask ? ", %m" : "") << " {"
     << (c.causal == ref::Causal::None ? "" : causalAttr(c.causal) + ", ")
     << (c.softcap ? "softcap = " + std::to_string(*c.softcap) + " : f32, " : "")
     << "scale = 0.3 : f32} : (" << q << ", " << k << ", " << v << (c.keepMask ? ", " + m : "")
     << ") -> (" << o << ", " << l << ")\n"
     << "  return %o, %l : " << o << ", " << l << "\n}\n";

  std::mt19937 gen(c.tq * 31 + c.tk + c.h + c.d);
  ref::Tensor tq = randomTensor({1, c.h, c.tq, c.d}, gen, -2, 2);
  ref::Tensor tk = randomTensor({1, c.hkv, c.tk, c.d}, gen, -2, 2);
  ref::Tensor tv = randomTensor({1, c.hkv, c.tk, c.dv}, gen);
  for (ref::Tensor *t : {&tq, &tk, &tv})
    roundTo(*t, c.dtype);
  ref::Mask mask;
  std::vector<ref::Tensor> inputs{tq, tk, tv};
  std::vector<ElementType> dtypes{c.dtype, c.dtype, c.dtype};
  if (c.keepMask) {
    // About one in four kept, and row 1 fully masked (lse = -inf, O = 0).
    ref::Tensor keep({c.tq, c.tk});
    for (int64_t i = 0; i < keep.numel(); ++i)
      keep.data[i] = (gen() % 4 == 0 && i / c.tk != 1) ? 1.0 : 0.0;
    mask = {ref::Mask::Kind::Keep, keep};
    inputs.push_back(keep);
    dtypes.push_back(ElementType::Bool);
  }
  ref::MaskOptions mo;
  mo.causal = c.causal;
  mo.mask = c.keepMask ? &mask : nullptr;
  ref::Tensor s = ref::scale(ref::scores(tq, tk), scale);
  if (c.softcap)
    s = ref::softcap(s, *c.softcap);
  s = ref::mask(s, mo);
  ref::Tensor wantO = ref::weightedSum(ref::softmax(s), tv);
  ref::Tensor wantL = logSumExp(s);

  Jitted fn(ir.str(), "f", pipeline);
  ASSERT_TRUE(fn.ok());
  std::vector<ref::Tensor> got = fn.run(inputs, dtypes);
  ASSERT_EQ(got.size(), 2u);
  // The fused kernel rounds only its inputs; the reference route also rounds
  // the scores and probabilities to the element type between ops.
  bool fused = pipeline == Pipeline::Cpu;
  double tol = c.dtype == ElementType::F32    ? 1e-5
               : c.dtype == ElementType::F16 ? (fused ? 2e-3 : 4e-3)
                                       : (fused ? 4e-3 : 3e-2);
  EXPECT_LE(relativeError(got[0], wantO), tol);
  EXPECT_LE(relativeError(got[1], wantL), tol);
  if (c.keepMask) {
    // The fully masked row: lse -inf, output 0.
    for (int64_t h = 0; h < c.h; ++h) {
      EXPECT_TRUE(std::isinf(got[1].at({0, h, 1})) && got[1].at({0, h, 1}) < 0);
      EXPECT_EQ(got[0].at({0, h, 1, 0}), 0.0);
    }
  }
}

std::vector<PartialCase> partialCases() {
  using C = ref::Causal;
  return {
      {37, 53, 4, 2, 64, 64, C::None, false, ElementType::F32, std::nullopt},
      {37, 53, 4, 4, 32, 48, C::TopLeft, false, ElementType::F32, std::nullopt},
      {20, 70, 2, 1, 64, 64, C::BottomRight, true, ElementType::F32, std::nullopt},
      {70, 40, 2, 2, 80, 16, C::BottomRight, false, ElementType::F32, 5.0},
      {64, 64, 8, 2, 128, 128, C::TopLeft, true, ElementType::F32, std::nullopt},
      {1, 200, 8, 2, 64, 64, C::BottomRight, false, ElementType::F32, std::nullopt}, // decode
      {33, 65, 4, 2, 64, 64, C::TopLeft, false, ElementType::F16, std::nullopt},
      {33, 65, 4, 2, 64, 64, C::None, true, ElementType::BF16, std::nullopt},
  };
}

std::string partialName(
    const ::testing::TestParamInfo<std::tuple<PartialCase, Pipeline>> &info) {
  return caseName(std::get<0>(info.param)) + "_" +
         runtime::pipelineName(std::get<1>(info.param)).str();
}

INSTANTIATE_TEST_SUITE_P(Partials, SdpaPartial,
                         ::testing::Combine(::testing::ValuesIn(partialCases()),
                                            ::testing::Values(Pipeline::Cpu,
                                                              Pipeline::Reference)),
                         partialName);

/// attn.sdpa_partial with diagonal(%s) and top-left causal keeps key j of
/// row i iff j <= i + s: the reference is the plain partial with the i1 mask
/// tril(s), built here. Shifts beyond [-Tq, Tk] (the kernel clamps them) and
/// at the int64 extremes must neither wrap nor change the answer.
class DiagonalShift : public ::testing::TestWithParam<std::tuple<int64_t, Pipeline>> {};

TEST_P(DiagonalShift, KeepsKeysUpToTheShiftedDiagonal) {
  auto [shift, pipeline] = GetParam();
  const int64_t h = 4, hkv = 2, tq = 37, tk = 53, d = 64;
  std::string q = tensorType({1, h, tq, d}), k = tensorType({1, hkv, tk, d}),
              o = tensorType({1, h, tq, d}), l = tensorType({1, h, tq});
  std::ostringstream ir;
  ir << "func.func @f(%q: " << q << ", %k: " << k << ", %v: " << k << ") -> (" << o << ", "
     << l << ") {\n"
     << "  %s = arith.constant " << shift << " : index\n"
     << "  %o, %l = attn.sdpa_partial %q, %k, %v diagonal(%s) {causal = "
        "#attn.causal<top_left>, scale = 0.3 : f32} : ("
     << q << ", " << k << ", " << k << ", index) -> (" << o << ", " << l << ")\n"
     << "  return %o, %l : " << o << ", " << l << "\n}\n";
  std::mt19937 gen(11);
  ref::Tensor tq_ = randomTensor({1, h, tq, d}, gen, -2, 2);
  ref::Tensor tk_ = randomTensor({1, hkv, tk, d}, gen, -2, 2);
  ref::Tensor tv = randomTensor({1, hkv, tk, d}, gen);
  ref::Tensor keep({tq, tk});
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j)
      keep.at({i, j}) = j - i <= shift ? 1.0 : 0.0; // j <= i + s without overflow
  ref::Mask mask{ref::Mask::Kind::Keep, keep};
  ref::MaskOptions mo;
  mo.mask = &mask;
  ref::Tensor s = ref::mask(ref::scale(ref::scores(tq_, tk_), 0.3), mo);
  ref::Tensor wantO = ref::weightedSum(ref::softmax(s), tv);
  ref::Tensor wantL = logSumExp(s);

  Jitted fn(ir.str(), "f", pipeline);
  ASSERT_TRUE(fn.ok());
  std::vector<ref::Tensor> got = fn.run({tq_, tk_, tv});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_LE(relativeError(got[0], wantO), 1e-5);
  EXPECT_LE(relativeError(got[1], wantL), 1e-5);
  // A row that sees no key: lse -inf, output 0.
  for (int64_t i = 0; i < tq; ++i)
    if (shift < -i) {
      EXPECT_TRUE(std::isinf(got[1].at({0, 0, i})) && got[1].at({0, 0, i}) < 0) << i;
      EXPECT_EQ(got[0].at({0, 0, i, 5}), 0.0) << i;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shifts, DiagonalShift,
    ::testing::Combine(::testing::Values(std::numeric_limits<int64_t>::min(), -37, -20, -1,
                                         0, 9, 52, 1000, std::numeric_limits<int64_t>::max()),
                       ::testing::Values(Pipeline::Cpu, Pipeline::Reference)),
    [](const ::testing::TestParamInfo<std::tuple<int64_t, Pipeline>> &info) {
      int64_t s = std::get<0>(info.param);
      // |s| as unsigned: -INT64_MIN does not fit an int64.
      std::string mag = std::to_string(s < 0 ? uint64_t(0) - uint64_t(s) : uint64_t(s));
      return (s < 0 ? "minus" + mag : mag) + "_" +
             runtime::pipelineName(std::get<1>(info.param)).str();
    });

/// Two partials over the halves [0, T1) and [T1, Tk) of the keys, merged,
/// equal the whole sdpa and its lse; the additive mask's columns split with
/// the keys.
class MergePartial : public ::testing::TestWithParam<Pipeline> {};

TEST_P(MergePartial, HalvesMergeToTheWhole) {
  Pipeline pipeline = GetParam();
  // D = Dv = 72: the merge's vector loop and its scalar tail.
  const int64_t h = 4, hkv = 2, tq = 29, t1 = 40, t2 = 33, d = 72;
  auto ty = [](std::vector<int64_t> s) { return tensorType(s); };
  std::string q = ty({1, h, tq, d}), k1 = ty({1, hkv, t1, d}), k2 = ty({1, hkv, t2, d}),
              m1 = ty({tq, t1}), m2 = ty({tq, t2}), o = ty({1, h, tq, d}), l = ty({1, h, tq});
  std::ostringstream ir;
  ir << "func.func @f(%q: " << q << ", %k1: " << k1 << ", %v1: " << k1 << ", %m1: " << m1
     << ", %k2: " << k2 << ", %v2: " << k2 << ", %m2: " << m2 << ") -> (" << o << ", " << l
     << ") {\n"
     << "  %o1, %l1 = attn.sdpa_partial %q, %k1, %v1, %m1 : (" << q << ", " << k1 << ", " << k1
     << ", " << m1 << ") -> (" << o << ", " << l << ")\n"
     << "  %o2, %l2 = attn.sdpa_partial %q, %k2, %v2, %m2 : (" << q << ", " << k2 << ", " << k2
     << ", " << m2 << ") -> (" << o << ", " << l << ")\n"
     << "  %o, %l = attn.merge_partial %o1, %l1, %o2, %l2 : " << o << ", " << l << "\n"
     << "  return %o, %l : " << o << ", " << l << "\n}\n";
  std::mt19937 gen(7);
  ref::Tensor tq_ = randomTensor({1, h, tq, d}, gen, -2, 2);
  ref::Tensor k = randomTensor({1, hkv, t1 + t2, d}, gen, -2, 2);
  ref::Tensor v = randomTensor({1, hkv, t1 + t2, d}, gen);
  ref::Tensor add = randomTensor({tq, t1 + t2}, gen, -3, 1);
  // Row 3 sees no key of the first half, row 5 none of the second, row 7
  // none at all.
  for (int64_t j = 0; j < t1 + t2; ++j) {
    if (j < t1)
      add.at({3, j}) = -INFINITY;
    else
      add.at({5, j}) = -INFINITY;
    add.at({7, j}) = -INFINITY;
  }
  auto cut = [](const ref::Tensor &t, int64_t dim, int64_t from, int64_t to) {
    std::vector<int64_t> shape = t.shape;
    shape[dim] = to - from;
    ref::Tensor out(shape);
    int64_t inner = 1, outer = 1;
    for (size_t i = dim + 1; i < t.shape.size(); ++i)
      inner *= t.shape[i];
    for (int64_t i = 0; i < dim; ++i)
      outer *= t.shape[i];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = from; r < to; ++r)
        for (int64_t x = 0; x < inner; ++x)
          out.data[(o * (to - from) + r - from) * inner + x] =
              t.data[(o * t.shape[dim] + r) * inner + x];
    return out;
  };
  std::vector<ref::Tensor> inputs{tq_,
                                  cut(k, 2, 0, t1),
                                  cut(v, 2, 0, t1),
                                  cut(add, 1, 0, t1),
                                  cut(k, 2, t1, t1 + t2),
                                  cut(v, 2, t1, t1 + t2),
                                  cut(add, 1, t1, t1 + t2)};
  ref::Mask mask{ref::Mask::Kind::Add, add};
  ref::SdpaOptions so;
  so.mask = &mask;
  ref::Tensor wantO = ref::sdpa(tq_, k, v, so);
  ref::MaskOptions mo;
  mo.mask = &mask;
  ref::Tensor wantL =
      logSumExp(ref::mask(ref::scale(ref::scores(tq_, k), 1.0 / std::sqrt(double(d))), mo));

  Jitted fn(ir.str(), "f", pipeline);
  ASSERT_TRUE(fn.ok());
  std::vector<ref::Tensor> got = fn.run(inputs);
  EXPECT_LE(relativeError(got[0], wantO), 1e-5);
  EXPECT_LE(relativeError(got[1], wantL), 1e-5);
  for (int64_t hh = 0; hh < h; ++hh) {
    EXPECT_TRUE(std::isinf(got[1].at({0, hh, 7})));
    EXPECT_EQ(got[0].at({0, hh, 7, 3}), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, MergePartial,
                         ::testing::Values(Pipeline::Cpu, Pipeline::Reference),
                         [](const ::testing::TestParamInfo<Pipeline> &info) {
                           return runtime::pipelineName(info.param).str();
                         });

} // namespace
