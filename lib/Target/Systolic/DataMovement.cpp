//===- DataMovement.cpp - copies, gathers and convolutions' im2col --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Lowering.h"

using namespace mlir;

namespace tessera::systolic {

/// `value` broadcast numpy-style to `type`, as a new fp32 tensor: its
/// byte offset.
std::optional<uint64_t> Lowering::broadcastTo(Value value,
                                              RankedTensorType type) {
  // Once per value and shape: a fusion trial that is given up may have
  // made the copy already.
  if (auto known = broadcasts.find({value, type}); known != broadcasts.end())
    return known->second;
  auto vt = cast<RankedTensorType>(value.getType());
  if (!vt.hasStaticShape() || vt.getRank() > type.getRank())
    return std::nullopt;
  SmallVector<int64_t> own = rowMajor(vt.getShape());
  SmallVector<int64_t> strides(type.getRank(), 0);
  int64_t shift = type.getRank() - vt.getRank();
  for (int64_t d = 0; d < vt.getRank(); ++d) {
    int64_t size = vt.getDimSize(d);
    if (size != 1 && size != type.getDimSize(d + shift))
      return std::nullopt;
    strides[d + shift] = size == 1 ? 0 : own[d];
  }
  std::optional<uint64_t> src = fp32Source(value);
  if (!src)
    return std::nullopt;
  size_t at = place("broadcast_" + std::to_string(tensors.size()), Role::Scratch,
                    sim::NumberFormat::F32, type.getShape());
  sim::CopyStep step;
  step.shape.assign(type.getShape().begin(), type.getShape().end());
  step.srcStrides.assign(strides.begin(), strides.end());
  SmallVector<int64_t> dst = rowMajor(type.getShape());
  step.dstStrides.assign(dst.begin(), dst.end());
  step.src = *src;
  step.dst = tensors[at].offset;
  if (sim::appendCopyStep(config, step, instructions))
    return std::nullopt;
  broadcasts[{value, type}] = tensors[at].offset;
  return tensors[at].offset;
}

/// Copies a strided view into (part of) a placed tensor.
LogicalResult Lowering::copy(Operation *op, uint64_t src,
                             ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> srcStrides, size_t to,
                             uint64_t dstOffset,
                             ArrayRef<int64_t> dstStrides) {
  sim::CopyStep step;
  step.shape.assign(shape.begin(), shape.end());
  step.srcStrides.assign(srcStrides.begin(), srcStrides.end());
  step.dstStrides.assign(dstStrides.begin(), dstStrides.end());
  step.src = src;
  step.dst = tensors[to].offset + dstOffset;
  step.dstFormat = tensors[to].format;
  if (auto why = sim::appendCopyStep(config, step, instructions)) {
    op->emitError() << *why;
    return failure();
  }
  return success();
}

/// Transposes, slices, concatenations, broadcasts and gathers of one
/// constant index as strided copies.
LogicalResult Lowering::lowerDataMovement(Operation *op) {
  auto error = [&](const Twine &why) {
    op->emitError() << "'" << op->getName() << "' " << why;
    return failure();
  };
  Value result = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() || !heldAsF32(type))
    return error("needs a static f32 or boolean result on the systolic "
                 "target");
  if (auto concat = dyn_cast<ts::ConcatOp>(op)) {
    auto axis = static_cast<int64_t>(concat.getAxis());
    if (axis < 0)
      axis += type.getRank();
    size_t to = placeResult(op, result);
    SmallVector<int64_t> dst = rowMajor(type.getShape());
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      auto it = cast<RankedTensorType>(input.getType());
      std::optional<uint64_t> src = fp32Source(input);
      if (!src)
        return error("reads a value the accelerator does not hold");
      if (failed(copy(op, *src, it.getShape(), rowMajor(it.getShape()), to,
                      uint64_t(offset * dst[axis]) *
                          sim::formatBytes(tensors[to].format),
                      dst)))
        return failure();
      offset += it.getDimSize(axis);
    }
    return success();
  }
  Value input = op->getOperand(0);
  auto inType = cast<RankedTensorType>(input.getType());
  if (!inType.hasStaticShape())
    return error("needs a static input on the systolic target");
  SmallVector<int64_t> in = rowMajor(inType.getShape());
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  if (auto transpose = dyn_cast<ts::TransposeOp>(op)) {
    for (int64_t d : transpose.getPermutation())
      strides.push_back(in[d]);
  } else if (auto slice = dyn_cast<ts::SliceOp>(op)) {
    strides.assign(in.begin(), in.end());
    ArrayRef<int64_t> starts = slice.getStarts();
    SmallVector<int64_t> axes, steps;
    for (size_t i = 0; i < starts.size(); ++i) {
      axes.push_back(slice.getAxes() ? (*slice.getAxes())[i] : int64_t(i));
      steps.push_back(slice.getSteps() ? (*slice.getSteps())[i] : 1);
    }
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + inType.getRank() : axes[i];
      int64_t size = inType.getDimSize(axis), start = starts[i];
      if (steps[i] <= 0)
        return error("with a negative step is not supported on the "
                     "systolic target");
      if (start < 0)
        start += size;
      start = std::clamp<int64_t>(start, 0, size);
      offset += start * in[axis];
      strides[axis] = in[axis] * steps[i];
    }
  } else if (auto gather = dyn_cast<ts::GatherOp>(op)) {
    auto index = gather.getIndices().getDefiningOp<ts::ConstantOp>();
    auto indexAttr =
        index ? dyn_cast<DenseElementsAttr>(index.getValue()) : nullptr;
    if (!indexAttr || indexAttr.getNumElements() != 1 ||
        cast<RankedTensorType>(gather.getIndices().getType()).getRank() != 0)
      return error("gathers only one constant index on the systolic "
                   "target");
    auto axis = static_cast<int64_t>(gather.getAxis());
    if (axis < 0)
      axis += inType.getRank();
    int64_t i = (*indexAttr.getValues<APInt>().begin()).getSExtValue();
    if (i < 0)
      i += inType.getDimSize(axis);
    offset += i * in[axis];
    for (int64_t d = 0; d < inType.getRank(); ++d)
      if (d != axis)
        strides.push_back(in[d]);
  } else if (isa<ts::ExpandOp>(op)) {
    int64_t shift = type.getRank() - inType.getRank();
    strides.assign(type.getRank(), 0);
    for (int64_t d = 0; d < inType.getRank(); ++d)
      strides[d + shift] = inType.getDimSize(d) == 1 ? 0 : in[d];
  }
  std::optional<uint64_t> src = fp32Source(input);
  if (!src)
    return error("reads a value the accelerator does not hold");
  size_t to = placeResult(op, result);
  return copy(op, *src + uint64_t(offset) * 4, type.getShape(), strides, to,
              0, rowMajor(type.getShape()));
}

