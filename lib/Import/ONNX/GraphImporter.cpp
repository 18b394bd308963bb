//===- GraphImporter.cpp - values, attributes and constants of the importer ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"
#include "tessera/Support/ResourceLimits.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace tessera::onnx_import {

GraphImporter::GraphImporter(MLIRContext &context, OpBuilder &builder,
                             int64_t opset, StringRef modelPath,
                             StringRef modelDir,
                             const ONNXImportOptions &options)
    : ctx(context), b(builder), opsetVersion(opset), modelPath(modelPath),
      modelDir(modelDir), options(options), nodeLoc(UnknownLoc::get(&context)) {
}

void GraphImporter::addInitializer(onnx::TensorProto &tensor) {
  initializers[tensor.name()] = &tensor;
}

Value GraphImporter::lookup(StringRef name, Location useLoc) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end()) {
    mlir::emitError(useLoc) << "uses '" << name
                            << "', which no earlier node, graph input or "
                               "initializer defines";
    return {};
  }
  // Initializers become constants where first used; the func has one block,
  // so that point dominates every later use.
  Location loc = graphLocation(ctx, modelPath, name, "initializer");
  FailureOr<ElementsAttr> attr = convertTensor(
      *init->second, modelDir, options.inlineElementLimit, loc);
  if (failed(attr))
    return {};
  Value value = mlir::tessera::ConstantOp::create(b, loc, *attr);
  if (auto dense = dyn_cast<DenseIntElementsAttr>(*attr))
    if (dense.getType().getRank() <= 1)
      setKnownInts(value, llvm::to_vector(llvm::map_range(
                              dense.getValues<APInt>(), [](const APInt &v) {
                                return v.getSExtValue();
                              })));
  values[name] = value;
  return value;
}

Location graphLocation(MLIRContext &context, StringRef file, StringRef name,
                       StringRef kind) {
  Location named = NameLoc::get(StringAttr::get(&context, name),
                                FileLineColLoc::get(&context, file, 0, 0));
  return FusedLoc::get({named}, StringAttr::get(&context, kind), &context);
}

void GraphImporter::beginNode(const onnx::NodeProto &node, int index) {
  currentNode = &node;
  // ONNX allows unnamed nodes; they are named by position.
  std::string name = node.name().empty()
                         ? node.op_type() + "#" + std::to_string(index)
                         : node.name();
  nodeLoc = graphLocation(ctx, modelPath, name, node.op_type());
}

InFlightDiagnostic GraphImporter::emitError() const {
  return mlir::emitError(nodeLoc);
}

Value GraphImporter::input(int index) {
  if (index >= currentNode->input_size() ||
      currentNode->input(index).empty()) {
    emitError() << "expects input " << index << ", which is missing";
    return {};
  }
  return lookup(currentNode->input(index), nodeLoc);
}

Value GraphImporter::optionalInput(int index) {
  if (index >= currentNode->input_size() ||
      currentNode->input(index).empty())
    return {};
  return lookup(currentNode->input(index), nodeLoc);
}

/// The bytes of a tensor of `type` when its shape is static; nothing when
/// the size does not fit in 64 bits.
static std::optional<uint64_t> staticByteSize(RankedTensorType type) {
  uint64_t bytes =
      std::max<uint64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  if (llvm::is_contained(type.getShape(), 0))
    return 0;
  for (int64_t d : type.getShape())
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      return std::nullopt;
  return bytes;
}

