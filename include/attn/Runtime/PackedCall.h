//===- PackedCall.h - calling lowered code through its packed interface ---===//
//
// What the JIT (CompiledFunction) and the ahead-of-time runtime (libattn_aot)
// share: a function lowered with `llvm.emit_c_interface` and wrapped in a
// packed `void(void **)` entry is called with one row-major memref
// descriptor per input; its results come back as descriptors, are handed to
// a sink and freed. Plain C++ (no LLVM): libattn_aot links this without
// libLLVM.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PACKEDCALL_H
#define ATTN_RUNTIME_PACKEDCALL_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace attn::runtime {

/// One result as the compiled code returned it.
struct ResultView {
  const uint8_t *data; ///< the first element
  void *allocated;     ///< the block to free
  const int64_t *shape;
  const int64_t *strides; ///< in elements
  int64_t rank;
};

/// Where the caller would like a result written (attn-result-destinations):
/// a dense row-major buffer of `shape`, or none (null `data`).
struct ResultDestination {
  void *data = nullptr;
  std::vector<int64_t> shape;
};

/// The bytes [first, second) a tensor's elements span.
using ByteSpan = std::pair<uintptr_t, uintptr_t>;

/// Whether output `i`'s bytes overlap an input's or another output's: a
/// result written into such an output (a destination) could overwrite
/// what the kernel has yet to read, or another result.
bool overlapsOthers(size_t i, const std::vector<ByteSpan> &outputs,
                    const std::vector<ByteSpan> &inputs);

/// Calls `entry` on row-major `inputs` of `shapes`; results have
/// `resultRanks` and `resultElementSizes`. `afterCall` runs once the code
/// returned (false: the results are freed without reaching the sink). With
/// `freeResults`, each result not aliasing an input is freed (std::free)
/// after the sink saw it (the code's ownership-based deallocation leaves
/// them to the caller); without, the sink owns them (device buffers).
/// Returns false when an allocation inside failed (its size in
/// `failedBytes`). With `destinations` (one per result, for an entry that
/// takes them) each is passed after the inputs; a result the code wrote
/// into its destination comes back as that buffer, which is never freed.
bool callPacked(void (*entry)(void **), const std::vector<const void *> &inputs,
                const std::vector<std::vector<int64_t>> &shapes,
                const std::vector<int64_t> &resultRanks,
                const std::vector<size_t> &resultElementSizes,
                const std::function<bool()> &afterCall,
                const std::function<void(size_t, const ResultView &)> &sink,
                uint64_t &failedBytes, bool freeResults,
                const std::vector<ResultDestination> *destinations = nullptr);

/// Copies a strided tensor (strides in elements) into another of the same
/// shape: one memcpy per run of the innermost dims contiguous in both (one
/// in all when both are row-major contiguous).
void copyStridedRaw(const uint8_t *src, const int64_t *srcStrides, uint8_t *dst,
                    const int64_t *dstStrides, const int64_t *shape,
                    int64_t rank, size_t elementSize);

/// The row-major strides (in elements) of a shape.
std::vector<int64_t> rowMajorStridesRaw(const int64_t *shape, int64_t rank);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PACKEDCALL_H
