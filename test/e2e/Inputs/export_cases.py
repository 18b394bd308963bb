# export_cases.py - the shared part of the test generators that export a
# PyTorch module and write PyTorch's results at several input sizes in
# ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""write_case(out, name, module, sizes, dynamic, opset): exports `module`
(in eval mode) to OUT/NAME/model.onnx with input `x` and output `y`,
`dynamic` the input's symbolic axes ({axis: name} or None), and writes
test_data_set_I for each input size I of `sizes`. Returns the model's
sorted op types."""
import os

import onnx
import torch
from onnx import numpy_helper


def write_case(out, name, module, sizes, dynamic=None, opset=14):
    module = module.eval()
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(module, torch.randn(*sizes[0]), path,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": dynamic} if dynamic else None,
                      opset_version=opset)
    for index, size in enumerate(sizes):
        x = torch.randn(*size)
        with torch.no_grad():
            y = module(x)
        data = os.path.join(folder, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        onnx.save_tensor(numpy_helper.from_array(x.numpy(), "x"),
                         os.path.join(data, "input_0.pb"))
        onnx.save_tensor(numpy_helper.from_array(y.numpy(), "y"),
                         os.path.join(data, "output_0.pb"))
    return sorted({n.op_type for n in onnx.load(path).graph.node})
