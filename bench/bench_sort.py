"""Radix sort: tritoncub's onesweep sort against torch.sort and CUB (``cupy.sort`` is Thrust's sort,
which is CUB's radix sort), for the bars of the radix-sort issue.

Cases: keys-only 32-bit sorts (uint32/int32/float32, Gkeys/s), torch's API (values + int64
indices) at 2^20/2^24/2^28 (and at 2^28 CUB's pairs sort with int64 indices, through
``cupy.argsort``), 64-bit keys and int64 pairs (CUB's through ``cupy.argsort`` too), 16 significant bits (``end_bit=16`` and
small-range keys whose upper digit places are skipped), and key distributions (uniform, all-equal,
sorted, reversed, few unique: the AND of four random words, as in the onesweep paper).

``bytes_moved`` is the floor: keys (and values) read once and written once. An LSD radix sort moves
more: the upfront histogram reads the keys once and every digit pass reads and writes them (and
the values): for 4 passes of 4-byte keys, 4 + 4 x 8 = 36 bytes per key against the floor of 8.
"""
from __future__ import annotations

import torch

import tritoncub  # noqa: F401  (registers the ops: this family may run alone)
from bench.harness import Case, cupy_module, rotating, to_cupy

ops = torch.ops.tritoncub


def _keys(ctx, n, dtype, kind="uniform", seed=0):
    gen = torch.Generator(device=ctx.device).manual_seed(seed)
    if dtype.is_floating_point:
        x = torch.randn(n, device=ctx.device, generator=gen).to(dtype)
    else:
        x = torch.randint(-2**62, 2**62, (n,), device=ctx.device, generator=gen, dtype=torch.int64)
        if kind == "few_unique":
            for _ in range(3):
                x &= torch.randint(-2**62, 2**62, (n,), device=ctx.device, generator=gen, dtype=torch.int64)
        if dtype == torch.int32:
            x = x.to(torch.int32)
        elif dtype == getattr(torch, "uint32", None):
            x = x.to(torch.int32).view(torch.uint32)
        elif dtype != torch.int64:
            x = x.to(dtype)
    if kind == "equal":
        x = x[:1].expand(n).contiguous()
    elif kind in ("sorted", "reversed"):
        v = x.view(torch.int32) if dtype == getattr(torch, "uint32", None) else x
        v = torch.sort(v, descending=(kind == "reversed")).values
        x = v.view(dtype) if dtype == getattr(torch, "uint32", None) else v
    elif kind == "small_range":
        x = (x.view(torch.int32) & 0xFFFF).view(dtype) if dtype == getattr(torch, "uint32", None) else x & 0xFFFF
    return x


def _check_keys(x, got):
    def proxy(t):
        return t.view(torch.int32).to(torch.int64) & 0xFFFFFFFF if t.dtype == getattr(torch, "uint32", None) else t
    ref = torch.sort(proxy(x)).values
    assert torch.equal(proxy(got), ref), "sorted keys differ from torch.sort"


def _name(dtype):
    return str(dtype).replace("torch.", "")


