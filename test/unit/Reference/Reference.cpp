//===- Reference.cpp - Double-precision reference for the attn ops --------===//
//
// Written straight from the formulas with plain nested loops; see
// Reference.h. Deliberately nothing clever here: this is the oracle.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace attn::ref {

namespace {

const double kNegInf = -std::numeric_limits<double>::infinity();

[[noreturn]] void fail(const std::string &msg) {
  throw std::invalid_argument(msg);
}

/// Checks that the data vector holds exactly numel() elements (the fields are
/// public, so a caller can build an inconsistent tensor).
void requireConsistent(const char *fn, const char *operand, const Tensor &t) {
  for (int64_t d : t.shape)
    if (d < 0)
      fail(std::string(fn) + ": operand '" + operand +
           "' has a negative dim in shape " + shapeToString(t.shape));
  if (static_cast<int64_t>(t.data.size()) != t.numel())
    fail(std::string(fn) + ": operand '" + operand + "' has " +
         std::to_string(t.data.size()) + " elements but shape " +
         shapeToString(t.shape));
}

void requireRank(const char *fn, const char *operand, const Tensor &t,
                 int64_t rank) {
  requireConsistent(fn, operand, t);
  if (t.rank() != rank)
    fail(std::string(fn) + ": operand '" + operand + "' must have rank " +
         std::to_string(rank) + ", got shape " + shapeToString(t.shape));
}

void requireDim(const char *fn, const std::string &what, int64_t got,
                int64_t expected) {
  if (got != expected)
    fail(std::string(fn) + ": " + what + " is " + std::to_string(got) +
         ", expected " + std::to_string(expected));
}

/// Row-major offset of (a, b, c, d) in a rank-4 tensor.
int64_t off4(const Tensor &t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return ((a * t.shape[1] + b) * t.shape[2] + c) * t.shape[3] + d;
}

/// Row-major offset of (a, b, c) in a rank-3 tensor.
int64_t off3(const Tensor &t, int64_t a, int64_t b, int64_t c) {
  return (a * t.shape[1] + b) * t.shape[2] + c;
}

/// Checks H % Hkv == 0 and returns the group size H / Hkv.
int64_t groupSize(const char *fn, int64_t h, int64_t hkv) {
  if (hkv <= 0)
    fail(std::string(fn) + ": number of key/value heads must be positive, "
                           "got " +
         std::to_string(hkv));
  if (h % hkv != 0)
    fail(std::string(fn) + ": number of query heads " + std::to_string(h) +
         " is not a multiple of the number of key/value heads " +
         std::to_string(hkv));
  return h / hkv;
}

} // namespace

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

Tensor::Tensor(std::vector<int64_t> s, double fill) : shape(std::move(s)) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      fail("Tensor: negative dimension in shape " + shapeToString(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      fail("Tensor: shape " + shapeToString(shape) + " is too large");
    n *= d;
  }
  data.assign(static_cast<size_t>(n), fill);
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t Tensor::rank() const { return static_cast<int64_t>(shape.size()); }

static int64_t flatIndexOf(const Tensor &t,
                           std::initializer_list<int64_t> idx) {
  if (static_cast<int64_t>(idx.size()) != t.rank())
    fail("Tensor::at: " + std::to_string(idx.size()) +
         " indices for a tensor of rank " + std::to_string(t.rank()));
  int64_t flat = 0, dim = 0;
  for (int64_t i : idx) {
    if (i < 0 || i >= t.shape[dim])
      throw std::out_of_range("Tensor::at: index " + std::to_string(i) +
                              " out of range for dim " + std::to_string(dim) +
                              " of shape " + shapeToString(t.shape));
    flat = flat * t.shape[dim] + i;
    ++dim;
  }
  if (static_cast<size_t>(flat) >= t.data.size())
    throw std::out_of_range("Tensor::at: data has fewer elements than shape " +
                            shapeToString(t.shape));
  return flat;
}

double &Tensor::at(std::initializer_list<int64_t> idx) {
  return data[flatIndexOf(*this, idx)];
}

double Tensor::at(std::initializer_list<int64_t> idx) const {
  return data[flatIndexOf(*this, idx)];
}

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

Tensor project(const Tensor &x, const Tensor &w, const Tensor *bias,
               Layout layout) {
  requireConsistent("project", "x", x);
  if (x.rank() < 1)
    fail("project: operand 'x' must have rank >= 1, got shape " +
         shapeToString(x.shape));
  requireRank("project", "w", w, 2);
  int64_t in = x.shape.back();
  int64_t out = layout == Layout::OutIn ? w.shape[0] : w.shape[1];
  int64_t wIn = layout == Layout::OutIn ? w.shape[1] : w.shape[0];
  requireDim("project",
             std::string("input dim of 'w' (") +
                 (layout == Layout::OutIn ? "out_in" : "in_out") +
                 " layout, shape " + shapeToString(w.shape) + ")",
             wIn, in);
  if (bias) {
    requireRank("project", "bias", *bias, 1);
    requireDim("project", "dim 0 of 'bias'", bias->shape[0], out);
  }
  std::vector<int64_t> outShape = x.shape;
  outShape.back() = out;
  Tensor y(outShape);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.rank(); ++d)
    rows *= x.shape[d];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0.0;
      for (int64_t i = 0; i < in; ++i) {
        double wv = layout == Layout::OutIn ? w.data[o * in + i]
                                            : w.data[i * out + o];
        acc += x.data[r * in + i] * wv;
      }
      if (bias)
        acc += bias->data[o];
      y.data[r * out + o] = acc;
    }
  }
  return y;
}

