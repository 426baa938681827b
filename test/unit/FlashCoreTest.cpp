//===- FlashCoreTest.cpp - the shared FlashAttention core's arithmetic ----===//
//
// The one exp2 every fused kernel uses (math.exp2 as attn-expand-math
// expands it: KernelBuilder::exp2Polynomial), on scalars and on vectors,
// JIT-compiled and run: against std::exp2 over the range the
// kernels feed it (x <= 0: scores minus the running max), and its rules for
// the special values: NaN in, NaN out; -inf and anything <= -127 give
// exactly 0. The tanh built from it (the softcap) against std::tanh and at
// its special values. The natural log the GPU kernels' log-sum-exp uses
// (KernelBuilder::logPolynomial, scalars) against std::log over the row
// sums it is given (0 and 1 .. 2^24) and beyond, and its special values.
// KeyVisibility (key lengths, causal, window) JIT-run
// for many problems against the rules of docs/design.md (*Attention
// variants*) evaluated directly: per element, the K/V tile loop bounds of
// each Q tile (every visible key inside, no tile outside the first and last
// holding one) and the "tile seen whole" test that decides per-element
// masking.
//
//===----------------------------------------------------------------------===//
#include "Conversion/FlashCore/FlashCore.h"
#include "Runtime/Lowering.h"

#include "attn/Runtime/Jit.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

using namespace mlir;
using namespace mlir::attn::flash;
namespace rt = ::attn::runtime;

