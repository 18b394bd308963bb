//===- CompilerCAPI.cpp - Tessera's C API for compiling models in process -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera-c/Compiler.h"
#include "tessera/Driver/Embed.h"
#include "tessera/Runtime/CAPIError.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace tessera;

// The C severities are CompileDiagnostic's values.
static_assert(TESSERA_SEVERITY_ERROR ==
                  static_cast<int>(CompileDiagnostic::Severity::Error) &&
              TESSERA_SEVERITY_WARNING ==
                  static_cast<int>(CompileDiagnostic::Severity::Warning) &&
              TESSERA_SEVERITY_NOTE ==
                  static_cast<int>(CompileDiagnostic::Severity::Note) &&
              TESSERA_SEVERITY_REMARK ==
                  static_cast<int>(CompileDiagnostic::Severity::Remark));

struct tessera_compile_options {
  EmbedOptions embed;
};

struct tessera_compile_result {
  CompiledModel compiled;
  std::string messages;
};

tessera_compile_options *tessera_compile_options_create(void) {
  return new tessera_compile_options;
}

void tessera_compile_options_free(tessera_compile_options *options) {
  delete options;
}

void tessera_compile_options_set_target(tessera_compile_options *options,
                                        const char *target) {
  if (options)
    options->embed.compile.target = target ? target : "";
}

void tessera_compile_options_set_target_option(
    tessera_compile_options *options, const char *name, const char *value) {
  if (options && name)
    options->embed.compile.targetOptions[name] = value ? value : "";
}

void tessera_compile_options_set_fusion(tessera_compile_options *options,
                                        int enabled) {
  if (options)
    options->embed.compile.fuse = enabled != 0;
}

void tessera_compile_options_set_compiler_threads(
    tessera_compile_options *options, int32_t threads) {
  if (options)
    options->embed.threads = threads > 0 ? static_cast<unsigned>(threads) : 0;
}

void tessera_compile_options_set_artifact(tessera_compile_options *options,
                                          const char *kind) {
  if (options)
    options->embed.artifact = kind ? kind : "";
}

void tessera_compile_options_set_dim(tessera_compile_options *options,
                                     const char *name, int64_t size) {
  if (options && name)
    options->embed.compile.dimValues[name] = size;
}

void tessera_compile_options_set_precision(tessera_compile_options *options,
                                           const char *policy) {
  if (options)
    options->embed.compile.precision = policy ? policy : "fp32";
}

void tessera_compile_options_set_allow_tf32(tessera_compile_options *options,
                                            int allow) {
  if (options)
    options->embed.compile.allowTF32 = allow != 0;
}

void tessera_compile_options_set_quantize_layers(
    tessera_compile_options *options, int heads, int first_layers) {
  if (!options)
    return;
  options->embed.compile.keepHeads = heads == 0;
  options->embed.compile.keepFirstLayers = first_layers == 0;
}

void tessera_compile_options_add_keep_fp32(tessera_compile_options *options,
                                           const char *regex) {
  if (options && regex)
    options->embed.compile.keepFp32.push_back(regex);
}

void tessera_compile_options_set_calibration(tessera_compile_options *options,
                                             const char *dir,
                                             const char *cache) {
  if (!options)
    return;
  options->embed.compile.calibrate = dir ? dir : "";
  options->embed.compile.calibrationCache = cache ? cache : "";
}

void tessera_compile_options_set_calibration_method(
    tessera_compile_options *options, const char *method, double percentile) {
  if (!options)
    return;
  options->embed.compile.calibrationMethod = method ? method : "max";
  options->embed.compile.calibrationPercentile = percentile;
}

void tessera_compile_options_set_fp8(tessera_compile_options *options,
                                     const char *scaling, const char *format) {
  if (!options)
    return;
  options->embed.compile.fp8Scaling = scaling ? scaling : "static";
  options->embed.compile.fp8Format = format ? format : "e4m3";
}

void tessera_compile_options_set_saturation_counts(
    tessera_compile_options *options, int enable) {
  if (!options)
    return;
  options->embed.compile.saturationCounts = enable != 0;
}

static const char *severityName(CompileDiagnostic::Severity severity) {
  switch (severity) {
  case CompileDiagnostic::Severity::Error:
    return "error";
  case CompileDiagnostic::Severity::Warning:
    return "warning";
  case CompileDiagnostic::Severity::Note:
    return "note";
  case CompileDiagnostic::Severity::Remark:
    return "remark";
  }
  return "error";
}

