#!/usr/bin/python3
# embed_overhead.py - per-call time of a tiny model through Python (tessera) against the C API and ONNX Runtime's node binding, in one run.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compiles Y = 2 X + 1 on f32 [2, 3] once per path, then times calls of

  - the C API (tessera_model_run_nocopy, a C program built here against
    libtessera_compiler.so, opening the artifact from memory),
  - tessera.CompiledModel.__call__ on a NumPy array,
  - tessera.torch's module on a torch tensor (when torch imports),
  - ONNX Runtime's node binding (npm onnxruntime-node, installed into
    --ort-dir with --ignore-scripts as bench/cpu_bench.py does), awaiting
    InferenceSession.run on the same ONNX file,

in one run: every path stays loaded (the C program and node as servers
on a pipe), and each repetition times --calls calls of every path in turn,
so a change in the machine's load hits all of them alike. Each call is
timed on its own; a repetition's figure is the median call. The summary
gives, per path, the median over repetitions and their range (min-max),
and the time added over the C API (the difference within each
repetition).

Every Tessera path compiles with threads=1 and ONNX Runtime runs with one
intra-op thread: on a loaded machine, starting a thread team for six
elements costs far more than the call itself and varies from run to run,
which would hide what is measured here. Each path's result is checked
against 2 X + 1 before timing.

Usage: embed_overhead.py [--build build] [--calls 20000] [--reps 5]
                         [--ort-dir BUILD/ort] [--no-ort]
Run with Debian's /usr/bin/python3.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

C_SOURCE = r"""
#include "tessera-c/Compiler.h"
#include <math.h>
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
/* Compiles argv[1], checks one run, prints "ready", then for each line
   "N" on stdin times N calls and prints the median in microseconds. */
int main(int argc, char **argv) {
  tessera_compile_options *o = tessera_compile_options_create();
  tessera_compile_options_set_target_option(o, "threads", "1");
  tessera_compile_result *r = tessera_compile_file(argv[1], o);
  if (!tessera_compile_result_ok(r)) { fputs(tessera_compile_result_messages(r), stderr); return 1; }
  tessera_model *m = tessera_compile_result_load(r, NULL, NULL, 0);
  if (!m) { fprintf(stderr, "%s\n", tessera_last_error()); return 1; }
  float x[6] = {0, 1, 2, 3, 4, 5};
  tessera_tensor in = {TESSERA_F32, 2, {2, 3}, x, sizeof x}, out;
  tessera_buffer *buffer;
  if (tessera_model_run_nocopy(m, &in, 1, &out, &buffer, 1)) { fprintf(stderr, "%s\n", tessera_last_error()); return 1; }
  for (int i = 0; i < 6; ++i)
    if (((const float *)out.data)[i] != 2 * x[i] + 1) { fprintf(stderr, "wrong result\n"); return 1; }
  tessera_buffer_free(buffer);
  printf("ready\n"); fflush(stdout);
  int calls;
  while (scanf("%d", &calls) == 1) {
    double *t = malloc(sizeof(double) * calls);
    for (int i = 0; i < calls + 100; ++i) {
      double start = now();
      if (tessera_model_run_nocopy(m, &in, 1, &out, &buffer, 1)) { fprintf(stderr, "%s\n", tessera_last_error()); return 1; }
      tessera_buffer_free(buffer);
      if (i >= 100) t[i - 100] = now() - start;
    }
    qsort(t, calls, sizeof(double), cmp);
    printf("%.4f\n", t[calls / 2]); fflush(stdout);
    free(t);
  }
  return 0;
}
"""

NODE_SOURCE = r"""
// Opens argv[2] with onnxruntime-node (one intra-op thread), checks one
// run, prints "ready", then for each line "N" on stdin times N awaited
// session.run calls and prints the median in microseconds.
const ort = require('onnxruntime-node');
const readline = require('readline');
async function main() {
  const session = await ort.InferenceSession.create(process.argv[2], {
    intraOpNumThreads: 1, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const x = Float32Array.from([0, 1, 2, 3, 4, 5]);
  const feeds = {X: new ort.Tensor('float32', x, [2, 3])};
  const y = (await session.run(feeds)).Y.data;
  for (let i = 0; i < 6; ++i)
    if (y[i] !== 2 * x[i] + 1) throw new Error('wrong result');
  console.log('ready');
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines) {
    const calls = Number(line);
    const times = new Float64Array(calls);
    for (let i = 0; i < calls + 100; ++i) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      if (i >= 100) times[i - 100] = Number(process.hrtime.bigint() - start) / 1e3;
    }
    times.sort();
    console.log(times[Math.floor(calls / 2)].toFixed(4));
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
"""


