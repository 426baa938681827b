//===- CudaRuntime.cpp - the mgpu* entry points over a dlopen'ed driver ---===//
//
// The host code that gpu-to-llvm produces calls mgpuModuleLoad, mgpuLaunch-
// Kernel, mgpuMemAlloc, ... (Debian ships no libmlir_cuda_runtime.so). They
// are implemented here over the CUDA driver API, loaded with
// dlopen("libcuda.so.1") on first use, so that everything builds, links and
// runs its tests on machines with no GPU and no CUDA toolkit. Errors inside
// an mgpu* call (which returns void to compiled code) are recorded and
// reported by takeCudaError() after the call; the first one wins.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/CudaRuntime.h"

#include <dlfcn.h>
#include <pthread.h>

// libattn_aot travels to machines with an older C library than this one
// (the lent GPU machine): glibc 2.34 moved dlopen & co. and pthread_once
// into libc under new versions; bind to the x86-64 originals, which every
// glibc since 2.2.5 has (newer ones keep them as compatibility symbols).
#if defined(__x86_64__) && defined(__GLIBC__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
#endif

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace {

// The driver API's types, as cuda.h declares them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
constexpr int kComputeCapabilityMajor = 75; // CU_DEVICE_ATTRIBUTE_...
constexpr int kComputeCapabilityMinor = 76;

struct Driver {
  void *handle = nullptr;
  std::string error; // why the driver is unusable, empty if usable
  CUcontext context = nullptr;
  CUdevice device = 0;

  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
};

template <typename F>
bool bind(Driver &d, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(d.handle, name));
  if (!fn && d.error.empty())
    d.error = std::string("libcuda.so.1 has no symbol ") + name;
  return fn != nullptr;
}

std::string resultString(Driver &d, CUresult r, const char *what) {
  const char *s = nullptr;
  if (d.cuGetErrorString)
    d.cuGetErrorString(r, &s);
  return std::string(what) + " failed: " + (s ? s : "CUDA error") + " (" +
         std::to_string(r) + ")";
}

Driver &driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    d.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      const char *why = dlerror();
      d.error = std::string("no CUDA driver: cannot load libcuda.so.1 (") +
                (why ? why : "not found") + ")";
      return;
    }
    bind(d, d.cuInit, "cuInit");
    bind(d, d.cuDeviceGetCount, "cuDeviceGetCount");
    bind(d, d.cuDeviceGet, "cuDeviceGet");
    bind(d, d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    bind(d, d.cuDeviceGetName, "cuDeviceGetName");
    bind(d, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(d, d.cuCtxSetCurrent, "cuCtxSetCurrent");
    bind(d, d.cuGetErrorString, "cuGetErrorString");
    bind(d, d.cuModuleLoadData, "cuModuleLoadData");
    bind(d, d.cuModuleUnload, "cuModuleUnload");
    bind(d, d.cuModuleGetFunction, "cuModuleGetFunction");
    bind(d, d.cuLaunchKernel, "cuLaunchKernel");
    bind(d, d.cuStreamCreate, "cuStreamCreate");
    bind(d, d.cuStreamDestroy, "cuStreamDestroy_v2");
    bind(d, d.cuStreamSynchronize, "cuStreamSynchronize");
    bind(d, d.cuStreamWaitEvent, "cuStreamWaitEvent");
    bind(d, d.cuEventCreate, "cuEventCreate");
    bind(d, d.cuEventDestroy, "cuEventDestroy_v2");
    bind(d, d.cuEventRecord, "cuEventRecord");
    bind(d, d.cuEventSynchronize, "cuEventSynchronize");
    bind(d, d.cuEventElapsedTime, "cuEventElapsedTime");
    bind(d, d.cuMemAlloc, "cuMemAlloc_v2");
    bind(d, d.cuMemFree, "cuMemFree_v2");
    bind(d, d.cuMemcpyAsync, "cuMemcpyAsync");
    bind(d, d.cuMemsetD32Async, "cuMemsetD32Async");
    bind(d, d.cuMemsetD16Async, "cuMemsetD16Async");
    if (!d.error.empty())
      return;
    if (CUresult r = d.cuInit(0)) {
      d.error = "no usable CUDA device: " + resultString(d, r, "cuInit");
      return;
    }
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count)) {
      d.error = resultString(d, r, "cuDeviceGetCount");
      return;
    }
    if (count == 0) {
      d.error = "no CUDA device: the driver reports 0 devices";
      return;
    }
    if (CUresult r = d.cuDeviceGet(&d.device, 0)) {
      d.error = resultString(d, r, "cuDeviceGet");
      return;
    }
    if (CUresult r = d.cuDevicePrimaryCtxRetain(&d.context, d.device))
      d.error = resultString(d, r, "cuDevicePrimaryCtxRetain");
  });
  return d;
}

