"""Compile-check mode: build every kernel the tests launch for a GPU target, without a GPU.

The interpreter accepts programs that the compiler rejects (an unknown keyword argument, a
construct the code generator does not lower, an instruction ptxas refuses). With
``TRITONCUB_COMPILE_ONLY=1`` (and no ``TRITON_INTERPRET``) the test suite instead installs a
stand-in driver whose target is ``TRITONCUB_COMPILE_TARGET`` (default ``cuda:90``), and every kernel
launch compiles the kernel for that target down to machine code — and returns without running it.

Outputs are therefore never computed: a test that fails for any other reason is reported as
skipped ("compile-only"); a test fails only when compiling one of its kernels fails::

    TRITONCUB_COMPILE_ONLY=1 python -m pytest -q tests
"""
from __future__ import annotations

import os

import pytest

# ("/triton/runtime/jit.py": a launch whose arguments do not bind the kernel's signature fails there, as
# it would on a GPU)
COMPILE_ERROR_MARKERS = ("/triton/compiler/", "/triton/backends/", "/triton/language/", "/triton/experimental/",
                         "/triton/runtime/jit.py")
#: shared memory a program may use, per target (bytes): a kernel built over it fails at launch on a GPU
SHARED_MEMORY_LIMIT = {"cuda:90": 232448, "cuda:100": 232448, "cuda:80": 166912, "cuda:86": 101376,
                       "cuda:89": 101376, "cuda:75": 65536}


def enabled() -> bool:
    on = os.environ.get("TRITONCUB_COMPILE_ONLY", "0") not in ("", "0")
    if on and os.environ.get("TRITON_INTERPRET", "0") not in ("", "0", "false", "False"):
        # the interpreter would run the kernels (nothing compiled) and every failure would become a skip
        raise pytest.UsageError("TRITONCUB_COMPILE_ONLY=1 with TRITON_INTERPRET set: unset one of them")
    return on


def install() -> None:
    """Make every ``@triton.jit`` launch compile for the target and return without running."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction

    backend, _, arch = os.environ.get("TRITONCUB_COMPILE_TARGET", "cuda:90").partition(":")
    target = GPUTarget(backend, int(arch) if arch.isdigit() else arch, 32 if backend == "cuda" else 64)

    class CompileOnlyDriver:
        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_current_target(self):
            return target

        def get_active_torch_device(self):
            return torch.device("cpu")

        def get_benchmarker(self):
            raise RuntimeError("compile-check mode has no GPU to time on")

    driver.set_active(CompileOnlyDriver())
    run = JITFunction.run
    if getattr(run, "_compile_only", False):
        return

    smem_limit = SHARED_MEMORY_LIMIT.get(os.environ.get("TRITONCUB_COMPILE_TARGET", "cuda:90"))

    def compile_only_run(self, *args, grid, warmup, **kwargs):
        kernel = run(self, *args, grid=grid, warmup=True, **kwargs)
        shared = getattr(getattr(kernel, "metadata", None), "shared", 0) or 0
        if smem_limit is not None and shared > smem_limit:   # (raised at launch on a GPU, never reached here)
            from triton.runtime.errors import OutOfResources
            raise OutOfResources(shared, smem_limit, "shared memory")
        return kernel

    compile_only_run._compile_only = True
    JITFunction.run = compile_only_run


def is_compile_failure(excinfo) -> bool:
    """Whether a test's exception came from compiling a kernel (the only failures this mode checks)."""
    e = excinfo.value
    name = type(e).__name__
    if "Compil" in name or "PTXAS" in name.upper() or name == "OutOfResources":
        return True
    if isinstance(e, KeyError) and "unrecognised" in str(e):
        return True
    return any(any(m in str(entry.path) for m in COMPILE_ERROR_MARKERS) for entry in excinfo.traceback)


def pytest_runtest_makereport(item, call):
    """Hook body: turn failures that are not compile failures into skips."""
    if call.excinfo is None or call.when != "call":
        return None
    if call.excinfo.errisinstance(pytest.skip.Exception) or is_compile_failure(call.excinfo):
        return None
    return f"compile-only: kernels built, not run ({type(call.excinfo.value).__name__})"
