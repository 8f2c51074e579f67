"""The warp-synchronous single-pass compaction (``WARP_SYNC=1``: ballots over a warp-striped tile,
a 32-tile warp-window look-back) against the portable single pass (``WARP_SYNC=0``) and torch, on
the benchmark's select cases: correctness against torch on every variant first, then do_bench
medians (L2 flushed, rotated inputs, as ``python -m bench``) and, with ``--profile``, the GPU time
of each kernel (torch.profiler, no host time).

    PYTHONPATH=. python bench/probes/select_warp_sync_probe.py [--profile]
"""
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from bench.harness import rotating
from _timing import bench_ms, kernel_breakdown
from _inputs import select_inputs

ops = torch.ops.tritoncub
n = 1 << 26
g, xs, masks, runs = select_inputs(n, (0.01, 0.5, 0.99), copies=2)


t = bench_ms


def v(name, tile, warps, ws=1, bucket="default", **kw):
    return (name or f"{'warp-sync' if ws else 'portable'} T{tile} w{warps}", bucket,
            {"PASSES": 1, "TILE": tile, "num_warps": warps, "num_stages": 1, "WARP_SYNC": ws, **kw})


variants = [v("portable T4096 w4 (previous sm_90)", 4096, 4, 0, LOOKBACK_WINDOW=64)] + \
    [v(f"warp-sync T{t_} w{w_} vec{vec}", t_, w_, VEC=vec, LOOKBACK_WINDOW=128)
     for t_, w_, vec in ((4096, 4, 1), (4096, 4, 4), (4096, 4, 16), (8192, 8, 4), (16384, 8, 16))]

# correctness on every variant first (a hang shows here, under the caller's timeout)
edge = [1, 31, 32, 33, 4095, 4096, 4097, 8191, 8193, 100_003, (1 << 20) + 7]
for name, _, cfg in variants:
    with policy.override("select", cfg):
        for d, ms in masks.items():
            assert torch.equal(ops.masked_select(xs[0], ms[0]), torch.masked_select(xs[0], ms[0])), (name, d)
        for m in edge:
            mm = torch.rand(m, device="cuda", generator=g) < 0.3
            assert torch.equal(ops.masked_select(xs[1][:m], mm), torch.masked_select(xs[1][:m], mm)), (name, m)
            r = runs[1][:m]
            assert torch.equal(ops.unique_consecutive(r)[0], torch.unique_consecutive(r)), (name, m)
        assert torch.equal(ops.unique_consecutive(runs[0])[0], torch.unique_consecutive(runs[0])), name
        vv, inv, c = torch.unique_consecutive(runs[0], return_inverse=True, return_counts=True)
        got = ops.unique_consecutive(runs[0], True, True)
        assert torch.equal(got[0], vv) and torch.equal(got[1], inv) and torch.equal(got[2], c), name
        u, ln, k = RLE.encode(runs[0])
        assert int(k) == vv.numel() and torch.equal(ln[:vv.numel()].long(), c), name
        assert torch.equal(u[:vv.numel()], vv), name
    print(f"ok: {name}", flush=True)

print("torch: " + ", ".join(
    f"masked_select {d:g} {t(rotating(list(zip(xs, ms)), lambda p: torch.masked_select(*p))):.4f}"
    for d, ms in masks.items()) + f", unique_consecutive {t(rotating(runs, torch.unique_consecutive)):.4f}"
      + f", +counts+inverse {t(rotating(runs, lambda x: torch.unique_consecutive(x, True, True))):.4f}",
      flush=True)
for name, _, cfg in variants:
    with policy.override("select", cfg):
        row = [f"masked_select {d:g} {t(rotating(list(zip(xs, ms)), lambda p: ops.masked_select(*p))):.4f}"
               for d, ms in masks.items()]
        row.append(f"unique_consecutive {t(rotating(runs, lambda x: ops.unique_consecutive(x))):.4f}")
        row.append(f"+counts+inverse {t(rotating(runs, lambda x: ops.unique_consecutive(x, True, True))):.4f}")
    with policy.override("select", cfg, bucket="runs"):
        row.append(f"rle {t(rotating(runs, lambda x: RLE.encode(x))):.4f}")
    print(f"{name}: " + ", ".join(row), flush=True)

if "--profile" in sys.argv:
    for name, _, cfg in variants:
        with policy.override("select", cfg), policy.override("select", cfg, bucket="runs"):
            for label, fn in (("masked_select 0.5", lambda: ops.masked_select(xs[0], masks[0.5][0])),
                              ("masked_select 0.01", lambda: ops.masked_select(xs[0], masks[0.01][0])),
                              ("unique_consecutive", lambda: ops.unique_consecutive(runs[0])),
                              ("rle", lambda: RLE.encode(runs[0]))):
                ks = kernel_breakdown(fn)
                print(f"  {name} / {label}: " + ", ".join(f"{k[:28]} {us:.1f}us" for k, us, _ in ks), flush=True)
