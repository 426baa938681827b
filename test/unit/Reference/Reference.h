//===- Reference.h - Double-precision reference for the attn ops -*- C++ -*-===//
//
// An independent, deliberately naive implementation of every attn op in
// double precision, written straight from the formulas (docs/design.md and
// each op's description in include/attn/Dialect/Attn*Ops.td) with plain
// nested loops. It is the oracle the compiled kernels are checked against,
// so it has no MLIR/LLVM dependency and no cleverness.
//
// Every function checks its operand shapes and throws std::invalid_argument
// (with a message naming the operand and dims) on a mismatch.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_REFERENCE_REFERENCE_H
#define ATTN_TEST_UNIT_REFERENCE_REFERENCE_H

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace attn::ref {

/// A dense, row-major tensor of doubles.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  /// Throws std::invalid_argument on a negative dim.
  explicit Tensor(std::vector<int64_t> shape, double fill = 0.0);

  int64_t numel() const;
  int64_t rank() const;
  /// Element access by full index. Throws std::invalid_argument if the
  /// number of indices is not the rank, std::out_of_range if an index is out
  /// of bounds.
  double &at(std::initializer_list<int64_t> idx);
  double at(std::initializer_list<int64_t> idx) const;
};

/// Renders a shape as "[2, 3, 4]" (for messages).
std::string shapeToString(const std::vector<int64_t> &shape);

enum class Causal { None, TopLeft, BottomRight };

/// OutIn: nn.Linear weight [Out, In], y = x W^T.  InOut: W is [In, Out], y = x W.
enum class Layout { OutIn, InOut };

/// An optional operand mask. Keep: value != 0 keeps, otherwise the score
/// becomes -inf. Add: the value is added to the score. `values` broadcasts
/// numpy-style (right-aligned, dims of size 1 broadcast) to [B,H,Tq,Tk].
struct Mask {
  enum class Kind { None, Keep, Add } kind = Kind::None;
  Tensor values;
};

/// x [..., In] -> [..., Out]; bias (optional) is [Out].
Tensor project(const Tensor &x, const Tensor &w, const Tensor *bias,
               Layout layout);
/// [B, T, h*D] -> [B, h, T, D]  (x.view(B, T, h, D).transpose(1, 2)).
Tensor splitHeads(const Tensor &x, int64_t numHeads);
/// [B, h, T, D] -> [B, T, h*D]  (inverse of splitHeads).
Tensor mergeHeads(const Tensor &x);
/// [B,H,Tq,D] x [B,Hkv,Tk,D] -> [B,H,Tq,Tk]; query head h reads kv head
/// h / (H / Hkv).
Tensor scores(const Tensor &q, const Tensor &k);
/// Elementwise s * c.
Tensor scale(const Tensor &s, double c);
/// s [B,H,Tq,Tk]. TopLeft: key j is masked (-inf) when j > i. BottomRight:
/// masked when j > i + Tk - Tq. A Keep mask sets -inf where its value is 0;
/// an Add mask is added. Causal and operand mask may both apply.
Tensor mask(const Tensor &s, Causal causal, const Mask &m);

/// Elementwise c * tanh(s / c) (attn.softcap). Throws unless c is positive
/// and finite.
Tensor softcap(const Tensor &s, double c);

/// A sliding window: key j of row i is kept iff d(i) - left <= j (when
/// `left` is given) and j <= d(i) + right (when `right` is given); a bound
/// left out is unbounded. `align` is the diagonal when no causal kind is
/// given (TopLeft: d(i) = i, BottomRight: d(i) = i + L[b] - Tq); None means
/// the default, BottomRight.
struct Window {
  std::optional<int64_t> left, right;
  Causal align = Causal::BottomRight;
};

/// Everything attn.mask applies, for scores s [B,H,Tq,Tk]. With
/// L[b] = keyLengths[b] clamped to [0, Tk] (Tk when no lengths are given)
/// and the diagonal d(i) = i (top_left) or i + L[b] - Tq (bottom_right) of
/// the causal kind when there is one, else of the window's align:
///
///   z = s - slope[b,h] * |i + L[b] - Tq - j|        (alibiSlopes)
///         + M[b,h,i,j]                              (Add mask, broadcast)
///   y = z where every keep rule holds, -inf elsewhere:
///         j < L[b]                                  (keyLengths)
///         j <= d(i)                                 (causal)
///         d(i) - left <= j <= d(i) + right          (window, per bound)
///         M[b,h,i,j] != 0                           (Keep mask)
///
/// slope[b,h] is alibiSlopes[h] for [H] slopes, alibiSlopes[b,h] for [B,H].
struct MaskOptions {
  Causal causal = Causal::None;
  const Mask *mask = nullptr;
  const Tensor *alibiSlopes = nullptr;              ///< [H] or [B,H]
  std::optional<std::vector<int64_t>> keyLengths; ///< [B], clamped to [0, Tk]
  std::optional<Window> window;
};
Tensor mask(const Tensor &s, const MaskOptions &o);