/// A gather along axis 0 with indices computed at run time (an
/// embedding lookup of token ids): the gather instruction.
LogicalResult Lowering::lowerLookup(ts::GatherOp gather) {
  auto error = [&](const Twine &why) {
    gather.emitError() << why;
    return failure();
  };
  auto it = placed.find(gather.getIndices());
  if (it == placed.end())
    return error("the gather's indices must be an input of the model on the "
                 "systolic target");
  uint64_t indices = tensors[it->second.index].offset;
  auto table = cast<RankedTensorType>(gather.getInput().getType());
  auto type = cast<RankedTensorType>(gather.getType());
  if (gather.getAxis() != 0 || !table.hasStaticShape() ||
      !type.hasStaticShape() || !type.getElementType().isF32())
    return error("gathers computed indices along axis 0 of a static f32 "
                 "table only on the systolic target");
  std::optional<uint64_t> src = fp32Source(gather.getInput());
  if (!src)
    return error("reads a table the accelerator does not hold");
  size_t to = placeResult(gather, gather.getResult());
  sim::GatherStep step;
  step.table = *src;
  step.tableRows = table.getDimSize(0);
  step.rowElements = table.getNumElements() / table.getDimSize(0);
  step.count = type.getNumElements() / step.rowElements;
  step.indices = indices;
  step.out = tensors[to].offset;
  step.outFormat = tensors[to].format;
  if (auto why = sim::appendGatherStep(config, step, instructions))
    return error(*why);
  return success();
}

} // namespace tessera::systolic
