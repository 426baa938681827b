//===- SdpaGradToLinalg.h - the backward of sdpa to linalg ------*- C++ -*-===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOLINALG_SDPAGRADTOLINALG_H
#define ATTN_LIB_CONVERSION_ATTNTOLINALG_SDPAGRADTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
/// attn.sdpa_grad to the primitive ops of its masked scores (scores,
/// scale, softcap, mask; lowered in turn) and linalg for the rest: the
/// [B,H,Tq,Tk] probabilities and their gradient materialised, in f32.
void populateSdpaGradToLinalgPatterns(RewritePatternSet &patterns);
} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOLINALG_SDPAGRADTOLINALG_H
