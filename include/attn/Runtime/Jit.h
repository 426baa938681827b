//===- Jit.h - compile an attn function once, call it many times -*- C++ -*-===//
#ifndef ATTN_RUNTIME_JIT_H
#define ATTN_RUNTIME_JIT_H

#include "attn/PipelineOptions.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/PackedCall.h"
#include "attn/Runtime/Shard.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class DialectRegistry;
} // namespace mlir

namespace attn::runtime {

/// Registers everything a JIT context needs: the attn dialect, upstream
/// dialects and their LLVM translations and bufferisation interfaces.
void registerJitDialects(mlir::DialectRegistry &registry);

/// reference: attn-reference-pipeline; cpu: attn-cpu-pipeline; gpu:
/// attn-gpu-pipeline on the first CUDA device; gpu-schedule: the GPU kernel
/// schedule run on the CPU (attn-gpu-schedule-pipeline).
enum class Pipeline { Reference, Cpu, Gpu, GpuSchedule, Ring };
llvm::StringRef pipelineName(Pipeline p);
/// "reference" | "cpu" | "gpu" | "gpu-schedule" | "ring"; an error names the
/// accepted values.
llvm::Expected<Pipeline> parsePipeline(llvm::StringRef name);

/// The function a tool runs or compiles: `requested` when given (it must
/// exist and have a body), else the module's first public function with a
/// body. The error says which was missing ("no function named 'f'", "no
/// public function").
llvm::Expected<std::string> entryFunctionName(mlir::ModuleOp module,
                                              llvm::StringRef requested);

/// Checks that inputs with these shapes are consistent with each other for
/// function `entry` of `module`: the function is cloned with its arguments
/// given the inputs' static shapes, every attn op's result type is
/// re-inferred, and the attn verifiers run, so that, e.g., a K of length 7
/// with a V of length 9 (both `?` in the signature) is an error naming the
/// operand and dim instead of an out-of-bounds read. Functions with other
/// ops whose types depend on the arguments are not checked.
llvm::Error checkInputShapes(mlir::ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<struct HostTensor> inputs);
/// The same check from the inputs' shapes alone. When every result of the
/// function is an argument or an attn op's result, `resultShapes` (if given)
/// receives the results' shapes for these inputs; otherwise it is left
/// empty.
llvm::Error checkInputShapes(mlir::ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<std::vector<int64_t>> shapes,
                             std::vector<std::vector<int64_t>> *resultShapes);

/// Whether checkInputShapes can check `entry` for inputs of these shapes:
/// false when its arity or ranks differ, or when an op other than an attn
/// op has types that depend on the arguments (checkInputShapes then accepts
/// every shape).
bool inputShapesCheckable(mlir::ModuleOp module, llvm::StringRef entry,
                          llvm::ArrayRef<std::vector<int64_t>> shapes);

/// The key length Tk that bounds a key-lengths argument, and the op it
/// feeds (for messages).
struct KeyLengthBound {
  int64_t keyLen;
  std::string op;

  /// Empty when `len` lies in [0, keyLen]; otherwise the problem, e.g.
  /// "element 1 is 6, outside [0, Tk = 5] of 'attn.sdpa'" (the caller
  /// prefixes the input's name).
  std::string check(int64_t element, int64_t len) const;
};

/// For each argument of `entry`, given the inputs' shapes: when the argument
/// is the key_lengths operand of an attn op (sdpa, sdpa_partial, sdpa_grad,
/// mask, mha), directly or through tensor.extract_slice / tensor.cast,
/// whose Tk is known for these shapes, that Tk (the smallest when it feeds
/// several ops).
std::vector<std::optional<KeyLengthBound>>
keyLengthBounds(mlir::ModuleOp module, llvm::StringRef entry,
                llvm::ArrayRef<std::vector<int64_t>> shapes);

/// A block table argument of an attn.gather_pages (or of a paged
/// attn.sdpa_varlen) and what bounds its entries (for messages, the op).
struct BlockTableCheck {
  int64_t tableArg;
  int64_t lengthsArg = -1; ///< the gather's lengths argument; -1: none
  int64_t numBlocks = 0, blockSize = 1;
  std::string op;
  /// The lengths argument is cu_seqlens_k [B+1] (attn.sdpa_varlen): b's
  /// length is [b+1] − [b], and one outside [0, MB·BS] is an error too.
  bool cumulativeLengths = false;

