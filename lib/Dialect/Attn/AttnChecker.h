//===- AttnChecker.h - the attn verifiers' checks ---------------*- C++ -*-===//
//
// The checks every attn verifier is built from: each names the operand, the
// dim and what was expected, and a failed dim check tells the innermost
// DimMismatchListener what the op wanted (ShapeRelations uses it to find a
// shape the ops accept). Used by the op files of this folder.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_DIALECT_ATTN_ATTNCHECKER_H
#define ATTN_LIB_DIALECT_ATTN_ATTNCHECKER_H

#include "AttnShapes.h"

#include "mlir/IR/OpImplementation.h"

#include <cstdio>
#include <optional>
#include <string>

namespace mlir::attn::detail {

using namespace mlir::attn::shapes;

/// A number as a user wrote it: 0.5, -0.125, inf, nan.
inline std::string fmtNum(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", d);
  return buf;
}

class Checker {
public:
  explicit Checker(Operation *op) : op(op) {}

  /// `name` must have rank `rank`; `layout` describes the dims, e.g.
  /// "[B,H,Tq,D]".
  LogicalResult rank(StringRef name, Value v, int64_t rank, StringRef layout) {
    int64_t r = tensorType(v).getRank();
    if (r == rank)
      return success();
    return op->emitOpError() << "operand '" << name << "' must have rank "
                             << rank << " " << layout << ", got rank " << r;
  }

  /// Dim `i` of `name` (called `what`) must equal `expected`, described by
  /// `because`.
  LogicalResult dim(StringRef name, Value v, int64_t i, StringRef what,
                    int64_t expected, const Twine &because) {
    int64_t d = dimOf(v, i);
    if (agree(d, expected))
      return success();
    DimMismatchListener::notify(v, i, expected);
    return op->emitOpError()
           << "operand '" << name << "' " << what << " (dim " << i << ") is "
           << dimStr(d) << ", expected " << dimStr(expected) << " ("
           << because.str() << ")";
  }

  LogicalResult sameElementType(StringRef name, Value v, StringRef refName,
                                Value ref) {
    Type a = tensorType(v).getElementType(), b = tensorType(ref).getElementType();
    if (a == b)
      return success();
    return op->emitOpError() << "operand '" << name << "' element type " << a
                             << " does not match '" << refName
                             << "' element type " << b;
  }

  /// Query heads must be a multiple of key/value heads (MHA, GQA, MQA).
  LogicalResult headsDivide(StringRef qName, int64_t h, StringRef kName,
                            int64_t hkv) {
    if (isDyn(h) || isDyn(hkv) || (hkv > 0 && h % hkv == 0))
      return success();
    return op->emitOpError()
           << "'" << qName << "' heads H = " << h
           << " is not a multiple of '" << kName << "' heads Hkv = " << hkv
           << " (H % Hkv must be 0)";
  }

  LogicalResult positiveFinite(StringRef attr, std::optional<APFloat> v) {
    if (!v)
      return success();
    double d = v->convertToDouble();
    if (std::isfinite(d) && d > 0)
      return success();
    return op->emitOpError() << "attribute '" << attr
                             << "' must be a positive finite number, got " << fmtNum(d);
  }

  /// A dropout seed means nothing without a dropout rate.
  LogicalResult seedNeedsRate(Attribute seed, Attribute rate) {
    if (!seed || rate)
      return success();
    return op->emitOpError()
           << "attribute 'dropout_seed' is given without 'dropout_rate'";
  }

  /// A run-time seed operand (`seed(%s)`) replaces the seed attribute
  /// `seedAttrName` and, like it, needs a dropout rate.
  LogicalResult runtimeSeed(Value seed, Attribute seedAttr, StringRef seedAttrName,
                            Attribute rate, bool needsRate = true) {
    if (!seed)
      return success();
    if (seedAttr)
      return op->emitOpError() << "takes its seed either as 'seed(...)' or as attribute '"
                               << seedAttrName << "', not both";
    if (needsRate && !rate)
      return op->emitOpError() << "'seed(...)' is given without 'dropout_rate'";
    return success();
  }

  LogicalResult dropoutRate(StringRef attr, std::optional<APFloat> v) {
    if (!v)
      return success();
    double d = v->convertToDouble();
    if (d >= 0 && d < 1)
      return success();
    return op->emitOpError() << "attribute '" << attr
                             << "' must be in [0, 1), got " << fmtNum(d);
  }

