//===- ReferencePipelineTest.cpp - attn-reference-pipeline vs the C++ reference -===//
//
// JIT-runs every op, sdpa and mha through attn-reference-pipeline on seeded
// random inputs and compares with the double-precision reference
// (relative error <= 1e-5 in f32).
//
//===----------------------------------------------------------------------===//
#include "NumericsTest.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <tuple>

using namespace attn;
using namespace attn::testing;
using runtime::ElementType;
using runtime::Pipeline;

namespace {
constexpr double kTol = 1e-5;
constexpr int64_t kDyn = -1;

/// A random keep mask (about 3 in 4 kept) or additive mask (-inf at about
/// 1 in 8 positions).
ref::Mask randomMask(ref::Mask::Kind kind, std::vector<int64_t> shape,
                     std::mt19937 &gen) {
  ref::Mask m;
  m.kind = kind;
  m.values = ref::Tensor(std::move(shape));
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (double &x : m.values.data) {
    unsigned r = gen() % 8;
    if (kind == ref::Mask::Kind::Keep)
      x = r < 6 ? 1.0 : 0.0;
    else
      x = r == 0 ? -std::numeric_limits<double>::infinity()
                 : static_cast<float>(uni(gen));
  }
  return m;
}

//===----------------------------------------------------------------------===//
// One op at a time.
//===----------------------------------------------------------------------===//

TEST(ReferencePipeline, ProjectBothLayoutsWithBias) {
  std::mt19937 gen(1);
  const char *src = R"(
func.func @f(%x: tensor<2x5x12xf32>, %w: tensor<7x12xf32>, %b: tensor<7xf32>, %wt: tensor<12x7xf32>)
    -> (tensor<2x5x7xf32>, tensor<2x5x7xf32>) {
  %0 = attn.project %x, %w, %b : (tensor<2x5x12xf32>, tensor<7x12xf32>, tensor<7xf32>) -> tensor<2x5x7xf32>
  %1 = attn.project %x, %wt {layout = #attn.layout<in_out>} : (tensor<2x5x12xf32>, tensor<12x7xf32>) -> tensor<2x5x7xf32>
  return %0, %1 : tensor<2x5x7xf32>, tensor<2x5x7xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto x = randomTensor({2, 5, 12}, gen), w = randomTensor({7, 12}, gen),
       b = randomTensor({7}, gen), wt = randomTensor({12, 7}, gen);
  auto out = j.run({x, w, b, wt});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_LE(relativeError(out[0], ref::project(x, w, &b, ref::Layout::OutIn)), kTol);
  EXPECT_LE(relativeError(out[1], ref::project(x, wt, nullptr, ref::Layout::InOut)), kTol);
}

TEST(ReferencePipeline, SplitAndMergeHeadsDynamic) {
  std::mt19937 gen(2);
  const char *src = R"(
func.func @f(%x: tensor<?x?x24xf32>, %y: tensor<?x3x?x5xf32>) -> (tensor<?x4x?x6xf32>, tensor<?x?x15xf32>) {
  %0 = attn.split_heads %x {num_heads = 4 : i64} : (tensor<?x?x24xf32>) -> tensor<?x4x?x6xf32>
  %1 = attn.merge_heads %y : (tensor<?x3x?x5xf32>) -> tensor<?x?x15xf32>
  return %0, %1 : tensor<?x4x?x6xf32>, tensor<?x?x15xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  for (int64_t t : {1, 7}) {
    auto x = randomTensor({2, t, 24}, gen), y = randomTensor({2, 3, t, 5}, gen);
    auto out = j.run({x, y});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(relativeError(out[0], ref::splitHeads(x, 4)), 0.0);
    EXPECT_EQ(relativeError(out[1], ref::mergeHeads(y)), 0.0);
  }
}

TEST(ReferencePipeline, ScoresScaleWeightedSumWithGqa) {
  std::mt19937 gen(3);
  const char *src = R"(
func.func @f(%q: tensor<2x4x7x16xf32>, %k: tensor<2x2x9x16xf32>, %p: tensor<2x4x7x9xf32>, %v: tensor<2x2x9x5xf32>)
    -> (tensor<2x4x7x9xf32>, tensor<2x4x7x5xf32>) {
  %s = attn.scores %q, %k : (tensor<2x4x7x16xf32>, tensor<2x2x9x16xf32>) -> tensor<2x4x7x9xf32>
  %t = attn.scale %s {scale = 0.3 : f32} : tensor<2x4x7x9xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x4x7x9xf32>, tensor<2x2x9x5xf32>) -> tensor<2x4x7x5xf32>
  return %t, %o : tensor<2x4x7x9xf32>, tensor<2x4x7x5xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto q = randomTensor({2, 4, 7, 16}, gen), k = randomTensor({2, 2, 9, 16}, gen),
       p = randomTensor({2, 4, 7, 9}, gen), v = randomTensor({2, 2, 9, 5}, gen);
  auto out = j.run({q, k, p, v});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_LE(relativeError(out[0], ref::scale(ref::scores(q, k), static_cast<float>(0.3))),
            kTol);
  EXPECT_LE(relativeError(out[1], ref::weightedSum(p, v)), kTol);
}

TEST(ReferencePipeline, MaskCausalKeepAdditiveAndBroadcast) {
  std::mt19937 gen(4);
  const char *src = R"(
func.func @f(%s: tensor<2x3x5x7xf32>, %keep: tensor<5x7xi1>, %add: tensor<2x1x1x7xf32>)
    -> (tensor<2x3x5x7xf32>, tensor<2x3x5x7xf32>, tensor<2x3x5x7xf32>) {
  %0 = attn.mask %s, %keep {causal = #attn.causal<top_left>} : tensor<2x3x5x7xf32>, tensor<5x7xi1>
  %1 = attn.mask %s, %add {causal = #attn.causal<bottom_right>} : tensor<2x3x5x7xf32>, tensor<2x1x1x7xf32>
  %2 = attn.mask %s {causal = #attn.causal<bottom_right>} : tensor<2x3x5x7xf32>
  return %0, %1, %2 : tensor<2x3x5x7xf32>, tensor<2x3x5x7xf32>, tensor<2x3x5x7xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto s = randomTensor({2, 3, 5, 7}, gen);
  ref::Mask keep = randomMask(ref::Mask::Kind::Keep, {5, 7}, gen);
  ref::Mask add = randomMask(ref::Mask::Kind::Add, {2, 1, 1, 7}, gen);
  auto out = j.run({s, keep.values, add.values}, {ElementType::F32, ElementType::Bool, ElementType::F32});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_LE(relativeError(out[0], ref::mask(s, ref::Causal::TopLeft, keep)), kTol);
  EXPECT_LE(relativeError(out[1], ref::mask(s, ref::Causal::BottomRight, add)), kTol);
  EXPECT_LE(relativeError(out[2], ref::mask(s, ref::Causal::BottomRight, ref::Mask{})),
            kTol);
}

TEST(ReferencePipeline, SoftmaxWithFullyMaskedRows) {
  std::mt19937 gen(5);
  const char *src = R"(
func.func @f(%x: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %0 = attn.softmax %x : tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto x = randomTensor({3, 6}, gen, -5, 5);
  double ninf = -std::numeric_limits<double>::infinity();
  for (int c = 0; c < 6; ++c)
    x.at({1, c}) = ninf; // an entirely masked row
  x.at({2, 0}) = ninf;   // one masked key
  auto out = j.run({x});
  ASSERT_EQ(out.size(), 1u);
  ref::Tensor want = ref::softmax(x);
  EXPECT_LE(relativeError(out[0], want), kTol);
  for (int c = 0; c < 6; ++c)
    EXPECT_EQ(out[0].at({1, c}), 0.0);
  EXPECT_TRUE(allFinite(out[0]));
}

TEST(ReferencePipeline, DropoutMatchesTheCounterBasedGenerator) {
  std::mt19937 gen(6);
  const char *src = R"(
func.func @f(%p: tensor<2x3x17x19xf32>) -> tensor<2x3x17x19xf32> {
  %0 = attn.dropout %p {rate = 0.3 : f32, seed = 1234 : i64} : tensor<2x3x17x19xf32>
  return %0 : tensor<2x3x17x19xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto p = randomTensor({2, 3, 17, 19}, gen, 0.0, 1.0);
  auto first = j.run({p}), second = j.run({p});
  ASSERT_EQ(first.size(), 1u);
  ref::Tensor want = ref::dropout(p, 0.3f, 1234);
  EXPECT_LE(relativeError(first[0], want), kTol);
  EXPECT_EQ(relativeError(first[0], second[0]), 0.0) << "identical on every run";
  int64_t dropped = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    EXPECT_EQ(first[0].data[i] == 0.0, want.data[i] == 0.0) << "element " << i;
    dropped += want.data[i] == 0.0;
  }
  double frac = double(dropped) / want.data.size();
  EXPECT_NEAR(frac, 0.3, 0.05);
}

//===----------------------------------------------------------------------===//
// sdpa over the grid: B ∈ {1,2}, H ∈ {1,4}, Hkv ∈ {H,1}, Tq, Tk ∈
// {1,7,64,130}, D ∈ {16,64,80}, causal none/top_left/bottom_right, mask
// none/i1/additive. One compilation (dynamic B, Tq, Tk) serves every shape.
//===----------------------------------------------------------------------===//

using SdpaConfig = std::tuple<std::pair<int64_t, int64_t> /*H,Hkv*/, int64_t /*D*/,
                              ref::Causal, ref::Mask::Kind>;

/// sdpa IR with dynamic B, Tq, Tk and static heads and head dims.
std::string sdpaSource(int64_t h, int64_t hkv, int64_t d, ref::Causal causal,
                       ref::Mask::Kind maskKind) {
  std::string qT = tensorType({kDyn, h, kDyn, d}), kT = tensorType({kDyn, hkv, kDyn, d});
  std::string mT = maskKind == ref::Mask::Kind::None ? ""
                   : tensorType({kDyn, 1, kDyn, kDyn},
                                maskKind == ref::Mask::Kind::Keep ? "i1" : "f32");
  std::ostringstream src;
  src << "func.func @f(%q: " << qT << ", %k: " << kT << ", %v: " << kT
      << (mT.empty() ? "" : ", %m: " + mT) << ") -> " << qT << " {\n"
      << "  %o = attn.sdpa %q, %k, %v" << (mT.empty() ? "" : ", %m") << " {"
      << causalAttr(causal) << "} : (" << qT << ", " << kT << ", " << kT
      << (mT.empty() ? "" : ", " + mT) << ") -> " << qT << "\n"
      << "  return %o : " << qT << "\n}\n";
  return src.str();
}

/// Runs one grid configuration through `pipeline` over B ∈ {1,2} and
/// Tq, Tk ∈ {1,7,64,130}, comparing with the C++ reference within `tol`.
/// One compiled kernel (dynamic B, Tq, Tk) serves all 32 shapes. Pipelines
/// are compared through the oracle, not with each other: the reference
/// pipeline meets it within kTol on the same points (its own test), so
/// comparing the fused output with it too would compile a second kernel
/// per point to check what the two bounds already give.
void runSdpaGrid(const SdpaConfig &config, Pipeline pipeline, double tol,
                 const runtime::JitOptions &options = {}) {
  auto [heads, d, causal, maskKind] = config;
  auto [h, hkv] = heads;
  std::string src = sdpaSource(h, hkv, d, causal, maskKind);
  Jitted j(src, "f", pipeline, options);
  ASSERT_TRUE(j.ok());
  std::mt19937 gen(h * 1000 + d * 10 + int(causal) * 3 + int(maskKind));
  for (int64_t b : {1, 2})
    for (int64_t tq : {1, 7, 64, 130})
      for (int64_t tk : {1, 7, 64, 130}) {
        SCOPED_TRACE("B=" + std::to_string(b) + " Tq=" + std::to_string(tq) +
                     " Tk=" + std::to_string(tk));
        auto q = randomTensor({b, h, tq, d}, gen), k = randomTensor({b, hkv, tk, d}, gen),
             v = randomTensor({b, hkv, tk, d}, gen);
        ref::SdpaOptions opts;
        opts.causal = causal;
        std::vector<ref::Tensor> in{q, k, v};
        std::vector<ElementType> types{ElementType::F32, ElementType::F32, ElementType::F32};
        ref::Mask m;
        if (maskKind != ref::Mask::Kind::None) {
          m = randomMask(maskKind, {b, 1, tq, tk}, gen);
          opts.mask = &m;
          in.push_back(m.values);
          types.push_back(maskKind == ref::Mask::Kind::Keep ? ElementType::Bool : ElementType::F32);
        }
        auto out = j.run(in, types);
        ASSERT_EQ(out.size(), 1u);
        ref::Tensor want = ref::sdpa(q, k, v, opts);
        ASSERT_TRUE(allFinite(out[0])) << "fully masked rows give zeros, not NaN";
        ASSERT_LE(relativeError(out[0], want), tol);
      }
}

class SdpaGrid : public ::testing::TestWithParam<SdpaConfig> {};

TEST_P(SdpaGrid, ReferencePipelineMatchesReference) {
  runSdpaGrid(GetParam(), Pipeline::Reference, kTol);
}

TEST_P(SdpaGrid, CpuPipelineMatchesReference) {
  runSdpaGrid(GetParam(), Pipeline::Cpu, 1e-4);
}

// The GPU kernel schedule (blocks × threads, K/V tiles in workgroup buffers,
// online softmax per row), run on the CPU before mapping: blocks in
// parallel, each thread-level loop to completion before the next (the
// barrier).
TEST_P(SdpaGrid, GpuSchedulePipelineMatchesReference) {
  runSdpaGrid(GetParam(), Pipeline::GpuSchedule, 1e-4);
}

std::string sdpaName(const ::testing::TestParamInfo<SdpaConfig> &info) {
  auto [heads, d, causal, mask] = info.param;
  const char *c[] = {"nocausal", "topleft", "bottomright"};
  const char *m[] = {"nomask", "keep", "add"};
  return "H" + std::to_string(heads.first) + "_Hkv" + std::to_string(heads.second) +
         "_D" + std::to_string(d) + "_" + c[int(causal)] + "_" + m[int(mask)];
}

INSTANTIATE_TEST_SUITE_P(
    Grid, SdpaGrid,
    ::testing::Combine(
        ::testing::Values(std::make_pair(int64_t(1), int64_t(1)),
                          std::make_pair(int64_t(4), int64_t(4)),
                          std::make_pair(int64_t(4), int64_t(1))),
        ::testing::Values(int64_t(16), int64_t(64), int64_t(80)),
        ::testing::Values(ref::Causal::None, ref::Causal::TopLeft,
                          ref::Causal::BottomRight),
        ::testing::Values(ref::Mask::Kind::None, ref::Mask::Kind::Keep,
                          ref::Mask::Kind::Add)),
    sdpaName);

/// The cpu pipeline with `tiles` over the grid: H 4, Hkv 2, D 24, every
/// causal kind × every mask kind.
void runCpuGridWithTiles(int64_t tileQ, int64_t tileK) {
  runtime::JitOptions tiles;
  tiles.tileQ = tileQ;
  tiles.tileK = tileK;
  for (auto causal : {ref::Causal::None, ref::Causal::TopLeft, ref::Causal::BottomRight})
    for (auto mask : {ref::Mask::Kind::None, ref::Mask::Kind::Keep, ref::Mask::Kind::Add}) {
      SCOPED_TRACE(int(causal) * 3 + int(mask));
      runSdpaGrid({{4, 2}, 24, causal, mask}, Pipeline::Cpu, 1e-4, tiles);
    }
}

// Small tiles put many Q and K/V tiles (and remainders) in every shape of
// the grid: tile-q 8, tile-k 16.
TEST(CpuPipeline, SmallTilesOverTheGrid) { runCpuGridWithTiles(8, 16); }

// tile-q 20: the softmax takes the first 16 rows of every tile as row
// groups of the vector width (two of 8 lanes, or one of 16) and the last
// 4 one by one, in the same tile; rows that see no key yet (bottom-right
// causal, masks) sit in both.
TEST(CpuPipeline, SoftmaxRowGroupsAndSingleRows) { runCpuGridWithTiles(20, 32); }

// Value head dim different from (and not a multiple of the vector width
// unlike) the query head dim; an explicit scale; a rank-2 additive mask.
// The GPU schedule with small and odd tiles (more blocks, partial Q tiles,
// several K/V tiles per block), and with D = 128, where tile-k is halved
// until the workgroup buffers fit in 48 KiB.
TEST(GpuSchedulePipeline, SmallTilesAndWideHeadsOverTheGrid) {
  runtime::JitOptions small;
  small.tileQ = 5;
  small.tileK = 3;
  for (auto causal : {ref::Causal::None, ref::Causal::TopLeft, ref::Causal::BottomRight})
    for (auto mask : {ref::Mask::Kind::None, ref::Mask::Kind::Keep, ref::Mask::Kind::Add}) {
      SCOPED_TRACE(int(causal) * 3 + int(mask));
      runSdpaGrid({{4, 2}, 24, causal, mask}, Pipeline::GpuSchedule, 1e-4, small);
    }
  for (auto causal : {ref::Causal::None, ref::Causal::BottomRight})
    runSdpaGrid({{2, 1}, 128, causal, ref::Mask::Kind::Keep}, Pipeline::GpuSchedule,
                1e-4);
}

TEST(CpuPipeline, ValueHeadDimScaleAndRank2Mask) {
  std::mt19937 gen(17);
  const char *src = R"(
func.func @f(%q: tensor<2x3x37x20xf32>, %k: tensor<2x3x53x20xf32>, %v: tensor<2x3x53x12xf32>,
             %m: tensor<37x53xf32>) -> tensor<2x3x37x12xf32> {
  %o = attn.sdpa %q, %k, %v, %m {scale = 0.3 : f32, causal = #attn.causal<bottom_right>}
      : (tensor<2x3x37x20xf32>, tensor<2x3x53x20xf32>, tensor<2x3x53x12xf32>, tensor<37x53xf32>)
        -> tensor<2x3x37x12xf32>
  return %o : tensor<2x3x37x12xf32>
})";
  runtime::JitOptions opts;
  opts.tileQ = 16;
  opts.tileK = 32;
  Jitted j(src, "f", Pipeline::Cpu, opts);
  auto q = randomTensor({2, 3, 37, 20}, gen), k = randomTensor({2, 3, 53, 20}, gen),
       v = randomTensor({2, 3, 53, 12}, gen);
  ref::Mask m = randomMask(ref::Mask::Kind::Add, {37, 53}, gen);
  ref::SdpaOptions o;
  o.scale = static_cast<float>(0.3);
  o.causal = ref::Causal::BottomRight;
  o.mask = &m;
  auto out = j.run({q, k, v, m.values});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], ref::sdpa(q, k, v, o)), 1e-4);
}

// Dropout through the CPU pipeline (the fused kernel since it takes
// dropout; FeatureGridTest's FusedDropout covers its features) matches
// the reference.
TEST(CpuPipeline, DropoutMatches) {
  std::mt19937 gen(18);
  const char *src = R"(
func.func @f(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32> {
  %o = attn.sdpa %q, %k, %k {dropout_rate = 0.5 : f32, dropout_seed = 3 : i64}
      : (tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32>
  return %o : tensor<1x2x9x16xf32>
})";
  Jitted j(src, "f", Pipeline::Cpu);
  auto q = randomTensor({1, 2, 9, 16}, gen), k = randomTensor({1, 2, 9, 16}, gen);
  ref::SdpaOptions o;
  o.dropoutRate = 0.5f;
  o.dropoutSeed = 3;
  auto out = j.run({q, k});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], ref::sdpa(q, k, k, o)), 1e-5);
}

// Scores near ±1e4 through the fused path: no overflow, no NaN.
TEST(CpuPipeline, LargeMagnitudeScoresStayFinite) {
  std::mt19937 gen(19);
  const char *src = R"(
func.func @f(%q: tensor<1x2x70x16xf32>, %k: tensor<1x2x90x16xf32>, %v: tensor<1x2x90x16xf32>) -> tensor<1x2x70x16xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 1.0 : f32, causal = #attn.causal<top_left>}
      : (tensor<1x2x70x16xf32>, tensor<1x2x90x16xf32>, tensor<1x2x90x16xf32>) -> tensor<1x2x70x16xf32>
  return %o : tensor<1x2x70x16xf32>
})";
  Jitted j(src, "f", Pipeline::Cpu);
  auto q = randomTensor({1, 2, 70, 16}, gen, -25, 25), k = randomTensor({1, 2, 90, 16}, gen, -25, 25),
       v = randomTensor({1, 2, 90, 16}, gen);
  ref::SdpaOptions o;
  o.scale = 1.0;
  o.causal = ref::Causal::TopLeft;
  auto out = j.run({q, k, v});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allFinite(out[0]));
  EXPECT_LE(relativeError(out[0], ref::sdpa(q, k, v, o)), 1e-3);
}

TEST(ReferencePipeline, SdpaValueHeadDimDiffersAndScaleGiven) {
  std::mt19937 gen(7);
  const char *src = R"(
func.func @f(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x9x16xf32>, %v: tensor<1x2x9x24xf32>) -> tensor<1x2x5x24xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 0.5 : f32, causal = #attn.causal<bottom_right>}
      : (tensor<1x2x5x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x24xf32>) -> tensor<1x2x5x24xf32>
  return %o : tensor<1x2x5x24xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto q = randomTensor({1, 2, 5, 16}, gen), k = randomTensor({1, 2, 9, 16}, gen),
       v = randomTensor({1, 2, 9, 24}, gen);
  ref::SdpaOptions o;
  o.scale = 0.5;
  o.causal = ref::Causal::BottomRight;
  auto out = j.run({q, k, v});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], ref::sdpa(q, k, v, o)), kTol);
}

