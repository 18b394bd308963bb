//===- Embed.cpp - compiling in process, for applications that embed Tessera //
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Embed.h"
#include "tessera/Driver/Diagnostics.h"
#include "tessera/InitTessera.h"
#include "tessera/Runtime/MemoryArtifact.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace tessera;

CompileDiagnostic tessera::describeDiagnostic(Diagnostic &diagnostic) {
  CompileDiagnostic d;
  switch (diagnostic.getSeverity()) {
  case DiagnosticSeverity::Error:
    d.severity = CompileDiagnostic::Severity::Error;
    break;
  case DiagnosticSeverity::Warning:
    d.severity = CompileDiagnostic::Severity::Warning;
    break;
  case DiagnosticSeverity::Note:
    d.severity = CompileDiagnostic::Severity::Note;
    break;
  case DiagnosticSeverity::Remark:
    d.severity = CompileDiagnostic::Severity::Remark;
    break;
  }
  d.message = diagnostic.str();
  Location loc = diagnostic.getLocation();
  d.location = describeLocation(loc);
  // The importer locates an op at its node: a NameLoc (the node's name)
  // fused with its op type as metadata; passes may fuse several of them,
  // and then the first names the node.
  StringRef kind;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto tag = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      kind = tag.getValue();
    for (Location inner : fused.getLocations()) {
      if (auto innerFused = dyn_cast<FusedLoc>(inner)) {
        if (auto tag = dyn_cast_or_null<StringAttr>(innerFused.getMetadata()))
          if (kind.empty())
            kind = tag.getValue();
        if (!innerFused.getLocations().empty())
          inner = innerFused.getLocations().front();
      }
      if (isa<NameLoc>(inner)) {
        loc = inner;
        break;
      }
    }
  }
  if (auto named = dyn_cast<NameLoc>(loc)) {
    d.node = named.getName().getValue().str();
    d.opType = kind.str();
  }
  return d;
}

namespace {

/// A private folder for one compile's files, removed with what is in it.
class ScratchFolder {
public:
  std::error_code create() {
    return llvm::sys::fs::createUniqueDirectory("tessera-embed", path);
  }
  std::string file(StringRef name) const {
    SmallString<256> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  ~ScratchFolder() {
    if (path.empty())
      return;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; !ec && it != end;
         it.increment(ec))
      llvm::sys::fs::remove(it->path());
    llvm::sys::fs::remove(path);
  }

private:
  SmallString<128> path;
};

void addError(CompiledModel &result, const std::string &message) {
  CompileDiagnostic d;
  d.message = message;
  result.diagnostics.push_back(std::move(d));
}

/// Reads a whole file, or says why not.
std::optional<std::vector<uint8_t>> readFile(const std::string &path,
                                             std::string &why) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    why = "cannot read '" + path + "': " + buffer.getError().message();
    return std::nullopt;
  }
  StringRef data = (*buffer)->getBuffer();
  return std::vector<uint8_t>(data.begin(), data.end());
}

/// Whether a registered loader opens files with `extension`.
bool opensExtension(StringRef extension) {
  runtime::registerAllExecutableLoaders();
  return llvm::any_of(runtime::registeredLoaders(),
                      [&](const runtime::ExecutableLoader *loader) {
                        return loader->extension == extension;
                      });
}

/// Replaces every occurrence of `from` in `text` with `to`.
void replaceAll(std::string &text, StringRef from, StringRef to) {
  if (from.empty())
    return;
  for (size_t at = 0; (at = text.find(from.data(), at, from.size())) !=
                      std::string::npos;
       at += to.size())
    text.replace(at, from.size(), to.str());
}

} // namespace

