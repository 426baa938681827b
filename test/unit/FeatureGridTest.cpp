//===- FeatureGridTest.cpp - softcap, window, ALiBi, key lengths, RoPE ----===//
//
// The attention variants (docs/design.md, *Attention variants*) through the
// reference, cpu and gpu-schedule pipelines, against the double-precision
// reference (test/unit/Reference), relative error <= 1e-4:
//
//   FeatureGrid    each feature × causal kind, with GQA or not, static or
//                  dynamic shapes, T not a multiple of any tile, D 64/80/128
//                  (a covering subset of the product, not all of it);
//   FeatureEdges   the corner cases of each feature and one combination of
//                  them all;
//   FeatureOps     attn.softcap, attn.mask and attn.rope on their own
//                  (reference pipeline), -inf positions included.
//
// The fused kernels of the cpu and gpu-schedule pipelines compute softcap,
// ALiBi, windows and key lengths themselves (the rules of
// lib/Conversion/FlashCore), so these are the kernels' tests; attn.rope is
// an op of its own and takes the reference lowering in every pipeline.
//
// Key lengths reach the compiled function either as an i32/i64 input or as
// a constant inside it; lengths outside [0, Tk] (which the tools reject
// before a call) are clamped by the compiled code, as by the reference.
//
//===----------------------------------------------------------------------===//
#include "NumericsTest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

using namespace attn;
using namespace attn::testing;
using runtime::ElementType;
using runtime::Pipeline;

namespace {
constexpr double kTol = 1e-4;
constexpr int64_t kDyn = -1;
const double kPi = 3.14159265358979323846;

const char *causalName(ref::Causal c) {
  switch (c) {
  case ref::Causal::None:
    return "nocausal";
  case ref::Causal::TopLeft:
    return "topleft";
  case ref::Causal::BottomRight:
    return "bottomright";
  }
  return "";
}

std::string kindName(ref::Causal c) {
  return c == ref::Causal::TopLeft ? "top_left" : "bottom_right";
}

struct RopeSpec {
  int64_t half;            ///< R/2
  ref::RopeStyle style;
  bool perSequence = false; ///< [B,T,R/2] tables instead of [T,R/2]
};

enum class Slopes { None, PerHead, PerBatchHead };

/// One sdpa with features (optionally behind attn.rope on Q and K).
struct Spec {
  int64_t h = 2, hkv = 2, d = 16, dv = 16;
  bool dynamic = false; ///< B, Tq, Tk written as ?
  ref::Causal causal = ref::Causal::None;
  std::optional<float> scale, softcap;
  std::optional<ref::Window> window;
  bool printAlign = false; ///< write the window's align (no causal only)
  Slopes slopes = Slopes::None;
  double slopeMax = 0.5;                        ///< slopes uniform in [0, slopeMax]
  std::optional<std::vector<int64_t>> lengths; ///< constant [B] i32
  /// Key lengths as an input of this type (I32 or I64) instead of a
  /// constant: `lengths` when given, else random in [0, Tk] per shape.
  std::optional<ElementType> lengthsInput;
  ref::Mask::Kind mask = ref::Mask::Kind::None;
  bool maskPerHead = false; ///< mask [B,H,Tq,Tk] instead of [B,1,Tq,Tk]
  std::optional<RopeSpec> rope;
  ElementType dtype = ElementType::F32; ///< of q, k, v and the output
  std::optional<float> dropoutRate; ///< dropout_rate (and dropout_seed)
  int64_t dropoutSeed = 0;
};

struct Shape {
  int64_t b, tq, tk;
};

std::string windowAttr(const Spec &s) {
  std::vector<std::string> parts;
  if (s.window->left)
    parts.push_back("left = " + std::to_string(*s.window->left));
  if (s.window->right)
    parts.push_back("right = " + std::to_string(*s.window->right));
  if (s.printAlign)
    parts.push_back("align = " + kindName(s.window->align));
  std::string out = "window = #attn.window<";
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? ", " : "") + parts[i];
  return out + ">";
}

std::string floatAttr(double v) {
  std::ostringstream os;
  os.precision(9);
  os << std::scientific << v << " : f32";
  return os.str();
}

/// The function @f for `s` at shape `shape` (its B, Tq, Tk become ? when
/// the spec is dynamic). Arguments: q, k, v, [mask], [slopes], [len],
/// [cos_q, sin_q, cos_k, sin_k].
std::string source(const Spec &s, const Shape &shape) {
  int64_t b = s.dynamic ? kDyn : shape.b, tq = s.dynamic ? kDyn : shape.tq,
          tk = s.dynamic ? kDyn : shape.tk;
  std::string elt = s.dtype == ElementType::F16 ? "f16" : s.dtype == ElementType::BF16 ? "bf16" : "f32";
  std::string qT = tensorType({b, s.h, tq, s.d}, elt),
              kT = tensorType({b, s.hkv, tk, s.d}, elt),
              vT = tensorType({b, s.hkv, tk, s.dv}, elt),
              oT = tensorType({b, s.h, tq, s.dv}, elt);
  std::vector<std::pair<std::string, std::string>> args{{"q", qT}, {"k", kT}, {"v", vT}};
  std::string mT, sT, lT, tqT, tkT;
  if (s.mask != ref::Mask::Kind::None) {
    mT = tensorType({b, s.maskPerHead ? s.h : 1, tq, tk},
                    s.mask == ref::Mask::Kind::Keep ? "i1" : "f32");
    args.push_back({"m", mT});
  }
  if (s.slopes != Slopes::None) {
    sT = s.slopes == Slopes::PerHead ? tensorType({s.h}) : tensorType({b, s.h});
    args.push_back({"slopes", sT});
  }
  if (s.lengthsInput) {
    lT = tensorType({b}, *s.lengthsInput == ElementType::I64 ? "i64" : "i32");
    args.push_back({"len", lT});
  }
  if (s.rope) {
    auto table = [&](int64_t t) {
      return s.rope->perSequence ? tensorType({b, t, s.rope->half})
                                 : tensorType({t, s.rope->half});
    };
    tqT = table(tq);
    tkT = table(tk);
    args.insert(args.end(), {{"cq", tqT}, {"sq", tqT}, {"ck", tkT}, {"sk", tkT}});
  }
  std::ostringstream src;
  src << "func.func @f(";
  for (size_t i = 0; i < args.size(); ++i)
    src << (i ? ", " : "") << "%" << args[i].first << ": " << args[i].second;
  src << ") -> " << oT << " {\n";
  std::string q = "%q", k = "%k";
  if (s.rope) {
    std::string style = s.rope->style == ref::RopeStyle::Interleaved
                            ? " {style = #attn.rope<interleaved>}"
                            : "";
    src << "  %qr = attn.rope %q, %cq, %sq" << style << " : " << qT << ", " << tqT
        << ", " << tqT << "\n";
    src << "  %kr = attn.rope %k, %ck, %sk" << style << " : " << kT << ", " << tkT
        << ", " << tkT << "\n";
    q = "%qr";
    k = "%kr";
  }
  if (s.lengths && !s.lengthsInput) {
    lT = tensorType({static_cast<int64_t>(s.lengths->size())}, "i32");
    src << "  %len = arith.constant dense<[";
    for (size_t i = 0; i < s.lengths->size(); ++i)
      src << (i ? ", " : "") << (*s.lengths)[i];
    src << "]> : " << lT << "\n";
  }
  std::vector<std::string> attrs;
  if (s.scale)
    attrs.push_back("scale = " + floatAttr(*s.scale));
  if (s.causal != ref::Causal::None)
    attrs.push_back("causal = #attn.causal<" + kindName(s.causal) + ">");
  if (s.softcap)
    attrs.push_back("softcap = " + floatAttr(*s.softcap));
  if (s.dropoutRate) {
    attrs.push_back("dropout_rate = " + floatAttr(*s.dropoutRate));
    attrs.push_back("dropout_seed = " + std::to_string(s.dropoutSeed) + " : i64");
  }
  if (s.window)
    attrs.push_back(windowAttr(s));
  src << "  %o = attn.sdpa " << q << ", " << k << ", %v" << (mT.empty() ? "" : ", %m")
      << (sT.empty() ? "" : " alibi(%slopes)") << (lT.empty() ? "" : " key_lengths(%len)")
      << " {";
  for (size_t i = 0; i < attrs.size(); ++i)
    src << (i ? ", " : "") << attrs[i];
  src << "} : (" << qT << ", " << kT << ", " << vT << (mT.empty() ? "" : ", " + mT)
      << (sT.empty() ? "" : ", " + sT) << (lT.empty() ? "" : ", " + lT) << ") -> " << oT
      << "\n  return %o : " << oT << "\n}\n";
  return src.str();
}

/// A random keep mask (about 3 in 4 kept) or additive mask in [-1, 1).
ref::Mask randomMask(ref::Mask::Kind kind, std::vector<int64_t> shape, std::mt19937 &gen) {
  ref::Mask m;
  m.kind = kind;
  m.values = ref::Tensor(std::move(shape));
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (double &x : m.values.data)
    x = kind == ref::Mask::Kind::Keep ? (gen() % 4 != 0 ? 1.0 : 0.0)
                                      : static_cast<float>(uni(gen));
  return m;
}

/// cos/sin tables of random angles (a true rotation), rounded to f32.
std::pair<ref::Tensor, ref::Tensor> ropeTables(std::vector<int64_t> shape, std::mt19937 &gen) {
  ref::Tensor theta = randomTensor(shape, gen, -kPi, kPi);
  ref::Tensor c(shape), s(shape);
  for (size_t i = 0; i < theta.data.size(); ++i) {
    c.data[i] = static_cast<float>(std::cos(theta.data[i]));
    s.data[i] = static_cast<float>(std::sin(theta.data[i]));
  }
  return {c, s};
}