TEST(ReferencePipeline, SdpaLargeMagnitudeScoresStayFinite) {
  // Scores near ±1e4: exp without the max shift would overflow.
  std::mt19937 gen(8);
  const char *src = R"(
func.func @f(%q: tensor<1x2x9x16xf32>, %k: tensor<1x2x11x16xf32>, %v: tensor<1x2x11x16xf32>) -> tensor<1x2x9x16xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 1.0 : f32} : (tensor<1x2x9x16xf32>, tensor<1x2x11x16xf32>, tensor<1x2x11x16xf32>) -> tensor<1x2x9x16xf32>
  return %o : tensor<1x2x9x16xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto q = randomTensor({1, 2, 9, 16}, gen, -25, 25),
       k = randomTensor({1, 2, 11, 16}, gen, -25, 25),
       v = randomTensor({1, 2, 11, 16}, gen);
  ref::SdpaOptions o;
  o.scale = 1.0;
  ref::Tensor s = ref::scores(q, k);
  double maxAbs = 0;
  for (double x : s.data)
    maxAbs = std::max(maxAbs, std::fabs(x));
  ASSERT_GT(maxAbs, 1e3) << "the test needs large scores";
  auto out = j.run({q, k, v});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allFinite(out[0]));
  // Softmax of huge scores is nearly one-hot, so an f32 rounding of a score
  // can move weight between near-tied keys; compare with a looser bound.
  EXPECT_LE(relativeError(out[0], ref::sdpa(q, k, v, o)), 1e-3);
}

