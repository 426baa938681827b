//===- Ring.h - attn-run --pipeline=ring under mpirun -----------*- C++ -*-===//
//
// Every rank compiles the ring (attn-shard with P = the communicator's
// size), cuts its share out of the whole inputs (read from the same files,
// or the same seeded random data), runs, and rank 0 gathers the output,
// writes it, compares it with a single-node pipeline and reports per-rank
// compute and communication times.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_ATTN_RUN_RING_H
#define ATTN_TOOLS_ATTN_RUN_RING_H

#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace attnrun {

namespace rt = ::attn::runtime;

struct RingRun {
  std::string file, entry;
  mlir::ModuleOp module;
  mlir::func::FuncOp entryFn;
  std::vector<rt::HostTensor> inputs; ///< whole tensors; empty with random
  /// Plain .npy files, one per argument in order: each rank reads only its
  /// share of each sharded one (rank 0 the whole files for --compare-with).
  std::vector<std::string> inputPaths;
  bool random = false;
  unsigned seed = 0;
  std::vector<std::string> outputs;
  std::optional<rt::Pipeline> compareWith;
  unsigned repeat = 0;
  bool json = false;
  rt::JitOptions jit;
};

/// Runs the ring; returns the exit status (errors abort the MPI job).
int runRing(RingRun &run);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTN_RUN_RING_H
