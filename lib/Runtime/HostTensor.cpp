//===- HostTensor.cpp - tensors in host memory, and their ONNX file form --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/HostTensor.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>

using namespace tessera::runtime;

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double HostTensor::at(int64_t i) const {
  const uint8_t *p = data.data() + i * elementSize(type);
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (type) {
  case ElementType::F32:
    return load(float());
  case ElementType::F16: {
    llvm::APFloat f(llvm::APFloat::IEEEhalf(),
                    llvm::APInt(16, load(uint16_t())));
    return f.convertToDouble();
  }
  case ElementType::BF16: {
    uint32_t bits = static_cast<uint32_t>(load(uint16_t())) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case ElementType::I8:
    return load(int8_t());
  case ElementType::I32:
    return load(int32_t());
  case ElementType::I64:
    return static_cast<double>(load(int64_t()));
  case ElementType::Bool:
    return load(uint8_t()) != 0;
  case ElementType::F8E4M3FN:
    return llvm::APFloat(llvm::APFloat::Float8E4M3FN(),
                         llvm::APInt(8, load(uint8_t())))
        .convertToDouble();
  case ElementType::F8E5M2:
    return llvm::APFloat(llvm::APFloat::Float8E5M2(),
                         llvm::APInt(8, load(uint8_t())))
        .convertToDouble();
  }
  return 0;
}

Comparison tessera::runtime::compareTensors(const HostTensor &actual,
                                            const HostTensor &expected,
                                            double rtol, double atol) {
  Comparison c;
  if (actual.shape != expected.shape) {
    c.shapesMatch = false;
    return c;
  }
  double dot = 0, actualNorm = 0, expectedNorm = 0, errorNorm = 0;
  for (int64_t i = 0, n = expected.numElements(); i < n; ++i) {
    double a = actual.at(i), e = expected.at(i);
    if (std::isfinite(e))
      c.maxAbsExpected = std::max(c.maxAbsExpected, std::fabs(e));
    dot += a * e;
    actualNorm += a * a;
    expectedNorm += e * e;
    errorNorm += (a - e) * (a - e);
    if (std::isnan(a) && std::isnan(e))
      continue;
    if (std::isinf(a) && std::isinf(e) && (a > 0) == (e > 0))
      continue;
    double err = std::fabs(a - e);
    if (std::isnan(err))
      err = INFINITY;
    double rel = err / std::max(std::fabs(e), 1e-30);
    if (err > c.maxAbsError || c.worstIndex < 0) {
      c.maxAbsError = std::max(c.maxAbsError, err);
      c.worstIndex = i;
    }
    c.maxRelError = std::max(c.maxRelError, rel);
    if (!(err <= atol + rtol * std::fabs(e)))
      ++c.mismatches;
  }
  if (actualNorm > 0 || expectedNorm > 0)
    c.cosine = dot / std::sqrt(actualNorm * expectedNorm);
  if (std::isnan(c.cosine))
    c.cosine = 0;
  c.relativeL2 = expectedNorm > 0 ? std::sqrt(errorNorm / expectedNorm)
                                  : (errorNorm > 0 ? INFINITY : 0.0);
  if (std::isnan(c.relativeL2))
    c.relativeL2 = INFINITY;
  return c;
}
