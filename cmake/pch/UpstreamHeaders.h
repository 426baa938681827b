//===- UpstreamHeaders.h - the precompiled header (ATTN_PCH) ---*- C++ -*-===//
//
// The upstream MLIR headers that most of our C++ files include, compiled once
// per build and loaded by every MLIR target (cmake/AttnPch.cmake). Upstream
// headers only: they come from the installed LLVM and never change, so
// editing one of ours never rebuilds this, and each of our files still
// includes what it uses (a build with -DATTN_PCH=OFF compiles it all).
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
