"""Run-length encode (the select policy's ``heads`` bucket) and reduce_by_key under configs around
their tuned ones, 2^26 sorted int32 keys in 2^20 runs (fp32 values): do_bench medians and GPU time per
kernel; every result checked against torch first; a 512 MB copy for scale.

    PYTHONPATH=. python bench/probes/rle_rbk_config_probe.py [rle] [rbk]

Log (H200, before HEADS_SHIFT): ``bench/results/logs/rle_rbk_cfg-h200-20261130.log``.
"""
import contextlib
import sys
import torch
import tritoncub  # noqa
from bench.harness import rotating
from tritoncub import policy
from tritoncub.device import run_length_encode as RLE
from tritoncub.device.reduce_by_key import reduce_by_key
from _inputs import select_inputs, rbk_inputs, rbk_matches
from _timing import timing_line
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
n = 1 << 26
which = sys.argv[1:] or ["rle", "rbk"]
if "rle" in which:
    _, _, _, runs = select_inputs(n, (), copies=2)
    ref = torch.unique_consecutive(runs[0], return_counts=True)
    pol = policy.select("select", runs[0].device, "heads")
    BASE = {**pol.values, "num_warps": pol.num_warps, "num_stages": pol.num_stages}
    print("heads tuned", BASE)
    for v in [None, {"COUNT_TILES": 4}, {"COUNT_TILES": 8}, {"TILE": 4096, "COUNT_TILES": 2, "num_warps": 8},
              {"TILE": 4096, "COUNT_TILES": 4, "num_warps": 8}, {"TILE": 4096, "COUNT_TILES": 4},
              {"TILE": 1024, "COUNT_TILES": 8}, {"SCATTER_TILES": 16, "SPARSE_SCATTER_TILES": 16},
              {"SCATTER_MAXNREG": 80}, {"SCATTER_MAXNREG": 0}]:
        cfg = None if v is None else {**BASE, **v}
        try:
            with policy.override("select", cfg, bucket="heads") if cfg else contextlib.nullcontext():
                u, lengths, k = RLE.encode(runs[0]); kk = int(k)
                ok = torch.equal(u[:kk], ref[0]) and torch.equal(lengths[:kk].long(), ref[1])
                line = timing_line(rotating(runs, lambda x: RLE.encode(x)), repeats=2)
            print(f"rle {'tuned' if v is None else v}: {'ok' if ok else 'WRONG'}  {line}", flush=True)
        except Exception as e:
            print(f"rle {v}: ERROR {type(e).__name__}: {str(e)[:200]}", flush=True)
if "rbk" in which:
    kv, uk, sums = rbk_inputs(n, runs=1 << 20)
    pol = policy.select("reduce_by_key", kv[0][0].device)
    BASE = {**pol.values, "num_warps": pol.num_warps, "num_stages": pol.num_stages}
    print("rbk tuned", BASE)
    for v in [None, {"MAXNREG": 56}, {"MAXNREG": 64}, {"MAXNREG": 0}, {"COUNT_TILES": 8}, {"COUNT_TILES": 16},
              {"TILE": 1024, "COUNT_TILES": 4, "num_warps": 4}, {"TILE": 256, "COUNT_TILES": 16, "num_warps": 1},
              {"TILE": 1024, "COUNT_TILES": 8, "num_warps": 2}]:
        cfg = None if v is None else {**BASE, **v}
        try:
            with policy.override("reduce_by_key", cfg) if cfg else contextlib.nullcontext():
                ok = rbk_matches(reduce_by_key(kv[0][0], kv[0][1], "sum"), uk, sums)
                line = timing_line(rotating(kv, lambda p: reduce_by_key(p[0], p[1], "sum")), repeats=2)
            print(f"rbk {'tuned' if v is None else v}: {'ok' if ok else 'WRONG'}  {line}", flush=True)
        except Exception as e:
            print(f"rbk {v}: ERROR {type(e).__name__}: {str(e)[:200]}", flush=True)
x = torch.empty(n * 2, dtype=torch.int32, device="cuda"); y = torch.empty_like(x)
from _timing import bench_ms
print(f"copy 512 MB: {bench_ms(lambda: y.copy_(x)):.4f} ms", flush=True)
