//===- ShapeRelations.cpp - relations between dynamic input dims ----------===//
//
// The attn verifiers are the one statement of the shape rules; this file
// asks them, with test shapes, what holds between a function's dynamic
// input dims, in four steps:
//   1. a start: every dynamic dim a highly composite number, then each dim
//      a failed check names set to the size that check expected
//      (attn::DimMismatchListener), until the ops accept the shapes;
//   2. classes: the smallest sets of dims that can double together (a set
//      that can only double along with earlier classes divides them: query
//      heads are a multiple of key/value heads); proportions from the start;
//   3. multiples: the smallest step of each class's unit that still fits;
//   4. proof: sampled shapes that the relations accept must be accepted by
//      the verifiers (sizes from the multiple up, so small sizes are
//      covered), and shapes one step off are tried too.
// A function whose relations this cannot find is refused, never compiled
// into a kernel that trusts its caller.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/ShapeRelations.h"

#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime/DimRelations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <numeric>
#include <random>
#include <set>

using namespace mlir;

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// The record and its check.
//===----------------------------------------------------------------------===//

std::vector<int64_t> ShapeRelations::dimLinks() const {
  std::vector<int64_t> out;
  for (auto [c, cls] : llvm::enumerate(classes))
    for (const Member &m : cls.members)
      out.insert(out.end(), {m.dim.input, m.dim.dim, int64_t(c), cls.multiple, m.coef});
  return out;
}

std::vector<int64_t> ShapeRelations::classDivisors() const {
  std::vector<int64_t> out;
  for (auto [c, cls] : llvm::enumerate(classes))
    for (size_t d : cls.divisors)
      out.insert(out.end(), {int64_t(c), int64_t(d)});
  return out;
}

std::string ShapeRelations::check(llvm::ArrayRef<std::vector<int64_t>> shapes) const {
  std::vector<int64_t> links = dimLinks(), divisors = classDivisors();
  return aot::checkDimRelations(links.data(), links.size() / aot::LinkFields,
                                divisors.data(), divisors.size() / aot::DivisorFields,
                                [&](int64_t in, int64_t dim) { return shapes[in][dim]; });
}

static std::string dimName(DimRef d) {
  return "input #" + std::to_string(d.input) + " dim " + std::to_string(d.dim);
}

std::vector<std::string> ShapeRelations::describe() const {
  std::vector<std::string> lines;
  for (const Class &c : classes) {
    bool proportional = llvm::any_of(c.members, [](const Member &m) { return m.coef != 1; });
    if (c.members.size() < 2 && c.multiple == 1 && !proportional)
      continue;
    std::string s;
    if (!proportional) {
      for (auto [k, m] : llvm::enumerate(c.members))
        s += (k ? " == " : "") + dimName(m.dim);
      if (c.multiple > 1)
        s += (c.members.size() > 1 ? ", a multiple of " : " is a multiple of ") +
             std::to_string(c.multiple);
    } else {
      for (auto [k, m] : llvm::enumerate(c.members))
        s += (k ? ", " : "") + dimName(m.dim) + " = " +
             (m.coef == 1 ? std::string("u") : std::to_string(m.coef) + "u");
      s += " for one u";
      if (c.multiple > 1)
        s += ", a multiple of " + std::to_string(c.multiple);
    }
    lines.push_back(s);
  }
  for (const Class &c : classes)
    for (size_t d : c.divisors)
      lines.push_back(dimName(c.members.front().dim) + " is a multiple of " +
                      dimName(classes[d].members.front().dim));
  return lines;
}

//===----------------------------------------------------------------------===//
// Asking the verifiers.
//===----------------------------------------------------------------------===//