Tensor splitHeads(const Tensor &x, int64_t numHeads) {
  requireRank("splitHeads", "x", x, 3);
  if (numHeads <= 0)
    fail("splitHeads: num_heads must be positive, got " +
         std::to_string(numHeads));
  int64_t b = x.shape[0], t = x.shape[1], width = x.shape[2];
  if (width % numHeads != 0)
    fail("splitHeads: num_heads " + std::to_string(numHeads) +
         " does not divide the width " + std::to_string(width));
  int64_t d = width / numHeads;
  Tensor y({b, numHeads, t, d});
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < numHeads; ++h)
      for (int64_t ti = 0; ti < t; ++ti)
        for (int64_t di = 0; di < d; ++di)
          y.data[off4(y, bi, h, ti, di)] = x.data[off3(x, bi, ti, h * d + di)];
  return y;
}

Tensor mergeHeads(const Tensor &x) {
  requireRank("mergeHeads", "x", x, 4);
  int64_t b = x.shape[0], h = x.shape[1], t = x.shape[2], d = x.shape[3];
  Tensor y({b, t, h * d});
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t ti = 0; ti < t; ++ti)
        for (int64_t di = 0; di < d; ++di)
          y.data[off3(y, bi, ti, hi * d + di)] = x.data[off4(x, bi, hi, ti, di)];
  return y;
}

Tensor scores(const Tensor &q, const Tensor &k) {
  requireRank("scores", "q", q, 4);
  requireRank("scores", "k", k, 4);
  int64_t b = q.shape[0], h = q.shape[1], tq = q.shape[2], d = q.shape[3];
  int64_t hkv = k.shape[1], tk = k.shape[2];
  requireDim("scores", "batch dim 0 of 'k'", k.shape[0], b);
  requireDim("scores", "head dim 3 of 'k'", k.shape[3], d);
  int64_t group = groupSize("scores", h, hkv);
  Tensor s({b, h, tq, tk});
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t j = 0; j < tk; ++j) {
          double acc = 0.0;
          for (int64_t di = 0; di < d; ++di)
            acc += q.data[off4(q, bi, hi, i, di)] *
                   k.data[off4(k, bi, hi / group, j, di)];
          s.data[off4(s, bi, hi, i, j)] = acc;
        }
  return s;
}

Tensor scale(const Tensor &s, double c) {
  requireConsistent("scale", "s", s);
  Tensor y = s;
  for (double &v : y.data)
    v *= c;
  return y;
}

Tensor mask(const Tensor &s, Causal causal, const Mask &m) {
  MaskOptions o;
  o.causal = causal;
  o.mask = &m;
  return mask(s, o);
}

