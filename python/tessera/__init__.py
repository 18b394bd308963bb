# __init__.py - the tessera package: compile ONNX models in process and run them on NumPy or DLPack tensors.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Tessera from Python.

    import tessera
    model = tessera.compile("model.onnx")            # or bytes, or onnx.ModelProto
    y = model(x)                                      # NumPy in, NumPy out
    outs = model.run({"x": x})                        # by name
    model.signature, model.fusion_report, model.benchmark(100)

Inputs are read in place (NumPy arrays through the buffer protocol, anything
else through ``__dlpack__``, or a DLPack capsule); they must be C-contiguous and of the model's
dtype, or a TypeError/ValueError says why. Outputs are NumPy arrays over the
buffers the model allocated (no copy; ``y.base.address`` is where the model
wrote ``y``); ``numpy.from_dlpack`` and ``torch.from_dlpack`` take them
without a copy either. The GIL is released
while compiling and running, so threads compile and run in parallel.
"""
import json
import os
import statistics
import time

from . import _tessera

__all__ = ["compile", "load", "CompiledModel", "CompileError", "Signature",
           "TensorSpec", "SATURATION_PREFIX"]

#: The name prefix of the outputs ``saturation_counts=True`` adds.
SATURATION_PREFIX = "tessera.saturated:"


class CompileError(Exception):
    """A compile that failed.

    ``diagnostics`` lists every diagnostic as a dict (severity, node,
    op_type, message, location); ``node`` and ``op_type`` are those of the
    first error (None when it concerns no ONNX node)."""

    def __init__(self, message, diagnostics):
        super().__init__(message)
        self.diagnostics = diagnostics
        first = next((d for d in diagnostics if d["severity"] == "error"),
                     diagnostics[0] if diagnostics else None)
        self.node = (first or {}).get("node") or None
        self.op_type = (first or {}).get("op_type") or None


class TensorSpec(tuple):
    """(name, dtype, shape) of an input or output; a dim is an int, the
    name of a symbolic dim (equal names are equal sizes), or None."""

    __slots__ = ()

    def __new__(cls, name, dtype, shape):
        return super().__new__(cls, (name, dtype, tuple(shape)))

    name = property(lambda self: self[0])
    dtype = property(lambda self: self[1])
    shape = property(lambda self: self[2])

    def __repr__(self):
        return f"TensorSpec(name={self.name!r}, dtype={self.dtype!r}, shape={self.shape!r})"


class Signature:
    """The model's inputs and outputs, in order (lists of TensorSpec)."""

    def __init__(self, inputs, outputs):
        self.inputs = [TensorSpec(*t) for t in inputs]
        self.outputs = [TensorSpec(*t) for t in outputs]

    def __repr__(self):
        return f"Signature(inputs={self.inputs!r}, outputs={self.outputs!r})"


def _diagnostics(result):
    return [dict(zip(("severity", "node", "op_type", "message", "location"), d))
            for d in result.diagnostics]


