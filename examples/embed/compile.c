/* compile.c - compiles an ONNX model in process from C and runs it.        */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * Usage: tessera-embed-compile-c model.onnx [options...]
 *   --no-fusion         one kernel per op
 *   --target=NAME       the target (default cpu)
 *   --report=FILE       write the fusion report (JSON) to FILE
 *   --save=FILE         also write the artifact to FILE
 *   NAME=VALUE          one of the target's options (threads=2, O=2)
 * Reads the model into memory, compiles it with tessera_compile_buffer,
 * prints each diagnostic with the ONNX node and op type it concerns, opens
 * the artifact from memory, runs it on float inputs filled with 0, 1, 2, ...
 * (every input must have static dims here) and prints the first elements
 * of each output, read in place from the model's own buffers.
 */
#include "tessera-c/Compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *severityNames[] = {"error", "warning", "note", "remark"};

/* The whole file, or NULL. */
static void *readFile(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  void *data = length > 0 ? malloc((size_t)length) : NULL;
  if (data && fread(data, 1, (size_t)length, file) != (size_t)length) {
    free(data);
    data = NULL;
  }
  fclose(file);
  *size = data ? (size_t)length : 0;
  return data;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.onnx [options...]\n", argv[0]);
    return 2;
  }
  tessera_compile_options *options = tessera_compile_options_create();
  const char *report = NULL, *save = NULL;
  for (int i = 2; i < argc; ++i) {
    char *equals = strchr(argv[i], '=');
    if (!strcmp(argv[i], "--no-fusion"))
      tessera_compile_options_set_fusion(options, 0);
    else if (!strncmp(argv[i], "--target=", 9))
      tessera_compile_options_set_target(options, argv[i] + 9);
    else if (!strncmp(argv[i], "--report=", 9))
      report = argv[i] + 9;
    else if (!strncmp(argv[i], "--save=", 7))
      save = argv[i] + 7;
    else if (equals && argv[i][0] != '-') {
      *equals = '\0';
      tessera_compile_options_set_target_option(options, argv[i], equals + 1);
    } else {
      fprintf(stderr, "error: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }

  size_t size;
  void *bytes = readFile(argv[1], &size);
  if (!bytes) {
    fprintf(stderr, "error: cannot read '%s'\n", argv[1]);
    return 1;
  }
  tessera_compile_result *result =
      tessera_compile_buffer(bytes, size, argv[1], options);
  free(bytes); /* the result keeps what it needs */
  tessera_compile_options_free(options);

  for (int32_t i = 0; i < tessera_compile_result_num_diagnostics(result); ++i) {
    tessera_diagnostic d;
    tessera_compile_result_diagnostic(result, i, &d);
    printf("diagnostic: %s node='%s' op_type='%s': %s\n",
           severityNames[d.severity], d.node, d.op_type, d.message);
  }
  if (!tessera_compile_result_ok(result)) {
    tessera_compile_result_free(result);
    return 1;
  }
  size_t artifactSize;
  tessera_compile_result_artifact(result, &artifactSize);
  printf("artifact: %s (%s), %s\n", tessera_compile_result_artifact_kind(result),
         tessera_compile_result_artifact_extension(result),
         artifactSize > 0 ? "not empty" : "empty");
  if (report) {
    FILE *out = fopen(report, "w");
    if (!out) {
      fprintf(stderr, "error: cannot write '%s'\n", report);
      return 1;
    }
    fputs(tessera_compile_result_fusion_report(result), out);
    fclose(out);
  }
  if (save && tessera_compile_result_write(result, save)) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }

  tessera_model *model = tessera_compile_result_load(result, NULL, NULL, 0);
  tessera_compile_result_free(result); /* the model does not need it */
  if (!model) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  printf("device: %s\n", tessera_model_device(model));
  int32_t numInputs = tessera_model_num_inputs(model);
  int32_t numOutputs = tessera_model_num_outputs(model);
  if (numInputs > 8 || numOutputs > 8) {
    fprintf(stderr, "error: this example handles up to 8 inputs and outputs\n");
    return 1;
  }
  tessera_tensor inputs[8], outputs[8];
  tessera_buffer *buffers[8];
  memset(inputs, 0, sizeof inputs);
  for (int32_t i = 0; i < numInputs; ++i) {
    tessera_tensor *t = &inputs[i];
    t->dtype = tessera_model_dtype(model, 0, i);
    t->rank = tessera_model_rank(model, 0, i);
    size_t count = 1;
    for (int32_t d = 0; d < t->rank; ++d) {
      t->shape[d] = tessera_model_dim(model, 0, i, d);
      if (t->shape[d] < 0) {
        fprintf(stderr, "error: input %d has a dynamic dim\n", i);
        return 1;
      }
      count *= (size_t)t->shape[d];
    }
    if (t->dtype != TESSERA_F32) {
      fprintf(stderr, "error: input %d is not f32\n", i);
      return 1;
    }
    t->capacity = count * sizeof(float);
    t->data = malloc(t->capacity ? t->capacity : 1);
    for (size_t k = 0; k < count; ++k)
      ((float *)t->data)[k] = (float)k;
  }
  /* The outputs stay in the buffers the model allocated: no copy. */
  if (tessera_model_run_nocopy(model, inputs, numInputs, outputs, buffers,
                               numOutputs)) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  tessera_model_free(model); /* the buffers keep what they need */
  for (int32_t i = 0; i < numOutputs; ++i) {
    printf("output %d: [", i);
    for (int32_t d = 0; d < outputs[i].rank; ++d)
      printf(d ? ", %lld" : "%lld", (long long)outputs[i].shape[d]);
    printf("]");
    size_t count = outputs[i].capacity / tessera_dtype_size(outputs[i].dtype);
    for (size_t k = 0; k < count && k < 6 && outputs[i].dtype == TESSERA_F32;
         ++k)
      printf(" %g", ((const float *)outputs[i].data)[k]);
    printf("\n");
    tessera_buffer_free(buffers[i]);
  }
  for (int32_t i = 0; i < numInputs; ++i)
    free(inputs[i].data);
  return 0;
}
