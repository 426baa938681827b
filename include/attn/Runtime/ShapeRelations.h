//===- ShapeRelations.h - relations between dynamic input dims -*- C++ -*-===//
//
// What an AOT kernel checks between its dynamic input dims before each call,
// derived from the attn ops' own shape rules (their verifiers) and proved
// against them on sampled shapes, so that the check is the JIT's: see
// docs/aot.md#what-is-checked-before-the-compiled-code-runs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_SHAPERELATIONS_H
#define ATTN_RUNTIME_SHAPERELATIONS_H

#include "attn/Runtime/Jit.h"

#include <optional>
#include <string>
#include <vector>

namespace attn::runtime {

/// A dynamic input dim: (input, dim).
struct DimRef {
  int64_t input, dim;
};

/// The relations between dynamic dims: each dynamic dim belongs to one
/// class and is `coef` times the class's unit; a unit is a multiple of the
/// class's `multiple` and of the units of its `divisors`; each key-lengths
/// input is bounded by a dim or a constant.
struct ShapeRelations {
  struct Member {
    DimRef dim;
    int64_t coef = 1;
  };
  struct Class {
    std::vector<Member> members;
    int64_t multiple = 1;
    std::vector<size_t> divisors; ///< indices of classes
  };
  std::vector<Class> classes;
  struct KeyLengths {
    int64_t input;
    std::optional<DimRef> boundDim; ///< unset: the constant `bound`
    int64_t bound = 0;
  };
  std::vector<KeyLengths> keyLengths;

  /// attn_aot_kernel::dim_links and ::class_divisors (attn-c/Aot.h).
  std::vector<int64_t> dimLinks() const;
  std::vector<int64_t> classDivisors() const;
  /// "" when inputs of these shapes satisfy the relations, else why: the
  /// AOT runtime's own check (attn/Runtime/DimRelations.h) on this record.
  std::string check(llvm::ArrayRef<std::vector<int64_t>> shapes) const;
  /// The relations as the generated header lists them, one per line.
  std::vector<std::string> describe() const;
};

/// Derives the relations of `entry`'s dynamic input dims (`args` as the
/// signature declares them) from the attn verifiers: a shape they accept is
/// found by following what each failed dim check expected, then which sets
/// of dims can scale together, in which proportions, and with which
/// multiples; finally the relations are checked against the verifiers on
/// sampled shapes (every shape they accept must be accepted by the ops).
/// An error, naming the dims, when no complete relation set is found: a
/// kernel is never built to trust its caller.
llvm::Expected<ShapeRelations> deriveShapeRelations(mlir::ModuleOp module,
                                                    llvm::StringRef entry,
                                                    llvm::ArrayRef<TensorSpec> args);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_SHAPERELATIONS_H
