# test_compile.py - tessera.compile, CompiledModel and tessera.load: inputs, outputs, errors, threads.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import json
import os
import resource
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import tessera
from conftest import make_model, tensor

X = np.arange(6, dtype=np.float32).reshape(2, 3)
EXPECTED = 2 * X + 1


def test_compile_from_model_proto_bytes_and_path(affine, tmp_path):
    path = tmp_path / "affine.onnx"
    onnx.save(affine, str(path))
    for source in (affine, affine.SerializeToString(), str(path), path):
        model = tessera.compile(source)
        np.testing.assert_array_equal(model(X), EXPECTED)


def test_signature(dynamic_add):
    model = tessera.compile(dynamic_add)
    sig = model.signature
    assert [(t.name, t.dtype, t.shape) for t in sig.inputs] == [
        ("A", "float32", ("batch", 4)), ("B", "float32", ("batch", 4))]
    assert [(t.name, t.dtype, t.shape) for t in sig.outputs] == [
        ("Z", "float32", ("batch", 4)), ("S", "float32", ())]
    assert model.device == "host CPU"


def test_call_and_run_by_name(dynamic_add):
    model = tessera.compile(dynamic_add)
    a = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    b = np.ones((5, 4), np.float32)
    z, s = model(a, b)
    np.testing.assert_allclose(z, a + b, rtol=1e-6)
    np.testing.assert_allclose(s, a.sum(), rtol=1e-5)
    outs = model.run({"B": b, "A": a})
    assert list(outs) == ["Z", "S"]
    np.testing.assert_array_equal(outs["Z"], z)
    # Another size through the same compile.
    z3, _ = model(a[:3], b[:3])
    np.testing.assert_allclose(z3, a[:3] + b[:3], rtol=1e-6)


def test_fusion_report_is_a_dict(affine):
    model = tessera.compile(affine)
    report = model.fusion_report
    assert report["target"] == "cpu"
    assert isinstance(report["regions"], list) and report["regions"]
    assert report["regions"][0]["kind"] == "elementwise"
    assert "rejected" in report
    unfused = tessera.compile(affine, fusion=False)
    assert unfused.fusion_report is None
    np.testing.assert_array_equal(unfused(X), EXPECTED)


def test_target_options_and_compiler_threads(affine):
    model = tessera.compile(affine, threads=1, O=1, compiler_threads=1)
    np.testing.assert_array_equal(model(X), EXPECTED)


def test_systolic_target(affine):
    model = tessera.compile(affine, target="systolic")
    assert model.device.startswith("systolic simulator")
    assert model.artifact_extension == ".tsp"
    np.testing.assert_allclose(model(X), EXPECTED, rtol=1e-2)


# --- errors -----------------------------------------------------------------

def test_compile_error_names_node_and_op_type():
    nodes = [helper.make_node("Relu", ["X"], ["R"], name="relu"),
             helper.make_node("NonZero", ["R"], ["Y"], name="find")]
    model = make_model(nodes, [tensor("X", TensorProto.FLOAT, [4])],
                       [tensor("Y", TensorProto.INT64, [1, "n"])])
    with pytest.raises(tessera.CompileError) as info:
        tessera.compile(model)
    error = info.value
    assert error.node == "find"
    assert error.op_type == "NonZero"
    assert error.diagnostics[0]["severity"] == "error"
    assert "unsupported ONNX operator 'NonZero'" in error.diagnostics[0]["message"]
    assert "node 'find' (NonZero)" in str(error)


def test_compile_errors_are_exceptions_not_output(affine, capfd):
    with pytest.raises(tessera.CompileError, match="unknown target 'tpu'") as info:
        tessera.compile(affine, target="tpu")
    assert info.value.node is None and info.value.op_type is None
    with pytest.raises(tessera.CompileError, match="no target has an option --colour"):
        tessera.compile(affine, colour="blue")
    with pytest.raises(tessera.CompileError, match="-O7 is not a level"):
        tessera.compile(affine, O=7)
    with pytest.raises(tessera.CompileError):
        tessera.compile(b"this is not an ONNX model")
    with pytest.raises(tessera.CompileError, match="cannot|no such|No such"):
        tessera.compile("/no/such/model.onnx")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_linker_messages_come_back_in_the_error(affine, tmp_path, monkeypatch, capfd):
    """A CPU library is linked by clang-22, run as a separate program; what
    it prints comes back in the CompileError, not on this process's
    stdout or stderr."""
    fake = tmp_path / "bin" / "clang-22"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n"
                    "echo 'ld.lld: error: the fake linker refuses' >&2\n"
                    "echo 'and says so on stdout too'\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    capfd.readouterr()
    with pytest.raises(tessera.CompileError, match="linking '.*' failed") as info:
        tessera.compile(affine)
    message = str(info.value)
    assert "ld.lld: error: the fake linker refuses" in message
    assert "and says so on stdout too" in message
    assert info.value.diagnostics[0]["severity"] == "error"
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_compile_rejects_what_is_no_model():
    with pytest.raises(TypeError, match="path, the bytes of an ONNX model"):
        tessera.compile(42)


