# precision_models.py - models in ONNX's test layout for the precision
# policies' end-to-end test, with fp32 reference outputs:
#   OUT/large_ln: a linear layer whose outputs are around 1e3, a LayerNorm
#     over them (768 features) and a second linear layer. Computed naively
#     in fp16 (every op in fp16, as numpy does below), the LayerNorm's sum of
#     squares overflows fp16 and the output is not finite: the script checks
#     that, so the test of the fp16 policy is known to be able to fail.
#   OUT/head: two linear layers named /body/MatMul and /head/MatMul, for
#     --keep-fp32.
#   OUT/fp8_identity and OUT/gemm (with OUT/gemm_calib): see fp8_models.
#   OUT/large_act: x -> MatMul (/fc1) -> Relu -> MatMul (/fc2) whose second
#     matmul's input reaches about 1e5, beyond fp16's 65504, while the
#     model's inputs and weights fit fp16; OUT/large_act_calib holds 8
#     calibration samples of its inputs, OUT/large_act_few 2.
#   OUT/heavy_tail: one GEMM whose input has heavy tails (Student's t, 3
#     degrees of freedom), with OUT/heavy_tail_calib, 8 samples: the
#     calibration methods' test.
# With --calibration-sets MODEL_DIR OUT COUNT SEED, writes COUNT test sets of
# inputs drawn like MODEL_DIR's first test set's (calibration samples);
# with --scale-amax CACHE KEY FACTOR OUT, copies a calibration cache with
# one tensor's range scaled (a wrong scale); with --count-saturated INPUT.pb
# CACHE KEY FORMAT, prints how many of the input's values a quantize to
# FORMAT (int8, e4m3, e5m2) with KEY's calibrated scale saturates; with
# --report-scales REPORT CACHE MODEL, checks the int8 scales an accuracy
# report records against the calibration cache and the model's weights.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(folder, graph, inputs, outputs):
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, value) in enumerate(tensors):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(
                    value.astype(np.float32), name).SerializeToString())


def layer_norm(x, dtype):
    x = x.astype(dtype)
    mean = x.mean(-1, keepdims=True, dtype=dtype)
    centered = x - mean
    variance = (centered * centered).mean(-1, keepdims=True, dtype=dtype)
    return centered / np.sqrt(variance + dtype(1e-5))


def large_ln(out):
    rng = np.random.default_rng(0)
    rows, features = 16, 768
    x = rng.standard_normal((rows, features)).astype(np.float32)
    w1 = (rng.standard_normal((features, features)) * 40).astype(np.float32)
    w2 = (rng.standard_normal((features, 64)) / 28).astype(np.float32)
    hidden = x.astype(np.float64) @ w1
    normalized = layer_norm(hidden, np.float64)
    y = normalized @ w2
    # The naive fp16 program: the activations fit fp16 (about 1e3), their
    # squares summed over 768 features do not.
    with np.errstate(over="ignore", invalid="ignore"):
        naive = layer_norm(hidden.astype(np.float16), np.float16)
    assert np.abs(hidden).max() < 65504, "activations must fit fp16"
    assert not np.isfinite(naive).all(), "naive fp16 LayerNorm must overflow"
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/fc1/MatMul"),
        helper.make_node("LayerNormalization", ["h", "gamma", "beta"], ["n"],
                         name="/ln/LayerNormalization", axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n", "w2"], ["y"], name="/fc2/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "large_ln",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 64])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(np.ones(features, np.float32), "gamma"),
         numpy_helper.from_array(np.zeros(features, np.float32), "beta")])
    save(os.path.join(out, "large_ln"), graph, [("x", x)], [("y", y)])
    print(f"large_ln: max |activation| {np.abs(hidden).max():.0f}, "
          f"naive fp16 LayerNorm finite: {bool(np.isfinite(naive).all())}")