std::mutex errorMutex;
std::string firstError;

void record(const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (firstError.empty())
    firstError = message;
}

/// The driver with this thread's context current, or null after recording
/// why not.
Driver *ready() {
  Driver &d = driver();
  if (!d.error.empty()) {
    record(d.error);
    return nullptr;
  }
  if (CUresult r = d.cuCtxSetCurrent(d.context)) {
    record(resultString(d, r, "cuCtxSetCurrent"));
    return nullptr;
  }
  return &d;
}

bool check(Driver &d, CUresult r, const char *what) {
  if (r == 0)
    return true;
  record(resultString(d, r, what));
  return false;
}

thread_local double kernelMs = 0;

} // namespace

namespace attn::runtime {

std::string cudaUnavailableReason() { return driver().error; }

std::string cudaDeviceChip() {
  Driver &d = driver();
  if (!d.error.empty())
    return "";
  int major = 0, minor = 0;
  d.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, d.device);
  d.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, d.device);
  return "sm_" + std::to_string(major * 10 + minor);
}

std::string cudaDeviceName() {
  Driver &d = driver();
  if (!d.error.empty())
    return "";
  char name[256] = {0};
  d.cuDeviceGetName(name, sizeof(name) - 1, d.device);
  return name;
}

std::string takeCudaError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  std::string e = std::move(firstError);
  firstError.clear();
  return e;
}

double takeGpuKernelMs() {
  double ms = kernelMs;
  kernelMs = 0;
  return ms;
}

} // namespace attn::runtime

//===----------------------------------------------------------------------===//
// The entry points (signatures as gpu-to-llvm and the gpu.binary
// translation of MLIR 22 call them).
//===----------------------------------------------------------------------===//

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  Driver *d = ready();
  CUmodule m = nullptr;
  if (d)
    check(*d, d->cuModuleLoadData(&m, data), "cuModuleLoadData");
  return m;
}

void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  // PTX text: the driver compiles it for the device.
  return mgpuModuleLoad(data, 0);
}

void mgpuModuleUnload(void *module) {
  Driver *d = ready();
  if (d && module)
    check(*d, d->cuModuleUnload(module), "cuModuleUnload");
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Driver *d = ready();
  CUfunction f = nullptr;
  if (d && module)
    check(*d, d->cuModuleGetFunction(&f, module, name), "cuModuleGetFunction");
  return f;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  Driver *d = ready();
  if (!d)
    return;
  if (!function) {
    record("mgpuLaunchKernel: the kernel was not loaded");
    return;
  }
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return; // an empty problem (e.g. Tq = 0): nothing to launch
  CUevent start = nullptr, stop = nullptr;
  bool timed = d->cuEventCreate(&start, 0) == 0 && d->cuEventCreate(&stop, 0) == 0;
  if (timed)
    d->cuEventRecord(start, stream);
  if (!check(*d,
             d->cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                               blockZ, smem, stream, params, extra),
             "cuLaunchKernel"))
    timed = false;
  if (timed) {
    d->cuEventRecord(stop, stream);
    float ms = 0;
    if (check(*d, d->cuEventSynchronize(stop), "kernel execution") &&
        d->cuEventElapsedTime(&ms, start, stop) == 0)
      kernelMs += ms;
  }
  if (start)
    d->cuEventDestroy(start);
  if (stop)
    d->cuEventDestroy(stop);
}

void *mgpuStreamCreate() {
  Driver *d = ready();
  CUstream s = nullptr;
  if (d)
    check(*d, d->cuStreamCreate(&s, /*CU_STREAM_NON_BLOCKING=*/1), "cuStreamCreate");
  return s;
}

void mgpuStreamDestroy(void *stream) {
  Driver *d = ready();
  if (d && stream)
    check(*d, d->cuStreamDestroy(stream), "cuStreamDestroy");
}

