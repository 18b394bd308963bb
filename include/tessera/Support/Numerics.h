//===- Numerics.h - number formats, casts and linear quantization ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one numerics library of the simulator, the runtime helpers and the
// tests (plain C++, no MLIR). Formats, as stored bit patterns:
//   bf16      1 sign, 8 exponent (bias 127), 7 mantissa; IEEE specials.
//   f16       IEEE binary16: 5 exponent (bias 15), 10 mantissa.
//   f8E4M3FN  OCP E4M3: 4 exponent (bias 7), 3 mantissa, no infinities,
//             NaN only S.1111.111, largest finite 448 (S.1111.110).
//   f8E5M2    OCP E5M2: 5 exponent (bias 15), 2 mantissa, IEEE specials,
//             largest finite 57344.
// Every value of these formats is exact in fp32, so decoding is exact.
//
// Encoding fp32 rounds to nearest, ties to even ([x] below), with subnormal
// results, then applies the overflow rule. The rules are ONNX Cast's tables
// (opset 19+) for saturate=1 (Overflow::Saturate) and saturate=0
// (Overflow::Ieee); MAX is the format's largest finite value:
//
//   x              | E4M3FN sat | E4M3FN ieee | E5M2 sat | E5M2 ieee
//   ---------------+------------+-------------+----------+----------
//   0, -0          | 0, -0      | 0, -0       | 0, -0    | 0, -0
//   NaN, -NaN      | NaN, -NaN  | NaN, -NaN   | NaN,-NaN | NaN, -NaN
//   +Inf           | MAX        | NaN         | MAX      | +Inf
//   -Inf           | -MAX       | -NaN        | -MAX     | -Inf
//   [x] > MAX      | MAX        | NaN         | MAX      | +Inf
//   [x] < -MAX     | -MAX       | -NaN        | -MAX     | -Inf
//   else           | [x]        | [x]         | [x]      | [x]
//
// "[x] > MAX" compares the value already rounded to the format's mantissa
// width: 464 is the tie between E4M3FN's 448 and 480, rounds to 448 (even)
// and so is finite in both modes; 465 rounds to 480 and overflows. bf16
// and f16 follow the E5M2 column (they have infinities); ONNX casts them
// with the Ieee rule, and that is their default here. A NaN result is the
// format's canonical quiet NaN with the input's sign (payload dropped).
//
// Linear quantization follows ONNX QuantizeLinear / DequantizeLinear
// (opset 21): the scale divides,
//   q = saturate(round_half_to_even(x / scale) + zero_point)   (integers)
//   q = cast(x / scale, saturate)                              (fp8)
//   x = (q - zero_point) * scale                               (dequantize)
// with x / scale and the dequantizing product in fp32.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SUPPORT_NUMERICS_H
#define TESSERA_SUPPORT_NUMERICS_H

#include "tessera/Support/ElementType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace tessera::numerics {

/// What an encoding does with infinities and values whose rounding is past
/// the largest finite value (the table above): Ieee is ONNX's saturate=0
/// (infinity, or NaN where the format has none), Saturate is saturate=1
/// (the largest finite value of that sign; also the accelerator's
/// converters).
enum class Overflow { Ieee, Saturate };

uint16_t toBF16(float value, Overflow overflow = Overflow::Ieee);
float fromBF16(uint16_t bits);
uint16_t toF16(float value, Overflow overflow = Overflow::Ieee);
float fromF16(uint16_t bits);
uint8_t toF8E4M3FN(float value, Overflow overflow = Overflow::Saturate);
float fromF8E4M3FN(uint8_t bits);
uint8_t toF8E5M2(float value, Overflow overflow = Overflow::Saturate);
float fromF8E5M2(uint8_t bits);

/// The largest finite value of `type` (fp32's for f32 and non-float types).
float largestFinite(ElementType type);

/// x rounded half to even to an integer, whatever the floating-point
/// environment's rounding mode: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2.
double roundHalfToEven(double x);

/// fp32 rounded to `type` and back, as ONNX's Cast does: fp8 with
/// `overflow` (its saturate attribute), bf16 and f16 with Overflow::Ieee;
/// i8 rounds half to even and saturates to [-128, 127] (NaN gives 0);
/// other types return `value`.
float roundTo(ElementType type, float value,
              Overflow overflow = Overflow::Saturate);

/// Requantization of an int32 accumulator to int8: the accumulator
/// converted to fp32 (ties to even), times `scale` in fp32, rounded half to
/// even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2), plus `zeroPoint`, saturated to
/// [-128, 127]. A NaN product gives `zeroPoint` (saturated).
int8_t requantize(int32_t accumulator, float scale, int32_t zeroPoint = 0);

/// The element types linear quantization produces.
enum class QuantizedType { I8, U8, F8E4M3FN, F8E5M2 };

/// Where a quantization's parameters vary, decided as ONNX does from the
/// scale's size and `blockSize`:
///  - blockSize == 0 and one scale: per tensor;
///  - blockSize == 0 and shape[axis] scales: per axis, scale[i] for index i
///    along `axis`;
///  - blockSize > 0: blocked (opset 21), the scale tensor has `shape` with
///    shape[axis] replaced by ceil(shape[axis] / blockSize), row-major, and
///    element (.., i, ..) uses the scale at (.., i / blockSize, ..).
/// `zeroPoint` is empty (all zero) or as long as `scale`; fp8 types take
/// no zero point (empty or all zero). `axis` may be negative (counted from
/// the back); ONNX's default is 1.
struct QuantizationParams {
  llvm::ArrayRef<float> scale;
  llvm::ArrayRef<int32_t> zeroPoint = {};
  int64_t axis = 1;
  int64_t blockSize = 0;
};

/// ONNX QuantizeLinear of the row-major tensor `x` of `shape` into `type`,
/// one byte per element in `y` (i8 as two's complement). Integers: q =
/// clamp(round_half_to_even(x / scale) + zero_point) to the type's range, a
/// NaN quotient giving the zero point. fp8: the cast of x / scale with
/// `overflow` (ONNX's saturate attribute; Saturate is its default).
/// Fails, writing nothing, when the parameters do not fit `shape` and
/// `type`: the sizes of x, y, scale or zero point, the axis, the block
/// size, a zero point out of the type's range, a non-zero fp8 zero point.
/// Scales are not checked: each one divides, whatever its value.
llvm::Error quantizeLinear(llvm::ArrayRef<float> x,
                           llvm::ArrayRef<int64_t> shape,
                           const QuantizationParams &params, QuantizedType type,
                           llvm::MutableArrayRef<uint8_t> y,
                           Overflow overflow = Overflow::Saturate);

/// ONNX DequantizeLinear: x = (q - zero_point) * scale in fp32 (fp8: the
/// decoded value times scale). The same parameter checks as quantizeLinear.
llvm::Error dequantizeLinear(llvm::ArrayRef<uint8_t> y,
                             llvm::ArrayRef<int64_t> shape,
                             const QuantizationParams &params,
                             QuantizedType type,
                             llvm::MutableArrayRef<float> x);

} // namespace tessera::numerics

#endif // TESSERA_SUPPORT_NUMERICS_H