def test_wrong_dtype_is_a_type_error(compiled_affine):
    with pytest.raises(TypeError, match="input 'X' must be float32, got float64"):
        compiled_affine(X.astype(np.float64))
    with pytest.raises(TypeError, match="input 'X' must be float32, got int64"):
        compiled_affine(X.astype(np.int64))
    with pytest.raises(TypeError, match="must be a NumPy array, an object with __dlpack__ or a DLPack capsule, got list"):
        compiled_affine(X.tolist())


def test_wrong_rank_and_shape_are_value_errors(compiled_affine):
    with pytest.raises(ValueError, match="input 'X' must have rank 2, got 1"):
        compiled_affine(X.reshape(6))
    with pytest.raises(ValueError, match="input 'X' dimension 1 must be 3, got 2"):
        compiled_affine(np.zeros((2, 2), np.float32))


def test_symbolic_dims_must_agree(dynamic_add):
    model = tessera.compile(dynamic_add)
    with pytest.raises(ValueError, match=r"input 'B' dimension 0 \('batch'\) is 3 but another input set it to 2"):
        model(np.zeros((2, 4), np.float32), np.zeros((3, 4), np.float32))


def test_non_contiguous_input_is_a_value_error(compiled_affine):
    wide = np.zeros((2, 6), np.float32)
    with pytest.raises(ValueError, match="input 'X' is not C-contiguous"):
        compiled_affine(wide[:, ::2])
    with pytest.raises(ValueError, match="not C-contiguous"):
        compiled_affine(np.asfortranarray(np.zeros((2, 3), np.float32)))


def test_wrong_input_count_and_names(compiled_affine):
    with pytest.raises(TypeError, match=r"takes 1 inputs \(X\), got 2"):
        compiled_affine(X, X)
    with pytest.raises(ValueError, match="has no input 'x'"):
        compiled_affine.run({"x": X})
    with pytest.raises(ValueError, match="input 'X' is missing"):
        compiled_affine.run({})
    with pytest.raises(TypeError, match="takes a dict"):
        compiled_affine.run([X])


def test_bad_inputs_never_crash(dynamic_add, compiled_affine):
    model = tessera.compile(dynamic_add)
    # An empty batch runs and gives empty outputs (and a zero sum).
    z, s = model(np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32))
    assert z.shape == (0, 4) and float(s) == 0.0
    with pytest.raises(ValueError, match="input 'X' must have rank 2, got 9"):
        compiled_affine(np.zeros((1,) * 9, np.float32))
    with pytest.raises(ValueError, match="input 'X' must have rank 2, got 0"):
        compiled_affine(np.float32(1.0))
    with pytest.raises(TypeError, match="input 'X' must be float32, got bool"):
        compiled_affine(np.zeros((2, 3), bool))
    with pytest.raises(TypeError, match="input 'A' must be float32, got float16"):
        model(np.zeros((2, 4), np.float16), np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match="got NoneType"):
        compiled_affine(None)
    # The model still runs after every refusal.
    np.testing.assert_array_equal(compiled_affine(X), EXPECTED)


def test_closed_model(affine):
    model = tessera.compile(affine)
    y = model(X)
    model.close()
    assert model.closed
    with pytest.raises(ValueError, match="the model is closed"):
        model(X)
    with pytest.raises(ValueError, match="the model is closed"):
        model.device
    # What it returned stays valid.
    np.testing.assert_array_equal(y, EXPECTED)


def test_readonly_input_is_fine(compiled_affine):
    x = X.copy()
    x.flags.writeable = False
    np.testing.assert_array_equal(compiled_affine(x), EXPECTED)


# --- zero copy --------------------------------------------------------------

