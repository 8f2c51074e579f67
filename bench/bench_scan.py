"""Prefix scans: tritoncub's single-pass look-back scan (fast and reproducible modes) and rows scan
against ``torch.cumsum``, ``torch.compile``'d cumsum and CUB (``cupy.cumsum`` with the CUB
accelerator), a custom-operator scan (the linear recurrence ``x[t] = a[t]·x[t-1] + b[t]``) and torch's
other scans (logcumsumexp, cumprod, cummax) against torch.

``bytes_moved`` is the minimum: every input item read once, every output item written once, so
GB/s compares directly with the copy bandwidth printed at the top of the run."""
from __future__ import annotations

import torch

from bench.harness import Case, cupy_module, rotating, to_cupy
from tritoncub import policy
from tritoncub.device import scan as S

#: extra single-pass configs timed beside the policy's choice (tuning data from every bench run)
CONFIG_VARIANTS = [("fast", dict(TILE_ITEMS=2048, LOOKBACK_WINDOW=128, num_warps=4)),
                   ("fast", dict(TILE_ITEMS=8192, LOOKBACK_WINDOW=128, num_warps=16)),
                   ("reproducible", dict(TILE_ITEMS=2048, LOOKBACK_WINDOW=512, num_warps=4)),
                   ("reproducible", dict(TILE_ITEMS=4096, LOOKBACK_WINDOW=128, num_warps=8))]


def _with_config(cfg, fn):
    def run(x):
        with policy.override("scan", cfg):
            return fn(x)
    return run


def _inputs(ctx, shape, dtype, make):
    n = 1
    for s in shape:
        n *= s
    nbytes = n * torch.empty((), dtype=dtype).element_size()
    gen = torch.Generator(device=ctx.device).manual_seed(0)
    return [make(shape, gen).to(dtype) for _ in range(ctx.copies_for(nbytes))], n


def _randn(ctx):
    return lambda shape, gen: torch.randn(shape, device=ctx.device, generator=gen)


def _randint(ctx):
    return lambda shape, gen: torch.randint(-1000, 1000, shape, device=ctx.device, generator=gen)


def _compiled_cumsum(dim):
    fn = torch.compile(lambda x: torch.cumsum(x, dim), dynamic=False)
    return fn


def _cumsum_cases(ctx, shape, dtype, dim=-1, out_dtype=None, cub=True, compiled=True, modes=("fast",),
                  variants=()):
    make = _randn(ctx) if dtype.is_floating_point else _randint(ctx)
    xs, n = _inputs(ctx, shape, dtype, make)
    res_dtype = torch.cumsum(xs[0][:1] if len(shape) == 1 else xs[0][..., :1], dim).dtype
    moved = n * (xs[0].element_size() + torch.empty((), dtype=res_dtype).element_size())
    name = str(dtype).replace("torch.", "") + ("" if res_dtype == dtype else "->" + str(res_dtype).replace("torch.", ""))
    shp = tuple(shape) if len(shape) > 1 else None

    def checker(fn):
        """A check of the call timed (each mode and config is its own code path)."""
        def check():
            got = fn(xs[0])
            ref = torch.cumsum(xs[0].double() if dtype.is_floating_point else xs[0], dim)
            if dtype.is_floating_point:
                err = (got.double() - ref).abs().max().item()
                scale = torch.cumsum(xs[0].double().abs(), dim).max().item()
                assert err <= 1e-5 * scale + 1e-3, f"cumsum error {err} (scale {scale})"
            else:
                assert torch.equal(got, ref), "integer cumsum differs from torch"
        return check

    for mode in modes:
        det = mode == "reproducible"
        fn = lambda x, det=det: S.inclusive_sum(x, dim, deterministic=det)   # noqa: E731
        yield Case("cumsum", "tritoncub", name, n, rotating(xs, fn), moved, shape=shp, variant=mode,
                   check=checker(fn))
    for mode, cfg in variants:
        det = mode == "reproducible"
        tag = f"{mode} tile={cfg['TILE_ITEMS']} w={cfg['num_warps']} lb={cfg['LOOKBACK_WINDOW']}"
        fn = _with_config(cfg, lambda x, det=det: S.inclusive_sum(x, dim, deterministic=det))
        yield Case("cumsum", "tritoncub", name, n, rotating(xs, fn), moved, shape=shp, variant=tag,
                   check=checker(fn))
    yield Case("cumsum", "torch", name, n, rotating(xs, lambda x: torch.cumsum(x, dim)), moved, shape=shp,
               variant="")
    if compiled:
        fn = _compiled_cumsum(dim)
        yield Case("cumsum", "torch.compile", name, n, rotating(xs, fn), moved, shape=shp, variant="",
                   check=lambda: fn(xs[0]))
    cp = cupy_module() if cub else None
    if cp is not None and len(shape) == 1:
        cxs = [to_cupy(x) for x in xs]
        cdt = cp.int64 if res_dtype == torch.int64 else None
        yield Case("cumsum", "cub", name, n, rotating(cxs, lambda x: cp.cumsum(x, dtype=cdt)), moved, shape=shp,
                   variant="cupy",
                   subtract=rotating(cxs, lambda x: x.astype(cdt or x.dtype, order="C", copy=True)))


