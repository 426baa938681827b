//===- AttentionApiTest.cpp - the compile-and-call API (attn/Attention.h) -===//
//
// Kernels built from specs and from IR text, called on caller-owned (and
// strided) buffers, compared with the double-precision reference; every
// error path returns a Status with a message; concurrent calls agree.
//
//===----------------------------------------------------------------------===//
#include "attn/Attention.h"
#include "attn/Runtime/CudaRuntime.h"

#include "NumericsTest.h"
#include "Reference/Reference.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include "gtest/gtest.h"

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <thread>

using namespace attn;
using attn::testing::randomTensor;
using attn::testing::relativeError;

namespace {

std::vector<float> toFloats(const ref::Tensor &t) {
  return std::vector<float>(t.data.begin(), t.data.end());
}

ref::Tensor fromFloats(const std::vector<float> &v, std::vector<int64_t> shape) {
  ref::Tensor t(std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.data[i] = v[i];
  return t;
}

TensorRef view(std::vector<float> &data, std::vector<int64_t> shape,
               std::vector<int64_t> strides = {}) {
  return TensorRef{ElementType::F32, data.data(), std::move(shape),
                   std::move(strides)};
}

std::unique_ptr<Kernel> compileOk(const SdpaSpec &spec, CompileOptions o = {}) {
  std::unique_ptr<Kernel> k;
  Status s = Kernel::compileSdpa(spec, o, k);
  EXPECT_TRUE(s.ok()) << s.message();
  return k;
}

struct SdpaCase {
  int64_t b, h, hkv, tq, tk, d, dv;
  Causal causal;
  MaskKind mask;
  std::vector<int64_t> maskShape;
  double scale;
};

class SdpaSpecTest : public ::testing::TestWithParam<std::tuple<SdpaCase, Target>> {};

TEST_P(SdpaSpecTest, MatchesReference) {
  auto [c, target] = GetParam();
  SdpaSpec spec;
  spec.batch = c.b;
  spec.heads = c.h;
  spec.kvHeads = c.hkv;
  spec.queryLen = -1; // dynamic lengths: sizes come at call time
  spec.keyLen = -1;
  spec.headDim = c.d;
  spec.valueDim = c.dv;
  spec.causal = c.causal;
  spec.mask = c.mask;
  spec.maskShape = c.maskShape;
  spec.scale = c.scale;
  CompileOptions o;
  o.target = target;
  o.tileQ = 16;
  o.tileK = 16;
  auto kernel = compileOk(spec, o);
  ASSERT_TRUE(kernel);

  std::mt19937 gen(7);
  ref::Tensor q = randomTensor({c.b, c.h, c.tq, c.d}, gen);
  ref::Tensor k = randomTensor({c.b, c.hkv, c.tk, c.d}, gen);
  ref::Tensor v = randomTensor({c.b, c.hkv, c.tk, c.dv}, gen);
  std::vector<float> qf = toFloats(q), kf = toFloats(k), vf = toFloats(v);
  std::vector<TensorRef> inputs = {view(qf, q.shape), view(kf, k.shape),
                                   view(vf, v.shape)};
  ref::Mask m;
  std::vector<float> mf;
  std::vector<uint8_t> mb;
  if (c.mask != MaskKind::None) {
    std::vector<int64_t> ms = c.maskShape.empty()
                                  ? std::vector<int64_t>{c.b, c.h, c.tq, c.tk}
                                  : c.maskShape;
    // A -1 (dynamic) mask dim takes the call-time size: Tk last, Tq before.
    for (size_t i = 0; i < ms.size(); ++i)
      if (ms[i] == -1)
        ms[i] = i + 1 == ms.size() ? c.tk : c.tq;
    m.values = randomTensor(ms, gen);
    if (c.mask == MaskKind::Keep) {
      m.kind = ref::Mask::Kind::Keep;
      for (double &x : m.values.data)
        x = x > -0.3 ? 1.0 : 0.0;
      for (double x : m.values.data)
        mb.push_back(x != 0);
      inputs.push_back(TensorRef{ElementType::Bool, mb.data(), ms, {}});
    } else {
      m.kind = ref::Mask::Kind::Add;
      mf = toFloats(m.values);
      inputs.push_back(view(mf, ms));
    }
  }
  std::vector<float> out(c.b * c.h * c.tq * c.dv, NAN);
  Status s = kernel->call(inputs, {view(out, {c.b, c.h, c.tq, c.dv})});
  ASSERT_TRUE(s.ok()) << s.message();

  ref::SdpaOptions ro;
  if (c.scale != 0)
    ro.scale = c.scale;
  ro.causal = c.causal == Causal::None      ? ref::Causal::None
              : c.causal == Causal::TopLeft ? ref::Causal::TopLeft
                                            : ref::Causal::BottomRight;
  if (c.mask != MaskKind::None)
    ro.mask = &m;
  ref::Tensor want = ref::sdpa(q, k, v, ro);
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, SdpaSpecTest,
    ::testing::Combine(
        ::testing::Values(
            SdpaCase{1, 2, 2, 37, 37, 16, 16, Causal::None, MaskKind::None, {}, 0},
            SdpaCase{2, 4, 1, 19, 40, 32, 32, Causal::TopLeft, MaskKind::None, {}, 0},
            SdpaCase{1, 4, 2, 40, 19, 16, 8, Causal::BottomRight, MaskKind::None, {}, 0.3},
            SdpaCase{2, 2, 2, 23, 31, 16, 16, Causal::None, MaskKind::Keep, {}, 0},
            SdpaCase{1, 2, 2, 17, 29, 8, 8, Causal::TopLeft, MaskKind::Additive,
                     {1, 1, -1, -1}, 0}),
        ::testing::Values(Target::Cpu, Target::Reference)),
    [](const ::testing::TestParamInfo<std::tuple<SdpaCase, Target>> &info) {
      const SdpaCase &c = std::get<0>(info.param);
      std::string name = "B" + std::to_string(c.b) + "H" + std::to_string(c.h) +
                         "Hkv" + std::to_string(c.hkv) + "Tq" + std::to_string(c.tq) +
                         "Tk" + std::to_string(c.tk) + "D" + std::to_string(c.d) +
                         "Dv" + std::to_string(c.dv);
      name += c.causal == Causal::None ? "" : c.causal == Causal::TopLeft ? "_topleft" : "_bottomright";
      name += c.mask == MaskKind::None ? "" : c.mask == MaskKind::Keep ? "_keep" : "_additive";
      name += std::get<1>(info.param) == Target::Cpu ? "_cpu" : "_reference";
      return name;
    });

/// SdpaSpec with every wave-2 feature (softcap, window, ALiBi slopes, key
/// lengths) against the double reference; a key length outside [0, Tk] is
/// an error status before anything runs.
class SdpaFeatureSpecTest : public ::testing::TestWithParam<Target> {};

TEST_P(SdpaFeatureSpecTest, MatchesReferenceAndChecksKeyLengths) {
  const int64_t b = 2, h = 4, hkv = 2, tq = 9, tk = 41, d = 16;
  SdpaSpec spec;
  spec.batch = b;
  spec.heads = h;
  spec.kvHeads = hkv;
  spec.queryLen = -1;
  spec.keyLen = -1;
  spec.headDim = d;
  spec.causal = Causal::BottomRight;
  spec.softcap = 2.5;
  spec.windowLeft = 11;
  spec.alibi = true;
  spec.keyLengths = true;
  CompileOptions o;
  o.target = GetParam();
  o.tileQ = 4;
  o.tileK = 8;
  auto kernel = compileOk(spec, o);
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->inputs().size(), 5u);
  EXPECT_EQ(kernel->inputs()[3].str(), "float32[4]");
  EXPECT_EQ(kernel->inputs()[4].str(), "int32[2]");

  std::mt19937 gen(11);
  ref::Tensor q = randomTensor({b, h, tq, d}, gen, -2, 2);
  ref::Tensor k = randomTensor({b, hkv, tk, d}, gen, -2, 2);
  ref::Tensor v = randomTensor({b, hkv, tk, d}, gen);
  ref::Tensor slopes({h});
  for (int64_t i = 0; i < h; ++i)
    slopes.data[i] = std::pow(2.0, -(i + 1.0)); // BLOOM's 2^(-8(i+1)/H), H = 8
  std::vector<int32_t> lens = {23, 5};
  std::vector<float> qf = toFloats(q), kf = toFloats(k), vf = toFloats(v),
                     sf = toFloats(slopes);
  std::vector<TensorRef> inputs = {view(qf, q.shape), view(kf, k.shape),
                                   view(vf, v.shape), view(sf, {h}),
                                   TensorRef{ElementType::I32, lens.data(), {b}, {}}};
  std::vector<float> out(b * h * tq * d, NAN);
  Status s = kernel->call(inputs, {view(out, {b, h, tq, d})});
  ASSERT_TRUE(s.ok()) << s.message();

  ref::SdpaOptions ro;
  ro.causal = ref::Causal::BottomRight;
  ro.softcap = 2.5;
  ro.alibiSlopes = &slopes;
  ro.keyLengths = std::vector<int64_t>{23, 5};
  ref::Window w;
  w.left = 11;
  ro.window = w;
  ref::Tensor want = ref::sdpa(q, k, v, ro);
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);