namespace {

llvm::Error failure(const llvm::Twine &msg) {
  return llvm::make_error<llvm::StringError>(msg, llvm::inconvertibleErrorCode());
}

/// The dynamic dims of a signature and test shapes for them.
class Prober {
public:
  Prober(ModuleOp module, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> args)
      : module(module), entry(entry), args(args) {
    for (auto [i, s] : llvm::enumerate(args))
      for (auto [d, n] : llvm::enumerate(s.shape))
        if (n < 0)
          dynamic.push_back({int64_t(i), int64_t(d)});
  }

  std::vector<std::vector<int64_t>> shapes(llvm::ArrayRef<int64_t> values) const {
    std::vector<std::vector<int64_t>> out;
    for (const TensorSpec &s : args)
      out.push_back(s.shape);
    for (auto [i, d] : llvm::enumerate(dynamic))
      out[d.input][d.dim] = values[i];
    return out;
  }

  /// A dim size a failed check expected: (dynamic index, size).
  using Repair = std::pair<size_t, int64_t>;

  /// Whether the ops accept `values`; if not, `why` gets the first error
  /// and `repair` (when given) what that check expected of a dynamic dim.
  bool fits(llvm::ArrayRef<int64_t> values, std::string *why = nullptr,
            std::optional<Repair> *repair = nullptr) {
    ++probes;
    bool heard = false;
    auto hear = [&](Value v, int64_t dim, int64_t expected) {
      if (heard || !repair)
        return;
      heard = true;
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || !arg.getOwner()->isEntryBlock() ||
          !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
        return;
      for (auto [i, d] : llvm::enumerate(dynamic))
        if (d.input == arg.getArgNumber() && d.dim == dim && expected > 0)
          *repair = Repair{i, expected};
    };
    mlir::attn::DimMismatchListener listener(hear);
    if (llvm::Error e = checkInputShapes(module, entry, shapes(values), nullptr)) {
      std::string msg = llvm::toString(std::move(e));
      if (why)
        *why = msg;
      return false;
    }
    return true;
  }

  ModuleOp module;
  llvm::StringRef entry;
  llvm::ArrayRef<TensorSpec> args;
  std::vector<DimRef> dynamic;
  int64_t probes = 0;
};

/// 720720 * 16: a multiple of 1..16 and of 2^8, so that every
/// divisibility rule with small head counts holds at the start.
constexpr int64_t kBase = 11531520;
constexpr int64_t kProbeBudget = 20000;
constexpr int64_t kLargestMultiple = 64;
constexpr int kSamples = 96;

std::string dimList(const Prober &p, llvm::ArrayRef<size_t> dims) {
  std::string s;
  for (auto [k, i] : llvm::enumerate(dims))
    s += (k ? ", " : "") + dimName(p.dynamic[i]);
  return s;
}

const char *kAdvice = "; make these dims static in the function's signature "
                      "(e.g. tensor<2x7x48xf32>) or compile it with the JIT, "
                      "which checks each call's shapes with the ops themselves";

} // namespace

