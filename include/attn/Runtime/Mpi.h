//===- Mpi.h - the MPI runtime of ring attention ----------------*- C++ -*-===//
//
// libattn_mpi: the only code compiled against mpi.h. The compiled code of a
// ring (attn-shard + attn-lower-mpi) calls its attn_mpi_* C functions;
// attn-run uses the C++ API below to start MPI, slice inputs, gather the
// output and report per-rank times. In a process that links the runtime
// (attn-run, the Python module, the C API) the API is a loader: libattn_mpi,
// and with it libmpi, is loaded on the first call that needs MPI, so a
// process that never runs a ring never maps them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_MPI_H
#define ATTN_RUNTIME_MPI_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::mpi {

/// Whether libattn_mpi (and libmpi) can be loaded; loads them if not yet.
/// `why` says what is missing otherwise (e.g. Open MPI not installed).
bool available(std::string &why);
/// Whether libattn_mpi is loaded (never loads it).
bool loaded();

/// MPI_Init_thread(MPI_THREAD_FUNNELED) unless MPI is already initialised
/// (the kernels use OpenMP threads; only the main thread calls MPI). Fails
/// with `error` set when MPI cannot give that thread level.
bool initialize(std::string &error);
/// False while libattn_mpi is not loaded (never loads it).
bool isInitialized();
/// MPI_Finalize if initialize() started MPI.
void finalize();
int rank();
int size();
/// Prints "attn-run: rank R: <message>" and aborts the whole job
/// (MPI_Abort), so that no rank waits forever for a failed one.
[[noreturn]] void abortJob(const std::string &message, int code = 1);

/// True on every rank iff `ok` is true on every rank.
bool allTrue(bool ok);
/// True on every rank iff every rank passed the same `value`.
bool allEqual(uint64_t value);
/// Rank 0 receives every rank's `bytes` bytes in rank order (the returned
/// vector, size() · bytes); other ranks get an empty vector.
std::vector<char> gatherToRoot(const void *data, size_t bytes);

/// Seconds one ring step's transfer takes alone: every rank sends `bytes`
/// to rank r+1 and receives as much from rank r-1 (non-blocking, as the
/// ring does), median of `reps`.
double timeRingExchange(int64_t bytes, int reps);

/// Rank 0 receives every rank's doubles (`values`, same count on every
/// rank), in rank order.
std::vector<double> gatherDoubles(const std::vector<double> &values);

/// Wall-clock seconds (MPI_Wtime).
double now();

/// What the compiled ring's calls did since resetStats().
struct Stats {
  double waitSeconds = 0; ///< time blocked in attn_mpi_wait / send / recv
  int64_t bytesSent = 0;
  int64_t messages = 0; ///< sends posted
};
Stats stats();
void resetStats();

/// (name, address) of every attn_mpi_* function, for the JIT.
std::vector<std::pair<const char *, void *>> runtimeSymbols();

} // namespace attn::mpi

#endif // ATTN_RUNTIME_MPI_H
