# torch.py - tessera.torch: compiles a torch.nn.Module through ONNX and runs it on torch tensors without copies.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch front end.

    import tessera.torch
    fast = tessera.torch.compile(module, (x,), dynamic_axes={"x": {0: "batch"}})
    y = fast(x)                      # torch tensors in and out

The module is exported with ``torch.onnx.export`` (opset 17) into memory
and compiled with ``tessera.compile``; the result is a ``torch.nn.Module``
whose inputs are read in place through DLPack and whose outputs are
tensors over the buffers the model allocated (torch.from_numpy of the
arrays tessera returns: no copy). Inputs must be contiguous
CPU tensors of the exported dtypes (a ValueError/TypeError says otherwise);
gradients do not flow through it. With torch 2 or later,
``torch.compile(module, backend="tessera")`` takes the same path.
"""
import inspect
import io

import torch as _torch
import torch.utils.dlpack as _dlpack

import tessera as _tessera

_Tensor = _torch.Tensor
_to_dlpack = _dlpack.to_dlpack
_from_numpy = _torch.from_numpy

__all__ = ["compile", "TesseraModule", "export"]

OPSET = 17


def _input_names(module, count):
    """The forward()'s parameter names when they match the inputs."""
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) >= count:
            return [p.name for p in params[:count]]
    except (TypeError, ValueError):
        pass
    return [f"input_{i}" for i in range(count)]


def export(module, example_inputs, dynamic_axes=None, input_names=None):
    """The module as ONNX bytes (opset 17), its input names and the number
    of outputs. ``dynamic_axes`` maps an input (by name or position) to
    ``{axis: "symbolic name"}``."""
    if isinstance(example_inputs, _torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    names = list(input_names or _input_names(module, len(example_inputs)))
    with _torch.no_grad():
        reference = module(*example_inputs)
    flat = reference if isinstance(reference, (tuple, list)) else (reference,)
    output_names = [f"output_{i}" for i in range(len(flat))]
    axes = {}
    for key, value in (dynamic_axes or {}).items():
        name = names[key] if isinstance(key, int) else key
        if name not in names and name not in output_names:
            raise ValueError(f"dynamic_axes names {key!r}, which is no input "
                             f"(inputs: {', '.join(names)})")
        axes[name] = value
    # Outputs share the inputs' symbolic dims where the exporter can tell;
    # unnamed output dims stay dynamic.
    buffer = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        _torch.onnx.export(module, example_inputs, buffer,
                           input_names=names, output_names=output_names,
                           dynamic_axes=axes or None, opset_version=OPSET,
                           do_constant_folding=True)
    finally:
        module.train(was_training)
    return buffer.getvalue(), names, isinstance(reference, (tuple, list))


class TesseraModule(_torch.nn.Module):
    """A module compiled by Tessera: takes and returns torch tensors (CPU),
    passed through DLPack without copies. ``compiled`` is the underlying
    tessera.CompiledModel (signature, fusion report, benchmark)."""

    def __init__(self, compiled, returns_tuple):
        super().__init__()
        self.compiled = compiled
        self._run = compiled._run
        self._tuple = returns_tuple

    def forward(self, *inputs):
        # Tensors go in as DLPack capsules (to_dlpack is a C function,
        # cheaper per call than Tensor.__dlpack__); outputs come back as
        # tensors over the NumPy arrays over the model's buffers
        # (torch.from_numpy shares them, and takes bool, which NumPy 1.24
        # cannot export through DLPack).
        arrays = [_to_dlpack(t.detach() if t.requires_grad else t)
                  if isinstance(t, _Tensor) else t for t in inputs]
        outputs = [_from_numpy(a) for a in self._run(arrays)]
        if self._tuple or len(outputs) != 1:
            return tuple(outputs)
        return outputs[0]


def compile(module, example_inputs, dynamic_axes=None, target="cpu",
            **options):
    """Exports ``module`` on ``example_inputs`` (a tensor or a tuple of
    them) and compiles it for ``target`` with ``options`` (those of
    tessera.compile). ``dynamic_axes`` maps inputs, by name (the forward()
    parameter names) or position, to ``{axis: "name"}``."""
    data, _, returns_tuple = export(module, example_inputs, dynamic_axes)
    compiled = _tessera.compile(data, target=target, **options)
    return TesseraModule(compiled, returns_tuple)


def _torch_major():
    try:
        return int(_torch.__version__.split(".")[0])
    except ValueError:
        return 0


def tessera_backend(graph_module, example_inputs):
    """A torch.compile backend (torch 2 or later): the FX graph goes through
    torch.onnx.export and Tessera like any module."""
    compiled = compile(graph_module, tuple(example_inputs))

    def run(*args):
        result = compiled(*args)
        return result if isinstance(result, tuple) else (result,)

    return run


if _torch_major() >= 2:
    try:
        from torch._dynamo import register_backend as _register
        _register(name="tessera")(tessera_backend)
    except (ImportError, AttributeError):  # a torch 2 without dynamo
        pass
