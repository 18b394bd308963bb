#!/usr/bin/env python3
"""Runs the third-party model corpus on every target and counts what matches.

The corpus is every model nobody here wrote that Tessera is tested on:
PyTorch's own nn modules and torchvision's transformers (bench/corpus.py),
torchvision's classifiers with calibrated batch-norm statistics
(test/e2e/Inputs/torchvision_model.py, at the sizes the e2e tests use) and
PaddleOCR's three models with their real weights
(scripts/gen_thirdparty.py). Each is written in ONNX's test layout (once;
kept in --work), then run with tessera-run --test-dir on each target:

  cpu       max error within 1e-4 of the largest expected magnitude
  systolic  cosine >= 0.999 and max error within 2% (6% for the text
            detector, 4% for RegNetX, 3% for ShuffleNetV2: docs/Systolic.md says
            why), with the
            operand format the model needs (bf16 unless noted)

Prints one line per model and target and the count per target; writes the
same as JSON with --json. Exits 1 when a model does not match.

  scripts/thirdparty_report.py [--targets cpu,systolic] [--only NAME,...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"

# name: (generator, generator arguments, systolic operand format, systolic
# max error ratio)
CORPUS = {}
for name in ["nn_encoder_seq_first", "nn_encoder_batch_first",
             "nn_encoder_dynamic", "nn_encoder_stack", "nn_decoder",
             "nn_mha_self", "causal_sliced", "nn_mlp_token", "vit_b_16",
             "vit_b_16_dynamic", "swin_t", "swin_window", "convnext_tiny",
             "mobilenet_v2"]:
    CORPUS[name] = ("corpus", [], "bf16", 0.02)
# The 224 x 224 MobileNetV2 of bench/corpus.py needs f16 operands too.
CORPUS["mobilenet_v2"] = ("corpus", [], "f16", 0.02)
for name, size, fmt, ratio in [
        ("resnet18", 112, "bf16", 0.02),
        ("mobilenet_v3_small", 112, "f16", 0.02),
        ("squeezenet1_0", 64, "bf16", 0.02),
        ("efficientnet_b0", 64, "f16", 0.02),
        ("shufflenet_v2_x0_5", 64, "f16", 0.03),
        ("regnet_x_400mf", 64, "f16", 0.04)]:
    CORPUS["tv_" + name] = ("torchvision", [name, "--size", str(size)],
                            fmt, ratio)
CORPUS["ocr_cls"] = ("ocr", [], "bf16", 0.02)
CORPUS["ocr_rec"] = ("ocr", [], "f16", 0.02)
CORPUS["ocr_det"] = ("ocr", [], "f16", 0.06)


def generate(name, work):
    out = os.path.join(work, name)
    if os.path.exists(os.path.join(out, "model.onnx")):
        return out
    kind, args, _, _ = CORPUS[name]
    if kind == "corpus":
        cmd = [PYTHON, os.path.join(ROOT, "bench/corpus.py"), work, name]
    elif kind == "torchvision":
        cmd = [PYTHON, os.path.join(ROOT, "test/e2e/Inputs/torchvision_model.py"),
               args[0], out] + args[1:]
    else:
        cmd = [PYTHON, os.path.join(ROOT, "scripts/gen_thirdparty.py"),
               "--out", work, name,
               "--cache", os.path.join(ROOT, "build/thirdparty"),
               "--ort-dir", os.path.join(ROOT, "build/ort")]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def run(name, target, folder, tessera_run):
    _, _, fmt, ratio = CORPUS[name]
    cmd = [tessera_run, "--test-dir=" + folder, "--target=" + target]
    if target == "cpu":
        cmd.append("--max-error-ratio=1e-4")
    else:
        # The accelerator's operand format follows --precision.
        cmd += ["--min-cosine=0.999", "--max-error-ratio=%g" % ratio,
                "--precision=" + {"f16": "fp16"}.get(fmt, fmt)]
    start = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    seconds = time.time() - start
    lines = [l for l in p.stdout.splitlines() if re.search(r": (ok|FAIL)$", l)]
    passed = p.returncode == 0 and lines and all(l.endswith(": ok")
                                                for l in lines)
    detail = "; ".join(re.sub(r"^.*?: output ", "", l) for l in lines)
    if not lines:
        detail = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    return {"model": name, "target": target, "passed": bool(passed),
            "seconds": round(seconds, 1), "detail": detail,
            "operand_format": fmt if target == "systolic" else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cpu,systolic")
    parser.add_argument("--only", help="comma-separated model names")
    parser.add_argument("--work", default=os.path.join(ROOT, "build/corpus"),
                        help="where the models are written (kept)")
    parser.add_argument("--tessera-run",
                        default=os.path.join(ROOT, "build/bin/tessera-run"))
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CORPUS))
        return 0
    names = args.only.split(",") if args.only else list(CORPUS)
    for name in names:
        if name not in CORPUS:
            print("unknown model '%s' (--list names them)" % name,
                  file=sys.stderr)
            return 2
    targets = args.targets.split(",")
    os.makedirs(args.work, exist_ok=True)
    results = []
    for name in names:
        folder = generate(name, args.work)
        for target in targets:
            r = run(name, target, folder, args.tessera_run)
            results.append(r)
            print("%-24s %-9s %-4s %6.1f s  %s" % (
                name, target, "ok" if r["passed"] else "FAIL", r["seconds"],
                r["detail"]), flush=True)
    for target in targets:
        mine = [r for r in results if r["target"] == target]
        print("%s: %d of %d models match" % (
            target, sum(r["passed"] for r in mine), len(mine)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
