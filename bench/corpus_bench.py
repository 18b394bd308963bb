#!/usr/bin/python3
# corpus_bench.py - Tessera against ONNX Runtime on models that nobody here wrote (bench/corpus.py's transformers by default), on this CPU.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/corpus_bench.py [NAME...] [--build build] [--threads 2]
                              [--compile-arg=--precision=bf16 ...]
                                [--runs 10] [--rounds 3] [--corpus DIR]
                                [--ort-dir DIR] [--static-copies]

For each model of bench/corpus.py (all but the largest by default; name
them to choose; the rest of the third-party corpus of
scripts/thirdparty_report.py may be named too: torchvision's CNNs as
tv_resnet18, tv_mobilenet_v3_small, ..., PaddleOCR's models as ocr_det,
ocr_rec, ocr_cls), exported once into --corpus: compiles it with
`tessera-compile` (and reports the compile time), then times it
`--rounds` times alternately with `tessera-run --benchmark=RUNS` and with
ONNX Runtime (bench/ort_runner.js, npm onnxruntime-node, `--threads`
intra-op threads, all graph optimizations), on the same input shapes.
Prints per model the median of the rounds' medians for each, the ratio
Tessera / ONNX Runtime with its spread (lowest and highest ratio of one
round), the ratio of the fastest runs of each (the least disturbed by
other work on a shared machine, which only ever adds time), and at the
end the geometric means of both ratios and, for each
model measured both with symbolic dims and static dims, Tessera's
symbolic / static latency, timed again alternately (`--rounds` pairs of
runs on the static model's first input set; the spread is the lowest and
highest ratio of one pair). With --static-copies, every named model whose
inputs have symbolic dims is also compiled with those dims fixed to its
first test set's sizes (model_static.onnx beside it) and timed the same
way against it, so that any model's symbolic / static latency is
measured. Numbers are from one machine in one sitting: a shared machine
is noisy, which the spread shows.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

import onnx
from onnx import TensorProto

from cpu_bench import ensure_ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["nn_encoder_seq_first", "nn_encoder_batch_first",
           "nn_encoder_dynamic", "nn_encoder_stack", "nn_decoder",
           "nn_mha_self", "vit_b_16", "vit_b_16_dynamic",
           "causal_gpt_1024"]
# The same model compiled with symbolic dims, then with static dims (timed
# on the same input shapes).
SYMBOLIC_PAIRS = [("nn_encoder_dynamic", "nn_encoder_seq_first"),
                  ("vit_b_16_dynamic", "vit_b_16")]
TYPES = {TensorProto.FLOAT: "float32", TensorProto.INT64: "int64",
         TensorProto.BOOL: "bool"}


