//===- AttnOpsTest.cpp - build every attn op from C++ ---------------------===//
//
// Builds each op through its result-inferring builder, checks the inferred
// type against shapes worked out by hand from the op's definition, checks
// that wrong ops fail verification with the expected message, and checks
// reified result dims.
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

class AttnOpsTest : public ::testing::Test {
protected:
  AttnOpsTest() : b(&ctx), loc(UnknownLoc::get(&ctx)) {
    ctx.loadDialect<AttnDialect, func::FuncDialect, tensor::TensorDialect,
                    arith::ArithDialect>();
    module = ModuleOp::create(loc);
  }

  RankedTensorType t(ArrayRef<int64_t> shape, Type elt = {}) {
    return RankedTensorType::get(shape, elt ? elt : b.getF32Type());
  }

  /// A fresh function whose arguments have `types`; the builder is left at
  /// the start of its body.
  SmallVector<Value> args(ArrayRef<Type> types) {
    b.setInsertionPointToEnd(module->getBody());
    auto fn = func::FuncOp::create(b, loc, "f" + std::to_string(counter++),
                                   b.getFunctionType(types, {}));
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    return SmallVector<Value>(body->getArguments());
  }

  /// The verifier's first error for `op`, or "" when it verifies.
  std::string verifyError(Operation *op) {
    std::string msg;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (msg.empty())
        msg = d.str();
      return success();
    });
    if (succeeded(verify(op)))
      return "";
    return msg.empty() ? "<failed without message>" : msg;
  }

  MLIRContext ctx;
  OpBuilder b;
  Location loc;
  OwningOpRef<ModuleOp> module;
  int counter = 0;
};

TEST_F(AttnOpsTest, ProjectInfersOutWidthInBothLayouts) {
  auto a = args({t({2, 10, 64}), t({32, 64}), t({32}), t({64, 32})});
  auto p = ProjectOp::create(b, loc, a[0], a[1], a[2]);
  EXPECT_EQ(p.getType(), t({2, 10, 32}));
  EXPECT_EQ(verifyError(p), "");
  auto q = ProjectOp::create(b, loc, a[0], a[3], Value(), WeightLayout::in_out);
  EXPECT_EQ(q.getType(), t({2, 10, 32}));
  EXPECT_EQ(verifyError(q), "");
  // An nn.Linear weight given as in_out does not match the input width.
  auto bad = ProjectOp::create(b, loc, a[0], a[1], Value(), WeightLayout::in_out);
  EXPECT_NE(verifyError(bad).find("operand 'weight' input width (dim 0) is 32, "
                                  "expected 64"),
            std::string::npos)
      << verifyError(bad);
}

TEST_F(AttnOpsTest, SplitAndMergeHeads) {
  auto a = args({t({2, 10, 64}), t({kDyn, kDyn, 64}), t({2, 10, 65})});
  auto s = SplitHeadsOp::create(b, loc, a[0], 8);
  EXPECT_EQ(s.getType(), t({2, 8, 10, 8}));
  EXPECT_EQ(verifyError(s), "");
  auto m = MergeHeadsOp::create(b, loc, s);
  EXPECT_EQ(m.getType(), t({2, 10, 64}));
  EXPECT_EQ(verifyError(m), "");
  auto d = SplitHeadsOp::create(b, loc, a[1], 4);
  EXPECT_EQ(d.getType(), t({kDyn, 4, kDyn, 16}));
  auto bad = SplitHeadsOp::create(b, loc, a[2], 8);
  EXPECT_NE(verifyError(bad).find("width (dim 2) 65 is not divisible by "
                                  "num_heads 8"),
            std::string::npos);
}

