//===- MpiRuntime.cpp - attn_mpi_* over MPI -------------------------------===//
//
// The functions attn-lower-mpi calls, and the C++ API attn-run uses
// (include/attn/Runtime/Mpi.h), exported as one table (attn_mpi_api,
// attn/Runtime/MpiApi.h) for the runtime's on-demand loader. Buffers arrive as (address, byte count)
// and move as MPI_BYTE: any element type, and counts beyond INT_MAX are
// split into several messages with the same tag (MPI keeps their order).
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/MpiApi.h"

// The C API only (Open MPI and MPICH otherwise pull in their C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace attn::mpi::impl {
[[noreturn]] void abortJob(const std::string &message, int code = 1);
bool initialize(std::string &error);
bool isInitialized();
void finalize();
} // namespace attn::mpi::impl

namespace {

bool startedHere = false;
attn::mpi::Stats counters;
/// Communicator handles: 0 is the kernels' own duplicate of
/// MPI_COMM_WORLD (made on first use, collectively, by the ring's
/// comm_world), so that a host program's messages on MPI_COMM_WORLD can
/// never match a ring's; others come from comm_split.
std::vector<MPI_Comm> &comms() {
  static std::vector<MPI_Comm> c;
  return c;
}
void requireMpi() {
  if (!attn::mpi::impl::isInitialized())
    attn::mpi::impl::abortJob("MPI is not initialised: call MPI_Init_thread(..., "
                        "MPI_THREAD_FUNNELED, ...) before a ring kernel");
}
MPI_Comm commOf(int64_t handle) {
  requireMpi();
  if (comms().empty()) {
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    comms().push_back(world);
  }
  if (handle < 0 || handle >= static_cast<int64_t>(comms().size()))
    attn::mpi::impl::abortJob("invalid communicator handle " + std::to_string(handle));
  return comms()[handle];
}

/// The largest piece one MPI call moves (its count is an int).
constexpr int64_t kMaxPiece = INT_MAX;

/// One non-blocking transfer: its pieces' requests.
struct Request {
  std::vector<MPI_Request> pieces;
};

template <typename Post>
void forEachPiece(int64_t ptr, int64_t bytes, Post post) {
  char *p = reinterpret_cast<char *>(ptr);
  for (int64_t done = 0; done < bytes || (bytes == 0 && done == 0);) {
    int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    post(p + done, n);
    done += n;
    if (bytes == 0)
      break;
  }
}

} // namespace

