//===- ImportONNX.h - ONNX models into the tessera dialect ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The front door of the compiler: reads an ONNX model (opsets 11 to 21 of the
// default domain; 1 to 10 through ONNX's version converter) into a module
// holding one func.func of tessera ops.
// Diagnostics go through the context's diagnostic engine and name the ONNX
// node they concern.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_IMPORT_ONNX_IMPORTONNX_H
#define TESSERA_IMPORT_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace tessera {

struct ONNXImportOptions {
  /// Name of the function the graph becomes.
  std::string functionName = "main";
  /// Tensors with at most this many elements become inline dense constants
  /// (readable, foldable); larger ones become dense resource blobs, which
  /// print elided and are never copied into attribute storage.
  int64_t inlineElementLimit = 16;
  /// Symbolic dims fixed to sizes: every input and output dim whose
  /// dim_param is a key gets that size (a static specialization, as the
  /// systolic target needs). A key no input uses is an error.
  std::map<std::string, int64_t> dimValues;
  /// Say (as a remark) when the model was converted from an older opset.
  bool noteConversions = false;
};

/// The oldest and newest default-domain opsets the importer reads directly.
constexpr int64_t kMinONNXOpset = 11;
constexpr int64_t kMaxONNXOpset = 21;
/// Models from this opset up to kMinONNXOpset - 1 are first rewritten to
/// kMinONNXOpset by ONNX's version converter (with a remark saying so when
/// ONNXImportOptions::noteConversions is set);
/// models of an op that never changed keep the opset it was introduced at.
constexpr int64_t kMinConvertibleONNXOpset = 1;

/// Imports the model at `path`; external data is read relative to its folder.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importONNXFile(llvm::StringRef path, mlir::MLIRContext &context,
               const ONNXImportOptions &options = {});

/// The dim_param names of each input of the ONNX model at `path` (in input
/// order, initializers excluded; "" for a dim without a name), without
/// importing it.
llvm::Expected<std::vector<std::vector<std::string>>>
readONNXInputDimParams(llvm::StringRef path);

/// Registers the dialects an imported module uses.
void registerONNXImportDialects(mlir::MLIRContext &context);

} // namespace tessera

#endif // TESSERA_IMPORT_ONNX_IMPORTONNX_H
