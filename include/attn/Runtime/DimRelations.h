//===- DimRelations.h - the run-time check of dynamic-dim relations -*- C++ -*-===//
//
// The one check of the relations between a function's dynamic input dims,
// as recorded in an AOT kernel (attn_aot_kernel::dim_links and
// ::class_divisors, attn-c/Aot.h). libattn_aot runs it before every call;
// attn-aot runs the same code on sampled shapes to prove that what it
// records is what the attn verifiers require (lib/Runtime/ShapeRelations.cpp).
// Plain C++: libattn_aot links neither MLIR nor LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_DIMRELATIONS_H
#define ATTN_RUNTIME_DIMRELATIONS_H

#include <cstdint>
#include <functional>
#include <string>

namespace attn::aot {

/// Fields of one dim_links entry: dim `dim` of input `input` belongs to
/// relation class `cls` and must equal `coef` * unit(cls); unit(cls) must
/// be a multiple of `multiple` (the same in every entry of a class).
enum DimLinkField { LinkInput, LinkDim, LinkClass, LinkMultiple, LinkCoef, LinkFields };

/// Fields of one class_divisors entry: unit(cls) must be a multiple of
/// unit(divisor) (e.g. query heads of key/value heads).
enum DivisorField { DivisorClass, DivisorOf, DivisorFields };

/// "" when the input dims (`size(input, dim)`) satisfy every relation;
/// otherwise one line saying which dims and what the function needs.
std::string checkDimRelations(const int64_t *links, int64_t numLinks,
                              const int64_t *divisors, int64_t numDivisors,
                              const std::function<int64_t(int64_t, int64_t)> &size);

} // namespace attn::aot

#endif // ATTN_RUNTIME_DIMRELATIONS_H
