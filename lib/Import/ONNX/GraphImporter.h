//===- GraphImporter.h - state and helpers shared by the ONNX op converters ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
#define TESSERA_LIB_IMPORT_ONNX_GRAPHIMPORTER_H

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/Support/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

namespace tessera::onnx_import {

using mlir::LogicalResult;
using mlir::Type;
using mlir::Value;

class GraphImporter;

/// Converts one ONNX node; reads inputs and attributes through the importer
/// and defines the node's outputs with `setOutput`.
using ConvertFn = LogicalResult (*)(GraphImporter &, const onnx::NodeProto &);
using ConverterRegistry = llvm::StringMap<ConvertFn>;

// One registration function per op family (the files of this folder).
void registerElementwiseConverters(ConverterRegistry &registry);
void registerContractionConverters(ConverterRegistry &registry);
void registerNormalizationConverters(ConverterRegistry &registry);
void registerDataMovementConverters(ConverterRegistry &registry);
void registerSliceConverters(ConverterRegistry &registry);
void registerShapeConverters(ConverterRegistry &registry);
void registerPoolingConverters(ConverterRegistry &registry);
void registerIndexingConverters(ConverterRegistry &registry);
void registerResizeConverters(ConverterRegistry &registry);
void registerLossConverters(ConverterRegistry &registry);
void registerConvTransposeConverters(ConverterRegistry &registry);
void registerEinsumConverters(ConverterRegistry &registry);
void registerGridSampleConverters(ConverterRegistry &registry);
void registerRecurrentConverters(ConverterRegistry &registry);
void registerScanConverters(ConverterRegistry &registry);

/// The positions 0 .. n - 1 along dim `axis` of `x` ([n] i64), n read at
/// run time (a symbolic sequence's mask; Scans.cpp). Null on failure.
Value positionsAlong(GraphImporter &im, Value x, int64_t axis);

/// The known values of every element of `x` (an integer tensor of static
/// shape whose values the importer follows, at any rank), or nothing
/// (Slice.cpp).
std::optional<llvm::ArrayRef<int64_t>> knownIntElements(GraphImporter &im,
                                                     Value x);

/// Converts a TensorProto (an initializer or a Constant's value) into an
/// elements attribute. Large tensors steal the proto's bytes into a resource
/// blob; `modelDir` is where external data lives.
mlir::FailureOr<mlir::ElementsAttr>
convertTensor(onnx::TensorProto &tensor, llvm::StringRef modelDir,
              int64_t inlineElementLimit, mlir::Location loc);

/// Maps an ONNX TensorProto data type to a tessera element type; null when
/// Tessera has no such type.
Type convertElementType(int32_t dataType, mlir::MLIRContext &context);

/// The location of a node or tensor of the model: its name (what a user
/// searches for in Netron) in `file`, tagged with `kind` (the node's op type,
/// or "initializer").
mlir::Location graphLocation(mlir::MLIRContext &context, llvm::StringRef file,
                             llvm::StringRef name, llvm::StringRef kind);

/// Names an ONNX data type for diagnostics ("DOUBLE").
llvm::StringRef dataTypeName(int32_t dataType);

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, mlir::OpBuilder &builder,
                int64_t opset, llvm::StringRef modelPath,
                llvm::StringRef modelDir, const ONNXImportOptions &options);

  mlir::OpBuilder &builder() { return b; }
  mlir::MLIRContext &context() { return ctx; }
  int64_t opset() const { return opsetVersion; }

  //===--------------------------------------------------------------------===//
  // Values by ONNX name
  //===--------------------------------------------------------------------===//

  /// Makes `tensor` available under its name; converted on first use.
  void addInitializer(onnx::TensorProto &tensor);
  bool isInitializer(llvm::StringRef name) const {
    return initializers.count(name);
  }
  void define(llvm::StringRef name, Value value) { values[name] = value; }
  /// The value named `name`, converting an initializer on first use; null
  /// (with a diagnostic) when nothing defines it.
  Value lookup(llvm::StringRef name, mlir::Location useLoc);

  //===--------------------------------------------------------------------===//
  // The node being converted
  //===--------------------------------------------------------------------===//

  void beginNode(const onnx::NodeProto &node, int index);
  mlir::Location loc() const { return nodeLoc; }
  const onnx::NodeProto &node() const { return *currentNode; }
  /// An error located at the current node (whose location names it).
  mlir::InFlightDiagnostic emitError() const;

  /// Input `index`; an error when absent or empty.
  Value input(int index);
  /// Input `index`, or null when absent or given as "".
  Value optionalInput(int index);
  int numInputs() const { return currentNode->input_size(); }
  LogicalResult setOutput(int index, Value value);

  //===--------------------------------------------------------------------===//
  // Attributes of the current node
  //===--------------------------------------------------------------------===//

  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue) const;
  float floatAttr(llvm::StringRef name, float defaultValue) const;
  std::string stringAttr(llvm::StringRef name,
                         llvm::StringRef defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name) const;

  /// An integer list that moved from an attribute to input `inputIndex` at
  /// opset `movedAt` (axes, split sizes, Slice bounds): read from whichever
  /// applies; nullopt when absent. Fails when the input is not a constant.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsAttrOrInput(llvm::StringRef name, int inputIndex, int64_t movedAt);

  //===--------------------------------------------------------------------===//
  // Constants and known integer values (shape arithmetic)
  //===--------------------------------------------------------------------===//

  /// A tessera.constant of i64 values with `shape` (1-D by default).
  Value constantI64(llvm::ArrayRef<int64_t> values,
                    std::optional<llvm::ArrayRef<int64_t>> shape = {});
  /// A splat scalar constant (0-D) of `elementType`.
  Value constantScalar(double value, Type elementType);
  /// Records what is known about an integer 0-D/1-D value, entry by entry
  /// (kDynamicDim where unknown); shape computations fold through these.
  void setKnownInts(Value value, llvm::ArrayRef<int64_t> ints);
  /// The entries known about `value` (some may be kDynamicDim).
  std::optional<llvm::ArrayRef<int64_t>> knownInts(Value value) const;
  /// The entries of `value` when all of them are known.
  std::optional<llvm::SmallVector<int64_t>> constantInts(Value value) const;
  /// The value of a scalar float constant, when known.
  std::optional<double> constantFloat(Value value) const;
  /// The entries of a constant (inline, not a resource blob) as doubles.
  std::optional<llvm::SmallVector<double>> constantFloats(Value value) const;
  /// The elements of an inline constant, when `value` is one.
  mlir::DenseElementsAttr constantElements(Value value) const;
  /// The elements of an f32 constant, inline or a resource blob (weights).
  std::optional<llvm::SmallVector<float>> constantF32s(Value value) const;
  /// An f32 constant of `shape`: inline when small, else a resource blob
  /// named `name` (as initializers become).
  Value constantF32(llvm::ArrayRef<float> values,
                    llvm::ArrayRef<int64_t> shape, llvm::StringRef name);

  //===--------------------------------------------------------------------===//
  // Shapes the model declares (graph outputs, value_info)
  //===--------------------------------------------------------------------===//

  /// Records the declared shape of tensor `info` (kDynamicDim for a
  /// symbolic or missing dim); tensors without a shape are skipped.
  void declareShape(const onnx::ValueInfoProto &info);
  /// Counts one consumer (a node input or a graph output) of `name`.
  void countUse(llvm::StringRef name) { ++uses[name]; }
  /// How many node inputs and graph outputs read tensor `name`.
  int64_t useCount(llvm::StringRef name) const { return uses.lookup(name); }
  /// The shape the model declares for tensor `name`, when it does.
  std::optional<llvm::ArrayRef<int64_t>> declaredShape(llvm::StringRef name) const;

  /// Defines output 0 as a constant of `ints` (of `elementType`: i64 by
  /// default, i1 for comparisons) when all entries are known, else as what
  /// `fallback` builds, with the partial knowledge recorded.
  LogicalResult setIntsOutput(llvm::ArrayRef<int64_t> ints,
                              llvm::ArrayRef<int64_t> shape,
                              llvm::function_ref<Value()> fallback,
                              Type elementType = {});

  /// Builds an op at the current node's location.
  template <typename OpTy, typename... Args>
  OpTy create(Args &&...args) {
    return OpTy::create(b, nodeLoc, std::forward<Args>(args)...);
  }

  /// Builds an op whose result type tessera infers; returns null, with the
  /// op's diagnostic at this node, when the operands do not fit (the ODS
  /// inferring builders would abort instead).
  template <typename OpTy, typename... Args>
  Value inferred(Args &&...args) {
    OpTy op = create<OpTy>(b.getNoneType(), std::forward<Args>(args)...);
    mlir::Operation *raw = op.getOperation();
    llvm::SmallVector<Type, 1> types;
    if (mlir::failed(OpTy::inferReturnTypes(
            &ctx, nodeLoc, raw->getOperands(), raw->getRawDictionaryAttrs(),
            raw->getPropertiesStorage(), raw->getRegions(), types))) {
      raw->erase();
      return {};
    }
    raw->getResult(0).setType(types.front());
    return raw->getResult(0);
  }

  /// Converts a tensor attribute of the current node (a Constant's value).
  mlir::FailureOr<mlir::ElementsAttr>
  convertTensorAttr(const onnx::TensorProto &tensor);

