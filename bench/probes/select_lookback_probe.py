"""Where the warp-synchronous single-pass compaction spends its time: GPU time (torch.profiler) of
``_select_warp_sync_kernel`` as shipped (PROBE 0), without the look-back (PROBE 1: every tile's
prefix taken as 0 — wrong output, timing only) and without the scatter (PROBE 2: one store per
warp), for a few tile shapes, on masked_select 2^26 fp32 (1% and 50%) and unique_consecutive 2^26
int32 (2^20 sorted runs).

    PYTHONPATH=. python bench/probes/select_lookback_probe.py [--sweep | --vec]

``--anchored``: the anchored look-back (``ANCHORED 1``, windows 64-256) against the shipped one.
``--sweep``: instead, the shipped kernel under look-back variants (window of 32 read by each warp,
or 128/256 spread over the warps; spinning with or without a nanosleep between reads), one item
per load (VEC 1). ``--vec``: the loads' vector width (VEC 1, 4, 16) per tile shape.
"""
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import select as S
from _timing import gpu_us
from _inputs import select_inputs

ops = torch.ops.tritoncub
n = 1 << 26
_, (x,), masks, (runs,) = select_inputs(n, (0.01, 0.5))
masks = {d: m[0] for d, m in masks.items()}
cases = [("masked_select 0.01", lambda: ops.masked_select(x, masks[0.01])),
         ("masked_select 0.5", lambda: ops.masked_select(x, masks[0.5])),
         ("unique_consecutive", lambda: ops.unique_consecutive(runs))]


def kernel_us(fn):
    return gpu_us(fn, reps=10, match="warp_sync")


def sweep(configs):
    for cfg in configs:
        with policy.override("select", {"PASSES": 1, "WARP_SYNC": 1, **cfg}):
            row = ", ".join(f"{name} {kernel_us(fn):.1f}" for name, fn in cases)
            print(" ".join(f"{k}={v}" for k, v in cfg.items()) + f": {row} (us)", flush=True)


if "--sweep" in sys.argv:   # look-back window and sleeping spin, per tile shape (PROBE 0)
    sweep([{"TILE": tile, "num_warps": warps, "LOOKBACK_WINDOW": win, "LOOKBACK_SLEEP": sleep, "VEC": 1}
           for tile, warps in ((2048, 4), (4096, 4), (4096, 8), (8192, 4), (8192, 8))
           for win, sleep in ((32, 0), (32, 1), (128, 1), (256, 1))])
    sys.exit(0)
if "--anchored" in sys.argv:   # the anchored look-back (one read of the window) against the nearest-inclusive one
    sweep([{"TILE": tile, "num_warps": warps, "VEC": 4, "LOOKBACK_WINDOW": win, "LOOKBACK_SLEEP": 1, "ANCHORED": anch}
           for tile, warps in ((2048, 4), (4096, 4), (8192, 4), (8192, 8))
           for anch, win in ((0, 128), (1, 64), (1, 128), (1, 256))])
    sys.exit(0)
if "--vec" in sys.argv:   # vector width of the tile's loads, per tile shape (window 128, sleeping spin)
    sweep([{"TILE": tile, "num_warps": warps, "VEC": vec, "LOOKBACK_WINDOW": 128, "LOOKBACK_SLEEP": 1}
           for tile, warps in ((2048, 4), (4096, 4), (4096, 8), (8192, 4), (8192, 8), (16384, 8))
           for vec in (1, 4, 16) if tile // (32 * warps) % vec == 0])
    sys.exit(0)

for tile, warps in ((2048, 4), (4096, 4), (8192, 4), (8192, 8)):
    with policy.override("select", {"PASSES": 1, "WARP_SYNC": 1, "TILE": tile, "num_warps": warps}):
        for probe in (0, 1, 2):
            S._PROBE = probe
            row = ", ".join(f"{name} {kernel_us(fn):.1f}" for name, fn in cases)
            print(f"T{tile} w{warps} PROBE {probe}: {row} (us)", flush=True)
S._PROBE = 0
