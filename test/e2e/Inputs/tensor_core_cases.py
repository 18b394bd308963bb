# tensor_core_cases.py - products for the CUDA target's tensor-core kernels
# (tessera-cuda-tensor-core-matmul) in ONNX's test layout, with values that
# bf16 and fp16 hold exactly (multiples of 1/16 up to 2 in magnitude): the
# products are exact and their sums exact in f32, so under --precision=bf16
# or fp16 a correct kernel matches the float64 reference to the last bit,
# and a wrong fragment layout, swizzle, pipeline stage or edge cannot hide
# in a tolerance. Symbolic dims get several test sets, some that the
# kernel takes and some that its host guard sends to the SIMT loop nest.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def exact(rng, shape):
    return (rng.integers(-32, 33, size=shape) / 16).astype(np.float32)


def save(out, name, nodes, inputs, inits, sets, output_shape):
    """`inputs`: (name, declared shape); `sets`: lists of (arrays, y)."""
    folder = os.path.join(out, name)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, s in inputs],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, output_shape)],
        [numpy_helper.from_array(x, n) for n, x in inits])
    os.makedirs(folder, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), os.path.join(folder, "model.onnx"))
    for t, (arrays, y) in enumerate(sets):
        data = os.path.join(folder, f"test_data_set_{t}")
        os.makedirs(data, exist_ok=True)
        for i, x in enumerate(arrays):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x).SerializeToString())
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(
                y.astype(np.float32)).SerializeToString())


def f64(x):
    return x.astype(np.float64)


def gemm(out, m, k, n, trans_b=False):
    """Y = A W + b (Gemm; W stored [n, k] with trans_b)."""
    rng = np.random.default_rng(m * 1000 + k + n)
    a = exact(rng, (m, k))
    w = exact(rng, (n, k) if trans_b else (k, n))
    b = exact(rng, (n,))
    y = f64(a) @ f64(w.T if trans_b else w) + b
    save(out, f"gemm_{m}x{k}x{n}{'_tb' if trans_b else ''}",
         [helper.make_node("Gemm", ["A", "W", "B"], ["Y"],
                           transB=int(trans_b))],
         [("A", [m, k])], [("W", w), ("B", b)], [([a], y)], [m, n])


def linear(out, k, n, sizes):
    """A [batch, seq, k] activation (symbolic batch and seq) times a
    shared weight, plus a bias: batch and seq fold into M."""
    rng = np.random.default_rng(k + n)
    w = exact(rng, (k, n))
    b = exact(rng, (n,))
    sets = []
    for batch, seq in sizes:
        a = exact(rng, (batch, seq, k))
        sets.append(([a], f64(a) @ f64(w) + b))
    save(out, f"linear_{k}x{n}",
         [helper.make_node("MatMul", ["A", "W"], ["P"]),
          helper.make_node("Add", ["P", "B"], ["Y"])],
         [("A", ["batch", "seq", k])], [("W", w), ("B", b)], sets,
         ["batch", "seq", n])


def scores_values(out, heads, dim, seqs):
    """P V with P [1, heads, seq, seq]: K is the symbolic seq, which the
    host guard checks at run time (a multiple of 8 or not)."""
    rng = np.random.default_rng(heads * dim)
    sets = []
    for seq in seqs:
        p = exact(rng, (1, heads, seq, seq))
        v = exact(rng, (1, heads, seq, dim))
        sets.append(([p, v], f64(p) @ f64(v)))
    save(out, f"pv_{heads}x{dim}",
         [helper.make_node("MatMul", ["P", "V"], ["Y"])],
         [("P", [1, heads, "seq", "seq"]), ("V", [1, heads, "seq", dim])],
         [], sets, [1, heads, "seq", dim])


def batched(out, batch, m, k, n, trans_b=False):
    """A [batch, m, k] x [batch, k, n] product; with trans_b, B comes as
    [batch, n, k] through a Transpose and a bias follows (the kernel's
    epilogue)."""
    rng = np.random.default_rng(batch * 100 + m)
    a = exact(rng, (batch, m, k))
    b = exact(rng, (batch, n, k) if trans_b else (batch, k, n))
    if not trans_b:
        save(out, f"bmm_{batch}x{m}x{k}x{n}",
             [helper.make_node("MatMul", ["A", "B"], ["Y"])],
             [("A", [batch, m, k]), ("B", [batch, k, n])], [],
             [([a, b], f64(a) @ f64(b))], [batch, m, n])
        return
    bias = exact(rng, (n,))
    save(out, f"bmm_{batch}x{m}x{k}x{n}_tb",
         [helper.make_node("Transpose", ["B"], ["BT"], perm=[0, 2, 1]),
          helper.make_node("MatMul", ["A", "BT"], ["P"]),
          helper.make_node("Add", ["P", "bias"], ["Y"])],
         [("A", [batch, m, k]), ("B", [batch, n, k])], [("bias", bias)],
         [([a, b], f64(a) @ f64(b.transpose(0, 2, 1)) + bias)],
         [batch, m, n])


def batched_symbolic(out, batches, m, k, n):
    """The product with a symbolic batch: which tile fills the GPU is
    known only at run time."""
    rng = np.random.default_rng(m * k + n)
    sets = []
    for batch in batches:
        a = exact(rng, (batch, m, k))
        b = exact(rng, (batch, k, n))
        sets.append(([a, b], f64(a) @ f64(b)))
    save(out, f"bmm_batch_{m}x{k}x{n}",
         [helper.make_node("MatMul", ["A", "B"], ["Y"])],
         [("A", ["batch", m, k]), ("B", ["batch", k, n])], [], sets,
         ["batch", m, n])