  /// A mask operand: i1 (keep where true) or the scores' float type
  /// (additive), numpy-broadcastable to `target` = [B,H,Tq,Tk].
  LogicalResult mask(Value mask, Type scoresElt, ArrayRef<int64_t> target) {
    RankedTensorType t = tensorType(mask);
    Type e = t.getElementType();
    if (!e.isInteger(1) && e != scoresElt)
      return op->emitOpError()
             << "operand 'mask' element type " << e
             << " must be i1 (keep mask) or the scores' element type "
             << scoresElt << " (additive mask)";
    int64_t r = t.getRank();
    if (r > 4)
      return op->emitOpError() << "operand 'mask' has rank " << r
                               << ", expected at most 4 to broadcast to "
                                  "[B,H,Tq,Tk]";
    static const char *names[] = {"B", "H", "Tq", "Tk"};
    for (int64_t i = 0; i < r; ++i) {
      int64_t md = t.getDimSize(i), td = target[4 - r + i];
      if (md == 1 || agree(md, td))
        continue;
      return op->emitOpError()
             << "operand 'mask' dim " << i << " is " << md
             << ", not broadcastable to " << names[4 - r + i] << " = "
             << dimStr(td) << " (the mask must broadcast to [B,H,Tq,Tk] = ["
             << dimStr(target[0]) << "," << dimStr(target[1]) << ","
             << dimStr(target[2]) << "," << dimStr(target[3]) << "])";
    }
    return success();
  }

  /// ALiBi slopes: f32 [H] or [B,H].
  LogicalResult slopes(Value v, int64_t b, int64_t h) {
    int64_t r = tensorType(v).getRank();
    if (r == 1)
      return dim("alibi_slopes", v, 0, "heads", h, "query heads H");
    if (r == 2) {
      if (failed(dim("alibi_slopes", v, 0, "batch", b, "batch B")) ||
          failed(dim("alibi_slopes", v, 1, "heads", h, "query heads H")))
        return failure();
      return success();
    }
    return op->emitOpError() << "operand 'alibi_slopes' must have rank 1 [H] "
                                "or 2 [B,H], got rank "
                             << r;
  }

  /// Key lengths: [B] integers.
  LogicalResult keyLengths(Value v, int64_t b) {
    if (failed(rank("key_lengths", v, 1, "[B]")))
      return failure();
    return dim("key_lengths", v, 0, "length", b, "batch B");
  }

  /// Attention sinks: [H] f32, one per query head.
  LogicalResult sinks(Value v, int64_t h) {
    if (failed(rank("sinks", v, 1, "[H]")))
      return failure();
    return dim("sinks", v, 0, "heads", h, "query heads H");
  }

  /// The window's own alignment, when written, must be the causal kind.
  LogicalResult windowAlign(WindowAttr window, CausalKindAttr causal) {
    if (!window || !causal || !window.getAlign() ||
        *window.getAlign() == causal.getValue())
      return success();
    return op->emitOpError()
           << "window align = " << stringifyCausalKind(*window.getAlign())
           << " differs from causal = "
           << stringifyCausalKind(causal.getValue())
           << " (a window on a causal op uses the causal diagonal; drop "
              "'align' or make them agree)";
  }

  /// A `diagonal` operand shifts the top-left causal diagonal: it needs
  /// that kind, and no bounded window.
  /// A diagonal operand moves the top-left diagonal that causal and a
  /// window measure from: some rule must use it, and it must be top-left.
  LogicalResult diagonalShift(Value diagonal, CausalKindAttr causal, WindowAttr window) {
    if (!diagonal)
      return success();
    bool windowed = window && !window.isUnbounded();
    std::optional<CausalKind> kind;
    if (causal)
      kind = causal.getValue();
    if (!causal && !windowed)
      return op->emitOpError()
             << "operand 'diagonal' needs a rule that uses the diagonal: causal = "
                "#attn.causal<top_left> or a bounded window (it moves that diagonal "
                "to i + diagonal), got neither";
    if (keepRuleDiagonal(kind, window) != CausalKind::top_left)
      return op->emitOpError()
             << "operand 'diagonal' moves the top-left diagonal, got "
             << (causal ? "causal = bottom_right"
                        : "a window aligned bottom_right (write align = top_left)");
    return success();
  }

