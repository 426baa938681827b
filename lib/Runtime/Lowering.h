//===- Lowering.h - the lowering the JIT and attn-aot share -----*- C++ -*-===//
#ifndef ATTN_LIB_RUNTIME_LOWERING_H
#define ATTN_LIB_RUNTIME_LOWERING_H

#include "attn/Runtime/Jit.h"

#include "llvm/Support/CodeGen.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace attn::runtime {

/// An error with message `msg` (Jit.cpp).
llvm::Error err(const llvm::Twine &msg);

/// A CompileError of `kind` with message `msg` (Jit.cpp).
llvm::Error compileError(CompileErrorKind kind, const llvm::Twine &msg);

/// The runner's view of a function argument or result type (`what` names
/// it in the error).
llvm::Expected<TensorSpec> specOf(mlir::Type t, const llvm::Twine &what);

/// Lowers function `entry` of `module` (in place: pass a clone) through
/// `pipeline` to the LLVM dialect, with its C interface; functions it does
/// not call are dropped. `target` is the CPU's (the cpu pipeline's default
/// vector width and bf16 path); `chip` the GPU target.
/// Records the tiling used and the ops left unfused (remarks).
/// `resultDestinations`: asked for (the cpu pipeline only), and on return
/// whether the entry takes a destination per result after its arguments
/// (attn-result-destinations: not when something in the module calls it).
llvm::Error lowerToLLVMDialect(mlir::ModuleOp module, llvm::StringRef entry,
                               Pipeline pipeline, const JitOptions &options,
                               const std::string &chip, const CpuTarget &target,
                               CompiledFunction::Tiling &usedTiling,
                               std::vector<std::string> &unfused,
                               bool &resultDestinations);

/// A clone of `module` with every attn.ring sdpa rewritten into ring
/// attention over `ranks` (attn-shard) and its mpi ops lowered to calls of
/// libattn_mpi (attn-lower-mpi): what the ring pipeline compiles, whose
/// signature is one rank's share.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> shardRing(mlir::ModuleOp module,
                                                           int64_t ranks);

/// The `attn.shard` attribute attn-shard puts on a sharded argument or
/// result, read from its attribute dictionary; nullopt without one.
std::optional<ShardSpec> shardSpecOf(mlir::DictionaryAttr attrs);

/// Registers the host target with LLVM (once per process).
void initializeNativeTarget();

/// The optimisation level compiled code gets for a requested 0-3: the
/// request, capped by the environment variable ATTN_MAX_OPT_LEVEL (0-3)
/// where it is set. The sanitizer stage sets 0 (scripts/sanitize.sh): the
/// compiled code is not instrumented, so its level does not change what
/// the sanitizers check, and LLVM optimising it under their allocator was
/// most of that stage's time (bench/NOTES.md, 2026-12-05). A value that is
/// not 0-3 is an error naming it.
llvm::Expected<unsigned> cappedOptLevel(unsigned requested);

/// The code generator's level for an optimisation level 0-3.
llvm::CodeGenOptLevel codeGenOptLevel(unsigned optLevel);

/// The LLVM optimisation every compiled function gets (O`optLevel` for
/// `tm`; `arcp` divisions may use reciprocal estimates).
llvm::Error optimizeLLVMModule(llvm::Module &m, unsigned optLevel,
                               llvm::TargetMachine *tm);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_LOWERING_H