def cases(ctx):
    cp = cupy_module()
    big = 1 << (22 if ctx.quick else 28)
    u32 = getattr(torch, "uint32", torch.int32)

    # keys only, 32-bit, uniform
    for dtype in (u32, torch.int32, torch.float32):
        x = _keys(ctx, big, dtype)
        moved = 2 * 4 * big
        yield Case("sort_keys", "tritoncub", _name(dtype), big, lambda x=x: ops.sort_keys(x), moved,
                   variant="uniform", check=lambda x=x: _check_keys(x, ops.sort_keys(x)))
        if cp is not None:
            cx = to_cupy(x)
            yield Case("sort_keys", "cub", _name(dtype), big, lambda cx=cx: cp.sort(cx), moved, variant="uniform",
                       subtract=lambda cx=cx: cx.copy())
        yield Case("sort_keys", "torch", _name(dtype), big, lambda x=x: torch.sort(x.view(torch.int32) if dtype == u32 else x),
                   moved, variant="uniform (values+indices)")
    # distributions (uint32 keys only)
    for kind in ("equal", "sorted", "reversed", "few_unique", "small_range"):
        x = _keys(ctx, big, u32, kind)
        yield Case("sort_keys", "tritoncub", _name(u32), big, lambda x=x: ops.sort_keys(x), 8 * big, variant=kind,
                   check=lambda x=x: _check_keys(x, ops.sort_keys(x)))
        if cp is not None:
            cx = to_cupy(x)
            yield Case("sort_keys", "cub", _name(u32), big, lambda cx=cx: cp.sort(cx), 8 * big, variant=kind,
                       subtract=lambda cx=cx: cx.copy())
    # 16 significant bits by bit range
    x = _keys(ctx, big, u32)
    def check16(x=x):
        xi = x.view(torch.int32)
        ref = xi[torch.sort(xi & 0xFFFF, stable=True).indices]     # stably by the 16 bits sorted on
        assert torch.equal(ops.sort_keys(x, False, 0, 16).view(torch.int32), ref), "end_bit=16"
    yield Case("sort_keys", "tritoncub", _name(u32), big, lambda x=x: ops.sort_keys(x, False, 0, 16), 8 * big,
               variant="end_bit=16", check=check16)
    # torch's API: values + int64 indices
    for lg in ((16, 20, 22) if ctx.quick else (20, 24, 28)):
        n = 1 << lg
        for dtype in (torch.float32, torch.int32):
            x = _keys(ctx, n, dtype)
            xs = [x] + [_keys(ctx, n, dtype, seed=s) for s in range(1, ctx.copies_for(4 * n))]
            moved = n * (4 + 4 + 8)

            def check(x=x):
                v, i = ops.sort(x, -1, False, False)
                r = torch.sort(x, stable=True)
                assert torch.equal(v, r.values) and torch.equal(i, r.indices), "sort differs from torch.sort"
            yield Case("sort", "tritoncub", _name(dtype), n, rotating(xs, lambda t: ops.sort(t, -1, False, False)),
                       moved, check=check)
            yield Case("sort", "torch", _name(dtype), n, rotating(xs, lambda t: torch.sort(t)), moved)
            if cp is not None and n == big:
                yield _cupy_argsort_case(cp, "sort", _name(dtype), x, moved)
    # 64-bit keys, and int64 pairs
    x = _keys(ctx, big, torch.int64)
    yield Case("sort_keys", "tritoncub", "int64", big, lambda: ops.sort_keys(x), 16 * big, variant="uniform",
               check=lambda: _check_keys(x, ops.sort_keys(x)))
    if cp is not None:
        cx64 = to_cupy(x)
        yield Case("sort_keys", "cub", "int64", big, lambda: cp.sort(cx64), 16 * big, variant="uniform",
                   subtract=lambda: cx64.copy())
    v = torch.arange(big, device=ctx.device)
    def check_pairs():
        k, vv = ops.sort_pairs(x, v)
        r = torch.sort(x, stable=True)
        assert torch.equal(k, r.values) and torch.equal(vv, r.indices), "sort_pairs differs from torch.sort"
    yield Case("sort_pairs", "tritoncub", "int64+int64", big, lambda: ops.sort_pairs(x, v), 32 * big,
               check=check_pairs)
    # (the same work: the check above shows sort_pairs(x, arange) equals torch.sort(x); same case, so
    # the headline compares them)
    yield Case("sort_pairs", "torch", "int64+int64", big, lambda: torch.sort(x), 32 * big,
               extra={"as": "torch.sort values+indices"})
    if cp is not None:
        yield _cupy_argsort_case(cp, "sort_pairs", "int64+int64", x, 32 * big)


def _cupy_argsort_case(cp, op, dtype, x, moved):
    """CUB's pairs sort with int64 indices as CuPy reaches it: ``cupy.argsort`` (Thrust's
    ``stable_sort_by_key`` of a copy of the keys and a sequence of int64 indices; the sorted keys are
    not returned, so it does a little less than ``torch.sort``). Checked against torch's indices."""
    cx = to_cupy(x)

    def check():
        got = torch.from_dlpack(cp.argsort(cx))
        assert torch.equal(got, torch.sort(x, stable=True).indices), "cupy.argsort differs from torch.sort"
    return Case(op, "cub", dtype, x.numel(), lambda: cp.argsort(cx), moved, check=check,
                extra={"as": "cupy.argsort (Thrust stable_sort_by_key, int64 indices; no sorted values)"})
