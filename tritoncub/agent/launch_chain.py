"""Launch chains: the kernels of one operation overlapping their launches (programmatic dependent
launch, NVIDIA sm_90 and newer).

An operation made of several kernels, each reading what the one before it wrote, normally leaves the
GPU idle between them: a kernel's programs start only once the previous kernel has finished and its
memory writes are flushed. In a chain, each kernel lets the next one launch as soon as all of its own
programs have started (``griddepcontrol.launch_dependents``), and each kernel after the first waits,
before its first memory access, until the kernel before it has finished and its writes are visible
(``griddepcontrol.wait``). The next kernel's programs are then already resident when the previous
one ends. The order of results and every value are unchanged; only the launch gap goes.

Use::

    @triton.jit
    def kernel(..., PDL: tl.constexpr = 0):
        chain_link(PDL)          # first statement: nothing is read or written before it
        ...

    launch(first_kernel, grid, ..., **chain_kwargs(device, follows=False))
    launch(next_kernel, grid, ..., **chain_kwargs(device, follows=True))

Rules: every kernel launched with ``follows=True`` must call :func:`chain_link` before any load,
store or atomic (it may otherwise read its inputs before they are written). A kernel whose
predecessor is not part of the chain (a torch kernel queued in between) is still safe: the wait
covers whatever kernel precedes it on the stream. The first kernel of an operation is launched
without the attribute (it starts after whatever precedes it, as any launch does).
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

#: switch for measurements and tests (bench/probes): False launches every kernel on its own
ENABLED = True
#: measurement override of every launch's ``early`` choice (None: each launcher's own)
EARLY_OVERRIDE = None


def memo_key() -> tuple:
    """What a launcher that remembers its launches must key them on (the switches above)."""
    return (ENABLED, EARLY_OVERRIDE)


@triton.jit
def chain_link(PDL: tl.constexpr):
    """``PDL`` 2: let the next kernel of the chain launch now, then wait for the previous one; 1: only
    wait (the next kernel launches as this one's programs exit); 0 / False: nothing (compiles to
    nothing). Both instructions are no-ops in a kernel launched without the chain attribute."""
    if PDL >= 2:
        gdc_launch_dependents()
    if PDL >= 1:
        gdc_wait()


def chain_ok(device: torch.device) -> bool:
    """Whether kernels for ``device`` may be chained: compiled NVIDIA kernels for sm_90 or newer (in
    the compile-check mode: an NVIDIA target of sm_90 or newer)."""
    from .._utils import _INTERPRETER, _capability, compile_only
    if not ENABLED or _INTERPRETER:
        return False
    if compile_only():
        backend, _, arch = os.environ.get("TRITONCUB_COMPILE_TARGET", "cuda:90").partition(":")
        return backend == "cuda" and int(arch or 90) >= 90
    if device.type != "cuda" or torch.version.hip is not None:
        return False
    return _capability(device.index if device.index is not None else torch.cuda.current_device())[0] >= 9


_KWARGS: dict = {}


def chain_kwargs(device: torch.device, follows: bool, early: bool = True) -> dict:
    """Launch keyword arguments of one kernel of a chain: the ``PDL`` constexpr, and for a kernel
    that ``follows`` another of the chain, the launch attribute that lets it start early. ``early``:
    this kernel lets the next one launch as soon as all its programs have started (their programs
    then wait on the GPU, resident); otherwise as its programs exit (only the launch gap goes).
    The returned dict is shared: pass it on with ``**``, do not change it."""
    key = (device, follows, early, ENABLED, EARLY_OVERRIDE)
    kw = _KWARGS.get(key)
    if kw is None:
        kw = _chain_kwargs(device, follows, early)
        if device.type == "cuda":   # (CPU stand-ins: the interpreter or the compile check, decided afresh)
            _KWARGS[key] = kw
    return kw


def _chain_kwargs(device: torch.device, follows: bool, early: bool) -> dict:
    if not chain_ok(device):
        return {"PDL": False}
    level = 2 if (early if EARLY_OVERRIDE is None else EARLY_OVERRIDE) else 1
    return {"PDL": level, "launch_pdl": True} if follows else {"PDL": level}


@gluon.jit
def chain_link_gluon(PDL: gl.constexpr):
    """:func:`chain_link` for Gluon kernels."""
    if PDL >= 2:
        gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [], dtype=gl.int32,
                                  is_pure=False, pack=1)
    if PDL >= 1:
        gl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)
