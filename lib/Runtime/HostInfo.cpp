//===- HostInfo.cpp - what the runtime asks of this machine ---------------===//
//
// Worker threads, the CPU's vector width and bf16 path (CpuTarget), and
// the process's memory: the facts the JIT, attn-run and the API take from
// the host, without MLIR.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/Jit.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace attn::runtime {

int64_t workerThreads(int64_t requested) {
  if (requested > 0)
    return requested;
  if (const char *env = std::getenv("OMP_NUM_THREADS")) {
    int64_t n;
    if (!llvm::StringRef(env).split(',').first.trim().getAsInteger(10, n) && n > 0)
      return n;
  }
  // Not omp_get_max_threads(): a library loaded after ours can bind its
  // omp_* calls to the OpenMP runtime the JIT loaded and set its thread
  // count (PyTorch sets 1 on a host with one physical core).
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

int64_t hostVectorWidth() { return hostCpuTarget().vectorWidth; }

CpuTarget cpuTargetOf(llvm::StringRef cpu, llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  CpuTarget t;
  bool avx512 = hasFeature("avx512f");
  t.vectorWidth = avx512 ? 16 : 8;
  t.hasBf16Dot = avx512 && hasFeature("avx512bf16");
  t.prefersBf16Dot = t.hasBf16Dot && cpu.starts_with("znver");
  t.hasAvx2 = hasFeature("avx2");
  t.hasAmx = avx512 && hasFeature("amx-bf16") && hasFeature("amx-tile");
  t.hasAmxFp16 = t.hasAmx && hasFeature("amx-fp16");
  return t;
}

/// Asks Linux once per process for the AMX tile data state, which a
/// process must request before its first tile instruction (else SIGILL):
/// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). False where the
/// kernel refuses (older than 5.16, or a seccomp filter).
static bool requestAmxState() {
#if defined(__linux__) && defined(__x86_64__)
  static const bool granted = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

CpuTarget hostCpuTarget() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  CpuTarget t = cpuTargetOf(llvm::sys::getHostCPUName(), [&](llvm::StringRef f) {
    auto it = features.find(f);
    return it != features.end() && it->second;
  });
  t.amxPermitted = t.hasAmx && requestAmxState();
  t.amxRefused = t.hasAmx && !t.amxPermitted;
  return t;
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double v = bytes / 1024.0;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

/// A "Key:   N kB" line of a /proc file, in bytes.
static std::optional<uint64_t> procKb(const char *path, const char *key) {
  std::optional<uint64_t> out;
  if (FILE *f = std::fopen(path, "r")) {
    char line[256];
    size_t n = std::strlen(key);
    while (std::fgets(line, sizeof(line), f))
      if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
        unsigned long long kb;
        if (std::sscanf(line + n + 1, " %llu", &kb) == 1)
          out = kb * 1024ull;
        break;
      }
    std::fclose(f);
  }
  return out;
}

double peakRssMiB() {
  std::optional<uint64_t> hwm = procKb("/proc/self/status", "VmHWM");
  return hwm ? *hwm / (1024.0 * 1024.0) : -1;
}

std::optional<uint64_t> availableMemoryBytes() {
  std::optional<uint64_t> avail = procKb("/proc/meminfo", "MemAvailable");
  struct rlimit lim;
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    uint64_t used = procKb("/proc/self/status", "VmSize").value_or(0);
    uint64_t left = lim.rlim_cur > used ? lim.rlim_cur - used : 0;
    avail = avail ? std::min(*avail, left) : left;
  }
  return avail;
}

} // namespace attn::runtime
