//===- PagesToLinalg.h - paged KV caches to linalg --------------*- C++ -*-===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLINALG_PAGESTOLINALG_H
#define ATTN_LIB_CONVERSION_ATTNTOLINALG_PAGESTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
/// attn.gather_pages to one linalg.generic that reads the block table and
/// the cache with tensor.extract.
void populatePagesToLinalgPatterns(RewritePatternSet &patterns);
} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOLINALG_PAGESTOLINALG_H
