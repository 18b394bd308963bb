/*===- gpu-run.c - runs an artifact on .npy test data, checks and times it -===*/
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/*
 * A run-only program for machines without MLIR, LLVM or protobuf (the GPU
 * check's machine): it links libtessera_runtime.so and the C library only.
 *
 *   tessera-gpu-run MODEL.so [NAME=VALUE ...] [--test-dir=DIR]
 *       [--max-error-ratio=R] [--random] [--warmup=N] [--iters=N]
 *       [--budget=SECONDS] [--json=FILE]
 *
 * NAME=VALUE pairs are loader options (gpu-driver=cuda|emulator, device=0).
 * --test-dir=DIR runs every DIR/test_data_set_*: input_K.npy are the inputs
 * in the model's input order, output_K.npy the expected outputs; each
 * output passes when max |actual - expected| / max |expected| <= R
 * (default 1e-4) and it holds no NaN the expected output lacks.
 * --random runs on inputs of the model's static shapes filled with
 * pseudo-random values in [-1, 1) (integers: 0), nothing compared.
 * --iters=N times N runs (after --warmup=N untimed runs, default 1) of the
 * first test set or the random inputs, stopping early once --budget
 * seconds (default 60) of timed runs have passed; each time is one
 * tessera_model_run call: host inputs copied in, kernels, outputs copied
 * back. --json=FILE writes the verdicts and times as one JSON object.
 * Exit status: 0 when every output passed, 1 on a mismatch or an error,
 * 2 on wrong usage.
 */
#include "tessera-c/Runtime.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_IO 16
#define MAX_SETS 64
#define MAX_OPTIONS 8

/* The loaded model, freed before every exit: a process that exits with a
 * CUDA artifact still loaded can abort in the artifact's destructors. */
static tessera_model *loaded;

static void die(const char *what) {
  fprintf(stderr, "error: %s\n", what);
  if (loaded)
    tessera_model_free(loaded);
  exit(1);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- .npy files (format 1.0-3.0, little-endian, C order) -------------- */

typedef struct npy {
  tessera_dtype dtype;
  int32_t rank;
  int64_t shape[TESSERA_MAX_RANK];
  void *data;
  size_t bytes;
} npy;

static int dtypeFromDescr(const char *d, tessera_dtype *out) {
  static const struct {
    const char *descr;
    tessera_dtype dtype;
  } table[] = {{"<f4", TESSERA_F32}, {"<f2", TESSERA_F16},
               {"|i1", TESSERA_I8},  {"<i4", TESSERA_I32},
               {"<i8", TESSERA_I64}, {"|b1", TESSERA_BOOL},
               {"|u1", TESSERA_BOOL}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (!strcmp(d, table[i].descr)) {
      *out = table[i].dtype;
      return 1;
    }
  return 0;
}

/* Reads PATH into *t; returns 0, or 1 with a message in `err`. */
static int readNpy(const char *path, npy *t, char *err, size_t errSize) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errSize, "cannot open '%s'", path);
    return 1;
  }
  unsigned char magic[10];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6)) {
    snprintf(err, errSize, "'%s' is not a .npy file", path);
    fclose(f);
    return 1;
  }
  size_t headerLen;
  if (magic[6] == 1) {
    if (fread(magic + 8, 1, 2, f) != 2)
      goto truncated;
    headerLen = magic[8] | (magic[9] << 8);
  } else {
    unsigned char l[4];
    if (fread(l, 1, 4, f) != 4)
      goto truncated;
    headerLen = l[0] | (l[1] << 8) | ((size_t)l[2] << 16) |
                ((size_t)l[3] << 24);
  }
  char *header = calloc(headerLen + 1, 1);
  if (fread(header, 1, headerLen, f) != headerLen) {
    free(header);
    goto truncated;
  }
  /* {'descr': '<f4', 'fortran_order': False, 'shape': (2, 16, 64), } */
  char descr[8] = {0};
  const char *p = strstr(header, "'descr':");
  const char *q = p ? strchr(p + 8, '\'') : NULL;
  if (q)
    sscanf(q + 1, "%7[^']", descr);
  if (!dtypeFromDescr(descr, &t->dtype)) {
    snprintf(err, errSize, "'%s': element type '%s' is not supported", path,
             descr);
    free(header);
    fclose(f);
    return 1;
  }
  if (strstr(header, "'fortran_order': True")) {
    snprintf(err, errSize, "'%s' is in Fortran order", path);
    free(header);
    fclose(f);
    return 1;
  }
  p = strstr(header, "'shape':");
  p = p ? strchr(p, '(') : NULL;
  t->rank = 0;
  size_t count = 1;
  for (++p; p && *p && *p != ')';) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    if (t->rank == TESSERA_MAX_RANK) {
      snprintf(err, errSize, "'%s': rank over %d", path, TESSERA_MAX_RANK);
      free(header);
      fclose(f);
      return 1;
    }
    t->shape[t->rank++] = d;
    count *= (size_t)d;
    p = end;
  }
  free(header);
  t->bytes = count * tessera_dtype_size(t->dtype);
  t->data = malloc(t->bytes ? t->bytes : 1);
  if (fread(t->data, 1, t->bytes, f) != t->bytes) {
    free(t->data);
    goto truncated;
  }
  fclose(f);
  return 0;