  // Out of range: an error naming the input, the element and the bound.
  lens = {42, 5};
  s = kernel->call(inputs, {view(out, {b, h, tq, d})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input #4 (key lengths) element 0 is 42, outside "
                             "[0, Tk = 41] of 'attn.sdpa'"),
            std::string::npos)
      << s.message();
  lens = {3, -1};
  s = kernel->call(inputs, {view(out, {b, h, tq, d})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("element 1 is -1"), std::string::npos) << s.message();
}

INSTANTIATE_TEST_SUITE_P(Specs, SdpaFeatureSpecTest,
                         ::testing::Values(Target::Cpu, Target::Reference),
                         [](const ::testing::TestParamInfo<Target> &info) {
                           return info.param == Target::Cpu ? "cpu" : "reference";
                         });

/// nn.MultiheadAttention's inputs with biases, random: query_input
/// [B,Tq,E], kv_input [B,Tk,Ekv], the weights ([Out,In]) and biases, as
/// reference tensors and as float buffers with views in MhaSpec's order.
struct MhaInputs {
  ref::Tensor xq, xkv, bq, bk, bv, bo;
  ref::MhaWeights w;
  std::vector<std::vector<float>> data;
  std::vector<TensorRef> views;

  MhaInputs(std::mt19937 &gen, int64_t b, int64_t tq, int64_t tk, int64_t e, int64_t ekv,
            int64_t h, int64_t hkv, int64_t d)
      : xq(randomTensor({b, tq, e}, gen)), xkv(randomTensor({b, tk, ekv}, gen)) {
    w.wq = randomTensor({h * d, e}, gen);
    w.wk = randomTensor({hkv * d, ekv}, gen);
    w.wv = randomTensor({hkv * d, ekv}, gen);
    w.wo = randomTensor({e, h * d}, gen);
    bq = randomTensor({h * d}, gen);
    bk = randomTensor({hkv * d}, gen);
    bv = randomTensor({hkv * d}, gen);
    bo = randomTensor({e}, gen);
    w.bq = &bq;
    w.bk = &bk;
    w.bv = &bv;
    w.bo = &bo;
    std::vector<const ref::Tensor *> all = {&xq, &xkv, &w.wq, &w.wk, &w.wv,
                                            &w.wo, &bq, &bk, &bv, &bo};
    for (const ref::Tensor *t : all)
      data.push_back(toFloats(*t));
    for (size_t i = 0; i < all.size(); ++i)
      views.push_back(view(data[i], all[i]->shape));
  }
  MhaInputs(const MhaInputs &) = delete; // w points at the biases
};

/// Cross-attention with GQA and biases: B 2, Tq 9, E 32 over Ekv 24, 4
/// heads over 2, bottom-right causal (MhaInputs(gen, 2, 9, 13, 32, 24, 4,
/// 2, 8) fits it).
static MhaSpec crossGqaSpec(int64_t keyLen) {
  MhaSpec spec;
  spec.batch = 2;
  spec.queryLen = 9;
  spec.keyLen = keyLen;
  spec.embedDim = 32;
  spec.kvEmbedDim = 24;
  spec.numHeads = 4;
  spec.numKvHeads = 2;
  spec.bias = true;
  spec.causal = Causal::BottomRight;
  return spec;
}

TEST(AttentionApi, MhaSpecMatchesReference) {
  MhaSpec spec = crossGqaSpec(-1);
  std::unique_ptr<Kernel> kernel;
  Status s = Kernel::compileMha(spec, {}, kernel);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(kernel->inputs().size(), 10u);
  EXPECT_EQ(kernel->inputs()[1].str(), "float32[2,?,24]");
  EXPECT_EQ(kernel->outputs()[0].str(), "float32[2,9,32]");

  std::mt19937 gen(3);
  MhaInputs in(gen, 2, 9, 13, 32, 24, 4, 2, 8);
  std::vector<float> out(2 * 9 * 32);
  s = kernel->call(in.views, {view(out, {2, 9, 32})});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::SdpaOptions ro;
  ro.causal = ref::Causal::BottomRight;
  ref::Tensor want = ref::mha(in.xq, in.xkv, in.w, 4, 2, ro);
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);
}

// MhaSpec.sinks: an f32 [H] input after the block's others, in the IR as
// attn.mha's sinks(...). Sinks of -inf weigh nothing (exp(-inf) = 0): the
// output is the reference's without sinks, which pins the input's place;
// the sinks' arithmetic is checked against NumPy in
// test/Integration/mha-sinks.mlir. A sink far above every score takes the
// whole denominator: the attention part is ~0 and the output the out bias.
TEST(AttentionApi, MhaSpecSinks) {
  MhaSpec spec = crossGqaSpec(13);
  spec.sinks = true;
  std::string ir;
  ASSERT_TRUE(mhaToMlir(spec, ir).ok());
  EXPECT_NE(ir.find("sinks(%arg10)"), std::string::npos) << ir;
  std::unique_ptr<Kernel> kernel;
  Status s = Kernel::compileMha(spec, {}, kernel);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(kernel->inputs().size(), 11u);
  EXPECT_EQ(kernel->inputs()[10].str(), "float32[4]");

  std::mt19937 gen(3);
  MhaInputs in(gen, 2, 9, 13, 32, 24, 4, 2, 8);
  std::vector<float> none(4, -std::numeric_limits<float>::infinity());
  std::vector<TensorRef> views = in.views;
  views.push_back(view(none, {4}));
  std::vector<float> out(2 * 9 * 32);
  s = kernel->call(views, {view(out, {2, 9, 32})});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::SdpaOptions ro;
  ro.causal = ref::Causal::BottomRight;
  ref::Tensor want = ref::mha(in.xq, in.xkv, in.w, 4, 2, ro);
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);

  std::vector<float> huge(4, 1e4f);
  views.back() = view(huge, {4});
  s = kernel->call(views, {view(out, {2, 9, 32})});
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<float> bo = toFloats(in.bo);
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], bo[i % 32], 1e-5) << "at " << i;
}