class CompiledModel:
    """A compiled model, loaded in this process.

    Call it with the inputs in order (``model(x, mask)``: one output comes
    back as an array, several as a tuple), or ``run`` it with a dict by
    name (a dict of outputs comes back). Runs may overlap from several
    threads."""

    def __init__(self, model, artifact=None, kind=None, extension=None,
                 fusion_report=None, diagnostics=()):
        self._model = model
        self._run = model.run
        self._artifact = artifact
        self.artifact_kind = kind
        self.artifact_extension = extension
        self.fusion_report = fusion_report
        self.diagnostics = list(diagnostics)
        self.signature = Signature(model.inputs, model.outputs)
        self._input_names = [t.name for t in self.signature.inputs]
        self._output_names = [t.name for t in self.signature.outputs]
        # The counts saturation_counts=True adds follow the model's own
        # outputs; calling the model returns the model's outputs only.
        self._own_outputs = len([n for n in self._output_names
                                 if not n.startswith(SATURATION_PREFIX)])
        self._single = self._own_outputs == 1

    @property
    def device(self):
        """Where the model runs, in words ("host CPU")."""
        return self._model.device

    @property
    def concurrent_runs(self):
        """Whether runs from several threads proceed in parallel (else the
        runtime serializes them)."""
        return self._model.concurrent_runs

    @property
    def artifact(self):
        """The artifact's bytes (None for a model opened from a file)."""
        return self._artifact

    def __call__(self, *inputs):
        outputs = self._run(inputs)[:self._own_outputs]
        return outputs[0] if self._single else tuple(outputs)

    def run(self, inputs):
        """Runs on ``{input name: array}``; returns ``{output name: array}``.
        A model compiled with ``saturation_counts=True`` also returns, per
        quantized activation, ``"tessera.saturated:<node>:<operand>"``: an
        int64 pair (values saturated, values quantized) of this run."""
        if not isinstance(inputs, dict):
            raise TypeError("run() takes a dict of inputs by name; call the "
                            "model to pass them in order")
        unknown = [k for k in inputs if k not in self._input_names]
        if unknown:
            raise ValueError(f"the model has no input {unknown[0]!r} (its "
                             f"inputs: {', '.join(self._input_names)})")
        missing = [k for k in self._input_names if k not in inputs]
        if missing:
            raise ValueError(f"input {missing[0]!r} is missing")
        outputs = self._run([inputs[k] for k in self._input_names])
        return dict(zip(self._output_names, outputs))

    def save(self, path):
        """Writes the artifact (a file tessera.load and the runtime open)."""
        if self._artifact is None:
            raise ValueError("this model was opened from a file; it has no "
                             "artifact in memory")
        with open(path, "wb") as f:
            f.write(self._artifact)

    def close(self):
        """Releases the model; calling it afterwards raises ValueError.
        Arrays it returned stay valid."""
        self._model.close()

    @property
    def closed(self):
        return self._model.closed

    def benchmark(self, n=100, inputs=None, warmup=3):
        """Runs the model ``n`` times on ``inputs`` (a sequence in input
        order; by default zeros of the static shapes) and returns latency
        statistics in microseconds: mean, median, p90, min, max, stdev, n."""
        if n < 1:
            raise ValueError("benchmark needs n >= 1")
        if inputs is None:
            inputs = self._zeros()
        for _ in range(warmup):
            self._run(inputs)
        times = []
        clock = time.perf_counter_ns
        for _ in range(n):
            start = clock()
            self._run(inputs)
            times.append((clock() - start) / 1e3)
        times.sort()
        return {
            "n": n,
            "mean_us": statistics.fmean(times),
            "median_us": statistics.median(times),
            "p90_us": times[min(n - 1, int(0.9 * n))],
            "min_us": times[0],
            "max_us": times[-1],
            "stdev_us": statistics.pstdev(times),
        }

    def _zeros(self):
        import numpy as np
        arrays = []
        for spec in self.signature.inputs:
            if not all(isinstance(d, int) for d in spec.shape):
                raise ValueError(f"input {spec.name!r} has dynamic dims "
                                 f"{spec.shape}; pass inputs=")
            arrays.append(np.zeros(spec.shape, dtype=spec.dtype))
        return arrays

    def __repr__(self):
        state = "closed" if self.closed else self.device
        return f"<tessera.CompiledModel {self.signature!r} on {state}>"


def _model_source(model):
    """('path', str) or ('bytes', bytes, name) for what compile() takes."""
    if isinstance(model, (str, os.PathLike)):
        return ("path", os.fspath(model))
    if isinstance(model, (bytes, bytearray, memoryview)):
        return ("bytes", bytes(model), "<memory>")
    serialize = getattr(model, "SerializeToString", None)
    if callable(serialize):
        name = getattr(getattr(model, "graph", None), "name", "") or "<memory>"
        return ("bytes", serialize(), name)
    raise TypeError("compile() takes a path, the bytes of an ONNX model or "
                    f"an onnx.ModelProto, got {type(model).__name__}")


