//===- ImportONNX.cpp - reads an ONNX model into a tessera function -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Import/ONNX/ImportONNX.h"
#include "llvm/ADT/StringSet.h"
#include "GraphImporter.h"

#include "tessera/Dialect/Tessera/IR/TesseraDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>
#include <set>

using namespace mlir;

namespace tessera {
using namespace onnx_import;

void registerONNXImportDialects(MLIRContext &context) {
  context.loadDialect<mlir::tessera::TesseraDialect, func::FuncDialect>();
}

static const ConverterRegistry &converters() {
  static const ConverterRegistry registry = [] {
    ConverterRegistry r;
    registerElementwiseConverters(r);
    registerContractionConverters(r);
    registerNormalizationConverters(r);
    registerDataMovementConverters(r);
    registerSliceConverters(r);
    registerShapeConverters(r);
    registerPoolingConverters(r);
    registerIndexingConverters(r);
    registerResizeConverters(r);
    registerLossConverters(r);
    registerConvTransposeConverters(r);
    registerEinsumConverters(r);
    registerGridSampleConverters(r);
    registerRecurrentConverters(r);
    registerScanConverters(r);
    return r;
  }();
  return registry;
}

static bool isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// The default-domain opset of `model`, if it imports one.
static std::optional<int64_t> defaultOpset(const onnx::ModelProto &model) {
  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (isDefaultDomain(id.domain()))
      opset = id.version();
  return opset;
}

/// The default-domain opset the model imports, checked against the range
/// Tessera supports.
static FailureOr<int64_t> checkOpset(const onnx::ModelProto &model,
                                     Location loc) {
  std::optional<int64_t> opset = defaultOpset(model);
  if (!opset)
    return emitError(loc) << "the model does not import the default ONNX "
                             "operator set";
  if (*opset < ::tessera::kMinConvertibleONNXOpset ||
      *opset > ::tessera::kMaxONNXOpset)
    return emitError(loc) << "the model uses ONNX opset " << *opset
                          << "; Tessera supports opsets "
                          << ::tessera::kMinONNXOpset << " to "
                          << ::tessera::kMaxONNXOpset << " and converts "
                          << ::tessera::kMinConvertibleONNXOpset << " to "
                          << ::tessera::kMinONNXOpset - 1
                          << " with ONNX's version converter";
  return *opset;
}

/// Rewrites a model of opset 1 to 10 to opset 11 with libonnx's version
/// converter (what onnx.version_converter runs), so the importer's
/// converters see one form of each op; remarks that it did so.
static LogicalResult upgradeOpset(onnx::ModelProto &model, int64_t opset,
                                  bool note,
                                  Location loc) {
  if (opset >= ::tessera::kMinONNXOpset)
    return success();
  // ONNX 1.12's adapters read a node's inputs, outputs and attributes
  // where and as its schema declares them without checking (crashes found
  // by test/Fuzz's importer target: the broadcasting Add of opset 1 read
  // input 1 of an Add with one input; the Pad adapter read `pads` declared
  // as floats, and `mode` declared as an int, as a string). Each node must
  // be an operator of the model's opset with as many inputs and outputs
  // as it takes and the attributes it knows of the types it declares.
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (!isDefaultDomain(node.domain()))
      continue;
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        node.op_type(), static_cast<int>(opset), "");
    auto error = [&]() {
      return emitError(loc) << "node '" << node.name() << "' ("
                            << node.op_type() << "): ";
    };
    if (!schema)
      return error() << "ONNX opset " << opset << " has no such operator";
    for (auto [count, min, max, what] :
         {std::tuple<int, int, int, StringRef>{node.input_size(),
                                               schema->min_input(),
                                               schema->max_input(), "inputs"},
          {node.output_size(), schema->min_output(), schema->max_output(),
           "outputs"}})
      if (count < min || count > max) {
        InFlightDiagnostic diag = error();
        diag << "opset " << opset << "'s " << node.op_type() << " takes "
             << min;
        if (max == std::numeric_limits<int>::max())
          diag << " or more";
        else if (max != min)
          diag << " to " << max;
        return diag << " " << what << "; the node has " << count;
      }
    for (const onnx::AttributeProto &a : node.attribute()) {
      auto known = schema->attributes().find(a.name());
      if (known != schema->attributes().end() &&
          a.type() != known->second.type)
        return error() << "attribute '" << a.name() << "' must be of type "
                       << StringRef(onnx::AttributeProto::AttributeType_Name(
                                        known->second.type))
                              .lower();
    }
  }
  // ONNX 1.12's Pad adapter reads `value` even where it takes its default.
  for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() != "Pad" || !isDefaultDomain(node.domain()) ||
        llvm::any_of(node.attribute(), [](const onnx::AttributeProto &a) {
          return a.name() == "value";
        }))
      continue;
    onnx::AttributeProto *value = node.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::FLOAT);
    value->set_f(0.0f);
  }
  // ONNX 1.12's converter dereferences a null value for a graph output
  // that nothing defines (found by test/Fuzz's importer target).
  llvm::StringSet<> defined;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : model.graph().initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : model.graph().node())
    for (const std::string &output : node.output())
      defined.insert(output);
  for (const onnx::ValueInfoProto &output : model.graph().output())
    if (!defined.contains(output.name()))
      return emitError(loc) << "graph output '" << output.name()
                            << "' is not produced by any node, input or "
                               "initializer";
  onnx::ModelProto converted;
  try {
    converted = onnx::version_conversion::ConvertVersion(
        model, static_cast<int>(::tessera::kMinONNXOpset));
  } catch (const std::exception &e) {
    // libonnx's assertions read "./file.h:N: fn: Assertion `...` failed:
    // ./file.h:M: fn: <reason>"; the reason is what a user can act on.
    StringRef what = StringRef(e.what()).trim().split('\n').first;
    if (size_t at = what.rfind("failed: "); at != StringRef::npos)
      what = what.drop_front(at + strlen("failed: "));
    if (what.starts_with("./"))
      what = what.split(": ").second.split(": ").second;
    return emitError(loc) << "the model uses ONNX opset " << opset
                          << "; ONNX's version converter could not convert it "
                             "to opset "
                          << ::tessera::kMinONNXOpset << ": " << what;
  }
  model = std::move(converted);
  // ONNX 1.12's Resize adapter (10 -> 11) leaves opset 11's defaults
  // (half_pixel, round_prefer_floor), but a Resize of opset 10 or an
  // Upsample maps output coordinates asymmetrically (x / scale) and
  // rounds down: say so explicitly.
  for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() != "Resize" || !isDefaultDomain(node.domain()))
      continue;
    for (auto [name, value] :
         {std::pair<StringRef, StringRef>{"coordinate_transformation_mode",
                                          "asymmetric"},
          std::pair<StringRef, StringRef>{"nearest_mode", "floor"}}) {
      if (llvm::any_of(node.attribute(), [&](const onnx::AttributeProto &a) {
            return a.name() == name;
          }))
        continue;
      onnx::AttributeProto *attr = node.add_attribute();
      attr->set_name(name.str());
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(value.str());
    }
  }
  if (note)
    emitRemark(loc) << "converted the model from ONNX opset " << opset
                  << " to opset " << ::tessera::kMinONNXOpset
                  << " with ONNX's version converter";
  return success();
}

