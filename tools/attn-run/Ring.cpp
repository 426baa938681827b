//===- Ring.cpp - attn-run --pipeline=ring under mpirun -------------------===//
#include "Ring.h"

#include "Diagnostics.h"
#include "Inputs.h"
#include "Report.h"

#include "attn/Runtime/Mpi.h"
#include "attn/Runtime/Shard.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mpi = ::attn::mpi;

namespace attnrun {
namespace {

/// Errors after MPI started end the whole job with the rank's message.
[[noreturn]] void abortRing(const llvm::Twine &msg, int code = 2) {
  mpi::abortJob(msg.str(), code);
}

std::string errorString(llvm::Error e) {
  std::string msg;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase &b) { msg = b.message(); });
  return msg;
}

/// FNV-1a over every input's dtype, shape and bytes: equal on every rank
/// iff the ranks were given the same inputs.
uint64_t fingerprint(const std::vector<rt::HostTensor> &ts) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void *p, size_t n) {
    auto *c = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i)
      h = (h ^ c[i]) * 1099511628211ull;
  };
  for (const rt::HostTensor &t : ts) {
    int d = static_cast<int>(t.dtype);
    mix(&d, sizeof d);
    mix(t.shape.data(), t.shape.size() * sizeof(int64_t));
    mix(t.bytes.data(), t.bytes.size());
  }
  return h;
}

std::unique_ptr<rt::CompiledFunction> compileOrAbort(RingRun &run, rt::Pipeline p) {
  auto fn = rt::CompiledFunction::compile(run.module, run.entry, p, run.jit);
  if (!fn)
    abortRing(errorString(fn.takeError()), 1);
  return std::move(*fn);
}

} // namespace

