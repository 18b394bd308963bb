# full_reductions.py - reductions over every axis (ONNX ReduceSum, ReduceMax
# with keepdims = 0 and no axes: one value), for the CUDA target's
# two-launch full reductions, in ONNX's test layout. The values are small
# integers, so every sum is exact in f32 in any order and the outputs must
# equal the float64 references exactly.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, shape, sets):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                    shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for t, (x, y) in enumerate(sets):
        data = os.path.join(folder, f"test_data_set_{t}")
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "X").SerializeToString())
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(
                np.array(y, dtype=np.float32), "Y").SerializeToString())


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    # A symbolic [batch, seq, 48]: 1536, 5328, 48 and 307200 elements (the
    # last in 1024 chunks of 300).
    sets = []
    for batch, seq in [(2, 16), (3, 37), (1, 1), (64, 100)]:
        x = rng.integers(-8, 9, size=(batch, seq, 48)).astype(np.float32)
        sets.append((x, x.astype(np.float64).sum()))
    save(out, "sum_all", [helper.make_node("ReduceSum", ["X"], ["Y"],
                                           keepdims=0)],
         ["batch", "seq", 48], sets)
    # The largest magnitude of a static [300, 40] (an fp8 scale's amax),
    # held by one element near the end.
    x = rng.integers(-8, 9, size=(300, 40)).astype(np.float32)
    x[297, 11] = -100.0
    save(out, "amax_all",
         [helper.make_node("Abs", ["X"], ["A"]),
          helper.make_node("ReduceMax", ["A"], ["Y"], keepdims=0)],
         [300, 40], [(x, np.abs(x).max())])


if __name__ == "__main__":
    main()
