/*===- Compiler.h - Tessera's C API for compiling models in process -----===*/
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Compiles an ONNX model, from a file or from bytes in memory, for any
 * registered target (libtessera_compiler.so). The result holds the artifact
 * (in memory; written to disk on request), the fusion report as JSON and
 * every diagnostic as data: the ONNX node and op type it concerns and the
 * message. Nothing is printed and no input makes the library abort.
 *
 *   tessera_compile_options *o = tessera_compile_options_create();
 *   tessera_compile_result *r = tessera_compile_file("model.onnx", o);
 *   if (tessera_compile_result_ok(r)) {
 *     tessera_model *m = tessera_compile_result_load(r, NULL, NULL, 0);
 *     ... tessera_model_run(m, ...)  (tessera-c/Runtime.h) ...
 *   }
 *
 * Threads: every function may be called from any thread, and compiles on
 * several threads run in parallel. A tessera_compile_options may be read
 * by any number of compiles at once but must not be changed while one
 * runs. A tessera_compile_result is immutable: its accessors may be called
 * from many threads at once; tessera_compile_result_free must not overlap
 * with them. Errors of calls other than compiles are reported through
 * tessera_last_error() (per thread).
 */
#ifndef TESSERA_C_COMPILER_H
#define TESSERA_C_COMPILER_H

#include "tessera-c/Runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tessera_compile_options tessera_compile_options;
typedef struct tessera_compile_result tessera_compile_result;

/** Options with their defaults: target "cpu", fusion on, the compiler on
 *  one thread per core, the first artifact the runtime can open. */
tessera_compile_options *tessera_compile_options_create(void);
void tessera_compile_options_free(tessera_compile_options *options);
/** The registered target to compile for ("cpu", "systolic"); checked when
 *  compiling. */
void tessera_compile_options_set_target(tessera_compile_options *options,
                                        const char *target);
/** One of the target's own options by name, as tessera-compile spells it
 *  without dashes: "threads" (OpenMP threads of a CPU model), "O" ("3"),
 *  "mcpu", "accel". Checked when compiling. */
void tessera_compile_options_set_target_option(
    tessera_compile_options *options, const char *name, const char *value);
/** 1 (the default) forms fusion regions; 0 compiles one kernel per op. */
void tessera_compile_options_set_fusion(tessera_compile_options *options,
                                        int enabled);
/** Threads the compiler itself uses: 0 for one per core, 1 for none beside
 *  the caller's. */
void tessera_compile_options_set_compiler_threads(
    tessera_compile_options *options, int32_t threads);
/** The artifact to produce, by the target's name for it ("lib", "obj",
 *  "asm", "llvm" for the CPU; "program" for the systolic target); NULL or
 *  "" for the first one the runtime opens. */
void tessera_compile_options_set_artifact(tessera_compile_options *options,
                                          const char *kind);
/** Fixes a symbolic input dim to a size (for targets that compile for
 *  fixed sizes). */
void tessera_compile_options_set_dim(tessera_compile_options *options,
                                     const char *name, int64_t size);
/** The precision policy, as tessera-compile's --precision: "fp32" (the
 *  default), "bf16", "fp16", "fp8" or "int8". Checked when compiling. */
void tessera_compile_options_set_precision(tessera_compile_options *options,
                                           const char *policy);
/** Lets fp32 matmuls run on tensor cores as tf32 (--allow-tf32) on a
 *  target that has them (cuda); 0 (the default) keeps them exact fp32. */
void tessera_compile_options_set_allow_tf32(tessera_compile_options *options,
                                            int allow);
/** Under the fp8 and int8 policies, narrows the output heads
 *  (--quantize-heads) and the first layers (--quantize-first-layers) too
 *  where non-zero; 0, 0 (the default) keeps both fp32. Either non-zero
 *  under another policy is an error when compiling. */
void tessera_compile_options_set_quantize_layers(
    tessera_compile_options *options, int heads, int first_layers);
/** Keeps the ops of ONNX nodes whose names match `regex` (the whole name)
 *  in fp32 under the precision policy (--keep-fp32); may be repeated. */
void tessera_compile_options_add_keep_fp32(tessera_compile_options *options,
                                           const char *regex);
/** Calibration (--calibrate, --calibration-cache): `dir`, a folder in
 *  ONNX's test layout whose test sets' inputs are the samples, and `cache`,
 *  the calibration cache to write (with `dir`) or read (without); either
 *  may be NULL. */
