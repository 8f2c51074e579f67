"""histc of 2^26 uniform fp32 samples over [0, 1): the shared-memory kernel's time by bin count and
launch shape (programs per SM, warps, tile, shared-memory copies). GPU time per call from
torch.profiler and do_bench medians (L2 flushed), torch in the same run; every result checked
against torch.histc first.

    PYTHONPATH=. python bench/probes/histc_bins_probe.py
"""
import itertools

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from _timing import bench_ms, gpu_us as _gpu_us

ops = torch.ops.tritoncub
n = 1 << 26
x = torch.rand(n, device="cuda", generator=torch.Generator(device="cuda").manual_seed(0))


t = bench_ms


def gpu_us(fn):
    return _gpu_us(fn, reps=10)


shipped = policy.select("histogram", x.device)
base = {**shipped.values, "num_warps": shipped.num_warps, "num_stages": shipped.num_stages}
print(f"shipped: {base}")
for bins in (100, 128, 256, 512, 1024):
    ref = torch.histc(x, bins, 0.0, 1.0)
    print(f"bins={bins}: torch {t(lambda: torch.histc(x, bins, 0.0, 1.0)):.4f} ms, shipped "
          f"{t(lambda: ops.histc(x, bins, 0.0, 1.0)):.4f} ms ({gpu_us(lambda: ops.histc(x, bins, 0.0, 1.0)):.1f} us)",
          flush=True)
    for per_sm, warps, tile, copies in itertools.product((1, 2, 4), (8, 16), (4096, 8192, 16384), (1, 2)):
        cfg = {**base, "PROGRAMS_PER_SM": per_sm, "num_warps": warps, "TILE": tile, "SMEM_COPIES": copies}
        with policy.override("histogram", cfg):
            assert torch.equal(ops.histc(x, bins, 0.0, 1.0), ref), cfg
            us = gpu_us(lambda: ops.histc(x, bins, 0.0, 1.0))
        print(f"  bins={bins} per_sm={per_sm} warps={warps} tile={tile} copies={copies}: {us:.1f} us", flush=True)