int runRing(RingRun &run) {
  std::string error;
  if (!mpi::initialize(error)) {
    if (mpi::isInitialized())
      abortRing("--pipeline=ring: " + error);
    fail(2, "--pipeline=ring: " + error);
  }
  int rank = mpi::rank(), ranks = mpi::size();

  // Every rank compiles the same ring for P = the communicator's size.
  run.jit.ranks = ranks;
  std::unique_ptr<rt::CompiledFunction> fn = compileOrAbort(run, rt::Pipeline::Ring);

  // The whole inputs: the same files or the same seeded data on every rank.
  std::vector<rt::HostTensor> whole = std::move(run.inputs);
  if (run.random) {
    std::vector<rt::TensorSpec> specs;
    for (mlir::Type t : run.entryFn.getArgumentTypes()) {
      auto tt = mlir::cast<mlir::RankedTensorType>(t);
      std::vector<int64_t> shape;
      for (int64_t d : tt.getShape())
        shape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
      specs.push_back({*dtypeOf(t), shape});
    }
    whole = randomTensors(specs, run.module, run.entry, run.seed);
  }
  // A whole input against the function as written (a longer sequence would
  // still cut into shares of the right size).
  const char *readsAsTheyAre =
      " (--pipeline=ring reads shares of .npy files as they are: float32, float16, "
      "bool, int32, int64, C order; convert the file, or pass it as NAME=PATH to have "
      "it read whole and converted)";
  auto checkWhole = [&](size_t i, rt::ElementType dtype, const std::vector<int64_t> &shape,
                        const std::string &where) {
    auto tt = mlir::cast<mlir::RankedTensorType>(run.entryFn.getArgumentTypes()[i]);
    std::vector<int64_t> want(tt.getShape().begin(), tt.getShape().end());
    if (shape == want && dtype == *dtypeOf(tt))
      return;
    rt::TensorSpec got{dtype, shape}, expected{*dtypeOf(tt), want};
    // .npy has no bfloat16: such values come as float32, which only NAME=PATH
    // converts.
    std::string hint = dtype == expected.dtype ? ""
                       : expected.dtype == rt::ElementType::BF16
                           ? " (.npy has no bfloat16: pass the float32 values as "
                             "NAME=PATH to have them read whole and rounded to bfloat16)"
                           : readsAsTheyAre;
    abortRing(run.entry + ": input #" + llvm::Twine(i) + where + " is " + got.str() +
              ", expected " + expected.str() + hint);
  };
  // Plain .npy inputs: each rank reads the rows of its share only, and the
  // ranks compare the files' dtypes and whole shapes.
  std::vector<rt::HostTensor> local;
  if (!run.inputPaths.empty()) {
    size_t nargs = fn->argSpecs().size();
    if (run.inputPaths.size() != nargs)
      abortRing("'" + run.entry + "' takes " + llvm::Twine(nargs) + " arguments, got " +
                llvm::Twine(run.inputPaths.size()) + " --input files");
    std::vector<rt::HostTensor> shapesOnly;
    for (size_t i = 0; i < nargs; ++i) {
      const std::string &path = run.inputPaths[i];
      const std::optional<rt::ShardSpec> &spec = fn->argShards()[i];
      std::vector<int64_t> wholeShape;
      auto t = spec ? rt::readNpyShare(path, *spec, rank, ranks, &wholeShape) : rt::readNpy(path);
      if (!t) {
        std::string msg = errorString(t.takeError());
        bool conversion = llvm::StringRef(msg).contains("dtype") ||
                          llvm::StringRef(msg).contains("Fortran");
        abortRing(msg + (conversion ? readsAsTheyAre : ""));
      }
      if (!spec)
        wholeShape = t->shape;
      checkWhole(i, t->dtype, wholeShape, " (" + path + ")");
      rt::HostTensor header;
      header.dtype = t->dtype;
      header.shape = wholeShape;
      shapesOnly.push_back(header);
      local.push_back(std::move(*t));
    }
    if (!mpi::allEqual(fingerprint(shapesOnly)))
      abortRing("the ranks were given different inputs (their .npy files differ in dtype or "
                "shape)");
    // Rank 0 compares with a single-node run on the whole files.
    if (rank == 0 && run.compareWith)
      for (const std::string &path : run.inputPaths) {
        auto t = rt::readNpy(path);
        if (!t)
          abortRing(errorString(t.takeError()));
        whole.push_back(std::move(*t));
      }
    else
      whole = std::move(shapesOnly);
  } else {
    // Whole inputs (files read whole, or seeded data): the same on every
    // rank, then this rank's share of each sharded one.
    if (!mpi::allEqual(fingerprint(whole))) {
      if (rank == 0)
        abortRing("the ranks were given different inputs (each rank must read the same "
                  "files, or use the same --seed)");
      mpi::allTrue(false); // rank 0 aborts the job
    }
    if (whole.size() != fn->argSpecs().size())
      abortRing("'" + run.entry + "' takes " + llvm::Twine(fn->argSpecs().size()) +
                " arguments, got " + llvm::Twine(whole.size()) + " inputs");
    for (auto [i, t] : llvm::enumerate(whole)) {
      checkWhole(i, t.dtype, t.shape, "");
      const std::optional<rt::ShardSpec> &spec = fn->argShards()[i];
      if (!spec) {
        local.push_back(t);
        continue;
      }
      auto part = rt::shardOf(t, *spec, rank, ranks);
      if (!part)
        abortRing("input #" + llvm::Twine(i) + ": " + errorString(part.takeError()));
      local.push_back(std::move(*part));
    }
  }
  if (llvm::Error e = fn->checkInputs(local))
    abortRing(run.entry + ": " + errorString(std::move(e)));
  // Only rank 0 keeps the whole inputs (for --compare-with); the others
  // hold their shares from here on.
  if (rank != 0 || !run.compareWith)
    for (rt::HostTensor &t : whole)
      std::vector<uint8_t>().swap(t.bytes);

  // One call; the time of each rank, and the part of it spent waiting.
  auto timedCall = [&](double &seconds, double &waitSeconds, int64_t &bytes) {
    mpi::allTrue(true); // start together
    mpi::resetStats();
    double t0 = mpi::now();
    auto out = fn->call(local);
    seconds = mpi::now() - t0;
    if (!out)
      abortRing(errorString(out.takeError()), 1);
    mpi::Stats st = mpi::stats();
    waitSeconds = st.waitSeconds;
    bytes = st.bytesSent;
    return std::move(*out);
  };
  double seconds = 0, wait = 0;
  int64_t bytesSent = 0;
  std::vector<rt::HostTensor> results = timedCall(seconds, wait, bytesSent);
  std::vector<double> times, waits;
  for (unsigned r = 0; r < run.repeat; ++r) {
    double s = 0, w = 0;
    int64_t b = 0;
    timedCall(s, w, b);
    times.push_back(s);
    waits.push_back(w);
  }

  // Rank 0 gathers each sharded result.
  std::vector<rt::HostTensor> gathered;
  for (auto [i, t] : llvm::enumerate(results)) {
    const std::optional<rt::ShardSpec> &spec = fn->resultShards()[i];
    if (!spec) {
      gathered.push_back(t);
      continue;
    }
    std::vector<char> all = mpi::gatherToRoot(t.bytes.data(), t.bytes.size());
    if (rank == 0) {
      auto joined = rt::unshard(all, t.dtype, t.shape, *spec, ranks);
      if (!joined)
        abortRing("result #" + llvm::Twine(i) + ": " + errorString(joined.takeError()));
      gathered.push_back(std::move(*joined));
    }
  }

  // Per step: one K/V block's transfer measured alone (for the overlap).
  int64_t stepBytes = ranks > 1 ? bytesSent / (ranks - 1) : 0;
  double transferSeconds = mpi::timeRingExchange(stepBytes, 5);
  std::vector<double> mine{run.repeat ? median(times) : seconds,
                           run.repeat ? median(waits) : wait};
  std::vector<double> perRank = mpi::gatherDoubles(mine);

  int status = 0;
  if (rank == 0) {
    for (size_t i = 0; i < run.outputs.size() && i < gathered.size(); ++i)
      if (llvm::Error e = rt::writeNpy(run.outputs[i], gathered[i]))
        abortRing(errorString(std::move(e)));
    std::vector<ErrorStats> errors;
    if (run.compareWith) {
      rt::JitOptions single = run.jit;
      single.ranks = 1;
      std::swap(single, run.jit);
      std::unique_ptr<rt::CompiledFunction> ref = compileOrAbort(run, *run.compareWith);
      std::swap(single, run.jit);
      auto expected = ref->call(whole);
      if (!expected)
        abortRing(errorString(expected.takeError()), 1);
      for (size_t i = 0; i < gathered.size(); ++i)
        errors.push_back(compare(gathered[i], (*expected)[i]));
    }
    double slowest = 0;
    for (int r = 0; r < ranks; ++r)
      slowest = std::max(slowest, perRank[2 * r]);
    std::optional<FlopCount> flops = countFlops(run.entryFn, whole);
    // The share of the transfers the compute hid: 1 - exposed wait / the
    // transfers' own time (P - 1 steps), from rank 0's view of the ring.
    double transfers = (ranks - 1) * transferSeconds;
    auto overlapOf = [&](double waitSeconds) {
      if (transfers <= 0)
        return 1.0;
      return std::clamp(1.0 - waitSeconds / transfers, 0.0, 1.0);
    };
    llvm::raw_ostream &os = llvm::outs();
    if (run.json) {
      os << "{\"file\": \"" << run.file << "\", \"entry\": \"" << run.entry
         << "\", \"pipeline\": \"ring\", \"ranks\": " << ranks
         << ", \"threads_per_rank\": " << rt::workerThreads(run.jit.threads)
         << ", \"repeat\": " << run.repeat << ", \"time_ms\": " << num(slowest * 1e3);
      if (flops)
        os << ", \"gflops\": " << num(flops->full / (slowest * 1e9))
           << ", \"effective_gflops\": " << num(flops->effective / (slowest * 1e9));
      os << ", \"bytes_sent_per_rank\": " << bytesSent
         << ", \"transfer_ms_per_step\": " << num(transferSeconds * 1e3) << ", \"per_rank\": [";
      for (int r = 0; r < ranks; ++r) {
        double t = perRank[2 * r], w = perRank[2 * r + 1];
        os << (r ? ", " : "") << "{\"rank\": " << r << ", \"time_ms\": " << num(t * 1e3)
           << ", \"compute_ms\": " << num((t - w) * 1e3) << ", \"wait_ms\": " << num(w * 1e3)
           << ", \"overlap\": " << num(overlapOf(w)) << "}";
      }
      os << "]";
      if (run.compareWith) {
        os << ", \"compare_with\": \"" << rt::pipelineName(*run.compareWith)
           << "\", \"errors\": [";
        for (auto [i, e] : llvm::enumerate(errors))
          os << (i ? ", " : "") << "{\"max_abs_error\": " << num(e.maxAbs)
             << ", \"max_rel_error\": " << num(e.maxRel) << "}";
        os << "]";
      }
      os << "}\n";
    } else {
      os << "attn-run: @" << run.entry << " from " << run.file << " through the ring pipeline ("
         << ranks << " ranks x " << rt::workerThreads(run.jit.threads) << " threads)\n";
      for (auto [i, t] : llvm::enumerate(gathered)) {
        os << "result #" << i << ": ";
        std::string shape;
        for (auto [k, d] : llvm::enumerate(t.shape))
          shape += (k ? "," : "") + std::to_string(d);
        os << rt::dtypeName(t.dtype) << "[" << shape << "]\n";
      }
      for (auto [i, e] : llvm::enumerate(errors))
        os << "result #" << i << " vs " << rt::pipelineName(*run.compareWith)
           << ": max_abs_error " << num(e.maxAbs) << " max_rel_error " << num(e.maxRel)
           << "\n";
      os << (run.repeat ? "median of " + std::to_string(run.repeat) + " runs: "
                        : std::string("one run: "))
         << num(slowest * 1e3) << " ms (slowest rank)";
      if (flops)
        os << ", " << num(flops->effective / (slowest * 1e9)) << " GFLOP/s";
      os << "\n";
      for (int r = 0; r < ranks; ++r) {
        double t = perRank[2 * r], w = perRank[2 * r + 1];
        os << "rank " << r << ": " << num(t * 1e3) << " ms, compute " << num((t - w) * 1e3)
           << " ms, waiting " << num(w * 1e3) << " ms, overlap " << num(overlapOf(w))
           << "\n";
      }
      if (ranks > 1)
        os << "transfer alone: " << num(transferSeconds * 1e3) << " ms per step ("
           << stepBytes << " bytes)\n";
    }
    os.flush();
  }
  mpi::finalize();
  return status;
}

} // namespace attnrun
