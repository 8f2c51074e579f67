"""Test set-up: run kernels through Triton's interpreter when there is no GPU.

The environment variable must be set before triton is imported, so this happens here, first.
On a GPU machine the same suite runs compiled kernels (``TRITON_INTERPRET`` unset) and the tests
marked ``gpu`` (large sizes, stress) run too.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from tritoncub._utils import interpreter_active  # noqa: E402

DEVICE = "cpu" if interpreter_active() else "cuda"


def pytest_collection_modifyitems(config, items):
    if interpreter_active():
        skip = pytest.mark.skip(reason="needs a CUDA GPU (runs in the GPU test run, not the interpreter)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def device():
    return DEVICE
