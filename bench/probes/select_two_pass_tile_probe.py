"""The ``two_pass`` select bucket's tile and scatter group (``SCATTER_TILES``), now that masked_select
and run heads take it: ops timed as ``python -m bench`` times them (do_bench median, L2 flushed; three
repeats) with the GPU time of their kernels, for the shipped bucket and other configs, torch in the
same run. ``--groups``: the scatter group sweep (run-length encoding through the bitmask form too,
after the single pass it ships with).

    PYTHONPATH=. python bench/probes/select_two_pass_tile_probe.py
"""
import contextlib
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import partition as P, run_length_encode as RLE
from bench.harness import rotating
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub
n = 1 << 26
gen = torch.Generator(device="cuda").manual_seed(11)
x = [torch.randn(n, device="cuda", generator=gen) for _ in range(2)]
runs = [torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", generator=gen, dtype=torch.int32)).values
        for _ in range(2)]
masks = {d: [torch.rand(n, device="cuda", generator=gen) < d for _ in range(2)] for d in (0.01, 0.5, 0.99)}
cases = {f"masked_select {d}": (rotating(list(zip(x, masks[d])), lambda p: ops.masked_select(*p)),
                                rotating(list(zip(x, masks[d])), lambda p: torch.masked_select(*p)))
         for d in (0.01, 0.5, 0.99)}
cases["unique_consecutive"] = (rotating(runs, lambda v: ops.unique_consecutive(v)),
                               rotating(runs, lambda v: torch.unique_consecutive(v)))
cases["unique_consecutive +counts"] = (rotating(runs, lambda v: ops.unique_consecutive(v, False, True)),
                                       rotating(runs, lambda v: torch.unique_consecutive(v, return_counts=True)))
cases["nonzero 0.5"] = (rotating(masks[0.5], lambda m: ops.nonzero(m)), rotating(masks[0.5], torch.nonzero))
cases["rle encode"] = (rotating(runs, RLE.encode), None)
cases["partition 0.5"] = (rotating(list(zip(x, masks[0.5])), lambda p: P.flagged(*p)), None)
print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
for name, (_, ref) in cases.items():
    if ref is not None:
        print(f"torch {name:30s} {' '.join(f'{bench_ms(ref):.4f}' for _ in range(3))} ms", flush=True)
groups = "--groups" in sys.argv
if groups:   # (run-length encoding as shipped: the single pass of the 'runs' bucket; then the bitmask form)
    rle = cases["rle encode"][0]
    print(f"{'single pass (runs)':20s} {'rle encode':30s} {' '.join(f'{bench_ms(rle):.4f}' for _ in range(3))} ms",
          flush=True)
    RLE.ENCODE_TWO_PASS = True
    variants = {f"TILE {t} G{g}": {"TILE": t, "COUNT_TILES": 4, "SCATTER_TILES": g, "num_warps": 4}
                for t, g in ((2048, 1), (2048, 4), (2048, 8))}
else:
    variants = {"shipped (TILE 2048)": None, "TILE 4096 w4": {"TILE": 4096, "COUNT_TILES": 4, "num_warps": 4},
                "TILE 4096 w8": {"TILE": 4096, "COUNT_TILES": 4, "num_warps": 8},
                "TILE 2048 w8": {"TILE": 2048, "COUNT_TILES": 4, "num_warps": 8}}
for label, cfg in variants.items():
    # (an override merges over the op's fallback, not the tuned policy: a config names every knob it sets)
    ctx = contextlib.nullcontext() if cfg is None else policy.override("select", {"PASSES": 2, **cfg}, "two_pass")
    with ctx:
        for name, (fn, _) in cases.items():
            try:
                ms = [bench_ms(fn) for _ in range(3)]
            except Exception as e:   # (a probe: say what failed, go on)
                print(f"{label:20s} {name:30s} failed: {type(e).__name__}: {str(e)[:100]}")
                continue
            kb = kernel_breakdown(fn, reps=5)
            top = ", ".join(f"{k[:20]} {us:.1f}" for k, us, c in sorted(kb, key=lambda e: -e[1])[:3])
            print(f"{label:20s} {name:30s} {' '.join(f'{m:.4f}' for m in ms)} ms  gpu "
                  f"{sum(u for _, u, _ in kb):.1f} us: {top}", flush=True)
