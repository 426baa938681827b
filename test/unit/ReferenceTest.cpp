//===- ReferenceTest.cpp - Tests of the double-precision reference --------===//
//
// Hand-computed values for every op of attn::ref.
//
//===----------------------------------------------------------------------===//

#include "Reference/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace attn::ref;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

Tensor make(std::vector<int64_t> shape, std::vector<double> values) {
  Tensor t(std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  t.data = std::move(values);
  return t;
}

/// Deterministic pseudo-random fill in [-1, 1).
Tensor iota(std::vector<int64_t> shape, unsigned salt) {
  Tensor t(std::move(shape));
  uint64_t s = 0x1234567ULL + salt * 0x9E3779B97F4A7C15ULL;
  for (double &v : t.data) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v = static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
  return t;
}

Tensor transpose2d(const Tensor &w) {
  Tensor t({w.shape[1], w.shape[0]});
  for (int64_t i = 0; i < w.shape[0]; ++i)
    for (int64_t j = 0; j < w.shape[1]; ++j)
      t.at({j, i}) = w.at({i, j});
  return t;
}

void expectNear(const Tensor &a, const Tensor &b, double tol = 1e-12) {
  ASSERT_EQ(a.shape, b.shape);
  ASSERT_EQ(a.data.size(), b.data.size());
  for (size_t i = 0; i < a.data.size(); ++i)
    EXPECT_NEAR(a.data[i], b.data[i], tol) << "at flat index " << i;
}

} // namespace

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

TEST(RefTensor, Basics) {
  Tensor t({2, 3}, 1.5);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.rank(), 2);
  t.at({1, 2}) = 7;
  EXPECT_EQ(t.data[5], 7);
  EXPECT_EQ(static_cast<const Tensor &>(t).at({0, 0}), 1.5);
  EXPECT_THROW(t.at({2, 0}), std::out_of_range);
  EXPECT_THROW(t.at({0}), std::invalid_argument);
  Tensor scalar(std::vector<int64_t>{});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_THROW(Tensor({2, -1}), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

TEST(RefSoftmax, ZeroAndLn3) {
  Tensor p = softmax(make({2}, {0.0, std::log(3.0)}));
  EXPECT_NEAR(p.data[0], 0.25, 1e-15);
  EXPECT_NEAR(p.data[1], 0.75, 1e-15);
}

TEST(RefSoftmax, ShiftInvariantAndLargeValues) {
  // exp(1000) overflows unless the row max is subtracted.
  Tensor p = softmax(make({1, 2}, {1000.0, 1000.0 + std::log(3.0)}));
  EXPECT_NEAR(p.data[0], 0.25, 1e-12);
  EXPECT_NEAR(p.data[1], 0.75, 1e-12);
}

TEST(RefSoftmax, AllMinusInfRowGivesZeros) {
  Tensor p = softmax(make({3, 3}, {-kInf, -kInf, -kInf, //
                                   0.0, -kInf, 0.0,     //
                                   1.0, 1.0, 1.0}));
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(p.at({0, j}), 0.0);
    EXPECT_FALSE(std::isnan(p.at({0, j})));
  }
  EXPECT_NEAR(p.at({1, 0}), 0.5, 1e-15);
  EXPECT_EQ(p.at({1, 1}), 0.0);
  EXPECT_NEAR(p.at({1, 2}), 0.5, 1e-15);
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(p.at({2, j}), 1.0 / 3.0, 1e-15);
}

//===----------------------------------------------------------------------===//
// mask
//===----------------------------------------------------------------------===//

namespace {
// Scores [1,1,3,5] with value 10*i + j so unmasked entries are recognizable.
Tensor scores3x5() {
  Tensor s({1, 1, 3, 5});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      s.at({0, 0, i, j}) = 10.0 * i + j;
  return s;
}

void expectMasked(const Tensor &out, const bool expected[3][5]) {
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      if (expected[i][j])
        EXPECT_EQ(out.at({0, 0, i, j}), -kInf) << "(" << i << "," << j << ")";
      else
        EXPECT_EQ(out.at({0, 0, i, j}), 10.0 * i + j)
            << "(" << i << "," << j << ")";
    }
}
} // namespace

TEST(RefMask, CausalTopLeft3x5) {
  // Key j masked when j > i:
  //   row 0: keys 1 2 3 4 ; row 1: keys 2 3 4 ; row 2: keys 3 4.
  const bool expected[3][5] = {{false, true, true, true, true},
                               {false, false, true, true, true},
                               {false, false, false, true, true}};
  expectMasked(mask(scores3x5(), Causal::TopLeft, Mask{}), expected);
}

TEST(RefMask, CausalBottomRight3x5) {
  // Key j masked when j > i + Tk - Tq = i + 2:
  //   row 0: keys 3 4 ; row 1: key 4 ; row 2: none.
  const bool expected[3][5] = {{false, false, false, true, true},
                               {false, false, false, false, true},
                               {false, false, false, false, false}};
  expectMasked(mask(scores3x5(), Causal::BottomRight, Mask{}), expected);
}

TEST(RefMask, NoneIsIdentity) {
  const bool expected[3][5] = {};
  expectMasked(mask(scores3x5(), Causal::None, Mask{}), expected);
}

TEST(RefMask, KeepMaskBroadcastOverRows) {
  // A [Tk] mask (rank 1) broadcasts to [1,1,3,5]; keep keys 0, 2, 4.
  Mask m;
  m.kind = Mask::Kind::Keep;
  m.values = make({5}, {1, 0, 2, 0, 1}); // nonzero keeps
  const bool expected[3][5] = {{false, true, false, true, false},
                               {false, true, false, true, false},
                               {false, true, false, true, false}};
  expectMasked(mask(scores3x5(), Causal::None, m), expected);
}