void tessera_compile_options_set_calibration(tessera_compile_options *options,
                                             const char *dir,
                                             const char *cache);
/** How calibration turns values into ranges (--calibration-method):
 *  "max" (the default), "percentile" (the |value| that `percentile`
 *  percent of them do not exceed, --calibration-percentile) or "entropy";
 *  an unknown method fails the compile. `percentile` is read only by the
 *  percentile method. */
void tessera_compile_options_set_calibration_method(
    tessera_compile_options *options, const char *method, double percentile);

/** Under --precision=fp8: how activations are scaled (--fp8-scaling),
 *  "static" (calibrated ranges; the default when NULL) or "current" (each
 *  run's own amax, computed by the program; no calibration needed), and
 *  the operands' format (--fp8-format), "e4m3" (the default when NULL) or
 *  "e5m2"; another value fails the compile. */
void tessera_compile_options_set_fp8(tessera_compile_options *options,
                                     const char *scaling, const char *format);

/** Non-zero: every run also counts the values each int8 or fp8 quantize
 *  with a fixed scale saturates (--saturation-counts), as extra outputs
 *  named "tessera.saturated:<key>" after the model's own (the key: the
 *  ONNX node and operand the quantize feeds, "/fc/MatMul:lhs", or a
 *  QuantizeLinear's own node name), each two int64 values: saturated,
 *  quantized. 0 (the default): none. */
void tessera_compile_options_set_saturation_counts(
    tessera_compile_options *options, int enable);

/** Compiles the ONNX model at `path` (external data is read beside it).
 *  Never NULL: check tessera_compile_result_ok. `options` may be NULL for
 *  the defaults. */
tessera_compile_result *
tessera_compile_file(const char *path, const tessera_compile_options *options);
/** Compiles a serialized ONNX ModelProto of `size` bytes; `name` is what
 *  diagnostics call the model (NULL for "<memory>"). */
tessera_compile_result *
tessera_compile_buffer(const void *data, size_t size, const char *name,
                       const tessera_compile_options *options);
void tessera_compile_result_free(tessera_compile_result *result);

/** 1 when the compile succeeded and the result holds an artifact. */
int tessera_compile_result_ok(const tessera_compile_result *result);
/** The artifact's bytes (NULL when the compile failed) and its size. */
const void *tessera_compile_result_artifact(const tessera_compile_result *result,
                                            size_t *size);
/** The artifact's kind and file name extension ("lib", ".so"). */
const char *
tessera_compile_result_artifact_kind(const tessera_compile_result *result);
const char *
tessera_compile_result_artifact_extension(const tessera_compile_result *result);
/** Writes the artifact to `path`; 0 on success, else non-zero and
 *  tessera_last_error() says why. */
int tessera_compile_result_write(const tessera_compile_result *result,
                                 const char *path);
/** Opens the artifact in this process, from memory, with loader options
 *  as in tessera_model_load_with_options; NULL on failure
 *  (tessera_last_error()). */
tessera_model *tessera_compile_result_load(const tessera_compile_result *result,
                                           const char *const *names,
                                           const char *const *values,
                                           int32_t count);
/** The fusion report as JSON: {"regions": [...], "rejected": [...]}; ""
 *  when none was made (fusion off, or a target that forms no regions). */
const char *
tessera_compile_result_fusion_report(const tessera_compile_result *result);

typedef enum tessera_severity {
  TESSERA_SEVERITY_ERROR = 0,
  TESSERA_SEVERITY_WARNING = 1,
  TESSERA_SEVERITY_NOTE = 2,
  TESSERA_SEVERITY_REMARK = 3
} tessera_severity;

/** A diagnostic; its strings are valid while the result is. */
typedef struct tessera_diagnostic {
  tessera_severity severity;
  /** The ONNX node's name and op type ("" when it concerns no node). */
  const char *node;
  const char *op_type;
  const char *message;
  /** Where, for a person: "model.onnx: node 'fc1' (Gemm)". */
  const char *location;
} tessera_diagnostic;

int32_t
tessera_compile_result_num_diagnostics(const tessera_compile_result *result);
/** The diagnostic at `index` (notes follow the error they belong to); 0 on
 *  success, 1 for an index out of range. */
int tessera_compile_result_diagnostic(const tessera_compile_result *result,
                                      int32_t index, tessera_diagnostic *out);
/** Every diagnostic as text, one per line, as tessera-compile prints them
 *  ("" when there are none); valid while the result is. */
const char *
tessera_compile_result_messages(const tessera_compile_result *result);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_COMPILER_H */