def compile(model, target="cpu", *, fusion=True, compiler_threads=0,
            artifact=None, dims=None, load_options=None, precision="fp32",
            keep_fp32=(), calibrate=None, calibration_cache=None,
            calibration_method="max", calibration_percentile=99.99,
            fp8_scaling="static", fp8_format="e4m3", allow_tf32=False,
            saturation_counts=False, quantize_heads=False,
            quantize_first_layers=False, **target_options):
    """Compiles an ONNX model and loads it in this process.

    ``model`` is a path, the bytes of a serialized ONNX model, or an
    ``onnx.ModelProto``. ``target`` is a registered target ("cpu",
    "systolic"); the remaining keyword arguments are the target's own
    options (``threads=4``, ``O=2``, ``mcpu="skylake"``, ``accel="small"``).
    ``fusion=False`` compiles one kernel per op; ``compiler_threads`` are
    the compiler's own threads (0: one per core); ``dims`` fixes symbolic
    input dims (``{"batch": 1}``) for targets that need fixed sizes;
    ``load_options`` are the runtime loader's (``{"accel": "small"}``).
    ``precision`` is the precision policy ("fp32", "bf16", "fp16", "fp8",
    "int8"), ``keep_fp32`` ONNX node-name patterns whose ops stay fp32,
    ``calibrate`` a folder in ONNX's test layout whose inputs calibrate the
    policy and ``calibration_cache`` the cache it writes or, without
    ``calibrate``, reads (docs/Precision.md); ``calibration_method`` is how
    calibration turns values into ranges ("max", "percentile" keeping
    ``calibration_percentile`` percent of them, "entropy");
    ``fp8_scaling="current"`` scales fp8's activations by their own amax,
    computed each run, instead of calibrated ranges ("static");
    ``fp8_format="e5m2"`` gives fp8 operands E5M2's range instead of
    E4M3's precision. ``saturation_counts=True`` makes every run count the
    values each int8 or fp8 quantize with a fixed scale saturates
    (``run`` returns them; see CompiledModel.run). Under fp8 and int8,
    output heads and first layers stay fp32 unless ``quantize_heads=True``
    or ``quantize_first_layers=True`` (an error under other policies).
    ``allow_tf32=True`` lets fp32 matmuls run on tensor cores as tf32
    (``target="cuda"``).

    Raises CompileError with the diagnostics when the model does not
    compile."""
    source = _model_source(model)
    options = {k: str(v) for k, v in target_options.items()}
    dims = {str(k): int(v) for k, v in (dims or {}).items()}
    if isinstance(keep_fp32, str):
        keep_fp32 = (keep_fp32,)
    precision_args = _tessera.Precision(
        str(precision), [str(p) for p in keep_fp32],
        os.fspath(calibrate) if calibrate else "",
        os.fspath(calibration_cache) if calibration_cache else "",
        bool(allow_tf32), str(calibration_method),
        float(calibration_percentile), str(fp8_scaling), str(fp8_format),
        bool(saturation_counts), bool(quantize_heads),
        bool(quantize_first_layers))
    common = (target, options, bool(fusion), int(compiler_threads),
              artifact or "", dims, precision_args)
    if source[0] == "path":
        result = _tessera.compile_file(source[1], *common)
    else:
        result = _tessera.compile_bytes(source[1], source[2], *common)
    diagnostics = _diagnostics(result)
    if not result.ok:
        message = result.messages.strip() or "the compile failed"
        raise CompileError(message, diagnostics)
    report = result.fusion_report
    loaded = result.load({str(k): str(v) for k, v in (load_options or {}).items()})
    return CompiledModel(loaded, artifact=result.artifact, kind=result.kind,
                         extension=result.extension,
                         fusion_report=json.loads(report) if report else None,
                         diagnostics=diagnostics)


def load(path, **load_options):
    """Opens an artifact file (a CPU ``.so``, a systolic ``.tsp``) with the
    runtime loader's options (``accel="small"``)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no artifact at {path!r}")
    model = _tessera.load(path,
                          {k: str(v) for k, v in load_options.items()})
    return CompiledModel(model)
