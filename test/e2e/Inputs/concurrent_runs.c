/* concurrent_runs.c - runs one model from several threads at once through
 * the C API and checks every run's outputs against the same inputs run
 * one at a time first, bit for bit.
 *
 * usage: concurrent_runs MODEL THREADS RUNS [name=value ...]
 *
 * Inputs are f32 (symbolic dims take 2), different for every run; each
 * thread makes RUNS runs of host tensors, alternating with runs on device
 * tensors where the model has device memory. The threads run first (their
 * first runs upload the weights while others run), then each case alone.
 * Prints whether the runtime runs them in parallel and how many agreed. */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
#include "tessera-c/Runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IO 8

typedef struct {
  tessera_tensor inputs[MAX_IO];
  int32_t numInputs;
  /* The outputs of the run made alone. */
  tessera_tensor expected[MAX_IO];
  int32_t numOutputs;
  /* The outputs of the run on a thread (got: their count, -1 failed). */
  tessera_tensor outputs[MAX_IO];
  int32_t got;
} Case;

static tessera_model *model;
static Case *cases;
static int threads, runs, device;

static void makeInputs(Case *c, unsigned seed) {
  c->numInputs = tessera_model_num_inputs(model);
  for (int32_t i = 0; i < c->numInputs; ++i) {
    tessera_tensor *t = &c->inputs[i];
    t->dtype = TESSERA_F32;
    t->rank = tessera_model_rank(model, 0, i);
    size_t count = 1;
    for (int32_t d = 0; d < t->rank; ++d) {
      int64_t dim = tessera_model_dim(model, 0, i, d);
      t->shape[d] = dim < 0 ? 2 : dim;
      count *= (size_t)t->shape[d];
    }
    float *data = malloc(count * sizeof(float) + 1);
    for (size_t e = 0; e < count; ++e) {
      seed = seed * 1103515245u + 12345u;
      data[e] = (float)((seed >> 16) % 17) / 8.0f - 1.0f;
    }
    t->data = data;
    t->capacity = count * sizeof(float);
  }
}

/* Runs case `c` with host tensors; copies of the outputs into `out`. */
static int runHost(const Case *c, tessera_tensor *out, int32_t *numOutputs) {
  tessera_buffer *buffers[MAX_IO] = {0};
  *numOutputs = tessera_model_num_outputs(model);
  if (tessera_model_run_nocopy(model, c->inputs, c->numInputs, out, buffers,
                               *numOutputs))
    return 1;
  for (int32_t i = 0; i < *numOutputs; ++i) {
    void *copy = malloc(out[i].capacity + 1);
    memcpy(copy, out[i].data, out[i].capacity);
    out[i].data = copy;
    tessera_buffer_free(buffers[i]);
  }
  return 0;
}

/* Runs case `c` on device tensors: inputs copied in, outputs left in the
 * model's device memory and copied back. */
static int runDevice(const Case *c, tessera_tensor *out, int32_t *numOutputs) {
  tessera_tensor in[MAX_IO];
  uint64_t addresses[MAX_IO] = {0};
  int status = 0;
  for (int32_t i = 0; i < c->numInputs && !status; ++i) {
    in[i] = c->inputs[i];
    status = tessera_model_device_alloc(model, in[i].capacity, &addresses[i]) ||
             tessera_model_copy_to_device(model, addresses[i], in[i].data,
                                          in[i].capacity);
    in[i].data = (void *)(uintptr_t)addresses[i];
  }
  *numOutputs = tessera_model_num_outputs(model);
  tessera_tensor dev[MAX_IO];
  memset(dev, 0, sizeof dev);
  if (!status)
    status = tessera_model_run_device(model, in, c->numInputs, dev,
                                      *numOutputs, 0);
  for (int32_t i = 0; i < *numOutputs && !status; ++i) {
    out[i] = dev[i];
    out[i].data = malloc(dev[i].capacity + 1);
    status = tessera_model_copy_to_host(
        model, out[i].data, (uint64_t)(uintptr_t)dev[i].data, dev[i].capacity);
    tessera_model_device_free(model, (uint64_t)(uintptr_t)dev[i].data);
  }
  for (int32_t i = 0; i < c->numInputs; ++i)
    if (addresses[i])
      tessera_model_device_free(model, addresses[i]);
  return status;
}

static int same(const tessera_tensor *a, const tessera_tensor *b, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    if (a[i].capacity != b[i].capacity ||
        memcmp(a[i].data, b[i].data, a[i].capacity))
      return 0;
  return 1;
}

static void *worker(void *arg) {
  long id = (long)arg;
  for (int r = 0; r < runs; ++r) {
    Case *c = &cases[id * runs + r];
    int onDevice = device && r % 2;
    int status = onDevice ? runDevice(c, c->outputs, &c->got)
                          : runHost(c, c->outputs, &c->got);
    if (status) {
      fprintf(stderr, "thread %ld run %d failed: %s\n", id, r,
              tessera_last_error());
      c->got = -1;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL THREADS RUNS [name=value ...]\n", argv[0]);
    return 2;
  }
  threads = atoi(argv[2]);
  runs = atoi(argv[3]);
  const char *names[16], *values[16];
  int count = 0;
  for (int i = 4; i < argc && count < 16; ++i) {
    char *eq = strchr(argv[i], '=');
    if (!eq)
      continue;
    *eq = 0;
    names[count] = argv[i];
    values[count++] = eq + 1;
  }
  model = tessera_model_load_with_options(argv[1], names, values, count);
  if (!model) {
    fprintf(stderr, "load failed: %s\n", tessera_last_error());
    return 1;
  }
  device = tessera_model_has_device_memory(model);
  printf("concurrent runs: %d\n", tessera_model_concurrent_runs(model));
  cases = calloc((size_t)threads * runs, sizeof(Case));
  for (int i = 0; i < threads * runs; ++i)
    makeInputs(&cases[i], 7u + 31u * (unsigned)i);
  /* The threads run first, so that their first runs upload the weights
   * while other threads run; the runs alone come after. */
  pthread_t ids[64];
  for (long t = 0; t < threads && t < 64; ++t)
    pthread_create(&ids[t], NULL, worker, (void *)t);
  for (long t = 0; t < threads && t < 64; ++t)
    pthread_join(ids[t], NULL);
  long agreed = 0;
  for (int i = 0; i < threads * runs; ++i) {
    if (runHost(&cases[i], cases[i].expected, &cases[i].numOutputs)) {
      fprintf(stderr, "run alone failed: %s\n", tessera_last_error());
      return 1;
    }
    if (cases[i].numOutputs == cases[i].got &&
        same(cases[i].outputs, cases[i].expected, cases[i].numOutputs))
      ++agreed;
    else
      fprintf(stderr, "run %d on a thread differs from the run alone\n", i);
  }
  printf("%ld of %d runs on %d threads agree with the runs alone\n", agreed,
         threads * runs, threads);
  tessera_model_free(model);
  return agreed == (long)threads * runs ? 0 : 1;
}
