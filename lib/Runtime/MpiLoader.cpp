//===- MpiLoader.cpp - libattn_mpi, loaded when a ring needs it -----------===//
//
// The runtime's side of attn/Runtime/Mpi.h: each call goes through the
// table libattn_mpi exports (attn/Runtime/MpiApi.h), and the library (with
// libmpi, hwloc and libevent behind it) is dlopen'ed on the first call that
// needs MPI, as the CUDA driver is (lib/AotRuntime/CudaRuntime.cpp). A
// process that never runs a ring never maps them.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/MpiApi.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace attn::mpi {

namespace {

/// Where to look for the library: beside the binary that holds this code
/// (bin/../lib for the tools, an installed tree), where the build put it,
/// then the loader's search path.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&candidates), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos) {
      std::string dir = self.substr(0, slash);
      out.push_back(dir + "/libattn_mpi.so.0");
      out.push_back(dir + "/../lib/libattn_mpi.so.0");
    }
  }
#ifdef ATTN_MPI_LIBRARY
  out.push_back(ATTN_MPI_LIBRARY);
#endif
  out.push_back("libattn_mpi.so.0");
  return out;
}

/// Set once, by load(), when the library was loaded.
std::atomic<const Api *> loadedApi{nullptr};

/// Loads the library on the first call; empty, or why it could not be.
const std::string &load() {
  static std::string why;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string &path : candidates()) {
      // Global: the ring's compiled code and libmpi's plugins resolve
      // symbols from it.
      void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!handle) {
        const char *e = dlerror();
        tried += std::string(tried.empty() ? "" : "; ") + (e ? e : path);
        continue;
      }
      auto get = reinterpret_cast<const Api *(*)()>(dlsym(handle, "attn_mpi_api"));
      const Api *api = get ? get() : nullptr;
      if (!api || api->version != kApiVersion) {
        tried += std::string(tried.empty() ? "" : "; ") + path +
                 ": not this build's libattn_mpi (no attn_mpi_api of version " +
                 std::to_string(kApiVersion) + ")";
        continue;
      }
      loadedApi = api;
      return;
    }
    why = "ring attention needs libattn_mpi and Open MPI's libmpi, which could "
          "not be loaded (install Open MPI: apt-get install openmpi-bin "
          "libopenmpi3): " + tried;
  });
  return why;
}

/// The table, for calls that only make sense once MPI runs: a process that
/// gets here without it has a bug, said once, and stops.
const Api &api() {
  const std::string &why = load();
  if (!loadedApi) {
    std::fprintf(stderr, "attn: %s\n", why.c_str());
    std::exit(2);
  }
  return *loadedApi;
}

} // namespace

bool available(std::string &why) {
  why = load();
  return loadedApi != nullptr;
}

bool loaded() { return loadedApi != nullptr; }

bool initialize(std::string &error) {
  if (!available(error))
    return false;
  return api().initialize(error);
}

bool isInitialized() { return loaded() && api().isInitialized(); }

void finalize() {
  if (loaded())
    api().finalize();
}

int rank() { return api().rank(); }
int size() { return api().size(); }

void abortJob(const std::string &message, int code) {
  if (loaded())
    api().abortJob(message, code);
  std::fprintf(stderr, "attn-run: rank 0: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(code);
}

bool allTrue(bool ok) { return api().allTrue(ok); }
bool allEqual(uint64_t value) { return api().allEqual(value); }
std::vector<char> gatherToRoot(const void *data, size_t bytes) {
  return api().gatherToRoot(data, bytes);
}
double timeRingExchange(int64_t bytes, int reps) {
  return api().timeRingExchange(bytes, reps);
}
std::vector<double> gatherDoubles(const std::vector<double> &values) {
  return api().gatherDoubles(values);
}
double now() { return api().now(); }
Stats stats() { return api().stats(); }
void resetStats() { api().resetStats(); }

std::vector<std::pair<const char *, void *>> runtimeSymbols() {
  return api().runtimeSymbols();
}

} // namespace attn::mpi