extern "C" {

int32_t attn_mpi_init() {
  std::string error;
  return attn::mpi::impl::initialize(error) ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int32_t attn_mpi_finalize() {
  attn::mpi::impl::finalize();
  return MPI_SUCCESS;
}

int64_t attn_mpi_comm_world() {
  commOf(0); // makes the duplicate (collective: every rank's kernel calls it)
  return 0;
}

int32_t attn_mpi_comm_rank(int64_t comm) {
  int r = 0;
  MPI_Comm_rank(commOf(comm), &r);
  return r;
}

int32_t attn_mpi_comm_size(int64_t comm) {
  int s = 0;
  MPI_Comm_size(commOf(comm), &s);
  return s;
}

int64_t attn_mpi_comm_split(int64_t comm, int32_t color, int32_t key) {
  MPI_Comm out;
  MPI_Comm_split(commOf(comm), color, key, &out);
  comms().push_back(out);
  return static_cast<int64_t>(comms().size()) - 1;
}

int32_t attn_mpi_send(int64_t ptr, int64_t bytes, int32_t tag, int32_t dest, int64_t comm) {
  double t0 = MPI_Wtime();
  forEachPiece(ptr, bytes, [&](char *p, int n) {
    MPI_Send(p, n, MPI_BYTE, dest, tag, commOf(comm));
    ++counters.messages;
  });
  counters.bytesSent += bytes;
  counters.waitSeconds += MPI_Wtime() - t0;
  return MPI_SUCCESS;
}

int32_t attn_mpi_recv(int64_t ptr, int64_t bytes, int32_t tag, int32_t source, int64_t comm) {
  double t0 = MPI_Wtime();
  forEachPiece(ptr, bytes, [&](char *p, int n) {
    MPI_Recv(p, n, MPI_BYTE, source, tag, commOf(comm), MPI_STATUS_IGNORE);
  });
  counters.waitSeconds += MPI_Wtime() - t0;
  return MPI_SUCCESS;
}

int64_t attn_mpi_isend(int64_t ptr, int64_t bytes, int32_t tag, int32_t dest, int64_t comm) {
  auto *r = new Request;
  forEachPiece(ptr, bytes, [&](char *p, int n) {
    r->pieces.emplace_back();
    MPI_Isend(p, n, MPI_BYTE, dest, tag, commOf(comm), &r->pieces.back());
    ++counters.messages;
  });
  counters.bytesSent += bytes;
  return reinterpret_cast<int64_t>(r);
}

int64_t attn_mpi_irecv(int64_t ptr, int64_t bytes, int32_t tag, int32_t source, int64_t comm) {
  auto *r = new Request;
  forEachPiece(ptr, bytes, [&](char *p, int n) {
    r->pieces.emplace_back();
    MPI_Irecv(p, n, MPI_BYTE, source, tag, commOf(comm), &r->pieces.back());
  });
  return reinterpret_cast<int64_t>(r);
}

int32_t attn_mpi_wait(int64_t request) {
  auto *r = reinterpret_cast<Request *>(request);
  double t0 = MPI_Wtime();
  int rc = MPI_Waitall(static_cast<int>(r->pieces.size()), r->pieces.data(),
                       MPI_STATUSES_IGNORE);
  counters.waitSeconds += MPI_Wtime() - t0;
  delete r;
  return rc;
}

int32_t attn_mpi_barrier(int64_t comm) {
  double t0 = MPI_Wtime();
  int rc = MPI_Barrier(commOf(comm));
  counters.waitSeconds += MPI_Wtime() - t0;
  return rc;
}

/// count: bytes of each buffer; type: 0 f32, 1 f64, 2 i32, 3 i64; op: the
/// mpi dialect's MPI_ReductionOpEnum.
int32_t attn_mpi_allreduce(int64_t send, int64_t recv, int64_t sendBytes, int64_t recvBytes,
                           int32_t type, int32_t op, int64_t comm) {
  static const MPI_Datatype types[] = {MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T, MPI_INT64_T};
  static const int widths[] = {4, 8, 4, 8};
  if (type < 0 || type > 3 || sendBytes != recvBytes)
    attn::mpi::impl::abortJob("attn_mpi_allreduce: bad element type or buffer sizes");
  MPI_Op ops[] = {MPI_OP_NULL, MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD,   MPI_LAND,   MPI_BAND,
                  MPI_LOR,     MPI_BOR,  MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE};
  if (op <= 0 || op >= static_cast<int32_t>(sizeof(ops) / sizeof(ops[0])) || op >= 11)
    attn::mpi::impl::abortJob("attn_mpi_allreduce: unsupported reduction " + std::to_string(op));
  int64_t count = sendBytes / widths[type];
  if (count > kMaxPiece)
    attn::mpi::impl::abortJob("attn_mpi_allreduce: more than INT_MAX elements");
  double t0 = MPI_Wtime();
  void *sendPtr = send == recv ? MPI_IN_PLACE : reinterpret_cast<void *>(send);
  int rc = MPI_Allreduce(sendPtr, reinterpret_cast<void *>(recv), static_cast<int>(count),
                         types[type], ops[op], commOf(comm));
  counters.waitSeconds += MPI_Wtime() - t0;
  return rc;
}

int32_t attn_mpi_error_class(int32_t code) {
  if (code == MPI_SUCCESS)
    return 0;
  int cls = code;
  MPI_Error_class(code, &cls);
  // The mpi dialect's MPI_ErrorClassEnum numbers the classes in its own
  // (alphabetical) order, not the library's.
#ifdef MPI_ERR_ACCESS
  if (cls == MPI_ERR_ACCESS)
    return 1;
#endif
#ifdef MPI_ERR_AMODE
  if (cls == MPI_ERR_AMODE)
    return 2;
#endif
#ifdef MPI_ERR_ARG
  if (cls == MPI_ERR_ARG)
    return 3;
#endif
#ifdef MPI_ERR_ASSERT
  if (cls == MPI_ERR_ASSERT)
    return 4;
#endif
#ifdef MPI_ERR_BAD_FILE
  if (cls == MPI_ERR_BAD_FILE)
    return 5;
#endif
#ifdef MPI_ERR_BASE
  if (cls == MPI_ERR_BASE)
    return 6;
#endif
#ifdef MPI_ERR_BUFFER
  if (cls == MPI_ERR_BUFFER)
    return 7;
#endif
#ifdef MPI_ERR_COMM
  if (cls == MPI_ERR_COMM)
    return 8;
#endif
#ifdef MPI_ERR_CONVERSION
  if (cls == MPI_ERR_CONVERSION)
    return 9;
#endif
#ifdef MPI_ERR_COUNT
  if (cls == MPI_ERR_COUNT)
    return 10;
#endif
#ifdef MPI_ERR_DIMS
  if (cls == MPI_ERR_DIMS)
    return 11;
#endif
#ifdef MPI_ERR_DISP
  if (cls == MPI_ERR_DISP)
    return 12;
#endif
#ifdef MPI_ERR_DUP_DATAREP
  if (cls == MPI_ERR_DUP_DATAREP)
    return 13;
#endif
#ifdef MPI_ERR_ERRHANDLER
  if (cls == MPI_ERR_ERRHANDLER)
    return 14;
#endif
#ifdef MPI_ERR_FILE
  if (cls == MPI_ERR_FILE)
    return 15;
#endif
#ifdef MPI_ERR_FILE_EXISTS
  if (cls == MPI_ERR_FILE_EXISTS)
    return 16;
#endif
#ifdef MPI_ERR_FILE_IN_USE
  if (cls == MPI_ERR_FILE_IN_USE)
    return 17;
#endif
#ifdef MPI_ERR_GROUP
  if (cls == MPI_ERR_GROUP)
    return 18;
#endif
#ifdef MPI_ERR_INFO
  if (cls == MPI_ERR_INFO)
    return 19;
#endif
#ifdef MPI_ERR_INFO_KEY
  if (cls == MPI_ERR_INFO_KEY)
    return 20;
#endif
#ifdef MPI_ERR_INFO_NOKEY
  if (cls == MPI_ERR_INFO_NOKEY)
    return 21;
#endif
#ifdef MPI_ERR_INFO_VALUE
  if (cls == MPI_ERR_INFO_VALUE)
    return 22;
#endif
#ifdef MPI_ERR_IN_STATUS
  if (cls == MPI_ERR_IN_STATUS)
    return 23;
#endif
#ifdef MPI_ERR_INTERN
  if (cls == MPI_ERR_INTERN)
    return 24;
#endif
#ifdef MPI_ERR_IO
  if (cls == MPI_ERR_IO)
    return 25;
#endif
#ifdef MPI_ERR_KEYVAL
  if (cls == MPI_ERR_KEYVAL)
    return 26;
#endif
#ifdef MPI_ERR_LOCKTYPE
  if (cls == MPI_ERR_LOCKTYPE)
    return 27;
#endif
#ifdef MPI_ERR_NAME
  if (cls == MPI_ERR_NAME)
    return 28;
#endif
#ifdef MPI_ERR_NO_MEM
  if (cls == MPI_ERR_NO_MEM)
    return 29;
#endif
#ifdef MPI_ERR_NO_SPACE
  if (cls == MPI_ERR_NO_SPACE)
    return 30;
#endif
#ifdef MPI_ERR_NO_SUCH_FILE
  if (cls == MPI_ERR_NO_SUCH_FILE)
    return 31;
#endif
#ifdef MPI_ERR_NOT_SAME
  if (cls == MPI_ERR_NOT_SAME)
    return 32;
#endif
#ifdef MPI_ERR_OP
  if (cls == MPI_ERR_OP)
    return 33;
#endif
#ifdef MPI_ERR_OTHER
  if (cls == MPI_ERR_OTHER)
    return 34;
#endif
#ifdef MPI_ERR_PENDING
  if (cls == MPI_ERR_PENDING)
    return 35;
#endif
#ifdef MPI_ERR_PORT
  if (cls == MPI_ERR_PORT)
    return 36;
#endif
#ifdef MPI_ERR_PROC_ABORTED
  if (cls == MPI_ERR_PROC_ABORTED)
    return 37;
#endif
#ifdef MPI_ERR_QUOTA
  if (cls == MPI_ERR_QUOTA)
    return 38;
#endif
#ifdef MPI_ERR_RANK
  if (cls == MPI_ERR_RANK)
    return 39;
#endif
#ifdef MPI_ERR_READ_ONLY
  if (cls == MPI_ERR_READ_ONLY)
    return 40;
#endif
#ifdef MPI_ERR_REQUEST
  if (cls == MPI_ERR_REQUEST)
    return 41;
#endif
#ifdef MPI_ERR_RMA_ATTACH
  if (cls == MPI_ERR_RMA_ATTACH)
    return 42;
#endif
#ifdef MPI_ERR_RMA_CONFLICT
  if (cls == MPI_ERR_RMA_CONFLICT)
    return 43;
#endif
#ifdef MPI_ERR_RMA_FLAVOR
  if (cls == MPI_ERR_RMA_FLAVOR)
    return 44;
#endif
#ifdef MPI_ERR_RMA_RANGE
  if (cls == MPI_ERR_RMA_RANGE)
    return 45;
#endif
#ifdef MPI_ERR_RMA_SHARED
  if (cls == MPI_ERR_RMA_SHARED)
    return 46;
#endif
#ifdef MPI_ERR_RMA_SYNC
  if (cls == MPI_ERR_RMA_SYNC)
    return 47;
#endif
#ifdef MPI_ERR_ROOT
  if (cls == MPI_ERR_ROOT)
    return 48;
#endif
#ifdef MPI_ERR_SERVICE
  if (cls == MPI_ERR_SERVICE)
    return 49;
#endif
#ifdef MPI_ERR_SESSION
  if (cls == MPI_ERR_SESSION)
    return 50;
#endif
#ifdef MPI_ERR_SIZE
  if (cls == MPI_ERR_SIZE)
    return 51;
#endif
#ifdef MPI_ERR_SPAWN
  if (cls == MPI_ERR_SPAWN)
    return 52;
#endif
#ifdef MPI_ERR_TAG
  if (cls == MPI_ERR_TAG)
    return 53;
#endif
#ifdef MPI_ERR_TOPOLOGY
  if (cls == MPI_ERR_TOPOLOGY)
    return 54;
#endif
#ifdef MPI_ERR_TRUNCATE
  if (cls == MPI_ERR_TRUNCATE)
    return 55;
#endif
#ifdef MPI_ERR_TYPE
  if (cls == MPI_ERR_TYPE)
    return 56;
#endif
#ifdef MPI_ERR_UNKNOWN
  if (cls == MPI_ERR_UNKNOWN)
    return 57;
#endif
#ifdef MPI_ERR_UNSUPPORTED_DATAREP
  if (cls == MPI_ERR_UNSUPPORTED_DATAREP)
    return 58;
#endif
#ifdef MPI_ERR_UNSUPPORTED_OPERATION
  if (cls == MPI_ERR_UNSUPPORTED_OPERATION)
    return 59;
#endif
#ifdef MPI_ERR_VALUE_TOO_LARGE
  if (cls == MPI_ERR_VALUE_TOO_LARGE)
    return 60;
#endif
#ifdef MPI_ERR_WIN
  if (cls == MPI_ERR_WIN)
    return 61;
#endif
  return 57; // MPI_ERR_UNKNOWN
}

} // extern "C"

namespace attn::mpi::impl {

bool initialize(std::string &error) {
  int done = 0;
  MPI_Initialized(&done);
  if (done) {
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_FUNNELED) {
      error = "MPI was initialised with thread level " + std::to_string(level) +
              ", below MPI_THREAD_FUNNELED (the kernels use OpenMP threads)";
      return false;
    }
    return true;
  }
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    error = "MPI_Init_thread failed";
    return false;
  }
  startedHere = true;
  if (provided < MPI_THREAD_FUNNELED) {
    error = "MPI gives thread level " + std::to_string(provided) +
            ", below MPI_THREAD_FUNNELED (the kernels use OpenMP threads)";
    return false;
  }
  return true;
}