def test_outputs_are_the_models_buffers(compiled_affine):
    y = compiled_affine(X)
    # A view of the buffer the C API handed over (tessera_model_run_nocopy),
    # not a NumPy copy: the array's base is that buffer and the array's data
    # pointer is where the model wrote the output.
    assert not y.flags.owndata
    assert isinstance(y.base, tessera._tessera.Buffer)
    assert y.ctypes.data == y.base.address
    assert y.base.nbytes == y.nbytes == 6 * 4
    assert y.flags.c_contiguous and y.flags.writeable
    # Each run hands over a buffer of its own; earlier outputs stay as
    # they were.
    z = compiled_affine(X + 1)
    assert z.ctypes.data != y.ctypes.data
    np.testing.assert_array_equal(y, EXPECTED)
    np.testing.assert_array_equal(z, EXPECTED + 2)


def test_outputs_export_dlpack_without_copies(compiled_affine):
    y = compiled_affine(X)
    address = y.base.address
    assert y.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    capsule = y.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule" and "dltensor" in repr(capsule)
    del capsule  # an unconsumed capsule frees its reference
    again = np.from_dlpack(y)
    assert again.ctypes.data == address
    # The consumer keeps the model's buffer alive once the array is gone.
    del y
    for _ in range(20):
        compiled_affine(X + 7)
    assert again.ctypes.data == address
    np.testing.assert_array_equal(again, EXPECTED)


def test_inputs_are_the_callers_memory(compiled_affine, dynamic_add):
    """The address run() hands the C API for each input is the caller's
    own data pointer, also for a view into a larger array and for an
    object that only speaks DLPack."""
    x = X.copy()
    assert compiled_affine._model.input_addresses([x]) == [x.ctypes.data]
    big = np.arange(40, dtype=np.float32).reshape(10, 4)
    view = big[3:6]  # contiguous rows 3..5, starting 48 bytes in
    model = tessera.compile(dynamic_add)
    addresses = model._model.input_addresses([view, big])
    assert addresses == [big.ctypes.data + 48, big.ctypes.data]
    assert compiled_affine._model.input_addresses([DLPackOnly(x)]) == [x.ctypes.data]
    # The same checks as a run.
    with pytest.raises(ValueError, match="not C-contiguous"):
        compiled_affine._model.input_addresses([np.zeros((2, 6), np.float32)[:, ::2]])


def test_inputs_are_read_in_place(reduce_all):
    """A 256 MiB input (resident: every page written) adds no 256 MiB copy
    to the peak memory."""
    model = tessera.compile(reduce_all)
    x = np.ones(64 << 20, np.float32)
    x[-1] = 3  # the maximum shows the model read the input to its end
    model(x[-16:])  # warm: the model's own allocations happen here
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s = model(x)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert float(s) == 3.0
    assert (after - before) * 1024 < (32 << 20), (before, after)


def test_inputs_are_not_modified(dynamic_add):
    model = tessera.compile(dynamic_add)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = a.copy()
    keep = (a.copy(), b.copy())
    model(a, b)
    np.testing.assert_array_equal(a, keep[0])
    np.testing.assert_array_equal(b, keep[1])


