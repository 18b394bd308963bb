#!/usr/bin/env python3
# hostile_onnx.py KIND N OUT - writes a hostile but well-formed ONNX model for
# the resource-limit tests (resource-limits.test):
#   chain N: N elementwise nodes in one chain (Neg and Relu in turn)
#   negchain N: N Neg nodes in one chain (the identity for an even N)
#   nest N:  a node attribute holding a graph whose node holds a graph ...,
#            N levels deep
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import sys

from onnx import TensorProto, helper

kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])
y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])
if kind in ("chain", "negchain"):
    nodes, prev = [], "X"
    for i in range(n):
        result = "Y" if i == n - 1 else f"t{i}"
        op = "Relu" if i % 2 and kind == "chain" else "Neg"
        nodes.append(helper.make_node(op, [prev], [result], name=f"n{i}"))
        prev = result
elif kind == "nest":
    inner = helper.make_graph([], "g0", [], [])
    for i in range(n):
        node = helper.make_node("Identity", ["a"], ["b"], name=f"n{i}")
        node.attribute.append(helper.make_attribute("body", inner))
        inner = helper.make_graph([node], f"g{i + 1}", [], [])
    top = helper.make_node("Relu", ["X"], ["Y"], name="top")
    top.attribute.append(helper.make_attribute("body", inner))
    nodes = [top]
else:
    sys.exit(f"unknown kind {kind}")
graph = helper.make_graph(nodes, kind, [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(out, "wb") as f:
    f.write(model.SerializeToString())
