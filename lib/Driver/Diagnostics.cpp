//===- Diagnostics.cpp - how Tessera's tools print diagnostics ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The op type (or "initializer") the importer tags a node's location
/// with, `loc` replaced by the location it wraps.
static StringRef unwrapNode(Location &loc) {
  StringRef kind;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto tag = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      kind = tag.getValue();
    if (fused.getLocations().size() == 1)
      loc = fused.getLocations().front();
  }
  return kind;
}

std::string tessera::describeLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  StringRef kind = unwrapNode(loc);
  if (auto named = dyn_cast<NameLoc>(loc)) {
    if (auto file = dyn_cast<FileLineColLoc>(named.getChildLoc()))
      os << file.getFilename().getValue() << ": ";
    if (kind == "initializer")
      os << "initializer '" << named.getName().getValue() << "'";
    else
      os << "node '" << named.getName().getValue() << "'"
         << (kind.empty() ? "" : " (" + kind.str() + ")");
    return text;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue();
    if (file.getLine() != 0)
      os << ":" << file.getLine() << ":" << file.getColumn();
    return text;
  }
  loc.print(os);
  return text;
}

std::pair<std::string, std::string> tessera::onnxNodeOf(Location loc) {
  StringRef kind = unwrapNode(loc);
  if (auto named = dyn_cast<NameLoc>(loc))
    return {named.getName().getValue().str(), kind.str()};
  return {"", kind.str()};
}

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

tessera::DiagnosticPrinter::DiagnosticPrinter(MLIRContext &context,
                                              llvm::raw_ostream &os)
    : handler(&context, [&os](Diagnostic &diag) {
        os << describeLocation(diag.getLocation()) << ": "
           << severityName(diag.getSeverity()) << ": " << diag << "\n";
        for (Diagnostic &note : diag.getNotes())
          os << "  " << describeLocation(note.getLocation()) << ": note: "
             << note << "\n";
        os.flush();
        return success();
      }) {
  // An op dumped in generic form after each error says little to someone
  // who wrote an ONNX model (the error names its node); MLIR's
  // --mlir-print-op-on-diagnostic still asks for it.
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  if (it == options.end() || it->second->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);
}