LogicalResult GraphImporter::setOutput(int index, Value value) {
  if (!value)
    return failure();
  // A declared or inferred size beyond the memory limit is refused here,
  // before any phase (or the compiled model) tries to allocate it.
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (type && type.hasStaticShape() && type.getElementType().isIntOrFloat()) {
    std::optional<uint64_t> bytes = staticByteSize(type);
    uint64_t limit = memoryLimitBytes();
    if (!bytes || *bytes > limit) {
      std::string name = index < currentNode->output_size()
                             ? currentNode->output(index)
                             : std::to_string(index);
      return emitError() << "output '" << name << "' is a tensor of "
                         << type << ": "
                         << (bytes ? describeBytes(*bytes)
                                   : std::string("more than 2^64 bytes"))
                         << ", more than the memory limit of "
                         << describeBytes(limit) << " (TESSERA_MEMORY_LIMIT)";
    }
  }
  if (index < currentNode->output_size() &&
      !currentNode->output(index).empty())
    values[currentNode->output(index)] = value;
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *GraphImporter::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : currentNode->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t GraphImporter::intAttr(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a && a->has_i() ? a->i() : defaultValue;
}

float GraphImporter::floatAttr(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a && a->has_f() ? a->f() : defaultValue;
}

std::string GraphImporter::stringAttr(StringRef name,
                                      StringRef defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a && a->has_s() ? a->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>>
GraphImporter::intsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<std::optional<SmallVector<int64_t>>>
GraphImporter::intsAttrOrInput(StringRef name, int inputIndex,
                               int64_t movedAt) {
  if (opsetVersion < movedAt)
    return intsAttr(name);
  Value value = optionalInput(inputIndex);
  if (!value) {
    if (inputIndex < numInputs() && !node().input(inputIndex).empty())
      return failure(); // lookup already reported the dangling name.
    return std::optional<SmallVector<int64_t>>();
  }
  std::optional<SmallVector<int64_t>> ints = constantInts(value);
  if (!ints)
    return emitError() << "input " << inputIndex << " (" << name
                       << ") must be a constant";
  return ints;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

FailureOr<ElementsAttr>
GraphImporter::convertTensorAttr(const onnx::TensorProto &tensor) {
  // The importer owns the parsed model, so the tensor's bytes may move into
  // the attribute instead of being copied.
  return convertTensor(const_cast<onnx::TensorProto &>(tensor), modelDir,
                       options.inlineElementLimit, nodeLoc);
}

Value GraphImporter::constantI64(ArrayRef<int64_t> ints,
                                 std::optional<ArrayRef<int64_t>> shape) {
  SmallVector<int64_t, 1> dims;
  if (shape)
    dims.assign(shape->begin(), shape->end());
  else
    dims.push_back(ints.size());
  auto type = RankedTensorType::get(dims, b.getI64Type());
  Value value = create<mlir::tessera::ConstantOp>(DenseIntElementsAttr::get(type, ints));
  setKnownInts(value, ints);
  return value;
}

Value GraphImporter::constantScalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    attr = DenseElementsAttr::get(type, FloatAttr::get(floatType, value)
                                             .getValue());
  } else {
    auto intType = cast<IntegerType>(elementType);
    attr = DenseElementsAttr::get(
        type, APInt(intType.getWidth(), static_cast<int64_t>(value),
                    /*isSigned=*/true));
  }
  Value result = create<mlir::tessera::ConstantOp>(cast<ElementsAttr>(attr));
  if (isa<IntegerType>(elementType))
    setKnownInts(result, {static_cast<int64_t>(value)});
  return result;
}

void GraphImporter::setKnownInts(Value value, ArrayRef<int64_t> ints) {
  known[value] = SmallVector<int64_t>(ints);
}

std::optional<ArrayRef<int64_t>> GraphImporter::knownInts(Value value) const {
  auto it = known.find(value);
  if (it == known.end())
    return std::nullopt;
  return ArrayRef<int64_t>(it->second);
}

std::optional<SmallVector<int64_t>>
GraphImporter::constantInts(Value value) const {
  std::optional<ArrayRef<int64_t>> ints = knownInts(value);
  if (!ints || llvm::is_contained(*ints, ::tessera::kDynamicDim))
    return std::nullopt;
  return SmallVector<int64_t>(*ints);
}

std::optional<double> GraphImporter::constantFloat(Value value) const {
  auto constant = value.getDefiningOp<mlir::tessera::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (dense.getElementType().isInteger(1))
    return dense.getSplatValue<bool>() ? 1.0 : 0.0;
  return static_cast<double>(dense.getSplatValue<APInt>().getSExtValue());
}

DenseElementsAttr GraphImporter::constantElements(Value value) const {
  auto constant = value.getDefiningOp<mlir::tessera::ConstantOp>();
  if (!constant)
    return {};
  return dyn_cast<DenseElementsAttr>(constant.getValue());
}

std::optional<SmallVector<double>>
GraphImporter::constantFloats(Value value) const {
  DenseElementsAttr dense = constantElements(value);
  if (!dense)
    return std::nullopt;
  SmallVector<double> result;
  if (isa<FloatType>(dense.getElementType())) {
    for (const APFloat &v : dense.getValues<APFloat>())
      result.push_back(v.convertToDouble());
  } else if (isa<IntegerType>(dense.getElementType())) {
    for (const APInt &v : dense.getValues<APInt>())
      result.push_back(static_cast<double>(v.getSExtValue()));
  } else {
    return std::nullopt;
  }
  return result;
}

std::optional<SmallVector<float>>
GraphImporter::constantF32s(Value value) const {
  auto constant = value.getDefiningOp<mlir::tessera::ConstantOp>();
  if (!constant || !constant.getValue().getElementType().isF32())
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return llvm::to_vector(dense.getValues<float>());
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  if (!resource || !resource.getRawHandle().getBlob())
    return std::nullopt;
  ArrayRef<char> bytes = resource.getRawHandle().getBlob()->getData();
  int64_t count = constant.getValue().getNumElements();
  if (static_cast<int64_t>(bytes.size()) != count * 4)
    return std::nullopt;
  SmallVector<float> values(count);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

Value GraphImporter::constantF32(ArrayRef<float> values,
                                 ArrayRef<int64_t> shape, StringRef name) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  if (static_cast<int64_t>(values.size()) <= options.inlineElementLimit)
    return create<mlir::tessera::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
  ArrayRef<char> bytes(reinterpret_cast<const char *>(values.data()),
                       values.size() * sizeof(float));
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(float));
  return create<mlir::tessera::ConstantOp>(cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, name, std::move(blob))));
}

