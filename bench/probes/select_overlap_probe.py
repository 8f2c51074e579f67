"""masked_select and unique_consecutive in their two forms, with the sync placed as each form allows:
single pass (the count is known when the one kernel ends: the host waits for all of it, then the op
returns) against the bitmask two-pass form (the count leaves for the host after pass 1, so the host's
reaction overlaps pass 2). do_bench medians (L2 flushed, as ``python -m bench``), three repeats, torch
in the same run, and the GPU time of the kernels.

    PYTHONPATH=. python bench/probes/select_overlap_probe.py
"""
import torch

import tritoncub  # noqa: F401
from tritoncub.device import select as S, unique as U
from bench.harness import rotating
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub
n, distinct = 1 << 26, 1 << 20
gen = torch.Generator(device="cuda").manual_seed(5)
x = [torch.randn(n, device="cuda", generator=gen) for _ in range(2)]
runs = [torch.sort(torch.randint(0, distinct, (n,), device="cuda", generator=gen, dtype=torch.int32)).values
        for _ in range(2)]
print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")


def row(label, fn, kernels=True):
    ms = [bench_ms(fn) for _ in range(3)]
    gpu = ""
    if kernels:
        kb = kernel_breakdown(fn, reps=5)
        gpu = f"  gpu {sum(u for _, u, _ in kb):.1f} us: " + ", ".join(
            f"{k[:22]} {us:.1f}" for k, us, c in sorted(kb, key=lambda e: -e[1])[:4])
    print(f"{label:44s} {' '.join(f'{m:.4f}' for m in ms)} ms{gpu}", flush=True)
    return min(ms)


for density in (0.01, 0.5, 0.99):
    pairs = [(a, torch.rand(n, device="cuda", generator=gen) < density) for a in x]
    ref = torch.masked_select(*pairs[0])
    row(f"torch masked_select {density}", rotating(pairs, lambda p: torch.masked_select(*p)), kernels=False)
    for two_pass in (False, True):
        S.MASKED_SELECT_TWO_PASS = two_pass
        assert torch.equal(ops.masked_select(*pairs[0]), ref)
        row(f"masked_select {density} {'two_pass' if two_pass else 'single'}",
            rotating(pairs, lambda p: ops.masked_select(*p)))
    del pairs, ref

for ri, rc in ((False, False), (False, True), (True, True)):
    ref = torch.unique_consecutive(runs[0], return_inverse=ri, return_counts=rc)
    row(f"torch unique_consecutive ri={ri} rc={rc}",
        rotating(runs, lambda v: torch.unique_consecutive(v, return_inverse=ri, return_counts=rc)), kernels=False)
    for two_pass in (False, True):
        U.HEADS_TWO_PASS = two_pass
        got = ops.unique_consecutive(runs[0], ri, rc)
        assert torch.equal(got[0], ref[0] if isinstance(ref, tuple) else ref)
        row(f"unique_consecutive ri={ri} rc={rc} {'two_pass' if two_pass else 'single'}",
            rotating(runs, lambda v: ops.unique_consecutive(v, ri, rc)))

wide = [torch.randint(0, 1 << 30, (n,), device="cuda", generator=gen, dtype=torch.int32) for _ in range(2)]
row("torch unique (sort path sizes)", rotating(wide, lambda v: torch.unique(v)), kernels=False)
for two_pass in (False, True):
    U.HEADS_TWO_PASS = two_pass
    row(f"unique 2^26 distinct-ish {'two_pass' if two_pass else 'single'}",
        rotating(wide, lambda v: ops.unique(v, True, False, False)))