def conv(out, n, c, size, f, kernel, stride=1, pad=0):
    """Conv (with a bias) on small integers, which bf16 and fp16 hold
    exactly, as do the sums (|y| < 256): under the policies the
    convolution's result, rounded once to the narrow type, is still exact."""
    import torch
    rng = np.random.default_rng(n * 1000 + c * 100 + f)
    x = rng.integers(-2, 3, size=(n, c, size, size)).astype(np.float32)
    w = rng.integers(-1, 2, size=(f, c, kernel, kernel)).astype(np.float32)
    b = rng.integers(-4, 5, size=(f,)).astype(np.float32)
    y = torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(w).double(),
        torch.from_numpy(b).double(), stride=stride, padding=pad).numpy()
    assert np.abs(y).max() < 256
    save(out, f"conv_{n}x{c}x{size}_{f}_k{kernel}_s{stride}_p{pad}",
         [helper.make_node("Conv", ["X", "W", "B"], ["Y"],
                           kernel_shape=[kernel, kernel],
                           strides=[stride, stride], pads=[pad] * 4)],
         [("X", [n, c, size, size])], [("W", w), ("B", b)], [([x], y)],
         list(y.shape))


def narrow_tensor(x, dtype):
    """A TensorProto of x in float16 or bfloat16 (x holds exact values)."""
    if dtype == "float16":
        return numpy_helper.from_array(x.astype(np.float16))
    t = onnx.TensorProto()
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(x.shape)
    t.raw_data = (x.astype(np.float32).view(np.uint32) >> 16).astype(
        np.uint16).tobytes()
    return t


def narrow_model(out, dtype, k, n, rows):
    """A model exported in float16 or bfloat16 (MatMul, symbolic rows): the
    products accumulate in f32 and round once to the model's type, so the
    float64 reference rounded once is exact."""
    elem = {"float16": TensorProto.FLOAT16,
            "bfloat16": TensorProto.BFLOAT16}[dtype]
    rng = np.random.default_rng(k * n)
    w = exact(rng, (k, n))
    name = f"{dtype}_model_{k}x{n}"
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    weight = narrow_tensor(w, dtype)
    weight.name = "W"
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "W"], ["Y"])], name,
        [helper.make_tensor_value_info("A", elem, ["rows", k])],
        [helper.make_tensor_value_info("Y", elem, ["rows", n])], [weight])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), os.path.join(folder, "model.onnx"))
    for t, m in enumerate(rows):
        data = os.path.join(folder, f"test_data_set_{t}")
        os.makedirs(data, exist_ok=True)
        a = exact(rng, (m, k))
        y = f64(a) @ f64(w)
        if dtype == "float16":
            y = y.astype(np.float16).astype(np.float32)
        else:  # round to nearest even on the top 16 bits
            bits = y.astype(np.float32).view(np.uint32).astype(np.uint64)
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
            y = bits.astype(np.uint32).view(np.float32)
        for i, x in enumerate([a, y]):
            f = "input_0.pb" if i == 0 else "output_0.pb"
            with open(os.path.join(data, f), "wb") as fh:
                fh.write(narrow_tensor(x, dtype).SerializeToString())


def main():
    out = sys.argv[1]
    gemm(out, 129, 64, 72)     # partial tiles in M and N
    gemm(out, 64, 256, 64)     # eight K tiles: the three stages wrap
    # 7 K tiles of 64 on sm_90a (no split-k under K = 512): its four stages
    # are refilled and parity 1 is waited on; B stored [k][n] and [n][k].
    gemm(out, 64, 448, 128)
    gemm(out, 70, 448, 136, trans_b=True)
    gemm(out, 17, 40, 24, trans_b=True)  # a K tail of 8
    gemm(out, 65, 33, 40)      # K % 8 != 0: the SIMT loop nest
    gemm(out, 1, 2088, 64)     # one row, deep K: split-k, 8 parts of 9 K tiles
                               # but the last (66 tiles, the last partial)
    batched(out, 3, 33, 48, 16)
    # 32 batches of 130 x 136: a full wave of 128-row blocks (two
    # warpgroups each on sm_90a), with partial tiles in M and N, 5 K tiles.
    batched(out, 32, 130, 320, 136)
    # The same wave with B stored [n][k], and with a symbolic batch (32:
    # 128x128 tiles; 2: 64x64 tiles, chosen by the host).
    batched(out, 32, 130, 72, 136, trans_b=True)
    batched_symbolic(out, [32, 2], 130, 72, 136)
    linear(out, 64, 72, [(2, 16), (3, 37), (1, 1)])
    # Split-k chosen at run time: 4 parts for 1, 6 and 256 rows.
    linear(out, 1024, 128, [(1, 1), (2, 3), (4, 64)])
    scores_values(out, 2, 16, [16, 37, 64])
    # Convolutions: an im2col GEMM whose filter (A) every image reads
    # again (batch 2), K = 27 copied element by element, padding, stride 2,
    # K = 144 (aligned: sm_90a's wgmma kernel) and a 1x1 convolution.
    conv(out, 2, 3, 23, 8, 3, pad=1)
    conv(out, 1, 16, 12, 32, 3, stride=2, pad=1)
    conv(out, 2, 64, 8, 32, 1)
    narrow_model(out, "float16", 256, 64, [16, 70])
    narrow_model(out, "bfloat16", 256, 64, [16, 70])


if __name__ == "__main__":
    main()