/// Inputs and the reference output of `s` at one shape.
struct Instance {
  std::vector<ref::Tensor> inputs;
  std::vector<ElementType> dtypes;
  ref::Tensor want;
};

Instance instance(const Spec &s, const Shape &sh, std::mt19937 &gen) {
  Instance in;
  auto add = [&](ref::Tensor t, ElementType dt = ElementType::F32) {
    in.inputs.push_back(std::move(t));
    in.dtypes.push_back(dt);
  };
  ref::Tensor q = randomTensor({sh.b, s.h, sh.tq, s.d}, gen),
              k = randomTensor({sh.b, s.hkv, sh.tk, s.d}, gen),
              v = randomTensor({sh.b, s.hkv, sh.tk, s.dv}, gen);
  // f16/bf16 operands: the reference sees the rounded values the kernel
  // gets.
  for (ref::Tensor *x : {&q, &k, &v}) {
    roundTo(*x, s.dtype);
    add(*x, s.dtype);
  }
  ref::SdpaOptions o;
  if (s.scale)
    o.scale = *s.scale;
  o.causal = s.causal;
  if (s.softcap)
    o.softcap = *s.softcap;
  if (s.dropoutRate) {
    o.dropoutRate = *s.dropoutRate;
    o.dropoutSeed = s.dropoutSeed;
  }
  o.window = s.window;
  ref::Mask m;
  if (s.mask != ref::Mask::Kind::None) {
    m = randomMask(s.mask, {sh.b, s.maskPerHead ? s.h : 1, sh.tq, sh.tk}, gen);
    o.mask = &m;
    add(m.values, s.mask == ref::Mask::Kind::Keep ? ElementType::Bool : ElementType::F32);
  }
  ref::Tensor slopes;
  if (s.slopes != Slopes::None) {
    slopes = randomTensor(s.slopes == Slopes::PerHead ? std::vector<int64_t>{s.h}
                                                      : std::vector<int64_t>{sh.b, s.h},
                          gen, 0.0, s.slopeMax);
    o.alibiSlopes = &slopes;
    add(slopes);
  }
  o.keyLengths = s.lengths;
  if (s.lengthsInput) {
    if (!o.keyLengths) {
      o.keyLengths.emplace();
      for (int64_t i = 0; i < sh.b; ++i)
        o.keyLengths->push_back(static_cast<int64_t>(gen() % (sh.tk + 1)));
    }
    ref::Tensor len({sh.b});
    for (int64_t i = 0; i < sh.b; ++i)
      len.data[i] = static_cast<double>((*o.keyLengths)[i]);
    add(len, *s.lengthsInput);
  }
  if (s.rope) {
    auto table = [&](int64_t t) {
      return s.rope->perSequence ? std::vector<int64_t>{sh.b, t, s.rope->half}
                                 : std::vector<int64_t>{t, s.rope->half};
    };
    auto [cq, sq] = ropeTables(table(sh.tq), gen);
    auto [ck, sk] = ropeTables(table(sh.tk), gen);
    for (auto *t : {&cq, &sq, &ck, &sk})
      add(*t);
    q = ref::rope(q, cq, sq, s.rope->style);
    k = ref::rope(k, ck, sk, s.rope->style);
  }
  in.want = ref::sdpa(q, k, v, o);
  return in;
}

/// Compiles `s` (once when dynamic, once per shape when static) through
/// `pipeline` and compares every shape with the reference.
void runSpec(const Spec &s, const std::vector<Shape> &shapes, Pipeline pipeline,
             unsigned seed, double tol = kTol, const runtime::JitOptions &options = {}) {
  std::mt19937 gen(seed);
  std::unique_ptr<Jitted> jit;
  for (const Shape &sh : shapes) {
    SCOPED_TRACE("B=" + std::to_string(sh.b) + " Tq=" + std::to_string(sh.tq) +
                 " Tk=" + std::to_string(sh.tk) + " " +
                 runtime::pipelineName(pipeline).str());
    if (!jit || !s.dynamic) {
      jit = std::make_unique<Jitted>(source(s, sh), "f", pipeline, options);
      ASSERT_TRUE(jit->ok());
    }
    Instance in = instance(s, sh, gen);
    auto out = jit->run(in.inputs, in.dtypes);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_TRUE(allFinite(out[0])) << "rows without keys give zeros, not NaN";
    EXPECT_LE(relativeError(out[0], in.want), tol);
  }
}

/// Compiles `s` at shape `sh` through `pipeline`, runs it on a random
/// instance from `gen` and checks the one result against the reference;
/// `in` and `out` receive the instance and the results.
void runChecked(const Spec &s, const Shape &sh, Pipeline pipeline, std::mt19937 &gen,
                Instance &in, std::vector<ref::Tensor> &out) {
  Jitted j(source(s, sh), "f", pipeline);
  ASSERT_TRUE(j.ok());
  in = instance(s, sh, gen);
  out = j.run(in.inputs, in.dtypes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], in.want), kTol);
}

//===----------------------------------------------------------------------===//
// The grid.
//===----------------------------------------------------------------------===//

enum class Feature { Softcap, Window, Alibi, KeyLengths, Rope };

struct GridCase {
  Feature feature;
  ref::Causal causal;
  int64_t h, hkv;
  bool dynamic;
  int64_t d;
};

/// The spec of a grid case: each feature with settings that change most
/// rows, on its own (plus the causal kind).
Spec gridSpec(const GridCase &c) {
  Spec s;
  s.h = c.h;
  s.hkv = c.hkv;
  s.d = s.dv = c.d;
  s.dynamic = c.dynamic;
  s.causal = c.causal;
  switch (c.feature) {
  case Feature::Softcap:
    s.softcap = 0.75f; // scaled scores reach about ±1.5: most are capped
    break;
  case Feature::Window:
    s.window = ref::Window{11, 5, ref::Causal::TopLeft};
    // Without a causal kind, alternate the diagonal between top-left and
    // the bottom-right default.
    s.printAlign = c.causal == ref::Causal::None && !c.dynamic;
    if (!s.printAlign)
      s.window->align = ref::Causal::BottomRight;
    break;
  case Feature::Alibi:
    s.slopes = c.dynamic ? Slopes::PerHead : Slopes::PerBatchHead;
    break;
  case Feature::KeyLengths:
    // A constant, an i32 input, random i64 inputs per shape.
    if (c.causal == ref::Causal::None)
      s.lengths = std::vector<int64_t>{29, 51};
    else if (c.causal == ref::Causal::TopLeft) {
      s.lengths = std::vector<int64_t>{37, 6};
      s.lengthsInput = ElementType::I32;
    } else
      s.lengthsInput = ElementType::I64;
    break;
  case Feature::Rope:
    // rotate_half over all of D, or interleaved over part of it.
    s.rope = c.d == 80 ? RopeSpec{24, ref::RopeStyle::Interleaved, c.dynamic}
                       : RopeSpec{c.d / 2, ref::RopeStyle::RotateHalf, false};
    break;
  }
  return s;
}

/// Tq, Tk not multiples of any tile (tile-q 64, tile-k 64, the GPU's
/// tiles, the 4-row block); a dynamic spec runs two shapes with one
/// compilation. B = 2 throughout (the key lengths are [B]).
std::vector<Shape> gridShapes(const GridCase &c) {
  if (!c.dynamic)
    return {{2, 37, 53}};
  return {{2, 70, 53}, {2, 5, 131}};
}

std::string gridCaseName(const GridCase &c) {
  const char *f[] = {"softcap", "window", "alibi", "keylengths", "rope"};
  return std::string(f[int(c.feature)]) + "_" + causalName(c.causal) + "_H" +
         std::to_string(c.h) + "_Hkv" + std::to_string(c.hkv) +
         (c.dynamic ? "_dynamic" : "_static") + "_D" + std::to_string(c.d);
}

// gtest prints a failing case by its name, not its bytes.
void PrintTo(const GridCase &c, std::ostream *os) { *os << gridCaseName(c); }

class FeatureGrid : public ::testing::TestWithParam<GridCase> {};

unsigned gridSeed(const GridCase &c) {
  return 100 * int(c.feature) + 10 * int(c.causal) + c.h + c.hkv + c.d + c.dynamic;
}

TEST_P(FeatureGrid, ReferencePipelineMatchesReference) {
  runSpec(gridSpec(GetParam()), gridShapes(GetParam()), Pipeline::Reference,
          gridSeed(GetParam()));
}

TEST_P(FeatureGrid, CpuPipelineMatchesReference) {
  runSpec(gridSpec(GetParam()), gridShapes(GetParam()), Pipeline::Cpu,
          gridSeed(GetParam()));
}

TEST_P(FeatureGrid, GpuSchedulePipelineMatchesReference) {
  runSpec(gridSpec(GetParam()), gridShapes(GetParam()), Pipeline::GpuSchedule,
          gridSeed(GetParam()));
}

std::string gridName(const ::testing::TestParamInfo<GridCase> &info) {
  return gridCaseName(info.param);
}

// Every feature meets every causal kind; across its three cases it sees GQA
// and H = Hkv, static and dynamic shapes, and each D of 64, 80, 128.
constexpr auto kNone = ref::Causal::None, kTopLeft = ref::Causal::TopLeft,
               kBottomRight = ref::Causal::BottomRight;