namespace {

constexpr int64_t kN = 64;    // inputs per call
constexpr int64_t kWidth = 8; // vector lanes

enum class Unary { Exp2, Tanh, Log };

/// func @exp2(x: tensor<64xf32>) -> (vector f(x), scalar f(x)) with f =
/// KernelBuilder::exp2 or KernelBuilder::tanh (math.exp2, math.tanh), or
/// KernelBuilder::logPolynomial (scalars only: both results scalar).
OwningOpRef<ModuleOp> buildUnaryModule(MLIRContext &ctx, Unary kind) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto t = RankedTensorType::get({kN}, b.getF32Type());
  auto fn = func::FuncOp::create(b, loc, "exp2", b.getFunctionType({t}, {t, t}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder fb{b, loc, kWidth};
  auto mt = MemRefType::get({kN}, b.getF32Type());
  Value x = bufferization::ToBufferOp::create(b, loc, mt, entry->getArgument(0),
                                              /*read_only=*/true);
  Value vecOut = memref::AllocOp::create(b, loc, mt);
  Value scalarOut = memref::AllocOp::create(b, loc, mt);
  auto f = [&](Value v) {
    return kind == Unary::Tanh ? fb.tanh(v)
           : kind == Unary::Exp2 ? fb.exp2(v)
                                 : fb.logPolynomial(v);
  };
  if (kind == Unary::Log)
    fb.loop(fb.idx(0), fb.idx(kN), 1, [&](Value i) { fb.store(f(fb.load(x, {i})), vecOut, {i}); });
  else
    fb.loop(fb.idx(0), fb.idx(kN), kWidth,
            [&](Value i) { fb.vstore(f(fb.vload(x, {i})), vecOut, {i}); });
  fb.loop(fb.idx(0), fb.idx(kN), 1,
          [&](Value i) { fb.store(f(fb.load(x, {i})), scalarOut, {i}); });
  Value r0 = bufferization::ToTensorOp::create(b, loc, t, vecOut, true, true);
  Value r1 = bufferization::ToTensorOp::create(b, loc, t, scalarOut, true, true);
  func::ReturnOp::create(b, loc, ValueRange{r0, r1});
  return module;
}

class FlashCoreUnary : public ::testing::Test {
protected:
  explicit FlashCoreUnary(Unary kind) : kind(kind) {}
  void SetUp() override {
    DialectRegistry registry;
    rt::registerJitDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    module = buildUnaryModule(*ctx, kind);
    PassManager pm(ctx.get());
    pm.addPass(mlir::attn::createAttnExpandMath());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    // Nothing left for libm: otherwise this would test libm's exp2.
    bool mathLeft = false;
    module->walk([&](Operation *op) { mathLeft |= isa<math::MathDialect>(op->getDialect()); });
    ASSERT_FALSE(mathLeft);
    auto fn = rt::CompiledFunction::compile(*module, "exp2", rt::Pipeline::Reference);
    ASSERT_TRUE(bool(fn)) << llvm::toString(fn.takeError());
    compiled = std::move(*fn);
  }

  /// {vector results, scalar results} for 64 inputs.
  std::pair<std::vector<float>, std::vector<float>> run(const std::vector<float> &in) {
    rt::HostTensor x = rt::HostTensor::zeros(rt::ElementType::F32, {kN});
    std::memcpy(x.bytes.data(), in.data(), kN * sizeof(float));
    auto out = compiled->call({x});
    EXPECT_TRUE(bool(out));
    if (!out) {
      llvm::consumeError(out.takeError());
      return {};
    }
    std::vector<float> v(kN), s(kN);
    std::memcpy(v.data(), (*out)[0].bytes.data(), kN * sizeof(float));
    std::memcpy(s.data(), (*out)[1].bytes.data(), kN * sizeof(float));
    return {v, s};
  }

  Unary kind;
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<rt::CompiledFunction> compiled;
};

class FlashCoreExp2 : public FlashCoreUnary {
protected:
  FlashCoreExp2() : FlashCoreUnary(Unary::Exp2) {}
};

class FlashCoreTanh : public FlashCoreUnary {
protected:
  FlashCoreTanh() : FlashCoreUnary(Unary::Tanh) {}
};

class FlashCoreLog : public FlashCoreUnary {
protected:
  FlashCoreLog() : FlashCoreUnary(Unary::Log) {}
};

TEST_F(FlashCoreLog, MatchesStdLog) {
  // 1, just either side of √2 (the mantissa's fold), the row sums a kernel
  // sees (1 .. 2^24), and normal values below 1 and up to FLT_MAX.
  std::vector<float> in(kN);
  for (int64_t i = 0; i < kN; ++i)
    in[i] = std::exp2(-120.0f + 247.0f * static_cast<float>(i) / (kN - 1));
  in[0] = 1.0f;
  in[1] = std::nextafter(1.0f, 2.0f);
  in[2] = std::nextafter(1.0f, 0.0f);
  in[3] = 1.41421354f;
  in[4] = std::nextafter(1.41421354f, 2.0f);
  in[5] = 3.0f;
  in[6] = 1000.0f;
  in[7] = 16777216.0f;
  in[8] = std::numeric_limits<float>::max();
  in[9] = std::numeric_limits<float>::min();
  auto [vec, scalar] = run(in);
  ASSERT_EQ(scalar.size(), size_t(kN));
  for (int64_t i = 0; i < kN; ++i) {
    double want = std::log(static_cast<double>(in[i]));
    // 2 ulp of the result, and 2 ulp of 1 near x = 1 (where ln x is tiny).
    double tol = 2.5e-7 * std::fabs(want) + 2e-8;
    EXPECT_NEAR(scalar[i], want, tol) << "x = " << in[i];
    EXPECT_EQ(vec[i], scalar[i]);
  }
}

TEST_F(FlashCoreLog, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in(kN, 1.0f);
  in[0] = 0.0f; // an empty row's sum: -inf
  in[1] = inf;
  in[2] = nan;
  in[3] = 2.0f;
  auto [vec, scalar] = run(in);
  ASSERT_EQ(scalar.size(), size_t(kN));
  EXPECT_EQ(scalar[0], -inf);
  EXPECT_EQ(scalar[1], inf);
  EXPECT_TRUE(std::isnan(scalar[2]));
  EXPECT_NEAR(scalar[3], std::log(2.0), 1e-7);
  EXPECT_EQ(scalar[4], 0.0f);
}

TEST_F(FlashCoreExp2, MatchesStdExp2WhereTheKernelsUseIt) {
  // x in [-126, 0] (scores minus the running max) plus a little above 0.
  std::vector<float> in(kN);
  for (int64_t i = 0; i < kN; ++i)
    in[i] = -126.0f + 127.0f * static_cast<float>(i) / (kN - 1) + 0.37f * (i % 3);
  auto [vec, scalar] = run(in);
  ASSERT_EQ(vec.size(), size_t(kN));
  // The level the kernels were compiled at (3 unless capped); a bad cap
  // already failed the compile above.
  llvm::Expected<unsigned> level = rt::cappedOptLevel(3);
  const bool optimised = level && *level == 3;
  if (!level)
    llvm::consumeError(level.takeError());
  for (int64_t i = 0; i < kN; ++i) {
    double want = std::exp2(static_cast<double>(in[i]));
    EXPECT_NEAR(vec[i], want, 2e-7 * want) << "x = " << in[i];
    EXPECT_NEAR(scalar[i], want, 2e-7 * want) << "x = " << in[i];
    // One rule, both forms: bit for bit where LLVM contracts both alike
    // (O3). Under an ATTN_MAX_OPT_LEVEL cap (the sanitizer stage's O0)
    // the two forms' mul+add pairs may contract differently: 1 ulp.
    if (optimised)
      EXPECT_EQ(vec[i], scalar[i]) << "x = " << in[i];
    else
      EXPECT_NEAR(vec[i], scalar[i], std::ldexp(std::fabs(scalar[i]), -23)) << "x = " << in[i];
  }
}

TEST_F(FlashCoreExp2, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in(kN, 0.0f);
  // lane: value
  in[0] = nan;     // NaN in, NaN out
  in[1] = -inf;    // exactly 0
  in[2] = -127.0f; // exactly 0 (the clamp)
  in[3] = -1e30f;  // exactly 0
  in[4] = 0.0f;    // 1
  in[5] = -0.5f;   // the polynomial's edge: 2^-0.5
  in[6] = 0.5f;
  in[9] = -nan;    // a NaN in the second lane of a vector too
  auto [vec, scalar] = run(in);
  ASSERT_EQ(vec.size(), size_t(kN));
  for (const std::vector<float> *r : {&vec, &scalar}) {
    EXPECT_TRUE(std::isnan((*r)[0]));
    EXPECT_TRUE(std::isnan((*r)[9]));
    EXPECT_EQ((*r)[1], 0.0f);
    EXPECT_EQ((*r)[2], 0.0f);
    EXPECT_EQ((*r)[3], 0.0f);
    EXPECT_NEAR((*r)[4], 1.0f, 2e-7);
    EXPECT_NEAR((*r)[5], std::exp2(-0.5), 2e-7);
    EXPECT_NEAR((*r)[6], std::exp2(0.5), 3e-7);
    // The NaN lanes leave their neighbours alone.
    EXPECT_NEAR((*r)[8], 1.0f, 2e-7);
    EXPECT_NEAR((*r)[10], 1.0f, 2e-7);
  }
}

TEST_F(FlashCoreTanh, MatchesStdTanh) {
  // Both branches (|x| < 1/4 and above), both signs, the switch-over and
  // the saturation.
  std::vector<float> in(kN);
  for (int64_t i = 0; i < kN; ++i) {
    float mag = i < 32 ? 0.3f * static_cast<float>(i) / 31.0f // [0, 0.3]
                       : std::exp2(-4.0f + 9.0f * static_cast<float>(i - 32) / 31.0f);
    in[i] = (i % 2 ? -1.0f : 1.0f) * mag;
  }
  in[2] = 0.25f;
  in[3] = -std::nextafter(0.25f, 0.0f);
  in[4] = 1e-30f;
  auto [vec, scalar] = run(in);
  ASSERT_EQ(vec.size(), size_t(kN));
  for (int64_t i = 0; i < kN; ++i) {
    double want = std::tanh(static_cast<double>(in[i]));
    // 1e-6 relative near 0, a few ulp of 1 where it saturates.
    double tol = 1e-6 * std::fabs(want) + 1.5e-7;
    EXPECT_NEAR(vec[i], want, tol) << "x = " << in[i];
    EXPECT_NEAR(scalar[i], want, tol) << "x = " << in[i];
    // One rule, both forms: the same value to within 2 ulp of 1 (the
    // large branch is 1 - 2/(e^2|x| + 1)). Not bit for bit: the `arcp`
    // division may become a reciprocal estimate and a Newton step in one
    // form and a divide in the other, as the CPU's LLVM tuning decides (AMD
    // Zen 4: 6e-8 apart at x = 0.25).
    EXPECT_LE(std::fabs(vec[i] - scalar[i]), 2 * std::numeric_limits<float>::epsilon())
        << "x = " << in[i];
  }
}

TEST_F(FlashCoreTanh, SpecialValuesAndSymmetry) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in(kN, 0.0f);
  in[0] = nan;
  in[1] = inf;
  in[2] = -inf;
  in[3] = 50.0f; // saturated: exactly 1
  in[4] = -1e30f;
  in[5] = 0.0f;
  in[6] = -0.0f;
  for (int64_t i = 8; i < kN; i += 2) { // x and -x side by side
    in[i] = 0.05f * static_cast<float>(i) - 0.3f;
    in[i + 1] = -in[i];
  }
  auto [vec, scalar] = run(in);
  ASSERT_EQ(vec.size(), size_t(kN));
  for (const std::vector<float> *r : {&vec, &scalar}) {
    EXPECT_TRUE(std::isnan((*r)[0]));
    EXPECT_EQ((*r)[1], 1.0f);
    EXPECT_EQ((*r)[2], -1.0f);
    EXPECT_EQ((*r)[3], 1.0f);
    EXPECT_EQ((*r)[4], -1.0f);
    EXPECT_EQ((*r)[5], 0.0f);
    EXPECT_EQ((*r)[6], 0.0f);
    EXPECT_EQ((*r)[7], 0.0f); // a lane next to the NaN lane
    for (int64_t i = 8; i < kN; i += 2)
      EXPECT_EQ((*r)[i], -(*r)[i + 1]) << "x = " << in[i];
  }
}

//===----------------------------------------------------------------------===//
// KeyVisibility
//===----------------------------------------------------------------------===//

/// One problem's visibility rules: causal kind, window, key lengths.
struct VisCase {
  int64_t tq, tk;
  std::optional<mlir::attn::CausalKind> causal;
  std::optional<int64_t> left, right;
  mlir::attn::CausalKind diagonal = mlir::attn::CausalKind::bottom_right;
  std::vector<int64_t> lengths; ///< empty: no key lengths
  int64_t rowTile, keyTile;

