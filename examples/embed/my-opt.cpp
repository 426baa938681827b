//===- my-opt.cpp - a downstream mlir-opt that embeds attn ---------------===//
//
// Your compiler's driver, with the attn dialect, its passes and its
// pipelines registered next to the upstream dialects:
//   my-opt --attn-cpu-pipeline sdpa.mlir
//   my-opt --pass-pipeline='builtin.module(attn-fuse,attn-cpu-pipeline{tile-q=32})'
//
//===----------------------------------------------------------------------===//
#include "attn/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // Your own dialects would be inserted here too.
  mlir::attn::registerAttnDialect(registry);
  mlir::attn::registerAttnLoweringDependencies(registry);
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  mlir::registerCanonicalizerPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "my-opt: a compiler that embeds attn\n",
                        registry));
}