  /// RoPE tables `cos`/`sin` for heads of shape `x` = [B, heads, T, D] and
  /// element type `xe` (named `xName`).
  LogicalResult ropeTables(StringRef xName, ArrayRef<int64_t> x, Type xe,
                           Value cos, Value sin) {
    if (cos.getType() != sin.getType())
      return op->emitOpError() << "operands 'cos' and 'sin' must have the same "
                                  "type, got "
                               << cos.getType() << " and " << sin.getType();
    RankedTensorType t = tensorType(cos);
    if (!t.getElementType().isF32() && t.getElementType() != xe)
      return op->emitOpError() << "operand 'cos' element type "
                               << t.getElementType() << " must be f32 or the '"
                               << xName << "' element type " << xe;
    int64_t r = t.getRank();
    if (r != 2 && r != 3)
      return op->emitOpError() << "operand 'cos' must have rank 2 [T,R/2] or 3 "
                                  "[B,T,R/2], got rank "
                               << r;
    if (r == 3 && failed(dim("cos", cos, 0, "batch", x[0],
                             "batch B of '" + xName + "'")))
      return failure();
    if (failed(dim("cos", cos, r - 2, "length", x[2],
                   "length T, dim 2 of '" + xName + "'")))
      return failure();
    int64_t half = t.getDimSize(r - 1), d = x[3];
    if (isDyn(half))
      return op->emitOpError() << "operand 'cos' rotary half-width (dim "
                               << r - 1 << ") must be static";
    if (half < 1)
      return op->emitOpError() << "operand 'cos' rotary half-width (dim "
                               << r - 1 << ") is " << half
                               << ", expected >= 1 (R = 2 * " << half
                               << " rotary dims)";
    if (isDyn(d))
      return op->emitOpError() << "operand '" << xName
                               << "' head dim (dim 3) must be static for rope";
    if (2 * half > d)
      return op->emitOpError() << "rotary dims R = 2 * " << half << " = "
                               << 2 * half << " exceed the head dim D = " << d
                               << " of '" << xName << "' (R must be <= D)";
    return success();
  }

  /// The declared result type must be the one the operands determine.
  LogicalResult result(ArrayRef<int64_t> expected, Type elt, unsigned index = 0) {
    auto res = cast<RankedTensorType>(op->getResult(index).getType());
    RankedTensorType want = RankedTensorType::get(expected, elt);
    if (res.getElementType() != elt)
      return op->emitOpError() << "result element type " << res.getElementType()
                               << " does not match the operands' element type "
                               << elt;
    if (res.getRank() != (int64_t)expected.size())
      return op->emitOpError() << "result rank is " << res.getRank()
                               << ", expected " << expected.size()
                               << " (inferred result type " << want << ")";
    for (auto [i, d] : llvm::enumerate(res.getShape()))
      if (d != expected[i])
        return op->emitOpError() << "result dim " << i << " is " << dimStr(d)
                                 << ", expected " << dimStr(expected[i])
                                 << " (inferred result type " << want << ")";
    return success();
  }

private:
  Operation *op;
};

inline std::optional<APFloat> optF(FloatAttr a) {
  if (!a)
    return std::nullopt;
  return a.getValue();
}

/// The `scale` attribute, else 1/sqrt(D) of `query`; nullopt for a dynamic D.
std::optional<double> effectiveScale(FloatAttr scale, Value query);

/// Q [B,H,Tq,D] against K [B,Hkv,Tk,D].
LogicalResult verifyQueryKey(Checker &c, Value q, Value k);

/// The operand and attribute rules attn.sdpa and attn.sdpa_partial share.
template <typename OpTy>
LogicalResult verifySdpaOperands(OpTy op, Checker &c) {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  if (failed(verifyQueryKey(c, q, k)) ||
      failed(c.rank("value", v, 4, "[B,Hkv,Tk,Dv]")) ||
      failed(c.sameElementType("value", v, "query", q)) ||
      failed(c.dim("value", v, 0, "batch", dimOf(q, 0), "batch B of 'query'")) ||
      failed(c.dim("value", v, 1, "heads", dimOf(k, 1), "heads Hkv of 'key'")) ||
      failed(c.dim("value", v, 2, "length", dimOf(k, 2), "length Tk of 'key'")))
    return failure();
  Type elt = tensorType(q).getElementType();
  if (Value m = op.getMask())
    if (failed(c.mask(m, elt, scoresShape(q, k))))
      return failure();
  if (Value s = op.getAlibiSlopes())
    if (failed(c.slopes(s, dimOf(q, 0), dimOf(q, 1))))
      return failure();
  if (Value l = op.getKeyLengths())
    if (failed(c.keyLengths(l, dimOf(q, 0))))
      return failure();
  return success(succeeded(c.positiveFinite("scale", optF(op.getScaleAttr()))) &&
                 succeeded(c.positiveFinite("softcap", optF(op.getSoftcapAttr()))) &&
                 succeeded(c.windowAlign(op.getWindowAttr(), op.getCausalAttr())));
}

/// The score and mask function regions of attn.sdpa and attn.sdpa_partial.
template <typename OpTy>
LogicalResult verifyFunctions(OpTy op) {
  if (failed(verifyModFunction(op, op.getScoreMod(), ModKind::Score, op.getCaptures(),
                               "score_mod")) ||
      failed(verifyModFunction(op, op.getMaskMod(), ModKind::Mask, op.getCaptures(),
                               "mask_mod")))
    return failure();
  if (!op.getCaptures().empty() && !op.hasScoreMod() && !op.hasMaskMod())
    return op.emitOpError() << "has captures but no 'score_mod' or 'mask_mod' function to "
                               "read them";
  return success();
}

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_ATTNCHECKER_H