TEST_F(AttnOpsTest, ScoresAndWeightedSumWithGqa) {
  auto a = args({t({1, 4, 7, 16}), t({1, 2, 9, 16}), t({1, 2, 9, 32}),
                 t({1, 3, 9, 16})});
  auto s = ScoresOp::create(b, loc, a[0], a[1]);
  EXPECT_EQ(s.getType(), t({1, 4, 7, 9}));
  EXPECT_EQ(verifyError(s), "");
  auto o = WeightedSumOp::create(b, loc, s, a[2]);
  EXPECT_EQ(o.getType(), t({1, 4, 7, 32}));
  EXPECT_EQ(verifyError(o), "");
  auto bad = ScoresOp::create(b, loc, a[0], a[3]);
  EXPECT_NE(verifyError(bad).find("heads H = 4 is not a multiple of 'key' "
                                  "heads Hkv = 3"),
            std::string::npos);
}

TEST_F(AttnOpsTest, ElementwiseOpsKeepTheirInputType) {
  auto a = args({t({1, 2, 5, 5}, b.getF16Type()), t({1, 1, 5, 5}, b.getI1Type())});
  auto sc = ScaleOp::create(b, loc, a[0], b.getF32FloatAttr(0.5f));
  auto mk = MaskOp::create(b, loc, sc, a[1],
                           CausalKindAttr::get(&ctx, CausalKind::bottom_right));
  auto sm = SoftmaxOp::create(b, loc, mk, Value());
  auto dr = DropoutOp::create(b, loc, sm, Value(), b.getF32FloatAttr(0.1f),
                              b.getI64IntegerAttr(7));
  for (Operation *op : {sc.getOperation(), mk.getOperation(), sm.getOperation(),
                        dr.getOperation()}) {
    EXPECT_EQ(op->getResult(0).getType(), a[0].getType());
    EXPECT_EQ(verifyError(op), "");
  }
  auto badScale = ScaleOp::create(b, loc, a[0], b.getF32FloatAttr(0.0f));
  EXPECT_NE(verifyError(badScale).find("'scale' must be a positive finite"),
            std::string::npos);
  auto badRate = DropoutOp::create(b, loc, a[0], Value(), b.getF32FloatAttr(1.0f),
                                   b.getI64IntegerAttr(0));
  EXPECT_NE(verifyError(badRate).find("'rate' must be in [0, 1), got 1"),
            std::string::npos);
  // A run-time seed (tensor<i64>) replaces the seed attribute: both is an
  // error, a zero (default) attribute is no attribute.
  Value seed = args({RankedTensorType::get({}, b.getI64Type())})[0];
  auto runtime = DropoutOp::create(b, loc, sm, seed, b.getF32FloatAttr(0.1f),
                                   b.getI64IntegerAttr(0));
  EXPECT_EQ(verifyError(runtime), "");
  auto both = DropoutOp::create(b, loc, sm, seed, b.getF32FloatAttr(0.1f),
                                b.getI64IntegerAttr(7));
  EXPECT_NE(verifyError(both).find("takes its seed either as 'seed(...)' or as attribute "
                                   "'seed', not both"),
            std::string::npos)
      << verifyError(both);
}

TEST_F(AttnOpsTest, SdpaInfersShapeAndDefaultScale) {
  auto a = args({t({2, 4, 31, 64}), t({2, 4, 129, 64}), t({2, 4, 129, 48}),
                 t({2, 1, 1, 129}, b.getI1Type()), t({2, 4, 130, 48})});
  auto o = SdpaOp::create(b, loc, a[0], a[1], a[2], a[3]);
  EXPECT_EQ(o.getType(), t({2, 4, 31, 48}));
  EXPECT_EQ(verifyError(o), "");
  ASSERT_TRUE(o.getEffectiveScale().has_value());
  EXPECT_DOUBLE_EQ(*o.getEffectiveScale(), 0.125);
  o.setScaleAttr(b.getF32FloatAttr(0.5f));
  EXPECT_DOUBLE_EQ(*o.getEffectiveScale(), 0.5);

  auto bad = SdpaOp::create(b, loc, a[0], a[1], a[4]);
  EXPECT_NE(verifyError(bad).find("operand 'value' length (dim 2) is 130, "
                                  "expected 129"),
            std::string::npos)
      << verifyError(bad);
}