  /// Empty when each block sequence b uses (the first ceil(len[b] / BS),
  /// len clamped to [0, MB·BS]; all MB without lengths) holds an id in
  /// [0, numBlocks); otherwise the first problem, e.g. "element [1, 4] is
  /// 57, outside [0, NB = 40) of 'attn.gather_pages'" (the caller
  /// prefixes the input's name).
  std::string check(int64_t batch, int64_t maxBlocks,
                    llvm::function_ref<int64_t(int64_t b, int64_t i)> entry,
                    llvm::function_ref<int64_t(int64_t b)> length) const;
};

/// The block tables of `entry`'s attn.gather_pages and paged
/// attn.sdpa_varlen ops that are arguments,
/// given the inputs' shapes; a gather whose lengths are computed inside the
/// function (not an argument) is not checked (its kernel still clamps).
std::vector<BlockTableCheck> blockTableChecks(mlir::ModuleOp module, llvm::StringRef entry,
                                              llvm::ArrayRef<std::vector<int64_t>> shapes);

/// Checks the values of inputs whose range the kernels rely on: every key
/// length must lie in [0, Tk] and every block id a sequence uses in
/// [0, NB). The compiled code clamps (it never reads out
/// of bounds), but a length outside the range is a caller's error: this
/// names the argument, the element, its value and the bound.
llvm::Error checkInputValues(mlir::ModuleOp module, llvm::StringRef entry,
                             llvm::ArrayRef<struct HostTensor> inputs);

/// f32 lanes of the widest vector unit of this CPU that the CPU kernel
/// uses: 16 with AVX-512F, 8 otherwise (AVX2, or any other host).
int64_t hostVectorWidth();

/// What the cpu pipeline takes from the CPU it compiles for.
struct CpuTarget {
  int64_t vectorWidth = 8; ///< f32 lanes of the widest vector unit
  bool hasBf16Dot = false; ///< AVX512-BF16 (vdpbf16ps) with AVX-512F
  /// vdpbf16ps multiplies bf16 faster per flop than f32 FMAs do: AMD Zen 4
  /// and later. Intel cores retire one every two cycles, half the f32 FMA
  /// rate (bench/NOTES.md, 2026-12-03: Half-precision peaks), so their bf16
  /// keeps the f32 widening path.
  bool prefersBf16Dot = false;
  /// AVX2: the 8-lane packing transposes take x86vector's AVX2 sequence,
  /// whose vblendps is inline assembly (a CPU without AVX keeps the
  /// project's shuffles, which LLVM legalises for it).
  bool hasAvx2 = false;
  /// AMX-BF16 and AMX-TILE (tdpbf16ps on 16 × 32 bf16 tiles: Intel
  /// Sapphire Rapids and later).
  bool hasAmx = false;
  /// AMX-FP16 as well (tdpfp16ps: Intel Granite Rapids and later): f16
  /// tiles take AMX too.
  bool hasAmxFp16 = false;
  /// The code may use the AMX registers without asking: hostCpuTarget()
  /// asks Linux for them once per process (arch_prctl
  /// ARCH_REQ_XCOMP_PERM) and sets it when granted; a target named for
  /// ahead-of-time code leaves it false, since the program that links the
  /// objects must ask (docs/cpu.md, "AMX tiles").
  bool amxPermitted = false;
  /// This process asked for the AMX state and Linux refused it.
  bool amxRefused = false;
};

/// The target of LLVM CPU `cpu` (e.g. "znver4") with the features
/// `hasFeature` reports ("avx512f", "avx512bf16", "amx-bf16", "amx-tile").
CpuTarget cpuTargetOf(llvm::StringRef cpu, llvm::function_ref<bool(llvm::StringRef)> hasFeature);

/// This machine's.
CpuTarget hostCpuTarget();

/// The worker threads a cpu kernel runs on: `requested` when positive, else
/// the first number of OMP_NUM_THREADS, else one per CPU this process may
/// run on (its affinity mask). The JIT compiles this count into the cpu
/// pipeline's parallel loops.
int64_t workerThreads(int64_t requested);

/// Peak resident set size of this process (VmHWM, since the last reset of
/// the mark), in MiB; -1 where /proc is unavailable.
double peakRssMiB();

/// The runtime's element type of an MLIR element type (f32, f16, bf16, i1,
/// i8, i32, i64); nullopt for any other.
std::optional<ElementType> elementTypeOf(mlir::Type elementType);

/// The dtype and shape of one argument or result; dynamic dims are -1.
struct TensorSpec {
  ElementType dtype;
  std::vector<int64_t> shape;
  std::string str() const; ///< e.g. "float32[2,?,64]"
};

/// How CompiledFunction::compile compiles: the options every way of
/// compiling shares (attn/PipelineOptions.h: tiles, vector width, bf16 dots,
/// threads, the optimisation level, attn-raise, GPU device residency and
/// TF32), and the JIT's own.
struct JitOptions : attn::PipelineOptions {
  /// Keep the object file so that dumpObject() can write it.
  bool keepObject = false;
  /// attn-gpu-pipeline: the target chip (empty: the device's, e.g. sm_90)
  /// and what the gpu.binary holds (isa: PTX, JIT-compiled by the driver).
  std::string gpuChip;
  std::string gpuFormat = "isa";
  /// ring: the ranks P each attn.ring sdpa is sharded over (attn-shard);
  /// the function's signature becomes one rank's share.
  int64_t ranks = 1;
};

/// Why CompiledFunction::compile failed.
enum class CompileErrorKind {
  /// No function of that name with a body.
  NoFunction,
  /// The function's signature cannot be exchanged (unranked or non-tensor
  /// arguments, element types without a .npy dtype).
  UnsupportedSignature,
  /// A pipeline option is out of the range its pass accepts.
  BadOption,
  /// The pipeline needs a device this machine does not have.
  NoDevice,
  /// The IR did not lower (the message holds the pass diagnostics).
  LoweringFailed,
  /// The lowered code did not JIT-compile.
  JitFailed,
};

/// The error compile() returns: a kind to act on and the message.
class CompileError : public llvm::ErrorInfo<CompileError> {
public:
  static char ID;
  CompileError(CompileErrorKind kind, std::string message)
      : kind(kind), message(std::move(message)) {}
  CompileErrorKind getKind() const { return kind; }
  const std::string &getMessage() const { return message; }
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  CompileErrorKind kind;
  std::string message;
};

/// A call whose compiled code could not allocate a buffer: the call was
/// abandoned (its own buffers freed), nothing crashed.
class AllocationError : public llvm::ErrorInfo<AllocationError> {
public:
  static char ID;
  explicit AllocationError(uint64_t bytes) : bytes(bytes) {}
  /// The size of the allocation that failed.
  uint64_t getBytes() const { return bytes; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  uint64_t bytes;
};

/// "1.5 GiB", "512.0 MiB", "12.0 KiB", "100 bytes".
std::string formatBytes(uint64_t bytes);

/// Memory a new allocation may still take, in bytes: the smaller of
/// MemAvailable (/proc/meminfo) and what the address-space limit
/// (RLIMIT_AS) leaves; nullopt where neither is known.
std::optional<uint64_t> availableMemoryBytes();

/// The largest [B,H,Tq,Tk] scores buffer the reference lowering materialises
/// for function `entry` called with inputs of these shapes (f32 compute:
/// 4·B·H·Tq·Tk bytes, over its sdpa, mha and scores ops); nullopt when the
/// function has none or the shapes are not all known.
std::optional<uint64_t>
referenceScoresBytes(mlir::ModuleOp module, llvm::StringRef entry,
                     llvm::ArrayRef<std::vector<int64_t>> shapes);

/// A function of an attn module, lowered through a pipeline and JIT-compiled
/// for the host CPU (its name and features). call() is thread-safe.
class CompiledFunction {
public:
  ~CompiledFunction();

