//===- StructureOps.cpp - the fusion region and its terminator ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

using namespace mlir;
using namespace mlir::tessera;

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 0)
    return emitOpError("body must not have block arguments");
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with tessera.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().size() << " values of types "
           << yield.getValues().getTypes() << " but the region has "
           << getNumResults() << " results of types " << getResultTypes();
  if (&body.front() == yield.getOperation())
    return emitOpError("body has no ops to fuse");
  WalkResult nested = getBody().walk([](FusionOp) {
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return emitOpError("must not contain another tessera.fusion");
  return success();
}
