//===- BlockCache.h - reuse of large buffers across model runs ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiled models allocate their intermediate and result buffers on every
// run. Large blocks obtained from the system allocator are returned to the
// operating system when freed, so the next run page-faults them in again
// (for a 128x768x3072 matmul that is a third of its time). Blocks of at
// least kMinCachedBytes are kept after they are freed, up to
// kMaxIdleBytes in all, and handed out again to requests of a similar size.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_RUNTIME_BLOCKCACHE_H
#define TESSERA_LIB_RUNTIME_BLOCKCACHE_H

#include <cstddef>
#include <cstdint>

namespace tessera::runtime {
constexpr size_t kMinCachedBytes = size_t(64) << 10;
constexpr size_t kMaxIdleBytes = size_t(1) << 30;
} // namespace tessera::runtime

/// malloc, aligned_alloc and free with the cache; bound to the symbols
/// lowered memref.alloc and memref.dealloc call. Thread safe. A request
/// over tessera::memoryLimitBytes(), or one the system refuses, returns
/// null and is counted; a zero-byte request gets a one-byte block.
extern "C" void *tesseraAlloc(uint64_t size);
extern "C" void *tesseraAlignedAlloc(uint64_t alignment, uint64_t size);
extern "C" void tesseraFree(void *pointer);
/// How many requests the allocator refused so far (over the memory limit,
/// or refused by the system), and the size of the last one in
/// `*lastBytes` when not null. Compiled code and the runtime compare it
/// before and after a run (see the tessera-cpu-check-allocations pass).
extern "C" uint64_t tesseraAllocationFailures(uint64_t *lastBytes);
/// Bytes the cache holds for reuse (tests).
extern "C" uint64_t tesseraIdleBytes();
/// Frees the idle blocks, and the cache itself when no block is live; for
/// an artifact being unloaded (its cache would otherwise stay allocated
/// with nothing left to reach it). No allocation may follow.
extern "C" void tesseraReleaseCache();

#endif // TESSERA_LIB_RUNTIME_BLOCKCACHE_H