/// Softmax over the last dim (subtracting the row max); a row that is
/// entirely -inf gives all zeros (not NaN).
Tensor softmax(const Tensor &x);

/// Rotary pairing: RotateHalf pairs (k, k + R/2), Interleaved (2k, 2k + 1).
enum class RopeStyle { RotateHalf, Interleaved };

/// attn.rope: x [B,H,T,D], cos/sin [T,R/2] or [B,T,R/2] with R <= D. For
/// each pair (p, q) of index k, c = cos[(b,) t, k], s = sin[(b,) t, k]:
///   y_p = x_p * c - x_q * s,   y_q = x_q * c + x_p * s;
/// dims e >= R are copied.
Tensor rope(const Tensor &x, const Tensor &cos, const Tensor &sin,
            RopeStyle style);

/// ceil((double)rate * 2^24). Throws std::invalid_argument unless
/// 0 <= rate <= 1.
uint32_t dropoutThreshold(float rate);
/// The counter-based dropout generator (splitmix64 finalizer):
///   z = (uint64_t)seed + (flatIndex + 1) * 0x9E3779B97F4A7C15  (wrapping)
///   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
///   z =  z ^ (z >> 31)
///   keep iff (z >> 40) >= threshold
bool dropoutKeep(int64_t seed, uint64_t flatIndex, uint32_t threshold);
/// Kept elements become p * (1 / (1 - rate)) (the factor computed in double
/// from the float rate), dropped ones 0. flatIndex is the row-major index
/// into p. rate == 0 returns p unchanged; rate == 1 returns zeros.
Tensor dropout(const Tensor &p, float rate, int64_t seed);

/// [B,H,Tq,Tk] x [B,Hkv,Tk,Dv] -> [B,H,Tq,Dv]; GQA head mapping as in scores.
Tensor weightedSum(const Tensor &p, const Tensor &v);

struct SdpaOptions {
  std::optional<double> scale; ///< default 1/sqrt(D)
  Causal causal = Causal::None;
  const Mask *mask = nullptr;
  float dropoutRate = 0;
  int64_t dropoutSeed = 0;
  std::optional<double> softcap;                    ///< c > 0: c*tanh(s/c)
  const Tensor *alibiSlopes = nullptr;              ///< [H] or [B,H]
  std::optional<std::vector<int64_t>> keyLengths; ///< [B]
  std::optional<Window> window;
};

/// dropout(softmax(mask(softcap(scale * Q K^T)))) V, with mask() the
/// MaskOptions form (slopes, key lengths, window, causal, operand mask).
/// Dropout (if rate > 0) is applied to the softmax output with the flat
/// index over [B,H,Tq,Tk].
Tensor sdpa(const Tensor &q, const Tensor &k, const Tensor &v,
            const SdpaOptions &o);

struct MhaWeights {
  Tensor wq, wk, wv, wo;
  const Tensor *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
  Layout layout = Layout::OutIn;
};

/// Rotary tables for mha: cos/sin [T,R/2] or [B,T,R/2].
struct RopeTables {
  Tensor cos, sin;
  RopeStyle style = RopeStyle::RotateHalf;
};

/// Q = project(xq, wq, bq), K = project(xkv, wk, bk), V = project(xkv, wv, bv);
/// Q is split into numHeads, K and V into numKvHeads; with `rope`, Q and K
/// heads are rotated (rope()); sdpa; merge; project(.., wo, bo).
Tensor mha(const Tensor &xq, const Tensor &xkv, const MhaWeights &w,
           int64_t numHeads, int64_t numKvHeads, const SdpaOptions &o,
           const RopeTables *rope = nullptr);

} // namespace attn::ref

#endif // ATTN_TEST_UNIT_REFERENCE_REFERENCE_H