TEST_F(AttnOpsTest, SdpaRejectsWrongResultType) {
  auto a = args({t({1, 2, 8, 16}), t({1, 2, 8, 16})});
  auto o = SdpaOp::create(b, loc, t({1, 2, 8, 8}), a[0], a[1], a[1], Value(), Value(), Value(), Value(), Value(), ValueRange(),
                          nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  EXPECT_NE(verifyError(o).find("result dim 3 is 8, expected 16"),
            std::string::npos)
      << verifyError(o);
}

TEST_F(AttnOpsTest, MhaInfersOutputWidth) {
  // d_model 64, 8 query heads of 8, 4 key/value heads, kv width 48.
  auto a = args({t({2, 10, 64}), t({2, 12, 48}), t({64, 64}), t({32, 48}),
                 t({32, 48}), t({96, 64})});
  auto m = MhaOp::create(b, loc, a[0], a[1], a[2], a[3], a[4], a[5], 8, 4);
  EXPECT_EQ(m.getType(), t({2, 10, 96}));
  EXPECT_EQ(verifyError(m), "");
  auto bad = MhaOp::create(b, loc, a[0], a[1], a[2], a[3], a[4], a[5], 8, 8);
  EXPECT_NE(verifyError(bad).find("operand 'wk' output width (dim 0) is 32, "
                                  "expected 64"),
            std::string::npos)
      << verifyError(bad);
}

TEST_F(AttnOpsTest, ReifiesDynamicDims) {
  auto a = args({t({kDyn, 4, kDyn, 64}), t({kDyn, 4, kDyn, 64}),
                 t({kDyn, kDyn, 96})});
  auto o = SdpaOp::create(b, loc, a[0], a[1], a[1]);
  EXPECT_EQ(o.getType(), t({kDyn, 4, kDyn, 64}));
  ReifiedRankedShapedTypeDims dims;
  ASSERT_TRUE(succeeded(cast<ReifyRankedShapedTypeOpInterface>(*o)
                            .reifyResultShapes(b, dims)));
  ASSERT_EQ(dims.size(), 1u);
  ASSERT_EQ(dims[0].size(), 4u);
  EXPECT_TRUE(isa<Value>(dims[0][0]));
  EXPECT_EQ(getConstantIntValue(dims[0][1]), 4);
  EXPECT_TRUE(isa<Value>(dims[0][2]));
  EXPECT_EQ(getConstantIntValue(dims[0][3]), 64);

  // split_heads of a dynamic-batch [?, ?, 96] into 6 heads: D = 96 / 6.
  auto s = SplitHeadsOp::create(b, loc, a[2], 6);
  ReifiedRankedShapedTypeDims sd;
  ASSERT_TRUE(succeeded(cast<ReifyRankedShapedTypeOpInterface>(*s)
                            .reifyResultShapes(b, sd)));
  EXPECT_EQ(getConstantIntValue(sd[0][1]), 6);
  EXPECT_EQ(getConstantIntValue(sd[0][3]), 16);
  auto dim = cast<Value>(sd[0][2]).getDefiningOp<tensor::DimOp>();
  ASSERT_TRUE(dim);
  EXPECT_EQ(dim.getSource(), a[2]);
  EXPECT_EQ(dim.getConstantIndex(), 1);
}

// Every attn op infers its result type through InferTypeOpInterface, and the
// interface's answer is the verified type: re-inferring after the operand
// types change (what the JIT does when it specialises a function to its
// inputs) gives the new shape.
TEST_F(AttnOpsTest, EveryOpInfersThroughTheInterface) {
  auto a = args({t({1, 4, kDyn, 8}), t({1, 2, kDyn, 8}), t({1, 2, kDyn, 6})});
  auto s = ScoresOp::create(b, loc, a[0], a[1]);
  auto sc = ScaleOp::create(b, loc, s, b.getF32FloatAttr(0.5f));
  auto mk = MaskOp::create(b, loc, sc, Value(),
                           CausalKindAttr::get(&ctx, CausalKind::top_left));
  auto sm = SoftmaxOp::create(b, loc, mk, Value());
  auto ws = WeightedSumOp::create(b, loc, sm, a[2]);
  auto sd = SdpaOp::create(b, loc, a[0], a[1], a[2]);
  for (Operation *op : {s.getOperation(), sc.getOperation(), mk.getOperation(),
                        sm.getOperation(), ws.getOperation(), sd.getOperation()}) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    ASSERT_TRUE(infer) << op->getName().getStringRef().str();
    EXPECT_EQ(verifyError(op), "") << op->getName().getStringRef().str();
  }
  // Specialise the arguments to Tq = 5, Tk = 7 and re-infer in order.
  a[0].setType(t({1, 4, 5, 8}));
  a[1].setType(t({1, 2, 7, 8}));
  a[2].setType(t({1, 2, 7, 6}));
  for (Operation *op : {s.getOperation(), sc.getOperation(), mk.getOperation(),
                        sm.getOperation(), ws.getOperation(), sd.getOperation()}) {
    SmallVector<Type> types;
    ASSERT_TRUE(succeeded(cast<InferTypeOpInterface>(op).inferReturnTypes(
        &ctx, op->getLoc(), op->getOperands(), op->getRawDictionaryAttrs(),
        op->getPropertiesStorage(), op->getRegions(), types)));
    op->getResult(0).setType(types[0]);
  }
  EXPECT_EQ(s.getType(), t({1, 4, 5, 7}));
  EXPECT_EQ(sm.getType(), t({1, 4, 5, 7}));
  EXPECT_EQ(ws.getType(), t({1, 4, 5, 6}));
  EXPECT_EQ(sd.getType(), t({1, 4, 5, 6}));
  EXPECT_EQ(verifyError(sd), "");
}

