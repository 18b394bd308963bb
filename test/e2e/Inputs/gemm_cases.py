# gemm_cases.py - MatMul and Gemm models whose column counts the CPU's
# widest register tile (48 columns) does not divide, in ONNX's test layout
# (model.onnx, test_data_set_0/input_K.pb, output_0.pb), with float64
# references.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def case(out, name, m, k, n, constant, trans_b=False):
    rng = np.random.default_rng(len(name))
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
    inputs = [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])]
    inits = []
    if constant:
        inits.append(numpy_helper.from_array(b, "B"))
    else:
        inputs.append(
            helper.make_tensor_value_info("B", TensorProto.FLOAT, b.shape))
    node = (helper.make_node("Gemm", ["A", "B"], ["C"], transB=1)
            if trans_b else helper.make_node("MatMul", ["A", "B"], ["C"]))
    graph = helper.make_graph(
        [node], name, inputs,
        [helper.make_tensor_value_info("C", TensorProto.FLOAT, [m, n])], inits)
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), os.path.join(folder, "model.onnx"))
    c = a.astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
    data = [a] if constant else [a, b]
    for i, x in enumerate(data):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"),
                  "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
    with open(os.path.join(folder, "test_data_set_0", "output_0.pb"),
              "wb") as f:
        f.write(numpy_helper.from_array(c.astype(np.float32)).SerializeToString())


def main():
    out = sys.argv[1]
    # 80 = 48 + 32 and 112 = 96 + 16 columns; 96 = 2 x 48 (no split).
    case(out, "const_80", 264, 40, 80, True)
    case(out, "const_112", 16, 72, 112, True)
    case(out, "const_96", 24, 33, 96, True)
    case(out, "input_80", 32, 24, 80, False)
    case(out, "transb_112", 16, 40, 112, True, trans_b=True)


if __name__ == "__main__":
    main()
