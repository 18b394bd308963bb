#!/usr/bin/python3
# run_conformance.py - runs ONNX's backend node tests through tessera-run and tracks the passing set.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: run_conformance.py --tessera-run BIN [--data DIR] [--jobs N]
                             [--expected FILE] [--update FILE] [--filter RE]

Runs every test folder of ONNX's backend node tests (model.onnx plus
test_data_set_*) with `tessera-run --test-dir`, using ONNX's tolerances
(rtol 1e-3, atol 1e-7), and sorts each result by cause:

  pass         all outputs match
  unsupported  an operator Tessera does not import
  rejected     a type, attribute or form Tessera reports it does not handle
  lowering     imported, but the CPU backend could not lower it
  numbers      ran, outputs beyond tolerance
  crash        killed by a signal or timed out

With --expected, every test listed there must still pass (a regression
fails the run); tests passing beyond the list are reported so the list can
grow (--update rewrites it). Exit status 1 on a regression.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"


def classify(tool, folder, timeout):
    try:
        result = subprocess.run(
            [tool, "--test-dir=" + folder, "--rtol=1e-3", "--atol=1e-7"],
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", "timed out"
    text = result.stderr + result.stdout
    if result.returncode == 0:
        return "pass", ""
    if result.returncode < 0 or result.returncode > 2:
        return "crash", f"exit {result.returncode}"
    first = next((line for line in text.splitlines() if "error" in line
                  or "FAIL" in line), text.strip()[:200])
    if "unsupported ONNX operator" in text:
        return "unsupported", re.sub(r".*unsupported ONNX operator ('[^']+').*",
                                     r"\1", first)
    if "failed to legalize" in text or "lowering for the CPU failed" in text:
        return "lowering", first
    if "FAIL" in text or "shape differs" in text:
        return "numbers", first
    return "rejected", first


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tessera-run", required=True)
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--expected")
    parser.add_argument("--update")
    parser.add_argument("--filter", default="")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if not os.path.isdir(args.data):
        print(f"no ONNX test data at {args.data} (Debian package "
              "libonnx-testdata)", file=sys.stderr)
        return 2
    tests = sorted(t for t in os.listdir(args.data)
                   if re.search(args.filter, t))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(classify, args.tessera_run,
                               os.path.join(args.data, t), args.timeout): t
                   for t in tests}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
    by_cause = collections.defaultdict(list)
    for test, (cause, detail) in sorted(results.items()):
        by_cause[cause].append((test, detail))
    print(f"ONNX backend node tests: {len(tests)}")
    for cause in ["pass", "unsupported", "rejected", "lowering", "numbers",
                  "crash"]:
        print(f"  {cause:12} {len(by_cause[cause])}")
    ops = collections.Counter(d for _, d in by_cause["unsupported"])
    if ops:
        print("most common unsupported operators: " +
              ", ".join(f"{op} ({n})" for op, n in ops.most_common(60)))
    if args.verbose:
        for cause in ["rejected", "lowering", "numbers", "crash"]:
            for test, detail in by_cause[cause]:
                print(f"{cause}: {test}: {detail}")
    passing = {t for t, _ in by_cause["pass"]}
    status = 0
    if args.expected:
        with open(args.expected) as f:
            expected = {line.strip() for line in f
                        if line.strip() and not line.startswith("#")}
        regressed = sorted(expected - passing)
        new = sorted(passing - expected)
        for test in regressed:
            print(f"REGRESSION: {test} no longer passes "
                  f"({results.get(test, ('missing', ''))[0]}: "
                  f"{results.get(test, ('', ''))[1]})")
        if new:
            print(f"{len(new)} tests pass beyond the expected list "
                  "(run with --update to record them)")
        status = 1 if regressed else 0
    if args.update:
        with open(args.update, "w") as f:
            f.write("# ONNX backend node tests that Tessera's CPU backend "
                    "passes; CI fails if one stops passing.\n")
            for test in sorted(passing):
                f.write(test + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
