//===- Compare.h - the rule that judges a model's outputs -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One pass/fail rule for every tool that compares outputs with expected
// values (tessera-run, tessera-sim run, the C API's users through the
// tools): numpy.allclose-style tolerances, or an error relative to the
// largest expected value, optionally with a least cosine similarity.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_COMPARE_H
#define TESSERA_RUNTIME_COMPARE_H

#include "tessera/Runtime/HostTensor.h"

#include <string>

namespace tessera::runtime {

struct Tolerances {
  /// |actual - expected| <= atol + rtol * |expected| for every element.
  double rtol = 1e-3, atol = 1e-5;
  /// When positive, replaces rtol/atol: the largest absolute error must be
  /// at most this fraction of the largest |expected|.
  double maxErrorRatio = 0;
  /// When positive, the cosine similarity must be at least this as well.
  double minCosine = 0;
  /// When positive, ||actual - expected|| / ||expected|| must be at most
  /// this as well.
  double maxRelativeL2 = 0;
};

/// One output judged against its expected value.
struct Verdict {
  Comparison comparison;
  /// The largest absolute error over the largest |expected|.
  double errorRatio = 0;
  bool cosineOk = true;
  bool relativeL2Ok = true;
  bool ok = false;
};

Verdict judgeOutput(const HostTensor &actual, const HostTensor &expected,
                    const Tolerances &tolerances);

/// The verdict as tessera-run prints it after an output's name and shape:
/// ": max abs error 1e-06, max rel error 2e-05: ok" (with the cosine and
/// the error ratio when the tolerances ask for them).
std::string describeVerdict(const Verdict &verdict,
                            const Tolerances &tolerances);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_COMPARE_H
