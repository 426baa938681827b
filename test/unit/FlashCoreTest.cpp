//===- FlashCoreTest.cpp - the shared FlashAttention core's arithmetic ----===//
//
// The one exp2 every fused kernel uses (FlashBuilder::exp2), on scalars and
// on vectors, JIT-compiled and run: against std::exp2 over the range the
// kernels feed it (x <= 0: scores minus the running max), and its rules for
// the special values: NaN in, NaN out; -inf and anything <= -127 give
// exactly 0.
//
//===----------------------------------------------------------------------===//
#include "Conversion/FlashCore/FlashCore.h"

#include "attn/Runtime/Jit.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::attn::flash;
namespace rt = ::attn::runtime;

namespace {

constexpr int64_t kN = 64;    // inputs per call
constexpr int64_t kWidth = 8; // vector lanes

/// func @exp2(x: tensor<64xf32>) -> (vector exp2(x), scalar exp2(x)).
OwningOpRef<ModuleOp> buildExp2Module(MLIRContext &ctx) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto t = RankedTensorType::get({kN}, b.getF32Type());
  auto fn = func::FuncOp::create(b, loc, "exp2", b.getFunctionType({t}, {t, t}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  FlashBuilder fb{b, loc, kWidth};
  auto mt = MemRefType::get({kN}, b.getF32Type());
  Value x = bufferization::ToBufferOp::create(b, loc, mt, entry->getArgument(0),
                                              /*read_only=*/true);
  Value vecOut = memref::AllocOp::create(b, loc, mt);
  Value scalarOut = memref::AllocOp::create(b, loc, mt);
  fb.loop(fb.idx(0), fb.idx(kN), kWidth,
          [&](Value i) { fb.vstore(fb.exp2(fb.vload(x, {i})), vecOut, {i}); });
  fb.loop(fb.idx(0), fb.idx(kN), 1,
          [&](Value i) { fb.store(fb.exp2(fb.load(x, {i})), scalarOut, {i}); });
  Value r0 = bufferization::ToTensorOp::create(b, loc, t, vecOut, true, true);
  Value r1 = bufferization::ToTensorOp::create(b, loc, t, scalarOut, true, true);
  func::ReturnOp::create(b, loc, ValueRange{r0, r1});
  return module;
}

class FlashCoreExp2 : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    rt::registerJitDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    module = buildExp2Module(*ctx);
    auto fn = rt::CompiledFunction::compile(*module, "exp2", rt::Pipeline::Reference);
    ASSERT_TRUE(bool(fn)) << llvm::toString(fn.takeError());
    compiled = std::move(*fn);
  }

  /// {vector results, scalar results} for 64 inputs.
  std::pair<std::vector<float>, std::vector<float>> run(const std::vector<float> &in) {
    rt::HostTensor x = rt::HostTensor::zeros(rt::DType::F32, {kN});
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

  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<rt::CompiledFunction> compiled;
};

TEST_F(FlashCoreExp2, MatchesStdExp2WhereTheKernelsUseIt) {
  // x in [-126, 0] (scores minus the running max) plus a little above 0.
  std::vector<float> in(kN);
  for (int64_t i = 0; i < kN; ++i)
    in[i] = -126.0f + 127.0f * static_cast<float>(i) / (kN - 1) + 0.37f * (i % 3);
  auto [vec, scalar] = run(in);
  ASSERT_EQ(vec.size(), size_t(kN));
  for (int64_t i = 0; i < kN; ++i) {
    double want = std::exp2(static_cast<double>(in[i]));
    EXPECT_NEAR(vec[i], want, 2e-7 * want) << "x = " << in[i];
    EXPECT_NEAR(scalar[i], want, 2e-7 * want) << "x = " << in[i];
    EXPECT_EQ(vec[i], scalar[i]) << "x = " << in[i]; // one rule, both forms
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

} // namespace
