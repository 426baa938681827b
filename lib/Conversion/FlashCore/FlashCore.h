//===- FlashCore.h - what every fused attention kernel shares ---*- C++ -*-===//
//
// The FlashAttention core the CPU kernel (AttnToLoops), the GPU kernel
// schedule (AttnToGpu) and the reference lowering (AttnToLinalg) build on,
// so that each rule is written once:
//
//   SdpaProblem    what one attn.sdpa asks for (dims, GQA group, scale·log2e,
//                  causal kind, window, diagonal, softcap, mask kind, ALiBi
//                  and key-length presence), read once from the op, with
//                  the reason when a kernel cannot take it;
//   SdpaBuffers    its operands as buffers, run-time dims and the output;
//   KernelBuilder   scalar and vector arithmetic, loads/stores, loops, the
//                  one exp2 (NaN in, NaN out; -inf in, 0 out) and the one
//                  tanh built from it;
//   KeyVisibility  which keys a query row of batch row b sees: the key
//                  length, causal and window rules as one interval per row
//                  [firstKey(i), keyEnd(i)), per tile of rows (the K/V tile
//                  loop bounds) and per element;
//   softcapScores / AlibiBias   the softcap and the ALiBi bias on scores in
//                  log2 units;
//   maskOperandDims / maskIndices   numpy broadcasting of the mask operand;
//   clampDiagonalShift   the range a diagonal operand's shift means;
//   TileState      the per-Q-tile online-softmax state (running max m,
//                  running sum l, accumulator) a caller can merge.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_FLASHCORE_FLASHCORE_H
#define ATTN_LIB_CONVERSION_FLASHCORE_FLASHCORE_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/MathExtras.h"

#include <limits>
#include <optional>
#include <string>

namespace mlir::attn::flash {

inline constexpr double kLog2E = llvm::numbers::log2e;

/// The mask operand's kind.
enum class MaskKind { None, Keep, Additive };

/// What a kernel can take beyond the common case (f32, no dropout, static
/// head counts and head dims).
struct KernelSupport {
  StringRef name;            ///< "CPU kernel", "GPU kernel": for reasons
  bool lowPrecision = false; ///< f16/bf16 operands (computed in f32)
  bool modFunctions = false; ///< score and mask functions (ModFunctions.h)
  /// K and V read in place from paged caches (attn.gather_pages operands).
  bool pagedKeys = false;
  /// Attention sinks (attn.sdpa's `sinks`: the running max and sum of each
  /// row start at the sink's).
  bool sinks = false;
  /// attn.sdpa's dropout on the probabilities (Dropout.h's generator).
  bool dropout = false;
  /// int8 K and V read in place (attn.dequantize operands), their scales
  /// applied to the scores and the probabilities.
  bool quantizedKeys = false;
};

/// K and V as blocks of paged caches: the operands of the attn.gather_pages
/// ops the sdpa's K and V come from, when the kernel reads the blocks in
/// place (SdpaProblem::paged).
struct PagedKeys {
  Value keyCache, valueCache; ///< [NB, BS, Hkv, D] and [NB, BS, Hkv, Dv]
  Value table;                ///< [B, MB] i32/i64 block ids
  KvLayout layout = KvLayout::nhd; ///< [NB, BS, Hkv, D] or [NB, Hkv, BS, D]
};

/// int8 K and V with one scale per (batch row, K/V head, key): the operands
/// of the attn.dequantize ops the sdpa's K and V come from, when the kernel
/// reads the int8 rows in place (SdpaProblem::quantized). With paged K/V
/// the dequantized tensors are the caches: a key's row and scale are then
/// at SdpaBuffers::keyRow's indices in both.
struct QuantizedKeys {
  Value keys, values; ///< [B, Hkv, Tk, D] and [B, Hkv, Tk, Dv] i8 / f8E4M3FN (or caches)
  /// [B, Hkv, Tk] f32 (or [NB, BS, Hkv] / [NB, Hkv, BS]), or rank 0 (one
  /// scale for the tensor).
  Value keyScales, valueScales;
};

struct KernelBuilder;

/// What one attn.sdpa asks for, read once from the op.
struct SdpaProblem {
  Operation *op = nullptr; ///< the attn.sdpa, attn.sdpa_partial or attn.sdpa_grad
  Value query, key, value, mask, alibiSlopes, keyLengths; ///< its operands
  RankedTensorType queryType, keyType, valueType, resultType;
  /// attn.sdpa_partial: the [B,H,Tq] f32 log-sum-exp result (null for sdpa).
  RankedTensorType lseType;
  RankedTensorType maskType; ///< null without a mask
  Type elementType;
  int64_t heads = 0, kvHeads = 0, d = 0, dv = 0;
  int64_t group = 1; ///< query heads per K/V head (GQA)
  double scale = 1.0, scaleLog2 = kLog2E; ///< scale and scale·log2(e)
  std::optional<CausalKind> causal;
  /// The diagonal d(i) the causal and window rules use: the causal kind,
  /// else the window's align, else bottom_right.
  CausalKind diagonal = CausalKind::bottom_right;
  /// attn.sdpa_partial's run-time shift s of the top-left diagonal
  /// (d(i) = i + s; causal, no window), else null.
  Value diagonalShift;
  /// The bounded sides of the sliding window (nullopt: that side, or the
  /// whole window, is unbounded). A bound beyond any possible Tk is dropped.
  std::optional<int64_t> windowLeft, windowRight;
  std::optional<double> softcap; ///< c in c·tanh(s/c)
  /// attn.sdpa's dropout (rate > 0; Dropout.h), else nullopt.
  std::optional<float> dropoutRate;
  int64_t dropoutSeed = 0;
  Value runtimeSeed; ///< the tensor<i64> seed operand; null: dropoutSeed
  MaskKind maskKind = MaskKind::None;
  RankedTensorType slopesType;     ///< ALiBi slopes [H] or [B,H]; null without
  RankedTensorType keyLengthsType; ///< key lengths [B] i32/i64; null without
  /// The score and mask functions of an attn.sdpa (null without) and the
  /// captures they read.
  Region *scoreMod = nullptr, *maskMod = nullptr;
  /// attn.sdpa_grad's derivative of the score function by the score.
  Region *scoreModGrad = nullptr;
  ValueRange captures;
  /// K and V gathered from paged caches by attn.gather_pages with one
  /// block table, read in place (KernelSupport::pagedKeys): the gathers'
  /// lengths, if any, are the sdpa's key lengths, so no key past a length
  /// is read. Null when K and V are plain tensors.
  std::optional<PagedKeys> paged;
  /// K and V dequantized from int8 by attn.dequantize, read in place
  /// (KernelSupport::quantizedKeys): s_ij = scale_k[j]·(q_i·k_j) and
  /// P_ij·scale_v[j] weigh V's int8 row j. Null when K and V are floats. A
  /// kernel that takes it only for some tiles resets it for the others
  /// (then the attn.dequantize ops build the float tensors).
  std::optional<QuantizedKeys> quantized;
  Value sinks; ///< attn.sdpa's [H] f32 attention sinks; null without