  /// Compiles `entry` of `module` (which is cloned, not modified).
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(mlir::ModuleOp module, llvm::StringRef entry, Pipeline pipeline,
          const JitOptions &options = {});

  const std::vector<TensorSpec> &argSpecs() const { return args; }
  const std::vector<TensorSpec> &resultSpecs() const { return results; }
  /// ring: how each argument / result is split over the ranks (attn-shard's
  /// attn.shard), nullopt where it is whole on every rank.
  const std::vector<std::optional<ShardSpec>> &argShards() const { return argShard; }
  const std::vector<std::optional<ShardSpec>> &resultShards() const { return resultShard; }

  /// Checks arity, dtypes, ranks and static dims of `inputs`.
  llvm::Error checkInputs(llvm::ArrayRef<HostTensor> inputs) const;
  /// What one call cost, when asked for.
  struct CallStats {
    /// Peak resident set (VmHWM, MiB) right after the compiled code returned,
    /// before its results were copied out; -1 where /proc is unavailable.
    double peakRssAfterKernelMiB = -1;
    /// gpu: milliseconds the kernels ran (CUDA events), -1 otherwise.
    double gpuKernelMs = -1;
  };
  /// Checks arity, dtypes, ranks and static dims of inputs given by dtype
  /// and shape.
  llvm::Error checkArgs(llvm::ArrayRef<ElementType> dtypes,
                        llvm::ArrayRef<std::vector<int64_t>> shapes) const;

