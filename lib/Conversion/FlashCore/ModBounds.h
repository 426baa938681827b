//===- ModBounds.h - a mask function bounded over a tile --------*- C++ -*-===//
//
// Block sparsity without a block mask: the mask function's body evaluated
// on intervals instead of values, once per (Q tile, K/V tile), tells
// whether the tile keeps no key (never visited), every key (the function
// is not evaluated per element) or some (evaluated per element).
//
// Each integer value gets run-time bounds [lo, hi]; each i1 a pair
// (always, possibly). Positions are the tile's ranges; constants are
// points; addi/subi, muli and floordivsi/divsi by a constant, minsi/maxsi,
// casts, select, cmpi with a signed or equality predicate, andi/ori and
// negation follow interval arithmetic (an i1 is the pair, never a signed
// interval: two i1 compare only for equality, extsi of an i1 is 0 or -1);
// a read of an integer capture of any rank is bounded by the min and max
// of the capture over the box of its indices' ranges (scanned when the
// box holds at most `scanLimit` elements, else unbounded): document ids
// `[T]` or `[B, T]`, prefix lengths, a BlockMask's block states
// `[B, H, Q blocks, K/V blocks]`. An integer nothing bounds (remainders,
// an scf.if's results, a float cast to an integer) has no bounds, nor has
// what is computed from it; an i1 nothing bounds (a float compare, a
// compare of such an integer) is unknown, (false, true), so
// `x & unknown` is still never kept where x is never kept. A function
// whose result is unbounded or unknown is evaluated on every element of
// every tile.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_FLASHCORE_MODBOUNDS_H
#define ATTN_LIB_CONVERSION_FLASHCORE_MODBOUNDS_H

#include "FlashCore.h"

#include <algorithm>
#include <optional>

namespace mlir::attn::flash {

/// Inclusive run-time bounds of an index.
struct IndexRange {
  Value lo, hi;
};

/// What a mask function says about every position of a block (i1 values).
struct MaskVerdict {
  Value anyKept; ///< false: no key of the block is kept
  Value allKept; ///< true: every key of the block is kept
};

/// The scan limit every kernel bounds a tile of `rows` x `keys` positions
/// with: a capture's box of indices is scanned up to four times the longer
/// side (a 1-D id table over the tile's rows or keys always fits).
inline int64_t tileScanLimit(int64_t rows, int64_t keys) { return 4 * std::max(rows, keys); }

/// Emits the interval evaluation of mask function `body` at the builder's
/// point for batch row `batch` and the ranges of heads, queries and keys;
/// nullopt (and nothing emitted) when the result cannot be bounded.
std::optional<MaskVerdict> boundMaskFunction(KernelBuilder &fb, Region &body, Value batch,
                                             IndexRange heads, IndexRange queries,
                                             IndexRange keys, ValueRange captures,
                                             int64_t scanLimit);

/// Whether boundMaskFunction bounds `body` (with captures of the types of
/// `captures`, tensors): false means the kernel evaluates the function on
/// every score of every visited tile.
bool isBoundable(Region &body, ValueRange captures);

} // namespace mlir::attn::flash

#endif // ATTN_LIB_CONVERSION_FLASHCORE_MODBOUNDS_H