CompiledModel tessera::compileModel(const ModelSource &model,
                                    const EmbedOptions &embed) {
  CompiledModel result;
  registerAllTargets();
  CompileOptions options = embed.compile;
  const Target *target = lookupTarget(options.target);
  if (!target) {
    addError(result, "unknown target '" + options.target + "' (expected " +
                         targetNames() + ")");
    return result;
  }
  // The artifact: the one asked for, or the first the runtime opens.
  const ArtifactKind *kind = nullptr;
  for (const ArtifactKind &candidate : target->artifacts())
    if (embed.artifact.empty() ? opensExtension(candidate.extension)
                               : candidate.name == embed.artifact) {
      kind = &candidate;
      break;
    }
  if (!kind) {
    std::string names;
    for (const ArtifactKind &candidate : target->artifacts())
      names += (names.empty() ? "" : ", ") + candidate.name;
    addError(result, embed.artifact.empty()
                         ? "the " + target->name().str() +
                               " target writes no artifact the runtime opens"
                         : "unknown artifact '" + embed.artifact +
                               "' for the " + target->name().str() +
                               " target (expected " + names + ")");
    return result;
  }
  result.artifactKind = kind->name;
  result.extension = kind->extension;
  if ((!options.keepHeads || !options.keepFirstLayers) &&
      options.precision != "int8" && options.precision != "fp8") {
    addError(result, "quantizing output heads and first layers applies to "
                     "the int8 and fp8 policies (precision '" +
                         options.precision + "')");
    return result;
  }

  ScratchFolder scratch;
  if (std::error_code ec = scratch.create()) {
    addError(result, "cannot create a scratch folder: " + ec.message());
    return result;
  }
  std::string modelPath = model.path;
  if (!model.bytes.empty()) {
    modelPath = scratch.file("model.onnx");
    std::error_code ec;
    llvm::raw_fd_ostream out(modelPath, ec, llvm::sys::fs::OF_None);
    if (!ec) {
      out.write(reinterpret_cast<const char *>(model.bytes.data()),
                model.bytes.size());
      out.close();
      if (out.has_error())
        ec = out.error(), out.clear_error();
    }
    if (ec) {
      addError(result, "cannot write the model to a scratch file: " +
                           ec.message());
      return result;
    }
  }
  options.emit = kind->name;
  options.output = scratch.file("model" + kind->extension);
  options.compileTo.clear();
  options.printFusionSummary = false;
  options.dotGraph.clear();
  options.disableOutput = false;
  bool wantsReport =
      embed.fusionReport && options.fuse && target->info().formsFusionRegions();
  options.fusionReport = wantsReport ? scratch.file("fusion.json") : "";

  // Each compile has its own context, so compiles on several threads share
  // nothing but the registries; the compiler's threads are its own pool.
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  std::optional<llvm::DefaultThreadPool> pool;
  if (embed.threads != 1) {
    pool.emplace(llvm::hardware_concurrency(embed.threads));
    context.setThreadPool(*pool);
  }
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  std::string shownPath = model.bytes.empty() ? model.path : model.name;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    CompileDiagnostic d = describeDiagnostic(diagnostic);
    replaceAll(d.location, modelPath, shownPath);
    replaceAll(d.message, modelPath, shownPath);
    result.diagnostics.push_back(std::move(d));
    for (Diagnostic &note : diagnostic.getNotes()) {
      CompileDiagnostic n = describeDiagnostic(note);
      n.severity = CompileDiagnostic::Severity::Note;
      replaceAll(n.location, modelPath, shownPath);
      result.diagnostics.push_back(std::move(n));
    }
    return success();
  });

  // A C++ exception from a library the compiler uses (ONNX, protobuf)
  // becomes an error diagnostic rather than crossing the C API.
  llvm::Error error = [&]() -> llvm::Error {
    try {
      return compile(modelPath, context, options);
    } catch (const std::exception &e) {
      return llvm::createStringError(std::string("internal error: ") +
                                     e.what());
    } catch (...) {
      return llvm::createStringError("internal error: an unknown C++ "
                                     "exception");
    }
  }();
  if (error) {
    if (!isReportedFailure(error)) {
      std::string message = llvm::toString(std::move(error));
      replaceAll(message, modelPath, shownPath);
      addError(result, message);
    }
    if (llvm::none_of(result.diagnostics, [](const CompileDiagnostic &d) {
          return d.severity == CompileDiagnostic::Severity::Error;
        }))
      addError(result, "the compile failed without a diagnostic");
    return result;
  }
  std::string why;
  auto artifact = readFile(options.output, why);
  if (!artifact) {
    addError(result, why);
    return result;
  }
  result.artifact = std::move(*artifact);
  if (wantsReport && llvm::sys::fs::exists(options.fusionReport)) {
    auto report = readFile(options.fusionReport, why);
    if (!report) {
      addError(result, why);
      return result;
    }
    result.fusionReport.assign(report->begin(), report->end());
    replaceAll(result.fusionReport, modelPath, shownPath);
  }
  result.succeeded = true;
  return result;
}