/// Reports every unsupported operator once, with how many nodes use it and
/// the first of them, so one run lists all that a model needs.
static LogicalResult checkOperators(const onnx::GraphProto &graph,
                                    int64_t opset, StringRef modelPath,
                                    MLIRContext &ctx) {
  struct Use {
    std::string firstNode;
    int count = 0;
  };
  llvm::MapVector<std::string, Use, llvm::StringMap<unsigned>> unsupported;
  const ConverterRegistry &registry = converters();
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    bool known =
        isDefaultDomain(node.domain()) && registry.count(node.op_type());
    if (known)
      continue;
    std::string key = isDefaultDomain(node.domain())
                          ? node.op_type()
                          : node.domain() + "." + node.op_type();
    Use &use = unsupported[key];
    if (use.count++ == 0)
      use.firstNode = node.name().empty()
                          ? node.op_type() + "#" + std::to_string(index)
                          : node.name();
  }
  for (auto &[op, use] : unsupported) {
    Location loc = graphLocation(ctx, modelPath, use.firstNode, op);
    emitError(loc) << "unsupported ONNX operator '" << op << "' (opset "
                   << opset << "): used by " << use.count
                   << (use.count == 1 ? " node" : " nodes") << ", first '"
                   << use.firstNode << "'";
  }
  return success(unsupported.empty());
}