Tensor mask(const Tensor &s, const MaskOptions &o) {
  requireRank("mask", "s", s, 4);
  int64_t b = s.shape[0], h = s.shape[1], tq = s.shape[2], tk = s.shape[3];
  Mask none;
  const Mask &m = o.mask ? *o.mask : none;

  // Broadcast the operand mask: right-align its shape against [B,H,Tq,Tk];
  // a dim of size 1 broadcasts (stride 0).
  int64_t mstride[4] = {0, 0, 0, 0};
  if (m.kind != Mask::Kind::None) {
    const Tensor &mv = m.values;
    if (mv.rank() > 4)
      fail("mask: mask operand of shape " + shapeToString(mv.shape) +
           " has rank > 4 and does not broadcast to " +
           shapeToString(s.shape));
    requireConsistent("mask", "mask", mv);
    int64_t stride = 1;
    for (int64_t md = mv.rank() - 1, sd = 3; md >= 0; --md, --sd) {
      int64_t dim = mv.shape[md];
      if (dim == s.shape[sd])
        mstride[sd] = dim == 1 ? 0 : stride;
      else if (dim == 1)
        mstride[sd] = 0;
      else
        fail("mask: mask operand of shape " + shapeToString(mv.shape) +
             " does not broadcast to " + shapeToString(s.shape) + " (dim " +
             std::to_string(md) + " is " + std::to_string(dim) +
             ", expected 1 or " + std::to_string(s.shape[sd]) + ")");
      stride *= dim;
    }
  }

  // ALiBi slopes: [H] (slope[h]) or [B,H] (slope[b,h]).
  const Tensor *slopes = o.alibiSlopes;
  if (slopes) {
    requireConsistent("mask", "alibi_slopes", *slopes);
    if (slopes->rank() == 1)
      requireDim("mask", "dim 0 of 'alibi_slopes' ([H])", slopes->shape[0], h);
    else if (slopes->rank() == 2) {
      requireDim("mask", "dim 0 of 'alibi_slopes' ([B,H])", slopes->shape[0], b);
      requireDim("mask", "dim 1 of 'alibi_slopes' ([B,H])", slopes->shape[1], h);
    } else
      fail("mask: operand 'alibi_slopes' must have rank 1 [H] or 2 [B,H], got "
           "shape " +
           shapeToString(slopes->shape));
  }
  if (o.keyLengths)
    requireDim("mask", "length of 'key_lengths' ([B])",
               static_cast<int64_t>(o.keyLengths->size()), b);
  if (o.window) {
    if (o.window->left && *o.window->left < 0)
      fail("mask: window left bound " + std::to_string(*o.window->left) +
           " is negative");
    if (o.window->right && *o.window->right < 0)
      fail("mask: window right bound " + std::to_string(*o.window->right) +
           " is negative");
  }
  // The diagonal: the causal kind's, else the window's align (bottom-right
  // by default).
  bool topLeft = o.causal == Causal::TopLeft ||
                 (o.causal == Causal::None && o.window &&
                  o.window->align == Causal::TopLeft);

  Tensor y = s;
  for (int64_t bi = 0; bi < b; ++bi) {
    int64_t len = tk;
    if (o.keyLengths)
      len = std::min<int64_t>(std::max<int64_t>((*o.keyLengths)[bi], 0), tk);
    for (int64_t hi = 0; hi < h; ++hi) {
      double slope = 0.0;
      if (slopes)
        slope = slopes->rank() == 1 ? slopes->data[hi]
                                    : slopes->data[bi * h + hi];
      for (int64_t i = 0; i < tq; ++i) {
        int64_t diag = topLeft ? i : i + len - tq;
        for (int64_t j = 0; j < tk; ++j) {
          // Biases first.
          double v = s.data[off4(s, bi, hi, i, j)];
          double mval = 0.0;
          if (m.kind != Mask::Kind::None)
            mval = m.values.data[bi * mstride[0] + hi * mstride[1] +
                                 i * mstride[2] + j * mstride[3]];
          if (slopes)
            v -= slope * std::fabs(static_cast<double>(i + len - tq - j));
          if (m.kind == Mask::Kind::Add)
            v += mval;
          // Then the keep rules.
          bool keep = j < len;
          if (o.causal != Causal::None && j > diag)
            keep = false;
          if (o.window && o.window->left && j < diag - *o.window->left)
            keep = false;
          if (o.window && o.window->right && j > diag + *o.window->right)
            keep = false;
          if (m.kind == Mask::Kind::Keep && mval == 0.0)
            keep = false;
          y.data[off4(y, bi, hi, i, j)] = keep ? v : kNegInf;
        }
      }
    }
  }
  return y;
}

