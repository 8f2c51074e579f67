"""The compaction engine's bitmask two-pass form (one bit per item between a count pass and a
scatter pass) against the shipped single pass, on the benchmark's compaction cases: correctness
against torch first, then do_bench medians (L2 flushed, rotated inputs, as ``python -m bench``) and
the GPU time of every kernel (torch.profiler) of each policy variant.

    PYTHONPATH=. python bench/probes/select_bitmask_probe.py [--quick]
"""
import contextlib
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import partition as P
from tritoncub.device import reduce_by_key as RBK
from tritoncub.device import run_length_encode as RLE
from bench.harness import rotating
from _inputs import select_inputs
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub
n = 1 << 26
g, xs, masks, runs = select_inputs(n, (0.01, 0.5, 0.99), copies=2)
vals = [torch.randn(n, device="cuda", generator=g) for _ in range(2)]
uq = [torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32) for _ in range(2)]


def bits(tile, warps, count_tiles, stages=1):
    return (f"bits T{tile} w{warps} c{count_tiles} s{stages}",
            {"PASSES": 2, "TILE": tile, "num_warps": warps, "COUNT_TILES": count_tiles, "num_stages": stages})


variants = [("shipped", None), bits(4096, 4, 2), bits(2048, 4, 4), bits(8192, 8, 2), bits(4096, 8, 2)]
if "--quick" in sys.argv:
    variants = variants[:3]
#: reduce_by_key's own policy (its pass-2 tile; pass 1 runs on the same tile) under --rbk
RBK_VARIANTS = [{"TILE": t, "num_warps": w, "COUNT_TILES": c, "num_stages": 1}
                for t, w, c in ((2048, 4, 2), (2048, 4, 4), (1024, 4, 8), (1024, 4, 4), (512, 4, 16), (512, 2, 16),
                                (1024, 2, 8))]
FILTERS = [a for a in sys.argv[1:] if not a.startswith("--")]


def cases():
    ms = {d: list(zip(xs, m)) for d, m in masks.items()}
    kv = list(zip(runs, vals))
    out = {f"masked_select {d:g}": (rotating(ms[d], lambda p: ops.masked_select(*p)), ms[d][0],
                                    lambda p: torch.equal(ops.masked_select(*p), torch.masked_select(*p)))
           for d in ms}

    def check_uc(x):
        v, i, c = torch.unique_consecutive(x, return_inverse=True, return_counts=True)
        got = ops.unique_consecutive(x, True, True)
        return torch.equal(got[0], v) and torch.equal(got[1], i) and torch.equal(got[2], c)

    def check_rle(x):
        v, c = torch.unique_consecutive(x, return_counts=True)
        u, ln, k = RLE.encode(x)
        return int(k) == v.numel() and torch.equal(u[:v.numel()], v) and torch.equal(ln[:v.numel()].long(), c)

    def check_rbk(p):
        uk, agg, nr = RBK.reduce_by_key(p[0], p[1], "sum")
        v, c = torch.unique_consecutive(p[0], return_counts=True)
        ref = torch.segment_reduce(p[1], "sum", lengths=c)
        return int(nr) == v.numel() and torch.equal(uk[:v.numel()], v) and torch.allclose(
            agg[:v.numel()], ref, rtol=1e-4, atol=1e-3)

    def check_part(p):
        got, k = P.flagged(p[0], p[1])
        ref = torch.cat([p[0][p[1]], p[0][~p[1]]])
        k = int(k)
        return torch.equal(got[:k], ref[:k]) and torch.equal(torch.sort(got[k:]).values, torch.sort(ref[k:]).values)

    out["unique_consecutive"] = (rotating(runs, lambda x: ops.unique_consecutive(x)), runs[0],
                                 lambda x: torch.equal(ops.unique_consecutive(x)[0], torch.unique_consecutive(x)))
    out["unique_consecutive +inv+counts"] = (rotating(runs, lambda x: ops.unique_consecutive(x, True, True)),
                                             runs[0], check_uc)
    out["rle encode"] = (rotating(runs, lambda x: RLE.encode(x)), runs[0], check_rle)
    out["reduce_by_key"] = (rotating(kv, lambda p: RBK.reduce_by_key(p[0], p[1], "sum")), kv[0], check_rbk)
    out["unique"] = (rotating(uq, lambda x: ops.unique(x)), uq[0],
                     lambda x: torch.equal(ops.unique(x)[0], torch.unique(x)))
    out["nonzero 0.5"] = (rotating(masks[0.5], lambda m: ops.nonzero(m)), masks[0.5][0],
                          lambda m: torch.equal(ops.nonzero(m), torch.nonzero(m)))
    out["partition 0.5"] = (rotating(ms[0.5], lambda p: P.flagged(p[0], p[1])), ms[0.5][0], check_part)
    return out


CASES = cases()
print("torch: " + ", ".join(
    f"masked_select {d:g} {bench_ms(rotating(list(zip(xs, m)), lambda p: torch.masked_select(*p))):.4f}"
    for d, m in masks.items()) + f", unique_consecutive {bench_ms(rotating(runs, torch.unique_consecutive)):.4f}",
    flush=True)
for name, cfg in variants:
    with (policy.override("select", cfg) if cfg else contextlib.nullcontext()):
        for label, (fn, arg, check) in CASES.items():
            if FILTERS and not any(f in label for f in FILTERS):
                continue
            ok = check(arg)
            ms = bench_ms(fn)
            kb = kernel_breakdown(lambda: fn(), reps=5)
            gpu = sum(us for _, us, _ in kb)
            top = ", ".join(f"{k[:28]} x{c} {us:.1f}" for k, us, c in sorted(kb, key=lambda e: -e[1])[:4])
            print(f"{name:24s} {label:30s} {'ok' if ok else 'WRONG'} {ms:.4f} ms  gpu {gpu:.1f} us: {top}",
                  flush=True)

if "--rbk" in sys.argv:
    fn, arg, check = CASES["reduce_by_key"]
    for cfg in RBK_VARIANTS:
        with policy.override("reduce_by_key", cfg):
            ok = check(arg)
            ms = bench_ms(fn)
            kb = kernel_breakdown(lambda: fn(), reps=5)
            top = ", ".join(f"{k[:28]} x{c} {us:.1f}" for k, us, c in sorted(kb, key=lambda e: -e[1])[:5])
            print(f"reduce_by_key {cfg} {'ok' if ok else 'WRONG'} {ms:.4f} ms gpu {sum(u for _, u, _ in kb):.1f} us: "
                  f"{top}", flush=True)
