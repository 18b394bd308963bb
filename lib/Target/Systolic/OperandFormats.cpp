//===- OperandFormats.cpp - the systolic target's operand-format policy ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The array has no fp32 operands: the matmuls and convolutions that the
// precision policy leaves fp32 read theirs in the array's 16-bit format,
// written into the IR as casts that the lowering then reads (it decides
// no format itself).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "tessera/Target/Systolic/Passes.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/Builders.h"

namespace tessera {
#define GEN_PASS_DEF_SYSTOLICOPERANDFORMATSPASS
#include "tessera/Target/Systolic/Passes.h.inc"
} // namespace tessera

using namespace mlir;
namespace sim = ::tessera::sim;

namespace {

struct SystolicOperandFormatsPass
    : ::tessera::impl::SystolicOperandFormatsPassBase<
          SystolicOperandFormatsPass> {
  using SystolicOperandFormatsPassBase::SystolicOperandFormatsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<sim::NumberFormat> parsed = sim::parseFormat(format);
    if (!parsed || !::tessera::isFloat(*parsed) ||
        *parsed == sim::NumberFormat::F32) {
      module.emitError() << "'" << format
                         << "' is not a float operand format (bf16, f16, "
                            "f8E4M3FN or f8E5M2)";
      return signalPassFailure();
    }
    Type element = mlir::systolic::getFormatType(&getContext(), *parsed);
    module.walk([&](Operation *op) {
      if (auto matmul = dyn_cast<mlir::tessera::MatmulOp>(op)) {
        // A matmul with a precision decision and fp32 operands was kept
        // wide by the policy (beyond fp16's range in calibration, a
        // --keep-fp32 pattern, an output head): it reads bf16, the array's
        // format with fp32's range (narrowed ones have no fp32 operands).
        Type type = matmul->hasAttr(::tessera::kPrecisionAttr)
                        ? Type(BFloat16Type::get(&getContext()))
                        : element;
        if (!::tessera::systolic::matchQuantized(matmul))
          castOperands(op, type);
      } else if (auto conv = dyn_cast<mlir::tessera::Conv2dOp>(op)) {
        // A convolution's result has its input's type: it is cast back to
        // fp32 (the array accumulates in fp32) for the ops that read it.
        auto type = cast<RankedTensorType>(conv.getType());
        if (!type.getElementType().isF32() ||
            !conv.getInput().getType().getElementType().isF32())
          return;
        castOperands(op, element);
        conv.getResult().setType(type.clone(element));
        OpBuilder builder(op->getContext());
        builder.setInsertionPointAfter(op);
        auto wide = mlir::tessera::CastOp::create(builder, op->getLoc(), type,
                                                  conv.getResult());
        conv.getResult().replaceAllUsesExcept(wide.getResult(), wide);
      }
    });
  }

  /// Casts the two fp32 inputs of `op` to `element`, before `op` or
  /// before the fusion region holding it.
  static void castOperands(Operation *op, Type element) {
    Operation *anchor = op;
    while (isa<mlir::tessera::FusionOp>(anchor->getParentOp()))
      anchor = anchor->getParentOp();
    OpBuilder builder(anchor);
    for (unsigned i = 0; i < 2; ++i) {
      Value operand = op->getOperand(i);
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || !type.getElementType().isF32())
        continue;
      Value cast = mlir::tessera::CastOp::create(builder, op->getLoc(),
                                           type.clone(element), operand);
      op->setOperand(i, cast);
    }
  }
};

} // namespace
