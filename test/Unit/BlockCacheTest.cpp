//===- BlockCacheTest.cpp - unit tests of the runtime's block cache -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "BlockCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using namespace tessera::runtime;

namespace {

TEST(BlockCache, ReusesAFreedLargeBlock) {
  uint64_t before = tesseraIdleBytes();
  void *first = tesseraAlloc(1 << 20);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, 1 << 20);
  tesseraFree(first);
  EXPECT_EQ(tesseraIdleBytes(), before + (1 << 20));
  // The same size again: the same block, no longer idle.
  void *second = tesseraAlloc(1 << 20);
  EXPECT_EQ(second, first);
  EXPECT_EQ(tesseraIdleBytes(), before);
  tesseraFree(second);
}

TEST(BlockCache, DoesNotHandOutAMuchLargerBlock) {
  void *big = tesseraAlloc(8 << 20);
  tesseraFree(big);
  // Half the size would waste half the block: a new one.
  void *half = tesseraAlloc(4 << 20);
  EXPECT_NE(half, big);
  tesseraFree(half);
}

TEST(BlockCache, SmallBlocksGoStraightBack) {
  uint64_t before = tesseraIdleBytes();
  void *small = tesseraAlloc(256);
  ASSERT_NE(small, nullptr);
  tesseraFree(small);
  EXPECT_EQ(tesseraIdleBytes(), before);
  tesseraFree(nullptr);
}

TEST(BlockCache, HonoursAlignment) {
  for (uint64_t alignment : {64u, 4096u}) {
    void *p = tesseraAlignedAlloc(alignment, 3 << 20);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
    tesseraFree(p);
    void *q = tesseraAlignedAlloc(alignment, 3 << 20);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % alignment, 0u);
    tesseraFree(q);
  }
}

TEST(BlockCache, LiveBlocksAreDistinctAcrossThreads) {
  // Threads allocate, write and free concurrently; no block is handed to
  // two owners at once.
  std::vector<std::thread> threads;
  std::vector<std::vector<void *>> held(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &held] {
      for (int round = 0; round < 50; ++round) {
        void *p = tesseraAlloc((64 << 10) * (1 + round % 3));
        std::memset(p, t, 64 << 10);
        if (round % 5 == 0)
          held[t].push_back(p);
        else
          tesseraFree(p);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  std::set<void *> distinct;
  size_t total = 0;
  for (auto &blocks : held) {
    distinct.insert(blocks.begin(), blocks.end());
    total += blocks.size();
  }
  EXPECT_EQ(distinct.size(), total);
  for (int t = 0; t < 4; ++t)
    for (void *p : held[t]) {
      EXPECT_EQ(static_cast<unsigned char *>(p)[0], t);
      tesseraFree(p);
    }
}

// Releasing switches the process's cache off, as an artifact's cache goes
// when the library is unloaded; so it runs in a child process. Idle blocks
// are freed, later calls go to malloc and free, and the child exits with 0
// (in a sanitizer build, a leak would make it exit otherwise).
TEST(BlockCache, ReleaseFreesIdleBlocksThenFallsBackToMalloc) {
  EXPECT_EXIT(
      {
        void *large = tesseraAlloc(256 << 10);
        tesseraFree(large);
        if (tesseraIdleBytes() == 0)
          std::exit(1);
        tesseraReleaseCache();
        if (tesseraIdleBytes() != 0)
          std::exit(2);
        void *after = tesseraAlignedAlloc(64, 256 << 10);
        if (!after)
          std::exit(3);
        std::memset(after, 1, 256 << 10);
        tesseraFree(after);
        if (tesseraIdleBytes() != 0)
          std::exit(4);
        tesseraReleaseCache(); // twice is harmless
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
