# batchnorm_fold.py - writes Conv/Gemm + BatchNormalization models and PyTorch's numbers for batchnorm-fold.test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

out = sys.argv[1]
r = np.random.RandomState(4)
x = r.randn(1, 3, 6, 6).astype(np.float32)
w = r.randn(4, 3, 3, 3).astype(np.float32)
b = r.randn(4).astype(np.float32)
scale = (r.rand(4) + 0.5).astype(np.float32)
shift = r.randn(4).astype(np.float32)
mean = r.randn(4).astype(np.float32)
var = (r.rand(4) + 0.1).astype(np.float32)
inits = [numpy_helper.from_array(v, n) for v, n in
         [(w, "W"), (b, "B"), (scale, "s"), (shift, "t"), (mean, "m"),
          (var, "v")]]
conv = helper.make_node("Conv", ["X", "W", "B"], ["C"], name="conv",
                        pads=[1, 1, 1, 1])
bn = helper.make_node("BatchNormalization", ["C", "s", "t", "m", "v"], ["Y"],
                      name="bn", epsilon=1e-3)
tensor = lambda n: helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT,
                                                 [1, 4, 6, 6])
inp = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 3, 6, 6])
for name, outputs in [("fold", [tensor("Y")]),
                      ("shared", [tensor("Y"), tensor("C")])]:
    graph = helper.make_graph([conv, bn], name, [inp], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
c = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                               torch.from_numpy(b), padding=1)
y = torch.nn.functional.batch_norm(c, torch.from_numpy(mean),
                                   torch.from_numpy(var),
                                   torch.from_numpy(scale),
                                   torch.from_numpy(shift), eps=1e-3)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), y.numpy())
np.save(os.path.join(out, "c.npy"), c.numpy())

# Gemm (transB, bias) + BatchNormalization over its 3 output features.
xg = r.randn(2, 5).astype(np.float32)
wg = r.randn(3, 5).astype(np.float32)
cg = r.randn(3).astype(np.float32)
sg, tg = (r.rand(3) + 0.5).astype(np.float32), r.randn(3).astype(np.float32)
mg, vg = r.randn(3).astype(np.float32), (r.rand(3) + 0.1).astype(np.float32)
inits = [numpy_helper.from_array(v, n) for v, n in
         [(wg, "W"), (cg, "c"), (sg, "s"), (tg, "t"), (mg, "m"), (vg, "v")]]
gemm = helper.make_node("Gemm", ["X", "W", "c"], ["G"], name="gemm", transB=1)
bn = helper.make_node("BatchNormalization", ["G", "s", "t", "m", "v"], ["Y"],
                      name="bn")
graph = helper.make_graph(
    [gemm, bn], "gemm",
    [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 5])],
    [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [2, 3])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "gemm.onnx"))
g = torch.nn.functional.linear(torch.from_numpy(xg), torch.from_numpy(wg),
                               torch.from_numpy(cg))
yg = torch.nn.functional.batch_norm(g, torch.from_numpy(mg),
                                    torch.from_numpy(vg), torch.from_numpy(sg),
                                    torch.from_numpy(tg))
np.save(os.path.join(out, "xg.npy"), xg)
np.save(os.path.join(out, "yg.npy"), yg.numpy())
