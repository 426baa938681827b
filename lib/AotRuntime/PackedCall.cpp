//===- PackedCall.cpp - calling lowered code through its packed interface -===//
#include "attn/Runtime/PackedCall.h"

#include "attn/Runtime/GuardedAlloc.h"

#include <cstdlib>
#include <cstring>
#include <set>

namespace attn::runtime {

/// A ranked memref descriptor: {allocated, aligned, offset, sizes[R], strides[R]}.
static std::vector<int64_t> descriptorFor(const void *data,
                                          const std::vector<int64_t> &shape) {
  int64_t rank = shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(data);
  d[0] = d[1] = ptr;
  d[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return d;
}

bool overlapsOthers(size_t i, const std::vector<ByteSpan> &outputs,
                    const std::vector<ByteSpan> &inputs) {
  auto [lo, hi] = outputs[i];
  bool overlaps = false;
  for (auto [a, b] : inputs)
    overlaps |= a < hi && lo < b;
  for (size_t j = 0; j < outputs.size(); ++j)
    overlaps |= j != i && outputs[j].first < hi && lo < outputs[j].second;
  return overlaps;
}

bool callPacked(void (*entry)(void **), const std::vector<const void *> &inputs,
                const std::vector<std::vector<int64_t>> &shapes,
                const std::vector<int64_t> &resultRanks,
                const std::vector<size_t> &resultElementSizes,
                const std::function<bool()> &afterCall,
                const std::function<void(size_t, const ResultView &)> &sink,
                uint64_t &failedBytes, bool freeResults,
                const std::vector<ResultDestination> *destinations) {
  std::vector<std::vector<int64_t>> descs;
  for (size_t i = 0; i < inputs.size(); ++i)
    descs.push_back(descriptorFor(inputs[i], shapes[i]));
  std::set<int64_t> callerOwned;
  if (destinations) {
    for (size_t i = 0; i < destinations->size(); ++i) {
      const ResultDestination &d = (*destinations)[i];
      // No destination: a null descriptor of the result's rank.
      descs.push_back(d.data ? descriptorFor(d.data, d.shape)
                             : std::vector<int64_t>(3 + 2 * resultRanks[i], 0));
      if (d.data)
        callerOwned.insert(reinterpret_cast<int64_t>(d.data));
    }
  }
  // The C interface returns all results through one struct of descriptors
  // (each all 8-byte fields, so they lie back to back).
  size_t resultWords = 0;
  for (int64_t rank : resultRanks)
    resultWords += 3 + 2 * rank;
  std::vector<int64_t> resultBuf(resultWords);
  std::vector<void *> pointers;
  if (!resultRanks.empty())
    pointers.push_back(resultBuf.data());
  for (auto &d : descs)
    pointers.push_back(d.data());
  std::vector<void *> packedArgs;
  for (void *&p : pointers)
    packedArgs.push_back(&p);
  if (!runGuarded(entry, packedArgs.data(), failedBytes))
    return false;
  bool deliver = afterCall();

  std::set<int64_t> inputBuffers, freed;
  for (const void *p : inputs)
    inputBuffers.insert(reinterpret_cast<int64_t>(p));
  size_t at = 0;
  for (size_t i = 0; i < resultRanks.size(); ++i) {
    int64_t rank = resultRanks[i];
    const int64_t *d = resultBuf.data() + at;
    at += 3 + 2 * rank;
    ResultView view{reinterpret_cast<const uint8_t *>(d[1]) +
                        d[2] * static_cast<int64_t>(resultElementSizes[i]),
                    reinterpret_cast<void *>(d[0]), d + 3, d + 3 + rank, rank};
    if (deliver)
      sink(i, view);
    // Results are owned by the caller (ownership-based deallocation), except
    // when one aliases an input, an earlier result or a destination.
    int64_t allocated = d[0];
    if (freeResults && allocated && !inputBuffers.count(allocated) &&
        !callerOwned.count(allocated) && freed.insert(allocated).second)
      releaseBlock(reinterpret_cast<void *>(allocated));
  }
  return true;
}

void copyStridedRaw(const uint8_t *src, const int64_t *srcStrides, uint8_t *dst,
                    const int64_t *dstStrides, const int64_t *shape,
                    int64_t rank, size_t elementSize) {
  int64_t n = 1;
  for (int64_t k = 0; k < rank; ++k)
    n *= shape[k];
  if (n == 0)
    return;
  // The innermost dims contiguous in both (all of them in the usual case:
  // one copy) make a run of `run` elements, copied by one memcpy each; the
  // dims outside it are walked, the innermost of those (`last`) in a tight
  // loop. A transposed view ([B, T, H, D] read as [B, H, T, D]) is then a
  // memcpy per row of D elements, not one per element.
  int64_t inner = rank, run = 1;
  while (inner > 0 && (shape[inner - 1] == 1 ||
                       (srcStrides[inner - 1] == run && dstStrides[inner - 1] == run))) {
    run *= shape[inner - 1];
    --inner;
  }
  if (inner == 0) {
    std::memcpy(dst, src, n * elementSize);
    return;
  }
  int64_t last = inner - 1, count = shape[last];
  int64_t srcStep = srcStrides[last] * static_cast<int64_t>(elementSize);
  int64_t dstStep = dstStrides[last] * static_cast<int64_t>(elementSize);
  size_t runBytes = static_cast<size_t>(run) * elementSize;
  std::vector<int64_t> idx(last, 0);
  for (int64_t outer = n / (run * count); outer > 0; --outer) {
    int64_t so = 0, doff = 0;
    for (int64_t k = 0; k < last; ++k) {
      so += idx[k] * srcStrides[k];
      doff += idx[k] * dstStrides[k];
    }
    const uint8_t *s = src + so * static_cast<int64_t>(elementSize);
    uint8_t *d = dst + doff * static_cast<int64_t>(elementSize);
    for (int64_t i = 0; i < count; ++i, s += srcStep, d += dstStep)
      std::memcpy(d, s, runBytes);
    for (int64_t k = last - 1; k >= 0; --k) {
      if (++idx[k] < shape[k])
        break;
      idx[k] = 0;
    }
  }
}

std::vector<int64_t> rowMajorStridesRaw(const int64_t *shape, int64_t rank) {
  std::vector<int64_t> strides(rank);
  int64_t s = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    strides[k] = s;
    s *= shape[k];
  }
  return strides;
}

} // namespace attn::runtime
