//===- AttnDialect.cpp - the attn dialect ---------------------------------===//
#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/AttnDialect.cpp.inc"
#include "attn/Dialect/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/AttnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnOps.cpp.inc"
      >();
}