truncated:
  snprintf(err, errSize, "'%s' is truncated", path);
  fclose(f);
  return 1;
}

/* ---- comparison ------------------------------------------------------- */

static uint32_t f16ToF32Bits(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           man = h & 0x3ff;
  if (exp == 0x1f)
    return sign | 0x7f800000 | (man << 13);
  if (exp == 0) {
    if (!man)
      return sign;
    exp = 113;
    while (!(man & 0x400)) {
      man <<= 1;
      --exp;
    }
    return sign | (exp << 23) | ((man & 0x3ff) << 13);
  }
  return sign | ((exp + 112) << 23) | (man << 13);
}

static double element(const void *data, tessera_dtype dtype, size_t i) {
  union {
    uint32_t u;
    float f;
  } bits;
  switch (dtype) {
  case TESSERA_F32:
    return ((const float *)data)[i];
  case TESSERA_F16:
    bits.u = f16ToF32Bits(((const uint16_t *)data)[i]);
    return bits.f;
  case TESSERA_BF16:
    bits.u = (uint32_t)((const uint16_t *)data)[i] << 16;
    return bits.f;
  case TESSERA_I8:
    return ((const int8_t *)data)[i];
  case TESSERA_I32:
    return ((const int32_t *)data)[i];
  case TESSERA_I64:
    return (double)((const int64_t *)data)[i];
  case TESSERA_BOOL:
    return ((const uint8_t *)data)[i] != 0;
  default:
    return NAN;
  }
}

typedef struct verdict {
  int ok, shapeOk;
  double maxAbsError, maxAbsExpected, ratio;
  size_t nans;
} verdict;

static verdict compare(const tessera_tensor *actual, const npy *expected,
                       double maxRatio) {
  verdict v = {0};
  v.shapeOk = actual->rank == expected->rank;
  size_t count = 1;
  for (int32_t d = 0; v.shapeOk && d < actual->rank; ++d) {
    v.shapeOk = actual->shape[d] == expected->shape[d];
    count *= (size_t)actual->shape[d];
  }
  if (!v.shapeOk)
    return v;
  for (size_t i = 0; i < count; ++i) {
    double a = element(actual->data, actual->dtype, i),
           e = element(expected->data, expected->dtype, i);
    if (isnan(e))
      continue;
    if (isnan(a)) {
      ++v.nans;
      continue;
    }
    if (isinf(e) || isinf(a)) {
      if (a != e)
        v.maxAbsError = INFINITY;
      continue;
    }
    double diff = fabs(a - e);
    if (diff > v.maxAbsError)
      v.maxAbsError = diff;
    if (fabs(e) > v.maxAbsExpected)
      v.maxAbsExpected = fabs(e);
  }
  v.ratio = v.maxAbsError / (v.maxAbsExpected > 1e-30 ? v.maxAbsExpected
                                                      : 1e-30);
  v.ok = v.nans == 0 && v.ratio <= maxRatio;
  return v;
}