/// The tensor type of a graph input or output; dim_param names go to `names`.
static FailureOr<RankedTensorType>
convertValueInfo(const onnx::ValueInfoProto &info, MLIRContext &ctx,
                 SmallVectorImpl<Attribute> &names, Location loc) {
  if (!info.type().has_tensor_type())
    return emitError(loc) << "graph input '" << info.name()
                          << "' is not a tensor";
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  Type elementType = convertElementType(tensor.elem_type(), ctx);
  if (!elementType)
    return emitError(loc) << "graph input '" << info.name()
                          << "' has element type "
                          << dataTypeName(tensor.elem_type())
                          << ", which Tessera does not support";
  if (!tensor.has_shape())
    return emitError(loc) << "graph input '" << info.name()
                          << "' has no shape; Tessera needs at least its "
                             "rank";
  SmallVector<int64_t> dims;
  for (const onnx::TensorShapeProto::Dimension &dim : tensor.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        return emitError(loc)
               << "graph input '" << info.name()
               << "' has a negative dimension " << dim.dim_value();
      dims.push_back(dim.dim_value());
      names.push_back(StringAttr::get(&ctx, ""));
    } else {
      dims.push_back(ShapedType::kDynamic);
      names.push_back(StringAttr::get(&ctx, dim.dim_param()));
    }
  }
  return RankedTensorType::get(dims, elementType);
}

static FailureOr<OwningOpRef<ModuleOp>>
importGraph(onnx::ModelProto &model, StringRef path, MLIRContext &ctx,
            const ::tessera::ONNXImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  FailureOr<int64_t> opset = checkOpset(model, fileLoc);
  if (failed(opset))
    return failure();
  // Operators are checked before any conversion too: the version converter
  // crashes on some that Tessera does not support (Scan).
  if (failed(checkOperators(model.graph(), *opset, path, ctx)) ||
      failed(upgradeOpset(model, *opset, options.noteConversions, fileLoc)))
    return failure();
  if (*opset < ::tessera::kMinONNXOpset) {
    opset = defaultOpset(model).value_or(::tessera::kMinONNXOpset);
    if (failed(checkOperators(model.graph(), *opset, path, ctx)))
      return failure();
  }
  onnx::GraphProto &graph = *model.mutable_graph();

  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  SmallString<256> modelDir(path);
  llvm::sys::path::remove_filename(modelDir);
  if (modelDir.empty())
    modelDir = ".";
  GraphImporter importer(ctx, b, *opset, path, modelDir, options);
  for (onnx::TensorProto &tensor : *graph.mutable_initializer())
    importer.addInitializer(tensor);
  // Declared shapes fix results that depend on runtime values (Resize with
  // scales given as an input).
  for (const onnx::ValueInfoProto &info : graph.value_info())
    importer.declareShape(info);
  for (const onnx::ValueInfoProto &info : graph.output()) {
    importer.declareShape(info);
    importer.countUse(info.name());
  }
  // Consumers per tensor: a fold into a producer needs to be its only one.
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &input : node.input())
      if (!input.empty())
        importer.countUse(input);

  // Inputs that an initializer also names are constants (old exporters).
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (importer.isInitializer(input.name()))
      continue;
    SmallVector<Attribute> dimNames;
    FailureOr<RankedTensorType> type =
        convertValueInfo(input, ctx, dimNames, fileLoc);
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(input.name());
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("tessera.name", b.getStringAttr(input.name())),
         b.getNamedAttr("tessera.dim_params", b.getArrayAttr(dimNames))}));
  }

  auto func = func::FuncOp::create(b, fileLoc, options.functionName,
                                   b.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  func.setAllArgAttrs(argAttrs);
  for (auto [name, arg] : llvm::zip(argNames, body->getArguments()))
    importer.define(name, arg);
  b.setInsertionPointToStart(body);

  const ConverterRegistry &registry = converters();
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    importer.beginNode(node, index);
    // Every operator Tessera imports has a required first output; the
    // converters name it (found by the importer fuzzer: a Resize without
    // outputs read a missing one).
    if (node.output_size() == 0)
      return importer.emitError() << "the node has no outputs";
    if (failed(registry.lookup(node.op_type())(importer, node)))
      return failure();
  }

  SmallVector<Value> results;
  SmallVector<Attribute> resultAttrs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = importer.lookup(output.name(), fileLoc);
    if (!value)
      return failure();
    results.push_back(value);
    // Symbolic output dims let a runtime size outputs from the inputs.
    SmallVector<Attribute> dimNames;
    auto type = cast<RankedTensorType>(value.getType());
    const auto &dims = output.type().tensor_type().shape().dim();
    for (int64_t i = 0; i < type.getRank(); ++i)
      dimNames.push_back(b.getStringAttr(
          i < dims.size() && dims[i].has_dim_param() ? dims[i].dim_param()
                                                     : ""));
    resultAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("tessera.name", b.getStringAttr(output.name())),
         b.getNamedAttr("tessera.dim_params", b.getArrayAttr(dimNames))}));
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  if (failed(mlir::verify(*module)))
    return failure();
  return std::move(module);
}

