/*===- Runtime.h - Tessera's C API for running compiled models ----------===*/
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Loads any artifact Tessera writes (a CPU library from
 * `tessera-compile model.onnx -o model.so`, a systolic program from
 * `--target=systolic -o model.tsp`, which runs on the simulator, a GPU
 * library from `--target=cuda -o model.so`) and runs it on caller-owned
 * buffers, in host memory or, for a GPU's model, in device memory. Every shape
 * and element type is checked at this boundary; a call that fails returns
 * non-zero (or NULL) and tessera_last_error() says why.
 *
 * Inputs are read where the caller keeps them (no copy). Outputs are either
 * copied into the caller's buffers (tessera_model_run) or handed over in
 * the buffers the model allocated (tessera_model_run_nocopy).
 *
 * Threads: every function may be called from any thread. A tessera_model
 * may be run from many threads at once (see tessera_model_concurrent_runs);
 * the calls that read its signature may overlap with runs;
 * tessera_model_free must not overlap with any other call on the model.
 * A tessera_buffer belongs to one caller; tessera_last_error() is per
 * thread.
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
/** Loads an artifact held in memory: `size` bytes at `data` of the kind
 *  `kind`, an artifact kind ("cpu-library", "systolic-program") or its file
 *  extension (".so", ".tsp"), with loader options as in
 *  tessera_model_load_with_options. Nothing is written to disk; the bytes
 *  may be freed once the call returns. NULL on failure. */
tessera_model *tessera_model_load_from_memory(const void *data, size_t size,
                                              const char *kind,
                                              const char *const *names,
                                              const char *const *values,
                                              int32_t count);
/** 1 when runs of the model on several threads proceed in parallel (a CPU
 *  library; a CUDA artifact on a GPU, each thread's runs on its own
 *  stream), 0 when the runtime serializes them (a simulated program keeps
 *  state between runs; the PTX emulator). Either way concurrent calls are
 *  safe. */
int tessera_model_concurrent_runs(const tessera_model *model);
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
/** The symbolic name of a dynamic dim ("batch"; dims with equal names
 *  must have equal sizes), "" for a dim without one; NULL when out of
 *  range. */
const char *tessera_model_dim_param(const tessera_model *model, int output,
                                    int32_t index, int32_t dim);

/** Runs the model. Returns 0 on success; 1 on an error; 2 when an output's
 *  `capacity` is too small (its shape is then filled in so the caller can
 *  allocate and call again). */
int tessera_model_run(tessera_model *model, const tessera_tensor *inputs,
                      int32_t num_inputs, tessera_tensor *outputs,
                      int32_t num_outputs);

/** An output buffer the model allocated, handed to the caller without a
 *  copy. Its data stays valid until tessera_buffer_free, also after the
 *  model is freed. */
typedef struct tessera_buffer tessera_buffer;

/** Runs the model and hands back its outputs without copying them: each
 *  outputs[i] gets the output's dtype, rank, shape, `data` (in the model's
 *  buffer) and `capacity` (its byte size), and buffers[i] the handle that
 *  keeps those bytes alive; free each with tessera_buffer_free. Returns 0
 *  on success; 1 on an error (nothing is handed over then). */
int tessera_model_run_nocopy(tessera_model *model,
                             const tessera_tensor *inputs, int32_t num_inputs,
                             tessera_tensor *outputs, tessera_buffer **buffers,
                             int32_t num_outputs);
/** Releases an output buffer (NULL is ignored). */
void tessera_buffer_free(tessera_buffer *buffer);

/* Tensors in device memory. A model compiled for a GPU
 * (`tessera-compile --target=cuda`) also runs on tensors already in the
 * GPU's memory: a framework's device pointers (CUdeviceptr values of the
 * device's primary context, which the CUDA runtime uses too), or buffers
 * allocated with tessera_model_device_alloc. When the model runs on the PTX
 * emulator, device memory is the emulator's: allocate it here. Device
 * addresses travel as uint64_t, and in a tessera_tensor's `data`; the host
 * never dereferences them. Models that run on the host refuse these calls
 * (1, with tessera_last_error() saying so). */

/** 1 when the model's tensors live in device memory (the calls below
 *  work), 0 otherwise. */
int tessera_model_has_device_memory(const tessera_model *model);
/** `bytes` of device memory for the model's device at *address (from a
 *  pool that runs reuse), valid until tessera_model_device_free and at
 *  most as long as the model (freeing the model may free it). */
int tessera_model_device_alloc(tessera_model *model, size_t bytes,
                               uint64_t *address);
/** Gives back device memory that this model's tessera_model_device_alloc
 *  or tessera_model_run_device handed out; any other address (a
 *  framework's, another model's) and 0 are ignored. The memory may serve
 *  the model's next run at once: free it only when no work of the
 *  caller's still reads it. */
void tessera_model_device_free(tessera_model *model, uint64_t address);
/** Copies between host memory and the model's device memory; each copy is
 *  complete when the call returns (the host buffer may be reused, and a
 *  run on any stream sees the bytes). */
int tessera_model_copy_to_device(tessera_model *model, uint64_t dst,
                                 const void *src, size_t bytes);
int tessera_model_copy_to_host(tessera_model *model, void *dst, uint64_t src,
                               size_t bytes);

/** Runs the model on inputs in device memory (each `data` a device address,
 *  `capacity` its bytes), checked as tessera_model_run checks host inputs.
 *  The run is ordered after the work already issued on `stream` (a
 *  CUstream of the device's primary context, such as a framework's current
 *  stream; NULL: the calling thread's default stream,
 *  CU_STREAM_PER_THREAD, which waits for the legacy default stream's work
 *  but not for other streams': pass the stream your inputs were made on)
 *  and the call returns when its results
 *  are complete. For each output: with `data` set, the result is copied
 *  there (device memory of `capacity` bytes); with `data` NULL, `data`
 *  gets the address of device memory holding the result and `capacity` its
 *  size, to free with tessera_model_device_free. Returns 0 on success; 1
 *  on an error (nothing is handed over then); 2 when an output's
 *  `capacity` is too small (its shape is then filled in, and outputs the
 *  model allocated are handed over as on success). */
int tessera_model_run_device(tessera_model *model, const tessera_tensor *inputs,
                             int32_t num_inputs, tessera_tensor *outputs,
                             int32_t num_outputs, void *stream);

/** The device's own measure of the model's last run, in milliseconds: a
 *  GPU's time between CUDA events recorded on the run's stream before its
 *  first kernel and after its last, without the copies of host inputs and
 *  outputs (a first run includes uploading the weights); -1 when nothing
 *  measured it (a CPU, the PTX emulator). With runs on several threads at
 *  once, the run that finished last, whose interval includes the other
 *  runs' kernels that ran meanwhile. */
double tessera_model_last_device_ms(const tessera_model *model);

/** Bytes per element of `dtype` (0 for a value that is no dtype). */
size_t tessera_dtype_size(tessera_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_RUNTIME_H */
