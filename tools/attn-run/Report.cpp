//===- Report.cpp - attn-run's measurements and its report ----------------===//
//
// FLOP counts (full and causal-effective) from the entry's ops, error
// statistics against another pipeline and against --expect files, what
// the pipeline used (threads, ISA, features), and the text or --json
// report on stdout.
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "Diagnostics.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>


using namespace mlir;

namespace attnrun {

/// A JSON number, or null for inf and NaN (which JSON cannot hold).
static llvm::json::Value jsonNumber(double d) {
  if (std::isfinite(d))
    return d;
  return nullptr;
}

/// Static dim, or the run-time dim when `v` is an entry argument.
static std::optional<double> dimValue(Value v, int64_t i,
                                      llvm::ArrayRef<rt::HostTensor> args) {
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.isDynamicDim(i))
    return t.getDimSize(i);
  if (auto ba = dyn_cast<BlockArgument>(v))
    if (ba.getArgNumber() < args.size())
      return args[ba.getArgNumber()].shape[i];
  return std::nullopt;
}

/// Which keys each query row sees, as far as FLOPs go: causal kind, window
/// and key lengths (the i1/additive mask operand is data and not counted).
struct Visibility {
  std::optional<mlir::attn::CausalKind> causal;
  mlir::attn::WindowAttr window;
  /// Per batch row, when the key lengths are an entry argument; lengths
  /// computed inside the function count as Tk.
  std::optional<std::vector<int64_t>> keyLengths;
  /// sdpa_partial's `diagonal(%d)` (top-left rule moved to i + d), when %d
  /// is a constant.
  std::optional<int64_t> diagonalShift = std::nullopt;
};

/// The key lengths of an op whose key_lengths operand is an entry argument.
static std::optional<std::vector<int64_t>>
keyLengthValues(Value lengths, llvm::ArrayRef<rt::HostTensor> args) {
  auto ba = dyn_cast_or_null<BlockArgument>(lengths);
  if (!ba || ba.getArgNumber() >= args.size())
    return std::nullopt;
  const rt::HostTensor &t = args[ba.getArgNumber()];
  std::vector<int64_t> out;
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    out.push_back(t.getAsInt(i));
  return out;
}

/// The (batch row, query i, key j) triples a B x Tq x Tk score tensor keeps
/// visible: with L = the row's key length clamped to [0, Tk] (Tk without
/// lengths) and the diagonal d(i) = i (top_left) or i + L - Tq
/// (bottom_right; the causal kind's, else the window's align, else
/// bottom_right), row i sees keys [max(0, d - left), min(L - 1, d + right)]
/// with right = 0 under causal. B·Tq·Tk without any of these.
static double visiblePairs(double batch, double tq, double tk, const Visibility &v) {
  using mlir::attn::CausalKind;
  std::optional<int64_t> left, right;
  if (v.window) {
    left = v.window.getLeft();
    right = v.window.getRight();
  }
  if (!v.causal && !left && !right && !v.keyLengths)
    return batch * tq * tk;
  CausalKind diagonal = mlir::attn::keepRuleDiagonal(v.causal, v.window);
  if (v.causal)
    right = right ? std::min<int64_t>(*right, 0) : 0;
  double total = 0;
  for (int64_t b = 0; b < static_cast<int64_t>(batch); ++b) {
    int64_t len = static_cast<int64_t>(tk);
    if (v.keyLengths && b < static_cast<int64_t>(v.keyLengths->size()))
      len = std::clamp<int64_t>((*v.keyLengths)[b], 0, len);
    for (int64_t i = 0; i < static_cast<int64_t>(tq); ++i) {
      int64_t d = diagonal == CausalKind::top_left ? i + v.diagonalShift.value_or(0)
                                                   : i + len - static_cast<int64_t>(tq);
      int64_t lo = left ? std::max<int64_t>(0, d - *left) : 0;
      int64_t hi = right ? std::min<int64_t>(len - 1, d + *right) : len - 1;
      total += static_cast<double>(std::max<int64_t>(0, hi - lo + 1));
    }
  }
  return total;
}

