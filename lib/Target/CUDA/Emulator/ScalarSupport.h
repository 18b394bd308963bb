//===- ScalarSupport.h - Helpers shared by the scalar semantics -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TARGET_CUDA_EMULATOR_SCALARSUPPORT_H
#define TESSERA_LIB_TARGET_CUDA_EMULATOR_SCALARSUPPORT_H

#include "Executor.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include <cfenv>
#include <cmath>

namespace tessera::ptx {

/// Switches the host FPU to a directed PTX rounding mode for its lifetime.
class RoundingScope {
public:
  explicit RoundingScope(Rnd r) {
    int mode = r == Rnd::RZ   ? FE_TOWARDZERO
               : r == Rnd::RM ? FE_DOWNWARD
               : r == Rnd::RP ? FE_UPWARD
                              : -1;
    if (mode >= 0) {
      old = std::fegetround();
      std::fesetround(mode);
    }
  }
  ~RoundingScope() {
    if (old >= 0)
      std::fesetround(old);
  }
  RoundingScope(const RoundingScope &) = delete;
  RoundingScope &operator=(const RoundingScope &) = delete;

private:
  int old = -1;
};

inline float flushF32(float f) {
  return std::fpclassify(f) == FP_SUBNORMAL ? std::copysign(0.0f, f) : f;
}

inline int64_t signExtend(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return int64_t(v);
  v &= (uint64_t(1) << bits) - 1;
  if ((v >> (bits - 1)) & 1)
    v |= ~uint64_t(0) << bits;
  return int64_t(v);
}

/// cvt for one lane: \p a is the source (\p b the second source of the
/// two-input packed forms). Returns false with \p why on an unsupported
/// combination.
bool convert(const Instruction &I, uint64_t a, uint64_t b, uint64_t &out,
             const char *&why);

/// mov, including packing into and unpacking from vector operands.
bool execMov(Exec &e, const Instruction &I, Warp &w, uint32_t mask);

} // namespace tessera::ptx

#endif // TESSERA_LIB_TARGET_CUDA_EMULATOR_SCALARSUPPORT_H
