"""Compaction family: masked_select, nonzero, unique, unique_consecutive, run-length encode,
reduce-by-key, partition and diff against torch, CuPy (CUB underneath where CuPy uses it) and the
copy floor.

``bytes_moved`` is the minimum: every input byte read once, every output byte written once. Rows
with impl ``copy_floor`` time a plain ``copy_`` of the same number of bytes (half read, half
written): the speed-up column against it is how close an op is to the memory floor. Variant rows
``cfg:...`` time tritoncub under other policy configs.
"""
from __future__ import annotations

import torch

from bench.harness import Case, cupy_module, rotating, to_cupy
from tritoncub import policy
from tritoncub.device import partition as P
from tritoncub.device import reduce_by_key as RBK
from tritoncub.device import run_length_encode as RLE

ops = torch.ops.tritoncub

SELECT_SWEEP = [{"TILE": 8192, "num_warps": 8}, {"TILE": 2048, "num_warps": 4}, {"TILE": 2048, "num_warps": 8},
                {"TILE": 1024, "num_warps": 4}]


def _tag(cfg):
    return "cfg:" + ",".join(f"{k}={v}" for k, v in cfg.items())


def _copy_floor(ctx, op, dtype, n, nbytes, variant):
    m = max(1, nbytes // 8)
    src = torch.empty(m, device=ctx.device, dtype=torch.float32)
    dst = torch.empty_like(src)
    return Case(op, "copy_floor", dtype, n, lambda: dst.copy_(src), nbytes, variant=variant)


def _sweep(op, dtype, n, inputs, fn, moved, variant, configs):
    for cfg in configs:
        with policy.override("select", cfg):
            yield Case(op, "tritoncub", dtype, n, rotating(inputs, fn), moved, variant=f"{variant} {_tag(cfg)}")


def _masked_select_cases(ctx, n, density):
    gen = torch.Generator(device=ctx.device).manual_seed(0)
    copies = ctx.copies_for(5 * n)
    pairs = [(torch.randn(n, device=ctx.device, generator=gen),
              torch.rand(n, device=ctx.device, generator=gen) < density) for _ in range(copies)]
    k = int(pairs[0][1].sum())
    moved = 5 * n + 4 * k
    v = f"density={density}"
    fn = lambda p: ops.masked_select(p[0], p[1])  # noqa: E731

    def check():
        assert torch.equal(fn(pairs[0]), torch.masked_select(*pairs[0])), "masked_select differs from torch"

    yield Case("masked_select", "tritoncub", "float32", n, rotating(pairs, fn), moved, variant=v, check=check)
    yield Case("masked_select", "torch", "float32", n, rotating(pairs, lambda p: torch.masked_select(*p)), moved,
               variant=v)
    cp = cupy_module()
    if cp is not None:
        cpairs = [(to_cupy(a), to_cupy(b)) for a, b in pairs]
        yield Case("masked_select", "cupy", "float32", n, rotating(cpairs, lambda p: p[0][p[1]]), moved,
                   variant=v + " x[mask]")
    yield _copy_floor(ctx, "masked_select", "float32", n, moved, v)
    yield from _sweep("masked_select", "float32", n, pairs, fn, moved, v, SELECT_SWEEP)


def _unique_cases(ctx, n, distinct, wide, modes=((False, False), (True, True))):
    gen = torch.Generator(device=ctx.device).manual_seed(3)
    copies = ctx.copies_for(4 * n)
    if wide:   # `distinct` values spread over the whole int32 range: the hash path (the sort path before)
        pool = torch.randint(-2**31, 2**31 - 1, (distinct,), device=ctx.device, generator=gen, dtype=torch.int64)
        xs = [pool[torch.randint(0, distinct, (n,), device=ctx.device, generator=gen)].to(torch.int32)
              for _ in range(copies)]
    else:      # values 0 .. distinct-1: the dense-range path
        xs = [torch.randint(0, distinct, (n,), device=ctx.device, generator=gen, dtype=torch.int32)
              for _ in range(copies)]
    k = torch.unique(xs[0]).numel()
    v = f"distinct={distinct}" + (" wide" if wide else "")
    cp = cupy_module()
    for ri, rc in modes:
        vv = v + (" +inverse" if ri else "") + ("+counts" if rc and ri else " +counts" if rc else "")
        moved = 4 * n + 4 * k + (8 * n if ri else 0) + (8 * k if rc else 0)
        fn = lambda x, ri=ri, rc=rc: ops.unique(x, True, ri, rc)  # noqa: E731

        def check(ri=ri, rc=rc, fn=fn):
            got = fn(xs[0])
            ref = torch.unique(xs[0], sorted=True, return_inverse=True, return_counts=True)
            assert torch.equal(got[0], ref[0]), "unique values differ from torch"
            if ri:
                assert torch.equal(got[1], ref[1]), "inverse differs"
            if rc:
                assert torch.equal(got[2], ref[2]), "counts differ"

        yield Case("unique", "tritoncub", "int32", n, rotating(xs, fn), moved, variant=vv, check=check)
        yield Case("unique", "torch", "int32", n,
                   rotating(xs, lambda x, ri=ri, rc=rc: torch.unique(x, sorted=True, return_inverse=ri,
                                                                      return_counts=rc)), moved, variant=vv)
        if cp is not None:
            cxs = [to_cupy(x) for x in xs]
            yield Case("unique", "cupy", "int32", n,
                       rotating(cxs, lambda x, ri=ri, rc=rc: cp.unique(x, return_inverse=ri, return_counts=rc)),
                       moved, variant=vv)


def _runs_data(ctx, n, distinct, copies, gen):
    return [torch.sort(torch.randint(0, distinct, (n,), device=ctx.device, generator=gen, dtype=torch.int32)).values
            for _ in range(copies)]


def _consecutive_cases(ctx, n, distinct):
    gen = torch.Generator(device=ctx.device).manual_seed(4)
    xs = _runs_data(ctx, n, distinct, ctx.copies_for(4 * n), gen)
    k = torch.unique_consecutive(xs[0]).numel()
    v = f"sorted, {distinct} runs"
    for ri, rc in ((False, False), (False, True), (True, True)):
        vv = v + (" +counts" if rc else "") + (" +inverse" if ri else "")
        moved = 4 * n + 4 * k + (8 * k if rc else 0) + (8 * n if ri else 0)

        def check(ri=ri, rc=rc):
            got = ops.unique_consecutive(xs[0], ri, rc)
            ref = torch.unique_consecutive(xs[0], return_inverse=True, return_counts=True)
            assert torch.equal(got[0], ref[0])
            if rc:
                assert torch.equal(got[2], ref[2])
            if ri:
                assert torch.equal(got[1], ref[1])

        yield Case("unique_consecutive", "tritoncub", "int32", n,
                   rotating(xs, lambda x, ri=ri, rc=rc: ops.unique_consecutive(x, ri, rc)), moved, variant=vv,
                   check=check)
        yield Case("unique_consecutive", "torch", "int32", n,
                   rotating(xs, lambda x, ri=ri, rc=rc: torch.unique_consecutive(x, return_inverse=ri,
                                                                                 return_counts=rc)),
                   moved, variant=vv)
    # run-length encode: unique items + int32 lengths
    moved = 4 * n + 8 * k

    def check_rle():
        u, lengths, nr = RLE.encode(xs[0])
        rv, rc_ = torch.unique_consecutive(xs[0], return_counts=True)
        assert int(nr) == rv.numel() and torch.equal(u[:rv.numel()], rv)
        assert torch.equal(lengths[:rv.numel()].long(), rc_)

    yield Case("rle_encode", "tritoncub", "int32", n, rotating(xs, lambda x: RLE.encode(x)), moved, variant=v,
               check=check_rle)
    yield Case("rle_encode", "torch", "int32", n,
               rotating(xs, lambda x: torch.unique_consecutive(x, return_counts=True)), moved,
               variant=v + " unique_consecutive(counts)")
    yield _copy_floor(ctx, "rle_encode", "int32", n, moved, v)
    yield from _sweep("rle_encode", "int32", n, xs, lambda x: RLE.encode(x), moved, v, SELECT_SWEEP[1:3])
    yield Case("rle_non_trivial_runs", "tritoncub", "int32", n, rotating(xs, lambda x: RLE.non_trivial_runs(x)),
               4 * n + 12 * k, variant=v)
    # reduce-by-key: int32 keys + float32 values -> unique keys + float32 sums
    vals = [torch.randn(n, device=ctx.device, generator=gen) for _ in range(len(xs))]
    kv = list(zip(xs, vals))
    moved = 8 * n + 8 * k

    def check_rbk():
        uk, agg, nr = RBK.reduce_by_key(xs[0], vals[0], "sum")
        rv, rc_ = torch.unique_consecutive(xs[0], return_counts=True)
        ref = torch.segment_reduce(vals[0], "sum", lengths=rc_)
        assert int(nr) == rv.numel() and torch.equal(uk[:rv.numel()], rv)
        torch.testing.assert_close(agg[:rv.numel()], ref, rtol=1e-4, atol=1e-3)

    yield Case("reduce_by_key", "tritoncub", "int32+float32", n,
               rotating(kv, lambda p: RBK.reduce_by_key(p[0], p[1], "sum")), moved, variant=v, check=check_rbk)
    for cfg in ({"TILE": 4096, "num_warps": 8}, {"TILE": 1024, "num_warps": 4}):
        # (the override inside each call: not only around the yield, which holds only while the runner
        # times a case with this generator suspended)
        def rbk_with(p, cfg=cfg):
            with policy.override("reduce_by_key", cfg):
                return RBK.reduce_by_key(p[0], p[1], "sum")

        def check_with(cfg=cfg):
            with policy.override("reduce_by_key", cfg):
                check_rbk()

        yield Case("reduce_by_key", "tritoncub", "int32+float32", n, rotating(kv, rbk_with), moved,
                   variant=f"{v} {_tag(cfg)}", check=check_with)

    def torch_rbk(p):
        _, counts = torch.unique_consecutive(p[0], return_counts=True)
        return torch.segment_reduce(p[1], "sum", lengths=counts)

    yield Case("reduce_by_key", "torch", "int32+float32", n, rotating(kv, torch_rbk), moved,
               variant=v + " unique_consecutive+segment_reduce")
    yield _copy_floor(ctx, "reduce_by_key", "int32+float32", n, moved, v)


def _misc_cases(ctx, n):
    gen = torch.Generator(device=ctx.device).manual_seed(5)
    xs = [torch.randn(n, device=ctx.device, generator=gen) for _ in range(ctx.copies_for(4 * n))]

    def check():
        assert torch.equal(ops.diff(xs[0]), torch.diff(xs[0]))

    yield Case("diff", "tritoncub", "float32", n, rotating(xs, lambda x: ops.diff(x)), 8 * n, check=check)
    yield Case("diff", "torch", "float32", n, rotating(xs, lambda x: torch.diff(x)), 8 * n)
    yield _copy_floor(ctx, "diff", "float32", n, 8 * n, "")
    flags = [x > 0 for x in xs]

    def check_partition():
        out, nsel = P.flagged(xs[0], flags[0])
        assert torch.equal(out, torch.cat([xs[0][flags[0]], xs[0][~flags[0]]])) and int(nsel) == int(flags[0].sum())

    yield Case("partition_flagged", "tritoncub", "float32", n,
               rotating(list(zip(xs, flags)), lambda p: P.flagged(p[0], p[1])), 9 * n, variant="density=0.5",
               check=check_partition)
    yield Case("partition_flagged", "torch", "float32", n,
               rotating(list(zip(xs, flags)), lambda p: torch.cat([p[0][p[1]], p[0][~p[1]]])), 9 * n,
               variant="density=0.5 cat(x[m], x[~m])")
    bm = [torch.rand(n, device=ctx.device, generator=gen) < 0.5 for _ in range(ctx.copies_for(n))]

    def check_nonzero():
        assert torch.equal(ops.nonzero(bm[0]), torch.nonzero(bm[0])), "nonzero differs from torch"

    yield Case("nonzero", "tritoncub", "bool", n, rotating(bm, lambda m: ops.nonzero(m)), n + 4 * n,
               variant="density=0.5", check=check_nonzero)
    yield Case("nonzero", "torch", "bool", n, rotating(bm, lambda m: torch.nonzero(m)), n + 4 * n,
               variant="density=0.5")


def cases(ctx):
    n = 1 << 20 if ctx.quick else 1 << 26
    for d in (0.01, 0.5, 0.99):
        yield from _masked_select_cases(ctx, n, d)
    yield from _unique_cases(ctx, n, 1 << 20, wide=False)
    yield from _unique_cases(ctx, n, 1 << 20, wide=True)
    # (counting a few thousand labels: the dense path's shared-memory counters)
    yield from _unique_cases(ctx, n, 4096, wide=False, modes=((False, True),))
    if not ctx.quick:   # (smaller inputs, where the host's time per call is most of it)
        yield from _unique_cases(ctx, 1 << 14, 100, wide=False)
        yield from _unique_cases(ctx, 1 << 20, 1 << 20, wide=False)
    yield from _consecutive_cases(ctx, n, 1 << 20)
    yield from _misc_cases(ctx, n)