TEST(ReferencePipeline, SdpaDropoutMatchesReference) {
  std::mt19937 gen(9);
  const char *src = R"(
func.func @f(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  %o = attn.sdpa %q, %k, %k {dropout_rate = 0.25 : f32, dropout_seed = 77 : i64}
      : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
})";
  Jitted j(src, "f", Pipeline::Reference);
  auto q = randomTensor({2, 2, 8, 16}, gen), k = randomTensor({2, 2, 8, 16}, gen);
  ref::SdpaOptions o;
  o.dropoutRate = 0.25f;
  o.dropoutSeed = 77;
  auto out = j.run({q, k});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], ref::sdpa(q, k, k, o)), kTol);
}

//===----------------------------------------------------------------------===//
// mha: self and cross attention, GQA, biases, both weight layouts.
//===----------------------------------------------------------------------===//

struct MhaCase {
  int64_t b, tq, tk, e, ekv, h, hkv, d;
  bool biases, inOut, cross;
  ref::Causal causal;
};

class MhaGrid : public ::testing::TestWithParam<MhaCase> {};

void runMhaCase(const MhaCase &c, Pipeline pipeline, double tol);

TEST_P(MhaGrid, ReferencePipelineMatchesReference) {
  runMhaCase(GetParam(), Pipeline::Reference, kTol);
}

