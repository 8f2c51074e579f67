"""The bitmask form's count scan: programs that publish their block sums and read each other's
(``_SCAN_PUBLISH``) against programs that each re-sum the counts before their block, on the ops built
on it (2^26 items; runs: sorted int32 in 2^20 runs; masked_select at 1% and 50%): results checked
against torch, do_bench medians and the kernels' GPU time, both forms interleaved twice.

    PYTHONPATH=. python bench/probes/scan_publish_probe.py [--once]

``--once``: the shipped form only (publishing), one round.
"""
import sys

import torch

import tritoncub  # noqa: F401  (registers the ops)
import tritoncub.device.reduce_by_key as RBK
import tritoncub.device.select as S
from bench.harness import rotating
from tritoncub.device import run_length_encode as RLE
from _inputs import rbk_inputs, rbk_matches, select_inputs
from _timing import timing_line

ops = torch.ops.tritoncub
n = 1 << 26
_, xs, masks, runs = select_inputs(n, (0.01, 0.5), copies=2)
kv, uk, ref_rbk = rbk_inputs(n)
ref_runs = torch.unique_consecutive(runs[0], return_counts=True)
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
pairs = [(x, m) for x, m in zip(xs, masks[0.01])]
pairs50 = [(x, m) for x, m in zip(xs, masks[0.5])]
once = "--once" in sys.argv
for rnd in range(1 if once else 2):
    for publish in (True,) if once else (True, False):
        S._SCAN_PUBLISH = publish
        u, lengths, k = RLE.encode(runs[0])
        kk = int(k)
        ok = torch.equal(u[:kk], ref_runs[0]) and torch.equal(lengths[:kk].long(), ref_runs[1])
        ok = ok and torch.equal(ops.unique_consecutive(runs[0], False, True)[2], ref_runs[1])
        ok = ok and torch.equal(ops.masked_select(xs[0], masks[0.01][0]), torch.masked_select(xs[0], masks[0.01][0]))
        ok = ok and rbk_matches(RBK.reduce_by_key(kv[0][0], kv[0][1], "sum"), uk, ref_rbk)
        print(f"round {rnd} publish={publish}: {'ok' if ok else 'WRONG'}", flush=True)
        for name, fn in (("rle_encode", rotating(runs, lambda x: RLE.encode(x))),
                         ("unique_consecutive+counts", rotating(runs, lambda x: ops.unique_consecutive(x, False, True))),
                         ("masked_select 1%", rotating(pairs, lambda p: ops.masked_select(*p))),
                         ("masked_select 50%", rotating(pairs50, lambda p: ops.masked_select(*p))),
                         ("reduce_by_key", rotating(kv, lambda p: RBK.reduce_by_key(p[0], p[1], "sum")))):
            print(f"  {name} {timing_line(fn, repeats=2)}", flush=True)
