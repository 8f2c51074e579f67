"""Test set-up: run kernels through Triton's interpreter when there is no GPU.

The environment variable must be set before triton is imported, so this happens here, first.
On a GPU machine the same suite runs compiled kernels (``TRITON_INTERPRET`` unset) and the tests
marked ``gpu`` (large sizes, stress) run too.
"""
import os

import torch

import compile_check

if compile_check.enabled():
    compile_check.install()      # kernels are compiled for a GPU target, not run (see compile_check.py)
elif not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from tritoncub._utils import compile_only, interpreter_active  # noqa: E402

DEVICE = "cpu" if interpreter_active() or compile_only() else "cuda"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not compile_check.enabled():
        return
    reason = compile_check.pytest_runtest_makereport(item, call)
    if reason is not None:
        rep = outcome.get_result()
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0, reason)


def pytest_collection_modifyitems(config, items):
    if interpreter_active() or compile_only():
        skip = pytest.mark.skip(reason="needs a CUDA GPU (runs in the GPU test run, not the interpreter)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def device():
    return DEVICE