def _linrec_cases(ctx, n):
    gen = torch.Generator(device=ctx.device).manual_seed(0)
    copies = ctx.copies_for(8 * n)
    pairs = [(torch.rand(n, device=ctx.device, generator=gen) * 0.2 + 0.9,
              torch.randn(n, device=ctx.device, generator=gen)) for _ in range(copies)]
    moved = 16 * n

    def check():
        a, b = pairs[0]
        m = min(n, 100000)
        _, rb = S.inclusive_scan((a[:m], b[:m]), S.combine_linear_recurrence)
        ref = torch.empty(m, dtype=torch.float64)
        acc = 0.0
        ac, bc = a[:m].double().cpu().tolist(), b[:m].double().cpu().tolist()
        for i in range(m):
            acc = ac[i] * acc + bc[i]
            ref[i] = acc
        err = (rb.double().cpu() - ref).abs().max().item()
        assert err < 1e-3, f"linear recurrence error {err}"

    yield Case("linear_recurrence", "tritoncub", "float32x2", n,
               rotating(pairs, lambda p: S.inclusive_scan(p, S.combine_linear_recurrence)), moved,
               variant="(a,b) pairs", check=check)
    yield Case("linear_recurrence", "tritoncub", "float32", n,
               rotating(pairs, lambda p: S.inclusive_sum(p[0])), 8 * n, variant="plain sum, same n")


def _torch_op_cases(ctx, op, shape, dim, ours, theirs, out_bytes, close=True):
    """One of torch's other scans (``torch.<op>``) against ours, results checked against torch's first
    (``close``: within float tolerance, else equal)."""
    xs, n = _inputs(ctx, shape, torch.float32, _randn(ctx))
    moved = n * (4 + out_bytes)
    shp = tuple(shape) if len(shape) > 1 else None

    def check():
        got, ref = ours(xs[0], dim), theirs(xs[0], dim)
        if close:
            torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)
        else:
            assert all(torch.equal(g, r) for g, r in zip(got, ref)), f"{op} differs from torch"

    yield Case(op, "tritoncub", "float32", n, rotating(xs, lambda x: ours(x, dim)), moved, shape=shp, check=check)
    yield Case(op, "torch", "float32", n, rotating(xs, lambda x: theirs(x, dim)), moved, shape=shp)


def _torch_scans(ctx, n, rows):
    """logcumsumexp (a costly operator: an exp and a log per combine), cumprod and cummax, as torch."""
    for shape in ((n,), rows):
        yield from _torch_op_cases(ctx, "logcumsumexp", shape, -1, S.logcumsumexp, torch.logcumsumexp, 4)
    yield from _torch_op_cases(ctx, "cumprod", (n,), 0, S.cumprod, torch.cumprod, 4)
    yield from _torch_op_cases(ctx, "cummax", (n,), 0, S.cummax, torch.cummax, 12, close=False)


def cases(ctx):
    if ctx.quick:
        yield from _cumsum_cases(ctx, (1 << 20,), torch.float32, modes=("fast", "reproducible"))
        yield from _cumsum_cases(ctx, (4096, 128), torch.float32, compiled=False)
        yield from _linrec_cases(ctx, 1 << 20)
        yield from _torch_scans(ctx, 1 << 16, (64, 1024))
        return
    yield from _cumsum_cases(ctx, (1 << 28,), torch.float32, modes=("fast", "reproducible"),
                             variants=CONFIG_VARIANTS)
    # torch.compile is timed where the issue sets a bar against it (its compile takes tens of seconds)
    yield from _cumsum_cases(ctx, (1 << 28,), torch.int32, compiled=False)
    yield from _cumsum_cases(ctx, (65536, 128), torch.float32, compiled=False)
    yield from _cumsum_cases(ctx, (16, 1 << 20), torch.float32, compiled=False)
    yield from _linrec_cases(ctx, 1 << 26)
    yield from _torch_scans(ctx, 1 << 24, (4096, 1024))
