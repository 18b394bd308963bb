//===- TesseraOps.cpp - generated op definitions and shared op helpers ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The ODS-generated code of every op lives in this one translation unit;
// verifiers, type inference and folders are split by op family into the
// neighbouring files.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "OpUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::tessera;

FailureOr<SmallVector<int64_t>>
mlir::tessera::normalizeAxes(std::optional<Location> loc, StringRef opName,
                             ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> normalized;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    std::optional<int64_t> dim = ::tessera::normalizeAxis(axis, rank);
    if (!dim)
      return emitInferError(loc, opName,
                            "axis " + Twine(axis) + " is out of range for rank " +
                                Twine(rank));
    if (!seen.insert(*dim).second)
      return emitInferError(loc, opName,
                            "axis " + Twine(axis) + " appears more than once");
    normalized.push_back(*dim);
  }
  return normalized;
}

#define GET_OP_CLASSES
#include "tessera/Dialect/Tessera/IR/TesseraOps.cpp.inc"
