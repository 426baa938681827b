//===- Inputs.h - attn-run's inputs: files bound to arguments ---*- C++ -*-===//
//
// Reading --input files (.npy by position or NAME=PATH, .npz members by
// name) and --expect files, each converted to the dtype its argument or
// result is exchanged as with a note per conversion (an error with
// --strict-inputs); and the --random-inputs tensors.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_ATTN_RUN_INPUTS_H
#define ATTN_TOOLS_ATTN_RUN_INPUTS_H

#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace attnrun {

namespace rt = ::attn::runtime;

/// The dtype an argument or result of this type is exchanged as; nullopt
/// when it has none (the compile step says why).
std::optional<rt::ElementType> dtypeOf(mlir::Type t);

/// The source names of the entry's arguments (`%q` -> "q"), from the
/// parser's record of the block argument definitions; empty strings where
/// unknown (bytecode input).
std::vector<std::string> argumentNames(mlir::func::FuncOp f,
                                       const mlir::AsmParserState *state);

/// Reads the --input files and binds them to the entry's arguments:
/// NAME=PATH and .npz members by name, then plain paths in order to the
/// arguments left. Returns the tensors in argument order (converted to
/// the arguments' dtypes), or, when only plain .npy paths are given, in the
/// order given (the caller checks the count). `strict`: --strict-inputs.
std::vector<rt::HostTensor> readInputs(mlir::func::FuncOp entry,
                                       llvm::ArrayRef<std::string> names,
                                       const std::string &fnName,
                                       llvm::ArrayRef<std::string> inputs, bool strict);

/// Reads the --expect files, one .npy per result, converted to the
/// results' dtypes.
std::vector<rt::HostTensor> readExpected(mlir::func::FuncOp entry,
                                         llvm::ArrayRef<std::string> expects, bool strict);

/// Uniform [-1, 1) tensors (bool: 3 in 4 true) for --random-inputs.
std::vector<rt::HostTensor> randomTensors(const rt::CompiledFunction &fn,
                                          mlir::ModuleOp module, llvm::StringRef entry,
                                          unsigned seed);
/// The same for arguments of the given dtypes and static shapes.
std::vector<rt::HostTensor> randomTensors(llvm::ArrayRef<rt::TensorSpec> specs,
                                          mlir::ModuleOp module, llvm::StringRef entry,
                                          unsigned seed);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTN_RUN_INPUTS_H
