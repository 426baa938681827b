//===- MemrefCopy.cpp - memref.copy between strided buffers ---------------===//
#include "attn/Runtime/MemrefCopy.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// The unranked memref an lowered memref.copy passes: the rank and a ranked
/// descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct View {
  char *base;
  const int64_t *sizes, *strides;
};

View view(const UnrankedMemRef &m, int64_t elemSize) {
  char **pointers = static_cast<char **>(m.descriptor);
  const int64_t *ints = reinterpret_cast<const int64_t *>(pointers + 2);
  return {pointers[1] + ints[0] * elemSize, ints + 1, ints + 1 + m.rank};
}
} // namespace

/// Copies every element of `src` to the same index of `dst` (same shape,
/// any strides), a row at a time where the innermost dim is contiguous in
/// both.
extern "C" void attnMemrefCopy(int64_t elemSize, UnrankedMemRef *srcArg,
                               UnrankedMemRef *dstArg) {
  int64_t rank = srcArg->rank;
  View src = view(*srcArg, elemSize), dst = view(*dstArg, elemSize);
  if (rank == 0) {
    std::memcpy(dst.base, src.base, elemSize);
    return;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (src.sizes[d] == 0)
      return;
  int64_t inner = rank - 1;
  bool rows = src.strides[inner] == 1 && dst.strides[inner] == 1;
  int64_t rowElems = rows ? src.sizes[inner] : 1;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = 0, t = 0;
    for (int64_t d = 0; d < rank; ++d) {
      s += index[d] * src.strides[d];
      t += index[d] * dst.strides[d];
    }
    std::memmove(dst.base + t * elemSize, src.base + s * elemSize, rowElems * elemSize);
    // Next index (the innermost dim whole when copying rows).
    int64_t d = rows ? inner - 1 : inner;
    for (; d >= 0; --d) {
      if (++index[d] < src.sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

namespace attn::runtime {
std::vector<std::pair<const char *, void *>> memrefCopySymbols() {
  return {{"memrefCopy", reinterpret_cast<void *>(&attnMemrefCopy)}};
}
} // namespace attn::runtime
