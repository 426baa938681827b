//===- ScheduleMapping.h - reading a kernel schedule's mappings -*- C++ -*-===//
#ifndef ATTN_LIB_GPU_SCHEDULEMAPPING_H
#define ATTN_LIB_GPU_SCHEDULEMAPPING_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {

/// Whether `op` is mapped to GPU threads (`#gpu.thread<...>`) or, with
/// threads = false, to blocks (`#gpu.block<...>`).
inline bool hasGpuMapping(scf::ForallOp op, bool threads) {
  std::optional<ArrayAttr> mapping = op.getMapping();
  if (!mapping || mapping->empty())
    return false;
  Attribute first = (*mapping)[0];
  return threads ? isa<gpu::GPUThreadMappingAttr>(first)
                 : isa<gpu::GPUBlockMappingAttr>(first);
}

} // namespace mlir::attn

#endif // ATTN_LIB_GPU_SCHEDULEMAPPING_H
