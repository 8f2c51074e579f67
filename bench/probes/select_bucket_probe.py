"""The 'flagged' select bucket's two forms (bitmask two-pass, single pass) on the ops that take it
through other paths (unique's hash compaction over wide-range values) and on masked_select, with
do_bench medians repeated (host time varies between calls and machines) and the kernels' GPU time.

    PYTHONPATH=. python bench/probes/select_bucket_probe.py
"""
import contextlib

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from bench.harness import rotating
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub
n, distinct = 1 << 26, 1 << 20
gen = torch.Generator(device="cuda").manual_seed(3)
pool = torch.randint(-2**31, 2**31 - 1, (distinct,), device="cuda", generator=gen, dtype=torch.int64)
wide = [pool[torch.randint(0, distinct, (n,), device="cuda", generator=gen)].to(torch.int32) for _ in range(2)]
x = [torch.randn(n, device="cuda", generator=gen) for _ in range(2)]
m1 = [torch.rand(n, device="cuda", generator=gen) < 0.01 for _ in range(2)]
runs = [torch.sort(torch.randint(0, distinct, (n,), device="cuda", generator=gen, dtype=torch.int32)).values
        for _ in range(2)]
cases = {
    "unique wide": rotating(wide, lambda v: ops.unique(v, True, False, False)),
    "unique wide +inv+counts": rotating(wide, lambda v: ops.unique(v, True, True, True)),
    "masked_select 1%": rotating(list(zip(x, m1)), lambda p: ops.masked_select(*p)),
    "unique_consecutive": rotating(runs, lambda v: ops.unique_consecutive(v)),
}
single = {"PASSES": 1, "TILE": 4096, "LOOKBACK_WINDOW": 128, "WARP_SYNC": 1, "VEC": 4, "LOOKBACK_SLEEP": 1,
          "ANCHORED": 1, "num_warps": 4, "num_stages": 1}
print("torch unique wide", " ".join(f"{bench_ms(rotating(wide, lambda v: torch.unique(v))):.4f}" for _ in range(3)))
print("torch masked_select 1%", " ".join(
    f"{bench_ms(rotating(list(zip(x, m1)), lambda p: torch.masked_select(*p))):.4f}" for _ in range(3)))
print("torch unique_consecutive", " ".join(
    f"{bench_ms(rotating(runs, lambda v: torch.unique_consecutive(v))):.4f}" for _ in range(3)))
for label, ctx in (("flagged=shipped", contextlib.nullcontext), ("flagged=single",
                                                                 lambda: policy.override("select", single, "flagged"))):
    with ctx():
        for name, fn in cases.items():
            ms = [bench_ms(fn) for _ in range(3)]
            kb = kernel_breakdown(fn, reps=5)
            top = ", ".join(f"{k[:26]} x{c} {us:.1f}" for k, us, c in sorted(kb, key=lambda e: -e[1])[:6])
            print(f"{label:16s} {name:26s} {' '.join(f'{m:.4f}' for m in ms)} ms  gpu {sum(u for _, u, _ in kb):.1f} us: "
                  f"{top}", flush=True)
