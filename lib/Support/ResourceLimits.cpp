//===- ResourceLimits.cpp - the memory a model may claim ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Support/ResourceLimits.h"

#include <cerrno>
#include <cstdlib>
#include <unistd.h>

// Plain C++ (no LLVM): compiled into every CPU artifact too, whose
// allocator refuses requests over the limit.
uint64_t tessera::memoryLimitBytes() {
  if (const char *text = std::getenv("TESSERA_MEMORY_LIMIT")) {
    std::string value(text);
    unsigned shift = 0;
    if (!value.empty()) {
      switch (value.back()) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        break;
      }
      if (shift)
        value.pop_back();
    }
    bool digits = !value.empty() && value.size() <= 20 &&
                  value.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    uint64_t n = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
    if (digits && errno == 0 && n && n <= (UINT64_MAX >> shift))
      return n << shift;
  }
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

std::string tessera::describeBytes(uint64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB",
                                       "EiB"};
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes < 1024)
    return text;
  double scaled = static_cast<double>(bytes);
  int unit = -1;
  while (scaled >= 1024 && unit < 5) {
    scaled /= 1024;
    ++unit;
  }
  return text + " (" + std::to_string(static_cast<uint64_t>(scaled)) + " " +
         kUnits[unit] + ")";
}