class DLPackOnly:
    """Something with __dlpack__ and no buffer protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_inputs(compiled_affine):
    np.testing.assert_array_equal(compiled_affine(DLPackOnly(X)), EXPECTED)
    with pytest.raises(TypeError, match="input 'X' must be float32, got float64"):
        compiled_affine(DLPackOnly(X.astype(np.float64)))
    wide = np.zeros((2, 6), np.float32)
    with pytest.raises(ValueError, match="input 'X' is not contiguous"):
        compiled_affine(DLPackOnly(wide[:, ::2]))


# --- files, benchmark, threads ----------------------------------------------

def test_save_and_load(compiled_affine, tmp_path):
    path = tmp_path / "affine.so"
    compiled_affine.save(path)
    loaded = tessera.load(path)
    assert loaded.artifact is None
    np.testing.assert_array_equal(loaded(X), EXPECTED)
    with pytest.raises(FileNotFoundError):
        tessera.load(tmp_path / "missing.so")
    (tmp_path / "model.txt").write_text("hello")
    with pytest.raises(ValueError, match="not an artifact Tessera can open"):
        tessera.load(tmp_path / "model.txt")
    with pytest.raises(ValueError, match="'colour' is not an option"):
        tessera.load(path, colour="blue")


def test_benchmark(compiled_affine, dynamic_add):
    stats = compiled_affine.benchmark(20)
    assert stats["n"] == 20
    assert 0 < stats["min_us"] <= stats["median_us"] <= stats["max_us"]
    assert stats["min_us"] <= stats["mean_us"] <= stats["max_us"]
    with pytest.raises(ValueError, match="dynamic dims"):
        tessera.compile(dynamic_add).benchmark(5)
    with pytest.raises(ValueError, match="n >= 1"):
        compiled_affine.benchmark(0)


def test_gil_is_released_while_compiling(affine):
    """Another Python thread makes progress while a compile runs."""
    done = threading.Event()
    ticks = []

    def count():
        while not done.is_set():
            ticks.append(1)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = len(ticks)
        tessera.compile(affine)
        during = len(ticks) - before
    finally:
        done.set()
        counter.join()
    assert during > 1000


def test_gil_is_released_while_running(reduce_all):
    model = tessera.compile(reduce_all)
    x = np.ones(32 << 20, np.float32)
    done = threading.Event()
    ticks = []

    def count():
        while not done.is_set():
            ticks.append(1)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = len(ticks)
        for _ in range(3):
            model(x)
        during = len(ticks) - before
    finally:
        done.set()
        counter.join()
    assert during > 100


def test_compiles_on_threads(affine, dynamic_add):
    results = {}

    def work(key, model):
        results[key] = tessera.compile(model)

    threads = [threading.Thread(target=work, args=(i, m))
               for i, m in enumerate([affine, dynamic_add, affine])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(results[0](X), EXPECTED)
    np.testing.assert_array_equal(results[2](X), EXPECTED)


def _linear_model():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="/fc/MatMul"),
         helper.make_node("Softmax", ["y"], ["z"], name="/act/Softmax",
                          axis=-1)],
        [tensor("x", TensorProto.FLOAT, [4, 16])],
        [tensor("z", TensorProto.FLOAT, [4, 8])],
        [onnx.numpy_helper.from_array(w, "w")])
    return model, w


def _write_samples(folder, count):
    """`count` [4, 16] standard normal samples of input x in ONNX's test
    layout under `folder` (calibration's)."""
    for i in range(count):
        data = folder / f"test_data_set_{i}"
        data.mkdir(parents=True)
        sample = np.random.default_rng(10 + i).standard_normal((4, 16))
        (data / "input_0.pb").write_bytes(onnx.numpy_helper.from_array(
            sample.astype(np.float32), "x").SerializeToString())


def test_precision_policies(tmp_path):
    model, w = _linear_model()
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    logits = x.astype(np.float64) @ w
    reference = np.exp(logits - logits.max(-1, keepdims=True))
    reference /= reference.sum(-1, keepdims=True)
    exact = tessera.compile(model)(x)
    narrow = tessera.compile(model, precision="bf16")(x)
    np.testing.assert_allclose(exact, reference, rtol=1e-5, atol=1e-6)
    # bf16 operands round (8 bits): close to fp32, not equal to it.
    assert np.abs(narrow - reference).max() < 2e-2
    assert np.abs(narrow - exact).max() > 0
    kept = tessera.compile(model, precision="bf16", keep_fp32="/fc/.*")(x)
    np.testing.assert_allclose(kept, exact, rtol=1e-6, atol=1e-7)
    # int8 needs calibration: samples in ONNX's test layout.
    _write_samples(tmp_path / "calib", 8)
    cache = tmp_path / "cache.json"
    int8 = tessera.compile(model, precision="int8", calibrate=tmp_path / "calib",
                           calibration_cache=cache,
                           quantize_first_layers=True)(x)
    assert cache.exists()
    assert np.abs(int8 - exact).max() > 0
    cosine = float((int8 * reference).sum() /
                   np.sqrt((int8 ** 2).sum() * (reference ** 2).sum()))
    assert cosine > 0.999
    # The calibration method: entropy writes it and each range in the cache.
    clipped = tessera.compile(model, precision="int8",
                              calibrate=tmp_path / "calib",
                              calibration_cache=cache,
                              calibration_method="entropy",
                              quantize_first_layers=True)(x)
    table = json.loads(cache.read_text())
    assert table["method"] == "entropy"
    assert all(0 < t["range"] <= t["amax"] for t in table["tensors"].values())
    cosine = float((clipped * reference).sum() /
                   np.sqrt((clipped ** 2).sum() * (reference ** 2).sum()))
    assert cosine > 0.999
    # By default the first layer (the matmul the input reaches directly)
    # stays fp32 under 8-bit policies, as output heads do.
    first = tessera.compile(model, precision="int8",
                            calibrate=tmp_path / "calib")(x)
    np.testing.assert_allclose(first, exact, rtol=1e-6, atol=1e-7)
    with pytest.raises(tessera.CompileError,
                       match="unknown calibration method 'mse'"):
        tessera.compile(model, precision="int8", calibrate=tmp_path / "calib",
                        calibration_method="mse")


def test_fp8_current_scaling(tmp_path):
    """fp8_scaling="current" needs no calibration: each run scales the
    activation by its own amax. Inputs 8x larger than the calibration
    samples saturate static scales, not current ones."""
    model, w = _linear_model()
    _write_samples(tmp_path / "calib", 4)
    x = 8 * np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    logits = x.astype(np.float64) @ w
    reference = np.exp(logits - logits.max(-1, keepdims=True))
    reference /= reference.sum(-1, keepdims=True)

    def cosine(y):
        return float((y * reference).sum() /
                     np.sqrt((y ** 2).sum() * (reference ** 2).sum()))

    current = tessera.compile(model, precision="fp8", fp8_scaling="current",
                              quantize_first_layers=True)(x)
    static = tessera.compile(model, precision="fp8",
                             calibrate=tmp_path / "calib",
                             quantize_first_layers=True)(x)
    exact = tessera.compile(model)(x)
    assert np.abs(current - exact).max() > 0
    assert cosine(current) > 0.999
    assert cosine(static) < cosine(current)
    # saturation_counts=True: each run says how many values the static
    # scale clipped, as the calibrated range predicts; calling the model
    # still returns its own output only.
    cache = tmp_path / "fp8_cache.json"
    counted = tessera.compile(model, precision="fp8",
                              calibrate=tmp_path / "calib",
                              calibration_cache=cache, saturation_counts=True,
                              quantize_first_layers=True)
    np.testing.assert_array_equal(counted(x), static)
    outputs = counted.run({counted.signature.inputs[0].name: x})
    counts = {k[len(tessera.SATURATION_PREFIX):]: v for k, v in outputs.items()
              if k.startswith(tessera.SATURATION_PREFIX)}
    (key, count), = counts.items()
    amax = json.loads(cache.read_text())["tensors"][key]["amax"]
    scale = np.float32(amax / 448.0)
    expected = int((np.abs(x / scale) > 448).sum())
    assert expected > 0
    assert count.dtype == np.int64 and list(count) == [expected, x.size]
    with pytest.raises(tessera.CompileError,
                       match="--fp8-scaling takes static or current"):
        tessera.compile(model, precision="fp8", fp8_scaling="delayed")
    # E5M2 operands: fewer mantissa bits, still close.
    wide = tessera.compile(model, precision="fp8", fp8_scaling="current",
                           fp8_format="e5m2", quantize_first_layers=True)(x)
    assert np.abs(wide - current).max() > 0
    assert cosine(wide) > 0.99


def test_precision_errors_are_compile_errors():
    model, _ = _linear_model()
    with pytest.raises(tessera.CompileError, match="unknown precision policy 'int4'"):
        tessera.compile(model, precision="int4")
    with pytest.raises(tessera.CompileError, match="needs the ranges of the activations"):
        tessera.compile(model, precision="int8")
    with pytest.raises(tessera.CompileError,
                       match="quantizing output heads and first layers "
                             "applies to the int8 and fp8 policies "
                             r"\(precision 'bf16'\)"):
        tessera.compile(model, precision="bf16", quantize_heads=True)


def test_allow_tf32_on_cuda():
    """allow_tf32 lets the CUDA target's fp32 products round their operands
    to tf32 on tensor cores (run here on the PTX emulator): close to fp32,
    not equal to it; without it they stay exact."""
    model, w = _linear_model()
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    emulator = {"gpu-driver": "emulator"}
    exact = tessera.compile(model, "cuda", load_options=emulator)(x)
    tf32 = tessera.compile(model, "cuda", load_options=emulator,
                           allow_tf32=True)(x)
    cpu = tessera.compile(model)(x)
    np.testing.assert_allclose(exact, cpu, rtol=1e-5, atol=1e-6)
    assert 0 < np.abs(tf32 - exact).max() < 1e-2
