//===- Precision.h - precision classes and policies -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What the precision passes (tessera-assign-precision,
// tessera-legalize-precision) share with the driver: an op's precision
// class, read from its ODS trait, and the policies a user may choose.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TRANSFORMS_PRECISION_H
#define TESSERA_TRANSFORMS_PRECISION_H

#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tessera {

/// The attribute that records a precision decision on an op: the type it
/// computes in, and why when that is not what the policy asked for
/// ("f32: kept by --keep-fp32 pattern '/head.*'").
inline constexpr char kPrecisionAttr[] = "tessera.precision";

/// The precision class of a tessera op (its `Tessera_ComputesNarrow`,
/// `Tessera_FollowsInputs`, `Tessera_ComputesWide` or `Tessera_MovesData`
/// trait); nothing for the conversions (cast, quantize, dequantize), the
/// structure ops and ops of other dialects.
std::optional<OpClass> precisionClass(mlir::Operation *op);

/// The policies `--precision` takes, in the order `--help` lists them.
llvm::ArrayRef<llvm::StringRef> precisionPolicies();

/// Whether `policy` is one of precisionPolicies().
bool isPrecisionPolicy(llvm::StringRef policy);

} // namespace tessera

#endif // TESSERA_TRANSFORMS_PRECISION_H
