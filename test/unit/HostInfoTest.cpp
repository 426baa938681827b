//===- HostInfoTest.cpp - the facts the runtime takes from the host -------===//
//
// workerThreads: the thread count the JIT compiles into a cpu kernel.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/Jit.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>
#include <optional>
#include <string>

using attn::runtime::workerThreads;

namespace {

/// Sets OMP_NUM_THREADS (or unsets it: nullopt) for one test, then restores it.
class OmpNumThreads {
public:
  explicit OmpNumThreads(std::optional<std::string> value) {
    if (const char *old = std::getenv("OMP_NUM_THREADS"))
      saved = old;
    if (value)
      setenv("OMP_NUM_THREADS", value->c_str(), 1);
    else
      unsetenv("OMP_NUM_THREADS");
  }
  ~OmpNumThreads() {
    if (saved)
      setenv("OMP_NUM_THREADS", saved->c_str(), 1);
    else
      unsetenv("OMP_NUM_THREADS");
  }

private:
  std::optional<std::string> saved;
};

int64_t affinityCpus() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(WorkerThreads, RequestThenEnvironmentThenAffinity) {
  OmpNumThreads none(std::nullopt);
  EXPECT_EQ(workerThreads(3), 3);
  EXPECT_EQ(workerThreads(0), affinityCpus());
  {
    OmpNumThreads env("7");
    EXPECT_EQ(workerThreads(0), 7);
    EXPECT_EQ(workerThreads(2), 2);
  }
  {
    OmpNumThreads nested(" 4,2"); // nested levels: the first is the team's
    EXPECT_EQ(workerThreads(0), 4);
  }
  for (const char *bad : {"", "0", "-2", "many"}) {
    OmpNumThreads env(bad);
    EXPECT_EQ(workerThreads(0), affinityCpus()) << "OMP_NUM_THREADS='" << bad << "'";
  }
}

TEST(WorkerThreads, NotTheOpenMPRuntimesCurrentCount) {
  // A library that sets OpenMP's thread count (PyTorch sets 1 at import on
  // a host with one physical core) does not change what the JIT compiles.
  OmpNumThreads none(std::nullopt);
  using SetThreads = void (*)(int);
  void *omp = dlopen("libomp.so.5", RTLD_NOW | RTLD_GLOBAL);
  if (!omp)
    GTEST_SKIP() << "libomp.so.5 is not loadable here";
  auto set = reinterpret_cast<SetThreads>(dlsym(omp, "omp_set_num_threads"));
  ASSERT_NE(set, nullptr);
  set(1);
  EXPECT_EQ(workerThreads(0), affinityCpus());
}

} // namespace