// MhaSpec with dropout on the attention weights (nn.MultiheadAttention in
// training mode): against the reference's mha with the same counter-based
// mask; the seed as an input gives the same output as the seed compiled
// in, and another seed another output.
TEST(AttentionApi, MhaSpecDropoutMatchesReference) {
  MhaSpec spec;
  spec.batch = 2;
  spec.queryLen = 7;
  spec.keyLen = 11;
  spec.embedDim = 16;
  spec.numHeads = 2;
  spec.bias = true;
  spec.causal = Causal::TopLeft;
  spec.dropoutRate = 0.3;
  spec.dropoutSeed = 11;
  std::unique_ptr<Kernel> fixed, runtime;
  Status s = Kernel::compileMha(spec, {}, fixed);
  ASSERT_TRUE(s.ok()) << s.message();
  spec.runtimeSeed = true;
  s = Kernel::compileMha(spec, {}, runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(runtime->inputs().size(), 11u);
  EXPECT_EQ(runtime->inputs()[10].str(), "int64[]");

  std::mt19937 gen(5);
  MhaInputs in(gen, 2, 7, 11, 16, 16, 2, 2, 8);
  std::vector<float> out(2 * 7 * 16), outRuntime(out.size()), outOther(out.size());
  s = fixed->call(in.views, {view(out, {2, 7, 16})});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::SdpaOptions ro;
  ro.causal = ref::Causal::TopLeft;
  ro.dropoutRate = 0.3f;
  ro.dropoutSeed = 11;
  ref::Tensor want = ref::mha(in.xq, in.xkv, in.w, 2, 2, ro);
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);
  ro.dropoutRate = 0;
  ref::Tensor noDropout = ref::mha(in.xq, in.xkv, in.w, 2, 2, ro);
  EXPECT_GT(relativeError(want, noDropout), 1e-2); // dropout changed something

  int64_t seed = 11, other = 12;
  std::vector<TensorRef> withSeed = in.views;
  withSeed.push_back(TensorRef{ElementType::I64, &seed, {}, {}});
  s = runtime->call(withSeed, {view(outRuntime, {2, 7, 16})});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(outRuntime, out);
  withSeed.back().data = &other;
  s = runtime->call(withSeed, {view(outOther, {2, 7, 16})});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(outOther, out);
}

// q kept as [B,T,H,D] and passed as a [B,H,T,D] view; the output written
// through a [B,T,H,Dv] view: what an application with PyTorch's pre-transpose
// layout does.
TEST(AttentionApi, StridedInputsAndOutputs) {
  const int64_t B = 2, H = 3, T = 21, D = 16;
  SdpaSpec spec;
  spec.batch = B;
  spec.heads = H;
  spec.queryLen = T;
  spec.keyLen = T;
  spec.headDim = D;
  spec.causal = Causal::TopLeft;
  auto kernel = compileOk(spec);
  ASSERT_TRUE(kernel);
  std::mt19937 gen(11);
  ref::Tensor q = randomTensor({B, H, T, D}, gen), k = randomTensor({B, H, T, D}, gen),
              v = randomTensor({B, H, T, D}, gen);
  std::vector<float> qBTHD(B * T * H * D), kf = toFloats(k), vf = toFloats(v);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d)
          qBTHD[((b * T + t) * H + h) * D + d] = q.at({b, h, t, d});
  std::vector<float> outBTHD(B * T * H * D, NAN);
  std::vector<int64_t> bthd = {T * H * D, D, H * D, 1};
  Status s = kernel->call(
      {view(qBTHD, {B, H, T, D}, bthd), view(kf, {B, H, T, D}), view(vf, {B, H, T, D})},
      {view(outBTHD, {B, H, T, D}, bthd)});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::SdpaOptions ro;
  ro.causal = ref::Causal::TopLeft;
  ref::Tensor want = ref::sdpa(q, k, v, ro);
  ref::Tensor got({B, H, T, D});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d)
          got.at({b, h, t, d}) = outBTHD[((b * T + t) * H + h) * D + d];
  EXPECT_LT(relativeError(got, want), 1e-5);
}

// An output that overlaps an input is not the compiled code's destination:
// GQA (two heads on one K/V head), V the first half of a buffer and the
// output all of it, one thread. Written in place, head 0's output would
// overwrite V before head 1 read it; copied after the call, the output is
// attention of the original V.
TEST(AttentionApi, OutputOverlappingAnInput) {
  const int64_t T = 40, D = 16;
  SdpaSpec spec;
  spec.batch = 1;
  spec.heads = 2;
  spec.kvHeads = 1;
  spec.queryLen = T;
  spec.keyLen = T;
  spec.headDim = D;
  CompileOptions o;
  o.threads = 1;
  auto kernel = compileOk(spec, o);
  ASSERT_TRUE(kernel);
  std::mt19937 gen(17);
  ref::Tensor q = randomTensor({1, 2, T, D}, gen), k = randomTensor({1, 1, T, D}, gen),
              v = randomTensor({1, 1, T, D}, gen);
  std::vector<float> qf = toFloats(q), kf = toFloats(k), buffer = toFloats(v);
  buffer.resize(2 * T * D, NAN);
  Status s = kernel->call({view(qf, q.shape), view(kf, k.shape), view(buffer, v.shape)},
                          {view(buffer, {1, 2, T, D})});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LT(relativeError(fromFloats(buffer, q.shape), ref::sdpa(q, k, v, {})), 1e-5);
}

