//===- Compare.cpp - the rule that judges a model's outputs ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/Compare.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tessera::runtime;

Verdict tessera::runtime::judgeOutput(const HostTensor &actual,
                                      const HostTensor &expected,
                                      const Tolerances &tolerances) {
  Verdict v;
  v.comparison =
      compareTensors(actual, expected, tolerances.rtol, tolerances.atol);
  const Comparison &c = v.comparison;
  if (!c.shapesMatch)
    return v;
  v.errorRatio = c.maxAbsError / std::max(c.maxAbsExpected, 1e-30);
  v.cosineOk = tolerances.minCosine <= 0 || c.cosine >= tolerances.minCosine;
  bool within = tolerances.maxErrorRatio > 0
                    ? v.errorRatio <= tolerances.maxErrorRatio
                    : c.mismatches == 0;
  v.relativeL2Ok = tolerances.maxRelativeL2 <= 0 ||
                   c.relativeL2 <= tolerances.maxRelativeL2;
  v.ok = v.cosineOk && v.relativeL2Ok && within;
  return v;
}

std::string tessera::runtime::describeVerdict(const Verdict &v,
                                              const Tolerances &tolerances) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const Comparison &c = v.comparison;
  if (!c.shapesMatch) {
    os << ": shape differs from the expected one";
    return text;
  }
  os << llvm::format(": max abs error %.3g, max rel error %.3g", c.maxAbsError,
                     c.maxRelError);
  if (tolerances.minCosine > 0) {
    os << llvm::format(", cosine %.6f", c.cosine);
    if (!v.cosineOk) {
      os << llvm::format(" (below %g): FAIL", tolerances.minCosine);
      return text;
    }
  }
  if (tolerances.maxRelativeL2 > 0) {
    os << llvm::format(", relative L2 %.3g", c.relativeL2);
    if (!v.relativeL2Ok) {
      os << llvm::format(" (above %g): FAIL", tolerances.maxRelativeL2);
      return text;
    }
  }
  if (tolerances.maxErrorRatio > 0)
    os << llvm::format(", %.3g of max |expected|: %s", v.errorRatio,
                       v.ok ? "ok" : "FAIL");
  else if (c.mismatches)
    os << ", " << c.mismatches << " elements beyond tolerance: FAIL";
  else
    os << ": ok";
  return text;
}