def head(out):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    w1 = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    w2 = (rng.standard_normal((64, 10)) / 8).astype(np.float32)
    y = np.maximum(x.astype(np.float64) @ w1, 0) @ w2
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/body/MatMul"),
        helper.make_node("Relu", ["h"], ["r"], name="/body/Relu"),
        helper.make_node("MatMul", ["r", "w2"], ["y"], name="/head/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "head",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 10])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    save(os.path.join(out, "head"), graph, [("x", x)], [("y", y)])


def large_act(out):
    rng = np.random.default_rng(2)
    w1 = (rng.standard_normal((64, 64)) * 5000).astype(np.float32)
    w2 = (rng.standard_normal((64, 16)) / 8).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/fc1/MatMul"),
        helper.make_node("Relu", ["h"], ["r"], name="/fc1/Relu"),
        helper.make_node("MatMul", ["r", "w2"], ["y"], name="/fc2/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "large_act",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])

    def sample():
        x = rng.standard_normal((8, 64)).astype(np.float32)
        hidden = x.astype(np.float64) @ w1
        return x, np.maximum(hidden, 0) @ w2, np.abs(hidden).max()

    x, y, largest = sample()
    assert np.abs(w1).max() < 65504 and largest > 65504
    save(os.path.join(out, "large_act"), graph, [("x", x)], [("y", y)])
    def tensors():
        x, y, _ = sample()
        return [("input", "x", x), ("output", "y", y)]
    for folder, count in (("large_act_calib", 8), ("large_act_few", 2)):
        write_sets(os.path.join(out, folder), count, tensors)
    print(f"large_act: max |/fc2 input| {largest:.3g}")


def e4m3(values):
    """Rounds to fp8 E4M3FN (nearest even, saturating at 448), in float64."""
    magnitude = np.minimum(np.abs(values.astype(np.float64)), 448.0)
    exponent = np.floor(np.log2(np.maximum(magnitude, 2.0 ** -6)))
    step = 2.0 ** (exponent - 3)
    return np.sign(values) * np.round(magnitude / step) * step


def write_sets(folder, count, make):
    for index in range(count):
        data = os.path.join(folder, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        for kind, name, value in make():
            with open(os.path.join(data, f"{kind}_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(
                    value.astype(np.float32), name).SerializeToString())


def fp8_models(out):
    """OUT/fp8_identity: x times the identity, whose fp8 program returns x
    rounded to E4M3 at the calibrated scale (x / (amax / 448)), exactly
    enough to check every rounding; OUT/gemm: one 64x256x256 GEMM with
    OUT/gemm_calib, 8 calibration samples."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((8, 32)) * 3).astype(np.float32)
    # Values that test the rounding: ties, subnormals at the scale, zero.
    x[0, :6] = [0.0, -0.0, 1e-4, -1e-4, 1e-6, 3.0]
    scale = np.float32(np.float64(np.abs(x).max()) / 448.0)
    expected = e4m3(x / scale) * np.float64(scale)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "eye"], ["y"], name="/id/MatMul")],
        "fp8_identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 32])],
        [numpy_helper.from_array(np.eye(32, dtype=np.float32), "eye")])
    save(os.path.join(out, "fp8_identity"), graph, [("x", x)],
         [("y", expected)])
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    one_gemm(out, "gemm", "/gemm/MatMul", w,
             lambda: rng.standard_normal((64, 256)))


def one_gemm(out, name, node, w, draw):
    """OUT/name: x [64, 256] times the constant w (the ONNX node `node`),
    with one test set, and OUT/name_calib with 8 samples; each sample's x
    is draw() as fp32."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name=node)],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 256])],
        [numpy_helper.from_array(w, "w")])

    def sample():
        x = draw().astype(np.float32)
        return [("input", "x", x), ("output", "y", x.astype(np.float64) @ w)]
    save(os.path.join(out, name), graph, *[[(n, v)] for _, n, v in sample()])
    write_sets(os.path.join(out, name + "_calib"), 8, sample)


OUTLIERS = [7, 100, 201]


def outlier_weights(rng):
    """A 256x256 weight whose rows OUTLIERS are a fortieth of the others,
    meeting the outlier channels of the input."""
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    w[OUTLIERS, :] /= 40
    return w


def outlier_gemm(out):
    """OUT/outlier: one 64x256x256 GEMM whose input has three outlier
    channels (40 times the others) met by small weights (a fortieth), as
    activations in large transformers are, with OUT/outlier_calib, 8
    samples."""
    rng = np.random.default_rng(4)
    w = outlier_weights(rng)

    def draw():
        x = rng.standard_normal((64, 256)).astype(np.float32)
        x[:, OUTLIERS] *= 40
        return x
    one_gemm(out, "outlier", "/out/MatMul", w, draw)


def heavy_tail(out):
    """OUT/heavy_tail: one 64x256x256 GEMM whose input follows Student's t
    with 3 degrees of freedom: a few values in ten thousand lie ten times
    beyond the bulk, so a range set by the largest leaves the bulk few
    int8 steps. OUT/heavy_tail_calib holds 8 samples."""
    rng = np.random.default_rng(6)
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    one_gemm(out, "heavy_tail", "/tail/MatMul", w,
             lambda: rng.standard_t(3, (64, 256)))


def outlier_spikes(out):
    """OUT/outlier_spikes: the outlier GEMM (three channels 40 times the
    others, met by small weights) whose other channels have rare spikes:
    in each sample 8 values of ordinary channels are 30 times their size,
    so each such channel's largest calibrated value says little of its
    bulk. OUT/outlier_spikes_calib holds 8 samples."""
    rng = np.random.default_rng(7)
    w = outlier_weights(rng)
    ordinary = [c for c in range(256) if c not in OUTLIERS]

    def draw():
        x = rng.standard_normal((64, 256)).astype(np.float32)
        x[rng.integers(0, 64, 8), rng.choice(ordinary, 8)] *= 30
        x[:, OUTLIERS] *= 40
        return x
    one_gemm(out, "outlier_spikes", "/spikes/MatMul", w, draw)


def channel_ranges(cache, key):
    """Prints how many of `key`'s channels the calibration cache clips
    (a 'channel_range' below the channel's amax)."""
    with open(cache) as f:
        entry = json.load(f)["tensors"][key]
    amax = entry["channel_amax"]
    ranges = entry.get("channel_range")
    if ranges is None:
        print(f"no channel ranges ({len(amax)} channels)")
        return
    clipped = sum(1 for a, r in zip(amax, ranges) if r < a)
    print(f"channels clipped {clipped} of {len(amax)}")


def calibration_sets(model_dir, out, count, seed):
    """Writes `count` test sets of inputs like model_dir's first test set:
    floats drawn from a normal distribution with each input's mean and
    standard deviation, other inputs (masks, ids) copied."""
    rng = np.random.default_rng(seed)
    source = os.path.join(model_dir, "test_data_set_0")
    names = sorted(n for n in os.listdir(source) if n.startswith("input_"))
    originals = []
    for name in names:
        tensor = onnx.TensorProto()
        with open(os.path.join(source, name), "rb") as f:
            tensor.ParseFromString(f.read())
        originals.append((name, tensor.name, numpy_helper.to_array(tensor)))
    for index in range(count):
        data = os.path.join(out, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        for name, tensor_name, value in originals:
            if value.dtype.kind == "f":
                value = (rng.standard_normal(value.shape) * value.std() +
                         value.mean()).astype(value.dtype)
            with open(os.path.join(data, name), "wb") as f:
                f.write(numpy_helper.from_array(
                    value, tensor_name).SerializeToString())


def scale_amax(cache, key, factor, out):
    """Copies a calibration cache with one tensor's amax times `factor` (a
    wrong scale, for the precision report's test)."""
    with open(cache) as f:
        table = json.load(f)
    table["tensors"][key]["amax"] *= factor
    with open(out, "w") as f:
        json.dump(table, f, indent=2, sort_keys=True)


def report_scales(report, cache, model):
    """Checks each int8 matmul region of the accuracy report `report`: its
    lhs_scale is its input's calibrated range / 127 (CACHE), its rhs_scale
    the least and largest of its weight's per-column amax / 127 (MODEL's
    initializer, [K, N]). Prints how many regions it checked."""
    with open(report) as f:
        regions = json.load(f)["regions"]
    with open(cache) as f:
        tensors = json.load(f)["tensors"]
    graph = onnx.load(model).graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    nodes = {n.name: n for n in graph.node}
    checked = 0
    for region in regions:
        if region["op"] != "matmul" or region["precision"] != "int8":
            continue
        entry = tensors[region["node"] + ":lhs"]
        lhs = entry.get("range", entry["amax"]) / 127
        assert abs(region["lhs_scale"] - lhs) <= 1e-6 * lhs, (region, lhs)
        w = weights[nodes[region["node"]].input[1]].astype(np.float64)
        columns = np.abs(w).max(axis=0) / 127
        rhs = region["rhs_scale"]
        assert rhs["channels"] == columns.size, (rhs, columns.size)
        for field, value in (("min", columns.min()), ("max", columns.max())):
            assert abs(rhs[field] - value) <= 1e-6 * value, (rhs, field, value)
        checked += 1
    print(f"scales ok: {checked} regions")


def count_saturated(input_pb, cache, key, fmt):
    """Prints how many values of the tensor in `input_pb` a quantize to
    `fmt` (int8, e4m3, e5m2) with the scale of `key` in the calibration
    cache saturates: round_half_even(x / s) beyond [-128, 127] for int8,
    |x / s| beyond the largest finite value for fp8."""
    tensor = onnx.TensorProto()
    with open(input_pb, "rb") as f:
        tensor.ParseFromString(f.read())
    x = numpy_helper.to_array(tensor).astype(np.float32)
    with open(cache) as f:
        entry = json.load(f)["tensors"][key]
    largest = {"int8": 127.0, "e4m3": 448.0, "e5m2": 57344.0}[fmt]
    scale = np.float32(entry.get("range", entry["amax"]) / largest)
    scaled = x / scale
    if fmt == "int8":
        rounded = np.round(scaled)  # halves to even
        beyond = (rounded > 127) | (rounded < -128)
    else:
        beyond = np.abs(scaled) > largest
    print(f"expected saturated {int(beyond.sum())} of {x.size} values")


def main():
    if sys.argv[1] == "--count-saturated":
        count_saturated(*sys.argv[2:6])
        return
    if sys.argv[1] == "--report-scales":
        report_scales(*sys.argv[2:5])
        return
    if sys.argv[1] == "--scale-amax":
        scale_amax(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
        return
    if sys.argv[1] == "--channel-ranges":
        channel_ranges(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1] == "--calibration-sets":
        model_dir, out, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
        calibration_sets(model_dir, out, count, seed=int(sys.argv[5]))
        return
    out = sys.argv[1]
    large_ln(out)
    head(out)
    large_act(out)
    fp8_models(out)
    outlier_gemm(out)
    heavy_tail(out)
    outlier_spikes(out)


if __name__ == "__main__":
    main()