// Inference fails with a diagnostic naming the operand when it is not a
// ranked tensor (the builders without a result type rely on it).
TEST_F(AttnOpsTest, InferenceRefusesUnrankedOperands) {
  auto a = args({UnrankedTensorType::get(b.getF32Type()), t({1, 2, 7, 8})});
  std::string msg;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  SmallVector<Type> types;
  EXPECT_TRUE(failed(SdpaOp::inferReturnTypes(&ctx, loc, ValueRange{a[0], a[1], a[1]},
                                              DictionaryAttr(), OpaqueProperties(nullptr),
                                              RegionRange(), types)));
  EXPECT_EQ(msg, "'attn.sdpa' op operand 'query' must be a ranked tensor, got "
                 "'tensor<*xf32>'");
}

// attn.dequantize infers its result's shape (InferShapedTypeOpInterface:
// the input's) but not its element type (its own, any float): the
// runtime's shape specialiser keeps the element type and takes the shape.
TEST_F(AttnOpsTest, DequantizeInfersOnlyTheShape) {
  auto a = args({t({kDyn, 2, kDyn, 64}, b.getI8Type()), t({kDyn, 2, kDyn})});
  auto dq = DequantizeOp::create(b, loc, t({kDyn, 2, kDyn, 64}, b.getBF16Type()), a[0], a[1]);
  EXPECT_EQ(verifyError(dq), "");
  EXPECT_FALSE(isa<InferTypeOpInterface>(dq.getOperation()));
  a[0].setType(t({3, 2, 17, 64}, b.getI8Type()));
  a[1].setType(t({3, 2, 17}));
  SmallVector<ShapedTypeComponents> shapes;
  Operation *op = dq.getOperation();
  ASSERT_TRUE(succeeded(cast<InferShapedTypeOpInterface>(op).inferReturnTypeComponents(
      &ctx, loc, ValueShapeRange(op->getOperands()), op->getRawDictionaryAttrs(),
      op->getPropertiesStorage(), op->getRegions(), shapes)));
  ASSERT_EQ(shapes.size(), 1u);
  ASSERT_TRUE(shapes[0].hasRank());
  EXPECT_EQ(SmallVector<int64_t>(shapes[0].getDims()), (SmallVector<int64_t>{3, 2, 17, 64}));
  EXPECT_FALSE(shapes[0].getElementType());
}