void GraphImporter::declareShape(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type() ||
      !info.type().tensor_type().has_shape())
    return;
  SmallVector<int64_t> dims;
  for (const auto &dim : info.type().tensor_type().shape().dim())
    dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                       ? dim.dim_value()
                       : ::tessera::kDynamicDim);
  declared[info.name()] = std::move(dims);
}

std::optional<ArrayRef<int64_t>>
GraphImporter::declaredShape(StringRef name) const {
  auto it = declared.find(name);
  if (it == declared.end())
    return std::nullopt;
  return ArrayRef<int64_t>(it->second);
}

LogicalResult GraphImporter::setIntsOutput(ArrayRef<int64_t> ints,
                                           ArrayRef<int64_t> shape,
                                           function_ref<Value()> fallback,
                                           Type elementType) {
  if (!elementType)
    elementType = b.getI64Type();
  if (!llvm::is_contained(ints, ::tessera::kDynamicDim)) {
    auto type = RankedTensorType::get(shape, elementType);
    SmallVector<APInt> values = llvm::to_vector(llvm::map_range(
        ints, [&](int64_t v) {
          return APInt(elementType.getIntOrFloatBitWidth(), v,
                       /*isSigned=*/!elementType.isInteger(1),
                       /*implicitTrunc=*/true);
        }));
    Value constant = create<mlir::tessera::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
    setKnownInts(constant, ints);
    return setOutput(0, constant);
  }
  Value value = fallback();
  if (!value)
    return failure();
  setKnownInts(value, ints);
  return setOutput(0, value);
}

} // namespace tessera::onnx_import
