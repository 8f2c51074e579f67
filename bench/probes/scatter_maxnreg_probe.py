"""The bitmask scatter under a register cap per thread (``SCATTER_MAXNREG``; 120 registers uncapped
with run lengths, 4 blocks of 4 warps per SM): run-length encode, unique_consecutive with counts
(heads bucket) and masked_select at 1% and 50% (two_pass bucket), 2^26 items, the other knobs as
tuned; results checked against torch, do_bench medians and kernel times.

    PYTHONPATH=. python bench/probes/scatter_maxnreg_probe.py
"""
import torch

import tritoncub  # noqa: F401  (registers the ops)
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from _inputs import select_inputs
from _timing import timing_line

ops = torch.ops.tritoncub
n = 1 << 26
_, xs, masks, runs = select_inputs(n, (0.01, 0.5), copies=2)
ref_runs = torch.unique_consecutive(runs[0], return_counts=True)
dev = runs[0].device
def tuned(bucket):
    pol = policy.select("select", dev, bucket)
    return {**pol.values, "num_warps": pol.num_warps, "num_stages": pol.num_stages}


heads, two_pass = tuned("heads"), tuned("two_pass")
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
print("heads:", heads, "\ntwo_pass:", two_pass, flush=True)
for rnd in range(2):
    for cap in (0, 96, 80, 64):
        with policy.override("select", {**heads, "SCATTER_MAXNREG": cap}, bucket="heads"), \
                policy.override("select", {**two_pass, "SCATTER_MAXNREG": cap}, bucket="two_pass"):
            u, lengths, k = RLE.encode(runs[0])
            kk = int(k)
            ok = torch.equal(u[:kk], ref_runs[0]) and torch.equal(lengths[:kk].long(), ref_runs[1])
            ok = ok and torch.equal(ops.unique_consecutive(runs[0], False, True)[2], ref_runs[1])
            for d in (0.01, 0.5):
                ok = ok and torch.equal(ops.masked_select(xs[0], masks[d][0]), torch.masked_select(xs[0], masks[d][0]))
            print(f"round {rnd} SCATTER_MAXNREG={cap}: {'ok' if ok else 'WRONG'}", flush=True)
            for name, fn in (("rle_encode", rotating(runs, lambda x: RLE.encode(x))),
                             ("unique_consecutive+counts",
                              rotating(runs, lambda x: ops.unique_consecutive(x, False, True))),
                             ("masked_select 1%", rotating(list(zip(xs, masks[0.01])), lambda p: ops.masked_select(*p))),
                             ("masked_select 50%", rotating(list(zip(xs, masks[0.5])), lambda p: ops.masked_select(*p)))):
                print(f"  {name} {timing_line(fn, repeats=2)}", flush=True)