// The cpu pipeline's entry takes a destination per result
// (attn-result-destinations): a dense buffer of the result's shape is
// written in place and comes back as the result; one of another shape, or
// none, leaves the code to allocate (and the caller to copy). Values
// against the reference each time; callInto reuses its outputs.
TEST(ResultDestinations, InPlaceOrAllocated) {
  const char *ir = R"mlir(
    func.func @f(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>,
                 %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
      %o = attn.sdpa %q, %k, %v
          : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>)
            -> tensor<1x2x?x16xf32>
      return %o : tensor<1x2x?x16xf32>
    })mlir";
  attn::testing::Jitted cpu(ir, "f", runtime::Pipeline::Cpu);
  attn::testing::Jitted reference(ir, "f", runtime::Pipeline::Reference);
  ASSERT_TRUE(cpu.ok() && reference.ok());
  EXPECT_TRUE(cpu.function().takesResultDestinations());
  EXPECT_FALSE(reference.function().takesResultDestinations());

  const int64_t T = 37;
  std::vector<int64_t> shape = {1, 2, T, 16};
  std::mt19937 gen(5);
  ref::Tensor q = randomTensor(shape, gen), k = randomTensor(shape, gen),
              v = randomTensor(shape, gen);
  ref::Tensor want = ref::sdpa(q, k, v, {});
  std::vector<float> qf = toFloats(q), kf = toFloats(k), vf = toFloats(v);
  std::vector<const void *> in = {qf.data(), kf.data(), vf.data()};
  std::vector<std::vector<int64_t>> shapes(3, shape);
  for (const runtime::CompiledFunction *fn : {&cpu.function(), &reference.function()}) {
    bool inPlace = fn->takesResultDestinations();
    // A destination of the result's shape; one row short; none.
    for (int64_t rows : {T, T - 1, int64_t(0)}) {
      std::vector<float> dest(2 * T * 16, NAN);
      std::vector<runtime::ResultDestination> dests;
      if (rows)
        dests.push_back({dest.data(), {1, 2, rows, 16}});
      std::vector<float> got;
      const uint8_t *returned = nullptr;
      llvm::Error e = fn->callContiguous(
          in, shapes,
          [&](size_t, const runtime::CompiledFunction::ResultBuffer &r) {
            returned = r.data;
            ASSERT_EQ(r.shape.vec(), shape);
            const float *p = reinterpret_cast<const float *>(r.data);
            got.assign(p, p + 2 * T * 16);
          },
          nullptr, dests);
      ASSERT_FALSE(e) << llvm::toString(std::move(e));
      EXPECT_EQ(returned == reinterpret_cast<uint8_t *>(dest.data()), inPlace && rows == T)
          << "rows " << rows;
      EXPECT_LT(relativeError(fromFloats(got, shape), want), 1e-5) << "rows " << rows;
    }
  }

  // callInto: the second call writes the first call's output in place.
  std::vector<runtime::HostTensor> args;
  for (const ref::Tensor *t : {&q, &k, &v}) {
    auto h = runtime::HostTensor::zeros(runtime::ElementType::F32, shape);
    std::memcpy(h.bytes.data(), toFloats(*t).data(), h.bytes.size());
    args.push_back(std::move(h));
  }
  auto check = [&](const runtime::HostTensor &out) {
    ref::Tensor t(out.shape);
    for (int64_t i = 0; i < out.numel(); ++i)
      t.data[i] = out.getAsFloat(i);
    EXPECT_LT(relativeError(t, want), 1e-5);
  };
  std::vector<runtime::HostTensor> outs;
  ASSERT_FALSE(cpu.function().callInto(args, outs));
  ASSERT_EQ(outs.size(), 1u);
  check(outs[0]);
  const uint8_t *first = outs[0].bytes.data();
  std::memset(outs[0].bytes.data(), 0, outs[0].bytes.size());
  ASSERT_FALSE(cpu.function().callInto(args, outs));
  EXPECT_EQ(outs[0].bytes.data(), first);
  check(outs[0]);
}

// SdpaSpec's tokens-first inputs: Q [B, T, H, D] and K/V [B, T, Hkv, D]
// as they are (the sdpa takes their transposes, read in place), dynamic
// sizes, GQA and bottom-right causal, against the reference on the
// heads-first tensors; only Q tokens-first as well.
TEST(AttentionApi, TokensFirstInputs) {
  const int64_t B = 2, H = 4, Hkv = 2, Tq = 70, Tk = 90, D = 16;
  std::mt19937 gen(17);
  ref::Tensor q = randomTensor({B, H, Tq, D}, gen), k = randomTensor({B, Hkv, Tk, D}, gen),
              v = randomTensor({B, Hkv, Tk, D}, gen);
  // x [b, h, t, d] as [b, t, h, d].
  auto tokensFirst = [](const ref::Tensor &x) {
    int64_t b = x.shape[0], h = x.shape[1], t = x.shape[2], d = x.shape[3];
    std::vector<float> out(b * t * h * d);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < h; ++j)
        for (int64_t l = 0; l < t; ++l)
          for (int64_t c = 0; c < d; ++c)
            out[((i * t + l) * h + j) * d + c] = x.at({i, j, l, c});
    return out;
  };
  std::vector<float> qt = tokensFirst(q), kt = tokensFirst(k), vt = tokensFirst(v);
  std::vector<float> qf = toFloats(q), kf = toFloats(k), vf = toFloats(v);
  ref::SdpaOptions ro;
  ro.causal = ref::Causal::BottomRight;
  ref::Tensor want = ref::sdpa(q, k, v, ro);
  for (bool all : {true, false}) {
    SCOPED_TRACE(all ? "q, k, v tokens-first" : "q tokens-first");
    SdpaSpec spec;
    spec.batch = spec.queryLen = spec.keyLen = -1;
    spec.heads = H;
    spec.kvHeads = Hkv;
    spec.headDim = D;
    spec.causal = Causal::BottomRight;
    spec.queryTokensFirst = true;
    spec.keyTokensFirst = spec.valueTokensFirst = all;
    std::string text;
    ASSERT_TRUE(sdpaToMlir(spec, text).ok());
    size_t transposes = 0;
    for (size_t at = text.find("linalg.transpose"); at != std::string::npos;
         at = text.find("linalg.transpose", at + 1))
      ++transposes;
    EXPECT_EQ(transposes, all ? 3u : 1u) << text;
    auto kernel = compileOk(spec);
    ASSERT_TRUE(kernel);
    ref::Tensor got({B, H, Tq, D});
    std::vector<float> out(B * H * Tq * D, NAN);
    Status s = kernel->call(
        {view(qt, {B, Tq, H, D}), all ? view(kt, {B, Tk, Hkv, D}) : view(kf, {B, Hkv, Tk, D}),
         all ? view(vt, {B, Tk, Hkv, D}) : view(vf, {B, Hkv, Tk, D})},
        {view(out, {B, H, Tq, D})});
    ASSERT_TRUE(s.ok()) << s.message();
    std::copy(out.begin(), out.end(), got.data.begin());
    EXPECT_LT(relativeError(got, want), 1e-5);
  }
}

// A zero stride broadcasts one K/V head row... here: the same key row for
// every position of a length-5 key, against the reference on the expanded
// tensor.
TEST(AttentionApi, ZeroStrideInputBroadcasts) {
  SdpaSpec spec;
  spec.heads = 1;
  spec.queryLen = 3;
  spec.keyLen = 5;
  spec.headDim = 8;
  auto kernel = compileOk(spec);
  ASSERT_TRUE(kernel);
  std::mt19937 gen(5);
  ref::Tensor q = randomTensor({1, 1, 3, 8}, gen), row = randomTensor({8}, gen),
              v = randomTensor({1, 1, 5, 8}, gen);
  ref::Tensor k({1, 1, 5, 8});
  for (int64_t j = 0; j < 5; ++j)
    for (int64_t d = 0; d < 8; ++d)
      k.at({0, 0, j, d}) = row.data[d];
  std::vector<float> qf = toFloats(q), rf = toFloats(row), vf = toFloats(v), out(24);
  Status s = kernel->call({view(qf, {1, 1, 3, 8}), view(rf, {1, 1, 5, 8}, {0, 0, 0, 1}),
                           view(vf, {1, 1, 5, 8})},
                          {view(out, {1, 1, 3, 8})});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::Tensor want = ref::sdpa(q, k, v, {});
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);
}

