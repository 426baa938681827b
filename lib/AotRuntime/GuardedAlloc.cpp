//===- GuardedAlloc.cpp - allocation failure in compiled code as an error -===//
#include "attn/Runtime/GuardedAlloc.h"

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attn::runtime {
namespace {

/// One guarded call on this thread.
struct GuardedCall {
  std::jmp_buf *escape = nullptr;
  uint64_t failedBytes = 0;
};

thread_local GuardedCall *activeCall = nullptr;

/// Blocks allocated inside guarded calls and not yet freed, with their call
/// (a block may be freed on another thread than the one that allocated it).
std::mutex registryMutex;
std::unordered_map<void *, GuardedCall *> &registry() {
  static auto *r = new std::unordered_map<void *, GuardedCall *>();
  return *r;
}

/// Large blocks the compiled code freed (its scratch, and its results once
/// the runtime has copied them out), kept for the next allocation of about
/// their size: a call that repeats with the same shapes then reuses memory
/// whose pages are already mapped instead of asking the kernel for fresh
/// ones (glibc serves blocks this large with mmap and unmaps them on free,
/// so every call page-faults its whole footprint again; bench/NOTES.md,
/// "Reusing the kernels' large blocks"). Oldest out first past the limit.
constexpr size_t kCachedFrom = 128 << 10; // glibc's default mmap threshold

struct BlockCache {
  std::mutex mutex;
  std::unordered_map<void *, size_t> sizes;  ///< our live blocks ≥ kCachedFrom
  std::multimap<size_t, void *> bySize;      ///< cached: size → block
  std::list<std::pair<void *, size_t>> order; ///< cached, oldest first
  size_t bytes = 0;
  size_t limit = defaultLimit();

  static size_t defaultLimit() {
    if (const char *env = std::getenv("ATTN_BLOCK_CACHE_MB")) {
      char *end = nullptr;
      unsigned long long mb = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0')
        return static_cast<size_t>(mb) << 20;
    }
    return size_t(256) << 20;
  }

  /// A cached block of at least `n` bytes (at most 2n), aligned to
  /// `alignment`; null when none. Caller holds the mutex.
  void *take(size_t n, size_t alignment) {
    for (auto it = bySize.lower_bound(n); it != bySize.end() && it->first <= 2 * n; ++it) {
      void *p = it->second;
      if (reinterpret_cast<uintptr_t>(p) % alignment)
        continue;
      bytes -= it->first;
      sizes[p] = it->first;
      order.remove(std::make_pair(p, it->first));
      bySize.erase(it);
      return p;
    }
    return nullptr;
  }

  /// Drops cached blocks, oldest first, until at most `keep` bytes stay;
  /// returns them for the caller to free outside the lock.
  std::vector<void *> trim(size_t keep) {
    std::vector<void *> out;
    while (bytes > keep && !order.empty()) {
      auto [p, n] = order.front();
      order.pop_front();
      for (auto it = bySize.lower_bound(n); it != bySize.end() && it->first == n; ++it)
        if (it->second == p) {
          bySize.erase(it);
          break;
        }
      bytes -= n;
      out.push_back(p);
    }
    return out;
  }
};

BlockCache &blockCache() {
  static auto *c = new BlockCache();
  return *c;
}

/// Frees cached blocks, oldest first, until at most `keep` bytes stay
/// (and sets the limit to `keep` when `newLimit`).
void trimCache(size_t keep, bool newLimit) {
  BlockCache &c = blockCache();
  std::vector<void *> drop;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (newLimit)
      c.limit = keep;
    drop = c.trim(keep);
  }
  for (void *p : drop)
    std::free(p);
}

/// A block of `n` bytes aligned to `alignment` (0: malloc's), from the
/// cache when it holds one, else from libc.
void *allocate(size_t n, size_t alignment) {
  if (n >= kCachedFrom) {
    BlockCache &c = blockCache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (void *p = c.take(n, std::max(alignment, alignof(std::max_align_t))))
      return p;
  }
  auto fromLibc = [&]() -> void * {
    void *p = nullptr;
    if (alignment <= alignof(std::max_align_t))
      return std::malloc(n);
    return posix_memalign(&p, alignment, n) == 0 ? p : nullptr;
  };
  void *p = fromLibc();
  if (!p && n && cachedBlockBytes()) {
    // Out of memory while the cache holds some: give it back, try again.
    trimCache(0, /*newLimit=*/false);
    p = fromLibc();
  }
  if (p)
    adviseHugePages(p, n); // fresh from libc: not written yet
  if (p && n >= kCachedFrom) {
    BlockCache &c = blockCache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.sizes[p] = n;
  }
  return p;
}

/// `p` from an allocation of `n` bytes: recorded on success; on failure the
/// guarded call is abandoned (or, outside one, the process aborts).
void *checked(void *p, size_t n) {
  GuardedCall *call = activeCall;
  if (!p && n) {
    if (!call) {
      std::fprintf(stderr,
                   "attn: compiled code could not allocate %llu bytes outside a "
                   "guarded call; aborting\n",
                   (unsigned long long)n);
      std::abort();
    }
    call->failedBytes = n;
    std::longjmp(*call->escape, 1);
  }
  if (p && call) {
    std::lock_guard<std::mutex> lock(registryMutex);
    registry()[p] = call;
  }
  return p;
}

extern "C" void *attnGuardedMalloc(size_t n) { return checked(allocate(n, 0), n); }

extern "C" void *attnGuardedAlignedAlloc(size_t alignment, size_t n) {
  return checked(allocate(n, alignment), n);
}

extern "C" int attnGuardedPosixMemalign(void **out, size_t alignment, size_t n) {
  *out = checked(allocate(n, alignment), n);
  return 0;
}

extern "C" void attnGuardedFree(void *p) {
  if (!p)
    return;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    registry().erase(p);
  }
  releaseBlock(p);
}

