//===- Builtins.cpp - compiler runtime functions compiled code calls ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Builtins.h"

#include <cstdint>
#include <cstring>

extern "C" __bf16 __truncsfbf2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t narrow;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    narrow = static_cast<uint16_t>((bits >> 16) | 0x40u);
  else
    narrow = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >>
                                   16);
  __bf16 result;
  std::memcpy(&result, &narrow, sizeof result);
  return result;
}
