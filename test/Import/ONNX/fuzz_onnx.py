#!/usr/bin/python3
# fuzz_onnx.py - mutates valid ONNX models and checks that the importer never crashes on them.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: fuzz_onnx.py TESSERA_COMPILE COUNT SEED MODEL.onnx...

Writes COUNT mutants (byte flips, truncations, splices) of the models,
deterministically from SEED, and imports each. An import may fail with a
diagnostic (exit 1) but must never crash, hang or exit otherwise. Prints
one line per crash and exits 1 if there was any.
"""
import os
import random
import subprocess
import sys
import tempfile


EXTREMES = [0, 1, -1, 2, -2, 3, 7, 1 << 31, -(1 << 31), (1 << 62), -(1 << 63),
            (1 << 63) - 1]


def mutate_structure(data, rng):
    """Changes what a well-formed file says: attribute values, dims, names."""
    import onnx
    model = onnx.ModelProto.FromString(data)
    graph = model.graph
    choice = rng.randrange(4)
    if choice == 0 and graph.node:
        node = rng.choice(graph.node)
        for attr in node.attribute:
            if attr.ints:
                attr.ints[rng.randrange(len(attr.ints))] = rng.choice(EXTREMES)
            elif attr.HasField("i"):
                attr.i = rng.choice(EXTREMES)
            elif attr.HasField("f"):
                attr.f = rng.choice([0.0, -1.0, float("inf"), float("nan")])
    elif choice == 1 and graph.input:
        dims = rng.choice(graph.input).type.tensor_type.shape.dim
        if dims:
            dims[rng.randrange(len(dims))].dim_value = rng.choice(EXTREMES[:7])
    elif choice == 2 and graph.node:
        node = rng.choice(graph.node)
        if node.input:
            others = [n.output[0] for n in graph.node if n.output]
            node.input[rng.randrange(len(node.input))] = rng.choice(
                others + ["", "missing"])
    elif graph.initializer:
        tensor = rng.choice(graph.initializer)
        if tensor.dims:
            tensor.dims[rng.randrange(len(tensor.dims))] = rng.choice(EXTREMES)
    return model.SerializeToString()


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.randrange(6)
    if kind >= 4:
        return mutate_structure(bytes(data), rng)
    if kind == 0:  # flip a few bytes
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:  # truncate
        del data[rng.randrange(1, len(data)):]
    elif kind == 2:  # duplicate a slice somewhere else
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randint(1, 64))
        at = rng.randrange(len(data))
        data[at:at] = data[a:b]
    else:  # overwrite a varint-looking byte with an extreme value
        at = rng.randrange(len(data))
        data[at:at + 1] = bytes([0xff] * 9 + [0x01])
    return bytes(data)


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    tool, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    models = [open(p, "rb").read() for p in sys.argv[4:]]
    rng = random.Random(seed)
    crashes = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutant.onnx")
        for i in range(count):
            data = mutate(rng.choice(models), rng)
            with open(path, "wb") as f:
                f.write(data)
            try:
                result = subprocess.run(
                    [tool, path, "--compile-to=import", "-o", os.devnull],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    timeout=60)
                code = result.returncode
            except subprocess.TimeoutExpired:
                code = "timeout"
            if code not in (0, 1):
                crashes += 1
                keep = os.path.join(os.getcwd(), f"crash-{seed}-{i}.onnx")
                with open(keep, "wb") as f:
                    f.write(data)
                print(f"mutant {i}: exit {code}, saved as {keep}")
    print(f"{count} mutants, {crashes} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
