//===- TestPasses.h - the test passes of test/lib ---------------*- C++ -*-===//
//
// Passes for lit tests only (upstream's mlir/test/lib model): attn-opt and
// attn-every-pass register them; the pass library embedders link does not
// hold them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_LIB_TESTPASSES_H
#define ATTN_TEST_LIB_TESTPASSES_H

namespace mlir::attn::test {

/// test-attn-microkernels (TestMicrokernels.cpp).
void registerTestMicrokernelsPass();
/// test-attn-fail-silently (TestSilentFailure.cpp).
void registerTestSilentFailurePass();

/// Every test pass above.
inline void registerTestPasses() {
  registerTestMicrokernelsPass();
  registerTestSilentFailurePass();
}

} // namespace mlir::attn::test

#endif // ATTN_TEST_LIB_TESTPASSES_H
