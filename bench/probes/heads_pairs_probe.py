"""Run heads of 64-bit items: neighbours from registers (``HEADS_SHIFT`` 1, pairs of items in 16-byte
vectors) against second loads shifted by one item (0), in the ``heads`` bucket (run-length encode,
unique_consecutive) and the ``runs`` bucket (non-trivial runs), 2^26 sorted int64 keys, runs of about 64
items; the register form also with one count tile per program. Every result checked against torch first;
do_bench medians and GPU time per kernel, two rounds.

    PYTHONPATH=. python bench/probes/heads_pairs_probe.py

(The committed log, ``heads_pairs_probe-h200-20261130.log``, was taken while the H200's ``heads`` bucket
capped every count pass at 56 registers (``COUNT_MAXNREG``; it now caps only count passes that keep
first items, 32-bit ones): its ``HEADS_SHIFT`` 1 rows of that bucket are the register form spilling
(120 registers uncapped), its ``COUNT_MAXNREG`` 96 rows the form with room; the ``runs`` bucket had no cap.)
"""
import torch

import tritoncub  # noqa: F401
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from _timing import timing_line

ops = torch.ops.tritoncub
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
n = 1 << 26
dev = torch.device("cuda")
g = torch.Generator(device="cuda").manual_seed(6)
xs = [torch.sort(torch.randint(0, n >> 6, (n,), device="cuda", generator=g, dtype=torch.int64)).values
      for _ in range(2)]
u, cnt = torch.unique_consecutive(xs[0], return_counts=True)
first = torch.cat([torch.zeros(1, dtype=torch.int64, device="cuda"), cnt.cumsum(0)[:-1]])
variants = [{"HEADS_SHIFT": 0}, {"HEADS_SHIFT": 1}, {"HEADS_SHIFT": 1, "COUNT_TILES": 1}]
for bucket in ("heads", "runs"):
    pol = policy.select("select", dev, bucket)
    base = {**pol.values, "num_warps": pol.num_warps, "num_stages": pol.num_stages}
    print(bucket, "policy:", pol.source, base, flush=True)
    for rnd in range(2):
        for var in variants:
            with policy.override("select", {**base, **var}, bucket=bucket):
                if bucket == "heads":
                    uu, ll, k = RLE.encode(xs[0])
                    kk = int(k)
                    ok = torch.equal(uu[:kk], u) and torch.equal(ll[:kk].long(), cnt)
                    ok = ok and torch.equal(ops.unique_consecutive(xs[0], False, False)[0], u)
                    lines = {"encode": timing_line(rotating(xs, lambda x: RLE.encode(x)), repeats=1),
                             "unique_consecutive": timing_line(
                                 rotating(xs, lambda x: ops.unique_consecutive(x, False, False)), repeats=1)}
                else:
                    o, ll, k = RLE.non_trivial_runs(xs[0])
                    kk = int(k)
                    ok = torch.equal(o[:kk], first[cnt > 1]) and torch.equal(ll[:kk].long(), cnt[cnt > 1])
                    lines = {"non_trivial_runs": timing_line(rotating(xs, lambda x: RLE.non_trivial_runs(x)),
                                                             repeats=1)}
            for name, line in lines.items():
                print(f"int64 runs ~64 round {rnd} {var} {name}: {'ok' if ok else 'WRONG'}  {line}", flush=True)