TEST(AttentionApi, HalfPrecisionKernel) {
  SdpaSpec spec;
  spec.heads = 2;
  spec.queryLen = 9;
  spec.keyLen = 9;
  spec.headDim = 16;
  spec.type = ElementType::F16;
  auto kernel = compileOk(spec);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->inputs()[0].str(), "float16[1,2,9,16]");
  std::mt19937 gen(9);
  std::vector<ref::Tensor> in;
  std::vector<std::vector<uint16_t>> half(3);
  std::vector<TensorRef> refs;
  for (int i = 0; i < 3; ++i) {
    ref::Tensor t = randomTensor({1, 2, 9, 16}, gen);
    for (double &x : t.data) {
      half[i].push_back(runtime::floatToHalf(float(x)));
      x = runtime::halfToFloat(half[i].back()); // the reference sees f16 values
    }
    in.push_back(t);
    refs.push_back(TensorRef{ElementType::F16, half[i].data(), t.shape, {}});
  }
  std::vector<uint16_t> out(2 * 9 * 16);
  Status s = kernel->call(refs, {TensorRef{ElementType::F16, out.data(), {1, 2, 9, 16}, {}}});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::Tensor got({1, 2, 9, 16});
  for (size_t i = 0; i < out.size(); ++i)
    got.data[i] = runtime::halfToFloat(out[i]);
  ref::Tensor want = ref::sdpa(in[0], in[1], in[2], {});
  EXPECT_LT(relativeError(got, want), 2e-3); // f16 rounding of the output
}

/// bf16 through the fused CPU kernel (and the reference), against the
/// double reference on the bf16-rounded inputs; GQA and a window.
TEST(AttentionApi, Bfloat16Kernel) {
  for (Target target : {Target::Cpu, Target::Reference}) {
    SdpaSpec spec;
    spec.heads = 4;
    spec.kvHeads = 2;
    spec.queryLen = 11;
    spec.keyLen = 19;
    spec.headDim = 32;
    spec.type = ElementType::BF16;
    spec.causal = Causal::BottomRight;
    spec.windowLeft = 6;
    CompileOptions o;
    o.target = target;
    auto kernel = compileOk(spec, o);
    ASSERT_TRUE(kernel);
    EXPECT_EQ(kernel->inputs()[0].str(), "bfloat16[1,4,11,32]");
    std::mt19937 gen(10);
    std::vector<ref::Tensor> in;
    std::vector<std::vector<uint16_t>> bf(3);
    std::vector<TensorRef> refs;
    std::vector<std::vector<int64_t>> shapes = {{1, 4, 11, 32}, {1, 2, 19, 32}, {1, 2, 19, 32}};
    for (int i = 0; i < 3; ++i) {
      ref::Tensor t = randomTensor(shapes[i], gen);
      for (double &x : t.data) {
        bf[i].push_back(runtime::floatToBfloat16(float(x)));
        x = runtime::bfloat16ToFloat(bf[i].back()); // the reference sees bf16 values
      }
      in.push_back(t);
      refs.push_back(TensorRef{ElementType::BF16, bf[i].data(), t.shape, {}});
    }
    std::vector<uint16_t> out(4 * 11 * 32);
    Status s = kernel->call(refs, {TensorRef{ElementType::BF16, out.data(), {1, 4, 11, 32}, {}}});
    ASSERT_TRUE(s.ok()) << s.message();
    ref::Tensor got({1, 4, 11, 32});
    for (size_t i = 0; i < out.size(); ++i)
      got.data[i] = runtime::bfloat16ToFloat(out[i]);
    ref::SdpaOptions ro;
    ro.causal = ref::Causal::BottomRight;
    ref::Window w;
    w.left = 6;
    ro.window = w;
    ref::Tensor want = ref::sdpa(in[0], in[1], in[2], ro);
    // bf16 has 8 significant bits: the output rounding alone is 2^-9.
    double tol = target == Target::Cpu ? 4e-3 : 3e-2; // the reference rounds between ops
    EXPECT_LT(relativeError(got, want), tol) << (target == Target::Cpu ? "cpu" : "reference");
  }
}

TEST(AttentionApi, CompileFromIrText) {
  const char *ir = R"mlir(
    func.func @f(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>,
                 %v: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
      %o = attn.sdpa %q, %k, %v {scale = 0.5 : f32}
          : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>)
            -> tensor<1x1x4x8xf32>
      return %o : tensor<1x1x4x8xf32>
    })mlir";
  std::unique_ptr<Kernel> kernel;
  Status s = Kernel::compile(ir, "f", {}, kernel);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(kernel->mlir(), ir);
  std::mt19937 gen(1);
  ref::Tensor q = randomTensor({1, 1, 4, 8}, gen), k = randomTensor({1, 1, 6, 8}, gen),
              v = randomTensor({1, 1, 6, 8}, gen);
  std::vector<float> qf = toFloats(q), kf = toFloats(k), vf = toFloats(v), out(32);
  s = kernel->call({view(qf, q.shape), view(kf, k.shape), view(vf, v.shape)},
                   {view(out, {1, 1, 4, 8})});
  ASSERT_TRUE(s.ok()) << s.message();
  ref::SdpaOptions ro;
  ro.scale = 0.5;
  ref::Tensor want = ref::sdpa(q, k, v, ro);
  EXPECT_LT(relativeError(fromFloats(out, want.shape), want), 1e-5);
}

// A buffer the compiled code cannot allocate is an error status with the
// size, not a crash: a 64 GiB projection output under a 6 GiB address-space
// limit (in a child process, so the limit stays there).
TEST(AttentionApi, AllocationFailureIsAnError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan reserves terabytes of address space and reports failed "
                  "allocations itself";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan reserves terabytes of address space and reports failed "
                  "allocations itself";
#endif
#endif
  const char *ir = R"mlir(
    func.func @big(%x: tensor<1x1048576x1xf32>, %w: tensor<16384x1xf32>)
        -> tensor<1x1048576x16384xf32> {
      %y = attn.project %x, %w
          : (tensor<1x1048576x1xf32>, tensor<16384x1xf32>) -> tensor<1x1048576x16384xf32>
      return %y : tensor<1x1048576x16384xf32>
    })mlir";
  auto child = [&] {
    struct rlimit lim = {6ull << 30, 6ull << 30};
    setrlimit(RLIMIT_AS, &lim);
    CompileOptions o;
    o.target = Target::Reference;
    std::unique_ptr<Kernel> kernel;
    Status s = Kernel::compile(ir, "big", o, kernel);
    if (!s.ok()) {
      std::fprintf(stderr, "compile failed: %s\n", s.message().c_str());
      std::exit(3);
    }
    std::vector<float> x(1 << 20, 1.0f), w(1 << 14, 1.0f), y(1);
    s = kernel->call({view(x, {1, 1 << 20, 1}), view(w, {1 << 14, 1})},
                     {view(y, {1, 1 << 20, 1 << 14})});
    std::fprintf(stderr, "status: %s\n", s.ok() ? "ok" : s.message().c_str());
    std::exit(s.ok() ? 4 : 0);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0),
              "status: the compiled code could not allocate 68719476[0-9]+ bytes "
              "\\(64.0 GiB\\); the call was abandoned");
}

