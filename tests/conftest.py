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


def _poison(t):
    """Fill a freshly allocated CPU tensor with a value no correct kernel leaves in an output slot."""
    # (plain CPU tensors only: fake and meta tensors of fake implementations and tracing hold no data,
    # and their sizes may be symbolic)
    if type(t) is torch.Tensor and t.device.type == "cpu" and not t.is_quantized and t.numel():
        from helpers import poison_value   # (tests/ is on the path: conftest and helpers live there)
        try:
            if t.dtype.is_complex:
                t.fill_(complex(1.2345e30, -1.2345e30))
            else:
                t.fill_(poison_value(t.dtype))
        except (RuntimeError, TypeError):   # (a dtype fill_ does not support on the CPU: left as it is)
            pass
    return t


@pytest.fixture(autouse=True)
def poisoned_allocations(monkeypatch):
    """Under the interpreter, every ``torch.empty``/``empty_like``/``Tensor.new_empty`` (the library's
    output and scratch buffers, and the tests' own ``out=`` buffers) comes back filled with a poison
    value instead of whatever memory held: a kernel that leaves an output slot unwritten, or code
    that reads scratch it never wrote, fails the comparison instead of passing on a lucky earlier
    result. (On a GPU the buffers are left as they are: fills would be extra kernels in timed and
    captured code.)"""
    if not interpreter_active():
        yield
        return
    empty, empty_like, new_empty = torch.empty, torch.empty_like, torch.Tensor.new_empty

    def poisoned_empty(*args, **kwargs):
        return _poison(empty(*args, **kwargs))

    def poisoned_empty_like(*args, **kwargs):
        return _poison(empty_like(*args, **kwargs))

    def poisoned_new_empty(self, *args, **kwargs):
        return _poison(new_empty(self, *args, **kwargs))

    monkeypatch.setattr(torch, "empty", poisoned_empty)
    monkeypatch.setattr(torch, "empty_like", poisoned_empty_like)
    monkeypatch.setattr(torch.Tensor, "new_empty", poisoned_new_empty)
    yield
