//===- PipelineOptions.h - How a pipeline compiles one function -*- C++ -*-===//
//
// The options every way of compiling attn IR shares: the C++ API
// (attn::CompileOptions), the JIT and the AOT compiler (the runtime's
// JitOptions), attn-run and attn-aot. One struct, so that a new pipeline
// option is added once and travels from the tools and the API to the
// passes without being copied field by field. No MLIR or LLVM here: API
// users include it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PIPELINEOPTIONS_H
#define ATTN_PIPELINEOPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace attn {

struct PipelineOptions {
  /// CPU (cpu pipeline) and GPU: query rows and keys per tile of the fused
  /// kernel; unset: that pipeline's default (convert-attn-to-loops' for
  /// cpu, convert-attn-to-gpu's for gpu and gpu-schedule). Each pass checks
  /// its own rule.
  std::optional<int64_t> tileQ, tileK;
  /// CPU: f32 lanes per vector; unset: the host's widest (16 with
  /// AVX-512F, else 8), halved while tileK is not a multiple of two.
  std::optional<int64_t> vectorWidth;
  /// CPU: bf16 tiles and projections on AVX512-BF16 dot products
  /// (convert-attn-to-loops bf16-dot); unset: where the target prefers them
  /// (AMD Zen 4 and later). true on a target without AVX512-BF16 is an
  /// error.
  std::optional<bool> bf16Dot;
  /// CPU: bf16 prefill tiles on Intel AMX tiles (convert-attn-to-loops
  /// amx), and f16 ones where the target has AMX-FP16 (amx-fp16); unset:
  /// where the host has AMX-BF16 and Linux grants its state. true where it
  /// does not is an error, unless emulateAmx.
  std::optional<bool> amx;
  /// CPU: run the AMX tiles as vector code (attn-emulate-amx), on any CPU:
  /// the AMX path's layouts and numerics without the instructions (slow;
  /// for testing). Implies amx unless amx is false.
  bool emulateAmx = false;
  /// CPU: split each Q tile's keys across threads below this many work
  /// items (0: never; convert-attn-to-loops' min-work-items); unset: twice
  /// the worker threads.
  std::optional<int64_t> minWorkItems;
  /// CPU: the most MiB of keys transposed once per call
  /// (convert-attn-to-loops' prepack-limit-mib, 0: never); unset: its
  /// default.
  std::optional<int64_t> prepackLimitMiB;
  /// CPU: worker threads, 0 = one per core (or OMP_NUM_THREADS).
  int64_t threads = 0;
  /// LLVM optimisation level of the compiled code (0-3), capped by the
  /// environment variable ATTN_MAX_OPT_LEVEL where it is set.
  unsigned optLevel = 3;
  /// GPU: every argument and result is a CUDA device buffer (the current
  /// device's, dense row-major): no host copies inside a call. Without it a
  /// GPU function takes host buffers and copies them in and out.
  bool deviceResident = false;
  /// GPU: f32 attention with head dims 64/128 runs on tensor cores with
  /// TF32 operands (10 mantissa bits, about f16's relative error; f32
  /// accumulation and softmax; convert-attn-to-gpu tf32). Off: f32 keeps
  /// full precision.
  bool tf32 = false;
  /// Raise attention written as generic linalg to attn.sdpa first
  /// (attn-raise, docs/raise.md), with these pass options ("" = its
  /// defaults, e.g. "zero-empty-rows=1"); unset: the IR is taken as it is.
  /// A bad option is an error.
  std::optional<std::string> raise;
};

} // namespace attn

#endif // ATTN_PIPELINEOPTIONS_H
