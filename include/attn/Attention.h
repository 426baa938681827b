//===- Attention.h - compile attention once, call it many times -*- C++ -*-===//
//
// The application-facing API of attn-mlir: hand it attn IR text, or the
// shapes and options of an sdpa / mha, and a target; get back a Kernel that
// was JIT-compiled once and is then called any number of times, from any
// number of threads at once, on caller-owned buffers (pointer + shape +
// strides). Every error — bad IR, a failed lowering, a buffer of the wrong
// dtype, rank or shape, dynamic sizes that do not fit together — comes back
// as a Status with a message; nothing here aborts or prints.
//
// This header needs only the C++ standard library; link AttnMLIR::Runtime.
//
//   attn::SdpaSpec spec;                   // q [1,8,?,64], k/v [1,8,?,64]
//   spec.heads = 8; spec.queryLen = -1; spec.keyLen = -1;
//   spec.causal = attn::Causal::TopLeft;
//   std::unique_ptr<attn::Kernel> kernel;
//   if (attn::Status s = attn::Kernel::compileSdpa(spec, {}, kernel); !s.ok())
//     die(s.message());
//   attn::Status s = kernel->call({{attn::ElementType::F32, q, {1, 8, T, 64}},
//                                  {attn::ElementType::F32, k, {1, 8, T, 64}},
//                                  {attn::ElementType::F32, v, {1, 8, T, 64}}},
//                                 {{attn::ElementType::F32, out, {1, 8, T, 64}}});
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include "attn/ElementType.h"
#include "attn/PipelineOptions.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

/// Success, or an error with a one-paragraph message.
class Status {
public:
  Status() = default; ///< success
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.msg = std::move(message);
    return s;
  }
  bool ok() const { return !failed; }
  const std::string &message() const { return msg; }

private:
  bool failed = false;
  std::string msg;
};