  bool hasAlibi() const { return bool(slopesType); }
  bool hasKeyLengths() const { return bool(keyLengthsType); }
  /// Whether any rule needs the diagonal d(i) (causal or a bounded window).
  bool usesDiagonal() const { return causal || windowLeft || windowRight; }

  /// Reads `op`; fails with `reason` set when a kernel with `support`
  /// cannot take it.
  static FailureOr<SdpaProblem> analyze(SdpaOp op, KernelSupport support,
                                        std::string &reason);
  /// The same for an attn.sdpa_partial (lseType set).
  static FailureOr<SdpaProblem> analyze(SdpaPartialOp op, KernelSupport support,
                                        std::string &reason);
  /// The forward problem of an attn.sdpa_grad (resultType is dQ's type).
  static FailureOr<SdpaProblem> analyze(SdpaGradOp op, KernelSupport support,
                                        std::string &reason);
  bool isPartial() const { return bool(lseType); }
};

/// The problem's operands as buffers and its run-time dims, plus the freshly
/// allocated [B, H, Tq, Dv] output.
struct SdpaBuffers {
  Value q, k, v, mask, out;
  Value lse; ///< attn.sdpa_partial's [B, H, Tq] log-sum-exp; null for sdpa
  Value slopes, keyLengths; ///< null without ALiBi / key lengths
  Value sinks;              ///< [H] f32; null without attention sinks
  Value dropoutSeed;        ///< i64, the generator's seed; null without dropout
  SmallVector<Value> captures; ///< the score/mask functions' captures
  Value diagonalShift;      ///< index; null without a diagonal operand
  Value batch, tq, tk;      ///< index values
  /// Paged K/V (SdpaProblem::paged): k and v are the caches, `table` the
  /// block ids; `blockSize` and `numBlocks` index values. Null otherwise.
  Value table, blockSize, numBlocks;
  KvLayout layout = KvLayout::nhd;
  /// Quantised K/V (SdpaProblem::quantized): k and v are the int8 or fp8
  /// tensors (or caches), these their f32 scales, indexed as keyRow (or
  /// rank 0: one scale; rowScale). Null otherwise.
  Value keyScales, valueScales;

