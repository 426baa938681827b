//===- GuardedAlloc.h - allocation failure in compiled code as an error ---===//
//
// The JIT'd code's malloc/aligned_alloc/free resolve to these functions
// (ahead-of-time objects call them by these names: attn-aot renames the
// calls).
// Inside a guarded call, every block the compiled code allocates is
// recorded; when an allocation fails, the call is abandoned (a longjmp back
// to runGuarded, over frames of compiled code only), the call's blocks are
// freed and the failed size reported, instead of the code writing through a
// null pointer. Blocks still live when the call returns belong to the caller
// (the results). Outside a guarded call a failed allocation aborts with a
// message.
//
// Limits: an allocation that fails on another thread (an OpenMP worker) is
// not recoverable and aborts with the message; the attn pipelines allocate
// heap buffers only outside parallel regions.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_GUARDEDALLOC_H
#define ATTN_RUNTIME_GUARDEDALLOC_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace attn::runtime {

/// (symbol, address) pairs to register with the JIT: malloc, aligned_alloc,
/// posix_memalign, free.
std::vector<std::pair<const char *, void *>> guardedAllocSymbols();

/// Runs `fn(args)`; false when an allocation inside failed, with the size it
/// asked for in `failedBytes` (the call's own allocations then freed).
bool runGuarded(void (*fn)(void **), void **args, uint64_t &failedBytes);

/// Frees a block the compiled code allocated (a result, once copied out).
/// Blocks of 128 KiB and more are kept for reuse by the next allocation of
/// about their size (at most twice it), up to a limit (the environment's
/// ATTN_BLOCK_CACHE_MB, default 256; 0 keeps none), oldest freed first
/// out: a call repeated with the same shapes reuses mapped pages instead
/// of page-faulting its footprint again. Any other pointer is std::free'd.
void releaseBlock(void *p);

/// Asks the kernel for transparent huge pages (madvise MADV_HUGEPAGE) on
/// the 2 MiB pages that lie wholly inside [p, p + n), when n is at least
/// 4 MiB, so that a fresh buffer's first writes fault once per 2 MiB
/// instead of once per 4 KiB (measured in bench/NOTES.md, 2026-12-07:
/// Huge pages for large fresh buffers). A hint only: nothing changes where the
/// kernel has no THP or says no, on systems other than Linux, or with the
/// environment's ATTN_HUGE_PAGES=0. The compiled code's fresh blocks and
/// the runtime's large outputs and packing buffers get it.
void adviseHugePages(void *p, size_t n);

/// Bytes held for reuse now.
size_t cachedBlockBytes();

/// Sets the limit (bytes) and frees what is held beyond it. (An
/// allocation libc refuses empties the cache and is tried again.)
void setBlockCacheLimit(size_t bytes);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_GUARDEDALLOC_H