/// A caller-owned tensor. `strides` are in elements, one per dim; empty
/// means contiguous row-major. Inputs may have any non-negative strides
/// (non-contiguous ones are packed into a scratch copy per call); outputs
/// must not overlap themselves (a zero stride over a dim longer than 1 is
/// refused).
struct TensorRef {
  ElementType type = ElementType::F32;
  void *data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

/// The dtype and shape of a kernel's input or output; -1 is a size fixed
/// only at call time.
struct TensorInfo {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::string str() const; ///< e.g. "float32[1,8,?,64]"
};

enum class Target {
  Cpu,       ///< attn-cpu-pipeline: fused, tiled, vectorised, OpenMP threads
  Reference, ///< attn-reference-pipeline: unfused, materialises Tq x Tk
  Gpu,       ///< attn-gpu-pipeline on the first CUDA device
};

/// How Kernel::compile compiles: the target, and the pipeline options every
/// way of compiling shares (attn/PipelineOptions.h).
struct CompileOptions : PipelineOptions {
  Target target = Target::Cpu;
};

enum class Causal { None, TopLeft, BottomRight };
/// Keep: a bool mask, true = attend. Additive: a float mask added to the
/// scaled scores (-inf = masked).
enum class MaskKind { None, Keep, Additive };

/// attn.sdpa: out[B,H,Tq,Dv] = softmax(mask(scale * q k^T)) v with
/// q [B,H,Tq,D], k [B,Hkv,Tk,D], v [B,Hkv,Tk,Dv], then the optional mask,
/// ALiBi slopes [H] (f32) and key lengths [B] (i32), in that order.
/// batch, queryLen and keyLen may be -1 (given at call time).
/// What an SdpaSpec kernel computes.
///  - Output: attn.sdpa; outputs O [B,H,Tq,Dv] of the spec's type.
///  - OutputWithLse: attn.sdpa_partial, the forward a training step saves;
///    outputs O [B,H,Tq,Dv] f32 and each row's log-sum-exp [B,H,Tq] f32.
///  - Gradients: attn.sdpa_grad; inputs Q, K, V, then O (f32), dO (the
///    spec's type) and the log-sum-exp (f32), then the mask, slopes and key
///    lengths; outputs dQ, dK, dV of the spec's type (and, with maskGrad,
///    the additive mask's gradient).
/// With dropoutRate, OutputWithLse and Gradients carry the same rate and
/// seed (the backward regenerates the forward's mask).
enum class SdpaPart { Output, OutputWithLse, Gradients };

struct SdpaSpec {
  SdpaPart part = SdpaPart::Output;
  int64_t batch = 1, heads = 1, kvHeads = 0 /* 0: heads */;
  int64_t queryLen = 1, keyLen = 1;
  int64_t headDim = 64, valueDim = 0 /* 0: headDim */;
  ElementType type = ElementType::F32;
  Causal causal = Causal::None;
  double scale = 0; ///< 0: 1/sqrt(headDim)
  MaskKind mask = MaskKind::None;
  /// Broadcastable to [B,H,Tq,Tk]; empty: exactly [B,H,Tq,Tk].
  std::vector<int64_t> maskShape;
  double dropoutRate = 0;
  int64_t dropoutSeed = 0;
  /// Logit softcap c > 0: c·tanh(s/c) on the scaled scores; 0: none.
  double softcap = 0;
  /// Sliding window (attn.sdpa's #attn.window): key j of row i is kept when
  /// d(i) - windowLeft <= j <= d(i) + windowRight; -1 is unbounded on that
  /// side (both -1: no window). d(i) follows `causal` (bottom_right without).
  int64_t windowLeft = -1, windowRight = -1;
  /// An input of ALiBi slopes, f32 [H] (or [B,H] with alibiPerBatch),
  /// follows the mask (if any).
  bool alibi = false;
  /// The slopes are [B,H], one set per batch element (FlashAttention's
  /// alibi_slopes of shape (batch, nheads)), instead of [H].
  bool alibiPerBatch = false;
  /// An input of key lengths, i32 [B], follows the slopes (if any); each
  /// must lie in [0, keyLen] (call() checks it).
  bool keyLengths = false;
  /// Gradients with an additive mask: a fourth output, the mask's gradient
  /// (of the mask's shape and type; attn.sdpa_grad's grad_mask).
  bool maskGrad = false;
  /// An input of attention sinks, f32 [H], follows the key lengths (if
  /// any): attn.sdpa's `sinks`. OutputWithLse's lse then counts them, and
  /// Gradients has one more output after the others, dsinks f32 [H].
  bool sinks = false;
  /// With dropoutRate: the seed is an input instead of dropoutSeed, an
  /// int64 tensor of rank 0 after the key lengths and sinks (the ops'
  /// `seed(%s)`), so one kernel draws a fresh mask per call.
  bool runtimeSeed = false;
  /// Part Output: Q (K, V) is an input [B, Tq, H, D] ([B, Tk, Hkv, D],
  /// [B, Tk, Hkv, Dv]) tokens-first, as PyTorch holds it before
  /// `.transpose(1, 2)`, and the sdpa takes its linalg.transpose; the
  /// CPU kernel reads it in place (no packed copy of a transposed view).
  bool queryTokensFirst = false, keyTokensFirst = false, valueTokensFirst = false;
};

/// attn.mha (nn.MultiheadAttention with PyTorch's weight layout [Out,In]):
/// inputs query_input [B,Tq,E], kv_input [B,Tk,Ekv], wq [H*D,E],
/// wk [Hkv*D,Ekv], wv [Hkv*D,Ekv], wo [Eo,H*D], then, if `bias`, bq [H*D],
/// bk [Hkv*D], bv [Hkv*D], bo [Eo], then the mask, ALiBi slopes [H] (f32),
/// key lengths [B] (i32) and the dropout seed (i64, rank 0) if any;
/// output [B,Tq,Eo].
/// batch, queryLen and keyLen may be -1.
struct MhaSpec {
  int64_t batch = 1, queryLen = 1, keyLen = 1;
  int64_t embedDim = 64, kvEmbedDim = 0 /* 0: embedDim */;
  int64_t numHeads = 1, numKvHeads = 0 /* 0: numHeads */;
  int64_t headDim = 0 /* 0: embedDim / numHeads */;
  int64_t outDim = 0 /* 0: embedDim */;
  bool bias = false;
  ElementType type = ElementType::F32;
  Causal causal = Causal::None;
  double scale = 0; ///< 0: 1/sqrt(headDim)
  MaskKind mask = MaskKind::None;
  std::vector<int64_t> maskShape; ///< empty: [B,H,Tq,Tk]
  /// Logit softcap c > 0: c·tanh(s/c) on the scaled scores; 0: none.
  double softcap = 0;
  /// Sliding window (attn.sdpa's #attn.window): key j of row i is kept when
  /// d(i) - windowLeft <= j <= d(i) + windowRight; -1 is unbounded on that
  /// side (both -1: no window). d(i) follows `causal` (bottom_right without).
  int64_t windowLeft = -1, windowRight = -1;
  /// An input of ALiBi slopes, f32 [H] (or [B,H] with alibiPerBatch),
  /// follows the mask (if any).
  bool alibi = false;
  /// The slopes are [B,H], one set per batch element (FlashAttention's
  /// alibi_slopes of shape (batch, nheads)), instead of [H].
  bool alibiPerBatch = false;
  /// An input of key lengths, i32 [B], follows the slopes (if any); each
  /// must lie in [0, keyLen] (call() checks it).
  bool keyLengths = false;
  /// An input of attention sinks, f32 [numHeads], follows the key lengths
  /// (if any): attn.mha's `sinks` (one learned logit per head in each
  /// row's softmax denominator, gpt-oss).
  bool sinks = false;
  /// Dropout on the attention weights (nn.MultiheadAttention's `dropout`,
  /// in training mode): rate in [0, 1), 0 none; the mask is the counter-
  /// based generator's of `dropoutSeed`, the same as SdpaSpec's.
  double dropoutRate = 0;
  int64_t dropoutSeed = 0;
  /// With dropoutRate: the seed is an input (int64, rank 0) after the key
  /// lengths and sinks instead of dropoutSeed, so one kernel draws a fresh
  /// mask per call.
  bool runtimeSeed = false;
};

/// The attn IR (one function, @sdpa / @mha) a spec compiles; an error for
/// sizes that are neither positive nor -1 where allowed.
Status sdpaToMlir(const SdpaSpec &spec, std::string &mlir);
Status mhaToMlir(const MhaSpec &spec, std::string &mlir);

/// attn-differentiate on attn IR text: adds @f_grad for each function
/// named in `functions` (comma-separated; empty: every function that holds
/// an attn op) and returns the module as text in `out`, ready for
/// Kernel::compile(out, "f_grad", ...). An argument with the unit attribute
/// `attn.no_grad` is a constant: @f_grad returns no gradient for it
/// (docs/training.md). Errors (a parse error, an op without a rule) name
/// the op and its location.
Status differentiate(const std::string &mlir, const std::string &functions, std::string &out);

/// A compiled function. call() is const and thread-safe.
class Kernel {
public:
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  /// Parses `mlir` (any attn/func/arith/tensor IR), lowers function `entry`
  /// through the target's pipeline and JIT-compiles it for the host CPU.
  static Status compile(const std::string &mlir, const std::string &entry,
                        const CompileOptions &options,
                        std::unique_ptr<Kernel> &out);
  static Status compileSdpa(const SdpaSpec &spec, const CompileOptions &options,
                            std::unique_ptr<Kernel> &out);
  static Status compileMha(const MhaSpec &spec, const CompileOptions &options,
                           std::unique_ptr<Kernel> &out);

  const std::vector<TensorInfo> &inputs() const;
  const std::vector<TensorInfo> &outputs() const;
  /// The IR that was compiled.
  const std::string &mlir() const;

  /// Runs the kernel: reads `inputs`, writes every element of `outputs`.
  /// Checks arity, dtypes, ranks, static sizes, that the call-time sizes fit
  /// together (e.g. k and v of the same length) and that each output has
  /// exactly the result's shape — before any computation.
  Status call(const std::vector<TensorRef> &inputs,
              const std::vector<TensorRef> &outputs) const;

  /// The shapes of the outputs a call with inputs of these shapes would
  /// write (dynamic result dims resolved), after the same shape checks as
  /// call(); for callers that allocate the outputs. Thread-safe.
  Status resultShapes(const std::vector<std::vector<int64_t>> &inputShapes,
                      std::vector<std::vector<int64_t>> &shapes) const;

private:
  Kernel();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace attn

#endif // ATTN_ATTENTION_H