bool isInitialized() {
  int done = 0;
  MPI_Initialized(&done);
  int finalized = 0;
  MPI_Finalized(&finalized);
  return done && !finalized;
}

void finalize() {
  if (startedHere && isInitialized())
    MPI_Finalize();
  startedHere = false;
}

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

[[noreturn]] void abortJob(const std::string &message, int code) {
  std::fprintf(stderr, "attn-run: rank %d: %s\n", isInitialized() ? rank() : 0,
               message.c_str());
  std::fflush(stderr);
  if (isInitialized())
    MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

bool allTrue(bool ok) {
  int in = ok ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

bool allEqual(uint64_t value) {
  uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&value, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

std::vector<char> gatherToRoot(const void *data, size_t bytes) {
  int r = rank(), n = size();
  std::vector<char> all;
  if (r == 0)
    all.resize(bytes * n);
  // Point to point in pieces: a gather's counts are ints.
  if (r == 0) {
    std::memcpy(all.data(), data, bytes);
    for (int src = 1; src < n; ++src)
      forEachPiece(reinterpret_cast<int64_t>(all.data() + bytes * src),
                   static_cast<int64_t>(bytes), [&](char *p, int len) {
                     MPI_Recv(p, len, MPI_BYTE, src, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                   });
  } else {
    forEachPiece(reinterpret_cast<int64_t>(data), static_cast<int64_t>(bytes),
                 [&](char *p, int len) { MPI_Send(p, len, MPI_BYTE, 0, 77, MPI_COMM_WORLD); });
  }
  return all;
}

double timeRingExchange(int64_t bytes, int reps) {
  int r = rank(), n = size();
  if (n < 2 || bytes <= 0)
    return 0;
  std::vector<char> out(bytes), in(bytes);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    Request send, recv;
    forEachPiece(reinterpret_cast<int64_t>(out.data()), bytes, [&](char *p, int len) {
      send.pieces.emplace_back();
      MPI_Isend(p, len, MPI_BYTE, (r + 1) % n, 78, MPI_COMM_WORLD, &send.pieces.back());
    });
    forEachPiece(reinterpret_cast<int64_t>(in.data()), bytes, [&](char *p, int len) {
      recv.pieces.emplace_back();
      MPI_Irecv(p, len, MPI_BYTE, (r + n - 1) % n, 78, MPI_COMM_WORLD, &recv.pieces.back());
    });
    MPI_Waitall(static_cast<int>(send.pieces.size()), send.pieces.data(), MPI_STATUSES_IGNORE);
    MPI_Waitall(static_cast<int>(recv.pieces.size()), recv.pieces.data(), MPI_STATUSES_IGNORE);
    t.push_back(MPI_Wtime() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<double> gatherDoubles(const std::vector<double> &values) {
  std::vector<double> all(rank() == 0 ? values.size() * size() : 0);
  MPI_Gather(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, all.data(),
             static_cast<int>(values.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

double now() { return MPI_Wtime(); }

Stats stats() { return counters; }
void resetStats() { counters = Stats(); }

std::vector<std::pair<const char *, void *>> runtimeSymbols() {
  return {
      {"attn_mpi_init", reinterpret_cast<void *>(&attn_mpi_init)},
      {"attn_mpi_finalize", reinterpret_cast<void *>(&attn_mpi_finalize)},
      {"attn_mpi_comm_world", reinterpret_cast<void *>(&attn_mpi_comm_world)},
      {"attn_mpi_comm_rank", reinterpret_cast<void *>(&attn_mpi_comm_rank)},
      {"attn_mpi_comm_size", reinterpret_cast<void *>(&attn_mpi_comm_size)},
      {"attn_mpi_comm_split", reinterpret_cast<void *>(&attn_mpi_comm_split)},
      {"attn_mpi_send", reinterpret_cast<void *>(&attn_mpi_send)},
      {"attn_mpi_recv", reinterpret_cast<void *>(&attn_mpi_recv)},
      {"attn_mpi_isend", reinterpret_cast<void *>(&attn_mpi_isend)},
      {"attn_mpi_irecv", reinterpret_cast<void *>(&attn_mpi_irecv)},
      {"attn_mpi_wait", reinterpret_cast<void *>(&attn_mpi_wait)},
      {"attn_mpi_barrier", reinterpret_cast<void *>(&attn_mpi_barrier)},
      {"attn_mpi_allreduce", reinterpret_cast<void *>(&attn_mpi_allreduce)},
      {"attn_mpi_error_class", reinterpret_cast<void *>(&attn_mpi_error_class)},
  };
}

} // namespace attn::mpi::impl

extern "C" const attn::mpi::Api *attn_mpi_api() {
  namespace impl = attn::mpi::impl;
  static const attn::mpi::Api api = {
      attn::mpi::kApiVersion, &impl::initialize,   &impl::isInitialized,
      &impl::finalize,        &impl::rank,         &impl::size,
      &impl::abortJob,        &impl::allTrue,      &impl::allEqual,
      &impl::gatherToRoot,    &impl::timeRingExchange, &impl::gatherDoubles,
      &impl::now,             &impl::stats,        &impl::resetStats,
      &impl::runtimeSymbols,
  };
  return &api;
}
