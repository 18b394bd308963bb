//===- Numerics.h - the accelerator's bit-exact number formats ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The operand formats of the systolic array and their conversions from
// fp32 (round to nearest, ties to even), as stored bit patterns:
//   bf16 (8 exponent bits, 7 mantissa), fp16 (IEEE binary16),
//   fp8 E4M3FN (OCP: bias 7, no infinities, one NaN pattern per sign,
//   largest finite 448), fp8 E5M2 (OCP: IEEE-like, bias 15, largest 57344).
// Every narrow value is exact in fp32, so products are exact in fp32 and
// only the accumulation rounds: dot() fixes its order. int8 operands
// accumulate in int32 and requantize with round half to even and
// saturation.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SIM_NUMERICS_H
#define TESSERA_SIM_NUMERICS_H

#include "tessera/Support/ElementType.h"

#include <cstddef>
#include <cstdint>

namespace tessera::sim {

/// The accelerator's number formats are element types (the ones
/// `isNumberFormat` accepts: f32, bf16, f16, f8E4M3FN, f8E5M2, i8).
using NumberFormat = tessera::ElementType;

/// Whether the accelerator has `type` as a number format.
bool isNumberFormat(NumberFormat type);

/// What a conversion does with values beyond the largest finite one:
/// IEEE behavior (infinity, or NaN where the format has none), or clamping
/// to the largest finite value of that sign (the OCP spec's saturating
/// mode, what the accelerator's converters do).
enum class Overflow { Ieee, Saturate };

uint16_t toBF16(float value);
float fromBF16(uint16_t bits);
uint16_t toF16(float value);
float fromF16(uint16_t bits);
uint8_t toF8E4M3FN(float value, Overflow overflow = Overflow::Saturate);
float fromF8E4M3FN(uint8_t bits);
uint8_t toF8E5M2(float value, Overflow overflow = Overflow::Saturate);
float fromF8E5M2(uint8_t bits);

/// fp32 rounded to `format` and back (I8 rounds half to even and
/// saturates to [-128, 127]).
float roundTo(NumberFormat format, float value,
              Overflow overflow = Overflow::Saturate);

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

/// Requantization of an int32 accumulator: the accumulator converted to
/// fp32, times `scale` in fp32, rounded half to even, saturated to
/// [-128, 127] (NaN gives 0).
int8_t requantize(int32_t accumulator, float scale);

/// Arithmetic right shift by `shift` rounding half to even (the array's
/// rounding shifter): (5 >> 1) = 2, (7 >> 1) = 4, (-5 >> 1) = -2.
int32_t roundingShiftRight(int32_t value, unsigned shift);

} // namespace tessera::sim

#endif // TESSERA_SIM_NUMERICS_H
