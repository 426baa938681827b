//===- InitAttn.cpp - registration entry points for embedders -------------===//
#include "attn/InitAttn.h"
#include "attn/GPU/PtxDialect.h"
#include "attn/Transforms/TilingInterfaceImpl.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::attn::registerAttnDialect(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
  // The PTX ops of the GPU kernel schedules (include/attn/GPU/PtxOps.td).
  registry.insert<ptx::PtxDialect>();
}

void mlir::attn::registerAttnLoweringDependencies(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // TilingInterface & co. on attn.sdpa / attn.sdpa_partial (upstream tiling
  // drivers and transform ops).
  registerTilingInterfaceExternalModels(registry);
  // gpu-module-to-binary translates the kernel module to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
}

void mlir::attn::registerAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnConversionPasses();
  registerAttnGPUPasses();
}

void mlir::attn::registerAllAttn(DialectRegistry &registry) {
  registerAttnDialect(registry);
  registerAttnLoweringDependencies(registry);
  registerAttnPasses();
  registerAttnPipelines();
}