  /// The indices of row `key` of K/V head `kvHead` of batch row `batch` in
  /// k or v, without the column: {batch, kvHead, key}, or for paged caches
  /// {block, key mod BS, kvHead} ({block, kvHead, key mod BS} for the hnd
  /// layout) with block = table[batch, key / BS]
  /// clamped into [0, NB) (whatever the table holds, no read leaves the
  /// cache; run-time checks report a bad id before the call).
  SmallVector<Value, 4> keyRow(KernelBuilder &b, Value batch, Value kvHead,
                               Value key) const;
  /// keyRow with the column appended.
  SmallVector<Value, 4> keyAt(KernelBuilder &b, Value batch, Value kvHead, Value key,
                              Value col) const;
  /// The factor of quantised row `key` of `data` (k or v) read by
  /// KernelBuilder::vloadF32: its scale in `scales` (keyScales or
  /// valueScales) at keyRow's indices, or the one scale of a per-tensor
  /// (rank 0) array; times 2^8 for fp8, which vloadF32 reads as the
  /// value · 2^−8.
  Value rowScale(KernelBuilder &b, Value data, Value scales, Value batch, Value kvHead,
                 Value key) const;
};

/// `row` (the indices of a row, as SdpaBuffers::keyRow gives) with the
/// column `col` appended.
inline SmallVector<Value, 4> withColumn(ArrayRef<Value> row, Value col) {
  SmallVector<Value, 4> at(row);
  at.push_back(col);
  return at;
}

/// Converts the operands to buffers (of the type `bufferType` gives each
/// tensor type) and allocates the output at the builder's insertion point.
SdpaBuffers materializeBuffers(OpBuilder &b, const SdpaProblem &p,
                               function_ref<MemRefType(RankedTensorType)> bufferType);

/// The output buffer as the op's result tensor.
Value outputTensor(OpBuilder &b, const SdpaProblem &p, const SdpaBuffers &bufs);
/// The op's results: the output, and for attn.sdpa_partial the lse.
SmallVector<Value> resultTensors(OpBuilder &b, const SdpaProblem &p, const SdpaBuffers &bufs);

/// What an attn.sdpa_grad's kernels read and write beside SdpaBuffers
/// (whose `out` is dQ).
struct GradBuffers {
  Value o, dO, lse; ///< [B,H,Tq,Dv], [B,H,Tq,Dv], [B,H,Tq]: the op's operands
  Value dk, dv;     ///< [B,Hkv,Tk,D], [B,Hkv,Tk,Dv]: fresh, 64-byte aligned
};
/// O, dO and the lse of `op` as buffers (of the type `bufferType` gives),
/// and dK, dV allocated, at the builder's insertion point.
GradBuffers materializeGradBuffers(OpBuilder &b, SdpaGradOp op, const SdpaBuffers &s,
                                   function_ref<MemRefType(RankedTensorType)> bufferType);
/// dQ, dK, dV as the attn.sdpa_grad's result tensors.
SmallVector<Value> gradResultTensors(OpBuilder &b, const SdpaProblem &p, const SdpaBuffers &s,
                                     const GradBuffers &gb);

/// Scalar and vector IR-building helpers bound to one builder and location.
/// `width` is the vector length of vec()/splat()/vload(); arithmetic on
/// values works on scalars and vectors alike.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  int64_t width = 1;

  Type f32() { return b.getF32Type(); }
  VectorType vec() { return VectorType::get({width}, f32()); }

