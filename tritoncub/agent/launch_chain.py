"""Launch chains: the kernels of one operation overlapping their launches (programmatic dependent
launch, NVIDIA sm_90 and newer).

An operation made of several kernels, each reading what the one before it wrote, normally leaves the
GPU idle between them: a kernel's programs start only once the previous kernel has finished and its
memory writes are flushed. In a chain, each kernel after the first is launched with an attribute that
lets it start before its predecessor has ended, and waits, before its first memory access, until the
predecessor has finished and its writes are visible (``griddepcontrol.wait``). When it may start is
the predecessor's choice, its ``PDL`` level:

* 1 (*late*, what the library's chains use): no trigger; the next kernel launches as the
  predecessor's programs exit, which saves the launch gap (about 1 us per kernel on the H100).
* 2 (*early*, a measurement setting): the predecessor executes ``griddepcontrol.launch_dependents``
  first thing, so the next kernel launches once all of the predecessor's programs have started, and
  its programs sit resident in the wait. It was no faster for the compaction and reduce-by-key, and
  slower for the radix sort, whose next pass's resident programs took room from the running one (2^24
  fp32 with positions: passes of 162-174 us became 182-190, the sort 721 -> 749 us; run-length encode
  145.4-145.6 us late, 145.9-146.0 early, 147.2-148.4 unchained; reduce-by-key 289-292 late, 289-290
  early, 296 unchained: ``bench/results/logs/launch_chain_probe-*-20261124*.log``).
* 0: neither instruction (a kernel that is not part of a chain, or chaining off).

The trigger acts in the kernel that executes it whatever that kernel's own launch attributes, so the
*last* kernel of a chain must not be early: the caller's next kernel, if it was launched with the
attribute, would start early. The values computed, and their order, are the same whatever the levels.

Use::

    @triton.jit
    def kernel(..., PDL: tl.constexpr = 0):
        chain_link(PDL)          # first statement: nothing is read or written before it
        ...

    launch(first_kernel, grid, ..., **chain_kwargs(device, follows=False))
    launch(next_kernel, grid, ..., **chain_kwargs(device, follows=True))

Rules: every kernel launched with ``follows=True`` must call :func:`chain_link` (Gluon:
:func:`chain_link_gluon`) before any load, store or atomic. A kernel whose predecessor is not part of
the chain (a torch kernel queued in between) is still safe: the wait covers whatever kernel precedes
it on the stream. The first kernel of an operation is launched without the attribute (it starts after
whatever precedes it, as any launch does). A launcher that remembers its launches keys them on
:func:`memo_key`.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

#: switch for measurements and tests (bench/probes): False launches every kernel on its own
ENABLED = True
#: measurement switch (bench/probes): True makes every chain early (level 2) instead of late (level 1)
EARLY = False


@triton.jit
def chain_link(PDL: tl.constexpr):
    """``PDL`` 2: let the next kernel of the chain launch now, then wait for the previous one; 1: only
    wait (the next kernel launches as this one's programs exit); 0 / False: nothing (compiles to
    nothing). The wait is a no-op in a kernel launched without the chain attribute; the trigger is not
    (see the module doc)."""
    if PDL >= 2:
        gdc_launch_dependents()
    if PDL >= 1:
        gdc_wait()


@gluon.jit
def chain_link_gluon(PDL: gl.constexpr):
    """:func:`chain_link` for Gluon kernels."""
    if PDL >= 2:
        gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [], dtype=gl.int32,
                                  is_pure=False, pack=1)
    if PDL >= 1:
        gl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


def memo_key() -> tuple:
    """What a launcher that remembers its launches must key them on (the switches above)."""
    return (ENABLED, EARLY)


def chain_ok(device: torch.device) -> bool:
    """Whether kernels for ``device`` may be chained: compiled NVIDIA kernels for sm_90 or newer (in
    the compile-check mode: an NVIDIA target of sm_90 or newer)."""
    # (the _utils names are looked up at each call, so that tests can switch the modes)
    from .. import _utils as U
    if not ENABLED or U._INTERPRETER:
        return False
    if U.compile_only():
        return U.compile_target_capability() >= 90
    if device.type != "cuda" or torch.version.hip is not None:
        return False
    return U._capability(device.index if device.index is not None else torch.cuda.current_device())[0] >= 9


_KWARGS: dict = {}


def chain_kwargs(device: torch.device, follows: bool) -> dict:
    """Launch keyword arguments of one kernel of a chain: the ``PDL`` constexpr (its level, see the
    module doc: 1, or 2 under :data:`EARLY`; 0 for a first kernel that is not early, or off a chain),
    and for a kernel that ``follows`` another of the chain, the launch attribute that lets it start
    early.
    The returned dict is shared: pass it on with ``**``, do not change it."""
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    key = (device, follows, ENABLED, EARLY)
    kw = _KWARGS.get(key)
    if kw is None:
        kw = _chain_kwargs(device, follows)
        if device.type == "cuda":   # (CPU stand-ins: the interpreter or the compile check, decided afresh)
            _KWARGS[key] = kw
    return kw


def _chain_kwargs(device: torch.device, follows: bool) -> dict:
    if not chain_ok(device):
        return {"PDL": 0}
    level = 2 if EARLY else 1
    if not follows:
        return {"PDL": 2 if level == 2 else 0}   # (a first kernel has nothing to wait for)
    return {"PDL": level, "launch_pdl": True}
