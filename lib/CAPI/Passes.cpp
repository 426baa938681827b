//===- Passes.cpp - C API for the attn passes and pipelines ---------------===//
#include "attn-c/Passes.h"

#include "attn/InitAttn.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::attn;

// The generated pass creation/registration functions.
#include "attn/Conversion/Passes.capi.cpp.inc"
#include "attn/GPU/Passes.capi.cpp.inc"
#include "attn/Transforms/Passes.capi.cpp.inc"

void attnRegisterPasses(void) { registerAttnPasses(); }

void attnRegisterPipelines(void) { registerAttnPipelines(); }

void attnRegisterLoweringDependencies(MlirDialectRegistry registry) {
  registerAttnDialect(*unwrap(registry));
  registerAttnLoweringDependencies(*unwrap(registry));
}

AttnCpuPipelineOptions attnCpuPipelineOptionsGetDefault(void) {
  CpuPipelineOptions d;
  return AttnCpuPipelineOptions{d.tileQ, d.tileK, d.vectorWidth, d.threads,
                                d.lowerToLLVM};
}

void attnBuildCpuPipeline(MlirOpPassManager pm, AttnCpuPipelineOptions options) {
  CpuPipelineOptions o;
  o.tileQ = options.tileQ;
  o.tileK = options.tileK;
  o.vectorWidth = options.vectorWidth;
  o.threads = options.threads;
  o.lowerToLLVM = options.lowerToLLVM;
  buildCpuPipeline(*unwrap(pm), o);
}

MlirLogicalResult attnBuildCpuPipelineFromString(MlirOpPassManager pm, MlirStringRef options,
                                                 MlirStringCallback callback, void *userData) {
  CpuPipelineOptions o;
  std::string message, parser;
  llvm::raw_string_ostream os(parser);
  if (failed(o.parseFromString(unwrap(options), os))) {
    message = "attn-cpu-pipeline options '" + unwrap(options).str() + "' do not parse";
    llvm::StringRef why = llvm::StringRef(parser).trim();
    if (!why.empty())
      message += ": " + why.str();
  } else {
    message = checkAttnToLoopsOptions(o.loopOptions());
  }
  if (!message.empty()) {
    if (callback)
      callback(mlirStringRefCreate(message.data(), message.size()), userData);
    return mlirLogicalResultFailure();
  }
  buildCpuPipeline(*unwrap(pm), o);
  return mlirLogicalResultSuccess();
}

void attnBuildReferencePipeline(MlirOpPassManager pm, bool lowerToLLVM) {
  ReferencePipelineOptions o;
  o.lowerToLLVM = lowerToLLVM;
  buildReferencePipeline(*unwrap(pm), o);
}
