//===- Numerics.cpp - the accelerator's dot products and rounding shift ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Numerics.h"

#include <cstring>

using namespace tessera::sim;

float tessera::sim::dot(const float *a, const float *b, size_t count,
                        float accumulator) {
  for (size_t i = 0; i < count; ++i) {
    // Exact product (narrow operands), one fp32 rounding per addition; no
    // fused multiply-add contraction changes the order.
    volatile float product = a[i] * b[i];
    accumulator = accumulator + product;
  }
  return accumulator;
}

int32_t tessera::sim::dotI8(const int8_t *a, const int8_t *b, size_t count,
                            int32_t accumulator) {
  uint32_t sum = static_cast<uint32_t>(accumulator);
  for (size_t i = 0; i < count; ++i)
    sum += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * b[i]);
  int32_t result;
  std::memcpy(&result, &sum, sizeof(result));
  return result;
}

int32_t tessera::sim::roundingShiftRight(int32_t value, unsigned shift) {
  if (shift == 0)
    return value;
  if (shift >= 32)
    return 0;
  int64_t wide = value;
  int64_t quotient = wide >> shift; // floor
  // A product, not quotient << shift: shifting a negative value left is
  // undefined in C++17 (found by the sanitizer suite).
  int64_t remainder = wide - quotient * (int64_t(1) << shift);
  int64_t half = int64_t(1) << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1)))
    ++quotient;
  return static_cast<int32_t>(quotient);
}