void mgpuStreamSynchronize(void *stream) {
  Driver *d = ready();
  if (d)
    check(*d, d->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  Driver *d = ready();
  if (d)
    check(*d, d->cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  Driver *d = ready();
  CUevent e = nullptr;
  if (d)
    check(*d, d->cuEventCreate(&e, /*CU_EVENT_DISABLE_TIMING=*/2), "cuEventCreate");
  return e;
}

void mgpuEventDestroy(void *event) {
  Driver *d = ready();
  if (d && event)
    check(*d, d->cuEventDestroy(event), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  Driver *d = ready();
  if (d)
    check(*d, d->cuEventSynchronize(event), "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  Driver *d = ready();
  if (d)
    check(*d, d->cuEventRecord(event, stream), "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/, bool isHostShared) {
  Driver *d = ready();
  if (!d)
    return nullptr;
  if (isHostShared) {
    record("mgpuMemAlloc: host-shared allocations are not supported");
    return nullptr;
  }
  CUdeviceptr p = 0;
  if (sizeBytes == 0)
    return nullptr;
  check(*d, d->cuMemAlloc(&p, sizeBytes), "cuMemAlloc");
  return reinterpret_cast<void *>(p);
}

void mgpuMemFree(void *ptr, void * /*stream*/) {
  Driver *d = ready();
  if (d && ptr)
    check(*d, d->cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  Driver *d = ready();
  if (d && sizeBytes)
    check(*d,
          d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), sizeBytes, stream),
          "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  Driver *d = ready();
  if (d && count)
    check(*d,
          d->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count, stream),
          "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  Driver *d = ready();
  if (d && count)
    check(*d,
          d->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count, stream),
          "cuMemsetD16Async");
}

} // extern "C"

namespace attn::runtime {

std::string cudaCopySync(void *dst, const void *src, size_t bytes) {
  takeCudaError();
  mgpuMemcpy(dst, const_cast<void *>(src), bytes, nullptr);
  mgpuStreamSynchronize(nullptr);
  return takeCudaError();
}

std::string cudaFree(void *ptr) {
  takeCudaError();
  mgpuMemFree(ptr, nullptr);
  return takeCudaError();
}

std::vector<std::pair<const char *, void *>> cudaRuntimeSymbols() {
  return {
      {"mgpuModuleLoad", reinterpret_cast<void *>(&mgpuModuleLoad)},
      {"mgpuModuleLoadJIT", reinterpret_cast<void *>(&mgpuModuleLoadJIT)},
      {"mgpuModuleUnload", reinterpret_cast<void *>(&mgpuModuleUnload)},
      {"mgpuModuleGetFunction", reinterpret_cast<void *>(&mgpuModuleGetFunction)},
      {"mgpuLaunchKernel", reinterpret_cast<void *>(&mgpuLaunchKernel)},
      {"mgpuStreamCreate", reinterpret_cast<void *>(&mgpuStreamCreate)},
      {"mgpuStreamDestroy", reinterpret_cast<void *>(&mgpuStreamDestroy)},
      {"mgpuStreamSynchronize", reinterpret_cast<void *>(&mgpuStreamSynchronize)},
      {"mgpuStreamWaitEvent", reinterpret_cast<void *>(&mgpuStreamWaitEvent)},
      {"mgpuEventCreate", reinterpret_cast<void *>(&mgpuEventCreate)},
      {"mgpuEventDestroy", reinterpret_cast<void *>(&mgpuEventDestroy)},
      {"mgpuEventSynchronize", reinterpret_cast<void *>(&mgpuEventSynchronize)},
      {"mgpuEventRecord", reinterpret_cast<void *>(&mgpuEventRecord)},
      {"mgpuMemAlloc", reinterpret_cast<void *>(&mgpuMemAlloc)},
      {"mgpuMemFree", reinterpret_cast<void *>(&mgpuMemFree)},
      {"mgpuMemcpy", reinterpret_cast<void *>(&mgpuMemcpy)},
      {"mgpuMemset32", reinterpret_cast<void *>(&mgpuMemset32)},
      {"mgpuMemset16", reinterpret_cast<void *>(&mgpuMemset16)},
  };
}

} // namespace attn::runtime
