# test_reference_models.py - the four reference models through tessera.compile, tessera.torch.compile and many threads.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import threading

import numpy as np
import pytest
import torch

import tessera
import tessera.torch
from conftest import error_ratio, load_case

MAX_ERROR_RATIO = 1e-4
NAMES = ["bert", "gpt", "llama", "vit"]


@pytest.mark.parametrize("name", NAMES)
def test_tessera_compile_matches_pytorch(reference_models, name):
    folder = reference_models[name]
    model = tessera.compile(folder / "model.onnx")
    cases = load_case(folder)
    assert cases
    for inputs, expected in cases:
        keep = [a.copy() for a in inputs]
        outputs = model(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert error_ratio(got, want) <= MAX_ERROR_RATIO
        # The model reads its inputs in place and leaves them as they were.
        for a, b in zip(inputs, keep):
            np.testing.assert_array_equal(a, b)


def modules(gen_models):
    """(module, example inputs, dynamic axes) per reference model, built
    as scripts/gen_models.py builds them."""
    h, n, f, s = 64, 4, 256, 16

    def seeded(build):
        torch.manual_seed(0)
        return build().eval()

    mask = torch.ones(2, s)
    mask[-1, s // 2:] = 0.0
    return {
        "bert": (seeded(lambda: gen_models.BertLayer(h, n, f)),
                 (torch.randn(2, s, h), mask),
                 {"hidden": {0: "batch", 1: "seq"},
                  "attention_mask": {0: "batch", 1: "seq"}}),
        "gpt": (seeded(lambda: gen_models.GPT(97, h, n, f, max_len=64)),
                (torch.randint(0, 97, (1, s)),), None),
        "llama": (seeded(lambda: gen_models.LlamaBlock(h, n, f, max_len=64)),
                  (torch.randn(1, s, h),), None),
        "vit": (seeded(lambda: gen_models.ViT(h, n, f, image=32, patch=8,
                                              classes=10)),
                (torch.randn(1, 3, 32, 32),), None),
    }


@pytest.mark.parametrize("name", NAMES)
def test_tessera_torch_compile_matches_the_module(gen_models, name):
    module, example, axes = modules(gen_models)[name]
    compiled = tessera.torch.compile(module, example, dynamic_axes=axes)
    assert isinstance(compiled, torch.nn.Module)
    with torch.no_grad():
        expected = module(*example)
    got = compiled(*example)
    assert isinstance(got, torch.Tensor)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert error_ratio(got.numpy(), expected.numpy()) <= MAX_ERROR_RATIO
    if name == "bert":
        # Another batch and sequence through the same compile.
        mask = torch.ones(3, 37)
        other = (torch.randn(3, 37, 64), mask)
        with torch.no_grad():
            expected = module(*other)
        assert error_ratio(compiled(*other).numpy(), expected.numpy()) <= MAX_ERROR_RATIO


def test_concurrent_runs_match_serial_runs(reference_models):
    """8 threads x 100 runs of one compiled model give the serial run's
    bits (the GIL is released while each runs)."""
    folder = reference_models["llama"]
    model = tessera.compile(folder / "model.onnx")
    assert model.concurrent_runs
    inputs, _ = load_case(folder)[0]
    reference = model(*inputs).copy()
    mismatches, failures = [], []

    def work():
        for _ in range(100):
            try:
                out = model(*inputs)
            except Exception as error:  # recorded, the test fails below
                failures.append(error)
                continue
            if not np.array_equal(out, reference):
                mismatches.append(out)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert not mismatches
