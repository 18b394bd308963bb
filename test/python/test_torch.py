# test_torch.py - tessera.torch: modules on torch tensors through DLPack, dynamic axes, errors, the torch.compile backend.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import pytest
import torch
import torch.utils.dlpack
from torch import nn

import tessera
import tessera.torch


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class TwoOutputs(nn.Module):
    def forward(self, a, b):
        return a + b, (a * b).sum(dim=-1)


def test_compile_module_and_dynamic_batch():
    module = MLP().eval()
    compiled = tessera.torch.compile(module, (torch.randn(2, 8),),
                                     dynamic_axes={"x": {0: "batch"}})
    assert compiled.compiled.signature.inputs[0].shape == ("batch", 8)
    for batch in (2, 5):
        x = torch.randn(batch, 8)
        with torch.no_grad():
            expected = module(x)
        torch.testing.assert_close(compiled(x), expected, rtol=1e-5, atol=1e-5)


def test_dynamic_axes_by_position_and_tuple_outputs():
    compiled = tessera.torch.compile(TwoOutputs(), (torch.ones(2, 3), torch.ones(2, 3)),
                                     dynamic_axes={0: {0: "n"}, 1: {0: "n"}})
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    total, dot = compiled(a, b)
    torch.testing.assert_close(total, a + b)
    torch.testing.assert_close(dot, (a * b).sum(dim=-1), rtol=1e-5, atol=1e-5)


def test_tensors_cross_without_copies():
    module = MLP().eval()
    compiled = tessera.torch.compile(module, (torch.randn(2, 8),))
    x = torch.randn(2, 8)
    # The input: what the C API is handed is the tensor's own memory.
    assert compiled.compiled._model.input_addresses([x]) == [x.data_ptr()]
    # The module hands tensors over as DLPack capsules: the same memory.
    capsule = torch.utils.dlpack.to_dlpack(x)
    assert compiled.compiled._model.input_addresses([capsule]) == [x.data_ptr()]
    with pytest.raises(ValueError, match="a DLPack capsule is consumed once"):
        compiled.compiled._model.input_addresses([capsule])
    # The output: a tensor over the buffer the model allocated. Watch the
    # arrays the C API's run returns on their way to torch.
    seen = []
    run = compiled._run

    def spy(arrays):
        outputs = run(arrays)
        seen.extend(outputs)
        return outputs

    compiled._run = spy
    y = compiled(x)
    assert len(seen) == 1 and isinstance(seen[0].base, tessera._tessera.Buffer)
    assert y.data_ptr() == seen[0].base.address
    with torch.no_grad():
        expected = module(x)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)


def test_outputs_go_to_torch_through_dlpack():
    """torch.from_dlpack on a returned NumPy array shares the model's
    buffer, and the tensor keeps it alive once the array is gone."""
    import numpy as np
    from conftest import make_model, tensor
    from onnx import TensorProto, helper
    model = tessera.compile(make_model(
        [helper.make_node("Neg", ["X"], ["Y"], name="neg")],
        [tensor("X", TensorProto.FLOAT, [3])], [tensor("Y", TensorProto.FLOAT, [3])]))
    y = model(np.array([1, 2, 3], np.float32))
    address = y.base.address
    t = torch.from_dlpack(y)
    assert t.data_ptr() == address
    del y
    for _ in range(20):
        model(np.array([7, 8, 9], np.float32))
    assert t.data_ptr() == address
    assert t.tolist() == [-1.0, -2.0, -3.0]


def test_inputs_that_need_grad_and_bad_inputs():
    module = MLP().eval()
    compiled = tessera.torch.compile(module, (torch.randn(2, 8),))
    x = torch.randn(2, 8, requires_grad=True)
    with torch.no_grad():
        expected = module(x)
    torch.testing.assert_close(compiled(x), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="input 'x' must be float32, got float64"):
        compiled(torch.randn(2, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match="input 'x' is not contiguous"):
        compiled(torch.randn(8, 2).t())
    with pytest.raises(ValueError, match="input 'x' dimension 0 must be 2, got 3"):
        compiled(torch.randn(3, 8))


class Compare(nn.Module):
    def forward(self, x):
        return x > 0, x * 2


def test_bool_outputs():
    compiled = tessera.torch.compile(Compare(), (torch.randn(5),))
    x = torch.tensor([-1.0, 0.0, 2.0, -3.0, 4.0])
    positive, doubled = compiled(x)
    assert positive.dtype == torch.bool
    assert positive.tolist() == [False, False, True, False, True]
    assert doubled.tolist() == [-2.0, 0.0, 4.0, -6.0, 8.0]


def test_bad_tensors_raise_clear_errors():
    compiled = tessera.torch.compile(TwoOutputs(), (torch.ones(2, 3), torch.ones(2, 3)),
                                     dynamic_axes={"a": {0: "n"}, "b": {0: "n"}})
    a = torch.ones(4, 3)
    with pytest.raises(ValueError, match="input 'a' must have rank 2, got 1"):
        compiled(torch.ones(3), a)
    with pytest.raises(ValueError, match=r"input 'b' dimension 0 \('n'\) is 5 but another input set it to 4"):
        compiled(a, torch.ones(5, 3))
    with pytest.raises(ValueError, match="input 'b' dimension 1 must be 3, got 2"):
        compiled(a, torch.ones(4, 2))
    with pytest.raises(TypeError, match="input 'b' must be float32, got int64"):
        compiled(a, torch.ones(4, 3, dtype=torch.int64))
    with pytest.raises(ValueError, match="input 'a' is not contiguous"):
        compiled(torch.ones(3, 8)[:, ::2].t(), a)
    total, _ = compiled(a, a)
    compiled.compiled.close()
    with pytest.raises(ValueError, match="the model is closed"):
        compiled(a, a)
    # What it returned stays valid.
    assert torch.equal(total, a + a)


def test_unknown_dynamic_axis_name():
    with pytest.raises(ValueError, match="dynamic_axes names 'y', which is no input"):
        tessera.torch.compile(MLP(), (torch.randn(2, 8),), dynamic_axes={"y": {0: "b"}})


@pytest.mark.skipif(int(torch.__version__.split(".")[0]) < 2,
                    reason="torch.compile backends need torch 2 or later")
def test_torch_compile_backend():
    module = MLP().eval()
    fast = torch.compile(module, backend="tessera")
    x = torch.randn(2, 8)
    with torch.no_grad():
        torch.testing.assert_close(fast(x), module(x), rtol=1e-5, atol=1e-5)
