//===- BlockCache.cpp - reuse of large buffers across model runs ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "BlockCache.h"
#include "tessera/Support/ResourceLimits.h"

#include <atomic>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <mutex>
#include <unordered_map>

using namespace tessera::runtime;

namespace {

class BlockCache {
public:
  void *allocate(size_t alignment, size_t size) {
    if (size < kMinCachedBytes)
      return alignment ? std::aligned_alloc(alignment, roundUp(size, alignment))
                       : std::malloc(size);
    {
      std::lock_guard<std::mutex> lock(mutex);
      // The smallest idle block that fits and wastes at most a quarter.
      for (auto it = idle.lower_bound(size);
           it != idle.end() && it->first <= size + size / 4; ++it) {
        void *pointer = it->second;
        if (alignment && reinterpret_cast<uintptr_t>(pointer) % alignment)
          continue;
        live[pointer] = it->first;
        idleBytes -= it->first;
        idle.erase(it);
        return pointer;
      }
    }
    size_t bytes = alignment ? roundUp(size, alignment) : size;
    void *pointer =
        alignment ? std::aligned_alloc(alignment, bytes) : std::malloc(bytes);
    if (!pointer)
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    live[pointer] = bytes;
    return pointer;
  }

  void release(void *pointer) {
    if (!pointer)
      return;
    // Blocks the cache hands out are at least kMinCachedBytes long; smaller
    // ones go straight back without taking the lock.
    if (malloc_usable_size(pointer) < kMinCachedBytes) {
      std::free(pointer);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(pointer);
    if (it == live.end()) {
      std::free(pointer);
      return;
    }
    size_t size = it->second;
    live.erase(it);
    idle.emplace(size, pointer);
    idleBytes += size;
    // Over budget: give back the largest idle blocks first.
    while (idleBytes > kMaxIdleBytes) {
      auto largest = std::prev(idle.end());
      idleBytes -= largest->first;
      std::free(largest->second);
      idle.erase(largest);
    }
  }

  size_t idleSize() {
    std::lock_guard<std::mutex> lock(mutex);
    return idleBytes;
  }

  /// Frees every idle block; whether no block is live any more.
  bool releaseIdle() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : idle)
      std::free(entry.second);
    idle.clear();
    idleBytes = 0;
    return live.empty();
  }

private:
  static size_t roundUp(size_t size, size_t alignment) {
    return (size + alignment - 1) / alignment * alignment;
  }
  std::mutex mutex;
  std::unordered_map<void *, size_t> live;
  std::multimap<size_t, void *> idle;
  size_t idleBytes = 0;
};

BlockCache *instance = nullptr;
std::once_flag created;
/// Set once tesseraReleaseCache ran: later calls use malloc and free.
std::atomic<bool> released{false};

/// The cache, or null once released.
BlockCache *cache() {
  // Not destroyed with the program's statics: compiled code may free during
  // static destruction. An artifact that is unloaded releases it
  // (tesseraReleaseCache).
  if (released.load(std::memory_order_acquire))
    return nullptr;
  std::call_once(created, [] { instance = new BlockCache; });
  return instance;
}

} // namespace

namespace {
std::atomic<uint64_t> failedAllocations{0};
std::atomic<uint64_t> lastFailedBytes{0};

/// Refuses requests over the memory limit (read once) before asking the
/// system, which may promise more than it can give.
bool overLimit(uint64_t size) {
  static const uint64_t limit = tessera::memoryLimitBytes();
  return size > limit;
}

void *counted(void *pointer, uint64_t size) {
  if (!pointer) {
    lastFailedBytes.store(size, std::memory_order_relaxed);
    failedAllocations.fetch_add(1, std::memory_order_acq_rel);
  }
  return pointer;
}
} // namespace

extern "C" void *tesseraAlloc(uint64_t size) {
  // A zero-byte request gets a block of its own: null means failure.
  size = size ? size : 1;
  if (overLimit(size))
    return counted(nullptr, size);
  BlockCache *c = cache();
  return counted(c ? c->allocate(0, size) : std::malloc(size), size);
}
extern "C" void *tesseraAlignedAlloc(uint64_t alignment, uint64_t size) {
  size = size ? size : 1;
  if (overLimit(size) || (alignment && size > UINT64_MAX - alignment))
    return counted(nullptr, size);
  if (BlockCache *c = cache())
    return counted(c->allocate(alignment, size), size);
  return counted(alignment ? std::aligned_alloc(alignment,
                                                (size + alignment - 1) /
                                                    alignment * alignment)
                           : std::malloc(size),
                 size);
}
extern "C" uint64_t tesseraAllocationFailures(uint64_t *lastBytes) {
  uint64_t count = failedAllocations.load(std::memory_order_acquire);
  if (lastBytes)
    *lastBytes = lastFailedBytes.load(std::memory_order_relaxed);
  return count;
}
extern "C" void tesseraFree(void *pointer) {
  if (BlockCache *c = cache())
    c->release(pointer);
  else
    std::free(pointer);
}
extern "C" uint64_t tesseraIdleBytes() {
  BlockCache *c = cache();
  return c ? c->idleSize() : 0;
}
extern "C" void tesseraReleaseCache() {
  if (released.exchange(true, std::memory_order_acq_rel) || !instance)
    return;
  // Blocks still live keep the cache's books: it stays, idle blocks go.
  if (instance->releaseIdle()) {
    delete instance;
    instance = nullptr;
  }
}