def inputs_of(folder):
    """The test set's input files and the JSON spec of their shapes."""
    data = os.path.join(folder, "test_data_set_0")
    files = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    spec = []
    paths = []
    for name in files:
        tensor = onnx.TensorProto()
        with open(os.path.join(data, name), "rb") as f:
            tensor.ParseFromString(f.read())
        spec.append({"name": tensor.name, "type": TYPES[tensor.data_type],
                     "shape": list(tensor.dims)})
        paths.append(os.path.join(data, name))
    spec_path = os.path.join(folder, "inputs.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    return paths, spec_path


def static_copy(folder):
    """model_static.onnx: the model with its inputs' symbolic dims fixed to
    the first test set's sizes (its outputs' and intermediates' shapes
    left to the compiler's inference), or None when nothing is symbolic."""
    model = onnx.load(os.path.join(folder, "model.onnx"))
    data = os.path.join(folder, "test_data_set_0")
    # By name, or in the inputs' order for files whose tensors have none.
    sizes = {}
    files = sorted((f for f in os.listdir(data) if f.startswith("input_")),
                   key=lambda f: int(re.sub(r"\D", "", f) or 0))
    for index, name in enumerate(files):
        tensor = onnx.TensorProto()
        with open(os.path.join(data, name), "rb") as f:
            tensor.ParseFromString(f.read())
        sizes[tensor.name or index] = list(tensor.dims)
    changed = False
    for index, value in enumerate(model.graph.input):
        dims = value.type.tensor_type.shape.dim
        for dim, size in zip(dims, sizes.get(value.name, sizes.get(index, []))):
            if not dim.HasField("dim_value"):
                dim.dim_value = size
                changed = True
    if not changed:
        return None
    for value in model.graph.output:
        value.type.tensor_type.ClearField("shape")
    del model.graph.value_info[:]
    path = os.path.join(folder, "model_static.onnx")
    onnx.save(model, path)
    return path


def time_pair(build, a_artifact, b_artifact, paths, runs, rounds):
    """Alternate rounds of two artifacts on the same inputs: medians, the
    per-round ratios a / b and the ratio of their fastest runs."""
    a, b, a_best, b_best = [], [], [], []
    for _ in range(rounds):
        a.append(time_tessera(build, a_artifact, paths, runs, a_best))
        b.append(time_tessera(build, b_artifact, paths, runs, b_best))
    return a, b, [x / y for x, y in zip(a, b)], min(a_best) / min(b_best)


def time_tessera(build, artifact, paths, runs, best=None):
    """The median latency of `tessera-run --benchmark=runs`, in ms (its
    minimum appended to `best` when given)."""
    out = subprocess.run(
        [os.path.join(build, "bin", "tessera-run"), artifact,
         f"--benchmark={runs}"] + [f"--input={p}" for p in paths],
        capture_output=True, text=True, check=True).stdout
    if best is not None:
        best.append(float(re.search(r"min ([0-9.]+) ms", out).group(1)))
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus", default=os.path.join(ROOT, "build",
                                                         "corpus"))
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="an option for tessera-compile (repeatable), "
                        "e.g. --compile-arg=--precision=bf16")
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build",
                                                          "ort"))
    parser.add_argument("--static-copies", action="store_true",
                        help="also time each model with symbolic input dims "
                        "against a copy with them fixed")
    args = parser.parse_args()
    names = args.names or DEFAULT
    missing = [n for n in names
               if not os.path.exists(os.path.join(args.corpus, n,
                                                  "model.onnx"))]
    # bench/corpus.py's models, else the rest of the third-party corpus.
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import thirdparty_report
    corpus_py = os.path.join(ROOT, "bench", "corpus.py")
    listed = subprocess.run([sys.executable, corpus_py, args.corpus,
                             "--list"],
                            check=True, stdout=subprocess.PIPE,
                            text=True).stdout.split()
    own = [n for n in missing if n in listed]
    unknown = [n for n in missing
               if n not in listed and n not in thirdparty_report.CORPUS]
    if unknown:
        sys.exit(f"corpus_bench.py: no model named {', '.join(unknown)} "
                 f"(bench/corpus.py --list and scripts/thirdparty_report.py "
                 f"name them)")
    if own:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench",
                                                     "corpus.py"),
                        args.corpus] + own, check=True)
    for name in missing:
        if name not in own:
            thirdparty_report.generate(name, args.corpus)
    ensure_ort(args.ort_dir)
    env = dict(os.environ, NODE_PATH=os.path.join(args.ort_dir,
                                                  "node_modules"))
    print(f"{'model':24} {'compile s':>9} {'Tessera ms':>11} {'ORT ms':>9} "
          f"{'ratio':>6} {'spread':>13} {'fastest':>7}")
    ratios, best_ratios = [], []
    for name in names:
        folder = os.path.join(args.corpus, name)
        model = os.path.join(folder, "model.onnx")
        artifact = os.path.join(folder, "model.so")
        start = time.monotonic()
        subprocess.run([os.path.join(args.build, "bin", "tessera-compile"),
                        model, f"--threads={args.threads}", "-o",
                        artifact] + args.compile_arg,
                       check=True)
        compile_s = time.monotonic() - start
        paths, spec = inputs_of(folder)
        ours, theirs, our_best, their_best = [], [], [], []
        for _ in range(args.rounds):
            ours.append(time_tessera(args.build, artifact, paths, args.runs,
                                     our_best))
            out = json.loads(subprocess.run(
                ["node", os.path.join(ROOT, "bench", "ort_runner.js"), model,
                 str(args.threads), str(args.runs), spec],
                capture_output=True, text=True, env=env, check=True).stdout)
            theirs.append(out["median_ms"])
            their_best.append(out["min_ms"])
        round_ratios = [a / b for a, b in zip(ours, theirs)]
        ratio = statistics.median(ours) / statistics.median(theirs)
        ratios.append(ratio)
        best_ratios.append(min(our_best) / min(their_best))
        print(f"{name:24} {compile_s:9.1f} {statistics.median(ours):11.2f} "
              f"{statistics.median(theirs):9.2f} {ratio:5.2f}x "
              f"{min(round_ratios):5.2f}-{max(round_ratios):.2f}x "
              f"{best_ratios[-1]:5.2f}x",
              flush=True)
    def geomean(values):
        return math.exp(sum(math.log(r) for r in values) / len(values))
    print(f"geometric mean of the ratios: {geomean(ratios):.2f}x "
          f"(slowest {max(ratios):.2f}x); of the fastest runs' ratios: "
          f"{geomean(best_ratios):.2f}x (slowest {max(best_ratios):.2f}x)")
    def report(symbolic, a, b, pairs, fastest):
        print(f"symbolic / static dims, {symbolic}: "
              f"{statistics.median(a) / statistics.median(b):.2f}x "
              f"({min(pairs):.2f}-{max(pairs):.2f}x; "
              f"{statistics.median(a):.2f} / {statistics.median(b):.2f} ms; "
              f"fastest runs {fastest:.2f}x)",
              flush=True)

    for symbolic, static in SYMBOLIC_PAIRS:
        if symbolic not in names or static not in names:
            continue
        paths, _ = inputs_of(os.path.join(args.corpus, static))
        report(symbolic, *time_pair(
            args.build, os.path.join(args.corpus, symbolic, "model.so"),
            os.path.join(args.corpus, static, "model.so"), paths, args.runs,
            args.rounds))
    for name in names if args.static_copies else []:
        folder = os.path.join(args.corpus, name)
        static = static_copy(folder)
        if not static:
            continue
        artifact = os.path.join(folder, "model_static.so")
        subprocess.run([os.path.join(args.build, "bin", "tessera-compile"),
                        static, f"--threads={args.threads}", "-o",
                        artifact] + args.compile_arg, check=True)
        paths, _ = inputs_of(folder)
        report(name + " (static copy)", *time_pair(
            args.build, os.path.join(folder, "model.so"), artifact, paths,
            args.runs, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
