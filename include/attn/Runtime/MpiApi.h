//===- MpiApi.h - the table libattn_mpi exports to its loader --*- C++ -*-===//
//
// libattn_mpi exports one C symbol, attn_mpi_api(), returning this table of
// its C++ API (attn/Runtime/Mpi.h); the loader in the runtime
// (lib/Runtime/MpiLoader.cpp) dlopens the library on demand and forwards
// each call through it. Both sides are built together: `version` guards
// against a stale library on the search path.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_MPIAPI_H
#define ATTN_RUNTIME_MPIAPI_H

#include "attn/Runtime/Mpi.h"

namespace attn::mpi {

constexpr int kApiVersion = 1;

struct Api {
  int version;
  bool (*initialize)(std::string &error);
  bool (*isInitialized)();
  void (*finalize)();
  int (*rank)();
  int (*size)();
  void (*abortJob)(const std::string &message, int code);
  bool (*allTrue)(bool ok);
  bool (*allEqual)(uint64_t value);
  std::vector<char> (*gatherToRoot)(const void *data, size_t bytes);
  double (*timeRingExchange)(int64_t bytes, int reps);
  std::vector<double> (*gatherDoubles)(const std::vector<double> &values);
  double (*now)();
  Stats (*stats)();
  void (*resetStats)();
  std::vector<std::pair<const char *, void *>> (*runtimeSymbols)();
};

} // namespace attn::mpi

extern "C" const attn::mpi::Api *attn_mpi_api();

#endif // ATTN_RUNTIME_MPIAPI_H