TEST_P(MhaGrid, CpuPipelineMatchesReference) {
  runMhaCase(GetParam(), Pipeline::Cpu, 1e-4);
}

TEST_P(MhaGrid, GpuSchedulePipelineMatchesReference) {
  runMhaCase(GetParam(), Pipeline::GpuSchedule, 1e-4);
}

void runMhaCase(const MhaCase &c, Pipeline pipeline, double tol) {
  std::mt19937 gen(c.b * 7 + c.tq * 13 + c.h);
  int64_t eo = c.e;
  auto w = [&](int64_t out, int64_t in) {
    return c.inOut ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in};
  };
  std::vector<int64_t> xqS{c.b, c.tq, c.e}, xkvS{c.b, c.cross ? c.tk : c.tq, c.cross ? c.ekv : c.e};
  int64_t ekv = xkvS[2];
  auto wqS = w(c.h * c.d, c.e), wkS = w(c.hkv * c.d, ekv), wvS = w(c.hkv * c.d, ekv),
       woS = w(eo, c.h * c.d);
  std::vector<std::vector<int64_t>> shapes{xqS};
  if (c.cross)
    shapes.push_back(xkvS);
  for (auto s : {wqS, wkS, wvS, woS})
    shapes.push_back(s);
  if (c.biases)
    for (int64_t n : {c.h * c.d, c.hkv * c.d, c.hkv * c.d, eo})
      shapes.push_back({n});
  std::ostringstream sig, types;
  std::vector<std::string> names{"xq"};
  if (c.cross)
    names.push_back("xkv");
  for (auto n : {"wq", "wk", "wv", "wo"})
    names.push_back(n);
  if (c.biases)
    for (auto n : {"bq", "bk", "bv", "bo"})
      names.push_back(n);
  for (size_t i = 0; i < shapes.size(); ++i) {
    sig << (i ? ", " : "") << "%" << names[i] << ": " << tensorType(shapes[i]);
  }
  std::string outT = tensorType({c.b, c.tq, eo});
  std::ostringstream src;
  src << "func.func @f(" << sig.str() << ") -> " << outT << " {\n  %o = attn.mha %xq, "
      << (c.cross ? "%xkv" : "%xq") << ", %wq, %wk, %wv, %wo";
  if (c.biases)
    src << " qkv_bias(%bq, %bk, %bv) out_bias(%bo)";
  src << " {num_heads = " << c.h << " : i64, num_kv_heads = " << c.hkv << " : i64"
      << (c.inOut ? ", layout = #attn.layout<in_out>" : "")
      << (c.causal == ref::Causal::None ? "" : ", " + causalAttr(c.causal)) << "} : (";
  std::vector<std::vector<int64_t>> opShapes{xqS, c.cross ? xkvS : xqS, wqS, wkS, wvS, woS};
  if (c.biases)
    for (size_t i = shapes.size() - 4; i < shapes.size(); ++i)
      opShapes.push_back(shapes[i]);
  for (size_t i = 0; i < opShapes.size(); ++i)
    src << (i ? ", " : "") << tensorType(opShapes[i]);
  src << ") -> " << outT << "\n  return %o : " << outT << "\n}\n";
  Jitted j(src.str(), "f", pipeline);
  ASSERT_TRUE(j.ok());

  std::vector<ref::Tensor> in;
  for (auto &s : shapes)
    in.push_back(randomTensor(s, gen));
  size_t at = 0;
  ref::Tensor xq = in[at++];
  ref::Tensor xkv = c.cross ? in[at++] : xq;
  ref::MhaWeights mw;
  mw.wq = in[at++];
  mw.wk = in[at++];
  mw.wv = in[at++];
  mw.wo = in[at++];
  mw.layout = c.inOut ? ref::Layout::InOut : ref::Layout::OutIn;
  if (c.biases) {
    mw.bq = &in[at];
    mw.bk = &in[at + 1];
    mw.bv = &in[at + 2];
    mw.bo = &in[at + 3];
  }
  ref::SdpaOptions o;
  o.causal = c.causal;
  auto out = j.run(in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], ref::mha(xq, xkv, mw, c.h, c.hkv, o)), tol);
}

