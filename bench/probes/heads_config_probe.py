"""Run-length encode and unique_consecutive (2^26 sorted int32 keys in 2^20 runs) under configs of
the select policy's ``heads`` bucket (count pass and scatter share TILE and warps): do_bench medians
and GPU time per call, the tuned config first.

    PYTHONPATH=. python bench/probes/heads_config_probe.py [--quick]

``--quick``: the tuned config and TILE 4096 / COUNT_TILES 2 / 8 warps only; unique_consecutive also
with counts (run lengths). ``--around-tuned``: a few tiles, warps, register caps and groups over the
tuned config. ``--caps``: the scatter's register cap (``SCATTER_MAXNREG``) over the tuned config.
"""
import contextlib
import sys

import torch

import tritoncub  # noqa: F401  (registers the ops)
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from _inputs import select_inputs
from _timing import timing_line

ops = torch.ops.tritoncub
n = 1 << 26
_, _, _, runs = select_inputs(n, (), copies=2)
ref = torch.unique_consecutive(runs[0], return_counts=True)
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
BASE = {"PASSES": 2, "TILE": 2048, "COUNT_TILES": 4, "SCATTER_TILES": 8, "SPARSE_SCATTER_TILES": 8, "num_warps": 4}
VARIANTS = [None, {}, {"COUNT_TILES": 1, "num_warps": 2}, {"COUNT_TILES": 2, "num_warps": 2},
            {"COUNT_TILES": 1}, {"COUNT_TILES": 2}, {"TILE": 1024, "COUNT_TILES": 2, "num_warps": 2},
            {"TILE": 1024, "COUNT_TILES": 4, "num_warps": 4}, {"TILE": 4096, "COUNT_TILES": 1},
            {"TILE": 4096, "COUNT_TILES": 2, "num_warps": 8}, {"SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16},
            {"SCATTER_TILES": 4, "SPARSE_SCATTER_TILES": 4}, {"num_stages": 2}]
if "--quick" in sys.argv:
    VARIANTS = [None, {"TILE": 4096, "COUNT_TILES": 2, "num_warps": 8}]
if "--around-tuned" in sys.argv:
    _pol = policy.select("select", runs[0].device, "heads")
    BASE = {**_pol.values, "num_warps": _pol.num_warps, "num_stages": _pol.num_stages}
    VARIANTS = [None, {"TILE": 1024, "COUNT_TILES": 4}, {"TILE": 1024, "COUNT_TILES": 2, "num_warps": 2},
                {"TILE": 1024, "COUNT_TILES": 4, "num_warps": 2}, {"SCATTER_MAXNREG": 80},
                {"SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16}, {"SCATTER_TILES": 4, "SPARSE_SCATTER_TILES": 4},
                {"TILE": 1024, "COUNT_TILES": 4, "SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16}]
if "--caps" in sys.argv:   # the scatter's register cap over the tuned config
    _pol = policy.select("select", runs[0].device, "heads")
    BASE = {**_pol.values, "num_warps": _pol.num_warps, "num_stages": _pol.num_stages}
    VARIANTS = [None] + [{"SCATTER_MAXNREG": c} for c in (0, 96, 80, 64, 56, 48)]
for v in VARIANTS:
    cfg = None if v is None else {**BASE, **v}
    with policy.override("select", cfg, bucket="heads") if cfg else contextlib.nullcontext():
        u, lengths, k = RLE.encode(runs[0])
        kk = int(k)
        ok = torch.equal(u[:kk], ref[0]) and torch.equal(lengths[:kk].long(), ref[1])
        rle = timing_line(rotating(runs, lambda x: RLE.encode(x)), repeats=2)
        uc = timing_line(rotating(runs, lambda x: ops.unique_consecutive(x, False, False)), repeats=2)
        ucc = timing_line(rotating(runs, lambda x: ops.unique_consecutive(x, False, True)), repeats=2)
        c = ops.unique_consecutive(runs[0], False, True)[2]
        ok = ok and torch.equal(c, ref[1])
    print(f"{'tuned' if v is None else v}: {'ok' if ok else 'WRONG'}\n  rle_encode {rle}\n  unique_consecutive {uc}"
          f"\n  unique_consecutive+counts {ucc}", flush=True)