  /// One result as the compiled code returned it; valid only inside the
  /// sink of callContiguous (the buffer is freed right after).
  struct ResultBuffer {
    const uint8_t *data; ///< the first element
    llvm::ArrayRef<int64_t> shape;
    llvm::ArrayRef<int64_t> strides; ///< in elements
  };
  /// The lowest-level call: each input is a contiguous row-major buffer of
  /// the given shape (checked with checkArgs against argSpecs, dtypes taken
  /// as the specs'); each result is handed to `sink`, then freed. With
  /// JitOptions::deviceResident the inputs and results are device
  /// buffers.
  ///
  /// `destinations` (none, or one per result) are where the caller would
  /// like the results: dense row-major buffers of the given shapes that
  /// overlap no input. A cpu function (attn-result-destinations) writes a
  /// result it allocates itself straight into its destination when the
  /// shape is the result's; the sink then sees `data` equal to the
  /// destination and has nothing to copy. Other pipelines, and results the
  /// code does not allocate, ignore them.
  llvm::Error callContiguous(
      llvm::ArrayRef<const void *> inputs,
      llvm::ArrayRef<std::vector<int64_t>> shapes,
      llvm::function_ref<void(size_t index, const ResultBuffer &)> sink,
      CallStats *stats = nullptr,
      llvm::ArrayRef<ResultDestination> destinations = {}) const;

  /// Runs the function; results are copied into fresh host tensors.
  llvm::Expected<std::vector<HostTensor>>
  call(llvm::ArrayRef<HostTensor> inputs, CallStats *stats = nullptr) const;

  /// Runs the function into `outputs`: tensors it holds from an earlier
  /// call (same dtype, the result's shape) are written in place, without a
  /// copy where the code allocates the result itself (the cpu pipeline);
  /// the others are replaced. For a caller that runs a function many times
  /// (attn-run --repeat).
  llvm::Error callInto(llvm::ArrayRef<HostTensor> inputs, std::vector<HostTensor> &outputs,
                       CallStats *stats = nullptr) const;

  /// Whether the compiled entry takes a destination per result
  /// (attn-result-destinations; the cpu pipeline, unless the module calls
  /// its own entry).
  bool takesResultDestinations() const { return resultDestinations; }

  /// The fused kernel's tiling as the pipeline used it (its defaults where
  /// JitOptions left them unset); all unset for the reference pipeline.
  /// The GPU schedule may still halve tile-k (then tile-q) per op to fit
  /// shared memory.
  struct Tiling {
    std::optional<int64_t> tileQ, tileK, vectorWidth;
    /// cpu: the bf16-dot option the pipeline ran with (bf16 prefill tiles
    /// that qualify multiply on AVX512-BF16 dot products).
    std::optional<bool> bf16Dot = std::nullopt;
    /// cpu: the amx option (bf16 prefill tiles that qualify multiply on
    /// AMX tiles), and whether they ran as vector code (emulate-amx).
    std::optional<bool> amx = std::nullopt;
    bool emulatedAmx = false;
  };
  const Tiling &tiling() const { return usedTiling; }

  /// The ops the pipeline left to the unfused reference lowering, one line
  /// each: "file:line:col: attn.sdpa not fused: <reason>; ..." (cpu
  /// pipeline).
  const std::vector<std::string> &unfusedOps() const { return unfused; }

  /// The host CPU name and feature string the code was compiled for.
  const std::string &targetCpu() const { return cpu; }
  const std::string &targetFeatures() const { return features; }
  /// Writes the JIT'd object file (needs JitOptions::keepObject).
  void dumpObject(llvm::StringRef path) const;

private:
  CompiledFunction() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*packed)(void **) = nullptr;
  Pipeline pipeline = Pipeline::Reference;
  bool deviceResident = false;
  bool resultDestinations = false;
  std::vector<TensorSpec> args, results;
  std::vector<std::optional<ShardSpec>> argShard, resultShard;
  std::vector<std::string> unfused;
  Tiling usedTiling;
  std::string cpu, features;
};

/// Copies a strided tensor (strides in elements) into another of the same
/// shape; one memcpy when both are row-major contiguous.
void copyStrided(const uint8_t *src, llvm::ArrayRef<int64_t> srcStrides,
                 uint8_t *dst, llvm::ArrayRef<int64_t> dstStrides,
                 llvm::ArrayRef<int64_t> shape, size_t elementSize);

/// The row-major strides (in elements) of a shape.
std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_JIT_H
