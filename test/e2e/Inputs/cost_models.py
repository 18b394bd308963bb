#!/usr/bin/python3
"""Models for the automatic precision policy's cost models (what
--precision=auto prices a matmul at), and checks of the systolic target's
against the simulator's cycles.

    cost_models.py model DIR M K N [--symbolic-rows]
        Writes a MatMul of an [M, K] input by a constant [K, N] weight to
        DIR in ONNX's test layout, with two samples (M a symbolic dim
        "rows" with --symbolic-rows).
    cost_models.py gemms DIR
        For single GEMMs (1 x 1024 x 1024 and 128 x 768 x 3072) on the
        default accelerator and on one with 16 bytes of DRAM per cycle:
        the plan's predicted cycles under bf16, fp8 and int8 against the
        cycles of the program compiled under each; fails beyond 5%.
    cost_models.py compare PLAN ACCEL WIDE.tsp PLANNED.tsp INPUT.pb
        The planned program against the bf16 one: fails unless it takes
        fewer cycles, or when the plan's predicted time ratio (matmuls
        only) is more than 5% from the simulated one (the whole program's).
Prints one line per check. tessera-compile and tessera-sim come from PATH
(the lit test puts the build's tools first).
"""
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TOLERANCE = 0.05
# The plan predicts its matmuls' time; the program's other steps (norms,
# exponentials) take the same cycles in both programs and pull the
# simulated ratio toward 1, by 2.3% on the test's model.
PROGRAM_TOLERANCE = 0.05


def cycles(program, accel, data):
    out = subprocess.run(["tessera-sim", "run", program, f"--accel={accel}",
                          f"--input={data}"],
                         capture_output=True, text=True, check=True).stdout
    return int(re.search(r'"cycles": *(\d+)', out).group(1))


def write_gemm(folder, m, k, n, symbolic_rows=False):
    """A MatMul by a constant [k, n] weight, with two samples."""
    rows = "rows" if symbolic_rows else m
    rng = np.random.default_rng(m * 7 + k + n)
    w = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="/fc/MatMul")],
        "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, n])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for s in range(2):
        data = os.path.join(folder, f"test_data_set_{s}")
        os.makedirs(data, exist_ok=True)
        x = rng.standard_normal((m, k)).astype(np.float32)
        for name, value in (("input_0", ("x", x)), ("output_0", ("y", x @ w))):
            with open(os.path.join(data, name + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(value[1], value[0])
                        .SerializeToString())


def gemms(root):
    narrow = os.path.join(root, "narrow.json")
    os.makedirs(root, exist_ok=True)
    with open(narrow, "w") as f:
        json.dump({"base": "default", "name": "narrow-dram",
                   "dram_bytes_per_cycle": 16}, f)
    failed = False
    for m, k, n in ((1, 1024, 1024), (128, 768, 3072)):
        folder = os.path.join(root, f"gemm_{m}x{k}x{n}")
        write_gemm(folder, m, k, n)
        model = os.path.join(folder, "model.onnx")
        data = os.path.join(folder, "test_data_set_0", "input_0.pb")
        for accel in ("default", narrow):
            plan = os.path.join(folder, "plan.json")
            # A budget anything meets: the plan records every policy's time.
            subprocess.run(["tessera-compile", model, "--target=systolic",
                            f"--accel={accel}", "--precision=auto",
                            "--accuracy-budget=cos:0.5,nrel:1",
                            f"--calibrate={folder}", f"--precision-plan={plan}",
                            "-o", os.path.join(folder, "auto.tsp")],
                           check=True, capture_output=True)
            with open(plan) as f:
                predicted = json.load(f)["nodes"]["/fc/MatMul"]["predicted_time"]
            for policy in ("bf16", "fp8", "int8"):
                program = os.path.join(folder, policy + ".tsp")
                subprocess.run(["tessera-compile", model, "--target=systolic",
                                f"--accel={accel}", f"--precision={policy}",
                                f"--calibrate={folder}", "-o", program]
                               + ([] if policy == "bf16" else
                                  ["--quantize-heads",
                                   "--quantize-first-layers"]),
                               check=True, capture_output=True)
                simulated = cycles(program, accel, data)
                error = predicted[policy] / simulated - 1
                ok = abs(error) <= TOLERANCE
                failed |= not ok
                print(f"{'ok' if ok else 'FAIL'}: {m}x{k}x{n} "
                      f"{os.path.basename(accel)} {policy}: predicted "
                      f"{predicted[policy]:.0f} cycles, simulated {simulated} "
                      f"({error:+.1%})")
    return 1 if failed else 0


def compare(plan_path, accel, wide, planned, data):
    with open(plan_path) as f:
        plan = json.load(f)
    wide_cycles, planned_cycles = cycles(wide, accel, data), cycles(
        planned, accel, data)
    simulated = planned_cycles / wide_cycles
    predicted = plan["predicted_time_ratio"]
    ok = planned_cycles < wide_cycles and abs(
        predicted / simulated - 1) <= PROGRAM_TOLERANCE
    print(f"{'ok' if ok else 'FAIL'}: planned {planned_cycles} cycles against "
          f"{wide_cycles} for bf16: {simulated:.3f} simulated, "
          f"{predicted:.3f} predicted")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) in (6, 7) and sys.argv[1] == "model":
        write_gemm(sys.argv[2], *map(int, sys.argv[3:6]),
                   symbolic_rows=sys.argv[6:] == ["--symbolic-rows"])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "gemms":
        sys.exit(gemms(sys.argv[2]))
    if len(sys.argv) == 7 and sys.argv[1] == "compare":
        sys.exit(compare(*sys.argv[2:]))
    sys.exit(__doc__)