class Server:
    """A program that prints "ready", then answers each line "N" with the
    median of N calls in microseconds."""

    def __init__(self, argv, env=None):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True,
                                        env=env)
        line = self.process.stdout.readline().strip()
        if line != "ready":
            self.process.kill()
            raise RuntimeError(f"{argv[0]} did not start (said {line!r})")

    def __call__(self, calls):
        self.process.stdin.write(f"{calls}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the timing server exited")
        return float(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def python_timer(fn):
    def median_us(calls):
        for _ in range(100):
            fn()
        times = [0.0] * calls
        clock = time.perf_counter_ns
        for i in range(calls):
            start = clock()
            fn()
            times[i] = (clock() - start) / 1e3
        return statistics.median(times)
    return median_us


def affine_model():
    from onnx import TensorProto, helper
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Mul", ["X", "two"], ["M"]),
         helper.make_node("Add", ["M", "one"], ["Y"])], "affine",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])], [two, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def spread(values):
    return (f"{statistics.median(values):7.2f} us  "
            f"({min(values):.2f}-{max(values):.2f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--calls", type=int, default=20000,
                        help="calls timed per path and repetition")
    parser.add_argument("--reps", type=int, default=5,
                        help="repetitions, each timing every path in turn")
    parser.add_argument("--ort-dir", default=None,
                        help="where onnxruntime-node is (installed if "
                             "missing); default BUILD/ort")
    parser.add_argument("--no-ort", action="store_true",
                        help="leave ONNX Runtime out")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(build, "python"))
    import numpy as np
    import onnx
    import tessera

    paths = {}  # name -> timer(calls) -> median us
    closers = []
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "affine.onnx")
        onnx.save(affine_model(), model_path)

        exe = os.path.join(tmp, "overhead")
        src = os.path.join(tmp, "overhead.c")
        with open(src, "w") as f:
            f.write(C_SOURCE)
        subprocess.run(["clang-22", "-O2", "-o", exe, src, "-I", os.path.join(ROOT, "include"),
                        "-L", os.path.join(build, "lib"), "-ltessera_compiler",
                        "-Wl,-rpath," + os.path.join(build, "lib")], check=True)
        c_server = Server([exe, model_path])
        closers.append(c_server)
        paths["C API (run_nocopy)"] = c_server

        compiled = tessera.compile(model_path, threads=1)
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(compiled(x), 2 * x + 1)
        paths["Python, NumPy in and out"] = python_timer(lambda: compiled(x))

        try:
            import torch
            import tessera.torch as tt
        except ImportError:
            torch = None
        if torch is not None:
            class Affine(torch.nn.Module):
                def forward(self, x):
                    return 2 * x + 1

            module = tt.compile(Affine(), (torch.zeros(2, 3),), threads=1)
            t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
            torch.testing.assert_close(module(t), 2 * t + 1, rtol=0, atol=0)
            paths["tessera.torch, tensors"] = python_timer(lambda: module(t))

        if not args.no_ort:
            sys.path.insert(0, os.path.join(ROOT, "bench"))
            from cpu_bench import ensure_ort
            ort_dir = args.ort_dir or os.path.join(build, "ort")
            ensure_ort(ort_dir)
            runner = os.path.join(tmp, "ort_overhead.js")
            with open(runner, "w") as f:
                f.write(NODE_SOURCE)
            env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
            version = json.load(open(os.path.join(
                ort_dir, "node_modules", "onnxruntime-node", "package.json")))["version"]
            ort_server = Server(["node", runner, model_path], env=env)
            closers.append(ort_server)
            paths[f"ONNX Runtime {version}, node"] = ort_server

        results = {name: [] for name in paths}
        for rep in range(args.reps):
            for name, timer in paths.items():
                results[name].append(timer(args.calls))
            print(f"repetition {rep + 1}: " + ", ".join(
                f"{v[-1]:.2f}" for v in results.values()), file=sys.stderr)
        for closer in closers:
            closer.close()

    base = results["C API (run_nocopy)"]
    print(f"median call per repetition, {args.reps} repetitions of "
          f"{args.calls} calls (median over repetitions, min-max):")
    for name, values in results.items():
        line = f"  {name:28} {spread(values)}"
        if values is not base:
            added = [v - b for v, b in zip(values, base)]
            line += f"   minus the C API {spread(added)}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
