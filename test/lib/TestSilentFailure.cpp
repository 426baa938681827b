//===- TestSilentFailure.cpp - a pass that fails without a diagnostic -----===//
//
// test-attn-fail-silently: signals failure, without emitting a diagnostic,
// when the module holds a func.func marked `attn.test_fail_silently`; does
// nothing otherwise. The robustness harness (test/Robustness/every_pass.py,
// test/lib/EveryPass) must report such a run as "failed without a
// diagnostic", the one kind of failure a user cannot act on; this pass is
// how its lit tests make one on purpose. Upstream's model is
// mlir/test/lib/Pass/TestPassManager.cpp's test-pass-failure.
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct TestSilentFailurePass
    : PassWrapper<TestSilentFailurePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestSilentFailurePass)

  StringRef getArgument() const final { return "test-attn-fail-silently"; }
  StringRef getDescription() const final {
    return "Fail without a diagnostic where a func.func is marked "
           "attn.test_fail_silently (for the robustness harness's tests)";
  }

  void runOnOperation() override {
    bool marked = false;
    getOperation().walk([&](func::FuncOp fn) {
      marked |= fn->hasAttr("attn.test_fail_silently");
    });
    if (marked)
      signalPassFailure();
  }
};

} // namespace

namespace mlir::attn::test {
void registerTestSilentFailurePass() { PassRegistration<TestSilentFailurePass>(); }
} // namespace mlir::attn::test