  // Index arithmetic.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minI(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxI(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmpI(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value lt(Value x, Value y) { return cmpI(arith::CmpIPredicate::slt, x, y); }
  Value le(Value x, Value y) { return cmpI(arith::CmpIPredicate::sle, x, y); }
  Value gt(Value x, Value y) { return cmpI(arith::CmpIPredicate::sgt, x, y); }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value notI(Value x) {
    return arith::XOrIOp::create(b, loc, x,
                                 arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  }
  Value ceilDiv(Value x, Value d) { return arith::CeilDivSIOp::create(b, loc, x, d); }
  Value ceilDiv(Value x, int64_t d) { return ceilDiv(x, idx(d)); }

  // Float constants and arithmetic (scalar or vector operands).
  Value f(double v) {
    return arith::ConstantOp::create(b, loc, f32(), b.getF32FloatAttr(v));
  }
  Value splat(double v) { return constantLike(vec(), v); }
  Value negInf() { return f(-std::numeric_limits<double>::infinity()); }
  /// A constant of type `t` (f32 or a vector of f32) holding `v`.
  Value constantLike(Type t, double v);
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, loc, x, y); }
  /// x > y ? x : y: one max instruction on x86 (fmax's NaN and signed-zero
  /// rules cost four). A NaN operand may or may not come through; callers
  /// use it where a NaN reaches the result by another path (the softmax:
  /// exp2 of a NaN score is NaN).
  Value fmaxFast(Value x, Value y) {
    return select(cmpF(arith::CmpFPredicate::OGT, x, y), x, y);
  }
  /// The sum / fmaxFast of the lanes of vector `v` as a tree of
  /// log2(width) shuffle-and-combine steps (vector.reduction without
  /// reassociation is a serial chain of width adds).
  Value sumLanes(Value v) {
    return combineLanes(v, [&](Value x, Value y) { return fadd(x, y); });
  }
  Value maxLanes(Value v) {
    return combineLanes(v, [&](Value x, Value y) { return fmaxFast(x, y); });
  }
  Value combineLanes(Value v, function_ref<Value(Value, Value)> combine);
  Value cmpF(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  /// x·y + acc: vector.fma on vectors; on scalars a multiply-add with the
  /// `contract` flag (one fma instruction where the target has it).
  Value fma(Value x, Value y, Value acc);
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value bcast(Value s) { return vector::BroadcastOp::create(b, loc, vec(), s); }
  /// The lane numbers 0, 1, ..., width - 1 as a vector of i32.
  Value laneIndices();
  /// An index value as i32 broadcast to a vector of width i32.
  Value bcastI32(Value index);

  /// The factor that normalises a row by its running sum l (f32): 1/l, and
  /// 0 where l = 0 (a row that saw no key gives 0); NaN stays NaN.
  Value inverseRowSum(Value l) {
    Value empty = cmpF(arith::CmpFPredicate::OEQ, l, f(0.0));
    return select(empty, f(0.0), fdiv(f(1.0), l));
  }

  // The online-softmax merge rule, the one place every kernel takes it
  // from (the fused tile's update, the key-split merge, merge_partial on
  // loops and on linalg, the GPU kernels): states with running maxima m_i
  // (log2 domain) merge at m = max_i m_i, and each state's sum and
  // accumulator weigh 2^(m_i - m). Where m = -inf (no state saw a key) the
  // rule subtracts 0 instead, so every weight is 2^-inf = 0, never NaN.
  /// The reference point of a merge at maximum m: m, or 0 where m = -inf.
  /// Scalar or vector.
  Value mergeReference(Value m) {
    Type t = m.getType();
    double negInf = -std::numeric_limits<double>::infinity();
    Value none = cmpF(arith::CmpFPredicate::OEQ, m, constantLike(t, negInf));
    return select(none, constantLike(t, 0.0), m);
  }
  /// A state's weight in the merge, 2^(mi - reference). States kept in
  /// natural log (a log-sum-exp) pass log2Scale = log2(e). `exp2Fn` replaces
  /// this builder's polynomial (the tensor-core kernel's ex2.approx).
  Value mergeWeight(Value mi, Value reference, double log2Scale = 1.0,
                    function_ref<Value(Value)> exp2Fn = nullptr) {
    Value x = fsub(mi, reference);
    if (log2Scale != 1.0)
      x = fmul(x, constantLike(x.getType(), log2Scale));
    return exp2Fn ? exp2Fn(x) : exp2(x);
  }

  /// 2^x and tanh(x) (x f32 or a vector of f32) as math.exp2 / math.tanh:
  /// the kernels are written with the upstream ops, and the CPU and GPU
  /// pipelines expand them (attn-expand-math) into exp2Polynomial and
  /// tanhFromExp2 after the kernels are built. A pipeline that does not
  /// expand them gets the upstream lowering (libm, libdevice).
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }
  Value tanh(Value x) { return math::TanhOp::create(b, loc, x); }

  /// 2^x with plain arithmetic, the same code on CPU and GPU: x clamped to
  /// [-127, 127], n = round(x), Cephes' degree-6 polynomial for 2^(x-n) on
  /// [-0.5, 0.5], 2^n built in the exponent bits. x <= -127 (-inf included)
  /// gives exactly 0; NaN in, NaN out.
  Value exp2Polynomial(Value x);

  /// tanh(x) from exp2Polynomial, the same code on CPU and GPU:
  /// sign(x)·(1 - 2/(2^(2|x|·log2e) + 1)), and for |x| < 1/4 (where that
  /// form cancels) its odd Taylor polynomial to x⁹. Exactly ±1 for large
  /// |x| and ±inf; NaN in, NaN out.
  Value tanhFromExp2(Value x);

  /// ln(x) of an f32 scalar with plain arithmetic (no libm or libdevice
  /// call; the GPU kernels' log-sum-exp): x = 2^e·m with m in
  /// [√½, √2), ln(m) = 2·atanh(s), s = (m−1)/(m+1), by its odd series to s⁹
  /// (|s| ≤ 0.172: within an f32 ulp). ln(0) = -inf, ln(+inf) = +inf, NaN
  /// stays NaN; x must be 0 or normal (the row sums it is for are 0 or ≥ 1).
  Value logPolynomial(Value x);

  // Memory.
  Value load(Value m, ValueRange ivs) { return memref::LoadOp::create(b, loc, m, ivs); }
  /// A load extended to f32 (from f16/bf16).
  Value loadF32(Value m, ValueRange ivs);
  void store(Value v, Value m, ValueRange ivs) {
    memref::StoreOp::create(b, loc, v, m, ivs);
  }
  Value vload(Value m, ValueRange ivs) {
    return vector::LoadOp::create(b, loc, vec(), m, ivs);
  }
  /// A vector load of `m`'s element type (f32, f16, bf16; i8 as signed
  /// integers) converted to f32; f8E4M3FN as the value · 2^−8
  /// (decodeE4M3; the row's scale carries the 2^8: SdpaBuffers::rowScale).
  Value vloadF32(Value m, ValueRange ivs);
  /// A vector of fp8 e4m3 values as f32, times 2^−8, exactly.
  Value decodeE4M3(Value bytes);
  /// Stores f32 `v` (scalar or vector) into `m`, rounded to its element
  /// type (f16/bf16: round to nearest even).
  void storeFromF32(Value v, Value m, ValueRange ivs);
  void vstore(Value v, Value m, ValueRange ivs) {
    vector::StoreOp::create(b, loc, v, m, ivs);
  }

  // Structured control flow; each body is emitted with `b` inside it.
  /// for (iv = lb; iv < ub; iv += step) body(iv)
  void loop(Value lb, Value ub, int64_t step, function_ref<void(Value)> body);
  /// A loop carrying `init`; body(iv, carried) returns the next values.
  SmallVector<Value> loopCarry(Value lb, Value ub, int64_t step, ValueRange init,
                               function_ref<SmallVector<Value>(Value, ValueRange)> body);
  /// if (cond) body()
  void ifThen(Value cond, function_ref<void()> body);
  /// if (cond) then() else otherwise()
  void ifThenElse(Value cond, function_ref<void()> then, function_ref<void()> otherwise);
  /// cond ? then() : otherwise(), each yielding one value.
  Value ifElse(Value cond, Type type, function_ref<Value()> then,
               function_ref<Value()> otherwise);
};

