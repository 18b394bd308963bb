/* exit_without_free.c - runs a CUDA artifact on the PTX emulator through
 * the C API and exits without freeing the model: the process must end
 * cleanly (the artifact's destructors run after static ones). */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
#include "tessera-c/Runtime.h"

#include <stdio.h>

int main(int argc, char **argv) {
  const char *names[] = {"device"}, *values[] = {"emulator"};
  tessera_model *model =
      tessera_model_load_with_options(argv[1], names, values, 1);
  if (!model) {
    printf("load failed: %s\n", tessera_last_error());
    return 1;
  }
  float x[6] = {0, 1, 2, 3, 4, 5}, y[6];
  tessera_tensor in = {TESSERA_F32, 2, {2, 3}, x, sizeof x};
  tessera_tensor out = {TESSERA_F32, 2, {2, 3}, y, sizeof y};
  int status = tessera_model_run(model, &in, 1, &out, 1);
  printf("status %d: %g %g %g %g %g %g\n", status, y[0], y[1], y[2], y[3],
         y[4], y[5]);
  fflush(stdout);
  return status; /* the model is not freed */
}