Tensor softcap(const Tensor &s, double c) {
  requireConsistent("softcap", "s", s);
  if (!(c > 0.0) || !std::isfinite(c))
    fail("softcap: cap must be a positive finite number, got " +
         std::to_string(c));
  Tensor y = s;
  for (double &v : y.data)
    v = c * std::tanh(v / c);
  return y;
}

Tensor rope(const Tensor &x, const Tensor &cos, const Tensor &sin,
            RopeStyle style) {
  requireRank("rope", "x", x, 4);
  requireConsistent("rope", "cos", cos);
  requireConsistent("rope", "sin", sin);
  if (cos.shape != sin.shape)
    fail("rope: 'cos' of shape " + shapeToString(cos.shape) +
         " and 'sin' of shape " + shapeToString(sin.shape) + " differ");
  int64_t b = x.shape[0], h = x.shape[1], t = x.shape[2], d = x.shape[3];
  bool perSequence = cos.rank() == 3;
  if (cos.rank() != 2 && !perSequence)
    fail("rope: operand 'cos' must have rank 2 [T,R/2] or 3 [B,T,R/2], got "
         "shape " +
         shapeToString(cos.shape));
  if (perSequence)
    requireDim("rope", "batch dim 0 of 'cos'", cos.shape[0], b);
  requireDim("rope", "length dim of 'cos'", cos.shape[cos.rank() - 2], t);
  int64_t half = cos.shape.back(), r = 2 * half;
  if (half < 1 || r > d)
    fail("rope: rotary dims R = " + std::to_string(r) +
         " must be in [2, D = " + std::to_string(d) + "]");
  Tensor y = x;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t ti = 0; ti < t; ++ti)
        for (int64_t k = 0; k < half; ++k) {
          int64_t p = style == RopeStyle::RotateHalf ? k : 2 * k;
          int64_t q = style == RopeStyle::RotateHalf ? k + half : 2 * k + 1;
          int64_t tab = perSequence ? off3(cos, bi, ti, k) : ti * half + k;
          double c = cos.data[tab], sn = sin.data[tab];
          double xp = x.data[off4(x, bi, hi, ti, p)];
          double xq = x.data[off4(x, bi, hi, ti, q)];
          y.data[off4(y, bi, hi, ti, p)] = xp * c - xq * sn;
          y.data[off4(y, bi, hi, ti, q)] = xq * c + xp * sn;
        }
  return y;
}

Tensor softmax(const Tensor &x) {
  requireConsistent("softmax", "x", x);
  if (x.rank() < 1)
    fail("softmax: operand must have rank >= 1, got shape " +
         shapeToString(x.shape));
  int64_t n = x.shape.back();
  Tensor y(x.shape);
  if (n == 0)
    return y;
  int64_t rows = x.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    double mx = kNegInf;
    bool hasNan = false;
    for (int64_t j = 0; j < n; ++j) {
      double v = x.data[r * n + j];
      if (std::isnan(v))
        hasNan = true;
      else if (v > mx)
        mx = v;
    }
    if (hasNan)
      mx = std::numeric_limits<double>::quiet_NaN(); // propagate NaN
    else if (mx == kNegInf) {
      for (int64_t j = 0; j < n; ++j)
        y.data[r * n + j] = 0.0;
      continue;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j)
      sum += std::exp(x.data[r * n + j] - mx);
    for (int64_t j = 0; j < n; ++j)
      y.data[r * n + j] = std::exp(x.data[r * n + j] - mx) / sum;
  }
  return y;
}

uint32_t dropoutThreshold(float rate) {
  if (!(rate >= 0.0f && rate <= 1.0f))
    fail("dropout: rate must be in [0, 1], got " + std::to_string(rate));
  return static_cast<uint32_t>(
      std::ceil(static_cast<double>(rate) * 16777216.0 /* 2^24 */));
}

