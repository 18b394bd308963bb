//===- TargetInfo.cpp - what the CPU backend compiles as one kernel -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Transforms/TargetInfo.h"
#include "tessera/Target/CPU/Pipeline.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

namespace {

class CPUTargetInfo : public tessera::TargetInfo {
public:
  StringRef name() const override { return "cpu"; }

  bool fusesAttention() const override { return true; }

  /// The epilogue runs on each 8 x 32 accumulator tile: a second operand
  /// must be a scalar, a row vector over the columns, or as large as the
  /// result (read tile by tile).
  std::optional<std::string>
  rejectEpilogueOperand(Value operand, RankedTensorType result) const override {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return std::string("operand is not a ranked tensor");
    if (type.getNumElements() == 1 && type.hasStaticShape())
      return std::nullopt;
    if (type == result)
      return std::nullopt;
    int64_t columns = result.getDimSize(result.getRank() - 1);
    bool rowVector = llvm::all_of(type.getShape().drop_back(),
                                  [](int64_t d) { return d == 1; }) &&
                     type.getRank() >= 1 && type.getShape().back() == columns &&
                     columns != ShapedType::kDynamic;
    if (rowVector)
      return std::nullopt;
    return std::string("broadcast not supported in epilogue");
  }

  /// Sixteen zmm registers hold the accumulator; a few more keep an
  /// epilogue's temporaries.
  unsigned maxEpilogueOps() const override { return 8; }

  /// One op of at most two operands for at most four users: recomputing
  /// it is a few vector ops per element, less than a store and a load.
  bool recomputeIsCheap(Operation *producer, unsigned users) const override {
    return users <= 4 && producer->getNumOperands() <= 2 &&
           producer->getNumResults() == 1;
  }

  SmallVector<int64_t> tileSizes(StringRef kind) const override {
    if (kind == "epilogue")
      return {8, 32};
    if (kind == "attention")
      return {8, 64};
    return {64};
  }
};

} // namespace

void tessera::cpu::registerCPUTargetInfo() {
  registerTargetInfo("cpu", [] { return std::make_unique<CPUTargetInfo>(); });
}
