//===- GuardedAllocTest.cpp - the compiled code's allocator ---------------===//
//
// The block cache of lib/AotRuntime/GuardedAlloc.cpp: large blocks the
// compiled code frees are reused by the next allocation of about their
// size, within a limit, oldest out first; small blocks, blocks too large
// for a request and unknown pointers go back to libc.
//
//===----------------------------------------------------------------------===//
#include "attn/Runtime/GuardedAlloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace attn::runtime;

namespace {

constexpr size_t MiB = size_t(1) << 20;

/// The compiled code's malloc, aligned_alloc and free, as the JIT binds them.
struct Allocator {
  void *(*malloc)(size_t) = nullptr;
  void *(*alignedAlloc)(size_t, size_t) = nullptr;
  void (*free)(void *) = nullptr;
  Allocator() {
    for (auto [name, addr] : guardedAllocSymbols()) {
      std::string n = name;
      if (n == "malloc")
        malloc = reinterpret_cast<void *(*)(size_t)>(addr);
      else if (n == "aligned_alloc")
        alignedAlloc = reinterpret_cast<void *(*)(size_t, size_t)>(addr);
      else if (n == "free")
        free = reinterpret_cast<void (*)(void *)>(addr);
    }
  }
};

class BlockCache : public ::testing::Test {
protected:
  void SetUp() override { setBlockCacheLimit(64 * MiB); }
  void TearDown() override { setBlockCacheLimit(0); }
  Allocator a;
};

TEST_F(BlockCache, ReusesAFreedLargeBlock) {
  ASSERT_TRUE(a.malloc && a.alignedAlloc && a.free);
  void *p = a.malloc(MiB);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, MiB);
  a.free(p);
  EXPECT_EQ(cachedBlockBytes(), MiB);
  // A request a little smaller takes the same block, already mapped.
  void *q = a.malloc(MiB - 4096);
  EXPECT_EQ(q, p);
  EXPECT_EQ(cachedBlockBytes(), 0u);
  // The block is whole: the caller may write all of it.
  std::memset(q, 2, MiB - 4096);
  a.free(q);
  EXPECT_EQ(cachedBlockBytes(), MiB); // its own size, not the request's
}

TEST_F(BlockCache, SmallBlocksAndFarLargerOnesAreNotUsed) {
  a.free(a.malloc(4096));
  EXPECT_EQ(cachedBlockBytes(), 0u);
  void *big = a.malloc(4 * MiB);
  a.free(big);
  EXPECT_EQ(cachedBlockBytes(), 4 * MiB);
  // More than twice the request: kept, not handed out.
  void *small = a.malloc(MiB);
  EXPECT_NE(small, big);
  EXPECT_EQ(cachedBlockBytes(), 4 * MiB);
  a.free(small);
  EXPECT_EQ(cachedBlockBytes(), 5 * MiB);
}

TEST_F(BlockCache, AlignmentIsKept) {
  for (size_t alignment : {size_t(64), size_t(4096), size_t(1) << 16}) {
    a.free(a.malloc(MiB)); // a cached block of malloc's alignment
    void *p = a.alignedAlloc(alignment, MiB);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << alignment;
    a.free(p);
  }
}

TEST_F(BlockCache, LimitDropsTheOldestFirst) {
  setBlockCacheLimit(2 * MiB + MiB / 2);
  void *x = a.malloc(MiB), *y = a.malloc(MiB), *z = a.malloc(MiB);
  a.free(x);
  a.free(y);
  EXPECT_EQ(cachedBlockBytes(), 2 * MiB);
  a.free(z); // x (the oldest) goes back to libc
  EXPECT_EQ(cachedBlockBytes(), 2 * MiB);
  void *r1 = a.malloc(MiB), *r2 = a.malloc(MiB);
  EXPECT_TRUE((r1 == y && r2 == z) || (r1 == z && r2 == y));
  EXPECT_EQ(cachedBlockBytes(), 0u);
  a.free(r1);
  a.free(r2);
  // A block larger than the limit is never kept.
  a.free(a.malloc(3 * MiB));
  EXPECT_EQ(cachedBlockBytes(), 2 * MiB);
  setBlockCacheLimit(0);
  EXPECT_EQ(cachedBlockBytes(), 0u);
  a.free(a.malloc(MiB));
  EXPECT_EQ(cachedBlockBytes(), 0u);
}