INSTANTIATE_TEST_SUITE_P(
    Grid, FeatureGrid,
    ::testing::Values(
        // feature, causal, H, Hkv, dynamic, D
        GridCase{Feature::Softcap, kNone, 4, 2, false, 64},
        GridCase{Feature::Softcap, kTopLeft, 4, 4, true, 80},
        GridCase{Feature::Softcap, kBottomRight, 4, 2, true, 128},
        GridCase{Feature::Window, kNone, 4, 4, false, 80},
        GridCase{Feature::Window, kNone, 4, 2, true, 64},
        GridCase{Feature::Window, kTopLeft, 4, 2, false, 128},
        GridCase{Feature::Window, kBottomRight, 4, 4, true, 64},
        GridCase{Feature::Alibi, kNone, 4, 2, true, 128},
        GridCase{Feature::Alibi, kTopLeft, 4, 4, false, 64},
        GridCase{Feature::Alibi, kBottomRight, 4, 2, false, 80},
        GridCase{Feature::KeyLengths, kNone, 4, 4, true, 64},
        GridCase{Feature::KeyLengths, kTopLeft, 4, 2, false, 80},
        GridCase{Feature::KeyLengths, kBottomRight, 4, 2, true, 128},
        GridCase{Feature::Rope, kNone, 4, 2, false, 128},
        GridCase{Feature::Rope, kTopLeft, 4, 4, true, 80},
        GridCase{Feature::Rope, kBottomRight, 4, 2, true, 64}),
    gridName);

//===----------------------------------------------------------------------===//
// Edge cases, each through the three pipelines.
//===----------------------------------------------------------------------===//

class FeatureEdges : public ::testing::TestWithParam<Pipeline> {};

std::string pipelineTestName(const ::testing::TestParamInfo<Pipeline> &info) {
  std::string n = runtime::pipelineName(info.param).str();
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

Spec small(ref::Causal causal = ref::Causal::None) {
  Spec s;
  s.h = 4;
  s.hkv = 2;
  s.d = s.dv = 16;
  s.causal = causal;
  return s;
}

TEST_P(FeatureEdges, WindowZeroAndUnboundedSides) {
  // left = 0 (bottom-right default: keys from the diagonal on), right = 0
  // top-left (the top-left causal mask), both 0 (the diagonal alone), both
  // unbounded (no window).
  struct W {
    std::optional<int64_t> left, right;
    ref::Causal align;
    bool printAlign;
  };
  for (W w : {W{0, std::nullopt, ref::Causal::BottomRight, false},
              W{std::nullopt, 0, ref::Causal::TopLeft, true},
              W{0, 0, ref::Causal::BottomRight, true},
              W{std::nullopt, std::nullopt, ref::Causal::BottomRight, false}}) {
    SCOPED_TRACE(std::string("left ") + (w.left ? std::to_string(*w.left) : "-") +
                 " right " + (w.right ? std::to_string(*w.right) : "-"));
    Spec s = small();
    s.window = ref::Window{w.left, w.right, w.align};
    s.printAlign = w.printAlign;
    runSpec(s, {{1, 13, 21}}, GetParam(), 1);
  }
}

TEST_P(FeatureEdges, WindowExcludingEveryKeyOfSomeRowsGivesZeros) {
  // Top-left window [i - 1, i] with Tq = 9 > Tk = 5: rows 6..8 see no key.
  Spec s = small();
  s.window = ref::Window{1, 0, ref::Causal::TopLeft};
  s.printAlign = true;
  std::mt19937 gen(2);
  Shape sh{1, 9, 5};
  Instance in;
  std::vector<ref::Tensor> out;
  ASSERT_NO_FATAL_FAILURE(runChecked(s, sh, GetParam(), gen, in, out));
  for (int64_t h = 0; h < s.h; ++h)
    for (int64_t i = 6; i < 9; ++i)
      for (int64_t e = 0; e < s.dv; ++e)
        ASSERT_EQ(out[0].at({0, h, i, e}), 0.0) << "h " << h << " row " << i;
}

TEST_P(FeatureEdges, KeyLengthZeroAndFull) {
  // Batch row 0 has no keys (zeros), row 1 all Tk of them (no masking), with
  // and without the bottom-right causal mask that the lengths move.
  for (ref::Causal c : {ref::Causal::None, ref::Causal::BottomRight}) {
    SCOPED_TRACE(causalName(c));
    Spec s = small(c);
    s.lengths = std::vector<int64_t>{0, 19};
    std::mt19937 gen(3);
    Shape sh{2, 7, 19};
    Instance in;
    std::vector<ref::Tensor> out;
    ASSERT_NO_FATAL_FAILURE(runChecked(s, sh, GetParam(), gen, in, out));
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t i = 0; i < sh.tq; ++i)
        ASSERT_EQ(out[0].at({0, h, i, 0}), 0.0);
    // A full length is no length at all.
    ref::SdpaOptions o;
    o.causal = c;
    ref::Tensor q({1, s.h, sh.tq, s.d}), k({1, s.hkv, sh.tk, s.d}), v({1, s.hkv, sh.tk, s.dv});
    auto slice = [&](const ref::Tensor &t, ref::Tensor &into) {
      std::copy(t.data.begin() + t.numel() / 2, t.data.end(), into.data.begin());
    };
    slice(in.inputs[0], q);
    slice(in.inputs[1], k);
    slice(in.inputs[2], v);
    ref::Tensor plain = ref::sdpa(q, k, v, o);
    ref::Tensor got({1, s.h, sh.tq, s.dv});
    slice(out[0], got);
    EXPECT_LE(relativeError(got, plain), kTol);
  }
}

TEST_P(FeatureEdges, OutOfRangeKeyLengthsAreClamped) {
  // attn-run rejects these before a call; the compiled code itself clamps
  // them to [0, Tk] and never reads past Tk: -5 is 0 (zeros), Tk + 7 is Tk.
  for (ElementType dt : {ElementType::I32, ElementType::I64}) {
    SCOPED_TRACE(dt == ElementType::I32 ? "i32" : "i64");
    Spec s = small(ref::Causal::BottomRight);
    s.dynamic = true;
    s.window = ref::Window{4, std::nullopt};
    s.lengthsInput = dt;
    s.lengths = std::vector<int64_t>{-5, 30};
    std::mt19937 gen(13);
    Shape sh{2, 6, 23};
    Instance in;
    std::vector<ref::Tensor> out;
    ASSERT_NO_FATAL_FAILURE(runChecked(s, sh, GetParam(), gen, in, out));
    // The reference clamps too: the same as lengths {0, Tk}.
    ref::SdpaOptions o;
    o.causal = s.causal;
    o.window = s.window;
    o.keyLengths = std::vector<int64_t>{0, sh.tk};
    EXPECT_EQ(relativeError(in.want, ref::sdpa(in.inputs[0], in.inputs[1], in.inputs[2], o)),
              0.0);
    for (int64_t h = 0; h < s.h; ++h)
      ASSERT_EQ(out[0].at({0, h, 0, 0}), 0.0);
  }
}

TEST_P(FeatureEdges, SoftcapTinyAndHuge) {
  // 1e-3: every score is ±1e-3 (nearly uniform weights); 1e30: the
  // identity up to rounding.
  for (float cap : {1e-3f, 1e30f}) {
    SCOPED_TRACE(cap);
    Spec s = small(ref::Causal::TopLeft);
    s.softcap = cap;
    runSpec(s, {{2, 11, 17}}, GetParam(), 4);
  }
}

TEST_P(FeatureEdges, AlibiSlopesZeroAndLarge) {
  // Slopes 0 are no bias; slopes up to 4 make the weights nearly one-hot
  // around the diagonal.
  for (double slopeMax : {0.0, 4.0}) {
    SCOPED_TRACE(slopeMax);
    Spec s = small(ref::Causal::None);
    s.slopes = Slopes::PerHead;
    s.slopeMax = slopeMax;
    runSpec(s, {{1, 6, 23}}, GetParam(), 5);
  }
}

TEST_P(FeatureEdges, RopeShapesAndStyles) {
  // R = D and R < D, both styles, T = 1, per-sequence tables.
  struct R {
    int64_t half;
    ref::RopeStyle style;
    bool perSequence;
    Shape shape;
  };
  for (R r : {R{8, ref::RopeStyle::RotateHalf, false, {1, 9, 9}},
              R{8, ref::RopeStyle::Interleaved, true, {2, 9, 12}},
              R{3, ref::RopeStyle::RotateHalf, true, {2, 1, 5}},
              R{5, ref::RopeStyle::Interleaved, false, {1, 1, 1}}}) {
    SCOPED_TRACE("R/2 " + std::to_string(r.half) + " style " +
                 std::to_string(int(r.style)) + " T " + std::to_string(r.shape.tq));
    Spec s = small(ref::Causal::BottomRight);
    s.rope = RopeSpec{r.half, r.style, r.perSequence};
    runSpec(s, {r.shape}, GetParam(), 6);
  }
}

TEST_P(FeatureEdges, EverythingAtOnce) {
  // window + softcap + ALiBi + key lengths + i1 mask, with a bottom-right
  // causal mask and GQA, dynamic shapes; then the same under top-left
  // causal with an additive mask and static shapes.
  Spec s = small(ref::Causal::BottomRight);
  s.d = s.dv = 64;
  s.dynamic = true;
  s.softcap = 1.25f;
  s.window = ref::Window{13, std::nullopt};
  s.slopes = Slopes::PerBatchHead;
  s.lengthsInput = ElementType::I32; // random in [0, Tk] per shape
  s.mask = ref::Mask::Kind::Keep;
  runSpec(s, {{2, 9, 41}, {3, 70, 45}, {1, 1, 77}}, GetParam(), 7);
  s.lengthsInput.reset();
  s.lengths = std::vector<int64_t>{40, 3}; // a constant this time
  s.causal = ref::Causal::TopLeft;
  s.window = ref::Window{5, 7};
  s.dynamic = false;
  s.slopes = Slopes::PerHead;
  s.mask = ref::Mask::Kind::Add;
  s.scale = 0.3f;
  runSpec(s, {{2, 33, 41}}, GetParam(), 8);
}