static tessera_compile_result *finish(CompiledModel compiled) {
  auto *result = new tessera_compile_result{std::move(compiled), ""};
  llvm::raw_string_ostream os(result->messages);
  for (const CompileDiagnostic &d : result->compiled.diagnostics) {
    bool note = d.severity == CompileDiagnostic::Severity::Note;
    os << (note ? "  " : "")
       << (d.location.empty() ? "" : d.location + ": ")
       << severityName(d.severity) << ": " << d.message << "\n";
  }
  return result;
}

static EmbedOptions optionsOrDefault(const tessera_compile_options *options) {
  return options ? options->embed : EmbedOptions();
}

tessera_compile_result *
tessera_compile_file(const char *path, const tessera_compile_options *options) {
  ModelSource source;
  source.path = path ? path : "";
  if (source.path.empty()) {
    CompiledModel failed;
    failed.diagnostics.push_back({CompileDiagnostic::Severity::Error, "", "",
                                  "no model path given", ""});
    return finish(std::move(failed));
  }
  return finish(compileModel(source, optionsOrDefault(options)));
}

tessera_compile_result *
tessera_compile_buffer(const void *data, size_t size, const char *name,
                       const tessera_compile_options *options) {
  if (!data || size == 0) {
    CompiledModel failed;
    failed.diagnostics.push_back({CompileDiagnostic::Severity::Error, "", "",
                                  "the model's bytes are empty", ""});
    return finish(std::move(failed));
  }
  ModelSource source;
  const auto *bytes = static_cast<const uint8_t *>(data);
  source.bytes.assign(bytes, bytes + size);
  if (name)
    source.name = name;
  return finish(compileModel(source, optionsOrDefault(options)));
}

void tessera_compile_result_free(tessera_compile_result *result) {
  delete result;
}

int tessera_compile_result_ok(const tessera_compile_result *result) {
  return result && result->compiled.succeeded;
}

const void *tessera_compile_result_artifact(const tessera_compile_result *result,
                                            size_t *size) {
  bool ok = tessera_compile_result_ok(result);
  if (size)
    *size = ok ? result->compiled.artifact.size() : 0;
  return ok ? result->compiled.artifact.data() : nullptr;
}

const char *
tessera_compile_result_artifact_kind(const tessera_compile_result *result) {
  return result ? result->compiled.artifactKind.c_str() : "";
}

const char *
tessera_compile_result_artifact_extension(const tessera_compile_result *result) {
  return result ? result->compiled.extension.c_str() : "";
}

int tessera_compile_result_write(const tessera_compile_result *result,
                                 const char *path) {
  if (!tessera_compile_result_ok(result)) {
    capi::setLastError("the compile failed; there is no artifact to write");
    return 1;
  }
  if (!path || !*path) {
    capi::setLastError("no path to write the artifact to");
    return 1;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (!ec) {
    const std::vector<uint8_t> &bytes = result->compiled.artifact;
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.close();
    if (out.has_error())
      ec = out.error(), out.clear_error();
  }
  if (ec) {
    capi::setLastError(std::string("cannot write '") + path +
                       "': " + ec.message());
    return 1;
  }
  capi::clearLastError();
  return 0;
}

tessera_model *tessera_compile_result_load(const tessera_compile_result *result,
                                           const char *const *names,
                                           const char *const *values,
                                           int32_t count) {
  if (!tessera_compile_result_ok(result)) {
    capi::setLastError("the compile failed; there is no artifact to load");
    return nullptr;
  }
  const std::vector<uint8_t> &bytes = result->compiled.artifact;
  return tessera_model_load_from_memory(bytes.data(), bytes.size(),
                                        result->compiled.extension.c_str(),
                                        names, values, count);
}

const char *
tessera_compile_result_fusion_report(const tessera_compile_result *result) {
  return result ? result->compiled.fusionReport.c_str() : "";
}

int32_t
tessera_compile_result_num_diagnostics(const tessera_compile_result *result) {
  return result ? static_cast<int32_t>(result->compiled.diagnostics.size())
                : 0;
}

int tessera_compile_result_diagnostic(const tessera_compile_result *result,
                                      int32_t index, tessera_diagnostic *out) {
  if (!result || !out || index < 0 ||
      static_cast<size_t>(index) >= result->compiled.diagnostics.size())
    return 1;
  const CompileDiagnostic &d = result->compiled.diagnostics[index];
  out->severity = static_cast<tessera_severity>(d.severity);
  out->node = d.node.c_str();
  out->op_type = d.opType.c_str();
  out->message = d.message.c_str();
  out->location = d.location.c_str();
  return 0;
}

const char *
tessera_compile_result_messages(const tessera_compile_result *result) {
  return result ? result->messages.c_str() : "";
}
