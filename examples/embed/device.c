/* device.c - runs a GPU model on tensors in device memory (C API).        */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Usage: tessera-embed-device model.so [stream=N] [name=value ...]
 * Opens a model compiled with `tessera-compile --target=cuda` (with
 * gpu-driver=emulator it runs on Tessera's PTX emulator, without a GPU),
 * with the loader options given; stream=N runs it on the CUstream whose
 * handle is N (a test's, not a real handle; the default is none).
 * Every input needs static dims and is f32, i32 or i64.
 *
 * Two sets of inputs, A and B, go into device memory. The model runs on A
 * with its outputs left in device memory it allocates, and on B with its
 * outputs copied into device buffers the caller allocated (filled with
 * NaNs first); then on A and on B from host memory (tessera_model_run).
 * Each device result must equal its host result bit for bit, and A's
 * results must differ from B's (so a stale buffer cannot pass for a
 * result). Last, an output buffer too small is answered with status 2.
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

/* Input values of set `which` (0: A, 1: B). */
static void fill(tessera_tensor *t, int which) {
  size_t count = t->capacity / tessera_dtype_size(t->dtype);
  for (size_t k = 0; k < count; ++k) {
    long long v = which ? (long long)((k * 3 + 1) % 5) : (long long)(k % 7);
    if (t->dtype == TESSERA_F32)
      ((float *)t->data)[k] = which ? (float)v * 0.5f - 1.0f : (float)v * 0.25f;
    else if (t->dtype == TESSERA_I64)
      ((long long *)t->data)[k] = v;
    else if (t->dtype == TESSERA_I32)
      ((int *)t->data)[k] = (int)v;
  }
}

/* The outputs' bytes, copied from device addresses to the host. */
static unsigned char *toHost(tessera_model *model, const tessera_tensor *t) {
  size_t bytes = byteSize(t);
  unsigned char *host = malloc(bytes ? bytes : 1);
  if (tessera_model_copy_to_host(model, host, (uint64_t)(uintptr_t)t->data,
                                 bytes)) {
    free(host);
    return NULL;
  }
  return host;
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
  /* host[s][i]: input i of set s in host memory; device[s][i] on the
   * device. out[s]: the outputs of set s run from host memory. Every
   * failure below frees what was allocated (goto done). */
  tessera_tensor host[2][MAX_TENSORS], device[2][MAX_TENSORS];
  tessera_tensor kept[MAX_TENSORS], given[MAX_TENSORS], out[2][MAX_TENSORS];
  memset(host, 0, sizeof host);
  memset(device, 0, sizeof device);
  memset(kept, 0, sizeof kept);
  memset(given, 0, sizeof given);
  memset(out, 0, sizeof out);
  int status = 0;
  int32_t numInputs = 0, numOutputs = 0;
  tessera_model *model =
      tessera_model_load_with_options(argv[1], names, values, numOptions);
  if (!model) {
    status = fail("cannot load the model");
    goto done;
  }
  printf("device: %s\n", tessera_model_device(model));
  printf("device memory: %s\n",
         tessera_model_has_device_memory(model) ? "yes" : "no");
  numInputs = tessera_model_num_inputs(model);
  numOutputs = tessera_model_num_outputs(model);
  if (numInputs > MAX_TENSORS || numOutputs > MAX_TENSORS) {
    fprintf(stderr, "error: this example handles up to %d inputs and outputs\n",
            MAX_TENSORS);
    status = 1;
    goto done;
  }
  for (int s = 0; s < 2; ++s) {
    for (int32_t i = 0; i < numInputs; ++i) {
      tessera_tensor *t = &host[s][i];
      t->dtype = tessera_model_dtype(model, 0, i);
      t->rank = tessera_model_rank(model, 0, i);
      for (int32_t d = 0; d < t->rank; ++d) {
        t->shape[d] = tessera_model_dim(model, 0, i, d);
        if (t->shape[d] < 0) {
          fprintf(stderr, "error: input %d has a dynamic dim\n", i);
          status = 1;
          goto done;
        }
      }
      t->capacity = byteSize(t);
      t->data = calloc(1, t->capacity ? t->capacity : 1);
      fill(t, s);
      device[s][i] = *t;
      uint64_t address = 0;
      if (tessera_model_device_alloc(model, t->capacity, &address)) {
        status = fail("cannot allocate device memory");
        goto done;
      }
      if (tessera_model_copy_to_device(model, address, t->data, t->capacity)) {
        status = fail("cannot copy an input to the device");
        goto done;
      }
      device[s][i].data = (void *)(uintptr_t)address;
    }
  }

  /* 1. A, its outputs left in device memory the model allocated. */
  if (tessera_model_run_device(model, device[0], numInputs, kept, numOutputs,
                               stream)) {
    status = fail("the run on device tensors failed");
    goto done;
  }
  double ms = tessera_model_last_device_ms(model);
  if (ms < 0)
    printf("device time: not measured\n");
  else
    printf("device time: %.3f ms\n", ms);

  /* 2. B, its outputs copied into device buffers the caller allocated and
   *    filled with NaNs. */
  for (int32_t i = 0; i < numOutputs; ++i) {
    uint64_t address = 0;
    size_t bytes = kept[i].capacity;
    unsigned char *nans = malloc(bytes ? bytes : 1);
    memset(nans, 0xff, bytes);
    if (tessera_model_device_alloc(model, bytes, &address) ||
        tessera_model_copy_to_device(model, address, nans, bytes)) {
      status = fail("cannot prepare an output buffer");
      goto done;
    }
    free(nans);
    given[i].data = (void *)(uintptr_t)address;
    given[i].capacity = bytes;
  }
  if (tessera_model_run_device(model, device[1], numInputs, given, numOutputs,
                               stream)) {
    status = fail("the run into caller buffers failed");
    goto done;
  }

  /* 3. A and B from host memory, for comparison. */
  for (int s = 0; s < 2; ++s) {
    for (int32_t i = 0; i < numOutputs; ++i) {
      out[s][i].capacity = kept[i].capacity;
      out[s][i].data = malloc(out[s][i].capacity ? out[s][i].capacity : 1);
    }
    if (tessera_model_run(model, host[s], numInputs, out[s], numOutputs)) {
      status = fail("the run on host tensors failed");
      goto done;
    }
  }

  int same = 1, differ = 0;
  for (int32_t i = 0; i < numOutputs; ++i) {
    size_t bytes = kept[i].capacity;
    unsigned char *a = toHost(model, &kept[i]);
    given[i].dtype = kept[i].dtype;
    given[i].rank = kept[i].rank;
    memcpy(given[i].shape, kept[i].shape, sizeof kept[i].shape);
    unsigned char *b = toHost(model, &given[i]);
    if (!a || !b) {
      free(a);
      free(b);
      status = fail("cannot copy an output to the host");
      goto done;
    }
    printf("output %s: [", tessera_model_name(model, 1, i));
    for (int32_t d = 0; d < kept[i].rank; ++d)
      printf(d ? ", %lld" : "%lld", (long long)kept[i].shape[d]);
    printf("]");
    for (size_t k = 0; k * 4 < bytes && k < 4 && kept[i].dtype == TESSERA_F32;
         ++k)
      printf(" %.5g", ((float *)a)[k]);
    printf("\n");
    same &= memcmp(a, out[0][i].data, bytes) == 0 &&
            memcmp(b, out[1][i].data, bytes) == 0;
    differ |= memcmp(out[0][i].data, out[1][i].data, bytes) != 0;
    free(a);
    free(b);
  }
  printf("device and host outputs %s; inputs A and B give %s outputs\n",
         same ? "agree" : "DIFFER", differ ? "different" : "THE SAME");

  /* 4. A buffer too small: status 2, the shape is filled in. */
  if (numOutputs > 0) {
    tessera_tensor small[MAX_TENSORS];
    memcpy(small, given, sizeof small);
    small[0].capacity = 1;
    int answer = tessera_model_run_device(model, device[0], numInputs, small,
                                          numOutputs, stream);
    printf("too small: status %d, rank %d: %s\n", answer, small[0].rank,
           tessera_last_error());
    /* Outputs the model allocated are handed over with status 2 too. */
    for (int32_t i = 1; i < numOutputs; ++i)
      if (small[i].data != given[i].data)
        tessera_model_device_free(model, (uint64_t)(uintptr_t)small[i].data);
  }

done:
  /* Device memory goes with the model; host memory here (all NULL where
   * nothing was allocated). */
  for (int32_t i = 0; model && i < MAX_TENSORS; ++i) {
    tessera_model_device_free(model, (uint64_t)(uintptr_t)kept[i].data);
    tessera_model_device_free(model, (uint64_t)(uintptr_t)given[i].data);
    for (int s = 0; s < 2; ++s)
      tessera_model_device_free(model, (uint64_t)(uintptr_t)device[s][i].data);
  }
  for (int s = 0; s < 2; ++s)
    for (int32_t i = 0; i < MAX_TENSORS; ++i) {
      free(host[s][i].data);
      free(out[s][i].data);
    }
  tessera_model_free(model);
  fflush(stdout);
  return status;
}
