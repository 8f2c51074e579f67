"""Reduce-by-key's pass 2 on a persistent grid (policy ``PERSIST``: p programs per SM, each loading its
next tile before working on the current one) against one tile per program, over register caps
(``MAXNREG``; the persistent kernel holds the next tile's values and words through the current one's
work). 2^26 sorted int32 keys with fp32 values in 2^20 runs (the benchmark's case), also 2^26 runs
(item-wide tiles) and 2^14 runs; every result checked against torch first; GPU time per kernel and
do_bench, two rounds.

    PYTHONPATH=. python bench/probes/rbk_persist_probe.py [--quick]
"""
import sys

import torch

import tritoncub  # noqa: F401
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device.reduce_by_key import reduce_by_key
from _inputs import rbk_inputs, rbk_matches
from _timing import timing_line

n = 1 << 26
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
rpol = policy.select("reduce_by_key", torch.device("cuda"))
BASE = {**rpol.values, "num_warps": rpol.num_warps, "num_stages": rpol.num_stages}
print("reduce_by_key policy:", rpol.source, BASE, flush=True)
variants = [{"PERSIST": 0}, {"PERSIST": 0, "MAXNREG": 56}]
for p, cap in ((8, 0), (12, 80), (16, 64), (12, 64), (21, 48), (16, 56), (8, 96)):
    variants.append({"PERSIST": p, "MAXNREG": cap})
if "--quick" in sys.argv:
    variants = variants[:3]
for runs in (1 << 20, 1 << 26, 1 << 14):
    pairs, uk, sums = rbk_inputs(n, runs=runs)
    for rnd in range(2 if runs == 1 << 20 else 1):
        for var in variants:
            with policy.override("reduce_by_key", {**BASE, **var}):
                ok = rbk_matches(reduce_by_key(*pairs[0]), uk, sums)
                line = timing_line(rotating(pairs, lambda p: reduce_by_key(*p)), repeats=1)
            print(f"runs {runs} round {rnd} {var}: {'ok' if ok else 'WRONG'}  {line}", flush=True)
    del pairs, uk, sums