llvm::Expected<ShapeRelations> deriveShapeRelations(ModuleOp module,
                                                    llvm::StringRef entry,
                                                    llvm::ArrayRef<TensorSpec> args) {
  ShapeRelations rel;
  Prober p(module, entry, args);
  const size_t n = p.dynamic.size();
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), 0);

  // 1. A start the ops accept.
  std::vector<int64_t> start(n, kBase);
  if (n && !inputShapesCheckable(module, entry, p.shapes(start)))
    return failure("attn-aot cannot derive the relations between the dynamic dims " +
                   dimList(p, all) + ": ops other than attn ops have types that depend "
                   "on them" + kAdvice);
  for (size_t step = 0;; ++step) {
    std::string why;
    std::optional<Prober::Repair> repair;
    if (p.fits(start, &why, &repair))
      break;
    if (!repair || step > 4 * n + 16)
      return failure("attn-aot found no shapes for the dynamic dims " + dimList(p, all) +
                     " that the function's ops accept (" + why + ")" + kAdvice);
    start[repair->first] = repair->second;
  }

  // 2. Classes, and the classes that must be multiples of others.
  std::vector<int> classOf(n, -1);
  std::vector<std::vector<size_t>> members;
  auto doubled = [&](const std::set<size_t> &dims, llvm::ArrayRef<size_t> classes) {
    std::vector<int64_t> v = start;
    for (size_t i : dims)
      v[i] *= 2;
    for (size_t c : classes)
      for (size_t i : members[c])
        v[i] *= 2;
    return v;
  };
  // Subsets of `pool` in order of size, each with `d`.
  auto smallestSet = [&](size_t d, const std::vector<size_t> &pool,
                         llvm::ArrayRef<size_t> classes) -> std::optional<std::set<size_t>> {
    for (size_t k = 0; k <= pool.size() && p.probes < kProbeBudget; ++k) {
      std::vector<bool> pick(pool.size(), false);
      std::fill(pick.begin(), pick.begin() + k, true);
      do {
        std::set<size_t> set{d};
        for (size_t j = 0; j < pool.size(); ++j)
          if (pick[j])
            set.insert(pool[j]);
        if (p.fits(doubled(set, classes)))
          return set;
      } while (p.probes < kProbeBudget && std::prev_permutation(pick.begin(), pick.end()));
    }
    return std::nullopt;
  };
  std::vector<std::vector<size_t>> divisorsOf;
  for (size_t d = 0; d < n; ++d) {
    if (classOf[d] >= 0)
      continue;
    std::vector<size_t> pool;
    for (size_t e = d + 1; e < n; ++e)
      if (classOf[e] < 0)
        pool.push_back(e);
    std::optional<std::set<size_t>> set = smallestSet(d, pool, {});
    std::vector<size_t> dependents;
    // Dims that can only double along with earlier classes divide them.
    for (size_t c = 0; !set && c < members.size() && p.probes < kProbeBudget; ++c)
      if ((set = smallestSet(d, pool, {c})))
        dependents = {c};
    if (!set)
      return failure("attn-aot cannot derive how " + dimName(p.dynamic[d]) +
                     " relates to the other dynamic dims " + dimList(p, all) +
                     " (no set of them can change together)" + kAdvice);
    size_t c = members.size();
    members.emplace_back(set->begin(), set->end());
    divisorsOf.emplace_back();
    for (size_t i : *set)
      classOf[i] = c;
    for (size_t dep : dependents)
      divisorsOf[dep].push_back(c);
  }

  // Proportions: each member's start over the class's gcd.
  std::vector<int64_t> unit0(members.size());
  for (auto [c, dims] : llvm::enumerate(members)) {
    int64_t g = 0;
    for (size_t i : dims)
      g = std::gcd(g, start[i]);
    unit0[c] = g;
  }
  auto valuesFor = [&](llvm::ArrayRef<int64_t> units) {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i)
      v[i] = start[i] / unit0[classOf[i]] * units[classOf[i]];
    return v;
  };
  // Classes that (transitively) must be multiples of class c.
  auto dependentsOf = [&](size_t c) {
    std::set<size_t> out, todo{c};
    while (!todo.empty()) {
      size_t x = *todo.begin();
      todo.erase(todo.begin());
      for (size_t y = 0; y < members.size(); ++y)
        if (llvm::is_contained(divisorsOf[y], x) && out.insert(y).second)
          todo.insert(y);
    }
    return out;
  };

  // 3. Multiples: the smallest unit (a multiple of the divisors' smallest
  // units) that fits, dependents scaled along. Divisors come first: a
  // class's divisors were found after it.
  std::vector<int64_t> multiple(members.size(), 1);
  for (size_t c = members.size(); c-- > 0;) {
    int64_t l = 1;
    for (size_t d : divisorsOf[c])
      l = std::lcm(l, multiple[d]);
    std::set<size_t> deps = dependentsOf(c);
    bool found = false;
    for (int64_t g = 1; g <= kLargestMultiple && !found; ++g) {
      std::vector<int64_t> units = unit0;
      units[c] = l * g;
      for (size_t d : divisorsOf[c])
        units[d] = multiple[d];
      for (size_t dep : deps)
        units[dep] = unit0[dep] * l * g;
      if (p.fits(valuesFor(units))) {
        multiple[c] = l * g;
        found = true;
      }
    }
    if (!found)
      return failure("attn-aot cannot derive the sizes the ops allow for " +
                     dimList(p, members[c]) + " (no multiple up to " +
                     std::to_string(kLargestMultiple) + ")" + kAdvice);
  }

  for (auto [c, dims] : llvm::enumerate(members)) {
    ShapeRelations::Class cls;
    for (size_t i : dims)
      cls.members.push_back({p.dynamic[i], start[i] / unit0[c]});
    cls.multiple = multiple[c];
    cls.divisors = divisorsOf[c];
    rel.classes.push_back(std::move(cls));
  }

  // Key lengths: the class whose doubling doubles each bound.
  auto bounds = [&](llvm::ArrayRef<int64_t> values) {
    return keyLengthBounds(module, entry, p.shapes(values));
  };
  std::vector<std::optional<KeyLengthBound>> at0 = bounds(start);
  for (auto [input, bound] : llvm::enumerate(at0)) {
    if (!bound)
      continue;
    ShapeRelations::KeyLengths kl{int64_t(input), std::nullopt, bound->keyLen};
    for (size_t c = 0; c < members.size() && !kl.boundDim; ++c) {
      std::set<size_t> deps = dependentsOf(c);
      std::vector<size_t> moved(deps.begin(), deps.end());
      moved.push_back(c);
      std::vector<std::optional<KeyLengthBound>> at1 = bounds(doubled({}, moved));
      if (!at1[input] || at1[input]->keyLen == bound->keyLen)
        continue;
      for (size_t i : members[c])
        if (!kl.boundDim && start[i] == bound->keyLen &&
            at1[input]->keyLen == 2 * bound->keyLen)
          kl.boundDim = p.dynamic[i];
      if (!kl.boundDim)
        return failure("attn-aot cannot derive the bound of the key lengths in input #" +
                       llvm::Twine(input) + " from the dynamic dims " +
                       dimList(p, members[c]) + kAdvice);
    }
    rel.keyLengths.push_back(kl);
  }

  // 4. Proof on sampled shapes: whatever the relations accept, the ops
  // must accept. Units from their multiple up (small sizes included), in
  // divisor-first order; then each sample with one dim a step off.
  std::mt19937_64 rng(0x5eed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int s = 0; s < kSamples && n; ++s) {
    std::vector<int64_t> units(members.size());
    for (size_t c = members.size(); c-- > 0;) {
      int64_t l = multiple[c];
      for (size_t d : divisorsOf[c])
        l = std::lcm(l, units[d]);
      units[c] = l * (s < kSamples / 2 ? pick(1, 3) : pick(1, 24));
    }
    std::vector<int64_t> values = valuesFor(units);
    std::vector<std::vector<int64_t>> candidates = {values};
    for (int k = 0; k < 2; ++k) {
      std::vector<int64_t> off = values;
      size_t i = pick(0, n - 1);
      off[i] = std::max<int64_t>(1, off[i] + (pick(0, 1) ? 1 : -1) * pick(1, 3));
      candidates.push_back(off);
    }
    for (const std::vector<int64_t> &v : candidates) {
      std::vector<std::vector<int64_t>> shapes = p.shapes(v);
      if (!rel.check(shapes).empty())
        continue;
      std::string why;
      if (!p.fits(v, &why)) {
        std::string shown;
        for (auto [i, d] : llvm::enumerate(p.dynamic))
          shown += (i ? ", " : "") + dimName(d) + " = " + std::to_string(v[i]);
        return failure("attn-aot derived relations between the dynamic dims that "
                       "the ops do not confirm: with " + shown + " they hold, but " +
                       why + kAdvice);
      }
    }
  }
  return rel;
}

} // namespace attn::runtime
