//===- Bands.h - masks that keep a band of key − query positions -*- C++ -*-===//
#ifndef ATTN_TRANSFORMS_RAISE_BANDS_H
#define ATTN_TRANSFORMS_RAISE_BANDS_H

#include "ElementTerm.h"

#include <optional>
#include <string>

namespace mlir::attn::raise {

/// keep ⇔ lo ≤ j − i ≤ hi for point dims `i` (queries) and `j` (keys);
/// a missing bound is unbounded.
struct Band {
  std::optional<int64_t> lo, hi;
};

/// The keys both bands keep.
Band intersect(const Band &a, const Band &b);
/// The keys `band` drops, when they are a band (`band` bounded on one side
/// only); nullopt otherwise, with `why` set.
std::optional<Band> complement(const Band &band, std::string &why);

/// The band an i1 term keeps, when it is a conjunction of comparisons of
/// `j − i` with constants (through index casts, i1 round trips through
/// wider integers, and negations); nullopt otherwise, with `why` set.
std::optional<Band> analyzeBand(const Term *cond, unsigned i, unsigned j,
                                std::string &why);

/// The band a constant mask tensor (a leaf) keeps, when it is one and
/// depends on the query and key positions only (point dims `queries` and
/// `keys`, of static sizes `tq` and `tk`): 0 kept and ≤ −1e30 dropped for
/// an additive one, true kept for i1. torch-mlir's causal buffer, a TOSA
/// constant after tosa-to-arith.
std::optional<Band> bandOfConstant(const Term *leaf, unsigned queries, unsigned keys,
                                   int64_t tq, int64_t tk, bool additive);

} // namespace mlir::attn::raise

#endif // ATTN_TRANSFORMS_RAISE_BANDS_H
