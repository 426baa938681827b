//===- PtxDialect.h - the attn_ptx dialect -------------------*- C++ -*-===//
//
// PTX instructions with declared memory effects (PtxOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_GPU_PTXDIALECT_H
#define ATTN_GPU_PTXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/GPU/PtxDialect.h.inc"

#define GET_OP_CLASSES
#include "attn/GPU/PtxOps.h.inc"

#endif // ATTN_GPU_PTXDIALECT_H
