/* device.c - runs a GPU model on tensors in device memory (C API).        */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Usage: tessera-embed-device model.so [stream=N] [name=value ...]
 * Opens a model compiled with `tessera-compile --target=cuda` (with
 * gpu-driver=emulator it runs on Tessera's PTX emulator, without a GPU),
 * with the loader options given; stream=N runs it on the CUstream whose
 * handle is N (a test's, not a real handle; the default is none),
 * puts inputs filled with 0, 1, 2, ... (static dims; f32 or integers) in
 * device memory, and runs the model three ways: outputs left in device
 * memory the model allocated, outputs copied into device buffers the
 * caller allocated, and outputs copied to the host (tessera_model_run).
 * Prints the first elements of each output and whether the three agree
 * bit for bit, then shows the answer to an output buffer too small.
 */
#include "tessera-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TENSORS 8

static int fail(const char *what) {
  fprintf(stderr, "error: %s: %s\n", what, tessera_last_error());
  return 1;
}

static size_t byteSize(const tessera_tensor *t) {
  size_t bytes = tessera_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    bytes *= (size_t)t->shape[d];
  return bytes;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 2 + MAX_TENSORS) {
    fprintf(stderr, "usage: %s model.so [stream=N] [name=value ...]\n",
            argv[0]);
    return 2;
  }
  const char *names[MAX_TENSORS], *values[MAX_TENSORS];
  int32_t numOptions = 0;
  void *stream = NULL;
  for (int i = 2; i < argc; ++i) {
    char *equals = strchr(argv[i], '=');
    if (!equals) {
      fprintf(stderr, "error: expected name=value, got '%s'\n", argv[i]);
      return 2;
    }
    *equals = '\0';
    if (strcmp(argv[i], "stream") == 0) {
      stream = (void *)(uintptr_t)strtoull(equals + 1, NULL, 0);
      continue;
    }
    names[numOptions] = argv[i];
    values[numOptions++] = equals + 1;
  }
  tessera_model *model =
      tessera_model_load_with_options(argv[1], names, values, numOptions);
  if (!model)
    return fail("cannot load the model");
  printf("device: %s\n", tessera_model_device(model));
  printf("device memory: %s\n",
         tessera_model_has_device_memory(model) ? "yes" : "no");
  int32_t numInputs = tessera_model_num_inputs(model);
  int32_t numOutputs = tessera_model_num_outputs(model);
  if (numInputs > MAX_TENSORS || numOutputs > MAX_TENSORS) {
    fprintf(stderr,
            "error: this example handles up to %d inputs and "
            "outputs\n",
            MAX_TENSORS);
    return 1;
  }
  tessera_tensor host[MAX_TENSORS], device[MAX_TENSORS];
  memset(host, 0, sizeof host);
  memset(device, 0, sizeof device);
  for (int32_t i = 0; i < numInputs; ++i) {
    tessera_tensor *t = &host[i];
    t->dtype = tessera_model_dtype(model, 0, i);
    t->rank = tessera_model_rank(model, 0, i);
    for (int32_t d = 0; d < t->rank; ++d) {
      t->shape[d] = tessera_model_dim(model, 0, i, d);
      if (t->shape[d] < 0) {
        fprintf(stderr, "error: input %d has a dynamic dim\n", i);
        return 1;
      }
    }
    t->capacity = byteSize(t);
    t->data = calloc(1, t->capacity ? t->capacity : 1);
    size_t count = t->capacity / tessera_dtype_size(t->dtype);
    for (size_t k = 0; k < count; ++k) {
      if (t->dtype == TESSERA_F32)
        ((float *)t->data)[k] = (float)(k % 7) * 0.25f;
      else if (t->dtype == TESSERA_I64)
        ((long long *)t->data)[k] = (long long)(k % 7);
      else if (t->dtype == TESSERA_I32)
        ((int *)t->data)[k] = (int)(k % 7);
    }
    /* The same tensor in device memory. */
    device[i] = *t;
    uint64_t address = 0;
    if (tessera_model_device_alloc(model, t->capacity, &address))
      return fail("cannot allocate device memory");
    if (tessera_model_copy_to_device(model, address, t->data, t->capacity))
      return fail("cannot copy an input to the device");
    device[i].data = (void *)(uintptr_t)address;
  }

  /* 1. Outputs left in device memory the model allocated. */
  tessera_tensor kept[MAX_TENSORS];
  memset(kept, 0, sizeof kept);
  if (tessera_model_run_device(model, device, numInputs, kept, numOutputs,
                               stream))
    return fail("the run on device tensors failed");
  double ms = tessera_model_last_device_ms(model);
  if (ms < 0)
    printf("device time: not measured\n");
  else
    printf("device time: %.3f ms\n", ms);

  /* 2. Outputs copied into device buffers the caller allocated. */
  tessera_tensor given[MAX_TENSORS];
  memset(given, 0, sizeof given);
  for (int32_t i = 0; i < numOutputs; ++i) {
    uint64_t address = 0;
    if (tessera_model_device_alloc(model, kept[i].capacity, &address))
      return fail("cannot allocate device memory");
    given[i].data = (void *)(uintptr_t)address;
    given[i].capacity = kept[i].capacity;
  }
  if (tessera_model_run_device(model, device, numInputs, given, numOutputs,
                               stream))
    return fail("the run into caller buffers failed");

  /* 3. On host tensors, for comparison. */
  tessera_tensor out[MAX_TENSORS];
  memset(out, 0, sizeof out);
  for (int32_t i = 0; i < numOutputs; ++i) {
    out[i].capacity = kept[i].capacity;
    out[i].data = malloc(out[i].capacity ? out[i].capacity : 1);
  }
  if (tessera_model_run(model, host, numInputs, out, numOutputs))
    return fail("the run on host tensors failed");

  int same = 1;
  for (int32_t i = 0; i < numOutputs; ++i) {
    size_t bytes = kept[i].capacity;
    unsigned char *a = malloc(bytes ? bytes : 1),
                  *b = malloc(bytes ? bytes : 1);
    if (tessera_model_copy_to_host(model, a, (uint64_t)(uintptr_t)kept[i].data,
                                   bytes) ||
        tessera_model_copy_to_host(model, b, (uint64_t)(uintptr_t)given[i].data,
                                   bytes))
      return fail("cannot copy an output to the host");
    printf("output %s: [", tessera_model_name(model, 1, i));
    for (int32_t d = 0; d < kept[i].rank; ++d)
      printf(d ? ", %lld" : "%lld", (long long)kept[i].shape[d]);
    printf("]");
    for (size_t k = 0; k * 4 < bytes && k < 4 && kept[i].dtype == TESSERA_F32;
         ++k)
      printf(" %.5g", ((float *)a)[k]);
    printf("\n");
    same &= memcmp(a, b, bytes) == 0 && memcmp(a, out[i].data, bytes) == 0;
    free(a);
    free(b);
  }
  printf("device-allocated, caller-allocated and host outputs %s\n",
         same ? "agree" : "DIFFER");

  /* 4. A buffer too small: status 2, the shape is filled in. */
  if (numOutputs > 0) {
    tessera_tensor small[MAX_TENSORS];
    memcpy(small, given, sizeof small);
    small[0].capacity = 1;
    int status = tessera_model_run_device(model, device, numInputs, small,
                                          numOutputs, stream);
    printf("too small: status %d, rank %d: %s\n", status, small[0].rank,
           tessera_last_error());
  }

  for (int32_t i = 0; i < numOutputs; ++i) {
    tessera_model_device_free(model, (uint64_t)(uintptr_t)kept[i].data);
    tessera_model_device_free(model, (uint64_t)(uintptr_t)given[i].data);
    free(out[i].data);
  }
  for (int32_t i = 0; i < numInputs; ++i) {
    tessera_model_device_free(model, (uint64_t)(uintptr_t)device[i].data);
    free(host[i].data);
  }
  tessera_model_free(model);
  return 0;
}