std::string mhaName(const ::testing::TestParamInfo<MhaCase> &info) {
  const MhaCase &c = info.param;
  const char *causal[] = {"nocausal", "topleft", "bottomright"};
  return "B" + std::to_string(c.b) + "_Tq" + std::to_string(c.tq) + "_Tk" +
         std::to_string(c.cross ? c.tk : c.tq) + "_H" + std::to_string(c.h) + "_Hkv" +
         std::to_string(c.hkv) + (c.biases ? "_bias" : "") + (c.inOut ? "_inout" : "") +
         (c.cross ? "_cross" : "_self") + "_" + causal[int(c.causal)];
}

INSTANTIATE_TEST_SUITE_P(
    Grid, MhaGrid,
    ::testing::Values(
        // b, tq, tk, e, ekv, h, hkv, d, biases, inOut, cross, causal
        MhaCase{1, 1, 1, 16, 16, 2, 2, 8, false, false, false, ref::Causal::None},
        MhaCase{2, 7, 7, 32, 32, 4, 4, 8, true, false, false, ref::Causal::TopLeft},
        MhaCase{2, 7, 11, 32, 24, 4, 2, 8, true, true, true, ref::Causal::None},
        MhaCase{1, 64, 64, 48, 48, 6, 1, 8, false, false, false, ref::Causal::TopLeft},
        MhaCase{2, 5, 13, 32, 20, 8, 4, 4, true, false, true, ref::Causal::BottomRight}),
    mhaName);

//===----------------------------------------------------------------------===//
// The seeds' example: MultiHeadAttention(d_model = 64, n_heads = 8) on a
// batch of 2 sequences of length 10, nn.Linear weights without bias.
//===----------------------------------------------------------------------===//

TEST(ReferencePipeline, SeedsMultiHeadAttentionExample) {
  const char *src = R"(
func.func @mha(%x: tensor<2x10x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>,
               %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x10x64xf32> {
  %o = attn.mha %x, %x, %wq, %wk, %wv, %wo {num_heads = 8 : i64}
      : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x10x64xf32>
  return %o : tensor<2x10x64xf32>
})";
  Jitted j(src, "mha", Pipeline::Reference);
  // Given weights: a fixed formula in nn.Linear's (d_out, d_in) layout, with
  // the Kaiming-uniform bound 1/sqrt(d_in) of nn.Linear's initialiser.
  auto weight = [](int salt) {
    ref::Tensor w({64, 64});
    for (int64_t o = 0; o < 64; ++o)
      for (int64_t i = 0; i < 64; ++i)
        w.at({o, i}) = static_cast<float>(0.125 * std::sin(0.37 * o + 0.11 * i + salt));
    return w;
  };
  ref::Tensor x({2, 10, 64});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 10; ++t)
      for (int64_t c = 0; c < 64; ++c)
        x.at({b, t, c}) = static_cast<float>(std::cos(0.3 * t + 0.05 * c + b));
  ref::MhaWeights mw;
  mw.wq = weight(1);
  mw.wk = weight(2);
  mw.wv = weight(3);
  mw.wo = weight(4);
  auto out = j.run({x, mw.wq, mw.wk, mw.wv, mw.wo});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 10, 64}));
  ref::Tensor want = ref::mha(x, x, mw, 8, 8, ref::SdpaOptions{});
  EXPECT_LE(relativeError(out[0], want), kTol);
}
} // namespace

namespace {
// A primitive chain with the scale applied to Q and an i1 mask before a
// second scale: attn-fuse raises it to one sdpa in the CPU pipeline, and the
// result still matches the reference computed step by step.
TEST(CpuPipeline, FusedPrimitiveChainMatchesReference) {
  std::mt19937 gen(20);
  const char *src = R"(
func.func @f(%q: tensor<2x4x33x16xf32>, %k: tensor<2x2x45x16xf32>, %v: tensor<2x2x45x16xf32>,
             %keep: tensor<2x1x33x45xi1>) -> tensor<2x4x33x16xf32> {
  %qs = attn.scale %q {scale = 0.5 : f32} : tensor<2x4x33x16xf32>
  %s = attn.scores %qs, %k : (tensor<2x4x33x16xf32>, tensor<2x2x45x16xf32>) -> tensor<2x4x33x45xf32>
  %m = attn.mask %s, %keep {causal = #attn.causal<bottom_right>} : tensor<2x4x33x45xf32>, tensor<2x1x33x45xi1>
  %t = attn.scale %m {scale = 0.25 : f32} : tensor<2x4x33x45xf32>
  %p = attn.softmax %t : tensor<2x4x33x45xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x4x33x45xf32>, tensor<2x2x45x16xf32>) -> tensor<2x4x33x16xf32>
  return %o : tensor<2x4x33x16xf32>
})";
  Jitted j(src, "f", Pipeline::Cpu);
  auto q = randomTensor({2, 4, 33, 16}, gen), k = randomTensor({2, 2, 45, 16}, gen),
       v = randomTensor({2, 2, 45, 16}, gen);
  ref::Mask keep = randomMask(ref::Mask::Kind::Keep, {2, 1, 33, 45}, gen);
  ref::Tensor want = ref::weightedSum(
      ref::softmax(ref::scale(ref::mask(ref::scores(ref::scale(q, 0.5), k),
                                        ref::Causal::BottomRight, keep),
                              0.25)),
      v);
  auto out = j.run({q, k, v, keep.values}, {ElementType::F32, ElementType::F32, ElementType::F32, ElementType::Bool});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], want), 1e-4);
}
} // namespace

namespace {
// f16 in, f16 out: the lowerings compute in f32 and round once per op (the
// fused CPU and GPU kernels once at the end), so the result is within f16
// rounding (2^-11 relative) of the reference in every pipeline.
TEST(ReferencePipeline, HalfPrecisionSdpa) {
  std::mt19937 gen(21);
  const char *src = R"(
func.func @f(%q: tensor<1x2x9x16xf16>, %k: tensor<1x2x13x16xf16>, %v: tensor<1x2x13x16xf16>) -> tensor<1x2x9x16xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : (tensor<1x2x9x16xf16>, tensor<1x2x13x16xf16>, tensor<1x2x13x16xf16>) -> tensor<1x2x9x16xf16>
  return %o : tensor<1x2x9x16xf16>
})";
  auto q = randomTensor({1, 2, 9, 16}, gen), k = randomTensor({1, 2, 13, 16}, gen),
       v = randomTensor({1, 2, 13, 16}, gen);
  for (ref::Tensor *x : {&q, &k, &v})
    roundTo(*x, ElementType::F16);
  ref::SdpaOptions o;
  o.causal = ref::Causal::BottomRight;
  ref::Tensor want = ref::sdpa(q, k, v, o);
  for (Pipeline p : {Pipeline::Reference, Pipeline::Cpu, Pipeline::GpuSchedule}) {
    Jitted j(src, "f", p);
    auto out = j.run({q, k, v}, {ElementType::F16, ElementType::F16, ElementType::F16});
    ASSERT_EQ(out.size(), 1u);
    // Scores, scale, softmax and weights each round to f16 once.
    EXPECT_LE(relativeError(out[0], want), 4e-3) << runtime::pipelineName(p).str();
    EXPECT_GT(relativeError(out[0], want), 0.0) << "f16 rounding must show";
  }
}
} // namespace

