//===- TensorCoreKernel.h - the mma.sync FlashAttention-2 schedule -*- C++ -*-===//
//
// f16/bf16 attn.sdpa (and f32 as TF32, when asked) with head dims 64 and 128
// as a FlashAttention-2 kernel schedule on tensor cores
// (TensorCoreKernel.cpp); convert-attn-to-gpu chooses it over the CUDA-core
// schedule where it applies.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_TENSORCOREKERNEL_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_TENSORCOREKERNEL_H

#include "Conversion/FlashCore/FlashCore.h"

#include <string>

namespace mlir::attn {

/// Whether the tensor-core kernel takes `p` (f32 operands only with `tf32`:
/// as TF32 through mma.sync m16n8k8); sets `why` when it does not.
bool tensorCoreKernelTakes(const flash::SdpaProblem &p, bool tf32, std::string &why);

/// The kernel schedule for `p` on buffers `s` at g's insertion point: a
/// forall over (B·H, ceil(Tq/64)) blocks of 128 threads that write s.out.
void buildTensorCoreSchedule(flash::KernelBuilder &g, const flash::SdpaProblem &p,
                             const flash::SdpaBuffers &s);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_TENSORCOREKERNEL_H
