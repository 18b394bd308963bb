//===- FloatFormats.h - Narrow float encodings and rounding -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Exact conversions between binary64 and the formats PTX converts to:
// f32, f16, bf16, tf32 and the fp8 formats e4m3 (no infinities, 448 max)
// and e5m2. Rounding is done on the exact value, once, so directed modes
// are correct (no double rounding through an intermediate format).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_EMULATOR_FLOATFORMATS_H
#define TESSERA_TARGET_CUDA_EMULATOR_FLOATFORMATS_H

#include "tessera/Target/CUDA/Emulator/PTXProgram.h"
#include <cstdint>
#include <cstring>

namespace tessera::ptx {

enum class FloatFormat : uint8_t { F32, F16, BF16, TF32, E4M3, E5M2 };

/// Rounds \p x to \p fmt with rounding mode \p rnd (RN, RZ, RM, RP or RNA;
/// None means RN). With \p satfinite, infinities and overflow become the
/// largest finite value (NaN stays NaN). NaN results are the canonical NaN
/// of the format. Returns the encoding (TF32: an f32 pattern whose low 13
/// mantissa bits are zero).
uint32_t roundToFormat(double x, FloatFormat fmt, Rnd rnd, bool satfinite);

/// The exact value of an encoding.
double decodeFormat(uint32_t bits, FloatFormat fmt);

inline float bitsToF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t f32ToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline double bitsToF64(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}
inline uint64_t f64ToBits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

/// f16/bf16 <-> f32 helpers (exact widening, RN narrowing).
inline float halfToF32(uint16_t h) {
  return float(decodeFormat(h, FloatFormat::F16));
}
inline float bf16ToF32(uint16_t h) {
  return float(decodeFormat(h, FloatFormat::BF16));
}
inline uint16_t f32ToHalf(float f) {
  return uint16_t(roundToFormat(f, FloatFormat::F16, Rnd::RN, false));
}
inline uint16_t f32ToBF16(float f) {
  return uint16_t(roundToFormat(f, FloatFormat::BF16, Rnd::RN, false));
}

} // namespace tessera::ptx

#endif // TESSERA_TARGET_CUDA_EMULATOR_FLOATFORMATS_H
