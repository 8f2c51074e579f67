"""HEADS_SHIFT 0 (a second, shifted load) against 1 (predecessor from registers) in the run-head ops,
2^26 sorted int32 keys in 2^20 runs (fp32 values for reduce_by_key), interleaved twice; every result
checked against torch first. do_bench medians (L2 flushed) and the GPU time per call of each kernel.
The override is on the select policy's ``heads`` bucket (run-length encode, unique_consecutive);
reduce_by_key's count pass takes HEADS_SHIFT from the select policy's ``default`` bucket, so it runs the policy's
value (1) in both columns.

    PYTHONPATH=. python bench/probes/heads_shift_ab.py
"""
import torch
import tritoncub  # noqa
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from tritoncub.device.reduce_by_key import reduce_by_key
from _inputs import select_inputs, rbk_inputs, rbk_matches
from _timing import timing_line
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
ops = torch.ops.tritoncub
n = 1 << 26
_, _, _, runs = select_inputs(n, (), copies=2)
ref = torch.unique_consecutive(runs[0], return_counts=True)
kv, uk, sums = rbk_inputs(n, runs=1 << 20)
fruns = [r.float() for r in runs]
fref = torch.unique_consecutive(fruns[0], return_counts=True)
heads = policy.select("select", runs[0].device, "heads")
BASE = {**heads.values, "num_warps": heads.num_warps, "num_stages": heads.num_stages}
for rnd in range(2):
    for hs in (0, 1):
        with policy.override("select", {**BASE, "HEADS_SHIFT": hs}, bucket="heads"):
            u, lengths, k = RLE.encode(runs[0]); kk = int(k)
            ok = torch.equal(u[:kk], ref[0]) and torch.equal(lengths[:kk].long(), ref[1])
            uc = ops.unique_consecutive(runs[0], False, True)
            ok = ok and torch.equal(uc[0], ref[0]) and torch.equal(uc[2], ref[1])
            fu = ops.unique_consecutive(fruns[0], False, True)
            ok = ok and torch.equal(fu[0], fref[0]) and torch.equal(fu[2], fref[1])
            ok = ok and rbk_matches(reduce_by_key(kv[0][0], kv[0][1], "sum"), uk, sums)
            print(f"round {rnd} HEADS_SHIFT {hs}: {'ok' if ok else 'WRONG'}", flush=True)
            print(f"  rle_encode        {timing_line(rotating(runs, lambda x: RLE.encode(x)), repeats=2)}", flush=True)
            print(f"  unique_consecutive {timing_line(rotating(runs, lambda x: ops.unique_consecutive(x, False, False)), repeats=2)}", flush=True)
            print(f"  uc fp32 +counts    {timing_line(rotating(fruns, lambda x: ops.unique_consecutive(x, False, True)), repeats=2)}", flush=True)
            print(f"  reduce_by_key      {timing_line(rotating(kv, lambda p: reduce_by_key(p[0], p[1], 'sum')), repeats=2)}", flush=True)