/// FLOPs of one call: 2·B·H·Tq·Tk·(D + Dv) per sdpa/sdpa_partial/mha
/// attention (4·B·H·Tq·Tk·D when Dv = D), 2.5 times that per sdpa_grad
/// (FlashAttention's convention for dQ, dK, dV), 2·B·T·In·Out per
/// projection, 2·B·H·Tq·Tk·D per scores/weighted_sum. The effective count
/// takes, for an attention with a causal mask, a window or key lengths,
/// only the visible pairs (an sdpa_partial whose diagonal is not a
/// constant counts every pair). nullopt when a dim is unknown.
std::optional<FlopCount> countFlops(func::FuncOp fn,
                                    llvm::ArrayRef<rt::HostTensor> args) {
  FlopCount total;
  bool known = true;
  auto prod = [&](std::initializer_list<std::optional<double>> xs) {
    double p = 1;
    for (auto x : xs) {
      if (!x) {
        known = false;
        return 0.0;
      }
      p *= *x;
    }
    return p;
  };
  auto both = [&](double f) {
    total.full += f;
    total.effective += f;
  };
  auto attention = [&](std::optional<double> b, std::optional<double> h,
                       std::optional<double> tq, std::optional<double> tk,
                       std::optional<double> d, std::optional<double> dv,
                       const Visibility &vis, double factor = 1.0) {
    double perPair = factor * (2 * prod({h, d}) + 2 * prod({h, dv}));
    double pairs = prod({b, tq, tk});
    if (!known)
      return;
    total.full += perPair * pairs;
    total.effective += perPair * visiblePairs(*b, *tq, *tk, vis);
  };
  fn.walk([&](Operation *op) {
    if (auto s = dyn_cast<mlir::attn::SdpaOp>(op)) {
      Value q = s.getQuery(), k = s.getKey(), v = s.getValue();
      attention(dimValue(q, 0, args), dimValue(q, 1, args), dimValue(q, 2, args),
                dimValue(k, 2, args), dimValue(q, 3, args), dimValue(v, 3, args),
                Visibility{s.getCausal(), s.getWindowAttr(),
                           keyLengthValues(s.getKeyLengths(), args)});
    } else if (auto s = dyn_cast<mlir::attn::SdpaPartialOp>(op)) {
      Value q = s.getQuery(), k = s.getKey(), v = s.getValue();
      Visibility vis{s.getCausal(), s.getWindowAttr(),
                     keyLengthValues(s.getKeyLengths(), args)};
      if (Value d = s.getDiagonal()) {
        std::optional<int64_t> shift = getConstantIntValue(d);
        if (!shift) // unknown diagonal: every pair
          vis = Visibility{};
        vis.diagonalShift = shift;
      }
      attention(dimValue(q, 0, args), dimValue(q, 1, args), dimValue(q, 2, args),
                dimValue(k, 2, args), dimValue(q, 3, args), dimValue(v, 3, args), vis);
    } else if (auto g = dyn_cast<mlir::attn::SdpaGradOp>(op)) {
      Value q = g.getQuery(), k = g.getKey(), v = g.getValue();
      attention(dimValue(q, 0, args), dimValue(q, 1, args), dimValue(q, 2, args),
                dimValue(k, 2, args), dimValue(q, 3, args), dimValue(v, 3, args),
                Visibility{g.getCausal(), g.getWindowAttr(),
                           keyLengthValues(g.getKeyLengths(), args)},
                /*factor=*/2.5);
    } else if (auto m = dyn_cast<mlir::attn::MhaOp>(op)) {
      Value xq = m.getQueryInput(), xkv = m.getKvInput();
      bool outIn = m.getLayout() == mlir::attn::WeightLayout::out_in;
      auto out = [&](Value w) { return dimValue(w, outIn ? 0 : 1, args); };
      auto in = [&](Value w) { return dimValue(w, outIn ? 1 : 0, args); };
      auto b = dimValue(xq, 0, args), tq = dimValue(xq, 1, args),
           tk = dimValue(xkv, 1, args);
      double h = m.getNumHeads();
      double hkv = m.getNumKvHeads().value_or(m.getNumHeads());
      // Wq has H·D outputs, Wv Hkv·Dv.
      auto perHead = [&](std::optional<double> width, double heads) -> std::optional<double> {
        if (!width)
          return std::nullopt;
        return *width / heads;
      };
      both(2 * prod({b, tq, in(m.getWq()), out(m.getWq())}));
      both(2 * prod({b, tk, in(m.getWk()), out(m.getWk())}));
      both(2 * prod({b, tk, in(m.getWv()), out(m.getWv())}));
      both(2 * prod({b, tq, in(m.getWo()), out(m.getWo())}));
      attention(b, h, tq, tk, perHead(out(m.getWq()), h), perHead(out(m.getWv()), hkv),
                Visibility{m.getCausal(), m.getWindowAttr(),
                           keyLengthValues(m.getKeyLengths(), args)});
    } else if (auto p = dyn_cast<mlir::attn::ProjectOp>(op)) {
      auto xt = cast<RankedTensorType>(p.getInput().getType());
      double lead = 1;
      for (int64_t i = 0; i < xt.getRank(); ++i) {
        auto d = dimValue(p.getInput(), i, args);
        if (!d) {
          known = false;
          return;
        }
        lead *= *d;
      }
      bool outIn = p.getLayout() == mlir::attn::WeightLayout::out_in;
      both(2 * lead * prod({dimValue(p.getWeight(), outIn ? 0 : 1, args)}));
    } else if (isa<mlir::attn::ScoresOp, mlir::attn::WeightedSumOp>(op)) {
      Value a = op->getOperand(0), r = op->getResult(0);
      auto rt4 = cast<RankedTensorType>(r.getType());
      // scores: 2·B·H·Tq·Tk·D; weighted_sum: 2·B·H·Tq·Dv·Tk.
      std::optional<double> inner = dimValue(a, 3, args); // D or Tk
      std::optional<double> last =
          rt4.isDynamicDim(3) ? std::nullopt : std::optional<double>(rt4.getDimSize(3));
      both(2 * prod({dimValue(a, 0, args), dimValue(a, 1, args), dimValue(a, 2, args),
                     inner, last}));
    }
  });
  if (!known)
    return std::nullopt;
  return total;
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

/// max |a - b| and max |a - b| / max |b| (normwise relative error); NaN in
/// exactly one of a, b counts as an infinite error.
ErrorStats compare(const rt::HostTensor &a, const rt::HostTensor &b) {
  ErrorStats s;
  double maxRef = 0;
  for (int64_t i = 0, n = a.numel(); i < n; ++i) {
    double x = a.getAsDouble(i), y = b.getAsDouble(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y))
        s.maxAbs = INFINITY;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y)
        s.maxAbs = INFINITY;
      continue;
    }
    s.maxAbs = std::max(s.maxAbs, std::fabs(x - y));
    maxRef = std::max(maxRef, std::fabs(y));
  }
  s.maxRel = maxRef > 0 ? s.maxAbs / maxRef : s.maxAbs;
  return s;
}

