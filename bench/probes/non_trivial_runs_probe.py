"""non_trivial_runs (the select policy's ``runs`` bucket) in its two forms: the single pass (decoupled
look-back, warp-synchronous) and the bitmask two-pass form (pass 1: bits of the runs' first and last
items; pass 2: offsets from the first, ends from the last; then lengths = ends - offsets), at 2^26
sorted int32 keys with about 64 items a run (the benchmark's case), and runs of about 1, 4 and 4096
items; every result checked against torch first. do_bench medians and GPU time per kernel.

    PYTHONPATH=. python bench/probes/non_trivial_runs_probe.py [--configs [--all]]

``--configs``: also configs of the bitmask form around the chosen one (``--all``: at every run length).
"""
import contextlib
import sys

import torch

import tritoncub  # noqa: F401
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from _timing import timing_line

print(torch.cuda.get_device_name(), torch.__version__, flush=True)
n = 1 << 26
SINGLE = {"TILE": 4096, "PASSES": 1, "LOOKBACK_WINDOW": 128, "WARP_SYNC": 1, "VEC": 4, "LOOKBACK_SLEEP": 1,
          "ANCHORED": 1, "num_warps": 4}   # (sm_90's runs bucket, from the H100)
BITMASK = {"PASSES": 2, "TILE": 2048, "COUNT_TILES": 2, "SCATTER_TILES": 8, "SPARSE_SCATTER_TILES": 8,
           "SCATTER_MAXNREG": 0, "HEADS_SHIFT": 1, "num_warps": 4}
forms = {"policy": None, "single pass": SINGLE, "bitmask": BITMASK}
if "--configs" in sys.argv:
    forms.update({f"bitmask {v}": {**BITMASK, **v} for v in (
        {"HEADS_SHIFT": 0}, {"SCATTER_MAXNREG": 96}, {"COUNT_TILES": 1}, {"COUNT_TILES": 4},
        {"TILE": 4096, "COUNT_TILES": 1}, {"SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16},
        {"SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16, "SCATTER_MAXNREG": 96},
        {"TILE": 4096, "COUNT_TILES": 1, "SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16},
        {"TILE": 4096, "COUNT_TILES": 1, "SCATTER_TILES": 8, "SPARSE_SCATTER_TILES": 8, "SCATTER_MAXNREG": 96})})
all_lengths = "--all" in sys.argv   # (every form at every run length, not only at ~64)
print("policy:", policy.select("select", torch.device("cuda"), "runs").source, flush=True)
for avg_log2 in (6, 0, 2, 12):
    g = torch.Generator(device="cuda").manual_seed(avg_log2)
    xs = [torch.sort(torch.randint(0, n >> avg_log2, (n,), device="cuda", generator=g, dtype=torch.int32)).values
          for _ in range(2)]
    u, cnt = torch.unique_consecutive(xs[0], return_counts=True)
    first = torch.cat([torch.zeros(1, dtype=torch.int64, device="cuda"), cnt.cumsum(0)[:-1]])
    for name, cfg in forms.items():
        if avg_log2 != 6 and name not in ("single pass", "bitmask") and not all_lengths:
            continue
        with policy.override("select", cfg, bucket="runs") if cfg else contextlib.nullcontext():
            o, l, k = RLE.non_trivial_runs(xs[0])
            kk = int(k)
            ok = torch.equal(o[:kk], first[cnt > 1]) and torch.equal(l[:kk].long(), cnt[cnt > 1])
            line = timing_line(rotating(xs, lambda x: RLE.non_trivial_runs(x)), repeats=2)
        print(f"runs of ~{1 << avg_log2} items, {name}: {'ok' if ok else 'WRONG'}  {line}", flush=True)
