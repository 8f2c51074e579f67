"""Benchmarks of DeviceReduce / DeviceSegmentedReduce: tritoncub vs torch vs CUB (through CuPy).

bytes_moved is the floor: every input item read once, the outputs written once (for segments, the
begin/end offsets read too).
"""
from __future__ import annotations

import torch

from .harness import Case, cupy_module, rotating, to_cupy


def _inputs(ctx, n, dtype, shape=None):
    shape = shape or (n,)
    nbytes = n * torch.tensor([], dtype=dtype).element_size()
    copies = ctx.copies_for(nbytes)
    g = torch.Generator(device=ctx.device).manual_seed(1234)
    out = []
    for _ in range(copies):
        if dtype.is_floating_point:
            out.append(torch.randn(shape, device=ctx.device, generator=g).to(dtype))
        else:
            out.append(torch.randint(-1000, 1000, shape, device=ctx.device, generator=g, dtype=dtype))
    return out


def _check_close(a, b, what):
    """Check ``a()`` against ``b()``: integer results (sums of ints, argmax indices) exactly, float
    results within a float32 accumulation's error of the float64 result (``b`` may return it)."""
    def check():
        ra, rb = a(), b()
        ra = ra[1] if isinstance(ra, tuple) else ra
        if not ra.dtype.is_floating_point:
            if not torch.equal(ra.cpu().to(torch.int64), rb.cpu().to(torch.int64)):
                raise AssertionError(f"{what}: tritoncub {ra} != torch {rb}")
        elif not torch.allclose(ra.double().cpu(), rb.double().cpu(), rtol=2e-3, atol=1e-2):
            raise AssertionError(f"{what}: tritoncub {ra} != torch {rb}")
    return check


def cases(ctx):
    import tritoncub  # noqa: F401  (registers the ops)
    from tritoncub.device import reduce as R
    from tritoncub.device import segmented_reduce as S
    cp = cupy_module()
    quick = ctx.quick
    sizes = [1 << 20, 1 << 22] if quick else [1 << 20, 1 << 24, 1 << 28]
    for dtype in (torch.float32, torch.int32, torch.bfloat16):
        dn = str(dtype).replace("torch.", "")
        for n in sizes:
            xs = _inputs(ctx, n, dtype)
            nb = n * xs[0].element_size() + 8
            check = _check_close(lambda: R.sum(xs[0]), lambda: torch.sum(xs[0], dtype=torch.float64)
                                 if dtype.is_floating_point else torch.sum(xs[0]), f"sum {dn} {n}")
            yield Case("sum", "tritoncub", dn, n, rotating(xs, R.sum), nb, check=check)
            if n == sizes[0]:
                yield Case("sum", "tritoncub.op", dn, n, rotating(xs, lambda x: torch.ops.tritoncub.sum(x)), nb)
            yield Case("sum", "torch", dn, n, rotating(xs, torch.sum), nb)
            if cp is not None and dtype != torch.bfloat16:  # CuPy has no bfloat16
                cxs = [to_cupy(x) for x in xs]
                yield Case("sum", "cub", dn, n, rotating(cxs, lambda a: a.sum()), nb)
            del xs
    # argmax
    n = (1 << 22) if quick else (1 << 28)
    xs = _inputs(ctx, n, torch.float32)
    nb = n * 4 + 8
    check = _check_close(lambda: R.argmax(xs[0]), lambda: torch.argmax(xs[0]), "argmax")
    yield Case("argmax", "tritoncub", "float32", n, rotating(xs, R.argmax), nb, check=check)
    yield Case("argmax", "tritoncub.op", "float32", n, rotating(xs, lambda x: torch.ops.tritoncub.argmax(x)), nb)
    yield Case("argmax", "torch", "float32", n, rotating(xs, torch.argmax), nb)
    if cp is not None:
        cxs = [to_cupy(x) for x in xs]
        yield Case("argmax", "cub", "float32", n, rotating(cxs, lambda a: a.argmax()), nb)
    del xs
    # row sums
    for m, k in ((65536, 128), (4096, 1024)):
        xs = _inputs(ctx, m * k, torch.float32, (m, k))
        nb = m * k * 4 + m * 4
        check = _check_close(lambda: S.reduce_rows(xs[0], "sum"), lambda: xs[0].double().sum(-1), "rows")
        yield Case("row_sum", "tritoncub", "float32", m * k, rotating(xs, lambda x: S.reduce_rows(x, "sum")),
                   nb, shape=(m, k), check=check)
        yield Case("row_sum", "tritoncub.op", "float32", m * k,
                   rotating(xs, lambda x: torch.ops.tritoncub.sum(x, [-1])), nb, shape=(m, k))
        yield Case("row_sum", "torch", "float32", m * k, rotating(xs, lambda x: x.sum(-1)), nb, shape=(m, k))
        if cp is not None:
            cxs = [to_cupy(x) for x in xs]
            yield Case("row_sum", "cub", "float32", m * k, rotating(cxs, lambda a: a.sum(axis=1)), nb, shape=(m, k))
        del xs
    # segmented sum: 100k random-length segments, 2^26 items in all
    segs, total = (10_000, 1 << 22) if quick else (100_000, 1 << 26)
    g = torch.Generator().manual_seed(7)
    cuts = torch.sort(torch.randint(0, total + 1, (segs - 1,), generator=g)).values
    offs = torch.cat([torch.tensor([0]), cuts, torch.tensor([total])]).to(ctx.device)
    xs = _inputs(ctx, total, torch.float32)
    nb = total * 4 + segs * 4 + (segs + 1) * 8
    check = _check_close(lambda: S.segmented_reduce(xs[0], offs, None, "sum"),
                         lambda: torch.segment_reduce(xs[0].double(), "sum", offsets=offs), "segment_reduce")
    yield Case("segment_sum", "tritoncub", "float32", total,
               rotating(xs, lambda x: S.segmented_reduce(x, offs, None, "sum")), nb, variant=f"{segs}segs",
               check=check)
    yield Case("segment_sum", "tritoncub.op", "float32", total,
               rotating(xs, lambda x: torch.ops.tritoncub.segment_reduce(x, offs, "sum")), nb, variant=f"{segs}segs")
    yield Case("segment_sum", "torch", "float32", total,
               rotating(xs, lambda x: torch.segment_reduce(x, "sum", offsets=offs)), nb, variant=f"{segs}segs")
    # CUB's DeviceSegmentedReduce with arbitrary offsets is not exposed by CuPy (cupy.cuda.cub only
    # reduces uniform axis segments): there is no CUB row for this case.
    del xs