TEST(RefMask, KeepMaskAndCausalCombine) {
  Mask m;
  m.kind = Mask::Kind::Keep;
  m.values = make({1, 1, 1, 5}, {0, 1, 1, 1, 1});
  const bool expected[3][5] = {{true, true, true, true, true},
                               {true, false, true, true, true},
                               {true, false, false, true, true}};
  Tensor out = mask(scores3x5(), Causal::TopLeft, m);
  expectMasked(out, expected);
  // Row 0 is entirely masked: softmax gives zeros.
  Tensor p = softmax(out);
  for (int64_t j = 0; j < 5; ++j)
    EXPECT_EQ(p.at({0, 0, 0, j}), 0.0);
  EXPECT_NEAR(p.at({0, 0, 1, 1}), 1.0, 1e-15);
}

TEST(RefMask, AddMaskBroadcastOverColumns) {
  // A [Tq, 1] = [3, 1] additive mask adds 100*i to row i.
  Mask m;
  m.kind = Mask::Kind::Add;
  m.values = make({3, 1}, {0, 100, 200});
  Tensor out = mask(scores3x5(), Causal::None, m);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      EXPECT_EQ(out.at({0, 0, i, j}), 110.0 * i + j);
}

TEST(RefMask, BroadcastPerBatchAndHead) {
  // s [2,2,1,2] zeros; mask [2,1,1,2] differs per batch, same for heads.
  Tensor s({2, 2, 1, 2}, 0.0);
  Mask m;
  m.kind = Mask::Kind::Add;
  m.values = make({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor out = mask(s, Causal::None, m);
  EXPECT_EQ(out.at({0, 0, 0, 0}), 1);
  EXPECT_EQ(out.at({0, 1, 0, 1}), 2);
  EXPECT_EQ(out.at({1, 0, 0, 0}), 3);
  EXPECT_EQ(out.at({1, 1, 0, 1}), 4);
}

TEST(RefMask, BadBroadcastThrows) {
  Mask m;
  m.kind = Mask::Kind::Keep;
  m.values = Tensor({4}, 1.0); // Tk is 5
  EXPECT_THROW(mask(scores3x5(), Causal::None, m), std::invalid_argument);
  m.values = Tensor({1, 1, 1, 1, 5}, 1.0); // rank 5
  EXPECT_THROW(mask(scores3x5(), Causal::None, m), std::invalid_argument);
  EXPECT_THROW(mask(Tensor({3, 5}), Causal::None, Mask{}),
               std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// scores / scale / weightedSum / sdpa
//===----------------------------------------------------------------------===//

TEST(RefScores, HandComputed) {
  // q [1,1,2,2] = [[1,2],[3,4]], k [1,1,3,2] = [[1,0],[0,1],[1,1]]
  Tensor q = make({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor k = make({1, 1, 3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor s = scores(q, k);
  ASSERT_EQ(s.shape, (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(s.data, (std::vector<double>{1, 2, 3, 3, 4, 7}));
  Tensor t = scale(s, 0.5);
  EXPECT_EQ(t.data, (std::vector<double>{0.5, 1, 1.5, 1.5, 2, 3.5}));
}

TEST(RefScores, ShapeErrors) {
  Tensor q({1, 4, 2, 8});
  EXPECT_THROW(scores(q, Tensor({1, 3, 2, 8})), std::invalid_argument); // 4%3
  EXPECT_THROW(scores(q, Tensor({1, 2, 2, 7})), std::invalid_argument); // D
  EXPECT_THROW(scores(q, Tensor({2, 2, 2, 8})), std::invalid_argument); // B
  EXPECT_THROW(scores(q, Tensor({1, 2, 8})), std::invalid_argument);    // rank
  Tensor bad({1, 2, 2, 8});
  bad.data.pop_back(); // inconsistent data
  EXPECT_THROW(scores(q, bad), std::invalid_argument);
}

TEST(RefScores, GqaHeadMapping) {
  // H = 4, Hkv = 2: query heads 0,1 read kv head 0; heads 2,3 read kv head 1.
  Tensor q({1, 4, 1, 1}, 1.0);
  Tensor k = make({1, 2, 1, 1}, {1.0, 10.0});
  Tensor s = scores(q, k);
  EXPECT_EQ(s.at({0, 0, 0, 0}), 1.0);
  EXPECT_EQ(s.at({0, 1, 0, 0}), 1.0);
  EXPECT_EQ(s.at({0, 2, 0, 0}), 10.0);
  EXPECT_EQ(s.at({0, 3, 0, 0}), 10.0); // head 3 reads kv head 1

  Tensor p({1, 4, 1, 1}, 1.0);
  Tensor v = make({1, 2, 1, 1}, {5.0, 7.0});
  Tensor o = weightedSum(p, v);
  EXPECT_EQ(o.at({0, 0, 0, 0}), 5.0);
  EXPECT_EQ(o.at({0, 1, 0, 0}), 5.0);
  EXPECT_EQ(o.at({0, 2, 0, 0}), 7.0);
  EXPECT_EQ(o.at({0, 3, 0, 0}), 7.0);

  // Through sdpa (Tk = 1, so each head returns its kv head's value).
  Tensor out = sdpa(Tensor({1, 4, 1, 1}, 0.3), k, v, {});
  EXPECT_EQ(out.at({0, 3, 0, 0}), 7.0);
  EXPECT_EQ(out.at({0, 1, 0, 0}), 5.0);
}

TEST(RefWeightedSum, HandComputed) {
  // p [1,1,1,2] = [0.25, 0.75]; v [1,1,2,2] = [[4, 8], [0, 4]]
  Tensor o = weightedSum(make({1, 1, 1, 2}, {0.25, 0.75}),
                         make({1, 1, 2, 2}, {4, 8, 0, 4}));
  EXPECT_EQ(o.shape, (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_EQ(o.data, (std::vector<double>{1, 5}));
  EXPECT_THROW(weightedSum(Tensor({1, 1, 1, 2}), Tensor({1, 1, 3, 2})),
               std::invalid_argument);
}

TEST(RefSdpa, SingleKeyReturnsV) {
  // Tq = Tk = 1: softmax of one score is 1, so the output is V (Dv != D).
  Tensor q = make({1, 1, 1, 2}, {0.3, -2.0});
  Tensor k = make({1, 1, 1, 2}, {5.0, 1.0});
  Tensor v = make({1, 1, 1, 3}, {1.5, -2.5, 4.0});
  Tensor o = sdpa(q, k, v, {});
  EXPECT_EQ(o.shape, (std::vector<int64_t>{1, 1, 1, 3}));
  expectNear(o, v, 1e-15);
}

TEST(RefSdpa, TwoKeysByHand) {
  // D = 2, default scale 1/sqrt(2). q = [sqrt(2) ln 3, 0], k0 = [1, 0],
  // k1 = [0, 1]: scaled scores [ln 3, 0] -> softmax [0.75, 0.25].
  // v0 = [4, 0], v1 = [0, 8] -> out = [3, 2].
  Tensor q = make({1, 1, 1, 2}, {std::sqrt(2.0) * std::log(3.0), 0.0});
  Tensor k = make({1, 1, 2, 2}, {1, 0, 0, 1});
  Tensor v = make({1, 1, 2, 2}, {4, 0, 0, 8});
  Tensor o = sdpa(q, k, v, {});
  EXPECT_NEAR(o.data[0], 3.0, 1e-12);
  EXPECT_NEAR(o.data[1], 2.0, 1e-12);

  // Explicit scale: q = [1, 0], scale = ln 3 gives the same.
  SdpaOptions opts;
  opts.scale = std::log(3.0);
  Tensor o2 = sdpa(make({1, 1, 1, 2}, {1, 0}), k, v, opts);
  EXPECT_NEAR(o2.data[0], 3.0, 1e-12);
  EXPECT_NEAR(o2.data[1], 2.0, 1e-12);

  // Keep mask dropping key 0 leaves only v1.
  Mask m;
  m.kind = Mask::Kind::Keep;
  m.values = make({2}, {0, 1});
  opts.mask = &m;
  Tensor o3 = sdpa(make({1, 1, 1, 2}, {1, 0}), k, v, opts);
  EXPECT_NEAR(o3.data[0], 0.0, 1e-15);
  EXPECT_NEAR(o3.data[1], 8.0, 1e-15);
}

TEST(RefSdpa, CausalTopLeftFirstRowSeesOnlyKeyZero) {
  Tensor q = iota({1, 2, 3, 4}, 1), k = iota({1, 2, 3, 4}, 2);
  Tensor v = iota({1, 2, 3, 5}, 3);
  SdpaOptions opts;
  opts.causal = Causal::TopLeft;
  Tensor o = sdpa(q, k, v, opts);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t e = 0; e < 5; ++e)
      EXPECT_NEAR(o.at({0, h, 0, e}), v.at({0, h, 0, e}), 1e-14);
}

TEST(RefSdpa, BottomRightFullyMaskedRowsGiveZeros) {
  // Tq = 3 > Tk = 2: bottom-right masks j > i - 1, so row 0 is all masked.
  Tensor q = iota({1, 1, 3, 2}, 4), k = iota({1, 1, 2, 2}, 5);
  Tensor v = iota({1, 1, 2, 2}, 6);
  SdpaOptions opts;
  opts.causal = Causal::BottomRight;
  Tensor o = sdpa(q, k, v, opts);
  EXPECT_EQ(o.at({0, 0, 0, 0}), 0.0);
  EXPECT_EQ(o.at({0, 0, 0, 1}), 0.0);
  EXPECT_NEAR(o.at({0, 0, 1, 0}), v.at({0, 0, 0, 0}), 1e-15);
}

TEST(RefSdpa, ShapeErrors) {
  Tensor q({1, 2, 3, 4}), k({1, 2, 5, 4});
  EXPECT_THROW(sdpa(q, k, Tensor({1, 2, 6, 4}), {}), std::invalid_argument);
  EXPECT_THROW(sdpa(q, k, Tensor({1, 1, 5, 4}), {}), std::invalid_argument);
  SdpaOptions bad;
  bad.dropoutRate = 1.5f;
  EXPECT_THROW(sdpa(q, k, Tensor({1, 2, 5, 4}), bad), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// split / merge / project
//===----------------------------------------------------------------------===//

TEST(RefHeads, SplitMergeRoundTripAndElement) {
  Tensor x({2, 3, 6});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data[i] = static_cast<double>(i);
  Tensor s = splitHeads(x, 3);
  ASSERT_EQ(s.shape, (std::vector<int64_t>{2, 3, 3, 2}));
  // s[b][h][t][d] = x[b][t][h*D + d] with D = 2:
  // s[1][2][0][1] = x[1][0][5] = 1*18 + 0*6 + 5 = 23.
  EXPECT_EQ(s.at({1, 2, 0, 1}), 23.0);
  // s[0][1][2][0] = x[0][2][2] = 14.
  EXPECT_EQ(s.at({0, 1, 2, 0}), 14.0);
  Tensor m = mergeHeads(s);
  EXPECT_EQ(m.shape, x.shape);
  EXPECT_EQ(m.data, x.data);
  EXPECT_THROW(splitHeads(x, 4), std::invalid_argument);
  EXPECT_THROW(splitHeads(x, 0), std::invalid_argument);
  EXPECT_THROW(splitHeads(Tensor({6, 6}), 2), std::invalid_argument);
  EXPECT_THROW(mergeHeads(x), std::invalid_argument);
}

TEST(RefProject, BothLayoutsWithBias) {
  // x [2,3] = [[1,2,3],[4,5,6]]; W (out_in) [2,3] = [[1,0,-1],[2,1,0]];
  // b = [10, 20].
  //   y[0] = [1 - 3 + 10, 2 + 2 + 20] = [8, 24]
  //   y[1] = [4 - 6 + 10, 8 + 5 + 20] = [8, 33]
  Tensor x = make({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = make({2, 3}, {1, 0, -1, 2, 1, 0});
  Tensor b = make({2}, {10, 20});
  Tensor y = project(x, w, &b, Layout::OutIn);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{8, 24, 8, 33}));
  Tensor yNoBias = project(x, w, nullptr, Layout::OutIn);
  EXPECT_EQ(yNoBias.data, (std::vector<double>{-2, 4, -2, 13}));

  // in_out: W [3,2] = [[1,2],[0,1],[-1,0]] is the transpose -> same result.
  Tensor wt = make({3, 2}, {1, 2, 0, 1, -1, 0});
  Tensor y2 = project(x, wt, &b, Layout::InOut);
  EXPECT_EQ(y2.data, (std::vector<double>{8, 24, 8, 33}));

  // in_out with a square weight is NOT the same as out_in:
  // W = [[1,2],[3,4]], x = [1,1] -> in_out: [4, 6]; out_in: [3, 7].
  Tensor sq = make({2, 2}, {1, 2, 3, 4});
  Tensor one = make({1, 2}, {1, 1});
  EXPECT_EQ(project(one, sq, nullptr, Layout::InOut).data,
            (std::vector<double>{4, 6}));
  EXPECT_EQ(project(one, sq, nullptr, Layout::OutIn).data,
            (std::vector<double>{3, 7}));

  // Leading dims are preserved: [2,1,3] -> [2,1,2].
  Tensor x3 = make({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y3 = project(x3, w, &b, Layout::OutIn);
  EXPECT_EQ(y3.shape, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(y3.data, (std::vector<double>{8, 24, 8, 33}));

  EXPECT_THROW(project(x, wt, &b, Layout::OutIn), std::invalid_argument);
  Tensor b3({3});
  EXPECT_THROW(project(x, w, &b3, Layout::OutIn), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

TEST(RefDropout, Threshold) {
  EXPECT_EQ(dropoutThreshold(0.0f), 0u);
  EXPECT_EQ(dropoutThreshold(0.5f), 1u << 23);
  EXPECT_EQ(dropoutThreshold(1.0f), 1u << 24);
  // 0.1f is 0.100000001490116...; * 2^24 = 1677721.625 -> ceil 1677722.
  EXPECT_EQ(dropoutThreshold(0.1f), 1677722u);
  EXPECT_THROW(dropoutThreshold(-0.1f), std::invalid_argument);
  EXPECT_THROW(dropoutThreshold(1.5f), std::invalid_argument);
  EXPECT_THROW(dropoutThreshold(std::nanf("")), std::invalid_argument);
}

TEST(RefDropout, GeneratorMatchesSplitmix64) {
  // splitmix64 from state 0 yields 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
  // 0x06C45D188009454F; the top 24 bits are 0xE220A8, 0x6E789E, 0x06C45D.
  EXPECT_TRUE(dropoutKeep(0, 0, 0xE220A8));
  EXPECT_FALSE(dropoutKeep(0, 0, 0xE220A8 + 1));
  EXPECT_TRUE(dropoutKeep(0, 1, 0x6E789E));
  EXPECT_FALSE(dropoutKeep(0, 1, 0x6E789E + 1));
  EXPECT_TRUE(dropoutKeep(0, 2, 0x06C45D));
  EXPECT_FALSE(dropoutKeep(0, 2, 0x06C45D + 1));
  // Negative seed wraps: seed -1, index 5 -> top 24 bits 13835693.
  EXPECT_TRUE(dropoutKeep(-1, 5, 13835693));
  EXPECT_FALSE(dropoutKeep(-1, 5, 13835694));
  // Threshold 0 keeps everything, 2^24 keeps nothing.
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_TRUE(dropoutKeep(42, i, 0));
    EXPECT_FALSE(dropoutKeep(42, i, 1u << 24));
  }
}

TEST(RefDropout, RateZeroKeepsEverything) {
  Tensor p = iota({3, 7}, 9);
  Tensor d = dropout(p, 0.0f, 1234);
  EXPECT_EQ(d.data, p.data);
}

TEST(RefDropout, RateOneDropsEverything) {
  Tensor d = dropout(Tensor({100}, 1.0), 1.0f, 7);
  for (double v : d.data)
    EXPECT_EQ(v, 0.0);
}

TEST(RefDropout, KeepFractionAndScaling) {
  const float rate = 0.3f;
  Tensor p({100000}, 1.0);
  Tensor d = dropout(p, rate, 99);
  const double factor = 1.0 / (1.0 - static_cast<double>(rate));
  int64_t kept = 0;
  for (double v : d.data) {
    if (v != 0.0) {
      ++kept;
      EXPECT_EQ(v, factor);
    }
  }
  double frac = static_cast<double>(kept) / 100000.0;
  EXPECT_NEAR(frac, 1.0 - rate, 0.01);
}

TEST(RefDropout, DeterministicPerSeedAndDifferentAcrossSeeds) {
  Tensor p({2, 3, 4, 50}, 1.0);
  Tensor a = dropout(p, 0.5f, 17), b = dropout(p, 0.5f, 17);
  Tensor c = dropout(p, 0.5f, 18);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  int64_t differ = 0;
  for (size_t i = 0; i < a.data.size(); ++i)
    differ += (a.data[i] == 0.0) != (c.data[i] == 0.0);
  // Independent masks at rate 0.5 disagree on about half the elements.
  EXPECT_GT(differ, static_cast<int64_t>(a.data.size()) / 4);
}

TEST(RefDropout, SdpaAppliesDropoutOnSoftmaxOutput) {
  Tensor q = iota({1, 2, 3, 4}, 11), k = iota({1, 2, 5, 4}, 12);
  Tensor v = iota({1, 2, 5, 3}, 13);
  SdpaOptions opts;
  opts.dropoutRate = 0.25f;
  opts.dropoutSeed = 5;
  Tensor expected = weightedSum(
      dropout(softmax(scale(scores(q, k), 0.5)), 0.25f, 5), v);
  expectNear(sdpa(q, k, v, opts), expected, 0.0);
}

//===----------------------------------------------------------------------===//
// mha
//===----------------------------------------------------------------------===//

TEST(RefMha, EqualsManualCompositionGqa) {
  // Cross-attention, B = 2, Tq = 3, Tk = 4, E = 8, H = 4, Hkv = 2, D = 2.
  const int64_t b = 2, tq = 3, tk = 4, e = 8, ekv = 6, h = 4, hkv = 2, d = 2;
  Tensor xq = iota({b, tq, e}, 21), xkv = iota({b, tk, ekv}, 22);
  MhaWeights w;
  w.wq = iota({h * d, e}, 23);
  w.wk = iota({hkv * d, ekv}, 24);
  w.wv = iota({hkv * d, ekv}, 25);
  w.wo = iota({e, h * d}, 26);
  Tensor bq = iota({h * d}, 27), bk = iota({hkv * d}, 28),
         bv = iota({hkv * d}, 29), bo = iota({e}, 30);
  w.bq = &bq;
  w.bk = &bk;
  w.bv = &bv;
  w.bo = &bo;
  SdpaOptions opts;
  opts.causal = Causal::BottomRight;

  Tensor out = mha(xq, xkv, w, h, hkv, opts);
  ASSERT_EQ(out.shape, (std::vector<int64_t>{b, tq, e}));

  // Manual composition, step by step.
  Tensor q = splitHeads(project(xq, w.wq, &bq, Layout::OutIn), h);
  Tensor k = splitHeads(project(xkv, w.wk, &bk, Layout::OutIn), hkv);
  Tensor v = splitHeads(project(xkv, w.wv, &bv, Layout::OutIn), hkv);
  Tensor s = scale(scores(q, k), 1.0 / std::sqrt(2.0));
  Tensor p = softmax(mask(s, Causal::BottomRight, Mask{}));
  Tensor expected =
      project(mergeHeads(weightedSum(p, v)), w.wo, &bo, Layout::OutIn);
  expectNear(out, expected, 1e-12);

  // Spot-check one output element with fully explicit loops (head 3 uses
  // kv head 1), independent of splitHeads/mergeHeads.
  {
    const int64_t bi = 1, i = 2, oc = 5;
    double acc = bo.data[oc];
    for (int64_t hi = 0; hi < h; ++hi) {
      int64_t kvh = hi / (h / hkv);
      double qv[2], sc[4], mx = -kInf, sum = 0;
      for (int64_t di = 0; di < d; ++di) {
        qv[di] = bq.data[hi * d + di];
        for (int64_t c = 0; c < e; ++c)
          qv[di] += xq.at({bi, i, c}) * w.wq.at({hi * d + di, c});
      }
      for (int64_t j = 0; j < tk; ++j) {
        sc[j] = 0;
        for (int64_t di = 0; di < d; ++di) {
          double kv = bk.data[kvh * d + di];
          for (int64_t c = 0; c < ekv; ++c)
            kv += xkv.at({bi, j, c}) * w.wk.at({kvh * d + di, c});
          sc[j] += qv[di] * kv;
        }
        sc[j] /= std::sqrt(2.0);
        if (j > i + tk - tq)
          sc[j] = -kInf;
        mx = std::max(mx, sc[j]);
      }
      for (int64_t j = 0; j < tk; ++j)
        sum += std::exp(sc[j] - mx);
      for (int64_t di = 0; di < d; ++di) {
        double o = 0;
        for (int64_t j = 0; j < tk; ++j) {
          double vv = bv.data[kvh * d + di];
          for (int64_t c = 0; c < ekv; ++c)
            vv += xkv.at({bi, j, c}) * w.wv.at({kvh * d + di, c});
          o += std::exp(sc[j] - mx) / sum * vv;
        }
        acc += o * w.wo.at({oc, hi * d + di});
      }
    }
    EXPECT_NEAR(out.at({bi, i, oc}), acc, 1e-12);
  }

  // in_out layout with transposed weights gives the same result.
  MhaWeights wt = w;
  wt.layout = Layout::InOut;
  wt.wq = transpose2d(w.wq);
  wt.wk = transpose2d(w.wk);
  wt.wv = transpose2d(w.wv);
  wt.wo = transpose2d(w.wo);
  expectNear(mha(xq, xkv, wt, h, hkv, opts), out, 1e-12);

  // Bad head counts throw.
  EXPECT_THROW(mha(xq, xkv, w, 3, hkv, opts), std::invalid_argument);
  EXPECT_THROW(mha(xq, xkv, w, h, 3, opts), std::invalid_argument);
}

TEST(RefMha, SelfAttentionNoBias) {
  // numKvHeads == numHeads, no biases, dropout on.
  Tensor x = iota({1, 5, 4}, 31);
  MhaWeights w;
  w.wq = iota({4, 4}, 32);
  w.wk = iota({4, 4}, 33);
  w.wv = iota({4, 4}, 34);
  w.wo = iota({4, 4}, 35);
  SdpaOptions opts;
  opts.causal = Causal::TopLeft;
  opts.dropoutRate = 0.5f;
  opts.dropoutSeed = 3;
  Tensor out = mha(x, x, w, 2, 2, opts);
  Tensor q = splitHeads(project(x, w.wq, nullptr, Layout::OutIn), 2);
  Tensor k = splitHeads(project(x, w.wk, nullptr, Layout::OutIn), 2);
  Tensor v = splitHeads(project(x, w.wv, nullptr, Layout::OutIn), 2);
  Tensor p = dropout(
      softmax(mask(scale(scores(q, k), 1.0 / std::sqrt(2.0)), Causal::TopLeft,
                   Mask{})),
      0.5f, 3);
  expectNear(out,
             project(mergeHeads(weightedSum(p, v)), w.wo, nullptr,
                     Layout::OutIn),
             1e-12);
}

//===----------------------------------------------------------------------===//
// Wave 2: softcap, window, ALiBi, key lengths, RoPE
//===----------------------------------------------------------------------===//

TEST(RefSoftcap, HandComputed1x1x2x2) {
  // c = 2: 2 tanh(0) = 0, 2 tanh(0.5), 2 tanh(-1), 2 tanh(50) = 2 (to 1e-15).
  Tensor y = softcap(make({1, 1, 2, 2}, {0.0, 1.0, -2.0, 100.0}), 2.0);
  EXPECT_EQ(y.at({0, 0, 0, 0}), 0.0);
  EXPECT_NEAR(y.at({0, 0, 0, 1}), 2.0 * 0.46211715726000974, 1e-15);
  EXPECT_NEAR(y.at({0, 0, 1, 0}), -2.0 * 0.76159415595576489, 1e-15);
  EXPECT_NEAR(y.at({0, 0, 1, 1}), 2.0, 1e-15);
}

TEST(RefSoftcap, ExtremeCapsAndErrors) {
  Tensor s = make({4}, {-3.0, -0.5, 0.25, 7.0});
  // A huge cap is the identity; a tiny one is c * sign(s).
  expectNear(softcap(s, 1e30), s, 1e-15);
  Tensor tiny = softcap(s, 1e-3);
  EXPECT_EQ(tiny.data, (std::vector<double>{-1e-3, -1e-3, 1e-3, 1e-3}));
  // -inf becomes -c: why the softcap comes before any mask.
  EXPECT_EQ(softcap(make({1}, {-kInf}), 3.0).data[0], -3.0);
  EXPECT_THROW(softcap(s, 0.0), std::invalid_argument);
  EXPECT_THROW(softcap(s, -1.0), std::invalid_argument);
  EXPECT_THROW(softcap(s, kInf), std::invalid_argument);
}

TEST(RefMask, WindowBottomRightLeft1Right0) {
  // Tq = 3, Tk = 5, d(i) = i + 2, kept d(i) - 1 <= j <= d(i):
  //   row 0: {1, 2}; row 1: {2, 3}; row 2: {3, 4}.
  MaskOptions o;
  o.window = Window{1, 0, Causal::BottomRight};
  const bool expected[3][5] = {{true, false, false, true, true},
                               {true, true, false, false, true},
                               {true, true, true, false, false}};
  expectMasked(mask(scores3x5(), o), expected);
  // The default align is bottom-right too.
  o.window = Window{1, 0};
  expectMasked(mask(scores3x5(), o), expected);
}

TEST(RefMask, WindowTopLeftBothSides) {
  // d(i) = i, kept i - 1 <= j <= i + 1: row 0 {0, 1}; row 1 {0, 1, 2};
  // row 2 {1, 2, 3}.
  MaskOptions o;
  o.window = Window{1, 1, Causal::TopLeft};
  const bool expected[3][5] = {{false, false, true, true, true},
                               {false, false, false, true, true},
                               {true, false, false, false, true}};
  expectMasked(mask(scores3x5(), o), expected);
}

TEST(RefMask, WindowOneSidedUnboundedAndZero) {
  MaskOptions o;
  // Unbounded on both sides: nothing masked.
  o.window = Window{};
  const bool none[3][5] = {};
  expectMasked(mask(scores3x5(), o), none);
  // right = 0 alone (bottom-right) is the bottom-right causal mask.
  o.window = Window{std::nullopt, 0};
  EXPECT_EQ(mask(scores3x5(), o).data,
            mask(scores3x5(), Causal::BottomRight, Mask{}).data);
  // left = 0 alone (top-left): row i keeps j >= i.
  o.window = Window{0, std::nullopt, Causal::TopLeft};
  const bool leftZero[3][5] = {{false, false, false, false, false},
                               {true, false, false, false, false},
                               {true, true, false, false, false}};
  expectMasked(mask(scores3x5(), o), leftZero);
  // left = right = 0: only the diagonal.
  o.window = Window{0, 0, Causal::TopLeft};
  const bool diag[3][5] = {{false, true, true, true, true},
                           {true, false, true, true, true},
                           {true, true, false, true, true}};
  expectMasked(mask(scores3x5(), o), diag);
}

TEST(RefMask, WindowUsesTheCausalDiagonal) {
  // causal top_left + window left = 1 (its align ignored): d(i) = i,
  // kept i - 1 <= j <= i: row 0 {0}; row 1 {0, 1}; row 2 {1, 2}.
  MaskOptions o;
  o.causal = Causal::TopLeft;
  o.window = Window{1, std::nullopt, Causal::BottomRight};
  const bool expected[3][5] = {{false, true, true, true, true},
                               {false, false, true, true, true},
                               {true, false, false, true, true}};
  expectMasked(mask(scores3x5(), o), expected);
  o.window = Window{-1, std::nullopt};
  EXPECT_THROW(mask(scores3x5(), o), std::invalid_argument);
}

TEST(RefMask, KeyLengthsMaskAndMoveTheDiagonal) {
  // B = 2, Tq = 2, Tk = 4, lengths {3, 0}: batch 0 keeps j < 3, batch 1
  // nothing. With bottom-right causal, d(i) = i + 3 - 2 = i + 1 in batch 0:
  // row 0 keeps {0, 1}, row 1 {0, 1, 2}.
  Tensor s({2, 1, 2, 4}, 1.0);
  MaskOptions o;
  o.keyLengths = std::vector<int64_t>{3, 0};
  Tensor y = mask(s, o);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(y.at({0, 0, i, j}), j < 3 ? 1.0 : -kInf);
      EXPECT_EQ(y.at({1, 0, i, j}), -kInf);
    }
  o.causal = Causal::BottomRight;
  y = mask(s, o);
  const bool keep[2][4] = {{true, true, false, false}, {true, true, true, false}};
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(y.at({0, 0, i, j}), keep[i][j] ? 1.0 : -kInf) << i << "," << j;
  // Out-of-range lengths are clamped to [0, Tk].
  o.causal = Causal::None;
  o.keyLengths = std::vector<int64_t>{9, -2};
  y = mask(s, o);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(y.at({0, 0, 1, j}), 1.0);
    EXPECT_EQ(y.at({1, 0, 1, j}), -kInf);
  }
  o.keyLengths = std::vector<int64_t>{1};
  EXPECT_THROW(mask(s, o), std::invalid_argument);
}

TEST(RefMask, AlibiBottomRightDistance) {
  // Scores 0, Tq = 3, Tk = 5, slopes [H] = {0.5, 2}: -slope * |i + 2 - j|.
  Tensor s({1, 2, 3, 5}, 0.0);
  Tensor slopes = make({2}, {0.5, 2.0});
  MaskOptions o;
  o.alibiSlopes = &slopes;
  Tensor y = mask(s, o);
  EXPECT_EQ(y.at({0, 0, 0, 0}), -1.0);  // |0 + 2 - 0| = 2
  EXPECT_EQ(y.at({0, 0, 0, 2}), 0.0);   // the diagonal
  EXPECT_EQ(y.at({0, 0, 0, 4}), -1.0);  // |0 + 2 - 4| = 2, right of it
  EXPECT_EQ(y.at({0, 1, 2, 0}), -8.0);  // |2 + 2 - 0| = 4, slope 2
  // The same distance with causal top_left (the ALiBi offset stays
  // bottom-right); masked keys are -inf.
  o.causal = Causal::TopLeft;
  y = mask(s, o);
  EXPECT_EQ(y.at({0, 0, 1, 0}), -1.5);  // |1 + 2 - 0| = 3
  EXPECT_EQ(y.at({0, 0, 1, 2}), -kInf); // j > i
  // With a key length of 3: |i + 3 - 3 - j| = |i - j|.
  o.causal = Causal::None;
  o.keyLengths = std::vector<int64_t>{3};
  y = mask(s, o);
  EXPECT_EQ(y.at({0, 0, 2, 0}), -1.0);
  EXPECT_EQ(y.at({0, 0, 2, 2}), 0.0);
  EXPECT_EQ(y.at({0, 0, 2, 3}), -kInf);
  // [B,H] slopes, and slope 0 is no bias.
  Tensor bh = make({1, 2}, {0.0, 1.0});
  o.alibiSlopes = &bh;
  o.keyLengths.reset();
  y = mask(s, o);
  EXPECT_EQ(y.at({0, 0, 0, 0}), 0.0);
  EXPECT_EQ(y.at({0, 1, 0, 0}), -2.0);
  Tensor bad = make({3}, {1, 2, 3});
  o.alibiSlopes = &bad;
  EXPECT_THROW(mask(s, o), std::invalid_argument);
}

TEST(RefMask, BiasThenKeepOrder) {
  // ALiBi and an additive mask are added, then the keep rules apply: a
  // window-masked key stays -inf whatever the bias.
  Tensor s({1, 1, 1, 3}, 1.0);
  Tensor slopes = make({1}, {1.0});
  Mask add;
  add.kind = Mask::Kind::Add;
  add.values = make({3}, {10, 20, 30});
  MaskOptions o;
  o.alibiSlopes = &slopes;
  o.mask = &add;
  o.window = Window{1, 0};
  // Tq = 1, Tk = 3: d(0) = 2; kept {1, 2}; bias -|2 - j|.
  Tensor y = mask(s, o);
  EXPECT_EQ(y.at({0, 0, 0, 0}), -kInf);
  EXPECT_EQ(y.at({0, 0, 0, 1}), 1.0 - 1.0 + 20.0);
  EXPECT_EQ(y.at({0, 0, 0, 2}), 1.0 + 30.0);
}

TEST(RefRope, NinetyDegreesBothStyles) {
  // cos = 0, sin = 1: y_p = -x_q, y_q = x_p.
  Tensor x = make({1, 1, 1, 4}, {1, 2, 3, 4});
  Tensor c = make({1, 2}, {0, 0}), s = make({1, 2}, {1, 1});
  // rotate_half pairs (0, 2), (1, 3).
  EXPECT_EQ(rope(x, c, s, RopeStyle::RotateHalf).data,
            (std::vector<double>{-3, -4, 1, 2}));
  // interleaved pairs (0, 1), (2, 3).
  EXPECT_EQ(rope(x, c, s, RopeStyle::Interleaved).data,
            (std::vector<double>{-2, 1, -4, 3}));
  // R = 2 < D = 4: only the pair (0, 1) turns, dims 2 and 3 pass through.
  Tensor c1 = make({1, 1}, {0}), s1 = make({1, 1}, {1});
  EXPECT_EQ(rope(x, c1, s1, RopeStyle::RotateHalf).data,
            (std::vector<double>{-2, 1, 3, 4}));
  EXPECT_EQ(rope(x, c1, s1, RopeStyle::Interleaved).data,
            (std::vector<double>{-2, 1, 3, 4}));
}

TEST(RefRope, PerPositionAndPerSequenceAngles) {
  // T = 2, D = R = 2: position 0 by 60 degrees, position 1 by 180.
  Tensor x = make({1, 1, 2, 2}, {1, 0, 1, 2});
  Tensor c = make({2, 1}, {0.5, -1.0}), s = make({2, 1}, {std::sqrt(3.0) / 2, 0.0});
  Tensor y = rope(x, c, s, RopeStyle::RotateHalf);
  EXPECT_NEAR(y.at({0, 0, 0, 0}), 0.5, 1e-15);
  EXPECT_NEAR(y.at({0, 0, 0, 1}), std::sqrt(3.0) / 2, 1e-15);
  EXPECT_EQ(y.at({0, 0, 1, 0}), -1.0);
  EXPECT_EQ(y.at({0, 0, 1, 1}), -2.0);
  // [B,T,R/2] tables: batch 0 turns by 90, batch 1 not at all.
  Tensor x2 = make({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor cb = make({2, 1, 1}, {0, 1}), sb = make({2, 1, 1}, {1, 0});
  EXPECT_EQ(rope(x2, cb, sb, RopeStyle::Interleaved).data,
            (std::vector<double>{-2, 1, 3, 4}));
  // Errors: R > D, T mismatch, cos/sin shapes differ.
  EXPECT_THROW(rope(x, make({2, 2}, {1, 1, 1, 1}), make({2, 2}, {0, 0, 0, 0}),
                    RopeStyle::RotateHalf),
               std::invalid_argument);
  EXPECT_THROW(rope(x, make({3, 1}, {1, 1, 1}), make({3, 1}, {0, 0, 0}),
                    RopeStyle::RotateHalf),
               std::invalid_argument);
  EXPECT_THROW(rope(x, c, make({2, 2}, {0, 0, 0, 0}), RopeStyle::RotateHalf),
               std::invalid_argument);
}

TEST(RefSdpa, FeaturesByHand) {
  // Tq = 1, Tk = 3, D = 1, scale 1, q = 1, k = {0, 1, 2}: scores {0, 1, 2};
  // v = {10, 20, 40}.
  Tensor q = make({1, 1, 1, 1}, {1}), k = make({1, 1, 3, 1}, {0, 1, 2});
  Tensor v = make({1, 1, 3, 1}, {10, 20, 40});
  SdpaOptions o;
  o.scale = 1.0;
  auto expected = [&](std::vector<double> s) {
    double m = -kInf, sum = 0, out = 0;
    for (double x : s)
      m = std::max(m, x);
    for (double x : s)
      sum += std::exp(x - m);
    for (size_t j = 0; j < s.size(); ++j)
      out += std::exp(s[j] - m) / sum * v.data[j];
    return out;
  };
  // softcap 1: tanh of the scores.
  o.softcap = 1.0;
  EXPECT_NEAR(sdpa(q, k, v, o).data[0],
              expected({0.0, std::tanh(1.0), std::tanh(2.0)}), 1e-12);
  // + ALiBi slope 1: -|0 + 3 - 1 - j| = {-2, -1, 0}.
  Tensor slopes = make({1}, {1.0});
  o.alibiSlopes = &slopes;
  EXPECT_NEAR(sdpa(q, k, v, o).data[0],
              expected({-2.0, std::tanh(1.0) - 1.0, std::tanh(2.0)}), 1e-12);
  // + key length 2: key 2 masked, ALiBi distance |0 + 2 - 1 - j| = {1, 0}.
  o.keyLengths = std::vector<int64_t>{2};
  EXPECT_NEAR(sdpa(q, k, v, o).data[0],
              expected({-1.0, std::tanh(1.0)}), 1e-12);
  // + window left 0 (bottom-right, d(0) = 1): only key 1.
  o.window = Window{0, std::nullopt};
  EXPECT_NEAR(sdpa(q, k, v, o).data[0], 20.0, 1e-12);
  // A key length of 0 leaves nothing: zeros.
  o.keyLengths = std::vector<int64_t>{0};
  EXPECT_EQ(sdpa(q, k, v, o).data[0], 0.0);
  // A window with right 0 anchored top-left at Tq = 1 keeps key 0 only;
  // with left 0 bottom-right and length 3 it keeps key 2.
  SdpaOptions w;
  w.scale = 1.0;
  w.window = Window{std::nullopt, 0, Causal::TopLeft};
  EXPECT_NEAR(sdpa(q, k, v, w).data[0], 10.0, 1e-12);
  w.window = Window{0, std::nullopt};
  EXPECT_NEAR(sdpa(q, k, v, w).data[0], 40.0, 1e-12);
}

TEST(RefMha, RopeRotatesQueriesAndKeys) {
  const int64_t b = 2, t = 3, e = 8, h = 2, hkv = 1, d = 4;
  Tensor x = iota({b, t, e}, 41);
  MhaWeights w;
  w.wq = iota({h * d, e}, 42);
  w.wk = iota({hkv * d, e}, 43);
  w.wv = iota({hkv * d, e}, 44);
  w.wo = iota({e, h * d}, 45);
  RopeTables r;
  r.cos = iota({b, t, 1}, 46);
  r.sin = iota({b, t, 1}, 47);
  r.style = RopeStyle::Interleaved;
  SdpaOptions opts;
  opts.causal = Causal::TopLeft;
  Tensor out = mha(x, x, w, h, hkv, opts, &r);
  Tensor q = rope(splitHeads(project(x, w.wq, nullptr, Layout::OutIn), h), r.cos,
                  r.sin, r.style);
  Tensor k = rope(splitHeads(project(x, w.wk, nullptr, Layout::OutIn), hkv), r.cos,
                  r.sin, r.style);
  Tensor v = splitHeads(project(x, w.wv, nullptr, Layout::OutIn), hkv);
  expectNear(out,
             project(mergeHeads(sdpa(q, k, v, opts)), w.wo, nullptr, Layout::OutIn),
             1e-12);
  // Without tables it differs.
  Tensor plain = mha(x, x, w, h, hkv, opts);
  double diff = 0;
  for (size_t i = 0; i < out.data.size(); ++i)
    diff = std::max(diff, std::fabs(out.data[i] - plain.data[i]));
  EXPECT_GT(diff, 1e-3);
}