// B 1, H 2, D 16, bottom-right causal, Tq and Tk dynamic, one thread a
// call: what the concurrency tests share.
static std::unique_ptr<Kernel> dynamicCausalKernel() {
  SdpaSpec spec;
  spec.batch = 1;
  spec.heads = 2;
  spec.queryLen = -1;
  spec.keyLen = -1;
  spec.headDim = 16;
  spec.causal = Causal::BottomRight;
  CompileOptions o;
  o.threads = 1;
  return compileOk(spec, o);
}

// [1,H,T,D] values laid out as [1,T,H,D] (the [1,H,T,D] view of that has
// strides {T·H·D, D, H·D, 1}).
static std::vector<float> headsSecond(const ref::Tensor &x) {
  int64_t h = x.shape[1], t = x.shape[2], d = x.shape[3];
  std::vector<float> out(t * h * d);
  for (int64_t a = 0; a < h; ++a)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < d; ++c)
        out[(i * h + a) * d + c] = static_cast<float>(x.at({0, a, i, c}));
  return out;
}

// `threads` threads calling dynamicCausalKernel 8 times each with lengths
// sizes(t, rep) (random values, seeds seed + t), q, k and v dense or (with
// `strided`) as [1,T,H,D] views; every call must succeed and agree with
// the reference.
static void expectConcurrentCallsAgree(
    int threads, unsigned seed, bool strided,
    const std::function<std::pair<int64_t, int64_t>(int, int)> &sizes) {
  auto kernel = dynamicCausalKernel();
  ASSERT_TRUE(kernel);
  const int64_t H = 2, D = 16;
  std::vector<double> worst(threads, 0.0);
  std::vector<std::string> errors(threads);
  auto input = [&](std::vector<float> &data, const ref::Tensor &x) {
    int64_t t = x.shape[2];
    return strided ? view(data, x.shape, {t * H * D, D, H * D, 1}) : view(data, x.shape);
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937 gen(seed + t);
      for (int rep = 0; rep < 8; ++rep) {
        auto [tq, tk] = sizes(t, rep);
        ref::Tensor q = randomTensor({1, H, tq, D}, gen), k = randomTensor({1, H, tk, D}, gen),
                    v = randomTensor({1, H, tk, D}, gen);
        std::vector<float> qf = strided ? headsSecond(q) : toFloats(q),
                           kf = strided ? headsSecond(k) : toFloats(k),
                           vf = strided ? headsSecond(v) : toFloats(v), out(H * tq * D);
        Status s = kernel->call({input(qf, q), input(kf, k), input(vf, v)},
                                {view(out, {1, H, tq, D})});
        if (!s.ok()) {
          errors[t] = s.message();
          return;
        }
        ref::SdpaOptions ro;
        ro.causal = ref::Causal::BottomRight;
        ref::Tensor want = ref::sdpa(q, k, v, ro);
        worst[t] = std::max(worst[t], relativeError(fromFloats(out, want.shape), want));
      }
    });
  for (std::thread &t : pool)
    t.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_LT(worst[t], 1e-5) << "thread " << t;
  }
}

// Many threads share one kernel, each with its own lengths, many times.
TEST(AttentionApi, ConcurrentCallsAgreeWithReference) {
  expectConcurrentCallsAgree(6, 100, /*strided=*/false, [](int t, int rep) {
    return std::pair<int64_t, int64_t>{1 + (t * 7 + rep * 5) % 50, 1 + (t * 3 + rep * 11) % 70};
  });
}

// Strided inputs are packed into per-thread scratch kept from call to
// call: calls whose sizes go up and down, in 4 threads at once, each with
// q, k and v as [B,T,H,D] views, agree with the reference (a slot too
// small, or one shared between threads, would give wrong values).
TEST(AttentionApi, StridedInputsAcrossCallsAndThreads) {
  expectConcurrentCallsAgree(4, 200, /*strided=*/true, [](int t, int rep) {
    return std::pair<int64_t, int64_t>{1 + (t * 13 + rep * 29) % 90,
                                       1 + (t * 5 + rep * 37) % 120};
  });
}

//===----------------------------------------------------------------------===//
// Errors come back as values
//===----------------------------------------------------------------------===//

class CallErrors : public ::testing::Test {
protected:
  void SetUp() override {
    SdpaSpec spec;
    spec.heads = 2;
    spec.queryLen = -1;
    spec.keyLen = -1;
    spec.headDim = 8;
    kernel = compileOk(spec);
    ASSERT_TRUE(kernel);
  }
  Status callWith(std::vector<TensorRef> in, std::vector<TensorRef> out) {
    return kernel->call(in, out);
  }
  std::vector<float> a = std::vector<float>(1024), b = std::vector<float>(1024),
                     c = std::vector<float>(1024), o = std::vector<float>(1024);
  std::unique_ptr<Kernel> kernel;
};

#define EXPECT_ERROR(status, text)                                             \
  do {                                                                         \
    Status s_ = (status);                                                      \
    EXPECT_FALSE(s_.ok());                                                     \
    EXPECT_NE(s_.message().find(text), std::string::npos) << s_.message();     \
  } while (0)

TEST_F(CallErrors, Arity) {
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8})}, {view(o, {1, 2, 4, 8})}),
               "takes 3 inputs, got 1");
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}), view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {}),
               "has 1 outputs, got 0");
}

TEST_F(CallErrors, DtypeRankAndStaticDims) {
  TensorRef half{ElementType::F16, a.data(), {1, 2, 4, 8}, {}};
  EXPECT_ERROR(callWith({half, view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "input #0: element type float16, expected float32[1,2,?,8]");
  EXPECT_ERROR(callWith({view(a, {2, 4, 8}), view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "input #0: rank 3");
  EXPECT_ERROR(callWith({view(a, {1, 3, 4, 8}), view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "at dim 1");
}

TEST_F(CallErrors, DynamicSizesThatDoNotFit) {
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}), view(b, {1, 2, 5, 8}), view(c, {1, 2, 6, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "operand 'value' length (dim 2) is 6, expected 5");
  // The second time comes from the cache, with the same message.
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}), view(b, {1, 2, 5, 8}), view(c, {1, 2, 6, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "operand 'value' length (dim 2) is 6, expected 5");
}

TEST_F(CallErrors, OutputShapeMustBeTheResults) {
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}), view(b, {1, 2, 5, 8}), view(c, {1, 2, 5, 8})},
                        {view(o, {1, 2, 5, 8})}),
               "output #0: shape [1,2,5,8], the result is [1,2,4,8]");
}

// Kernel::resultShapes: the output shapes for given input shapes (dynamic
// dims resolved), after call()'s checks, with call()'s messages.
TEST_F(CallErrors, ResultShapes) {
  std::vector<std::vector<int64_t>> shapes;
  Status s = kernel->resultShapes({{1, 2, 4, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}}, shapes);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(shapes, (std::vector<std::vector<int64_t>>{{1, 2, 4, 8}}));
  EXPECT_ERROR(kernel->resultShapes({{1, 2, 4, 8}, {1, 2, 5, 8}, {1, 2, 6, 8}}, shapes),
               "operand 'value' length (dim 2) is 6, expected 5");
  EXPECT_ERROR(kernel->resultShapes({{1, 3, 4, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}}, shapes),
               "input #0: shape [1,3,4,8] does not match float32[1,2,?,8] at dim 1");
  EXPECT_ERROR(kernel->resultShapes({{1, 2, 4, 8}}, shapes), "takes 3 inputs, got 1");
}

