//===- TensorBufferTest.cpp - results handed over without a copy ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "BlockCache.h"
#include "tessera/Runtime/HostTensor.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tessera::runtime;

namespace {

/// A block from the model allocator, as a result buffer that frees it.
TensorBuffer adoptBlock(size_t bytes, void **block) {
  *block = tesseraAlloc(bytes);
  std::memset(*block, 7, bytes);
  std::shared_ptr<void> owner(*block, [](void *p) { tesseraFree(p); });
  return TensorBuffer::adopt(static_cast<uint8_t *>(*block), bytes, owner);
}

TEST(TensorBuffer, AdoptedBytesAreReleasedWithTheLastCopy) {
  void *block;
  uint64_t idle;
  {
    TensorBuffer first = adoptBlock(1 << 20, &block);
    // Idle bytes with the block in use.
    idle = tesseraIdleBytes();
    EXPECT_EQ(first.data(), block);
    EXPECT_EQ(first.size(), size_t(1) << 20);
    {
      TensorBuffer second = first;
      EXPECT_EQ(second.data(), block);
    }
    // One copy left: the block is still in use.
    EXPECT_EQ(tesseraIdleBytes(), idle);
  }
  EXPECT_EQ(tesseraIdleBytes(), idle + (1 << 20));
  // The allocator hands the block out again.
  void *again = tesseraAlloc(1 << 20);
  EXPECT_EQ(again, block);
  tesseraFree(again);
}

TEST(TensorBuffer, ResizingMakesTheBytesItsOwn) {
  void *block;
  TensorBuffer buffer = adoptBlock(1 << 16, &block);
  uint64_t idle = tesseraIdleBytes();
  buffer.resize((1 << 16) + 4);
  EXPECT_NE(buffer.data(), block);
  EXPECT_EQ(buffer.size(), (size_t(1) << 16) + 4);
  EXPECT_EQ(buffer.data()[0], 7);
  EXPECT_EQ(buffer.data()[(1 << 16) - 1], 7);
  EXPECT_EQ(buffer.data()[1 << 16], 0);
  // The adopted block went back when the buffer stopped using it.
  EXPECT_EQ(tesseraIdleBytes(), idle + (1 << 16));

  uint8_t bytes[3] = {1, 2, 3};
  TensorBuffer other = adoptBlock(1 << 16, &block);
  other.assign(bytes, bytes + 3);
  EXPECT_EQ(other.size(), 3u);
  EXPECT_EQ(other.data()[2], 3);
  EXPECT_TRUE(TensorBuffer().empty());
}

} // namespace
