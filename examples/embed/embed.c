/* embed.c - runs a Tessera artifact from C through the runtime's C API.    */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Usage: tessera-embed-c model.so|model.tsp [name=value ...]
 * Opens any artifact kind the runtime knows (a CPU library, a systolic
 * program) with the loader options given (accel=small for a program),
 * prints where it runs, the model's inputs and outputs, runs it on inputs filled with
 * 0, 1, 2, ... (every input must have static dims here) and prints the
 * first elements of each float output.
 */
#include "tessera-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 10) {
    fprintf(stderr, "usage: %s model.so|model.tsp [name=value ...]\n",
            argv[0]);
    return 2;
  }
  /* Loader options: name=value pairs split in place. */
  const char *names[8], *values[8];
  int32_t numOptions = 0;
  for (int i = 2; i < argc; ++i) {
    char *equals = strchr(argv[i], '=');
    if (!equals) {
      fprintf(stderr, "error: expected name=value, got '%s'\n", argv[i]);
      return 2;
    }
    *equals = '\0';
    names[numOptions] = argv[i];
    values[numOptions++] = equals + 1;
  }
  tessera_model *model =
      tessera_model_load_with_options(argv[1], names, values, numOptions);
  if (!model) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  printf("device: %s\n", tessera_model_device(model));
  int32_t numInputs = tessera_model_num_inputs(model);
  int32_t numOutputs = tessera_model_num_outputs(model);
  tessera_tensor inputs[8] = {0}, outputs[8] = {0};
  if (numInputs > 8 || numOutputs > 8) {
    fprintf(stderr, "error: this example handles up to 8 inputs and outputs\n");
    return 1;
  }
  for (int32_t i = 0; i < numInputs; ++i) {
    tessera_tensor *t = &inputs[i];
    t->dtype = tessera_model_dtype(model, 0, i);
    t->rank = tessera_model_rank(model, 0, i);
    size_t count = 1;
    printf("input %s: rank %d [", tessera_model_name(model, 0, i), t->rank);
    for (int32_t d = 0; d < t->rank; ++d) {
      t->shape[d] = tessera_model_dim(model, 0, i, d);
      if (t->shape[d] < 0) {
        fprintf(stderr, "error: input %d has a dynamic dim\n", i);
        return 1;
      }
      count *= (size_t)t->shape[d];
      printf(d ? ", %lld" : "%lld", (long long)t->shape[d]);
    }
    printf("]\n");
    t->capacity = count * tessera_dtype_size(t->dtype);
    t->data = malloc(t->capacity);
    for (size_t k = 0; k < count && t->dtype == TESSERA_F32; ++k)
      ((float *)t->data)[k] = (float)k;
  }
  /* Output buffers start empty: the runtime reports the sizes it needs. */
  int status = tessera_model_run(model, inputs, numInputs, outputs, numOutputs);
  if (status == 2) {
    for (int32_t i = 0; i < numOutputs; ++i) {
      size_t bytes = tessera_dtype_size(outputs[i].dtype);
      for (int32_t d = 0; d < outputs[i].rank; ++d)
        bytes *= (size_t)outputs[i].shape[d];
      outputs[i].data = malloc(bytes);
      outputs[i].capacity = bytes;
    }
    status = tessera_model_run(model, inputs, numInputs, outputs, numOutputs);
  }
  if (status != 0) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  for (int32_t i = 0; i < numOutputs; ++i) {
    printf("output %s:", tessera_model_name(model, 1, i));
    size_t count = outputs[i].capacity / tessera_dtype_size(outputs[i].dtype);
    for (size_t k = 0; k < count && k < 6 && outputs[i].dtype == TESSERA_F32;
         ++k)
      printf(" %g", ((float *)outputs[i].data)[k]);
    printf("\n");
    free(outputs[i].data);
  }
  for (int32_t i = 0; i < numInputs; ++i)
    free(inputs[i].data);
  tessera_model_free(model);
  return 0;
}