// The ops with score/mask functions (CapturingOpInterface) give their
// regions' capture arguments the captures' types again after the captures
// were retyped (what the runtime's shape specialiser does): the function
// then verifies with the new shapes.
TEST_F(AttnOpsTest, CaptureArgumentsFollowTheCaptures) {
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%q: tensor<1x2x8x4xf32>, %bias: tensor<?xf32>) -> tensor<1x2x8x4xf32> {
      %o = attn.sdpa %q, %q, %q captures(%bias) score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<?xf32>):
        %v = tensor.extract %t[%j] : tensor<?xf32>
        %n = arith.addf %s, %v : f32
        attn.yield %n : f32
      } : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<?xf32>)
          -> tensor<1x2x8x4xf32>
      return %o : tensor<1x2x8x4xf32>
    })mlir", &ctx);
  ASSERT_TRUE(m);
  auto fn = cast<func::FuncOp>(m->getBody()->front());
  SdpaOp sdpa = *fn.getOps<SdpaOp>().begin();
  fn.getArgument(1).setType(t({8}));
  EXPECT_NE(verifyError(sdpa), "");
  auto capturing = dyn_cast<CapturingOpInterface>(sdpa.getOperation());
  ASSERT_TRUE(capturing);
  EXPECT_EQ(capturing.getCaptures().size(), 1u);
  capturing.syncCaptureArgumentTypes();
  EXPECT_EQ(sdpa.getScoreMod().getArguments().back().getType(), t({8}));
  EXPECT_EQ(sdpa.getScoreMod().getNumArguments(), 6u);
  EXPECT_EQ(verifyError(sdpa), "");
}

// The ops that draw a dropout mask answer RuntimeSeedOpInterface with their
// seed operand (null without one); others do not implement it.
TEST_F(AttnOpsTest, RuntimeSeedInterface) {
  auto a = args({t({1, 2, 4, 8}), RankedTensorType::get({}, b.getI64Type())});
  auto sd = SdpaOp::create(b, loc, a[0], a[0], a[0]);
  auto seeded = dyn_cast<RuntimeSeedOpInterface>(sd.getOperation());
  ASSERT_TRUE(seeded);
  EXPECT_FALSE(seeded.getRuntimeSeed());
  sd.setDropoutRateAttr(b.getF32FloatAttr(0.5f));
  seeded.getRuntimeSeedMutable().assign(a[1]);
  EXPECT_EQ(seeded.getRuntimeSeed(), a[1]);
  EXPECT_EQ(verifyError(sd), "");
  // The seed attribute the run-time seed replaces, by name: the ODS
  // attribute each op has.
  EXPECT_EQ(seeded.getSeedAttributeName(), "dropout_seed");
  EXPECT_EQ(sd.getDropoutSeedAttrName().getValue(), seeded.getSeedAttributeName());
  auto dropout = DropoutOp::create(b, loc, a[0], Value(), b.getF32FloatAttr(0.5f),
                                   b.getI64IntegerAttr(7));
  auto droppedSeed = cast<RuntimeSeedOpInterface>(dropout.getOperation());
  EXPECT_EQ(droppedSeed.getSeedAttributeName(), "seed");
  EXPECT_TRUE(dropout->getAttr(droppedSeed.getSeedAttributeName()));
  auto s = ScoresOp::create(b, loc, a[0], a[0]);
  EXPECT_FALSE(isa<RuntimeSeedOpInterface>(s.getOperation()));
}
} // namespace