/// Default tolerances per result dtype.
static std::pair<double, double> defaultTolerances(rt::ElementType d) {
  switch (d) {
  case rt::ElementType::F32:
    return {1e-5, 1e-4};
  case rt::ElementType::F64:
    return {1e-12, 1e-10};
  case rt::ElementType::F16:
    return {1e-3, 1e-3};
  case rt::ElementType::BF16:
    return {1e-2, 1e-2};
  case rt::ElementType::Bool:
  case rt::ElementType::I32:
  case rt::ElementType::I64:
  case rt::ElementType::I8:
    return {0, 0};
  case rt::ElementType::F8E4M3:
    return {0.125, 0.125}; // 3 mantissa bits
  }
  return {0, 0};
}

/// allclose: |got - expected| <= atol + rtol * |expected| everywhere; NaN
/// matches only NaN, an infinity only the same infinity. The worst element
/// is the one furthest beyond its allowance.
ExpectCheck checkExpected(const rt::HostTensor &got, const rt::HostTensor &expected,
                          const std::string &file, std::optional<double> atolGiven,
                          std::optional<double> rtolGiven) {
  ExpectCheck c;
  c.file = file;
  auto [atol, rtol] = defaultTolerances(got.dtype);
  c.atol = atolGiven.value_or(atol);
  c.rtol = rtolGiven.value_or(rtol);
  if (got.shape != expected.shape) {
    c.shapeMismatch = "the result is " + rt::TensorSpec{got.dtype, got.shape}.str() + ", " +
                      file + " holds " +
                      rt::TensorSpec{expected.dtype, expected.shape}.str();
    return c;
  }
  c.stats = compare(got, expected);
  c.numel = got.numel();
  double worstExcess = -INFINITY;
  for (int64_t i = 0; i < c.numel; ++i) {
    double x = got.getAsDouble(i), y = expected.getAsDouble(i);
    double excess;
    if (std::isnan(x) || std::isnan(y))
      excess = std::isnan(x) && std::isnan(y) ? -INFINITY : INFINITY;
    else if (std::isinf(x) || std::isinf(y))
      excess = x == y ? -INFINITY : INFINITY;
    else
      excess = std::fabs(x - y) - (c.atol + c.rtol * std::fabs(y));
    if (excess <= 0)
      continue;
    ++c.mismatches;
    if (excess > worstExcess) {
      worstExcess = excess;
      c.worst = i, c.worstGot = x, c.worstExpected = y;
    }
  }
  if (c.worst >= 0) {
    c.worstIndex.assign(got.shape.size(), 0);
    int64_t rem = c.worst;
    for (size_t k = got.shape.size(); k-- > 0;) {
      c.worstIndex[k] = got.shape[k] ? rem % got.shape[k] : 0;
      rem = got.shape[k] ? rem / got.shape[k] : 0;
    }
  }
  return c;
}

