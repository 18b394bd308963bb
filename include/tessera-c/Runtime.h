/*===- Runtime.h - Tessera's C API for running compiled models ----------===*/
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Loads any artifact Tessera writes (a CPU library from
 * `tessera-compile model.onnx -o model.so`, a systolic program from
 * `--target=systolic -o model.tsp`, which runs on the simulator) and runs
 * it on caller-owned buffers. Every shape and element type is checked
 * at this boundary; a call that fails returns non-zero (or NULL) and
 * tessera_last_error() says why.
 */
#ifndef TESSERA_C_RUNTIME_H
#define TESSERA_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The largest rank a tensor may have at this boundary. */
#define TESSERA_MAX_RANK 8

typedef enum tessera_dtype {
  TESSERA_F32 = 0,
  TESSERA_F16 = 1,
  TESSERA_BF16 = 2,
  TESSERA_I8 = 3,
  TESSERA_I32 = 4,
  TESSERA_I64 = 5,
  TESSERA_BOOL = 6,
  TESSERA_F8E4M3FN = 7,
  TESSERA_F8E5M2 = 8
} tessera_dtype;

/** A dense row-major tensor the caller owns. For inputs, `capacity` is the
 *  byte size of `data`; for outputs, the bytes available: the runtime
 *  writes the output's dtype, rank and shape, and its data when it fits. */
typedef struct tessera_tensor {
  tessera_dtype dtype;
  int32_t rank;
  int64_t shape[TESSERA_MAX_RANK];
  void *data;
  size_t capacity;
} tessera_tensor;

typedef struct tessera_model tessera_model;

/** The message of the last failed call on this thread ("" if none). */
const char *tessera_last_error(void);

/** Loads an artifact, its kind chosen by the file's extension (.so, .tsp);
 *  NULL on failure. */
tessera_model *tessera_model_load(const char *path);
/** Loads an artifact with loader options, `count` name/value pairs (a
 *  systolic program reads "accel": a preset such as "small", or a JSON
 *  configuration file); NULL on failure. */
tessera_model *tessera_model_load_with_options(const char *path,
                                               const char *const *names,
                                               const char *const *values,
                                               int32_t count);
/** Where the model runs, in words ("host CPU", "systolic simulator
 *  'small'"); valid while the model is. */
const char *tessera_model_device(const tessera_model *model);
void tessera_model_free(tessera_model *model);

int32_t tessera_model_num_inputs(const tessera_model *model);
int32_t tessera_model_num_outputs(const tessera_model *model);
/** Names, element types, ranks and dims (-1 when dynamic) of the model's
 *  inputs (`output` = 0) and outputs (`output` = 1). */
const char *tessera_model_name(const tessera_model *model, int output,
                               int32_t index);
tessera_dtype tessera_model_dtype(const tessera_model *model, int output,
                                  int32_t index);
int32_t tessera_model_rank(const tessera_model *model, int output,
                           int32_t index);
int64_t tessera_model_dim(const tessera_model *model, int output,
                          int32_t index, int32_t dim);

/** Runs the model. Returns 0 on success; 1 on an error; 2 when an output's
 *  `capacity` is too small (its shape is then filled in so the caller can
 *  allocate and call again). */
int tessera_model_run(tessera_model *model, const tessera_tensor *inputs,
                      int32_t num_inputs, tessera_tensor *outputs,
                      int32_t num_outputs);

/** Bytes per element of `dtype` (0 for a value that is no dtype). */
size_t tessera_dtype_size(tessera_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_RUNTIME_H */