TEST_P(FeatureEdges, MhaWithRopeAndFeatures) {
  // attn.mha: rope on the projected Q and K, GQA, bottom-right causal,
  // window, softcap, ALiBi and key lengths.
  const int64_t b = 2, t = 19, e = 32, h = 4, hkv = 2, d = 8;
  std::mt19937 gen(9);
  std::string xT = tensorType({b, t, e}), wqT = tensorType({h * d, e}),
              wkT = tensorType({hkv * d, e}), woT = tensorType({e, h * d}),
              sT = tensorType({h}), tT = tensorType({t, d / 2}), lT = tensorType({b}, "i32");
  std::ostringstream src;
  src << "func.func @f(%x: " << xT << ", %wq: " << wqT << ", %wk: " << wkT << ", %wv: " << wkT
      << ", %wo: " << woT << ", %slopes: " << sT << ", %len: " << lT << ", %cos: " << tT
      << ", %sin: " << tT << ") -> " << xT << " {\n"
      << "  %o = attn.mha %x, %x, %wq, %wk, %wv, %wo alibi(%slopes) key_lengths(%len)"
      << " rope(%cos, %sin) {num_heads = 4 : i64, num_kv_heads = 2 : i64,"
      << " causal = #attn.causal<bottom_right>, window = #attn.window<left = 6>,"
      << " softcap = 2.0 : f32, rope_style = #attn.rope<interleaved>} : (" << xT << ", " << xT
      << ", " << wqT << ", " << wkT << ", " << wkT << ", " << woT << ", " << sT << ", " << lT
      << ", " << tT << ", " << tT << ") -> " << xT << "\n  return %o : " << xT << "\n}\n";
  Jitted j(src.str(), "f", GetParam());
  ASSERT_TRUE(j.ok());
  ref::Tensor x = randomTensor({b, t, e}, gen);
  ref::MhaWeights w;
  w.wq = randomTensor({h * d, e}, gen);
  w.wk = randomTensor({hkv * d, e}, gen);
  w.wv = randomTensor({hkv * d, e}, gen);
  w.wo = randomTensor({e, h * d}, gen);
  ref::Tensor slopes = randomTensor({h}, gen, 0.0, 0.5);
  ref::RopeTables rope;
  std::tie(rope.cos, rope.sin) = ropeTables({t, d / 2}, gen);
  rope.style = ref::RopeStyle::Interleaved;
  ref::SdpaOptions o;
  o.causal = ref::Causal::BottomRight;
  o.window = ref::Window{6, std::nullopt};
  o.softcap = 2.0;
  o.alibiSlopes = &slopes;
  o.keyLengths = std::vector<int64_t>{19, 11};
  ref::Tensor len({b});
  len.data = {19, 11};
  auto out = j.run({x, w.wq, w.wk, w.wv, w.wo, slopes, len, rope.cos, rope.sin},
                   {ElementType::F32, ElementType::F32, ElementType::F32, ElementType::F32, ElementType::F32, ElementType::F32,
                    ElementType::I32, ElementType::F32, ElementType::F32});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(relativeError(out[0], ref::mha(x, x, w, h, hkv, o, &rope)), kTol);
}

INSTANTIATE_TEST_SUITE_P(Pipelines, FeatureEdges,
                         ::testing::Values(Pipeline::Reference, Pipeline::Cpu,
                                           Pipeline::GpuSchedule),
                         pipelineTestName);

//===----------------------------------------------------------------------===//
// The primitive ops alone, -inf positions compared exactly.
//===----------------------------------------------------------------------===//

TEST(FeatureOps, MaskVariantsMatchReference) {
  // One function, one attn.mask per variant, on scores [2,3,5,8] with
  // Tq = 5 < Tk = 8; lengths [6, 0] and [9, -3] (clamped to [8, 0]).
  struct Variant {
    const char *attrs, *operands;
    ref::MaskOptions opts;
  };
  std::mt19937 gen(10);
  ref::Tensor s = randomTensor({2, 3, 5, 8}, gen), slopes = randomTensor({3}, gen, 0, 1),
              slopesBH = randomTensor({2, 3}, gen, 0, 1);
  ref::Mask keep = randomMask(ref::Mask::Kind::Keep, {5, 8}, gen);
  ref::Mask add = randomMask(ref::Mask::Kind::Add, {2, 1, 1, 8}, gen);
  std::vector<int64_t> len{6, 0}, wild{9, -3};
  using W = ref::Window;
  auto mo = [](ref::Causal c, const ref::Mask *m, const ref::Tensor *sl,
               std::optional<std::vector<int64_t>> l, std::optional<W> w) {
    ref::MaskOptions o;
    o.causal = c;
    o.mask = m;
    o.alibiSlopes = sl;
    o.keyLengths = std::move(l);
    o.window = w;
    return o;
  };
  const auto TL = ref::Causal::TopLeft, BR = ref::Causal::BottomRight, N = ref::Causal::None;
  std::vector<Variant> variants = {
      {"{window = #attn.window<left = 2, right = 1>}", "", mo(N, nullptr, nullptr, {}, W{2, 1})},
      {"{window = #attn.window<left = 2, right = 1, align = top_left>}", "",
       mo(N, nullptr, nullptr, {}, W{2, 1, TL})},
      {"{causal = #attn.causal<top_left>, window = #attn.window<left = 1>}", "",
       mo(TL, nullptr, nullptr, {}, W{1, std::nullopt})},
      {"{window = #attn.window<right = 0>}", "", mo(N, nullptr, nullptr, {}, W{std::nullopt, 0})},
      {"", " alibi(%sl : tensor<3xf32>)", mo(N, nullptr, &slopes, {}, {})},
      {"{causal = #attn.causal<top_left>}", " alibi(%slbh : tensor<2x3xf32>)",
       mo(TL, nullptr, &slopesBH, {}, {})},
      {"", " key_lengths(%len : tensor<2xi32>)", mo(N, nullptr, nullptr, len, {})},
      {"{causal = #attn.causal<bottom_right>}", " key_lengths(%wild : tensor<2xi64>)",
       mo(BR, nullptr, nullptr, wild, {})},
      {"{causal = #attn.causal<bottom_right>, window = #attn.window<left = 2>}",
       ", %keep alibi(%sl : tensor<3xf32>) key_lengths(%len : tensor<2xi32>)",
       mo(BR, &keep, &slopes, len, W{2, std::nullopt})},
      {"{window = #attn.window<left = 3, right = 0, align = top_left>}",
       ", %add alibi(%slbh : tensor<2x3xf32>) key_lengths(%len : tensor<2xi32>)",
       mo(N, &add, &slopesBH, len, W{3, 0, TL})},
  };
  std::ostringstream src;
  std::string sT = "tensor<2x3x5x8xf32>";
  src << "func.func @f(%s: " << sT
      << ", %sl: tensor<3xf32>, %slbh: tensor<2x3xf32>, %keep: tensor<5x8xi1>, %add: "
         "tensor<2x1x1x8xf32>) -> (";
  for (size_t i = 0; i < variants.size(); ++i)
    src << (i ? ", " : "") << sT;
  src << ") {\n  %len = arith.constant dense<[6, 0]> : tensor<2xi32>\n"
      << "  %wild = arith.constant dense<[9, -3]> : tensor<2xi64>\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string operands = variants[i].operands;
    bool hasMask = operands.rfind(", %", 0) == 0;
    std::string maskT = operands.find("%keep") != std::string::npos ? "tensor<5x8xi1>"
                                                                      : "tensor<2x1x1x8xf32>";
    src << "  %r" << i << " = attn.mask %s" << operands << " " << variants[i].attrs << " : "
        << sT << (hasMask ? ", " + maskT : "") << "\n";
  }
  src << "  return ";
  for (size_t i = 0; i < variants.size(); ++i)
    src << (i ? ", " : "") << "%r" << i;
  src << " : ";
  for (size_t i = 0; i < variants.size(); ++i)
    src << (i ? ", " : "") << sT;
  src << "\n}\n";
  Jitted j(src.str(), "f", Pipeline::Reference);
  ASSERT_TRUE(j.ok());
  auto out = j.run({s, slopes, slopesBH, keep.values, add.values},
                   {ElementType::F32, ElementType::F32, ElementType::F32, ElementType::Bool, ElementType::F32});
  ASSERT_EQ(out.size(), variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    SCOPED_TRACE(std::string(variants[i].attrs) + variants[i].operands);
    ref::Tensor want = ref::mask(s, variants[i].opts);
    for (size_t x = 0; x < want.data.size(); ++x)
      if (std::isinf(want.data[x]))
        ASSERT_EQ(out[i].data[x], want.data[x]) << "element " << x;
      else
        ASSERT_NEAR(out[i].data[x], want.data[x], 4e-6 * std::max(1.0, std::fabs(want.data[x])))
            << "element " << x;
  }
}

TEST(FeatureOps, SoftcapMatchesReference) {
  const char *src = R"(
func.func @f(%s: tensor<2x3x7x9xf32>) -> (tensor<2x3x7x9xf32>, tensor<2x3x7x9xf32>, tensor<2x3x7x9xf32>) {
  %0 = attn.softcap %s {cap = 5.0e-1 : f32} : tensor<2x3x7x9xf32>
  %1 = attn.softcap %s {cap = 1.0e-3 : f32} : tensor<2x3x7x9xf32>
  %2 = attn.softcap %s {cap = 1.0e30 : f32} : tensor<2x3x7x9xf32>
  return %0, %1, %2 : tensor<2x3x7x9xf32>, tensor<2x3x7x9xf32>, tensor<2x3x7x9xf32>
})";
  std::mt19937 gen(11);
  ref::Tensor s = randomTensor({2, 3, 7, 9}, gen, -40, 40);
  s.data[0] = 0.0;
  s.data[1] = std::numeric_limits<double>::infinity();
  s.data[2] = -std::numeric_limits<double>::infinity();
  Jitted j(src, "f", Pipeline::Reference);
  ASSERT_TRUE(j.ok());
  auto out = j.run({s});
  ASSERT_EQ(out.size(), 3u);
  float caps[] = {0.5f, 1e-3f, 1e30f};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(caps[i]);
    ref::Tensor want = ref::softcap(s, caps[i]);
    ASSERT_TRUE(allFinite(out[i]));
    // Elementwise relative error: the values span ±cap.
    for (size_t x = 0; x < want.data.size(); ++x)
      ASSERT_LE(std::fabs(out[i].data[x] - want.data[x]), 1e-6 * std::fabs(want.data[x]))
          << "element " << x << " of " << s.data[x];
  }
  // ±inf become ±cap (for a finite cap).
  EXPECT_EQ(out[0].data[1], 0.5);
  EXPECT_EQ(out[0].data[2], -0.5);
}

