//===- Passes.h - GPU kernel-schedule passes --------------------*- C++ -*-===//
//
// Passes on a kernel schedule written as scf.forall loops mapped to
// #gpu.block / #gpu.thread (what convert-attn-to-gpu produces, but nothing
// here depends on the attn dialect): run it on the CPU, or map it to
// gpu.launch with barriers and device buffers.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_GPU_PASSES_H
#define ATTN_GPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/GPU/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_GPU_PASSES_H
