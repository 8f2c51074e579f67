"""Top-k filter rounds (tritoncub.device.topk, 16 x 2^20 fp32, k = 8, the issue's 2x bar) with the filter
kernel's warps (items per warp) and register cap varied, the sm_90 "long" policy otherwise as shipped;
checked against torch.topk (values) first, whole-op do_bench medians and the filter kernel's GPU time,
torch.topk in the same run.

    PYTHONPATH=. python bench/probes/topk_filter_cap_probe.py
"""
import json
from pathlib import Path

import torch

from _timing import bench_ms, gpu_us
import tritoncub  # noqa: F401  (registers torch.ops.tritoncub.*)
from tritoncub import policy
from tritoncub.device import topk as T


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(16, 1 << 20, device="cuda", generator=g)
    t_torch = bench_ms(lambda: torch.topk(x, 8))
    print(f"16x2^20 fp32 k=8: torch {t_torch:.4f}", flush=True)
    # (256 items per warp = 32 warps: 1024 threads need a cap of at most 64 registers)
    long_pol = json.load(open(Path(T.__file__).parents[1] / "policies/sm_90/topk.json"))["tuned"]["long"]
    for items, cap in ((512, 0), (512, 64), (512, 80), (1024, 0), (1024, 80), (256, 64), (256, 56)):
        T._FILTER_ITEMS_PER_WARP = items
        T._FILTER_MAX_WARPS = 32 if items == 256 else 16
        f = lambda: torch.ops.tritoncub.topk(x, 8, -1, True, True)   # noqa: E731
        # (an override merges over the built-in fallback: the whole sm_90 "long" policy, cap replaced)
        with policy.override("topk", dict(long_pol, FILTER_MAXNREG=cap), "long"):
            v, _ = f()
            assert torch.equal(v, torch.topk(x, 8).values)
            t = bench_ms(f)
            us = gpu_us(f, match="filter")
        print(f"  {items}/warp cap {cap}: {t:.4f} ms ({t_torch / t:.2f}x torch), filter kernel {us:.1f} us",
              flush=True)


if __name__ == "__main__":
    main()