TEST(FeatureOps, RopeMatchesReferenceF32AndF16) {
  // Partial interleaved rotation with per-sequence tables (f32 x), and a
  // full rotate_half rotation of f16 x with f16 tables (computed in f32,
  // rounded once).
  const char *src = R"(
func.func @f(%x: tensor<2x3x?x10xf32>, %c: tensor<2x?x3xf32>, %s: tensor<2x?x3xf32>,
             %h: tensor<1x2x5x8xf16>, %ch: tensor<5x4xf16>, %sh: tensor<5x4xf16>)
    -> (tensor<2x3x?x10xf32>, tensor<1x2x5x8xf16>) {
  %0 = attn.rope %x, %c, %s {style = #attn.rope<interleaved>}
      : tensor<2x3x?x10xf32>, tensor<2x?x3xf32>, tensor<2x?x3xf32>
  %1 = attn.rope %h, %ch, %sh : tensor<1x2x5x8xf16>, tensor<5x4xf16>, tensor<5x4xf16>
  return %0, %1 : tensor<2x3x?x10xf32>, tensor<1x2x5x8xf16>
})";
  std::mt19937 gen(12);
  auto half = [](ref::Tensor t) {
    for (double &v : t.data)
      v = runtime::halfToFloat(runtime::floatToHalf(static_cast<float>(v)));
    return t;
  };
  ref::Tensor x = randomTensor({2, 3, 7, 10}, gen);
  auto [c, s] = ropeTables({2, 7, 3}, gen);
  ref::Tensor h = half(randomTensor({1, 2, 5, 8}, gen));
  auto [ch0, sh0] = ropeTables({5, 4}, gen);
  ref::Tensor ch = half(ch0), sh = half(sh0);
  Jitted j(src, "f", Pipeline::Reference);
  ASSERT_TRUE(j.ok());
  auto out = j.run({x, c, s, h, ch, sh},
                   {ElementType::F32, ElementType::F32, ElementType::F32, ElementType::F16, ElementType::F16, ElementType::F16});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_LE(relativeError(out[0], ref::rope(x, c, s, ref::RopeStyle::Interleaved)), 1e-6);
  // Dims 6..9 pass through bit for bit.
  for (int64_t e = 6; e < 10; ++e)
    EXPECT_EQ(out[0].at({1, 2, 4, e}), x.at({1, 2, 4, e}));
  ref::Tensor want = ref::rope(h, ch, sh, ref::RopeStyle::RotateHalf);
  EXPECT_LE(relativeError(out[1], want), 1e-3); // one f16 rounding
  EXPECT_LE(relativeError(out[1], half(want)), 1e-6) << "rounded once, from f32";
}
} // namespace

namespace {
// f16 q, k, v with softcap, window, ALiBi and key lengths: every pipeline
// computes in f32 and rounds to f16, so the result is within f16 rounding of
// the reference (as ReferencePipeline.HalfPrecisionSdpa without features).
TEST(FeatureOps, HalfPrecisionFeatureSdpa) {
  const char *src = R"(
func.func @f(%q: tensor<2x4x9x16xf16>, %k: tensor<2x2x21x16xf16>, %v: tensor<2x2x21x16xf16>,
             %slopes: tensor<4xf32>, %len: tensor<2xi32>) -> tensor<2x4x9x16xf16> {
  %o = attn.sdpa %q, %k, %v alibi(%slopes) key_lengths(%len)
      {causal = #attn.causal<bottom_right>, window = #attn.window<left = 6>, softcap = 1.5 : f32}
      : (tensor<2x4x9x16xf16>, tensor<2x2x21x16xf16>, tensor<2x2x21x16xf16>, tensor<4xf32>,
         tensor<2xi32>) -> tensor<2x4x9x16xf16>
  return %o : tensor<2x4x9x16xf16>
})";
  std::mt19937 gen(14);
  auto half = [](ref::Tensor t) {
    for (double &v : t.data)
      v = runtime::halfToFloat(runtime::floatToHalf(static_cast<float>(v)));
    return t;
  };
  ref::Tensor q = half(randomTensor({2, 4, 9, 16}, gen)), k = half(randomTensor({2, 2, 21, 16}, gen)),
              v = half(randomTensor({2, 2, 21, 16}, gen)), slopes = randomTensor({4}, gen, 0, 0.5);
  ref::Tensor len({2});
  len.data = {14, 21};
  ref::SdpaOptions o;
  o.causal = ref::Causal::BottomRight;
  o.window = ref::Window{6, std::nullopt};
  o.softcap = 1.5;
  o.alibiSlopes = &slopes;
  o.keyLengths = std::vector<int64_t>{14, 21};
  ref::Tensor want = ref::sdpa(q, k, v, o);
  for (Pipeline p : {Pipeline::Reference, Pipeline::Cpu, Pipeline::GpuSchedule}) {
    SCOPED_TRACE(runtime::pipelineName(p).str());
    Jitted j(src, "f", p);
    ASSERT_TRUE(j.ok());
    auto out = j.run({q, k, v, slopes, len},
                     {ElementType::F16, ElementType::F16, ElementType::F16, ElementType::F32, ElementType::I32});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_LE(relativeError(out[0], want), 4e-3);
  }
}
} // namespace

//===----------------------------------------------------------------------===//
// Decode and short queries on the cpu kernel (issue 13): a static Tq below
// tile-q puts the G·Tq rows of a GQA group in one tile (row r is query
// r mod Tq of head kvHead·G + r / Tq), and with fewer work items than
// min-work-items each tile's keys are split across threads and the splits'
// (m, l, acc) merged. Tq ∈ {1, 2, 7}, Tk up to 4099 (not a multiple of the
// 64-key tile or of the 4-tile split), G ∈ {1, 4, 8}, both causal kinds,
// splits that leave some empty (top-left rows see only their first keys),
// 8 and 16 lanes, the per-row head of masks, ALiBi slopes and the output,
// f16/bf16 operands; against the double reference.
//===----------------------------------------------------------------------===//

