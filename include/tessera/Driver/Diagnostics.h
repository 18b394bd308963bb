//===- Diagnostics.h - how Tessera's tools print diagnostics --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DRIVER_DIAGNOSTICS_H
#define TESSERA_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <string>
#include <utility>

namespace tessera {

/// Describes a location for a user: "model.onnx: node 'attn/MatMul_1'
/// (MatMul)" for what the importer located at an ONNX node or tensor,
/// "file.mlir:3:8" for source positions.
std::string describeLocation(mlir::Location loc);

/// The ONNX node the importer located `loc` at and its op type ("" for
/// what it cannot tell).
std::pair<std::string, std::string> onnxNodeOf(mlir::Location loc);

/// While alive, prints every diagnostic of `context` to `os` as
/// "<location>: error: <message>" (notes indented below), naming the ONNX
/// node each one concerns.
class DiagnosticPrinter {
public:
  DiagnosticPrinter(mlir::MLIRContext &context, llvm::raw_ostream &os);

private:
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace tessera

#endif // TESSERA_DRIVER_DIAGNOSTICS_H
