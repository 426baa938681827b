//===- TestMicrokernels.cpp - one microkernel per function, for lit ------===//
//
// test-attn-microkernels: gives each body-less func.func marked
// `attn.test_microkernel = "<kernel>"` a body that runs that microkernel of
// the fused CPU kernel (lib/Conversion/AttnToLoops/Microkernels.h) on its
// memref arguments, so that each microkernel has a lit test of its own:
// the structure it emits after this pass, and its values after lowering it
// and running it with mlir-runner (test/Microkernels/). Upstream's model is
// mlir/test/lib/Dialect/Vector/TestVectorTransforms.cpp.
//
// Kernels (w = the width of the vectors, from the argument shapes):
//   "transpose-block" (src: memref<w x w x f32>, dst: memref<w x w x f32>):
//       dst = srcᵀ through transposeBlock (w·log2 w shuffles);
//   "transpose-block-avx2": the same for a target with AVX2 (at w = 8,
//       x86vector's AVX2 transpose);
//   "fold-slots-add", "fold-slots-max" (slots: memref<w x w x f32>,
//       out: memref<w x f32>): out[i] = Σ_j / max_j slots[i][j] through
//       foldSlots (a tree of w - 1 combineHalves steps and a last shuffle).
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"

#include "Conversion/AttnToLoops/Microkernels.h"
#include "Conversion/FlashCore/FlashCore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn::flash;
using namespace mlir::attn::loops;

namespace {

constexpr llvm::StringLiteral kAttr = "attn.test_microkernel";

/// memref<w x w x f32> with w a power of two, or 0.
int64_t squareWidth(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || m.getRank() != 2 || !m.hasStaticShape() || !m.getElementType().isF32() ||
      m.getDimSize(0) != m.getDimSize(1) || !llvm::isPowerOf2_64(m.getDimSize(0)))
    return 0;
  return m.getDimSize(0);
}

struct TestMicrokernelsPass
    : PassWrapper<TestMicrokernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMicrokernelsPass)

  StringRef getArgument() const final { return "test-attn-microkernels"; }
  StringRef getDescription() const final {
    return "Fill functions marked attn.test_microkernel with that microkernel of the "
           "fused CPU kernel (for lit tests)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    // LLVM: the 8-lane transpose's vblendps are llvm.inline_asm.
    registry.insert<arith::ArithDialect, memref::MemRefDialect, vector::VectorDialect,
                    LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      auto kernel = fn->getAttrOfType<StringAttr>(kAttr);
      if (!kernel)
        return;
      if (failed(fill(fn, kernel.getValue())))
        signalPassFailure();
    });
  }

  LogicalResult fill(func::FuncOp fn, StringRef kernel) {
    if (!fn.isExternal())
      return fn.emitError("attn.test_microkernel: the function must have no body");
    FunctionType type = fn.getFunctionType();
    int64_t w = type.getNumInputs() == 2 ? squareWidth(type.getInput(0)) : 0;
    bool fold = kernel == "fold-slots-add" || kernel == "fold-slots-max";
    Type second = type.getNumInputs() == 2 ? type.getInput(1) : Type();
    bool shapesOk =
        w > 1 && type.getNumResults() == 0 &&
        (fold ? second == MemRefType::get({w}, Float32Type::get(fn.getContext()))
              : second == type.getInput(0));
    bool avx2 = kernel == "transpose-block-avx2";
    if (kernel != "transpose-block" && !avx2 && !fold)
      return fn.emitError("attn.test_microkernel: unknown kernel '")
             << kernel << "' (transpose-block, transpose-block-avx2, fold-slots-add, "
             << "fold-slots-max)";
    if (!shapesOk)
      return fn.emitError("attn.test_microkernel '")
             << kernel << "': expected (memref<WxWxf32>, "
             << (fold ? "memref<Wxf32>" : "memref<WxWxf32>")
             << ") -> () with W a power of two above 1";
    fn->removeAttr(kAttr);
    Block *entry = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    KernelBuilder e{b, fn.getLoc(), w};
    Value src = entry->getArgument(0), dst = entry->getArgument(1);
    auto row = [&](int64_t i) { return e.vload(src, {e.idx(i), e.idx(0)}); };
    if (fold) {
      SmallVector<Value> slots;
      for (int64_t i = 0; i < w; ++i)
        slots.push_back(row(i));
      bool add = kernel == "fold-slots-add";
      Value folded = foldSlots(e, slots, [&](Value x, Value y) {
        return add ? e.fadd(x, y) : e.fmaxFast(x, y);
      });
      e.vstore(folded, dst, {e.idx(0)});
    } else {
      transposeBlock(
          e, row, [&](int64_t x, Value v) { e.vstore(v, dst, {e.idx(x), e.idx(0)}); }, avx2);
    }
    func::ReturnOp::create(b, fn.getLoc());
    return success();
  }
};

} // namespace

namespace mlir::attn::test {
void registerTestMicrokernelsPass() { PassRegistration<TestMicrokernelsPass>(); }
} // namespace mlir::attn::test