namespace {

struct DecodeCase {
  int64_t tq, tk, h, hkv;
  ref::Causal causal;
  bool split;          ///< min-work-items 4096: as many splits as allowed
  int64_t vectorWidth; ///< 8 or 16 lanes
  int64_t d = 64;
  ElementType dtype = ElementType::F32;
  std::string feature = ""; ///< "", mask, additive, alibi, lengths, window, softcap
  int64_t dv = 0;           ///< 0: 48 for D 64 (not whole vectors), else D
};

std::string decodeName(const DecodeCase &c) {
  std::string dt = c.dtype == ElementType::F16 ? "_f16" : c.dtype == ElementType::BF16 ? "_bf16" : "";
  return "Tq" + std::to_string(c.tq) + "_Tk" + std::to_string(c.tk) + "_H" +
         std::to_string(c.h) + "_Hkv" + std::to_string(c.hkv) + "_" + causalName(c.causal) +
         (c.split ? "_split" : "_nosplit") + "_w" + std::to_string(c.vectorWidth) + "_D" +
         std::to_string(c.d) + (c.dv ? "_Dv" + std::to_string(c.dv) : "") + dt +
         (c.feature.empty() ? "" : "_" + c.feature);
}

void PrintTo(const DecodeCase &c, std::ostream *os) { *os << decodeName(c); }

class DecodeGrid : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(DecodeGrid, CpuKernelMatchesReference) {
  const DecodeCase &c = GetParam();
  Spec s;
  s.h = c.h;
  s.hkv = c.hkv;
  s.d = c.d;
  s.dv = c.dv ? c.dv : c.d == 64 ? 48 : c.d; // Dv != D, not a multiple of 16 lanes
  s.causal = c.causal;
  s.dtype = c.dtype;
  if (c.feature == "mask" || c.feature == "additive") {
    s.mask = c.feature == "mask" ? ref::Mask::Kind::Keep : ref::Mask::Kind::Add;
    s.maskPerHead = true;
  } else if (c.feature == "alibi") {
    s.slopes = Slopes::PerBatchHead;
  } else if (c.feature == "lengths") {
    s.lengthsInput = ElementType::I32;
  } else if (c.feature == "window") {
    s.window = ref::Window{700, 3, ref::Causal::BottomRight};
  } else if (c.feature == "softcap") {
    s.softcap = 0.75f;
  }
  runtime::JitOptions options;
  options.vectorWidth = c.vectorWidth;
  options.minWorkItems = c.split ? 4096 : 0;
  double tol = c.dtype == ElementType::F16 ? 2e-3 : c.dtype == ElementType::BF16 ? 1.6e-2 : kTol;
  runSpec(s, {{2, c.tq, c.tk}}, Pipeline::Cpu,
          static_cast<unsigned>(c.tq * 7 + c.tk + c.h * 3 + int(c.causal)), tol, options);
}

std::string decodeParamName(const ::testing::TestParamInfo<DecodeCase> &info) {
  return decodeName(info.param);
}

constexpr auto kDecNone = ref::Causal::None, kDecTopLeft = ref::Causal::TopLeft,
               kDecBottomRight = ref::Causal::BottomRight;
INSTANTIATE_TEST_SUITE_P(
    Decode, DecodeGrid,
    ::testing::Values(
        // tq, tk, h, hkv, causal, split, lanes[, d, dtype, feature]
        DecodeCase{1, 4099, 8, 2, kDecBottomRight, true, 16},
        DecodeCase{1, 4099, 8, 1, kDecNone, true, 8},
        DecodeCase{1, 1, 8, 2, kDecBottomRight, true, 16},
        DecodeCase{1, 65, 4, 4, kDecTopLeft, true, 16},
        DecodeCase{2, 4099, 8, 1, kDecTopLeft, true, 16}, // most splits empty
        DecodeCase{2, 300, 8, 2, kDecBottomRight, false, 8},
        DecodeCase{2, 1000, 4, 4, kDecNone, true, 16},
        DecodeCase{7, 4099, 8, 2, kDecBottomRight, true, 8},
        DecodeCase{7, 65, 8, 1, kDecTopLeft, false, 16},  // 56 rows: one tile
        DecodeCase{7, 1000, 8, 1, kDecNone, true, 16, 80}, // D 80: K element-wise
        DecodeCase{1, 2048, 8, 2, kDecBottomRight, true, 16, 64, ElementType::F16},
        DecodeCase{7, 700, 8, 2, kDecTopLeft, true, 8, 64, ElementType::BF16},
        DecodeCase{1, 1500, 8, 2, kDecBottomRight, true, 16, 64, ElementType::F32, "mask"},
        DecodeCase{7, 1500, 8, 2, kDecNone, true, 16, 64, ElementType::F32, "additive"},
        DecodeCase{2, 1500, 8, 2, kDecBottomRight, true, 16, 64, ElementType::F32, "alibi"},
        DecodeCase{1, 2500, 8, 1, kDecBottomRight, true, 16, 64, ElementType::F32, "lengths"},
        DecodeCase{7, 2500, 8, 2, kDecNone, true, 8, 64, ElementType::F32, "window"},
        DecodeCase{2, 1500, 4, 1, kDecBottomRight, true, 16, 64, ElementType::F32, "softcap"},
        // Few rows (G·Tq at most a row block: 8 at 16 lanes, 4 at 8) with
        // whole vectors of D and Dv read K and V in place: scores folded
        // from per-key vectors over D, key by key, and put in key order;
        // P·V by passes over groups of rows reading V's rows whole when a
        // row's Dv fits the accumulators (16 lanes: 2 rows at Dv 128, 4 at
        // 64, 8 at 32), else with acc in cache, each V row read whole into
        // every row (8 lanes at Dv 128, 16 lanes at Dv 512).
        // 1-8 rows, a partial last tile, splits; 3 and 5 rows leave a
        // shorter last pass (2 + 1 rows at Dv 128, 4 + 1 at Dv 64).
        DecodeCase{1, 4099, 8, 2, kDecBottomRight, true, 16, 128, ElementType::F32, "", 128},
        DecodeCase{1, 1000, 8, 1, kDecNone, false, 16, 128, ElementType::F32, "", 128},
        DecodeCase{2, 777, 8, 2, kDecTopLeft, true, 16, 64, ElementType::F32, "", 64},
        DecodeCase{1, 33, 4, 4, kDecBottomRight, false, 16, 64, ElementType::F32, "", 64},
        DecodeCase{1, 1500, 12, 4, kDecNone, true, 16, 64, ElementType::F32, "", 32},
        DecodeCase{1, 2000, 8, 4, kDecBottomRight, true, 8, 64, ElementType::F32, "", 64},
        DecodeCase{3, 130, 4, 4, kDecTopLeft, false, 8, 32, ElementType::F32, "", 16},
        DecodeCase{1, 2048, 8, 2, kDecBottomRight, true, 16, 128, ElementType::F16, "", 128},
        DecodeCase{2, 900, 4, 2, kDecTopLeft, true, 8, 64, ElementType::BF16, "", 64},
        DecodeCase{1, 1500, 8, 2, kDecBottomRight, true, 16, 64, ElementType::F32, "mask", 64},
        DecodeCase{2, 1500, 8, 4, kDecNone, false, 16, 64, ElementType::F32, "additive", 64},
        DecodeCase{1, 1500, 8, 2, kDecBottomRight, true, 16, 64, ElementType::F32, "alibi", 64},
        DecodeCase{1, 2500, 8, 1, kDecBottomRight, true, 16, 64, ElementType::F32, "lengths", 64},
        DecodeCase{2, 2500, 8, 2, kDecNone, true, 16, 64, ElementType::F32, "window", 64},
        DecodeCase{1, 1500, 4, 1, kDecBottomRight, true, 16, 64, ElementType::F32, "softcap", 64},
        DecodeCase{3, 1100, 4, 4, kDecBottomRight, false, 16, 128, ElementType::F32, "", 128},
        DecodeCase{5, 1100, 2, 2, kDecTopLeft, true, 16, 64, ElementType::BF16, "", 64},
        DecodeCase{1, 1300, 8, 2, kDecBottomRight, true, 8, 128, ElementType::F32, "", 128},
        DecodeCase{2, 700, 4, 2, kDecTopLeft, true, 8, 128, ElementType::BF16, "", 128},
        DecodeCase{1, 900, 8, 2, kDecNone, false, 8, 128, ElementType::F16, "window", 128},
        DecodeCase{3, 333, 2, 2, kDecBottomRight, true, 8, 128, ElementType::F32, "alibi", 128},
        DecodeCase{1, 300, 4, 2, kDecBottomRight, true, 16, 512, ElementType::F32, "", 512}),
    decodeParamName);

/// Prefill shapes through the same kernel with 16 lanes (8-row register
/// blocks, keys transposed in registers) and a split forced on a few
/// tiles: Tq, Tk not multiples of any tile.
TEST(DecodeGrid, PrefillWithSixteenLanesAndSplits) {
  Spec s;
  s.h = 4;
  s.hkv = 2;
  s.d = s.dv = 32;
  s.causal = ref::Causal::TopLeft;
  runtime::JitOptions options;
  options.vectorWidth = 16;
  options.minWorkItems = 4096;
  runSpec(s, {{2, 130, 1100}}, Pipeline::Cpu, 7, kTol, options);
  options.minWorkItems = 0;
  s.causal = ref::Causal::BottomRight;
  runSpec(s, {{2, 130, 1100}}, Pipeline::Cpu, 8, kTol, options);
}

/// A prefill spec of the PrefillPacking and FusedDropout tests: H, Hkv, D = Dv, causal.
static Spec prefillSpec(int64_t h, int64_t hkv, int64_t d, ref::Causal causal,
                        bool dynamic = false) {
  Spec s;
  s.h = h;
  s.hkv = hkv;
  s.d = s.dv = d;
  s.causal = causal;
  s.dynamic = dynamic;
  return s;
}

/// A bf16 (or f16) prefill spec with head dims d (Q·K) and dv (V).
static Spec halfSpec(int64_t h, int64_t hkv, int64_t d, int64_t dv, ref::Causal causal,
                     ElementType dtype = ElementType::BF16) {
  Spec s = prefillSpec(h, hkv, d, causal);
  s.dv = dv;
  s.dtype = dtype;
  return s;
}

/// Prefill tiles with the keys transposed once per call (static B, Tq, Tk,
/// Tq above tile-q: several Q tiles per K/V head read each K/V tile's slice
/// of one buffer) and V read in place (f32 V of whole vectors), at 8 and 16
/// lanes, against the double reference: every causal kind, both mask kinds,
/// each feature, GQA, a D and Dv that are not whole vectors (K transposed
/// element by element, the Vt copy), f16 and bf16 (V copied, converted),
/// forced key splits; Tq, Tk not multiples of any tile, and a Tk of exactly
/// one tile. (Every case at 16 lanes, five at 8.)

TEST(PrefillPacking, PrepackedKeysAndValuesInPlaceMatchReference) {
  struct Case {
    const char *name;
    Spec spec;
    double tol = kTol;
    std::optional<int64_t> minWorkItems = std::nullopt; ///< unset: twice the threads
  };
  auto spec = [](int64_t h, int64_t hkv, int64_t d, ref::Causal causal) {
    return prefillSpec(h, hkv, d, causal);
  };
  std::vector<Case> cases;
  cases.push_back({"plain", spec(4, 2, 64, ref::Causal::None)});
  cases.push_back({"keep-mask-top-left", spec(4, 1, 64, ref::Causal::TopLeft)});
  cases.back().spec.mask = ref::Mask::Kind::Keep;
  cases.push_back({"add-mask-bottom-right", spec(2, 2, 80, ref::Causal::BottomRight)});
  cases.back().spec.mask = ref::Mask::Kind::Add;
  cases.back().spec.maskPerHead = true;
  cases.push_back({"softcap-alibi", spec(4, 2, 64, ref::Causal::None)});
  cases.back().spec.softcap = 0.75f;
  cases.back().spec.slopes = Slopes::PerBatchHead;
  cases.push_back({"window", spec(4, 2, 64, ref::Causal::None)});
  cases.back().spec.window = ref::Window{11, 5, ref::Causal::BottomRight};
  cases.push_back({"key-lengths", spec(2, 1, 64, ref::Causal::None)});
  cases.back().spec.lengths = std::vector<int64_t>{29, 151};
  cases.push_back({"key-lengths-input", spec(4, 2, 64, ref::Causal::TopLeft)});
  cases.back().spec.lengthsInput = ElementType::I64;
  cases.push_back({"d20-dv12", spec(2, 2, 20, ref::Causal::BottomRight)});
  cases.back().spec.dv = 12;
  cases.push_back({"f16", spec(4, 2, 64, ref::Causal::None), 2e-3});
  cases.back().spec.dtype = ElementType::F16;
  cases.push_back({"bf16", spec(4, 2, 64, ref::Causal::BottomRight), 1.6e-2});
  cases.back().spec.dtype = ElementType::BF16;
  cases.push_back({"splits", spec(4, 2, 64, ref::Causal::TopLeft), kTol, int64_t(4096)});
  // At 8 lanes only the cases whose packing or register code differs from
  // 16 lanes' (whole vectors, D and Dv that are not, half precision, key
  // splits); the masks and score features are the same code at both widths.
  auto atEightLanes = [](const Case &c) {
    for (const char *n : {"plain", "d20-dv12", "f16", "bf16", "splits"})
      if (std::string(c.name) == n)
        return true;
    return false;
  };
  unsigned seed = 1;
  for (int64_t width : {8, 16})
    for (const Case &c : cases) {
      if (width == 8 && !atEightLanes(c)) {
        ++seed;
        continue;
      }
      SCOPED_TRACE(std::string(c.name) + " at " + std::to_string(width) + " lanes");
      runtime::JitOptions options;
      options.vectorWidth = width;
      options.minWorkItems = c.minWorkItems;
      runSpec(c.spec, {{2, 150, 203}, {2, 128, 64}}, Pipeline::Cpu, seed++, c.tol, options);
    }
}

/// Dynamic B, Tq and Tk: the keys are prepacked or not at run time
/// (FlashKernel::mayPrepackKeys / prepackFits), one compiled function
/// taking both branches: Tq above tile-q within the limit (prepacked),
/// Tq at or below tile-q (each tile packs its own), and with
/// prepack-limit-mib 1 a problem over it (1.1 MiB of keys: per tile) and
/// one under it (16 lanes); against the double reference, at 8 and 16
/// lanes.
TEST(PrefillPacking, KeysPrepackedAtRunTimeMatchReference) {
  struct Case {
    const char *name;
    Spec spec;
    double tol = kTol;
  };
  auto spec = [](int64_t h, int64_t hkv, int64_t d, ref::Causal causal) {
    return prefillSpec(h, hkv, d, causal, /*dynamic=*/true);
  };
  std::vector<Case> cases;
  cases.push_back({"plain", spec(4, 2, 64, ref::Causal::None)});
  cases.push_back({"bottom-right-window", spec(4, 2, 64, ref::Causal::BottomRight)});
  cases.back().spec.window = ref::Window{40, 0, ref::Causal::BottomRight};
  cases.push_back({"key-lengths", spec(2, 1, 64, ref::Causal::TopLeft)});
  cases.back().spec.lengths = std::vector<int64_t>{29, 1000};
  cases.push_back({"d20-dv12", spec(2, 2, 20, ref::Causal::BottomRight)});
  cases.back().spec.dv = 12;
  cases.push_back({"bf16", spec(4, 2, 64, ref::Causal::BottomRight), 1.6e-2});
  cases.back().spec.dtype = ElementType::BF16;
  unsigned seed = 101;
  // (Under the limit of 1 MiB, the 16-lane kernels: the branches are the
  // same code at 8 lanes.)
  for (int64_t limit : {32, 1})
    for (int64_t width : {8, 16})
      for (const Case &c : cases) {
        if (limit == 1 && width == 8)
          continue;
        SCOPED_TRACE(std::string(c.name) + " at " + std::to_string(width) +
                     " lanes, prepack-limit-mib " + std::to_string(limit));
        runtime::JitOptions options;
        options.vectorWidth = width;
        options.prepackLimitMiB = limit;
        runSpec(c.spec, {{2, 150, 203}, {2, 48, 203}, {2, 100, 1100}}, Pipeline::Cpu, seed++,
                c.tol, options);
      }
}

/// bf16 prefill tiles on AVX512-BF16 dot products (bf16-dot, forced on;
/// Bf16Dot.cpp) against the double reference over the features the packed
/// tile takes, beside the same tiles on f32 FMAs (bf16-dot off): each
/// within bf16's tolerance. Rounding P to bf16 must change some output
/// (else the dot path did not run). Skipped where the CPU has no
/// AVX512-BF16.
TEST(Bf16Dot, PrefillTilesMatchReference) {
  if (!runtime::hostCpuTarget().hasBf16Dot)
    GTEST_SKIP() << "this CPU has no AVX512-BF16";
  struct Case {
    const char *name;
    Spec spec;
    std::optional<int64_t> minWorkItems = std::nullopt; ///< unset: twice the threads
  };
  std::vector<Case> cases;
  cases.push_back({"plain-gqa", halfSpec(4, 2, 64, 64, ref::Causal::None)});
  cases.push_back({"d128-dv32-top-left", halfSpec(2, 1, 128, 32, ref::Causal::TopLeft)});
  cases.push_back({"keep-mask-bottom-right", halfSpec(4, 2, 64, 64, ref::Causal::BottomRight)});
  cases.back().spec.mask = ref::Mask::Kind::Keep;
  cases.push_back({"d32-dv48", halfSpec(2, 2, 32, 48, ref::Causal::None)});
  cases.push_back({"softcap-alibi", halfSpec(4, 2, 64, 64, ref::Causal::None)});
  cases.back().spec.softcap = 0.75f;
  cases.back().spec.slopes = Slopes::PerBatchHead;
  cases.push_back({"window", halfSpec(4, 2, 64, 64, ref::Causal::None)});
  cases.back().spec.window = ref::Window{11, 5, ref::Causal::BottomRight};
  cases.push_back({"key-lengths", halfSpec(2, 1, 64, 64, ref::Causal::None)});
  cases.back().spec.lengths = std::vector<int64_t>{29, 151};
  cases.push_back({"splits", halfSpec(4, 2, 64, 64, ref::Causal::TopLeft), int64_t(4096)});
  std::mt19937 gen(7);
  int64_t differing = 0;
  for (const Case &c : cases)
    // Ragged tiles on both sides, and a few rows. (Aligned tiles, a third
    // of this test's time as a third shape, run on bf16 dots in
    // test/Bench/cpu-suite-quick.test's bf16-dot rows.)
    for (Shape sh : {Shape{2, 150, 203}, Shape{2, 3, 77}}) {
      SCOPED_TRACE(std::string(c.name) + " B=" + std::to_string(sh.b) +
                   " Tq=" + std::to_string(sh.tq) + " Tk=" + std::to_string(sh.tk));
      Instance in = instance(c.spec, sh, gen);
      std::vector<ref::Tensor> outs;
      for (bool dot : {true, false}) {
        runtime::JitOptions options;
        options.vectorWidth = 16;
        options.minWorkItems = c.minWorkItems;
        options.bf16Dot = dot;
        options.amx = false; // (an AMX host would take AMX tiles for both)
        Jitted j(source(c.spec, sh), "f", Pipeline::Cpu, options);
        ASSERT_TRUE(j.ok());
        auto out = j.run(in.inputs, in.dtypes);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_TRUE(allFinite(out[0])) << "rows without keys give zeros, not NaN";
        EXPECT_LE(relativeError(out[0], in.want), 1.6e-2) << (dot ? "bf16-dot" : "f32 FMAs");
        outs.push_back(out[0]);
      }
      for (size_t i = 0; i < outs[0].data.size(); ++i)
        differing += outs[0].data[i] != outs[1].data[i];
    }
  EXPECT_GT(differing, 0) << "bf16-dot gave exactly the f32 path's outputs everywhere";
}

/// The AMX test cases (amx, amx-fp16; AmxTiles.cpp): the features the
/// packed tile takes, bf16 and f16, on ragged tiles (the first case) and a
/// few rows.
namespace {
struct AmxCase {
  const char *name;
  Spec spec;
  std::vector<Shape> shapes;
  int64_t tileQ = 64;
  std::optional<int64_t> minWorkItems = std::nullopt; ///< unset: twice the threads
};

std::vector<AmxCase> amxCases() {
  const Shape big{2, 150, 203}, few{2, 3, 77};
  std::vector<AmxCase> cases;
  cases.push_back({"plain-gqa", halfSpec(4, 2, 64, 64, ref::Causal::None), {big, few}});
  cases.push_back({"d128-dv32-top-left-tile-q-32", halfSpec(2, 1, 128, 32, ref::Causal::TopLeft),
                   {few}, 32});
  cases.push_back({"keep-mask-bottom-right", halfSpec(4, 2, 64, 64, ref::Causal::BottomRight),
                   {big}});
  cases.back().spec.mask = ref::Mask::Kind::Keep;
  cases.push_back({"d32-dv48-softcap-alibi", halfSpec(2, 2, 32, 48, ref::Causal::None), {few}});
  cases.back().spec.softcap = 0.75f;
  cases.back().spec.slopes = Slopes::PerBatchHead;
  cases.push_back({"window-lengths", halfSpec(2, 1, 64, 64, ref::Causal::None), {big}});
  cases.back().spec.window = ref::Window{11, 5, ref::Causal::BottomRight};
  cases.back().spec.lengths = std::vector<int64_t>{29, 151};
  cases.push_back({"dropout-splits", halfSpec(4, 2, 64, 64, ref::Causal::TopLeft), {few}, 64,
                   int64_t(4096)});
  cases.back().spec.dropoutRate = 0.25f;
  cases.back().spec.dropoutSeed = 9;
  cases.push_back({"f16-gqa-bottom-right",
                   halfSpec(4, 2, 64, 32, ref::Causal::BottomRight, ElementType::F16), {big}});
  cases.push_back({"f16-softcap-lengths",
                   halfSpec(2, 1, 128, 64, ref::Causal::None, ElementType::F16), {big}, 32});
  cases.back().spec.softcap = 2.0f;
  cases.back().spec.lengths = std::vector<int64_t>{29, 151};
  return cases;
}

/// Runs `cases` on AMX tiles (emulated, or the hardware's) against the
/// double reference at bf16's tolerance (f16's: 2e-3). With `againstF32`,
/// the first case also runs on f32 FMAs, and some of its outputs must
/// differ (P is rounded to bf16 on the tiles: else they did not run).
void checkAmxCases(const std::vector<AmxCase> &cases, bool emulated, bool againstF32) {
  std::mt19937 gen(13);
  int64_t differing = 0;
  for (const AmxCase &c : cases)
    for (Shape sh : c.shapes) {
      SCOPED_TRACE(std::string(c.name) + " B=" + std::to_string(sh.b) +
                   " Tq=" + std::to_string(sh.tq) + " Tk=" + std::to_string(sh.tk));
      Instance in = instance(c.spec, sh, gen);
      bool f16 = c.spec.dtype == ElementType::F16;
      std::vector<ref::Tensor> outs;
      for (bool tiles : {true, false}) {
        if (!tiles && !(againstF32 && &c == &cases.front()))
          continue;
        runtime::JitOptions options;
        options.vectorWidth = 16;
        options.tileQ = c.tileQ;
        options.minWorkItems = c.minWorkItems;
        options.bf16Dot = false;
        options.amx = tiles;
        options.emulateAmx = tiles && emulated;
        Jitted j(source(c.spec, sh), "f", Pipeline::Cpu, options);
        ASSERT_TRUE(j.ok());
        auto out = j.run(in.inputs, in.dtypes);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_TRUE(allFinite(out[0])) << "rows without keys give zeros, not NaN";
        EXPECT_LE(relativeError(out[0], in.want), f16 ? 2e-3 : 1.6e-2)
            << (tiles ? "AMX tiles" : "f32 FMAs");
        outs.push_back(out[0]);
      }
      if (outs.size() == 2)
        for (size_t i = 0; i < outs[0].data.size(); ++i)
          differing += outs[0].data[i] != outs[1].data[i];
    }
  if (againstF32)
    EXPECT_GT(differing, 0) << "the AMX path gave exactly the f32 path's outputs everywhere";
}
} // namespace

/// The AMX kernel run as vector code (emulate-amx: attn-emulate-amx), on
/// every host.
TEST(AmxTiles, EmulatedTilesMatchReference) {
  checkAmxCases(amxCases(), /*emulated=*/true, /*againstF32=*/true);
}

/// The same on the hardware's tiles, where the host has AMX-BF16 and Linux
/// grants the process its state (f16 cases where it has AMX-FP16 too);
/// skipped elsewhere.
TEST(AmxTiles, HardwareTilesMatchReference) {
  runtime::CpuTarget host = runtime::hostCpuTarget();
  if (!host.amxPermitted)
    GTEST_SKIP() << (host.hasAmx ? "Linux refused this process the AMX state"
                                 : "this CPU has no AMX-BF16");
  std::vector<AmxCase> cases;
  for (AmxCase &c : amxCases())
    if (c.spec.dtype != ElementType::F16 || host.hasAmxFp16)
      cases.push_back(c);
  checkAmxCases(cases, /*emulated=*/false, /*againstF32=*/false);
}

/// Dropout in the fused CPU kernel (the generator of Dropout.h applied to
/// each tile's probabilities) against the double reference, which drops
/// by the same counter-based rule: prefill and decode tiles, GQA, both
/// causal kinds, key lengths, an additive mask, softcap, key splits, 8 and
/// 16 lanes, bf16 on dot products or f32 FMAs. Every case must be fused
/// (no reference fallback).
TEST(FusedDropout, MatchesReference) {
  struct Case {
    const char *name;
    Spec spec;
    std::vector<Shape> shapes;
    int64_t width = 16;
    std::optional<int64_t> minWorkItems = std::nullopt;
    std::optional<bool> bf16Dot = std::nullopt;
  };
  auto spec = [](int64_t h, int64_t hkv, int64_t d, ref::Causal causal, float rate, int64_t seed) {
    Spec s = prefillSpec(h, hkv, d, causal);
    s.dropoutRate = rate;
    s.dropoutSeed = seed;
    return s;
  };
  std::vector<Case> cases;
  std::vector<Shape> prefill{{2, 70, 150}, {1, 64, 64}, {2, 3, 77}};
  cases.push_back({"gqa-bottom-right", spec(4, 2, 16, ref::Causal::BottomRight, 0.2f, 11), prefill});
  cases.push_back({"gqa-bottom-right-8-lanes", cases.back().spec, prefill, 8});
  cases.push_back({"top-left-lengths-mask", spec(2, 2, 32, ref::Causal::TopLeft, 0.5f, -3), prefill});
  cases.back().spec.lengthsInput = ElementType::I32;
  cases.back().spec.mask = ref::Mask::Kind::Add;
  cases.push_back({"softcap-splits", spec(2, 1, 16, ref::Causal::None, 0.1f, 1 << 20), prefill, 16,
                   int64_t(4096)});
  cases.back().spec.softcap = 2.0f;
  cases.push_back({"decode", spec(8, 2, 32, ref::Causal::BottomRight, 0.3f, 5),
                   {{3, 1, 300}, {1, 2, 513}}});
  cases.push_back({"decode-splits", cases.back().spec, {{1, 1, 1000}}, 16, int64_t(64)});
  for (bool dot : {true, false}) {
    cases.push_back({dot ? "bf16-dot" : "bf16-fma", spec(4, 2, 64, ref::Causal::TopLeft, 0.25f, 9),
                     prefill, 16, std::nullopt, dot && runtime::hostCpuTarget().hasBf16Dot});
    cases.back().spec.dtype = ElementType::BF16;
  }
  std::mt19937 gen(41);
  for (const Case &c : cases)
    for (Shape sh : c.shapes) {
      SCOPED_TRACE(std::string(c.name) + " B=" + std::to_string(sh.b) +
                   " Tq=" + std::to_string(sh.tq) + " Tk=" + std::to_string(sh.tk));
      Instance in = instance(c.spec, sh, gen);
      runtime::JitOptions options;
      options.vectorWidth = c.width;
      options.minWorkItems = c.minWorkItems;
      options.bf16Dot = c.bf16Dot.value_or(false);
      Jitted j(source(c.spec, sh), "f", Pipeline::Cpu, options);
      ASSERT_TRUE(j.ok());
      EXPECT_TRUE(j.unfusedOps().empty()) << "dropout took the reference route";
      auto out = j.run(in.inputs, in.dtypes);
      ASSERT_EQ(out.size(), 1u);
      ASSERT_TRUE(allFinite(out[0]));
      EXPECT_LE(relativeError(out[0], in.want), c.spec.dtype == ElementType::BF16 ? 1.6e-2 : kTol);
    }
}

/// The attention variants through the tensor-core kernel (f16/bf16, head
/// dims 64/128 take it in the GPU pipelines; gpu-schedule runs it on the
/// CPU, threads in lockstep): the same FlashCore rules as the other kernels,
/// on the per-lane scores of the mma accumulators. Dynamic shapes compile
/// once for all three shapes.
struct TcFeatureCase {
  std::string feature; ///< softcap, alibi, lengths, window, dynamic
  int64_t d;
  ElementType dtype;
  ref::Causal causal;
};

class TensorCoreFeatures : public ::testing::TestWithParam<TcFeatureCase> {};

TEST_P(TensorCoreFeatures, EmulatedKernelMatchesReference) {
  const TcFeatureCase &c = GetParam();
  Spec s;
  s.h = 4;
  s.hkv = 2;
  s.d = s.dv = c.d;
  s.dtype = c.dtype;
  s.causal = c.causal;
  if (c.feature == "softcap")
    s.softcap = 0.5f;
  else if (c.feature == "alibi")
    s.slopes = Slopes::PerBatchHead;
  else if (c.feature == "lengths")
    s.lengthsInput = ElementType::I64;
  else if (c.feature == "window")
    s.window = ref::Window{40, 5, ref::Causal::BottomRight};
  else if (c.feature == "dynamic")
    s.dynamic = true;
  // f32: TF32 operands (TensorCoreTest.cpp), asked for with tf32.
  double tol = c.dtype == ElementType::F16 ? 2e-3 : c.dtype == ElementType::F32 ? 1e-3 : 1.6e-2;
  runtime::JitOptions options;
  options.tf32 = c.dtype == ElementType::F32;
  std::vector<Shape> shapes = {{2, 97, 150}};
  if (c.feature == "dynamic")
    shapes = {{2, 97, 150}, {1, 1, 33}, {3, 64, 64}};
  runSpec(s, shapes, Pipeline::GpuSchedule, static_cast<unsigned>(c.d + int(c.causal) * 5), tol,
          options);
}

void PrintTo(const TcFeatureCase &c, std::ostream *os) {
  *os << c.feature << " D" << c.d
      << (c.dtype == ElementType::BF16 ? " bf16" : c.dtype == ElementType::F32 ? " tf32" : " f16") << " "
      << causalName(c.causal);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, TensorCoreFeatures,
    ::testing::Values(TcFeatureCase{"softcap", 64, ElementType::F16, ref::Causal::BottomRight},
                      TcFeatureCase{"alibi", 128, ElementType::BF16, ref::Causal::None},
                      TcFeatureCase{"lengths", 64, ElementType::BF16, ref::Causal::TopLeft},
                      TcFeatureCase{"window", 128, ElementType::F16, ref::Causal::None},
                      TcFeatureCase{"dynamic", 64, ElementType::F16, ref::Causal::BottomRight},
                      TcFeatureCase{"softcap", 128, ElementType::F32, ref::Causal::TopLeft},
                      TcFeatureCase{"alibi", 64, ElementType::F32, ref::Causal::BottomRight},
                      TcFeatureCase{"lengths", 128, ElementType::F32, ref::Causal::None},
                      TcFeatureCase{"window", 64, ElementType::F32, ref::Causal::None},
                      TcFeatureCase{"dynamic", 128, ElementType::F32, ref::Causal::BottomRight}));

} // namespace