private:
  mlir::MLIRContext &ctx;
  mlir::OpBuilder &b;
  int64_t opsetVersion;
  std::string modelPath, modelDir;
  const ONNXImportOptions &options;
  llvm::StringMap<Value> values;
  llvm::StringMap<onnx::TensorProto *> initializers;
  llvm::DenseMap<Value, llvm::SmallVector<int64_t>> known;
  llvm::StringMap<llvm::SmallVector<int64_t>> declared;
  llvm::StringMap<int64_t> uses;
  const onnx::NodeProto *currentNode = nullptr;
  mlir::Location nodeLoc;
};

/// Explicit ONNX pads ([begins..., ends...]) for a window op's `autoPad`
/// (NOTSET and VALID give zeros; SAME_UPPER / SAME_LOWER need static
/// `spatial` dims, else an error at the current node).
LogicalResult autoPads(GraphImporter &im, llvm::StringRef autoPad,
                       llvm::ArrayRef<int64_t> spatial,
                       llvm::ArrayRef<int64_t> kernel,
                       llvm::ArrayRef<int64_t> strides,
                       llvm::ArrayRef<int64_t> dilations,
                       llvm::SmallVectorImpl<int64_t> &pads);

/// Shortcuts for converters.
inline mlir::RankedTensorType tensorType(Value value) {
  return mlir::cast<mlir::RankedTensorType>(value.getType());
}
inline Type elementType(Value value) {
  return tensorType(value).getElementType();
}

} // namespace tessera::onnx_import

#endif // TESSERA_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
