//===- Aot.h - ahead-of-time compilation of attn functions ------*- C++ -*-===//
//
// compileAot lowers one function of an attn module through a pipeline, as
// the JIT does, but writes the machine code to an object file with a C
// entry point (attn-c/Aot.h) and a generated header, so that it runs with
// libattn_aot alone. For the gpu pipeline the object holds one variant per
// chip, each with its kernels as a fatbin (cubin + PTX) and host code that
// launches them through libattn_aot's mgpu* functions.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_AOT_H
#define ATTN_RUNTIME_AOT_H

#include "attn/Runtime/Jit.h"
#include "attn/Runtime/ShapeRelations.h"

#include <string>
#include <vector>

namespace attn::runtime {

struct AotOptions {
  /// The C prefix: `<name>_kernel` and `<name>()`; a C identifier.
  std::string name;
  /// Tiling, threads, opt level as for the JIT (gpuChip/gpuFormat unused).
  JitOptions jit;
  /// The CPU the host code is compiled for: "host" (this machine's CPU and
  /// features) or an LLVM CPU name (x86-64, x86-64-v3, skylake-avx512, ...).
  /// Empty: "host" for cpu and reference, "x86-64" for gpu (the host code
  /// only launches kernels, and the GPU machine's CPU is unknown here).
  std::string targetCpu;
  /// gpu: the chips to build variants for (fatbin: cubin + PTX each).
  std::vector<std::string> gpuChips = {"sm_80", "sm_90"};
};

struct AotArtifacts {
  std::string object; ///< ELF relocatable object (position independent)
  std::string header; ///< C header for the object
  /// gpu: (chip, fatbin) for each variant, as embedded in the object.
  std::vector<std::pair<std::string, std::string>> gpuBinaries;
  std::string targetCpu, targetFeatures;
  std::vector<TensorSpec> args, results;
  /// ring: each argument's / result's split over the ranks (one rank's
  /// share is what the kernel takes); nullopt where whole.
  std::vector<std::optional<ShardSpec>> argShards, resultShards;
  ShapeRelations relations;
  CompiledFunction::Tiling tiling;
  /// Ops left to the unfused reference lowering (cpu pipeline remarks).
  std::vector<std::string> unfusedOps;
  /// The entry takes a destination per result (attn_aot_kernel's
  /// result_destinations).
  bool resultDestinations = false;
};

/// Compiles `entry` of `module` (cloned, not modified) through `pipeline`
/// (cpu, reference, gpu or ring: options.jit.ranks ranks). Errors are
/// CompileErrors.
llvm::Expected<AotArtifacts> compileAot(mlir::ModuleOp module,
                                        llvm::StringRef entry,
                                        Pipeline pipeline,
                                        const AotOptions &options);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_AOT_H
