//===- DimRelations.cpp - the run-time check of dynamic-dim relations -----===//
//
// See include/attn/Runtime/DimRelations.h. Each class's unit is read from
// its first dim (which must be a multiple of its coefficient), then every
// other dim of the class must be its coefficient times the unit.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/DimRelations.h"

#include <map>

namespace attn::aot {

namespace {
std::string dimName(int64_t input, int64_t dim) {
  return "input #" + std::to_string(input) + " dim " + std::to_string(dim);
}
std::string times(int64_t coef) {
  return coef == 1 ? "" : std::to_string(coef) + " * ";
}
} // namespace

std::string checkDimRelations(const int64_t *links, int64_t numLinks,
                              const int64_t *divisors, int64_t numDivisors,
                              const std::function<int64_t(int64_t, int64_t)> &size) {
  const std::string prefix = "the inputs' shapes do not fit together: ";
  struct Unit {
    int64_t value, input, dim, coef;
  };
  std::map<int64_t, Unit> units;
  for (int64_t l = 0; l < numLinks; ++l) {
    const int64_t *link = links + LinkFields * l;
    int64_t in = link[LinkInput], dim = link[LinkDim], cls = link[LinkClass];
    int64_t multiple = link[LinkMultiple], coef = link[LinkCoef];
    int64_t n = size(in, dim);
    auto it = units.find(cls);
    if (it == units.end()) {
      // The class's unit, from its first dim.
      if (coef > 1 && n % coef != 0)
        return prefix + dimName(in, dim) + " is " + std::to_string(n) +
               "; the function needs a multiple of " + std::to_string(coef);
      int64_t unit = n / coef;
      if (multiple > 1 && unit % multiple != 0)
        return prefix + dimName(in, dim) + " is " + std::to_string(n) +
               "; the function needs a multiple of " + std::to_string(coef * multiple);
      units.emplace(cls, Unit{unit, in, dim, coef});
      continue;
    }
    const Unit &u = it->second;
    if (n != coef * u.value) {
      std::string need =
          coef == u.coef ? "them equal"
                         : dimName(in, dim) + " = " + times(coef) + "u and " +
                               dimName(u.input, u.dim) + " = " + times(u.coef) +
                               "u for one u";
      return prefix + dimName(in, dim) + " is " + std::to_string(n) + " but " +
             dimName(u.input, u.dim) + " is " + std::to_string(u.value * u.coef) +
             "; the function needs " + need;
    }
  }
  for (int64_t d = 0; d < numDivisors; ++d) {
    const int64_t *rel = divisors + DivisorFields * d;
    auto a = units.find(rel[DivisorClass]), b = units.find(rel[DivisorOf]);
    if (a == units.end() || b == units.end())
      continue; // a malformed record names no dims: nothing to compare
    int64_t big = a->second.value, small = b->second.value;
    if (small > 0 ? big % small == 0 : big == 0)
      continue;
    return prefix + dimName(a->second.input, a->second.dim) + " is " +
           std::to_string(big * a->second.coef) + ", which is not a multiple of " +
           dimName(b->second.input, b->second.dim) + " = " +
           std::to_string(small * b->second.coef) +
           " (e.g. query heads of key/value heads); the function needs it to be";
  }
  return "";
}

} // namespace attn::aot
