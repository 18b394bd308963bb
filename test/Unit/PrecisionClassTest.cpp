//===- PrecisionClassTest.cpp - every tessera op has a precision class ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The precision passes read an op's class from its ODS trait; an op added
// to the dialect without one would silently escape them. Every registered
// tessera op carries exactly one class, except the conversions and the
// structure ops, which carry none.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Tessera/IR/TesseraDialect.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tessera;

namespace {

TEST(PrecisionClass, EveryOpHasExactlyOne) {
  MLIRContext context;
  context.loadDialect<TesseraDialect>();
  const StringRef kWithout[] = {"tessera.cast",     "tessera.quantize",
                                "tessera.dequantize", "tessera.constant",
                                "tessera.fusion",   "tessera.yield"};
  unsigned checked = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "tessera")
      continue;
    ++checked;
    unsigned classes = name.hasTrait<mlir::tessera::OpTrait::ComputesNarrow>() +
                       name.hasTrait<mlir::tessera::OpTrait::FollowsInputs>() +
                       name.hasTrait<mlir::tessera::OpTrait::ComputesWide>() +
                       name.hasTrait<mlir::tessera::OpTrait::MovesData>();
    bool exempt = llvm::is_contained(kWithout, name.getStringRef());
    EXPECT_EQ(classes, exempt ? 0u : 1u) << name.getStringRef().str();
  }
  EXPECT_GT(checked, 60u);
}

TEST(PrecisionClass, ClassesOfAnchorOps) {
  MLIRContext context;
  context.loadDialect<TesseraDialect>();
  auto classOf = [&](StringRef opName) {
    OperationState state(UnknownLoc::get(&context), opName);
    Operation *op = Operation::create(state);
    std::optional<::tessera::OpClass> result = ::tessera::precisionClass(op);
    op->destroy();
    return result;
  };
  using ::tessera::OpClass;
  EXPECT_EQ(classOf("tessera.matmul"), OpClass::Contraction);
  EXPECT_EQ(classOf("tessera.attention"), OpClass::Contraction);
  EXPECT_EQ(classOf("tessera.add"), OpClass::Elementwise);
  EXPECT_EQ(classOf("tessera.gelu"), OpClass::Elementwise);
  // Softmax, norms, reductions, exp, log and pow keep fp32 inside.
  EXPECT_EQ(classOf("tessera.softmax"), OpClass::Reduction);
  EXPECT_EQ(classOf("tessera.layer_norm"), OpClass::Reduction);
  EXPECT_EQ(classOf("tessera.reduce_sum"), OpClass::Reduction);
  EXPECT_EQ(classOf("tessera.exp"), OpClass::Reduction);
  EXPECT_EQ(classOf("tessera.pow"), OpClass::Reduction);
  EXPECT_EQ(classOf("tessera.transpose"), OpClass::DataMovement);
  EXPECT_EQ(classOf("tessera.cast"), std::nullopt);
}

} // namespace