/// %.6g.
std::string num(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return buf;
}

static std::string indexStr(llvm::ArrayRef<int64_t> idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i)
    s += (i ? "," : "") + std::to_string(idx[i]);
  return s + "]";
}

/// "12 of 4096 elements differ by more than atol + rtol * |expected| (atol
/// 1e-05, rtol 0.0001); the worst at [0,1,2,3]: got 0.51, expected 0.5".
std::string mismatchText(const ExpectCheck &c) {
  if (!c.shapeMismatch.empty())
    return c.shapeMismatch;
  return std::to_string(c.mismatches) + " of " + std::to_string(c.numel) +
         " elements differ by more than atol + rtol * |expected| (atol " + num(c.atol) +
         ", rtol " + num(c.rtol) + "); the worst at " + indexStr(c.worstIndex) + ": got " +
         num(c.worstGot) + ", expected " + num(c.worstExpected);
}

//===----------------------------------------------------------------------===//
// What the pipeline used
//===----------------------------------------------------------------------===//

/// The OpenMP team size the compiled code's parallel loops get (the
/// OpenMP runtime is loaded into this process by the JIT): --num-threads
/// when given for cpu, else omp_get_max_threads() (OMP_NUM_THREADS or one
/// per available core). 1 for the reference pipeline; nullopt for gpu.
std::optional<int64_t> threadsUsed(rt::Pipeline p, int64_t numThreads) {
  if (p == rt::Pipeline::Reference)
    return 1;
  if (p == rt::Pipeline::Gpu)
    return std::nullopt;
  return rt::workerThreads(p == rt::Pipeline::Cpu ? numThreads : 0);
}

/// The widest vector ISA the target features enable.
std::string isaOf(llvm::StringRef features) {
  llvm::SmallVector<llvm::StringRef> list;
  features.split(list, ',');
  auto has = [&](llvm::StringRef f) { return llvm::is_contained(list, ("+" + f).str()); };
  for (const char *isa : {"avx512f", "avx2", "avx", "sse4.2", "sse2", "sve2", "sve", "neon"})
    if (has(isa))
      return llvm::StringRef(isa) == "avx512f" ? "avx512" : isa;
  return "generic";
}

/// The enabled features that matter to the compiled kernels (vector width,
/// FMA, half and bfloat16 conversions), in a fixed order.
static std::string shortFeatures(llvm::StringRef features) {
  llvm::SmallVector<llvm::StringRef> list;
  features.split(list, ',');
  std::vector<std::string> kept;
  for (const char *f : {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512vl",
                        "avx512bw", "avx512dq", "avx512fp16", "avx512bf16", "neon",
                        "fullfp16", "bf16", "sve", "sve2"})
    if (llvm::is_contained(list, ("+" + llvm::StringRef(f)).str()))
      kept.push_back(("+" + llvm::StringRef(f)).str());
  return llvm::join(kept, ",");
}

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

