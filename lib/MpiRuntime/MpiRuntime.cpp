//===- MpiRuntime.cpp - attn_mpi_* over MPI -------------------------------===//
//
// The functions attn-lower-mpi calls, and the C++ API attn-run uses
// (include/attn/Runtime/Mpi.h). Buffers arrive as (address, byte count)
// and move as MPI_BYTE: any element type, and counts beyond INT_MAX are
// split into several messages with the same tag (MPI keeps their order).
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/Mpi.h"

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

namespace {

bool startedHere = false;
attn::mpi::Stats counters;
/// Communicator handles: 0 is MPI_COMM_WORLD, others from comm_split.
std::vector<MPI_Comm> &comms() {
  static std::vector<MPI_Comm> c{MPI_COMM_WORLD};
  return c;
}
MPI_Comm commOf(int64_t handle) {
  if (handle < 0 || handle >= static_cast<int64_t>(comms().size()))
    attn::mpi::abortJob("invalid communicator handle " + std::to_string(handle));
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
  return attn::mpi::initialize(error) ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int32_t attn_mpi_finalize() {
  attn::mpi::finalize();
  return MPI_SUCCESS;
}

int64_t attn_mpi_comm_world() { return 0; }

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
    attn::mpi::abortJob("attn_mpi_allreduce: bad element type or buffer sizes");
  MPI_Op ops[] = {MPI_OP_NULL, MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD,   MPI_LAND,   MPI_BAND,
                  MPI_LOR,     MPI_BOR,  MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE};
  if (op <= 0 || op >= static_cast<int32_t>(sizeof(ops) / sizeof(ops[0])) || op >= 11)
    attn::mpi::abortJob("attn_mpi_allreduce: unsupported reduction " + std::to_string(op));
  int64_t count = sendBytes / widths[type];
  if (count > kMaxPiece)
    attn::mpi::abortJob("attn_mpi_allreduce: more than INT_MAX elements");
  double t0 = MPI_Wtime();
  void *sendPtr = send == recv ? MPI_IN_PLACE : reinterpret_cast<void *>(send);
  int rc = MPI_Allreduce(sendPtr, reinterpret_cast<void *>(recv), static_cast<int>(count),
                         types[type], ops[op], commOf(comm));
  counters.waitSeconds += MPI_Wtime() - t0;
  return rc;
}

int32_t attn_mpi_error_class(int32_t code) {
  int cls = code;
  if (code != MPI_SUCCESS)
    MPI_Error_class(code, &cls);
  return cls;
}

} // extern "C"

namespace attn::mpi {

bool initialize(std::string &error) {
  int done = 0;
  MPI_Initialized(&done);
  if (done)
    return true;
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

void abortJob(const std::string &message, int code) {
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

} // namespace attn::mpi