/// Which keys query row i of batch row b sees. With L = len[b] clamped to
/// [0, Tk] (Tk without key lengths) and the diagonal d(i) = i (top_left),
/// i + s (top_left with a diagonal operand s, clamped as
/// clampDiagonalShift says) or i + L - Tq (bottom_right),
/// key j is kept iff
///   j < L,  j <= d(i) (causal),  d(i) - left <= j,  j <= d(i) + right
/// (window sides that are bounded): one interval per row,
/// [firstKey(i), keyEnd(i)), with both ends non-decreasing in i. The i1 mask
/// operand is the only keep rule outside it.
class KeyVisibility {
public:
  /// The rules for batch row `batch` (loads and clamps len[batch] here).
  KeyVisibility(KernelBuilder &fb, const SdpaProblem &p, const SdpaBuffers &s,
                Value batch);

  /// L: the keys that exist for this batch row, in [0, Tk].
  Value keyCount() const { return length; }
  /// i + L - Tq: the bottom-right diagonal, whatever the causal kind (ALiBi
  /// measures distances from it).
  Value bottomRightDiagonal(Value row);
  /// The first key row i sees, >= 0 (may exceed keyEnd(i): nothing seen).
  Value firstKey(Value row);
  /// One past the last key row i sees, in [0, L].
  Value keyEnd(Value row);