// Empty outputs (a length of 0): nothing to compute, the compiled code is
// not run, the call succeeds.
TEST_F(CallErrors, EmptyOutputIsNotComputed) {
  Status s = callWith({view(a, {1, 2, 0, 8}), view(b, {1, 2, 5, 8}), view(c, {1, 2, 5, 8})},
                      {view(o, {1, 2, 0, 8})});
  EXPECT_TRUE(s.ok()) << s.message();
  // A batch of 0 (the CPU kernel divided by it: SIGFPE before).
  SdpaSpec spec;
  spec.batch = -1;
  spec.heads = 2;
  spec.headDim = 8;
  std::unique_ptr<Kernel> dynBatch = compileOk(spec);
  ASSERT_TRUE(dynBatch);
  s = dynBatch->call({view(a, {0, 2, 1, 8}), view(b, {0, 2, 1, 8}), view(c, {0, 2, 1, 8})},
                     {view(o, {0, 2, 1, 8})});
  EXPECT_TRUE(s.ok()) << s.message();
  // Its checks still run.
  EXPECT_ERROR(callWith({view(a, {1, 2, 0, 8}), view(b, {1, 2, 5, 8}), view(c, {1, 2, 6, 8})},
                        {view(o, {1, 2, 0, 8})}),
               "operand 'value' length (dim 2) is 6, expected 5");
}

TEST_F(CallErrors, PointersAndStrides) {
  TensorRef null{ElementType::F32, nullptr, {1, 2, 4, 8}, {}};
  EXPECT_ERROR(callWith({null, view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "input #0: null data pointer");
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}, {64, 32, 8}), view(b, {1, 2, 4, 8}),
                         view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "3 strides for rank 4");
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}, {64, 32, -8, 1}), view(b, {1, 2, 4, 8}),
                         view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "negative stride at dim 2");
  EXPECT_ERROR(callWith({view(a, {1, 2, 4, 8}), view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8}, {64, 32, 0, 1})}),
               "stride 0 at dim 2");
  EXPECT_ERROR(callWith({view(a, {1, 2, -4, 8}), view(b, {1, 2, 4, 8}), view(c, {1, 2, 4, 8})},
                        {view(o, {1, 2, 4, 8})}),
               "negative size at dim 2");
}

TEST(AttentionApiCompileErrors, BadIrAndEntries) {
  std::unique_ptr<Kernel> k;
  EXPECT_ERROR(Kernel::compile("func.func @f(", "f", {}, k), "does not parse");
  EXPECT_FALSE(k);
  const char *bad = R"mlir(
    func.func @f(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>,
                 %v: tensor<1x1x7x8xf32>) -> tensor<1x1x4x8xf32> {
      %o = attn.sdpa %q, %k, %v
          : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x7x8xf32>)
            -> tensor<1x1x4x8xf32>
      return %o : tensor<1x1x4x8xf32>
    })mlir";
  EXPECT_ERROR(Kernel::compile(bad, "f", {}, k), "length (dim 2) is 7, expected 6");
  EXPECT_ERROR(Kernel::compile("func.func @g() { return }", "f", {}, k),
               "no function named 'f'");
  CompileOptions o;
  o.optLevel = 9;
  EXPECT_ERROR(Kernel::compile("func.func @g() { return }", "g", o, k), "optLevel");
  o = {};
  o.tileQ = 0;
  SdpaSpec spec;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "tile");
  o = {};
  o.vectorWidth = 3;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "vector-width");
  o = {};
  o.minWorkItems = -1;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "min-work-items");
}

// The CPU kernel's options reach the pipeline: every combination gives the
// same output (within f32 rounding), and bf16Dot is refused where the host
// lacks AVX512-BF16.
TEST(AttentionApi, CpuKernelOptions) {
  SdpaSpec spec;
  spec.heads = 2;
  spec.queryLen = 3;
  spec.keyLen = 1000; // 16 key tiles: min-work-items 64 splits them 4 ways
  spec.headDim = 32;
  std::mt19937 gen(11);
  ref::Tensor q = randomTensor({1, 2, 3, 32}, gen);
  ref::Tensor kk = randomTensor({1, 2, 1000, 32}, gen);
  ref::Tensor v = randomTensor({1, 2, 1000, 32}, gen);
  std::vector<float> qf = toFloats(q), kf = toFloats(kk), vf = toFloats(v);
  auto run = [&](CompileOptions o) {
    std::vector<float> out(1 * 2 * 3 * 32, -1.0f);
    auto kernel = compileOk(spec, o);
    if (!kernel)
      return out;
    std::vector<TensorRef> outs = {view(out, {1, 2, 3, 32})};
    Status s = kernel->call({view(qf, q.shape), view(kf, kk.shape), view(vf, v.shape)}, outs);
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  };
  ref::Tensor want = ref::sdpa(q, kk, v, {});
  CompileOptions base;
  CompileOptions narrow = base;
  narrow.vectorWidth = 8;
  CompileOptions noSplit = base;
  noSplit.minWorkItems = 0;
  CompileOptions split = base;
  split.minWorkItems = 64;
  for (const CompileOptions &o : {base, narrow, noSplit, split}) {
    std::vector<float> got = run(o);
    EXPECT_LT(relativeError(fromFloats(got, want.shape), want), 1e-5);
  }
  CompileOptions dot = base;
  dot.bf16Dot = true;
  std::unique_ptr<Kernel> k;
  Status s = Kernel::compileSdpa(spec, dot, k);
  if (!attn::runtime::hostCpuTarget().hasBf16Dot)
    EXPECT_NE(s.message().find("AVX512-BF16"), std::string::npos) << s.message();
  else
    EXPECT_TRUE(s.ok()) << s.message();
}

// Target::Gpu (host buffers or device-resident): needs a CUDA device; on a
// machine without one the compile says so. deviceResident and tf32 are GPU
// options.
TEST(AttentionApiCompileErrors, GpuTargets) {
  std::unique_ptr<Kernel> k;
  SdpaSpec spec;
  CompileOptions o;
  o.deviceResident = true;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "deviceResident needs Target::Gpu");
  o.target = Target::Reference;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "deviceResident needs Target::Gpu");
  o.deviceResident = false;
  o.tf32 = true;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "tf32 needs Target::Gpu");
  o.target = Target::Cpu;
  EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "tf32 needs Target::Gpu");
  if (!attn::runtime::cudaUnavailableReason().empty()) {
    for (bool resident : {false, true}) {
      o.target = Target::Gpu;
      o.deviceResident = resident;
      EXPECT_ERROR(Kernel::compileSdpa(spec, o, k), "pipeline 'gpu' needs an NVIDIA GPU");
      EXPECT_FALSE(k);
    }
  }
}