/* ---- inputs ----------------------------------------------------------- */

static uint64_t rngState = 0x9e3779b97f4a7c15ull;
static float nextUniform(void) { /* xorshift64*, in [-1, 1) */
  rngState ^= rngState >> 12;
  rngState ^= rngState << 25;
  rngState ^= rngState >> 27;
  uint64_t r = rngState * 0x2545f4914f6cdd1dull;
  return (float)((double)(r >> 40) / (double)(1ull << 23) - 1.0);
}

static uint16_t f32ToHalfBits(float x, int bf16) {
  union {
    float f;
    uint32_t u;
  } b = {x};
  if (bf16)
    return (uint16_t)((b.u + 0x7fff + ((b.u >> 16) & 1)) >> 16);
  /* |x| < 1 here: normal or subnormal halves, rounded toward zero. */
  uint32_t sign = (b.u >> 16) & 0x8000;
  int exp = (int)((b.u >> 23) & 0xff) - 127 + 15;
  if (exp <= 0)
    return (uint16_t)sign;
  return (uint16_t)(sign | (uint32_t)exp << 10 | ((b.u >> 13) & 0x3ff));
}

static int randomInputs(tessera_model *model, tessera_tensor *inputs,
                        int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    tessera_tensor *t = &inputs[i];
    t->dtype = tessera_model_dtype(model, 0, i);
    t->rank = tessera_model_rank(model, 0, i);
    size_t count = 1;
    for (int32_t d = 0; d < t->rank; ++d) {
      t->shape[d] = tessera_model_dim(model, 0, i, d);
      if (t->shape[d] < 0) {
        fprintf(stderr,
                "error: input '%s' has a dynamic dim: --random needs "
                "static shapes\n",
                tessera_model_name(model, 0, i));
        return 1;
      }
      count *= (size_t)t->shape[d];
    }
    t->capacity = count * tessera_dtype_size(t->dtype);
    t->data = calloc(t->capacity ? t->capacity : 1, 1);
    if (!t->data)
      die("out of host memory");
    for (size_t k = 0; k < count; ++k) {
      if (t->dtype == TESSERA_F32)
        ((float *)t->data)[k] = nextUniform();
      else if (t->dtype == TESSERA_F16 || t->dtype == TESSERA_BF16)
        ((uint16_t *)t->data)[k] =
            f32ToHalfBits(nextUniform(), t->dtype == TESSERA_BF16);
    }
  }
  return 0;
}

/* Runs once, allocating the outputs when they are not allocated yet (or
 * too small); returns 0 or 1 (error printed). */
static int runOnce(tessera_model *model, const tessera_tensor *inputs,
                   int32_t numInputs, tessera_tensor *outputs,
                   int32_t numOutputs) {
  int status =
      tessera_model_run(model, inputs, numInputs, outputs, numOutputs);
  if (status == 2) {
    for (int32_t i = 0; i < numOutputs; ++i) {
      size_t bytes = tessera_dtype_size(outputs[i].dtype);
      for (int32_t d = 0; d < outputs[i].rank; ++d)
        bytes *= (size_t)outputs[i].shape[d];
      if (bytes > outputs[i].capacity) {
        free(outputs[i].data);
        outputs[i].data = malloc(bytes ? bytes : 1);
        outputs[i].capacity = bytes;
      }
    }
    status = tessera_model_run(model, inputs, numInputs, outputs, numOutputs);
  }
  if (status != 0) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  return 0;
}

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int setNumber(const char *name) {
  return atoi(name + strlen("test_data_set_"));
}
static int compareSets(const void *a, const void *b) {
  return setNumber(*(char *const *)a) - setNumber(*(char *const *)b);
}

