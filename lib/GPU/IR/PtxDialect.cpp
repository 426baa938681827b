//===- PtxDialect.cpp - the attn_ptx dialect ------------------------------===//
#include "attn/GPU/PtxDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn::ptx;

#include "attn/GPU/PtxDialect.cpp.inc"

void PtxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/GPU/PtxOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "attn/GPU/PtxOps.cpp.inc"
