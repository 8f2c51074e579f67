"""The one place for test data and comparisons (import from every test module).

* ``DEVICE``: where kernels run ("cpu" under the interpreter, else "cuda").
* ``make_data(kind, n, dtype)``: random and adversarial inputs (NaN, ±0.0, ±inf, all-equal,
  sorted, reversed, few-unique), fresh each call.
* ``poisoned(shape, dtype)``: an output buffer full of a value no correct kernel writes there,
  so an unwritten slot fails the comparison.
* ``assert_equal(out, ref)``: exact comparison (NaN == NaN, -0.0 vs +0.0 distinguished when
  ``signed_zero=True``); ``assert_close(out, ref, rtol, atol)`` for float accumulations;
  ``assert_sum_close(out, x, ...)`` for float sums, within their rounding bound (a fixed atol fails
  on items that cancel).
* ``SIZES_SMALL``: the edge sizes for a tile of ``tile`` items: 0, 1, tile-1, tile, tile+1, a few
  tiles with a ragged tail.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from tritoncub._utils import compile_only, interpreter_active

DEVICE = "cpu" if interpreter_active() or compile_only() else "cuda"

INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64]
UINT_DTYPES = [d for d in (torch.uint8, getattr(torch, "uint16", None), getattr(torch, "uint32", None),
                           getattr(torch, "uint64", None)) if d is not None]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
ALL_DTYPES = INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES

DATA_KINDS = ["random", "special", "equal", "sorted", "reversed", "few_unique"]


def edge_sizes(tile: int, tiles: int = 3) -> list[int]:
    """0, 1, tile-1, tile, tile+1 and ``tiles`` tiles plus a ragged tail (a non-power-of-two)."""
    return sorted({0, 1, max(tile - 1, 1), tile, tile + 1, tiles * tile + tile // 3 + 1})


def _random(n: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), generator=gen).bool()
    if dtype.is_floating_point:
        return (torch.randn(n, generator=gen, dtype=torch.float64) * 100).to(dtype)
    if dtype in (torch.int64, getattr(torch, "uint64", None)):
        rng = np.random.default_rng(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
        raw = torch.from_numpy(rng.integers(-2**63, 2**63 - 1, size=n, dtype=np.int64, endpoint=True))
        return raw if dtype == torch.int64 else raw.view(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max + 1, (n,), generator=gen, dtype=torch.int64).to(dtype)


def _np_sorted(x: torch.Tensor, descending: bool) -> torch.Tensor:
    a = np.sort(_np(x), kind="stable")
    if descending:
        a = a[::-1].copy()
    t = torch.from_numpy(a)
    if x.dtype == getattr(torch, "uint64", None):
        return t.view(torch.int64).view(torch.uint64) if t.dtype != torch.int64 else t.view(torch.uint64)
    return t.to(x.dtype)


def make_data(kind: str, n: int, dtype: torch.dtype, seed: int | None = None,
              device: str = DEVICE) -> torch.Tensor:
    """Fresh test data of ``kind`` (one of ``DATA_KINDS``) with ``n`` items."""
    gen = torch.Generator()
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = _random(n, dtype, gen)
    if kind == "random":
        pass
    elif kind == "special":
        if dtype.is_floating_point and n:
            specials = torch.tensor([math.nan, 0.0, -0.0, math.inf, -math.inf, 1.0, -1.0],
                                    dtype=torch.float64).to(dtype)
            pick = torch.randint(0, 3, (n,), generator=gen) == 0
            x[pick] = specials[torch.randint(0, len(specials), (int(pick.sum()),), generator=gen)]
        elif n and dtype != torch.bool:
            info = torch.iinfo(dtype)
            if dtype == getattr(torch, "uint64", None):  # 0, max, 1, 2^63 through int64 bit patterns
                specials = np.array([0, -1, 1, -2**63], dtype=np.int64)
                base = x.view(torch.int64).numpy()
            else:
                specials = np.array([info.min, info.max, 0, 1], dtype=np.int64)
                base = x.to(torch.int64).numpy()
            # numpy, not torch.where: torch 2.11 has no where() for uint16/32/64
            pick = torch.randint(0, 3, (n,), generator=gen).numpy() == 0
            choice = specials[torch.randint(0, len(specials), (n,), generator=gen).numpy()]
            mixed = torch.from_numpy(np.where(pick, choice, base))
            x = mixed.view(dtype) if dtype == getattr(torch, "uint64", None) else mixed.to(dtype)
    elif kind == "equal":
        x = x[:1].expand(n).clone() if n else x
        if n and dtype.is_floating_point:
            x[:] = -0.0 if n % 2 else 3.5
    elif kind in ("sorted", "reversed"):
        x = _np_sorted(x, kind == "reversed")
    elif kind == "few_unique":
        if n:
            x = torch.from_numpy(_np(x)[torch.randint(0, min(n, 4), (n,), generator=gen).numpy()].copy())
            x = x.view(dtype) if dtype == getattr(torch, "uint64", None) else x.to(dtype)
    else:
        raise ValueError(kind)
    return x.to(device)


def poison_value(dtype: torch.dtype):
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point:
        return 7.0e3 if dtype in (torch.float16,) else 1.2345e30 if dtype != torch.bfloat16 else 1.2e30
    return torch.iinfo(dtype).max - 3


def poisoned(shape, dtype: torch.dtype, device: str = DEVICE) -> torch.Tensor:
    """An output buffer filled with a value a correct kernel would not leave there."""
    return torch.full(shape if isinstance(shape, (tuple, list)) else (shape,), poison_value(dtype),
                      dtype=dtype, device=device)


def covering_sample(configs: list[dict]) -> list[dict]:
    """A subset of ``configs`` in which every pair of settings (key=value, key2=value2) that occurs
    together in some config occurs in a chosen one (a greedy pairwise cover, deterministic): every
    value of every key is launched, and every combination of two, with far fewer configs than all."""
    def pairs(c):
        items = sorted(c.items(), key=lambda kv: (kv[0], repr(kv[1])))
        return {(a, b) for i, a in enumerate(items) for b in items[i + 1:]}
    want = set().union(*(pairs(c) for c in configs)) if configs else set()
    chosen = []
    while want:
        best = max(configs, key=lambda c: len(pairs(c) & want))
        chosen.append(best)
        want -= pairs(best)
    return chosen


def count_calls(monkeypatch, owner, name: str) -> list:
    """Wrap ``owner.name`` (a module's function) for the test: the returned list gets one entry per
    call (its positional arguments), and the call goes through."""
    calls, real = [], getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)
    return calls


def plan_replays(monkeypatch) -> list:
    """Wrap :class:`tritoncub._launch.LaunchPlan`'s launches for the test: the returned list gets one
    entry per launch, True where it replayed a remembered step, False where it recorded or launched."""
    from tritoncub import _launch
    replayed, real = [], _launch.LaunchPlan.__call__

    def counted(self, *args, **kwargs):
        replayed.append(self.steps is not None)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(_launch.LaunchPlan, "__call__", counted)
    return replayed


def _np(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    if t.dtype in (getattr(torch, "uint16", None), getattr(torch, "uint32", None), getattr(torch, "uint64", None)):
        return t.to(torch.int64).numpy() if t.dtype != torch.uint64 else t.view(torch.int64).numpy().view(np.uint64)
    return t.numpy()


def assert_equal(out: torch.Tensor, ref: torch.Tensor, signed_zero: bool = False, msg: str = "") -> None:
    """Exact equality of values, shape and dtype; NaN equals NaN (complex: part by part)."""
    assert out.shape == ref.shape, f"{msg} shape {tuple(out.shape)} != {tuple(ref.shape)}"
    assert out.dtype == ref.dtype, f"{msg} dtype {out.dtype} != {ref.dtype}"
    a, b = _np(out), _np(ref)
    if a.dtype.kind == "c":   # (complex: each part compared as a float, so a NaN part equals a NaN part)
        a, b = np.stack([a.real, a.imag], -1), np.stack([b.real, b.imag], -1)
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        same = (a == b) | both_nan
        if signed_zero:
            same &= (np.signbit(a) == np.signbit(b)) | both_nan
    else:
        same = a == b
    if not same.all():
        bad = np.flatnonzero(~same.reshape(-1))
        raise AssertionError(f"{msg} {bad.size} of {same.size} items differ; first at flat index {bad[0]}: "
                             f"got {a.reshape(-1)[bad[0]]}, expected {b.reshape(-1)[bad[0]]}")


def assert_close(out: torch.Tensor, ref: torch.Tensor, rtol: float = 1e-5, atol: float = 1e-6,
                 msg: str = "") -> None:
    """Float comparison with tolerances; NaN must match NaN, inf must match inf. Integer and bool
    results are compared exactly (``assert_equal``: float64 would round int64 past 2^53)."""
    assert out.shape == ref.shape, f"{msg} shape {tuple(out.shape)} != {tuple(ref.shape)}"
    assert out.dtype == ref.dtype, f"{msg} dtype {out.dtype} != {ref.dtype}"
    assert not out.dtype.is_complex, f"{msg} assert_close takes real dtypes, not {out.dtype}"
    if not out.dtype.is_floating_point:
        assert_equal(out, ref, msg=msg)
        return
    torch.testing.assert_close(out.detach().cpu().to(torch.float64), ref.detach().cpu().to(torch.float64),
                               rtol=rtol, atol=atol, equal_nan=True, msg=msg or None)


def unit_roundoff(dtype: torch.dtype) -> float:
    """The unit roundoff ``u`` of a float dtype (half its eps): one rounding errs by at most ``u`` relative."""
    return torch.finfo(dtype).eps / 2


def assert_sum_close(out: torch.Tensor, x: torch.Tensor, op: str = "sum", offsets=None, dim=-1,
                     keepdim: bool = False) -> None:
    """A floating sum (or mean) of ``x`` over ``dim`` (an int, a list of them, or None: every dim;
    ``keepdim`` as torch.sum's; the default: each row of a 2-D ``x``), or with ``offsets`` of each segment
    ``x[offsets[i]:offsets[i + 1]]`` of a 1-D ``x``, against the exact float64 result, within the a
    priori rounding error bound; ``out`` has x's dtype.

    Any summation order (sequential lanes, a tree over lanes, split partials) of ``n`` items with
    every partial rounded to the accumulator (unit roundoff ``u``: fp32 for fp16/bf16/fp32 items)
    errs by at most ``gamma_(n-1) * sum|x_i|``, ``gamma_k = k*u / (1 - k*u)`` (Higham, Accuracy and
    Stability of Numerical Algorithms, 4.2); the result's rounding to a narrower output dtype adds
    ``u_out`` times its magnitude, the division of a mean one more rounding; the float64 reference itself errs
    by at most ``gamma_(n-1)`` in float64. The error scales with ``sum|x_i|``,
    not with ``|sum|``: a relative tolerance fails on a sum that cancels (e.g. -11.47 out of ~140
    items of magnitude ~100), and so does a fixed atol (a CI failure: -0.37665 against -0.37677).
    Non-finite results must match exactly (NaN matches NaN)."""
    dtype = x.dtype
    assert out.dtype == dtype, f"sum of {dtype} items gave {out.dtype}"
    xd = x.detach().double()
    if offsets is None:
        dims = tuple(range(x.dim())) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
        ref, abs_sum = xd.sum(dims, keepdim=keepdim), xd.abs().sum(dims, keepdim=keepdim)
        n = torch.full_like(ref, x.numel() // ref.numel() if ref.numel() else 0)
    else:
        offs = offsets.to(device=x.device, dtype=torch.int64)
        ref = torch.segment_reduce(xd, "sum", offsets=offs)
        abs_sum = torch.segment_reduce(xd.abs(), "sum", offsets=offs)
        n = (offs[1:] - offs[:-1]).double()
    u = unit_roundoff(torch.float64 if dtype == torch.float64 else torch.float32)
    u64 = unit_roundoff(torch.float64)
    k = (n - 1).clamp_min(0)
    # the result's error, plus the float64 reference's own (negligible unless x is float64)
    bound = (k * u / (1 - k * u) + k * u64 / (1 - k * u64)) * abs_sum
    if op == "mean":
        ref, bound = ref / n, bound / n.clamp_min(1)
        bound = bound + u * ref.abs()
    u_out = unit_roundoff(out.dtype)
    if u_out > u:   # (one more rounding, of the accumulated sum, to the narrower result)
        bound = bound + u_out * (ref.abs() + bound)
    got = out.detach().double().to(ref.device)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    fin = torch.isfinite(ref)
    same = (got == ref) | (torch.isnan(got) & torch.isnan(ref))
    bad = torch.where(fin, (got - ref).abs() > bound, ~same)
    if bool(bad.any()):
        i = int(bad.reshape(-1).nonzero()[0, 0])
        raise AssertionError(f"{op} of row/segment {i} ({int(n.reshape(-1)[i])} items): got "
                             f"{float(got.reshape(-1)[i])!r}, exact {float(ref.reshape(-1)[i])!r}, error bound "
                             f"{float(bound.reshape(-1)[i])!r}")


def limit_grid_y(monkeypatch, module, limit: int) -> list:
    """Make launches put at most ``limit`` programs on grid axis 1 (``tritoncub._utils.MAX_GRID_Y``, CUDA's
    65535 on a GPU) and record every grid ``module.launch`` sends; a launch over the limit fails, as it
    would on a GPU (the interpreter has no limit of its own)."""
    import tritoncub._utils as U
    monkeypatch.setattr(U, "MAX_GRID_Y", limit)
    grids = []
    real = module.launch

    def checked(kernel, grid, *args, **kwargs):
        grids.append(tuple(grid))
        assert len(grid) < 2 or grid[1] <= limit, f"{kernel.__name__}: grid {grid} over the axis-1 limit {limit}"
        return real(kernel, grid, *args, **kwargs)

    monkeypatch.setattr(module, "launch", checked)
    return grids


def launch_values(monkeypatch, module, kernel_name: str, key: str) -> list:
    """Record the ``key`` meta-parameter of every launch of ``module.kernel_name`` that ``module.launch``
    sends (the launches go through)."""
    values = []
    real = module.launch

    def recording(kernel, grid, *args, **kwargs):
        if kernel is getattr(module, kernel_name):
            values.append(kwargs[key])
        return real(kernel, grid, *args, **kwargs)

    monkeypatch.setattr(module, "launch", recording)
    return values


def _extent(t: torch.Tensor):
    """[first, last + 1) byte addresses a tensor view can reach (None when empty)."""
    if t.numel() == 0:
        return None
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()


@contextlib.contextmanager
def deterministic_algorithms(on: bool = True):
    """``torch.use_deterministic_algorithms(on)`` inside the block, the previous mode restored after."""
    mode = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(on)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(mode[0], warn_only=mode[1])


@contextlib.contextmanager
def interpreter_bounds_checked():
    """Under Triton's interpreter, every load and store a kernel launched in the block makes (masked-in
    lanes only) must fall inside one of that launch's tensor arguments; yields the list of those that do
    not (kernel, "load"/"store", a few addresses). Reading or writing past a tensor changes no result a
    test compares, so tests of masking use this. Compiled (GPU) runs check nothing: the list stays empty."""
    bad: list = []
    if not interpreter_active():
        yield bad
        return
    import triton.runtime.interpreter as interp
    ranges: list = []
    name = [None]
    real_call = interp.GridExecutor.__call__
    builder = interp.InterpreterBuilder
    real_load, real_store = builder.create_masked_load, builder.create_masked_store

    def call(self, *args, **kwargs):
        saved, saved_name = list(ranges), name[0]
        ranges[:] = [e for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)
                     for e in [_extent(a)] if e is not None]
        name[0] = getattr(self.fn, "__name__", str(self.fn))
        try:
            return real_call(self, *args, **kwargs)
        finally:
            ranges[:], name[0] = saved, saved_name

    def check(ptrs, mask, what):
        addr = np.asarray(ptrs.data).astype(np.uint64).ravel()
        m = np.broadcast_to(np.asarray(mask.data).astype(bool), np.shape(ptrs.data)).ravel()
        addr = addr[m]
        width = ptrs.get_element_ty().primitive_bitwidth // 8
        inside = np.zeros(addr.shape, bool)
        for lo, hi in ranges:
            inside |= (addr >= lo) & (addr + width <= hi)
        if not inside.all():
            bad.append((name[0], what, [hex(int(a)) for a in addr[~inside][:4]]))

    def load(self, ptrs, mask, *a):
        check(ptrs, mask, "load")
        return real_load(self, ptrs, mask, *a)

    def store(self, ptrs, value, mask, *a):
        check(ptrs, mask, "store")
        return real_store(self, ptrs, value, mask, *a)

    interp.GridExecutor.__call__ = call
    builder.create_masked_load, builder.create_masked_store = load, store
    try:
        yield bad
    finally:
        interp.GridExecutor.__call__ = real_call
        builder.create_masked_load, builder.create_masked_store = real_load, real_store


def _nbytes(extent) -> int:
    """The length of an :func:`_extent` (0 for an empty tensor's None)."""
    return 0 if extent is None else extent[1] - extent[0]


def _tensor_at(address: int, dtype: torch.dtype, nbytes: int) -> torch.Tensor:
    """A flat CPU tensor of ``dtype`` over the ``nbytes`` of memory at ``address`` (no copy)."""
    import ctypes
    itemsize = torch.empty((), dtype=dtype).element_size()
    nbytes -= nbytes % itemsize
    if nbytes == 0:
        return torch.empty(0, dtype=dtype)
    buf = (ctypes.c_char * nbytes).from_address(address)
    return torch.frombuffer(buf, dtype=torch.uint8).view(dtype)


def interpreter_replays(monkeypatch, module=None, caches=(), plans: bool = False) -> list:
    """Let remembered launches be recorded and replayed under the interpreter, where the package only
    does so on GPUs: :func:`tritoncub._launch.bind` launches through the interpreter and returns a
    function that launches the kernel again with each tensor argument rebuilt at the raw address
    :func:`tritoncub._launch.replay` passes (its dtype and extent taken from the recorded argument).
    So a CPU test runs the same records, relocations and replays (roots, offsets, scratch) as a GPU
    does, with the interpreter in place of the launcher.
    With ``module``: its replay guard ``_replayable`` is switched on, its ``caches`` (names of its
    replay dicts) start empty, and the returned list gets one entry per call of its ``replay``. With
    ``plans``: :class:`tritoncub._launch.LaunchPlan` remembers sequences too (its steps get the
    arguments as tensors, which the launcher takes as they are)."""
    from tritoncub import _launch

    def bind(kernel, grid, *args, **kwargs):
        _launch._compile_and_launch(kernel, grid, args, kwargs)
        spans = [(a.dtype, _nbytes(_extent(a))) if isinstance(a, torch.Tensor) else None for a in args]
        # (the integer arguments a GPU does not specialise on: a Gluon kernel's parameters say; the
        # interpreter's kernels keep their decorator's list)
        if getattr(kernel, "params", None) is not None:
            unspecialised = {i for i, p in enumerate(kernel.params) if p.do_not_specialize}
        else:
            names = (getattr(kernel, "kwargs", None) or {}).get("do_not_specialize") or ()
            unspecialised = {n if isinstance(n, int) else kernel.arg_names.index(n) for n in names}

        def run(*new_args):
            # (``args`` stays referenced here on purpose: the recorded call's buffers stay allocated,
            # so a later call's cannot take their addresses, and a replay that still pointed at the
            # recorded buffers would compute on stale data, not pass by luck)
            assert len(new_args) == len(args), "a replay passed another number of arguments"
            # what a GPU's compiled kernel is specialised on must match: a tensor's dtype, and for a
            # tensor or an address its 16-byte alignment (a replay that differs is a key gap; the
            # interpreter would otherwise compute on the new tensor as it is and hide it)
            for i, (old, new) in enumerate(zip(args, new_args)):
                if old.__class__ is int and i not in unspecialised:
                    assert new.__class__ is int and _launch._spec(new) == _launch._spec(old), (
                        f"{kernel.__name__}: integer argument {i} replayed as {new}, recorded as {old} "
                        "(another specialisation)")
                if isinstance(old, torch.Tensor):
                    ptr = new.data_ptr() if isinstance(new, torch.Tensor) else new
                    assert not isinstance(new, torch.Tensor) or new.dtype == old.dtype, (
                        f"{kernel.__name__}: argument {i} replayed as {new.dtype}, recorded as {old.dtype}")
                    assert (ptr % 16 == 0) == (old.data_ptr() % 16 == 0), (
                        f"{kernel.__name__}: argument {i} replayed with another 16-byte alignment")
            rebuilt = tuple(_tensor_at(v, *span) if span is not None and not isinstance(v, torch.Tensor) else v
                            for v, span in zip(new_args, spans))
            _launch._compile_and_launch(kernel, grid, rebuilt, kwargs)
        return run
    monkeypatch.setattr(_launch, "bind", bind)
    if plans:
        monkeypatch.setattr(_launch, "_plans_ok", lambda: True)
    if module is None:
        return []
    monkeypatch.setattr(module, "_replayable", lambda x: True)
    for name in caches:
        monkeypatch.setattr(module, name, {})
    return count_calls(monkeypatch, module, "replay")


@gluon.jit
def striped_slot_offsets(L, WARPS, SLOTS):
    """Offsets ``(w * SLOTS + s) * 32 + lane`` of a ``[WARPS, SLOTS, 32]`` warp-striped tile in layout ``L``
    (``BlockedLayout([1, SLOTS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])``): the Gluon warp-shuffle tests'
    inputs and outputs, laid out as the kernels' register slots."""
    w = gl.arange(0, WARPS, layout=gl.SliceLayout(1, gl.SliceLayout(2, L)))
    s = gl.arange(0, SLOTS, layout=gl.SliceLayout(0, gl.SliceLayout(2, L)))
    ln = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(1, L)))
    return (gl.expand_dims(gl.expand_dims(w, 1), 2) * SLOTS + gl.expand_dims(gl.expand_dims(s, 0), 2)) * 32 \
        + gl.expand_dims(gl.expand_dims(ln, 0), 1)
