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