TEST(AttentionApiCompileErrors, BadSpecs) {
  std::unique_ptr<Kernel> k;
  SdpaSpec s;
  s.heads = 0;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k), "heads must be positive, got 0");
  s = {};
  s.queryLen = -2;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k),
               "queryLen must be positive or -1 (given at call time), got -2");
  s = {};
  s.heads = 4;
  s.kvHeads = 3;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k), "does not parse or verify");
  s = {};
  s.type = ElementType::Bool;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k), "must be F32, F16, BF16 or F64");
  s = {};
  s.mask = MaskKind::Keep;
  s.maskShape = {1, 1, 1, 1, 1};
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k), "rank <= 4");
  s = {};
  s.softcap = -1;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k),
               "SdpaSpec.softcap must be 0 (none) or a positive finite number");
  s = {};
  s.windowRight = -3;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k),
               "SdpaSpec.windowLeft/windowRight must be >= 0 or -1 (unbounded), got -1, -3");
  s = {};
  s.type = ElementType::I32;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k), "must be F32, F16, BF16 or F64");
  MhaSpec m;
  m.embedDim = 30;
  m.numHeads = 4;
  EXPECT_ERROR(Kernel::compileMha(m, {}, k), "not divisible by numHeads 4");
  m = {};
  m.softcap = NAN;
  EXPECT_ERROR(Kernel::compileMha(m, {}, k), "MhaSpec.softcap must be 0");
  m.softcap = 0;
  m.runtimeSeed = true;
  EXPECT_ERROR(Kernel::compileMha(m, {}, k), "MhaSpec.runtimeSeed needs a dropoutRate");
  m.dropoutRate = 1.0;
  EXPECT_ERROR(Kernel::compileMha(m, {}, k), "MhaSpec.dropoutRate must lie in [0, 1)");
  s = {};
  s.part = SdpaPart::OutputWithLse;
  s.keyTokensFirst = true;
  EXPECT_ERROR(Kernel::compileSdpa(s, {}, k), "tokens-first inputs need part Output");
}

TEST(AttentionApi, SpecToMlirText) {
  SdpaSpec s;
  s.batch = -1;
  s.heads = 2;
  s.queryLen = 3;
  s.keyLen = -1;
  s.headDim = 4;
  s.causal = Causal::BottomRight;
  s.mask = MaskKind::Keep;
  s.maskShape = {1, -1};
  s.scale = 0.25;
  std::string text;
  ASSERT_TRUE(sdpaToMlir(s, text).ok());
  // Built with the op builders and printed: the query, key, value and mask
  // argument types, the attributes, and the inferred result type.
  EXPECT_NE(text.find("func.func @sdpa(%arg0: tensor<?x2x3x4xf32>, %arg1: "
                      "tensor<?x2x?x4xf32>, %arg2: tensor<?x2x?x4xf32>, %arg3: "
                      "tensor<1x?xi1>) -> tensor<?x2x3x4xf32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("scale = 2.500000e-01 : f32"), std::string::npos) << text;
  EXPECT_NE(text.find("causal = #attn.causal<bottom_right>"), std::string::npos) << text;

  MhaSpec m;
  m.batch = 2;
  m.queryLen = -1;
  m.keyLen = 5;
  m.embedDim = 16;
  m.numHeads = 4;
  m.numKvHeads = 2;
  m.bias = true;
  m.mask = MaskKind::Additive;
  m.maskShape = {5};
  ASSERT_TRUE(mhaToMlir(m, text).ok());
  // Weights [H*D, E] = [16, 16], [Hkv*D, Ekv] = [8, 16]; biases; the mask;
  // the result [B, Tq, Eo].
  EXPECT_NE(text.find("(%arg0: tensor<2x?x16xf32>, %arg1: tensor<2x5x16xf32>, "
                      "%arg2: tensor<16x16xf32>, %arg3: tensor<8x16xf32>, %arg4: "
                      "tensor<8x16xf32>, %arg5: tensor<16x16xf32>, %arg6: "
                      "tensor<16xf32>, %arg7: tensor<8xf32>, %arg8: tensor<8xf32>, "
                      "%arg9: tensor<16xf32>, %arg10: tensor<5xf32>) -> "
                      "tensor<2x?x16xf32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("qkv_bias(%arg6, %arg7, %arg8) out_bias(%arg9) mask(%arg10) "
                      "{num_heads = 4 : i64, num_kv_heads = 2 : i64}"),
            std::string::npos)
      << text;
}

// Sinks: an [H] f32 input after the key lengths, on sdpa and sdpa_partial;
// the gradients part returns dsinks [H] f32 after dQ, dK, dV (values:
// test/Python/test_training.py's test_sinks_gradient).
TEST(AttentionApi, SpecWithSinks) {
  SdpaSpec s;
  s.batch = 1;
  s.heads = 4;
  s.kvHeads = 2;
  s.queryLen = 3;
  s.keyLen = 5;
  s.headDim = 8;
  s.keyLengths = true;
  s.sinks = true;
  std::string text;
  ASSERT_TRUE(sdpaToMlir(s, text).ok());
  EXPECT_NE(text.find("%arg3: tensor<1xi32>, %arg4: tensor<4xf32>) -> tensor<1x4x3x8xf32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("key_lengths(%arg3) sinks(%arg4)"), std::string::npos) << text;
  s.part = SdpaPart::OutputWithLse;
  ASSERT_TRUE(sdpaToMlir(s, text).ok());
  EXPECT_NE(text.find("attn.sdpa_partial %arg0, %arg1, %arg2 key_lengths(%arg3) sinks(%arg4)"),
            std::string::npos)
      << text;
  s.part = SdpaPart::Gradients;
  ASSERT_TRUE(sdpaToMlir(s, text).ok());
  EXPECT_NE(text.find("-> (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, "
                      "tensor<4xf32>)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("linalg.generic"), std::string::npos) << text;
}

// attn::differentiate: attn-differentiate on text; the gradient function
// compiles like any other (its values: test/Integration/differentiate-*.mlir
// and test_flex.py's gradient test); errors name what failed.
TEST(AttentionApi, DifferentiateText) {
  const char *text = R"(
    func.func @f(%q: tensor<1x2x4x8xf32>, %bias: tensor<4x4xf32> {attn.no_grad})
        -> tensor<1x2x4x8xf32> {
      %o = attn.sdpa %q, %q, %q, %bias
          : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xf32>)
            -> tensor<1x2x4x8xf32>
      return %o : tensor<1x2x4x8xf32>
    })";
  std::string grad;
  ASSERT_TRUE(differentiate(text, "f", grad).ok());
  // The no_grad mask gets no gradient: one result, dQ.
  EXPECT_NE(grad.find("func.func @f_grad("), std::string::npos) << grad;
  EXPECT_NE(grad.find("-> tensor<1x2x4x8xf32> {"), std::string::npos) << grad;
  std::unique_ptr<Kernel> k;
  ASSERT_TRUE(Kernel::compile(grad, "f_grad", CompileOptions{}, k).ok());
  EXPECT_EQ(k->inputs().size(), 3u);
  EXPECT_EQ(k->outputs().size(), 1u);
  Status bad = differentiate("func.func @g(", "", grad);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("does not parse"), std::string::npos) << bad.message();
  bad = differentiate(text, "nope", grad);
  EXPECT_NE(bad.message().find("no function with a body named 'nope'"), std::string::npos)
      << bad.message();
}

} // namespace
