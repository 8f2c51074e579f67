"""The compaction engine, one pass (decoupled look-back) against two (count, then scatter), on the
benchmark's select cases: correctness against torch first, then do_bench medians (L2 flushed,
rotated inputs, as ``python -m bench``) for a few policy variants of each.

    PYTHONPATH=. python bench/probes/select_passes_probe.py
"""
import sys

import torch
import triton.testing

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from bench.harness import rotating
from _inputs import select_inputs

ops = torch.ops.tritoncub
n = 1 << 26
g, xs, masks, runs = select_inputs(n, (0.01, 0.5, 0.99), copies=2)
uq = [torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32) for _ in range(2)]


def t(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def one(tile, warps, window=64):
    return (f"1-pass T{tile} w{warps} win{window}", "default",
            {"PASSES": 1, "TILE": tile, "num_warps": warps, "num_stages": 1, "LOOKBACK_WINDOW": window})


def two(tile, warps, stages=1):
    return (f"2-pass T{tile} w{warps} s{stages}", "default",
            {"PASSES": 2, "TILE": tile, "num_warps": warps, "num_stages": stages})


variants = [two(4096, 4, 2), two(4096, 4), two(4096, 8), two(8192, 8), two(2048, 4), one(4096, 4), one(2048, 4, 128)]

# correctness on every variant first (a hang shows here, under the caller's timeout)
for name, _, cfg in variants:
    with policy.override("select", cfg):
        for d, ms in masks.items():
            assert torch.equal(ops.masked_select(xs[0], ms[0]), torch.masked_select(xs[0], ms[0])), (name, d)
        assert torch.equal(ops.unique_consecutive(runs[0])[0], torch.unique_consecutive(runs[0])), name
        v, c = torch.unique_consecutive(runs[0], return_counts=True)
        got = ops.unique_consecutive(runs[0], True, True)
        assert torch.equal(got[2], c), name
        u, ln, k = RLE.encode(runs[0])
        assert int(k) == v.numel() and torch.equal(ln[:v.numel()].long(), c), name
        assert torch.equal(ops.unique(uq[0])[0], torch.unique(uq[0])), name
    print(f"ok: {name}", flush=True)

print("torch: " + ", ".join(
    f"masked_select {d:g} {t(rotating(list(zip(xs, ms)), lambda p: torch.masked_select(*p))):.4f}"
    for d, ms in masks.items()) + f", unique_consecutive {t(rotating(runs, torch.unique_consecutive)):.4f}"
      + f", unique {t(rotating(uq, torch.unique)):.4f}", flush=True)
for name, _, cfg in variants:
    with policy.override("select", cfg):
        row = [f"masked_select {d:g} {t(rotating(list(zip(xs, ms)), lambda p: ops.masked_select(*p))):.4f}"
               for d, ms in masks.items()]
        row.append(f"unique_consecutive {t(rotating(runs, lambda x: ops.unique_consecutive(x))):.4f}")
        row.append(f"+counts+inverse {t(rotating(runs, lambda x: ops.unique_consecutive(x, True, True))):.4f}")
        row.append(f"rle {t(rotating(runs, lambda x: RLE.encode(x))):.4f}")
        row.append(f"unique {t(rotating(uq, lambda x: ops.unique(x))):.4f}")
    print(f"{name}: " + ", ".join(row), flush=True)

# GPU time per kernel (torch.profiler, no L2 flush) of each variant, to separate kernel time from host time
if "--profile" in sys.argv:
    for name, _, cfg in variants:
        with policy.override("select", cfg):
            for label, fn in (("masked_select 0.5", lambda: ops.masked_select(xs[0], masks[0.5][0])),
                              ("masked_select 0.01", lambda: ops.masked_select(xs[0], masks[0.01][0])),
                              ("unique_consecutive", lambda: ops.unique_consecutive(runs[0])),
                              ("rle", lambda: RLE.encode(runs[0]))):
                fn()
                torch.cuda.synchronize()
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    for _ in range(5):
                        fn()
                    torch.cuda.synchronize()
                ks = [(e.key, e.device_time_total / e.count) for e in prof.key_averages() if e.device_time_total > 0]
                print(f"  {name} / {label}: " + ", ".join(f"{k[:28]} {us:.1f}us" for k, us in ks), flush=True)
