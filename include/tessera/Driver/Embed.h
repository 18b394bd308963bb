//===- Embed.h - compiling in process, for applications that embed Tessera ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// compileModel() is the driver entry (compile()) for a caller that holds
// the model in memory and wants the artifact, the fusion report and the
// diagnostics back as data: nothing is printed, nothing is left on disk.
// The C API (tessera-c/Compiler.h) and the Python package call it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DRIVER_EMBED_H
#define TESSERA_DRIVER_EMBED_H

#include "tessera/Driver/Compile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

/// One diagnostic of a compile, as data.
struct CompileDiagnostic {
  enum class Severity { Error, Warning, Note, Remark };
  Severity severity = Severity::Error;
  /// The ONNX node it concerns and that node's op type ("initializer" for
  /// an initializer); empty when it concerns no node.
  std::string node, opType;
  std::string message;
  /// Where, for a person: "model.onnx: node 'fc1' (Gemm)".
  std::string location;
};

/// A model to compile: a file, or the bytes of an ONNX model.
struct ModelSource {
  /// The file to read; used when `bytes` is empty.
  std::string path;
  /// The serialized ONNX ModelProto. External data cannot be resolved for
  /// a model given as bytes.
  std::vector<uint8_t> bytes;
  /// What diagnostics call a model given as bytes.
  std::string name = "<memory>";
};

struct EmbedOptions {
  /// target, targetOptions, fuse and dimValues apply; the outputs are
  /// chosen by the fields below.
  CompileOptions compile;
  /// The artifact to produce (one of the target's ArtifactKind names);
  /// empty for the first one the runtime can open.
  std::string artifact;
  /// Threads the compiler itself uses: 0 for one per core, 1 for none
  /// beside the caller's.
  unsigned threads = 0;
  /// Also produce the fusion report (when the target forms fusion regions
  /// and fusion is on).
  bool fusionReport = true;
};

struct CompiledModel {
  bool succeeded = false;
  /// The artifact's kind and file name extension ("lib", ".so").
  std::string artifactKind, extension;
  std::vector<uint8_t> artifact;
  /// The fusion report as JSON; empty when none was made.
  std::string fusionReport;
  /// Every diagnostic, in order; at least one error when the compile
  /// failed.
  std::vector<CompileDiagnostic> diagnostics;
};

/// Compiles `model` with `options`. Never prints and never throws: every
/// problem (with the options, the model or the toolchain) comes back as an
/// error diagnostic. Safe to call from several threads at once.
CompiledModel compileModel(const ModelSource &model,
                           const EmbedOptions &options);

/// Splits a located diagnostic into the ONNX node and op type it names.
CompileDiagnostic describeDiagnostic(mlir::Diagnostic &diagnostic);

} // namespace tessera

#endif // TESSERA_DRIVER_EMBED_H