static void jsonString(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\')
      fputc('\\', f);
    if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static void jsonNumber(FILE *f, double x) {
  if (isfinite(x))
    fprintf(f, "%.6g", x);
  else
    fputs("null", f);
}

int main(int argc, char **argv) {
  const char *modelPath = NULL, *testDir = NULL, *jsonPath = NULL;
  const char *names[MAX_OPTIONS], *values[MAX_OPTIONS];
  int32_t numOptions = 0;
  double maxRatio = 1e-4, budget = 60;
  int random = 0, warmup = 1, iters = 0;
  for (int i = 1; i < argc; ++i) {
    char *a = argv[i];
    if (!strncmp(a, "--test-dir=", 11))
      testDir = a + 11;
    else if (!strncmp(a, "--max-error-ratio=", 18))
      maxRatio = atof(a + 18);
    else if (!strcmp(a, "--random"))
      random = 1;
    else if (!strncmp(a, "--warmup=", 9))
      warmup = atoi(a + 9);
    else if (!strncmp(a, "--iters=", 8))
      iters = atoi(a + 8);
    else if (!strncmp(a, "--budget=", 9))
      budget = atof(a + 9);
    else if (!strncmp(a, "--json=", 7))
      jsonPath = a + 7;
    else if (a[0] != '-' && strchr(a, '=') && modelPath) {
      if (numOptions == MAX_OPTIONS) {
        fprintf(stderr, "error: at most %d loader options\n", MAX_OPTIONS);
        return 2;
      }
      char *equals = strchr(a, '=');
      *equals = '\0';
      names[numOptions] = a;
      values[numOptions++] = equals + 1;
    } else if (a[0] != '-' && !modelPath)
      modelPath = a;
    else {
      fprintf(stderr, "error: unknown argument '%s'\n", a);
      return 2;
    }
  }
  if (!modelPath || (!testDir && !random) || (testDir && random)) {
    fprintf(stderr,
            "usage: %s MODEL.so [NAME=VALUE ...] (--test-dir=DIR | --random) "
            "[--max-error-ratio=R] [--warmup=N] [--iters=N] "
            "[--budget=SECONDS] [--json=FILE]\n",
            argv[0]);
    return 2;
  }

  double loadStart = now();
  tessera_model *model =
      tessera_model_load_with_options(modelPath, names, values, numOptions);
  if (!model) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  loaded = model;
  double loadSeconds = now() - loadStart;
  int32_t numInputs = tessera_model_num_inputs(model);
  int32_t numOutputs = tessera_model_num_outputs(model);
  if (numInputs > MAX_IO || numOutputs > MAX_IO)
    die("more than 16 inputs or outputs");
  printf("%s: %s\n", modelPath, tessera_model_device(model));

  /* Test sets: directory names, sorted by number. */
  char *sets[MAX_SETS];
  int numSets = 0;
  if (testDir) {
    DIR *dir = opendir(testDir);
    if (!dir) {
      fprintf(stderr, "error: cannot open the test folder '%s'\n", testDir);
      die("no test data");
    }
    for (struct dirent *e; (e = readdir(dir));)
      if (!strncmp(e->d_name, "test_data_set_", 14) && numSets < MAX_SETS)
        sets[numSets++] = strdup(e->d_name);
    closedir(dir);
    if (!numSets) {
      fprintf(stderr, "error: no test_data_set_* in '%s'\n", testDir);
      die("no test data");
    }
    qsort(sets, (size_t)numSets, sizeof sets[0], compareSets);
  }

  tessera_tensor inputs[MAX_IO], outputs[MAX_IO];
  memset(outputs, 0, sizeof outputs);
  int failed = 0, errors = 0, compared = 0;
  FILE *json = NULL;
  if (jsonPath && !(json = fopen(jsonPath, "w"))) {
    fprintf(stderr, "error: cannot write '%s'\n", jsonPath);
    die("no JSON file");
  }
  if (json) {
    fprintf(json, "{\"model\": ");
    jsonString(json, modelPath);
    fprintf(json, ", \"device\": ");
    jsonString(json, tessera_model_device(model));
    fprintf(json, ", \"load_s\": %.6f, \"outputs\": [", loadSeconds);
  }

  npy inData[MAX_IO];
  int keptSet = 0; /* the first test set's inputs stay for the timing */
  void *keptData[MAX_IO] = {0}; /* freed at the end */
  for (int s = 0; s < (testDir ? numSets : 0); ++s) {
    char path[4096], err[4400];
    memset(inputs, 0, sizeof inputs);
    int bad = 0;
    for (int32_t i = 0; i < numInputs && !bad; ++i) {
      snprintf(path, sizeof path, "%s/%s/input_%d.npy", testDir, sets[s], i);
      if (readNpy(path, &inData[i], err, sizeof err)) {
        fprintf(stderr, "error: %s\n", err);
        bad = 1;
        break;
      }
      inputs[i].dtype = inData[i].dtype;
      inputs[i].rank = inData[i].rank;
      memcpy(inputs[i].shape, inData[i].shape, sizeof inputs[i].shape);
      inputs[i].data = inData[i].data;
      inputs[i].capacity = inData[i].bytes;
    }
    if (bad || runOnce(model, inputs, numInputs, outputs, numOutputs)) {
      printf("%s: run failed\n", sets[s]);
      ++errors;
      for (int32_t i = 0; i < numInputs; ++i)
        free(inputs[i].data); /* the inputs read so far, NULL after */
      continue;
    }
    for (int32_t o = 0; o < numOutputs; ++o) {
      npy expected;
      snprintf(path, sizeof path, "%s/%s/output_%d.npy", testDir, sets[s], o);
      if (readNpy(path, &expected, err, sizeof err)) {
        fprintf(stderr, "error: %s\n", err);
        ++errors;
        continue;
      }
      verdict v = compare(&outputs[o], &expected, maxRatio);
      printf("%s: output '%s' [", sets[s], tessera_model_name(model, 1, o));
      for (int32_t d = 0; d < outputs[o].rank; ++d)
        printf(d ? ", %lld" : "%lld", (long long)outputs[o].shape[d]);
      if (!v.shapeOk)
        printf("]: shape differs from the expected one: FAIL\n");
      else
        printf("]: max abs error %.3g, %.3g of max |expected|%s: %s\n",
               v.maxAbsError, v.ratio, v.nans ? " (NaNs)" : "",
               v.ok ? "ok" : "FAIL");
      if (json) {
        fprintf(json, "%s{\"set\": ", compared ? ", " : "");
        jsonString(json, sets[s]);
        fprintf(json, ", \"name\": ");
        jsonString(json, tessera_model_name(model, 1, o));
        fprintf(json, ", \"max_abs_error\": ");
        jsonNumber(json, v.shapeOk ? v.maxAbsError : NAN);
        fprintf(json, ", \"error_ratio\": ");
        jsonNumber(json, v.shapeOk ? v.ratio : NAN);
        fprintf(json, ", \"ok\": %s}", v.ok ? "true" : "false");
      }
      ++compared;
      failed += !v.ok;
      free(expected.data);
    }
    if (s == 0) {
      keptSet = 1;
      for (int32_t i = 0; i < numInputs; ++i)
        keptData[i] = inData[i].data;
    } else {
      /* Not kept: freed here, and no longer the inputs. */
      for (int32_t i = 0; i < numInputs; ++i) {
        free(inData[i].data);
        inputs[i].data = NULL;
      }
    }
  }
  if (json)
    fprintf(json, "]");

  /* Timing: the first test set's inputs, or random ones. */
  int timed = 0;
  double *times = NULL, *deviceTimes = NULL;
  if (iters > 0) {
    if (random) {
      memset(inputs, 0, sizeof inputs);
      if (randomInputs(model, inputs, numInputs))
        die("cannot make random inputs");
    } else if (keptSet) {
      char path[4096], err[4400];
      for (int32_t i = 0; i < numInputs; ++i) {
        snprintf(path, sizeof path, "%s/%s/input_%d.npy", testDir, sets[0],
                 i);
        /* The first set's data is still held in inData when only one set
         * exists; reread to be independent of that. */
        npy t;
        if (readNpy(path, &t, err, sizeof err))
          die(err);
        inputs[i].dtype = t.dtype;
        inputs[i].rank = t.rank;
        memcpy(inputs[i].shape, t.shape, sizeof t.shape);
        inputs[i].data = t.data;
        inputs[i].capacity = t.bytes;
      }
    }
    if (!random && !keptSet) {
      fprintf(stderr, "error: nothing to time (the first test set failed)\n");
      ++errors;
    } else {
      times = calloc((size_t)iters, sizeof(double));
      deviceTimes = calloc((size_t)iters, sizeof(double));
      int ok = 1;
      for (int w = 0; w < warmup && ok; ++w)
        ok = !runOnce(model, inputs, numInputs, outputs, numOutputs);
      double start = now();
      while (ok && timed < iters) {
        double t0 = now();
        ok = !runOnce(model, inputs, numInputs, outputs, numOutputs);
        if (ok) {
          deviceTimes[timed] = tessera_model_last_device_ms(model);
          times[timed++] = now() - t0;
        }
        if (now() - start > budget)
          break;
      }
      if (!ok)
        ++errors;
    }
  }
  if (timed) {
    double sum = 0;
    for (int i = 0; i < timed; ++i)
      sum += times[i];
    double *sorted = malloc((size_t)timed * sizeof(double));
    memcpy(sorted, times, (size_t)timed * sizeof(double));
    qsort(sorted, (size_t)timed, sizeof(double), compareDoubles);
    double median = timed % 2 ? sorted[timed / 2]
                              : 0.5 * (sorted[timed / 2 - 1] +
                                       sorted[timed / 2]);
    printf("time: %d runs after %d warm-up: min %.4f ms, median %.4f ms, "
           "mean %.4f ms (each a whole tessera_model_run: copies in, "
           "kernels, copies out)\n",
           timed, warmup, 1e3 * sorted[0], 1e3 * median, 1e3 * sum / timed);
    if (json)
      fprintf(json,
              ", \"runs\": %d, \"min_ms\": %.6f, \"median_ms\": %.6f, "
              "\"mean_ms\": %.6f",
              timed, 1e3 * sorted[0], 1e3 * median, 1e3 * sum / timed);
    free(sorted);
    /* The GPU's own time of each run's kernels (CUDA events), where the
     * device measured every run. */
    qsort(deviceTimes, (size_t)timed, sizeof(double), compareDoubles);
    if (deviceTimes[0] >= 0) {
      double deviceMedian =
          timed % 2
              ? deviceTimes[timed / 2]
              : 0.5 * (deviceTimes[timed / 2 - 1] + deviceTimes[timed / 2]);
      printf("device time: min %.4f ms, median %.4f ms (the kernels, by "
             "CUDA events)\n",
             deviceTimes[0], deviceMedian);
      if (json)
        fprintf(json, ", \"device_min_ms\": %.6f, \"device_median_ms\": %.6f",
                deviceTimes[0], deviceMedian);
    } else {
      printf("device time: not measured (%s)\n", tessera_model_device(model));
    }
  }
  free(times);
  free(deviceTimes);
  times = deviceTimes = NULL;
  int pass = !failed && !errors;
  if (json) {
    fprintf(json, ", \"compared\": %d, \"failed\": %d, \"errors\": %d, "
                  "\"ok\": %s}\n",
            compared, failed, errors, pass ? "true" : "false");
    fclose(json);
  }
  if (testDir)
    printf("%s: %d outputs compared, %d failed, %d errors: %s\n", modelPath,
           compared, failed, errors, pass ? "PASS" : "FAIL");
  for (int32_t o = 0; o < numOutputs; ++o)
    free(outputs[o].data);
  /* The timed inputs (random, or the first set read again) and the first
   * set's own. */
  /* Without a timed run (--iters=0) the inputs are still the first set's
   * own: free those once. */
  if (random || keptSet)
    for (int32_t i = 0; i < numInputs; ++i)
      if (inputs[i].data != keptData[i])
        free(inputs[i].data);
  for (int32_t i = 0; i < numInputs; ++i)
    free(keptData[i]);
  for (int s = 0; s < numSets; ++s)
    free(sets[s]);
  tessera_model_free(model);
  loaded = NULL;
  return pass ? 0 : 1;
}
