//===- Numerics.h - the accelerator's number formats and dot products -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The operand formats of the systolic array are the numerics library's
// (tessera/Support/Numerics.h: bf16, fp16, fp8 E4M3FN and E5M2 encoded
// from fp32 with round to nearest even; the array's converters saturate
// fp8). Every narrow value is exact in fp32, so products are exact in fp32
// and only the accumulation rounds: dot() fixes its order. int8 operands
// accumulate in int32 and requantize with round half to even and
// saturation.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SIM_NUMERICS_H
#define TESSERA_SIM_NUMERICS_H

#include "tessera/Support/ElementType.h"
#include "tessera/Support/Numerics.h"

#include <cstddef>
#include <cstdint>

namespace tessera::sim {

/// The accelerator's number formats are element types (the ones
/// `isNumberFormat` accepts: f32, bf16, f16, f8E4M3FN, f8E5M2, i8).
using NumberFormat = tessera::ElementType;

/// Whether the accelerator has `type` as a number format.
bool isNumberFormat(NumberFormat type);

// The conversions are the numerics library's.
using numerics::fromBF16;
using numerics::fromF16;
using numerics::fromF8E4M3FN;
using numerics::fromF8E5M2;
using numerics::Overflow;
using numerics::requantize;
using numerics::roundTo;
using numerics::toBF16;
using numerics::toF16;
using numerics::toF8E4M3FN;
using numerics::toF8E5M2;

/// The accelerator's dot product of `count` operands already in an
/// operand format (exact in fp32): products are exact in fp32 and are
/// added in fp32 in index order, starting from `accumulator` — the order
/// a weight-stationary column adds them, k = 0, 1, ... within a fold, fold
/// results added to the accumulator fold by fold.
float dot(const float *a, const float *b, size_t count, float accumulator);

/// int8 x int8 products summed in int32 (wrapping like the hardware's
/// 32-bit adders).
int32_t dotI8(const int8_t *a, const int8_t *b, size_t count,
              int32_t accumulator);

/// Arithmetic right shift by `shift` rounding half to even (the array's
/// rounding shifter): (5 >> 1) = 2, (7 >> 1) = 4, (-5 >> 1) = -2.
int32_t roundingShiftRight(int32_t value, unsigned shift);

} // namespace tessera::sim

#endif // TESSERA_SIM_NUMERICS_H
