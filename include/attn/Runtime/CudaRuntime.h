//===- CudaRuntime.h - the mgpu* runtime over the CUDA driver ----*- C++ -*-===//
//
// The functions MLIR's gpu-to-llvm lowering calls (mgpuModuleLoad,
// mgpuLaunchKernel, mgpuMemAlloc, mgpuMemcpy, streams, events), implemented
// over the CUDA driver API loaded with dlopen("libcuda.so.1") at first use:
// nothing here needs CUDA to build or link.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_CUDARUNTIME_H
#define ATTN_RUNTIME_CUDARUNTIME_H

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace attn::runtime {

/// Empty when a CUDA device is usable; otherwise one line saying why (no
/// libcuda.so.1, cuInit failed, no device, ...).
std::string cudaUnavailableReason();

/// "sm_90" for the first device; empty without a device.
std::string cudaDeviceChip();
/// The first device's name; empty without a device.
std::string cudaDeviceName();

/// The first error an mgpu* call recorded since the last take (they return
/// void to the compiled code); empty if none.
std::string takeCudaError();

/// Milliseconds the kernels launched by this thread ran since the last take
/// (CUDA events around each launch).
double takeGpuKernelMs();

/// Copies `bytes` between any two addresses the driver knows (host or
/// device, unified addressing) and waits; empty on success, else why.
std::string cudaCopySync(void *dst, const void *src, size_t bytes);

/// Frees a device buffer (cuMemFree); empty on success, else why.
std::string cudaFree(void *ptr);

/// Name → address of every mgpu* entry point, for the JIT's symbol table.
std::vector<std::pair<const char *, void *>> cudaRuntimeSymbols();

} // namespace attn::runtime

#endif // ATTN_RUNTIME_CUDARUNTIME_H
