//===- GuardedAlloc.cpp - allocation failure in compiled code as an error -===//
#include "attn/Runtime/GuardedAlloc.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

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

extern "C" void *attnGuardedMalloc(size_t n) { return checked(std::malloc(n), n); }

extern "C" void *attnGuardedAlignedAlloc(size_t alignment, size_t n) {
  return checked(std::aligned_alloc(alignment, n), n);
}

extern "C" int attnGuardedPosixMemalign(void **out, size_t alignment, size_t n) {
  void *p = nullptr;
  int rc = posix_memalign(&p, alignment, n);
  *out = checked(rc == 0 ? p : nullptr, n);
  return 0;
}

extern "C" void attnGuardedFree(void *p) {
  if (!p)
    return;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    registry().erase(p);
  }
  std::free(p);
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
      std::free(p);
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
