"""Run heads' items stored per word by the count pass (policy ``WORD_KEYS`` 1) against gathered by the
scatter after the words (0), in the ``heads`` bucket: run-length encode, unique_consecutive (with and
without counts) of 2^26 sorted keys, runs of about 64 items (the benchmark's case,
2^20 runs), 4096, 4 and 1; int32, and int64 at ~64. Every result checked against torch first; do_bench
medians and GPU time per kernel, both settings interleaved twice.

    PYTHONPATH=. python bench/probes/word_keys_probe.py [--sweep | --rbk]

``--rbk``: reduce_by_key (2^26 int32 keys in 2^20 runs, fp32 values) with and without its ``WORD_KEYS``,
with the count pass's register caps. ``--sweep``: the count pass's register cap (``COUNT_MAXNREG``) too,
runs of ~64, ~4096 and ~4 items. (The committed log of the sweep, ``word_keys_sweep-h200-20261130.log``,
predates the final form: there ``WORD_KEYS`` 1 picked the first head items from registers by a gather
across the word's lanes, since removed (72 registers uncapped; slower than reading them again at every
cap), ``WORD_KEYS`` 2 read them again, which is what ``WORD_KEYS`` 1 is now, and the cap applied without
``WORD_KEYS`` too; it now applies only with it.)
"""
import sys

import torch

import tritoncub  # noqa: F401
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from _timing import timing_line

ops = torch.ops.tritoncub
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
n = 1 << 26
pol = policy.select("select", torch.device("cuda"), "heads")
BASE = {**pol.values, "num_warps": pol.num_warps, "num_stages": pol.num_stages}
print("heads policy:", pol.source, BASE, flush=True)
cases = [(6, torch.int32), (12, torch.int32), (2, torch.int32), (0, torch.int32), (6, torch.int64)]
variants = [{"WORD_KEYS": 0, "COUNT_MAXNREG": 0}, {"WORD_KEYS": 1, "COUNT_MAXNREG": 56}]   # (sm_90's; the H200's)
if "--sweep" in sys.argv:   # (the count pass's register cap too)
    cases = cases[:3]
    variants = [{"WORD_KEYS": w, "COUNT_MAXNREG": c} for w, c in ((0, 0), (1, 0), (1, 48), (1, 56), (1, 64))]
if "--rbk" in sys.argv:   # reduce_by_key: its own WORD_KEYS (pass 2's first round of key writes)
    from tritoncub.device.reduce_by_key import reduce_by_key
    from _inputs import rbk_inputs, rbk_matches
    pairs, uk, sums = rbk_inputs(n)
    rpol = policy.select("reduce_by_key", torch.device("cuda"))
    RBASE = {**rpol.values, "num_warps": rpol.num_warps, "num_stages": rpol.num_stages}
    spol = policy.select("select", torch.device("cuda"))
    SBASE = {**spol.values, "num_warps": spol.num_warps, "num_stages": spol.num_stages}
    print("reduce_by_key policy:", rpol.source, RBASE, flush=True)
    for rnd in range(2):
        for wk, cap in ((0, 0), (1, 0), (1, 56), (1, 48)):
            with policy.override("reduce_by_key", {**RBASE, "WORD_KEYS": wk}), \
                    policy.override("select", {**SBASE, "COUNT_MAXNREG": cap}):
                ok = rbk_matches(reduce_by_key(*pairs[0]), uk, sums)
                line = timing_line(rotating(pairs, lambda p: reduce_by_key(*p)), repeats=1)
            print(f"reduce_by_key round {rnd} WORD_KEYS={wk} count cap {cap}: {'ok' if ok else 'WRONG'}  {line}",
                  flush=True)
    cases = []
for avg_log2, dtype in cases:
    g = torch.Generator(device="cuda").manual_seed(avg_log2)
    xs = [torch.sort(torch.randint(0, n >> avg_log2, (n,), device="cuda", generator=g, dtype=dtype)).values
          for _ in range(2)]
    u, inv, cnt = torch.unique_consecutive(xs[0], return_inverse=True, return_counts=True)
    for rnd in range(2):
        for var in variants:
            with policy.override("select", {**BASE, **var}, bucket="heads"):
                uu, ll, k = RLE.encode(xs[0])
                kk = int(k)
                ok = torch.equal(uu[:kk], u) and torch.equal(ll[:kk].long(), cnt)
                a, _, b = ops.unique_consecutive(xs[0], False, True)
                ok = ok and torch.equal(a, u) and torch.equal(b, cnt)
                ok = ok and torch.equal(ops.unique_consecutive(xs[0], False, False)[0], u)
                lines = {
                    "encode": timing_line(rotating(xs, lambda x: RLE.encode(x)), repeats=1),
                    "unique_consecutive": timing_line(rotating(xs, lambda x: ops.unique_consecutive(x, False, False)),
                                                      repeats=1),
                    "+counts": timing_line(rotating(xs, lambda x: ops.unique_consecutive(x, False, True)), repeats=1),
                }
            for name, line in lines.items():
                print(f"runs ~{1 << avg_log2} {str(dtype)[6:]} round {rnd} {var} {name}: "
                      f"{'ok' if ok else 'WRONG'}  {line}", flush=True)