/// Forgets (keep = true: the caller owns them) or frees the blocks of `call`.
void releaseBlocks(GuardedCall *call, bool keep) {
  std::vector<void *> blocks;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    for (auto it = registry().begin(); it != registry().end();) {
      if (it->second == call) {
        blocks.push_back(it->first);
        it = registry().erase(it);
      } else {
        ++it;
      }
    }
  }
  if (!keep)
    for (void *p : blocks)
      releaseBlock(p);
}

/// setjmp lives in its own frame, and nothing it reads changes after the
/// setjmp: the longjmp back here is well-defined.
bool callWithEscape(void (*fn)(void **), void **args, GuardedCall &call) {
  std::jmp_buf escape;
  call.escape = &escape;
  if (setjmp(escape) != 0)
    return false;
  fn(args);
  return true;
}

} // namespace

void adviseHugePages(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr size_t kHuge = size_t(2) << 20;
  static const bool enabled = [] {
    const char *env = std::getenv("ATTN_HUGE_PAGES");
    return !(env && env[0] == '0' && env[1] == '\0');
  }();
  if (!enabled || !p || n < 2 * kHuge)
    return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (end > begin)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

void releaseBlock(void *p) {
  if (!p)
    return;
  BlockCache &c = blockCache();
  bool cached = false;
  std::vector<void *> drop; // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.sizes.find(p); it != c.sizes.end()) {
      size_t n = it->second;
      c.sizes.erase(it);
      if (n <= c.limit) {
        c.bySize.emplace(n, p);
        c.order.emplace_back(p, n);
        c.bytes += n;
        cached = true;
        drop = c.trim(c.limit); // the oldest beyond the limit, never p
      }
    }
  }
  if (!cached)
    std::free(p);
  for (void *q : drop)
    std::free(q);
}

size_t cachedBlockBytes() {
  BlockCache &c = blockCache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.bytes;
}

void setBlockCacheLimit(size_t bytes) { trimCache(bytes, /*newLimit=*/true); }

std::vector<std::pair<const char *, void *>> guardedAllocSymbols() {
  return {{"malloc", reinterpret_cast<void *>(&attnGuardedMalloc)},
          {"aligned_alloc", reinterpret_cast<void *>(&attnGuardedAlignedAlloc)},
          {"posix_memalign", reinterpret_cast<void *>(&attnGuardedPosixMemalign)},
          {"free", reinterpret_cast<void *>(&attnGuardedFree)}};
}

bool runGuarded(void (*fn)(void **), void **args, uint64_t &failedBytes) {
  GuardedCall call;
  GuardedCall *outer = activeCall;
  activeCall = &call;
  bool ok = callWithEscape(fn, args, call);
  activeCall = outer;
  releaseBlocks(&call, /*keep=*/ok);
  failedBytes = ok ? 0 : call.failedBytes;
  return ok;
}

} // namespace attn::runtime