bool dropoutKeep(int64_t seed, uint64_t flatIndex, uint32_t threshold) {
  uint64_t z = static_cast<uint64_t>(seed) +
               (flatIndex + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return (z >> 40) >= threshold;
}

Tensor dropout(const Tensor &p, float rate, int64_t seed) {
  uint32_t threshold = dropoutThreshold(rate);
  double factor = 1.0 / (1.0 - static_cast<double>(rate));
  requireConsistent("dropout", "p", p);
  Tensor y(p.shape);
  for (int64_t idx = 0; idx < p.numel(); ++idx)
    y.data[idx] = dropoutKeep(seed, static_cast<uint64_t>(idx), threshold)
                      ? p.data[idx] * factor
                      : 0.0;
  return y;
}

Tensor weightedSum(const Tensor &p, const Tensor &v) {
  requireRank("weightedSum", "p", p, 4);
  requireRank("weightedSum", "v", v, 4);
  int64_t b = p.shape[0], h = p.shape[1], tq = p.shape[2], tk = p.shape[3];
  int64_t hkv = v.shape[1], dv = v.shape[3];
  requireDim("weightedSum", "batch dim 0 of 'v'", v.shape[0], b);
  requireDim("weightedSum", "key dim 2 of 'v'", v.shape[2], tk);
  int64_t group = groupSize("weightedSum", h, hkv);
  Tensor o({b, h, tq, dv});
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < tk; ++j)
            acc += p.data[off4(p, bi, hi, i, j)] *
                   v.data[off4(v, bi, hi / group, j, e)];
          o.data[off4(o, bi, hi, i, e)] = acc;
        }
  return o;
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

Tensor sdpa(const Tensor &q, const Tensor &k, const Tensor &v,
            const SdpaOptions &o) {
  requireRank("sdpa", "q", q, 4);
  requireRank("sdpa", "k", k, 4);
  requireRank("sdpa", "v", v, 4);
  requireDim("sdpa", "batch dim 0 of 'v'", v.shape[0], k.shape[0]);
  requireDim("sdpa", "head dim 1 of 'v'", v.shape[1], k.shape[1]);
  requireDim("sdpa", "key dim 2 of 'v'", v.shape[2], k.shape[2]);
  double c = o.scale ? *o.scale
                     : 1.0 / std::sqrt(static_cast<double>(q.shape[3]));
  Tensor s = scores(q, k);
  s = scale(s, c);
  if (o.softcap)
    s = softcap(s, *o.softcap);
  MaskOptions mo;
  mo.causal = o.causal;
  mo.mask = o.mask;
  mo.alibiSlopes = o.alibiSlopes;
  mo.keyLengths = o.keyLengths;
  mo.window = o.window;
  s = mask(s, mo);
  Tensor p = softmax(s);
  if (o.dropoutRate > 0.0f)
    p = dropout(p, o.dropoutRate, o.dropoutSeed);
  else
    (void)dropoutThreshold(o.dropoutRate); // validates (e.g. rejects NaN)
  return weightedSum(p, v);
}

Tensor mha(const Tensor &xq, const Tensor &xkv, const MhaWeights &w,
           int64_t numHeads, int64_t numKvHeads, const SdpaOptions &o,
           const RopeTables *rope) {
  requireRank("mha", "xq", xq, 3);
  requireRank("mha", "xkv", xkv, 3);
  Tensor q = project(xq, w.wq, w.bq, w.layout);
  Tensor k = project(xkv, w.wk, w.bk, w.layout);
  Tensor v = project(xkv, w.wv, w.bv, w.layout);
  Tensor qh = splitHeads(q, numHeads);
  Tensor kh = splitHeads(k, numKvHeads);
  Tensor vh = splitHeads(v, numKvHeads);
  if (rope) {
    qh = attn::ref::rope(qh, rope->cos, rope->sin, rope->style);
    kh = attn::ref::rope(kh, rope->cos, rope->sin, rope->style);
  }
  Tensor a = sdpa(qh, kh, vh, o);
  return project(mergeHeads(a), w.wo, w.bo, w.layout);
}

} // namespace attn::ref
