//===- Passes.h - GPU kernel-schedule passes --------------------*- C++ -*-===//
//
// Passes on a kernel schedule written as scf.forall loops mapped to
// #gpu.block / #gpu.thread (what convert-attn-to-gpu produces, but nothing
// here depends on the attn dialect): run it on the CPU, or map it to
// gpu.launch with barriers and device buffers.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_GPU_PASSES_H
#define ATTN_GPU_PASSES_H

// Only the pass declarations: the dialects the passes depend on are included
// by the files that define them, so that a file registering or scheduling the
// passes does not parse GPU, NVVM and LLVM (bench/NOTES.md, "Build time").
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/GPU/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_GPU_PASSES_H