TEST_F(BlockCache, ForeignPointersGoToLibc) {
  // A block the compiled code did not allocate (results of an older
  // runtime, a caller's buffer handed back): freed, not cached.
  void *p = std::malloc(2 * MiB);
  releaseBlock(p);
  releaseBlock(nullptr);
  EXPECT_EQ(cachedBlockBytes(), 0u);
}

} // namespace

namespace {

/// "always", "madvise" or "never" (the bracketed word of the sysfs file),
/// or "" without THP.
std::string thpMode() {
  std::FILE *f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f)
    return "";
  char line[256] = {0};
  size_t n = std::fread(line, 1, sizeof(line) - 1, f);
  std::fclose(f);
  std::string s(line, n);
  size_t a = s.find('['), b = s.find(']');
  return a == std::string::npos || b == std::string::npos ? "" : s.substr(a + 1, b - a - 1);
}

/// kB of transparent huge pages (AnonHugePages) in the mapping that holds p.
long hugeKbAt(const void *p) {
  std::FILE *f = std::fopen("/proc/self/smaps", "r");
  if (!f)
    return -1;
  auto addr = reinterpret_cast<uintptr_t>(p);
  char line[512];
  bool inside = false;
  long kb = -1;
  while (std::fgets(line, sizeof(line), f)) {
    unsigned long lo, hi;
    if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = lo <= addr && addr < hi;
      continue;
    }
    long v;
    if (inside && std::sscanf(line, "AnonHugePages: %ld kB", &v) == 1) {
      kb = v;
      break;
    }
  }
  std::fclose(f);
  return kb;
}

TEST(HugePages, LargeFreshBlocksGetThemWhereTheKernelOffersThem) {
  // Where THP is "madvise" only an advised range gets huge pages: a fresh
  // 16 MiB block of the compiled code's allocator (advised) does once it
  // is written, a 16 MiB block from libc that nobody advised does not.
  if (thpMode() != "madvise" || std::getenv("ATTN_HUGE_PAGES"))
    GTEST_SKIP() << "needs transparent_hugepage=madvise (here '" << thpMode()
                 << "') and ATTN_HUGE_PAGES unset";
  Allocator a;
  setBlockCacheLimit(0); // a fresh block from libc, not a cached one
  size_t n = 16 * MiB;
  void *ours = a.malloc(n);
  void *plain = std::malloc(n);
  ASSERT_TRUE(ours && plain);
  std::memset(ours, 1, n);
  std::memset(plain, 1, n);
  // (madvise splits the mapping at the advised range: look inside it, at
  // the block's first 2 MiB boundary.)
  auto inside = [](void *p) {
    return reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(p) + 2 * MiB - 1) &
                                    ~(2 * MiB - 1));
  };
  long advised = hugeKbAt(inside(ours)), unadvised = hugeKbAt(inside(plain));
  a.free(ours);
  std::free(plain);
  setBlockCacheLimit(256 * MiB);
  ASSERT_GE(advised, 0) << "no AnonHugePages line in /proc/self/smaps";
  EXPECT_EQ(unadvised, 0);
  // At least half the block in 2 MiB pages (the kernel may refuse some
  // when memory is fragmented; none at all means the hint was not given).
  EXPECT_GE(advised, long(n / 2 / 1024)) << "kB in huge pages";
  EXPECT_EQ(advised % 2048, 0) << "kB in huge pages";
}

} // namespace