void printJsonReport(const RunReport &report) {
  auto optInt = [](std::optional<int64_t> v) {
    return v ? llvm::json::Value(*v) : llvm::json::Value(nullptr);
  };
  llvm::json::Object obj{{"file", report.file},
                         {"entry", report.entry},
                         {"pipeline", rt::pipelineName(report.pipeline)},
                         {"cpu", report.fn->targetCpu()},
                         {"cpu_features", shortFeatures(report.fn->targetFeatures())},
                         {"isa", report.isa},
                         {"threads", optInt(report.usedThreads)},
                         {"tile_q", optInt(report.usedTileQ)},
                         {"tile_k", optInt(report.usedTileK)}};
  if (report.usedVectorWidth)
    obj["vector_width"] = *report.usedVectorWidth;
  if (std::optional<bool> dot = report.fn->tiling().bf16Dot)
    obj["bf16_dot"] = *dot;
  if (std::optional<bool> amx = report.fn->tiling().amx) {
    obj["amx"] = *amx;
    if (report.fn->tiling().emulatedAmx)
      obj["amx_emulated"] = true;
  }
  if (report.verbose)
    obj["cpu_features_all"] = report.fn->targetFeatures();
  llvm::json::Array outs;
  for (auto &t : *report.results)
    outs.push_back(llvm::json::Object{
        {"dtype", rt::dtypeName(t.dtype)},
        {"shape", llvm::json::Array(llvm::ArrayRef<int64_t>(t.shape))}});
  obj["outputs"] = std::move(outs);
  obj["rss_before_run_mib"] = report.rssBeforeRun;
  obj["run_peak_rss_mib"] = report.runPeakRss;
  obj["run_peak_rss_is_per_call"] = report.peakReset;
  if (report.flops) {
    obj["flops"] = report.flops->full;
    obj["effective_flops"] = report.flops->effective;
  }
  if (report.medianMs) {
    obj["median_ms"] = *report.medianMs;
    obj["repeat"] = static_cast<int64_t>(report.repeat);
    obj["gflops"] = report.gflops ? llvm::json::Value(*report.gflops) : llvm::json::Value(nullptr);
    obj["effective_gflops"] =
        report.effGflops ? llvm::json::Value(*report.effGflops) : llvm::json::Value(nullptr);
  }
  if (report.kernelMs) {
    obj["gpu_kernel_median_ms"] = *report.kernelMs;
    obj["gpu_kernel_gflops"] =
        report.kernelGflops ? llvm::json::Value(*report.kernelGflops) : llvm::json::Value(nullptr);
    obj["gpu_kernel_effective_gflops"] =
        report.kernelEffGflops ? llvm::json::Value(*report.kernelEffGflops)
                               : llvm::json::Value(nullptr);
  }
  if (!report.errors.empty()) {
    double a = 0, r = 0;
    for (auto &e : report.errors) {
      a = std::max(a, e.maxAbs);
      r = std::max(r, e.maxRel);
    }
    obj["compare_with"] = rt::pipelineName(*report.refPipeline);
    obj["max_abs_error"] = jsonNumber(a);
    obj["max_rel_error"] = jsonNumber(r);
  }
  if (!report.errors.empty() || !report.checks.empty()) {
    // One entry per result: its report.errors against --compare-with and its
    // --expect file, each where given.
    llvm::json::Array perResult;
    for (size_t i = 0; i < report.results->size(); ++i) {
      llvm::json::Object entry{{"result", static_cast<int64_t>(i)}};
      if (i < report.errors.size())
        entry["compare_with"] = llvm::json::Object{
            {"pipeline", rt::pipelineName(*report.refPipeline)},
            {"max_abs_error", jsonNumber(report.errors[i].maxAbs)},
            {"max_rel_error", jsonNumber(report.errors[i].maxRel)}};
      if (i < report.checks.size()) {
        const ExpectCheck &c = report.checks[i];
        llvm::json::Object x{{"file", c.file},
                             {"ok", c.ok()},
                             {"atol", c.atol},
                             {"rtol", c.rtol}};
        if (!c.shapeMismatch.empty()) {
          x["shape_mismatch"] = c.shapeMismatch;
        } else {
          x["max_abs_error"] = jsonNumber(c.stats.maxAbs);
          x["max_rel_error"] = jsonNumber(c.stats.maxRel);
          x["mismatches"] = c.mismatches;
          x["numel"] = c.numel;
          if (c.worst >= 0)
            x["worst"] = llvm::json::Object{
                {"index", llvm::json::Array(llvm::ArrayRef<int64_t>(c.worstIndex))},
                {"got", jsonNumber(c.worstGot)},
                {"expected", jsonNumber(c.worstExpected)}};
        }
        entry["expect"] = std::move(x);
      }
      perResult.push_back(std::move(entry));
    }
    obj["result_errors"] = std::move(perResult);
  }
  if (!report.checks.empty())
    obj["expect_ok"] = !report.expectFailed;
  if (report.skippedComparison)
    obj["comparison_skipped"] = *report.skippedComparison;
  llvm::json::Array unfused;
  for (const std::string &n : report.fn->unfusedOps())
    unfused.push_back(n);
  obj["unfused"] = std::move(unfused);
  llvm::json::Array conversions;
  for (const std::string &n : conversionNotes())
    conversions.push_back(n);
  obj["conversions"] = std::move(conversions);
  llvm::json::Array warned;
  for (const std::string &w : warnings())
    warned.push_back(w);
  obj["warnings"] = std::move(warned);
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(obj))) << "\n";
}

