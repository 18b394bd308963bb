#!/usr/bin/python3
# embed_overhead.py - per-call time of a tiny model through Python (tessera) against the C API, in one run.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compiles Y = 2 X + 1 on f32 [2, 3] once, then times N calls of

  - the C API (tessera_model_run_nocopy, a C program built here against
    libtessera_compiler.so, opening the same artifact from memory),
  - tessera.CompiledModel.__call__ on a NumPy array,
  - tessera.torch's module on a torch tensor (when torch imports),

and prints the median per call of each and what Python adds. Every path
compiles with threads=1: on a loaded machine, starting an OpenMP team for
six elements costs far more than the call itself and varies from run to
run, which would hide what is measured here.

Usage: embed_overhead.py [--build build] [--calls 20000]
Run with Debian's /usr/bin/python3.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

C_SOURCE = r"""
#include "tessera-c/Compiler.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
  int calls = atoi(argv[2]);
  tessera_compile_options *o = tessera_compile_options_create();
  tessera_compile_options_set_target_option(o, "threads", "1");
  tessera_compile_result *r = tessera_compile_file(argv[1], o);
  if (!tessera_compile_result_ok(r)) { fputs(tessera_compile_result_messages(r), stderr); return 1; }
  tessera_model *m = tessera_compile_result_load(r, NULL, NULL, 0);
  float x[6] = {0, 1, 2, 3, 4, 5};
  tessera_tensor in = {TESSERA_F32, 2, {2, 3}, x, sizeof x}, out;
  tessera_buffer *buffer;
  double *t = malloc(sizeof(double) * calls);
  for (int i = 0; i < calls + 100; ++i) {
    double start = now();
    if (tessera_model_run_nocopy(m, &in, 1, &out, &buffer, 1)) { fprintf(stderr, "%s\n", tessera_last_error()); return 1; }
    tessera_buffer_free(buffer);
    if (i >= 100) t[i - 100] = now() - start;
  }
  qsort(t, calls, sizeof(double), cmp);
  printf("%.3f\n", t[calls / 2]);
  return 0;
}
"""


def median_us(fn, calls):
    for _ in range(100):
        fn()
    times = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        start = clock()
        fn()
        times.append((clock() - start) / 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(build, "python"))
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    import tessera

    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Mul", ["X", "two"], ["M"]),
         helper.make_node("Add", ["M", "one"], ["Y"])], "affine",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])], [two, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "affine.onnx")
        onnx.save(model, path)
        exe = os.path.join(tmp, "overhead")
        src = os.path.join(tmp, "overhead.c")
        with open(src, "w") as f:
            f.write(C_SOURCE)
        subprocess.run(["clang-22", "-O2", "-o", exe, src, "-I", os.path.join(root, "include"),
                        "-L", os.path.join(build, "lib"), "-ltessera_compiler",
                        "-Wl,-rpath," + os.path.join(build, "lib")], check=True)
        c_us = float(subprocess.run([exe, path, str(args.calls)], check=True,
                                    capture_output=True, text=True).stdout)
        compiled = tessera.compile(path, threads=1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    py_us = median_us(lambda: compiled(x), args.calls)
    print(f"C API (run_nocopy):        {c_us:7.2f} us per call")
    print(f"Python, NumPy in and out:  {py_us:7.2f} us per call "
          f"(+{py_us - c_us:.2f} us)")
    try:
        import torch
        import tessera.torch as tt
    except ImportError:
        return 0

    class Affine(torch.nn.Module):
        def forward(self, x):
            return 2 * x + 1

    module = tt.compile(Affine(), (torch.zeros(2, 3),), threads=1)
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    torch_us = median_us(lambda: module(t), args.calls)
    print(f"tessera.torch, tensors:    {torch_us:7.2f} us per call "
          f"(+{torch_us - c_us:.2f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
