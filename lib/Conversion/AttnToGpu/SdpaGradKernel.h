//===- SdpaGradKernel.h - attn.sdpa_grad as GPU kernel schedules -*- C++ -*-===//
//
// The attention backward on CUDA cores (SdpaGradKernel.cpp): two kernel
// schedules, one for dK and dV, one for dQ, deterministic (every gradient
// element is summed by one thread in a fixed order).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_SDPAGRADKERNEL_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_SDPAGRADKERNEL_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::attn {

/// Replaces `op` by the two kernel schedules on buffers (threads per block
/// from `tileQ`, rows or keys per step from `tileK`, both reduced until the
/// workgroup buffers fit 48 KiB); fails with `reason`, the IR untouched,
/// when the kernels cannot take it (dropout, the mask's gradient, paged or
/// int8 K/V, f64, dynamic head counts or dims).
LogicalResult rewriteSdpaGradToGpuSchedule(RewriterBase &rewriter, SdpaGradOp op,
                                           int64_t tileQ, int64_t tileK, std::string &reason);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_SDPAGRADKERNEL_H