namespace {
// Numerical edge cases, each through both pipelines against the reference:
// NaN and ±inf propagate as in PyTorch's math path; huge finite scores do not
// turn into NaN through inf - inf; Tk = 1; a huge scale; denormal inputs.
struct EdgeCase {
  const char *name;
  std::function<void(ref::Tensor &, ref::Tensor &, ref::Tensor &)> poke;
  double scale;
};

class EdgeCases : public ::testing::TestWithParam<Pipeline> {};

TEST_P(EdgeCases, MatchReference) {
  const char *src = R"(
func.func @f(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 1.0 : f32} : (tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
})";
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<EdgeCase> cases = {
      {"nan in q", [&](auto &q, auto &, auto &) { q.at({0, 1, 2, 3}) = nan; }, 1.0},
      {"nan in k", [&](auto &, auto &k, auto &) { k.at({0, 0, 4, 0}) = nan; }, 1.0},
      {"nan in v", [&](auto &, auto &, auto &v) { v.at({0, 1, 3, 5}) = nan; }, 1.0},
      {"+inf in v", [&](auto &, auto &, auto &v) { v.at({0, 0, 2, 1}) = inf; }, 1.0},
      {"scores near 1e30", [&](auto &q, auto &k, auto &) {
         for (double &x : q.data) x *= 1e15;
         for (double &x : k.data) x *= 1e15;
       }, 1.0},
      {"denormal inputs", [&](auto &q, auto &k, auto &v) {
         for (double &x : q.data) x *= 1e-39;
         for (double &x : k.data) x *= 1e-39;
         for (double &x : v.data) x *= 1e-39;
       }, 1.0},
  };
  std::mt19937 gen(22);
  Jitted j(src, "f", GetParam());
  for (auto &c : cases) {
    SCOPED_TRACE(c.name);
    auto q = randomTensor({1, 2, 5, 8}, gen), k = randomTensor({1, 2, 6, 8}, gen),
         v = randomTensor({1, 2, 6, 8}, gen);
    c.poke(q, k, v);
    for (auto *t : {&q, &k, &v})
      for (double &x : t->data)
        x = static_cast<float>(x);
    ref::SdpaOptions o;
    o.scale = c.scale;
    ref::Tensor want = ref::sdpa(q, k, v, o);
    auto out = j.run({q, k, v});
    ASSERT_EQ(out.size(), 1u);
    // Same NaN/inf pattern as the reference, and close elsewhere.
    for (size_t i = 0; i < want.data.size(); ++i) {
      double a = out[0].data[i], b = want.data[i];
      ASSERT_EQ(std::isnan(a), std::isnan(b)) << "element " << i << ": " << a << " vs " << b;
      if (std::isinf(b)) {
        ASSERT_EQ(a, b) << "element " << i;
      }
    }
    EXPECT_LE(relativeError(out[0], want), 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, EdgeCases,
                         ::testing::Values(Pipeline::Reference, Pipeline::Cpu,
                                           Pipeline::GpuSchedule),
                         [](const ::testing::TestParamInfo<Pipeline> &info) {
                           std::string n = runtime::pipelineName(info.param).str();
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });
} // namespace

namespace {
// attn.project through the CPU pipeline's tiled, vectorised lowering: both
// weight layouts, bias, rank 2 and 3 inputs, a row count that is not a
// multiple of the 4-row block, and a width that falls back (Out = 12).
TEST(CpuPipeline, TiledProjections) {
  std::mt19937 gen(23);
  const char *src = R"(
func.func @f(%x: tensor<3x7x40xf32>, %w: tensor<48x40xf32>, %b: tensor<48xf32>, %wt: tensor<40x32xf32>,
             %x2: tensor<?x40xf32>, %w12: tensor<12x40xf32>)
    -> (tensor<3x7x48xf32>, tensor<3x7x32xf32>, tensor<?x48xf32>, tensor<?x12xf32>) {
  %0 = attn.project %x, %w, %b : (tensor<3x7x40xf32>, tensor<48x40xf32>, tensor<48xf32>) -> tensor<3x7x48xf32>
  %1 = attn.project %x, %wt {layout = #attn.layout<in_out>} : (tensor<3x7x40xf32>, tensor<40x32xf32>) -> tensor<3x7x32xf32>
  %2 = attn.project %x2, %w, %b : (tensor<?x40xf32>, tensor<48x40xf32>, tensor<48xf32>) -> tensor<?x48xf32>
  %3 = attn.project %x2, %w12 : (tensor<?x40xf32>, tensor<12x40xf32>) -> tensor<?x12xf32>
  return %0, %1, %2, %3 : tensor<3x7x48xf32>, tensor<3x7x32xf32>, tensor<?x48xf32>, tensor<?x12xf32>
})";
  Jitted j(src, "f", Pipeline::Cpu);
  auto x = randomTensor({3, 7, 40}, gen), w = randomTensor({48, 40}, gen),
       b = randomTensor({48}, gen), wt = randomTensor({40, 32}, gen),
       x2 = randomTensor({5, 40}, gen), w12 = randomTensor({12, 40}, gen);
  auto out = j.run({x, w, b, wt, x2, w12});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_LE(relativeError(out[0], ref::project(x, w, &b, ref::Layout::OutIn)), 1e-5);
  EXPECT_LE(relativeError(out[1], ref::project(x, wt, nullptr, ref::Layout::InOut)), 1e-5);
  EXPECT_LE(relativeError(out[2], ref::project(x2, w, &b, ref::Layout::OutIn)), 1e-5);
  EXPECT_LE(relativeError(out[3], ref::project(x2, w12, nullptr, ref::Layout::OutIn)), 1e-5);
}

// The packed-panel projection at 8 and 16 lanes: 300 rows (two chunks of
// at most 256 rows, the blocks spread 38 + 37 blocks of 4 rows at 8 lanes,
// 13 + 12 blocks of 12 at 16; the last block partial), out_in
// weights whose In is a multiple of the width (blocks transposed in
// registers) or not (In = 40 at 16 lanes: element-wise packing), in_out
// weights (rows copied), with and without bias. Static rows that fit one
// chunk (120 and 100 rows) pack each panel on the stack of the thread that
// uses it, in all three ways.
TEST(CpuPipeline, TiledProjectionsAtBothWidths) {
  const char *src = R"(
func.func @f(%x: tensor<2x150x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>,
             %wt: tensor<64x96xf32>, %x40: tensor<300x40xf32>, %w40: tensor<32x40xf32>,
             %xd: tensor<?x?x64xf32>, %x4: tensor<2x?x?x64xf32>, %xs: tensor<3x40x64xf32>,
             %x40s: tensor<100x40xf32>)
    -> (tensor<2x150x64xf32>, tensor<2x150x96xf32>, tensor<300x32xf32>, tensor<?x?x64xf32>,
        tensor<2x?x?x96xf32>, tensor<3x40x64xf32>, tensor<3x40x96xf32>, tensor<100x32xf32>) {
  %0 = attn.project %x, %w, %b : (tensor<2x150x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x150x64xf32>
  %1 = attn.project %x, %wt {layout = #attn.layout<in_out>} : (tensor<2x150x64xf32>, tensor<64x96xf32>) -> tensor<2x150x96xf32>
  %2 = attn.project %x40, %w40 : (tensor<300x40xf32>, tensor<32x40xf32>) -> tensor<300x32xf32>
  %3 = attn.project %xd, %w, %b : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %4 = attn.project %x4, %wt {layout = #attn.layout<in_out>} : (tensor<2x?x?x64xf32>, tensor<64x96xf32>) -> tensor<2x?x?x96xf32>
  %5 = attn.project %xs, %w, %b : (tensor<3x40x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<3x40x64xf32>
  %6 = attn.project %xs, %wt {layout = #attn.layout<in_out>} : (tensor<3x40x64xf32>, tensor<64x96xf32>) -> tensor<3x40x96xf32>
  %7 = attn.project %x40s, %w40 : (tensor<100x40xf32>, tensor<32x40xf32>) -> tensor<100x32xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x150x64xf32>, tensor<2x150x96xf32>,
      tensor<300x32xf32>, tensor<?x?x64xf32>, tensor<2x?x?x96xf32>, tensor<3x40x64xf32>,
      tensor<3x40x96xf32>, tensor<100x32xf32>
})";
  for (int64_t width : {8, 16}) {
    SCOPED_TRACE("vector-width " + std::to_string(width));
    std::mt19937 gen(29 + width);
    runtime::JitOptions options;
    options.vectorWidth = width;
    Jitted j(src, "f", Pipeline::Cpu, options);
    ASSERT_TRUE(j.ok());
    // Two or more dynamic leading dims ([?, ?, 64]: 3·50 rows, two chunks;
    // [2, ?, ?, 64]: 2·3·7 rows) take the kernel with delinearised rows.
    EXPECT_TRUE(j.unfusedOps().empty());
    auto x = randomTensor({2, 150, 64}, gen), w = randomTensor({64, 64}, gen),
         b = randomTensor({64}, gen), wt = randomTensor({64, 96}, gen),
         x40 = randomTensor({300, 40}, gen), w40 = randomTensor({32, 40}, gen),
         xd = randomTensor({3, 50, 64}, gen), x4 = randomTensor({2, 3, 7, 64}, gen),
         xs = randomTensor({3, 40, 64}, gen), x40s = randomTensor({100, 40}, gen);
    auto out = j.run({x, w, b, wt, x40, w40, xd, x4, xs, x40s});
    ASSERT_EQ(out.size(), 8u);
    EXPECT_LE(relativeError(out[0], ref::project(x, w, &b, ref::Layout::OutIn)), 1e-5);
    EXPECT_LE(relativeError(out[1], ref::project(x, wt, nullptr, ref::Layout::InOut)), 1e-5);
    EXPECT_LE(relativeError(out[2], ref::project(x40, w40, nullptr, ref::Layout::OutIn)), 1e-5);
    EXPECT_LE(relativeError(out[3], ref::project(xd, w, &b, ref::Layout::OutIn)), 1e-5);
    EXPECT_LE(relativeError(out[4], ref::project(x4, wt, nullptr, ref::Layout::InOut)), 1e-5);
    EXPECT_LE(relativeError(out[5], ref::project(xs, w, &b, ref::Layout::OutIn)), 1e-5);
    EXPECT_LE(relativeError(out[6], ref::project(xs, wt, nullptr, ref::Layout::InOut)), 1e-5);
    EXPECT_LE(relativeError(out[7], ref::project(x40s, w40, nullptr, ref::Layout::OutIn)), 1e-5);
  }
}

// f16 and bf16 projections through the same kernel: x, W and the bias
// converted to f32 while packed or loaded, f32 accumulation, the output
// rounded once; against the reference on the rounded inputs.
TEST(CpuPipeline, TiledProjectionsHalfPrecision) {
  for (auto [dtype, elt, tol] : {std::tuple{ElementType::F16, "f16", 2e-3},
                                 std::tuple{ElementType::BF16, "bf16", 1.6e-2}}) {
    SCOPED_TRACE(elt);
    std::string e = elt;
    std::string src = "func.func @f(%x: tensor<3x50x64x" + e + ">, %w: tensor<96x64x" + e +
                      ">, %b: tensor<96x" + e + ">) -> tensor<3x50x96x" + e +
                      "> {\n  %0 = attn.project %x, %w, %b : (tensor<3x50x64x" + e +
                      ">, tensor<96x64x" + e + ">, tensor<96x" + e + ">) -> tensor<3x50x96x" +
                      e + ">\n  return %0 : tensor<3x50x96x" + e + ">\n}\n";
    std::mt19937 gen(31);
    Jitted j(src, "f", Pipeline::Cpu);
    ASSERT_TRUE(j.ok());
    auto x = randomTensor({3, 50, 64}, gen), w = randomTensor({96, 64}, gen),
         b = randomTensor({96}, gen);
    for (ref::Tensor *t : {&x, &w, &b})
      roundTo(*t, dtype);
    auto out = j.run({x, w, b}, {dtype, dtype, dtype});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_LE(relativeError(out[0], ref::project(x, w, &b, ref::Layout::OutIn)), tol);
  }
}

/// The half-precision projections of the dot and AMX tests, in `elt`
/// ("bf16" or "f16"): out_in and in_out, bias or none, static rows in one
/// chunk (the panel packed on the thread's stack), 300 rows (two chunks, W
/// packed once on the heap), dynamic rows, two dynamic leading dims (rows
/// delinearised) with In = 320 (ten steps of 32: a run of eight and two
/// more on AMX), and In = 48 (not a multiple of 32: the f32 path), with
/// their inputs rounded to `dtype` and the double reference's results.
struct HalfProjections {
  std::string src;
  std::vector<ref::Tensor> inputs, want;
};
HalfProjections halfProjections(ElementType dtype, const char *elt) {
  std::string src = R"(
func.func @f(%x: tensor<3x50x96xHALF>, %w: tensor<64x96xHALF>, %b: tensor<64xHALF>,
             %wt: tensor<96x32xHALF>, %xl: tensor<300x96xHALF>, %xd: tensor<?x96xHALF>,
             %x48: tensor<20x48xHALF>, %w48: tensor<32x48xHALF>, %xdd: tensor<?x?x320xHALF>,
             %w320: tensor<320x32xHALF>, %b32: tensor<32xHALF>)
    -> (tensor<3x50x64xHALF>, tensor<3x50x32xHALF>, tensor<300x64xHALF>, tensor<300x32xHALF>,
        tensor<?x64xHALF>, tensor<20x32xHALF>, tensor<?x?x32xHALF>) {
  %0 = attn.project %x, %w, %b : (tensor<3x50x96xHALF>, tensor<64x96xHALF>, tensor<64xHALF>) -> tensor<3x50x64xHALF>
  %1 = attn.project %x, %wt {layout = #attn.layout<in_out>} : (tensor<3x50x96xHALF>, tensor<96x32xHALF>) -> tensor<3x50x32xHALF>
  %2 = attn.project %xl, %w : (tensor<300x96xHALF>, tensor<64x96xHALF>) -> tensor<300x64xHALF>
  %3 = attn.project %xl, %wt {layout = #attn.layout<in_out>} : (tensor<300x96xHALF>, tensor<96x32xHALF>) -> tensor<300x32xHALF>
  %4 = attn.project %xd, %w, %b : (tensor<?x96xHALF>, tensor<64x96xHALF>, tensor<64xHALF>) -> tensor<?x64xHALF>
  %5 = attn.project %x48, %w48 : (tensor<20x48xHALF>, tensor<32x48xHALF>) -> tensor<20x32xHALF>
  %6 = attn.project %xdd, %w320, %b32 {layout = #attn.layout<in_out>} : (tensor<?x?x320xHALF>, tensor<320x32xHALF>, tensor<32xHALF>) -> tensor<?x?x32xHALF>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3x50x64xHALF>, tensor<3x50x32xHALF>, tensor<300x64xHALF>,
      tensor<300x32xHALF>, tensor<?x64xHALF>, tensor<20x32xHALF>, tensor<?x?x32xHALF>
})";
  for (size_t at; (at = src.find("HALF")) != std::string::npos;)
    src.replace(at, 4, elt);
  std::mt19937 gen(37);
  std::vector<ref::Tensor> in = {
      randomTensor({3, 50, 96}, gen), randomTensor({64, 96}, gen), randomTensor({64}, gen),
      randomTensor({96, 32}, gen),    randomTensor({300, 96}, gen), randomTensor({77, 96}, gen),
      randomTensor({20, 48}, gen),    randomTensor({32, 48}, gen),  randomTensor({2, 21, 320}, gen),
      randomTensor({320, 32}, gen),   randomTensor({32}, gen)};
  for (ref::Tensor &t : in)
    roundTo(t, dtype);
  const ref::Tensor &x = in[0], &w = in[1], &b = in[2], &wt = in[3], &xl = in[4], &xd = in[5],
                    &x48 = in[6], &w48 = in[7], &xdd = in[8], &w320 = in[9], &b32 = in[10];
  std::vector<ref::Tensor> want = {
      ref::project(x, w, &b, ref::Layout::OutIn),       ref::project(x, wt, nullptr, ref::Layout::InOut),
      ref::project(xl, w, nullptr, ref::Layout::OutIn), ref::project(xl, wt, nullptr, ref::Layout::InOut),
      ref::project(xd, w, &b, ref::Layout::OutIn),      ref::project(x48, w48, nullptr, ref::Layout::OutIn),
      ref::project(xdd, w320, &b32, ref::Layout::InOut)};
  return {src, in, want};
}

/// Runs the half projections with `options` against the double reference
/// at `tol`. With `mustDiffer`, also without them (`off` applied to a copy:
/// the f32 FMAs), and some outputs must differ (the two sum in different
/// orders: else the path under test did not run), except In = 48's, which
/// takes the f32 path either way.
void checkHalfProjections(ElementType dtype, const char *elt, double tol, bool mustDiffer,
                          runtime::JitOptions options,
                          const std::function<void(runtime::JitOptions &)> &off) {
  HalfProjections p = halfProjections(dtype, elt);
  runtime::JitOptions f32 = options;
  off(f32);
  std::vector<std::vector<ref::Tensor>> outs;
  for (const runtime::JitOptions *o : {&options, &f32}) {
    if (o == &f32 && !mustDiffer)
      return;
    SCOPED_TRACE(o == &options ? "the path under test" : "f32 FMAs");
    Jitted j(p.src, "f", Pipeline::Cpu, *o);
    ASSERT_TRUE(j.ok());
    EXPECT_TRUE(j.unfusedOps().empty());
    auto out = j.run(p.inputs, std::vector<ElementType>(p.inputs.size(), dtype));
    ASSERT_EQ(out.size(), p.want.size());
    for (size_t i = 0; i < p.want.size(); ++i)
      EXPECT_LE(relativeError(out[i], p.want[i]), tol) << "result " << i;
    outs.push_back(out);
  }
  int64_t differing = 0;
  for (size_t i = 0; i < p.want.size(); ++i)
    for (size_t k = 0; k < outs[0][i].data.size(); ++k)
      differing += outs[0][i].data[k] != outs[1][i].data[k];
  EXPECT_GT(differing, 0) << "the path under test gave exactly the f32 path's outputs everywhere";
  for (size_t k = 0; k < outs[0][5].data.size(); ++k)
    ASSERT_EQ(outs[0][5].data[k], outs[1][5].data[k]) << "In = 48 takes the f32 path either way";
}

// bf16 projections on AVX512-BF16 dot products (bf16-dot forced on; the
// panel packed as pairs of W along In, a pair of x broadcast per step)
// beside the f32 FMAs (forced off). Skipped where the CPU has no
// AVX512-BF16.
TEST(CpuPipeline, TiledProjectionsOnBf16Dots) {
  if (!runtime::hostCpuTarget().hasBf16Dot)
    GTEST_SKIP() << "this CPU has no AVX512-BF16";
  runtime::JitOptions options;
  options.vectorWidth = 16;
  options.bf16Dot = true;
  options.amx = false; // (an AMX host would take AMX tiles)
  checkHalfProjections(ElementType::BF16, "bf16", 1.6e-2, /*mustDiffer=*/true, options,
                       [](runtime::JitOptions &o) { o.bf16Dot = false; });
}

// bf16 and f16 projections on AMX tiles (the same panel, 16 rows of x per
// block on two sum tiles; AmxTiles.cpp), run as vector code by
// attn-emulate-amx on every host, beside the f32 FMAs. The hardware's
// tiles run the same projections where the host has AMX. Emulated, the
// sums are the f32 path's FMAs in the same order, the bias added last
// instead of first: f16 outputs show that difference, bf16 ones round it
// away (test/Conversion/AttnToLoops/amx-project.mlir pins that the tiles
// are there).
TEST(CpuPipeline, TiledProjectionsOnAmxTiles) {
  runtime::CpuTarget host = runtime::hostCpuTarget();
  for (bool hardware : {false, true}) {
    if (hardware && !host.amxPermitted)
      continue;
    for (auto [dtype, elt, tol] : {std::tuple{ElementType::BF16, "bf16", 1.6e-2},
                                   std::tuple{ElementType::F16, "f16", 2e-3}}) {
      if (hardware && dtype == ElementType::F16 && !host.hasAmxFp16)
        continue;
      SCOPED_TRACE(std::string(elt) + (hardware ? " on AMX" : " emulated"));
      runtime::JitOptions options;
      options.vectorWidth = 16;
      options.bf16Dot = false;
      options.amx = true;
      options.emulateAmx = !hardware;
      bool mustDiffer = dtype == ElementType::F16 && !hardware;
      checkHalfProjections(dtype, elt, tol, mustDiffer, options, [](runtime::JitOptions &o) {
        o.amx = false;
        o.emulateAmx = false;
      });
    }
  }
}
} // namespace