  int64_t batch() const { return lengths.empty() ? 2 : static_cast<int64_t>(lengths.size()); }
  std::string str() const {
    std::ostringstream os;
    os << "Tq " << tq << " Tk " << tk << " causal "
       << (causal ? (*causal == mlir::attn::CausalKind::top_left ? "tl" : "br") : "-")
       << " left " << (left ? std::to_string(*left) : "-") << " right "
       << (right ? std::to_string(*right) : "-") << " diag "
       << (diagonal == mlir::attn::CausalKind::top_left ? "tl" : "br") << " tiles " << rowTile
       << "x" << keyTile << " lengths";
    for (int64_t l : lengths)
      os << " " << l;
    return os.str();
  }

  /// docs/design.md, *Attention variants*, evaluated directly.
  bool visible(int64_t b, int64_t i, int64_t j) const {
    int64_t len = tk;
    if (!lengths.empty())
      len = std::min(std::max<int64_t>(lengths[b], 0), tk);
    int64_t d = diagonal == mlir::attn::CausalKind::top_left ? i : i + len - tq;
    bool keep = j < len;
    if (causal)
      keep = keep && j <= d;
    if (left)
      keep = keep && j >= d - *left;
    if (right)
      keep = keep && j <= d + *right;
    return keep;
  }
};

/// func @vis(len: tensor<Bxi32>) -> (visible [B,Tq,Tk], tile loop bounds
/// [B,rowTiles,2], tile seen whole [B,rowTiles,keyTiles]) as f32 0/1 and
/// indices, each from the one KeyVisibility call the kernels make.
OwningOpRef<ModuleOp> buildVisibilityModule(MLIRContext &ctx, const VisCase &c) {
  using namespace mlir::attn;
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  int64_t B = c.batch();
  int64_t rowTiles = (c.tq + c.rowTile - 1) / c.rowTile;
  int64_t keyTiles = (c.tk + c.keyTile - 1) / c.keyTile;
  auto lenT = RankedTensorType::get({B}, b.getI32Type());
  auto visT = RankedTensorType::get({B, c.tq, c.tk}, b.getF32Type());
  auto rangeT = RankedTensorType::get({B, rowTiles, 2}, b.getF32Type());
  auto wholeT = RankedTensorType::get({B, rowTiles, keyTiles}, b.getF32Type());
  auto fn = func::FuncOp::create(b, loc, "vis",
                                 b.getFunctionType({lenT}, {visT, rangeT, wholeT}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder fb{b, loc, 1};
  SdpaProblem p;
  p.causal = c.causal;
  p.windowLeft = c.left;
  p.windowRight = c.right;
  p.diagonal = c.diagonal;
  SdpaBuffers s;
  if (!c.lengths.empty())
    s.keyLengths = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get({B}, b.getI32Type()), entry->getArgument(0), true);
  s.tq = fb.idx(c.tq);
  s.tk = fb.idx(c.tk);
  auto alloc = [&](RankedTensorType t) {
    return memref::AllocOp::create(b, loc, MemRefType::get(t.getShape(), t.getElementType()));
  };
  Value vis = alloc(visT), range = alloc(rangeT), whole = alloc(wholeT);
  auto asF32 = [&](Value v) -> Value {
    if (v.getType().isIndex())
      v = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    if (v.getType().isInteger(1))
      return arith::UIToFPOp::create(b, loc, fb.f32(), v);
    return arith::SIToFPOp::create(b, loc, fb.f32(), v);
  };
  fb.loop(fb.idx(0), fb.idx(B), 1, [&](Value bi) {
    KeyVisibility keys(fb, p, s, bi);
    fb.loop(fb.idx(0), fb.idx(c.tq), 1, [&](Value i) {
      fb.loop(fb.idx(0), fb.idx(c.tk), 1, [&](Value j) {
        fb.store(asF32(keys.isVisible(i, j)), vis, {bi, i, j});
      });
    });
    fb.loop(fb.idx(0), fb.idx(rowTiles), 1, [&](Value rt) {
      Value r0 = fb.mul(rt, fb.idx(c.rowTile));
      auto rowEnd = [&] { return fb.minI(fb.add(r0, fb.idx(c.rowTile)), s.tq); };
      KeyVisibility::Range tiles = keys.tileRange([&] { return r0; }, rowEnd, c.keyTile);
      fb.store(asF32(tiles.begin), range, {bi, rt, fb.idx(0)});
      fb.store(asF32(tiles.end), range, {bi, rt, fb.idx(1)});
      fb.loop(fb.idx(0), fb.idx(keyTiles), 1, [&](Value kt) {
        Value all = keys.allVisible(r0, rowEnd, fb.mul(kt, fb.idx(c.keyTile)), c.keyTile);
        fb.store(asF32(all), whole, {bi, rt, kt});
      });
    });
  });
  SmallVector<Value> results;
  Value bufs[3] = {vis, range, whole};
  RankedTensorType types[3] = {visT, rangeT, wholeT};
  for (int r = 0; r < 3; ++r)
    results.push_back(bufferization::ToTensorOp::create(b, loc, types[r], bufs[r], true, true));
  func::ReturnOp::create(b, loc, results);
  return module;
}

/// Runs the module of `c` and checks it against the rules.
void checkVisibility(const VisCase &c) {
  SCOPED_TRACE(c.str());
  DialectRegistry registry;
  rt::registerJitDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = buildVisibilityModule(ctx, c);
  auto fn = rt::CompiledFunction::compile(*module, "vis", rt::Pipeline::Reference);
  ASSERT_TRUE(bool(fn)) << llvm::toString(fn.takeError());
  int64_t B = c.batch();
  rt::HostTensor len = rt::HostTensor::zeros(rt::ElementType::I32, {B});
  for (int64_t bi = 0; bi < static_cast<int64_t>(c.lengths.size()); ++bi)
    len.setFromFloat(bi, static_cast<float>(c.lengths[bi]));
  auto out = (*fn)->call({len});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  const rt::HostTensor &vis = (*out)[0], &range = (*out)[1], &whole = (*out)[2];
  int64_t rowTiles = (c.tq + c.rowTile - 1) / c.rowTile;
  int64_t keyTiles = (c.tk + c.keyTile - 1) / c.keyTile;
  for (int64_t bi = 0; bi < B; ++bi) {
    for (int64_t i = 0; i < c.tq; ++i)
      for (int64_t j = 0; j < c.tk; ++j)
        ASSERT_EQ(vis.getAsFloat((bi * c.tq + i) * c.tk + j), c.visible(bi, i, j) ? 1.0f : 0.0f)
            << "b " << bi << " row " << i << " key " << j;
    for (int64_t rt = 0; rt < rowTiles; ++rt) {
      int64_t r0 = rt * c.rowTile, r1 = std::min(r0 + c.rowTile, c.tq);
      // The key tiles holding a key some row of the Q tile sees.
      int64_t first = keyTiles, last = -1;
      for (int64_t kt = 0; kt < keyTiles; ++kt) {
        bool any = false, all = true;
        for (int64_t i = r0; i < r1; ++i)
          for (int64_t j = kt * c.keyTile; j < (kt + 1) * c.keyTile; ++j) {
            bool v = j < c.tk && c.visible(bi, i, j);
            any = any || v;
            all = all && v;
          }
        if (any) {
          first = std::min(first, kt);
          last = kt;
        }
        EXPECT_EQ(whole.getAsFloat((bi * rowTiles + rt) * keyTiles + kt), all ? 1.0f : 0.0f)
            << "b " << bi << " row tile " << rt << " key tile " << kt;
      }
      int64_t begin = static_cast<int64_t>(range.getAsFloat((bi * rowTiles + rt) * 2));
      int64_t end = static_cast<int64_t>(range.getAsFloat((bi * rowTiles + rt) * 2 + 1));
      if (last < 0) {
        EXPECT_GE(begin, end) << "b " << bi << " row tile " << rt << ": no key, no tile";
      } else {
        // Exactly the tiles from the first to the last holding a visible key.
        EXPECT_EQ(begin, first) << "b " << bi << " row tile " << rt;
        EXPECT_EQ(end, last + 1) << "b " << bi << " row tile " << rt;
      }
    }
  }
}

TEST(FlashCoreKeyVisibility, MatchesTheRules) {
  using mlir::attn::CausalKind;
  std::mt19937 gen(12);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(gen() % n); };
  std::vector<VisCase> cases = {
      // Mistral: bottom-right causal, window to the left; decode row.
      {9, 23, CausalKind::bottom_right, 5, std::nullopt, CausalKind::bottom_right, {}, 4, 4},
      {1, 23, CausalKind::bottom_right, 5, std::nullopt, CausalKind::bottom_right, {0, 7, 23}, 4, 4},
      // Both sides, top-left, no causal; right side only.
      {17, 13, std::nullopt, 2, 3, CausalKind::top_left, {}, 4, 3},
      {17, 13, std::nullopt, std::nullopt, 3, CausalKind::bottom_right, {13, 2, -4, 40}, 4, 3},
      // Key lengths alone, out of range included.
      {6, 10, std::nullopt, std::nullopt, std::nullopt, CausalKind::bottom_right, {-1, 0, 4, 10, 99}, 4, 4},
  };
  for (int n = 0; n < 60; ++n) {
    VisCase c;
    c.tq = 1 + pick(14);
    c.tk = 1 + pick(20);
    int kind = static_cast<int>(pick(3));
    if (kind)
      c.causal = kind == 1 ? CausalKind::top_left : CausalKind::bottom_right;
    if (pick(4)) {
      if (pick(2))
        c.left = pick(8);
      if (pick(2))
        c.right = pick(8);
    }
    c.diagonal = c.causal ? *c.causal : pick(2) ? CausalKind::top_left : CausalKind::bottom_right;
    if (pick(2))
      for (int64_t bi = 0, nb = 1 + pick(3); bi < nb; ++bi)
        c.lengths.push_back(pick(c.tk + 6) - 2);
    c.rowTile = 1 + pick(5);
    c.keyTile = 1 + pick(6);
    cases.push_back(c);
  }
  for (const VisCase &c : cases) {
    checkVisibility(c);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

} // namespace
