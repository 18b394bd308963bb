//===- ResourceLimits.h - the memory a model may claim --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One limit on the memory an input may make Tessera allocate: a tensor a
// model declares or infers, the memories of an accelerator configuration.
// Checked before anything is allocated, so that a hostile size ends in an
// error that names it instead of an allocation failure, a swap storm or the
// OOM killer.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SUPPORT_RESOURCELIMITS_H
#define TESSERA_SUPPORT_RESOURCELIMITS_H

#include <cstdint>
#include <string>

namespace tessera {

/// The most bytes one tensor or one simulated memory may take: the
/// environment's TESSERA_MEMORY_LIMIT (bytes, or with a K, M, G or T
/// suffix for powers of 1024) when it is set and valid, else the machine's
/// physical memory.
uint64_t memoryLimitBytes();

/// "N bytes" in words for an error ("4000000000000000 bytes (3638 TiB)").
std::string describeBytes(uint64_t bytes);

} // namespace tessera

#endif // TESSERA_SUPPORT_RESOURCELIMITS_H