/// Reads the ONNX model at `path`; the error says why it cannot be read.
static std::optional<std::string> readModel(StringRef path,
                                            onnx::ModelProto &model) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "cannot read '" + path.str() + "': " + buffer.getError().message();
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      static_cast<int>(std::min<size_t>((*buffer)->getBufferSize(),
                                        std::numeric_limits<int>::max())));
  stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
  if ((*buffer)->getBufferSize() > std::numeric_limits<int>::max() ||
      !model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return "'" + path.str() +
           "' is not a valid ONNX model: its protobuf does not parse "
           "(truncated or not an ONNX file; models over 2 GB must keep "
           "weights in external data)";
  if (!model.has_graph() || model.ir_version() <= 0)
    return "'" + path.str() +
           "' is not an ONNX model: it has no graph or no IR version";
  return std::nullopt;
}

llvm::Expected<std::vector<std::vector<std::string>>>
readONNXInputDimParams(StringRef path) {
  onnx::ModelProto model;
  if (std::optional<std::string> why = readModel(path, model))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *why);
  std::set<std::string> initializers;
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    initializers.insert(tensor.name());
  std::vector<std::vector<std::string>> inputs;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (initializers.count(input.name()))
      continue;
    std::vector<std::string> dims;
    if (input.type().has_tensor_type())
      for (const auto &dim : input.type().tensor_type().shape().dim())
        dims.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    inputs.push_back(std::move(dims));
  }
  return inputs;
}

FailureOr<OwningOpRef<ModuleOp>>
importONNXFile(StringRef path, MLIRContext &ctx,
               const ONNXImportOptions &options) {
  registerONNXImportDialects(ctx);
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  onnx::ModelProto model;
  if (std::optional<std::string> why = readModel(path, model))
    return emitError(fileLoc) << *why;
  if (!options.dimValues.empty()) {
    std::set<std::string> used;
    auto bind = [&](onnx::ValueInfoProto &value) {
      if (!value.type().has_tensor_type())
        return;
      auto *shape =
          value.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (auto &dim : *shape->mutable_dim()) {
        auto it = options.dimValues.find(dim.dim_param());
        if (!dim.has_dim_param() || it == options.dimValues.end())
          continue;
        used.insert(it->first);
        dim.set_dim_value(it->second);
      }
    };
    for (auto &input : *model.mutable_graph()->mutable_input())
      bind(input);
    std::set<std::string> inputDims = used;
    for (auto &output : *model.mutable_graph()->mutable_output())
      bind(output);
    for (const auto &[name, size] : options.dimValues) {
      if (!inputDims.count(name))
        return emitError(fileLoc) << "'" << path << "': no input has a dim "
                                  << "named '" << name << "'";
      if (size <= 0)
        return emitError(fileLoc) << "dim '" << name << "' must be positive";
    }
  }
  return importGraph(model, path, ctx, options);
}

} // namespace tessera