  struct Range {
    Value begin, end; ///< [begin, end), begin <= end
  };
  /// The keys any of the rows [rowBegin, rowEnd) (non-empty) sees:
  /// [firstKey(rowBegin), keyEnd(rowEnd - 1)), empty when that is. Each
  /// end of the rows is built only when a rule depends on it.
  Range keyRange(function_ref<Value()> rowBegin, function_ref<Value()> rowEnd);
  /// The K/V tiles of `tileSize` keys that hold a key of keyRange: the tile
  /// loop's bounds, so tiles outside the window, beyond the causal limit or
  /// past the key length are never visited.
  Range tileRange(function_ref<Value()> rowBegin, function_ref<Value()> rowEnd,
                  int64_t tileSize);
  /// Whether every row of [rowBegin, rowEnd) sees every key of
  /// [key0, key0 + n) (i1): such a tile needs no per-element keep rule.
  Value allVisible(Value rowBegin, function_ref<Value()> rowEnd, Value key0, int64_t n);
  /// Whether key `key` is visible from row `row` (i1).
  Value isVisible(Value row, Value key);

private:
  KernelBuilder &fb;
  const SdpaProblem &p;
  Value length; ///< L
  Value diagonalOffset; ///< d(i) - i; set when a rule uses the diagonal
  Value bottomRightOffset; ///< L - Tq; set when a rule or ALiBi uses it
  /// The last key a row sees relative to d(i) (0 when causal), if bounded.
  std::optional<int64_t> rightReach;

  Value diagonal(Value row) { return fb.add(row, diagonalOffset); }
};

/// A diagonal operand's shift s (index) clamped to [-Tq - R, Tk + L], with
/// R the keys a row sees right of d(i) (0 when causal or unbounded) and L
/// a bounded window's left side (else 0): beyond it no row sees a key /
/// every row sees the same keys as at the bound, and the clamp keeps d(i)
/// far from overflow. The fused kernels and the reference lowering use it.
Value clampDiagonalShift(OpBuilder &b, Location loc, Value shift, Value tq, Value tk,
                         int64_t right = 0, int64_t left = 0);

/// softcap on scores in log2 units (x = log2e·s): log2e·c·tanh(s/c), i.e.
/// c'·tanh(x/c') with c' = c·log2e. `x` unchanged without a softcap.
Value softcapScores(KernelBuilder &fb, const SdpaProblem &p, Value x);

/// The ALiBi bias of head h, batch row b, in log2 units:
/// -log2e·slope[b,h]·|i + L - Tq - j|.
class AlibiBias {
public:
  /// Loads slope[h] ([H] slopes) or slope[b, h] ([B,H]).
  AlibiBias(KernelBuilder &fb, const SdpaProblem &p, const SdpaBuffers &s,
            KeyVisibility &keys, Value batch, Value head);
  /// The bias for row `row` and key `key` (f32).
  Value at(Value row, Value key);
  /// The biases for row `row` and keys key0 + lane, lane < fb.width (a
  /// vector of fb.width f32).
  Value atLanes(Value row, Value key0);

private:
  KernelBuilder &fb;
  KeyVisibility &keys;
  Value negSlopeLog2; ///< -log2e·slope (f32)
};

/// For each dim of a mask of type `maskType` (right-aligned against
/// [B, H, Tq, Tk], numpy broadcasting), the position in (b, h, q, k) it is
/// indexed by, or nullopt where a static 1 is broadcast (index 0).
SmallVector<std::optional<unsigned>> maskOperandDims(ShapedType maskType);

/// The indices into a mask of type `maskType` for element (b, h, q, k).
SmallVector<Value> maskIndices(KernelBuilder &fb, ShapedType maskType, Value b,
                               Value h, Value q, Value k);

/// The online-softmax state of one Q tile: running max m[row] and running
/// sum l[row] (log2 units), and the unnormalised accumulator acc[row][c].
/// Partial states over disjoint key ranges merge by
///   m = max(m1, m2), l = 2^(m1-m)·l1 + 2^(m2-m)·l2,
///   acc = 2^(m1-m)·acc1 + 2^(m2-m)·acc2;  O = acc / l.
struct TileState {
  Value m, l, acc; ///< buffers: [rows], [rows], layout chosen by the kernel
};

} // namespace mlir::attn::flash

#endif // ATTN_LIB_CONVERSION_FLASHCORE_FLASHCORE_H
