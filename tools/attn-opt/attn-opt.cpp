//===- attn-opt.cpp - mlir-opt with the attn dialect and passes ----------===//
#include "TestPasses.h"
#include "attn/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::DialectRegistry registry;
  // The attn dialect, every upstream dialect and extension, the attn passes
  // and pipelines: what an embedding compiler registers (attn/InitAttn.h).
  mlir::attn::registerAllAttn(registry);
  // Test passes (test/lib), for lit tests of single kernel pieces.
  mlir::attn::test::registerTestPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
}
