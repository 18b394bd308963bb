//===- Compiler.hpp - a C++ wrapper over Tessera's C compiler API ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_C_COMPILER_HPP
#define TESSERA_C_COMPILER_HPP

#include "tessera-c/Compiler.h"
#include "tessera-c/Runtime.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera {

/// One diagnostic of a compile.
struct Diagnostic {
  tessera_severity severity;
  std::string node, opType, message, location;
};

/// A compile that failed: what() is every diagnostic as text.
class CompileError : public std::runtime_error {
public:
  CompileError(const std::string &text, std::vector<Diagnostic> diagnostics)
      : std::runtime_error(text), all(std::move(diagnostics)) {}
  const std::vector<Diagnostic> &diagnostics() const { return all; }

private:
  std::vector<Diagnostic> all;
};

/// What a compile takes; empty fields keep Tessera's defaults.
struct CompilerOptions {
  std::string target = "cpu";
  std::map<std::string, std::string> targetOptions;
  bool fusion = true;
  int compilerThreads = 0;
  std::string artifact;
};

/// A compiled model: its artifact in memory and its fusion report.
class Compiled {
public:
  /// Compiles the ONNX model at `path`; throws CompileError.
  static Compiled fromFile(const std::string &path,
                           const CompilerOptions &options = {}) {
    return Compiled(tessera_compile_file(path.c_str(), Options(options).get()));
  }
  /// Compiles a serialized ONNX model; throws CompileError.
  static Compiled fromBytes(const void *data, size_t size,
                            const CompilerOptions &options = {},
                            const std::string &name = "<memory>") {
    return Compiled(tessera_compile_buffer(data, size, name.c_str(),
                                           Options(options).get()));
  }

  /// The artifact's bytes.
  const uint8_t *data() const {
    return static_cast<const uint8_t *>(
        tessera_compile_result_artifact(result.get(), nullptr));
  }
  size_t size() const {
    size_t n = 0;
    tessera_compile_result_artifact(result.get(), &n);
    return n;
  }
  std::string fusionReport() const {
    return tessera_compile_result_fusion_report(result.get());
  }
  /// Diagnostics of a compile that succeeded (warnings, remarks).
  std::vector<Diagnostic> diagnostics() const { return collect(result.get()); }

  void write(const std::string &path) const {
    if (tessera_compile_result_write(result.get(), path.c_str()))
      throw std::runtime_error(tessera_last_error());
  }
  /// Opens the artifact in this process, from memory.
  Model load() const {
    tessera_model *model =
        tessera_compile_result_load(result.get(), nullptr, nullptr, 0);
    if (!model)
      throw std::runtime_error(tessera_last_error());
    return Model(model);
  }

private:
  using ResultPtr =
      std::unique_ptr<tessera_compile_result,
                      void (*)(tessera_compile_result *)>;
  /// The C options for `options`, freed with it.
  class Options {
  public:
    explicit Options(const CompilerOptions &options)
        : options(tessera_compile_options_create(),
                  tessera_compile_options_free) {
      tessera_compile_options_set_target(get(), options.target.c_str());
      for (const auto &[name, value] : options.targetOptions)
        tessera_compile_options_set_target_option(get(), name.c_str(),
                                                  value.c_str());
      tessera_compile_options_set_fusion(get(), options.fusion);
      tessera_compile_options_set_compiler_threads(get(),
                                                   options.compilerThreads);
      tessera_compile_options_set_artifact(get(), options.artifact.c_str());
    }
    tessera_compile_options *get() const { return options.get(); }

  private:
    std::unique_ptr<tessera_compile_options,
                    void (*)(tessera_compile_options *)>
        options;
  };

  static std::vector<Diagnostic>
  collect(const tessera_compile_result *result) {
    std::vector<Diagnostic> all;
    tessera_diagnostic d;
    for (int32_t i = 0; i < tessera_compile_result_num_diagnostics(result);
         ++i)
      if (!tessera_compile_result_diagnostic(result, i, &d))
        all.push_back({d.severity, d.node, d.op_type, d.message, d.location});
    return all;
  }

  explicit Compiled(tessera_compile_result *compiled)
      : result(compiled, tessera_compile_result_free) {
    if (!tessera_compile_result_ok(result.get()))
      throw CompileError(tessera_compile_result_messages(result.get()),
                         collect(result.get()));
  }

  ResultPtr result;
};

} // namespace tessera

#endif // TESSERA_C_COMPILER_HPP