void printTextReport(const RunReport &report) {
  llvm::outs() << "attn-run: @" << report.entry << " from " << report.file << " through the "
               << rt::pipelineName(report.pipeline) << " pipeline (JIT for "
               << report.fn->targetCpu() << ")\n";
  if (report.verbose) {
    llvm::outs() << "isa: " << report.isa << "; threads: "
                 << (report.usedThreads ? std::to_string(*report.usedThreads) : "n/a");
    if (report.usedTileQ)
      llvm::outs() << "; tile-q " << *report.usedTileQ << ", tile-k " << *report.usedTileK;
    if (report.usedVectorWidth)
      llvm::outs() << ", vector-width " << *report.usedVectorWidth;
    if (std::optional<bool> dot = report.fn->tiling().bf16Dot)
      llvm::outs() << ", bf16-dot " << (*dot ? "on" : "off");
    if (std::optional<bool> amx = report.fn->tiling().amx)
      llvm::outs() << ", amx " << (*amx ? (report.fn->tiling().emulatedAmx ? "emulated" : "on")
                                        : "off");
    llvm::outs() << "\ncpu features: " << report.fn->targetFeatures() << "\n";
  }
  for (auto [i, t] : llvm::enumerate(*report.results)) {
    rt::TensorSpec s{t.dtype, t.shape};
    llvm::outs() << "result #" << i << ": " << s.str();
    if (i < report.outputs.size())
      llvm::outs() << " -> " << report.outputs[i];
    llvm::outs() << "\n";
  }
  for (auto [i, e] : llvm::enumerate(report.errors))
    llvm::outs() << llvm::formatv("result #{0} vs {1}: max_abs_error {2:e} "
                                  "max_rel_error {3:e}\n",
                                  i, rt::pipelineName(*report.refPipeline), e.maxAbs,
                                  e.maxRel);
  for (auto [i, c] : llvm::enumerate(report.checks)) {
    llvm::outs() << "result #" << i << " vs " << c.file << ": ";
    if (!c.shapeMismatch.empty()) {
      llvm::outs() << "MISMATCH: " << c.shapeMismatch << "\n";
      continue;
    }
    llvm::outs() << llvm::formatv("max_abs_error {0:e} max_rel_error {1:e}, ", c.stats.maxAbs,
                                  c.stats.maxRel);
    if (c.ok())
      llvm::outs() << "ok (atol " << num(c.atol) << ", rtol " << num(c.rtol) << ")\n";
    else
      llvm::outs() << "MISMATCH: " << mismatchText(c) << "\n";
  }
  if (report.medianMs) {
    llvm::outs() << llvm::formatv("time: median {0:f3} ms over {1} runs", *report.medianMs,
                                  unsigned(report.repeat));
    if (report.gflops)
      llvm::outs() << llvm::formatv(", {0:f2} GFLOP/s, effective {1:f2} GFLOP/s", *report.gflops,
                                    *report.effGflops);
    llvm::outs() << "\n";
    if (report.kernelMs) {
      llvm::outs() << llvm::formatv("gpu kernels: median {0:f3} ms", *report.kernelMs);
      if (report.kernelGflops)
        llvm::outs() << llvm::formatv(", {0:f2} TFLOP/s, effective {1:f2} TFLOP/s",
                                      *report.kernelGflops / 1000, *report.kernelEffGflops / 1000);
      llvm::outs() << "\n";
    }
  }
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

} // namespace attnrun
