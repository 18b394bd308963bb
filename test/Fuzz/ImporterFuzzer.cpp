//===- ImporterFuzzer.cpp - libFuzzer target: ONNX bytes to the graph phase ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each input is an ONNX model file. It goes through what
// `tessera-compile model.onnx --compile-to=graph` runs: import (opset
// conversion, shape inference, every op's importer) and the graph phase
// (canonicalization, CSE, raising, fusion for the CPU target), with the
// pass manager's verifier on. A diagnostic is a fine outcome; a crash, a
// sanitizer report, a leak or a timeout is a finding.
//
// The importer reads models from a path (external data is resolved against
// the model's folder), so each input is written to model.onnx in a private,
// otherwise empty temporary folder. Every input gets a fresh MLIRContext, so
// a finding reproduces from its input alone.
//
//===----------------------------------------------------------------------===//
#include "tessera/Driver/Compile.h"
#include "tessera/InitTessera.h"
#include "tessera/Target/Target.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
std::string modelPath;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") +
                    "/tessera-fuzz-importer.XXXXXX";
  if (!mkdtemp(dir.data())) {
    std::perror("tessera-fuzz-importer: mkdtemp");
    std::abort();
  }
  modelPath = dir + "/model.onnx";
  tessera::registerAllTargets();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  {
    FILE *file = std::fopen(modelPath.c_str(), "wb");
    if (!file)
      std::abort();
    if (size && std::fwrite(data, 1, size, file) != size)
      std::abort();
    std::fclose(file);
  }
  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are expected for most inputs; keep the output quiet.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  tessera::CompileOptions options;
  options.target = "cpu";
  options.compileTo = "graph";
  options.disableOutput = true;
  llvm::consumeError(tessera::compile(modelPath, context, options));
  return 0;
}
