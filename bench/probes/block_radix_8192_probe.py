"""Rows of 4097-8192 keys: one program per row through the shared-memory block radix sort (16 warps x
16 keys, or 8 x 32: the policy's ``RADIX_MAX_BLOCK`` 8192) against the segmented onesweep sort they
took before (``RADIX_MAX_BLOCK`` 4096, the tile sort's ``MAX_BLOCK``), and the register cap of the
large bucket (rows of 1025-4096 keys, 16 keys per thread). do_bench median (L2 flushed, as ``python -m bench``) and GPU time per call; every result
checked against torch.sort (stable: values bit for bit and indices) before it is timed, torch.sort
timed in the same run.

    PYTHONPATH=. python bench/probes/block_radix_8192_probe.py [--caps]
"""
import sys

import torch

from _timing import bench_ms, gpu_us
from tritoncub import policy
from tritoncub.device import segmented_sort as ss


def data(dtype, rows, L, g):
    if dtype.is_floating_point:
        x = torch.randn(rows, L, device="cuda", generator=g).to(dtype)
        x.view(-1)[::97] = float("nan")
        x.view(-1)[5::101] = -0.0
        return x
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (rows, L), device="cuda", generator=g, dtype=torch.int64).to(dtype)


def check(x, descending):
    v, i = ss.sort_rows(x, descending)
    rv, ri = torch.sort(x, dim=-1, descending=descending, stable=True)
    assert torch.equal(i, ri) and torch.equal(v.view(torch.uint8), rv.view(torch.uint8)), tuple(x.shape)


def time_one(label, x, descending, cfg):
    ctx = policy.override("segmented_sort", cfg, bucket="large") if cfg else _null()
    try:
        with ctx:
            check(x, descending)
            ms = bench_ms(lambda: ss.sort_rows(x, descending))
            us = gpu_us(lambda: ss.sort_rows(x, descending))
        print(f"  {label:34s} do_bench {ms:.4f} ms  gpu {us:8.1f} us", flush=True)
    except Exception as e:     # (a config that does not compile or run here: say so, go on)
        print(f"  {label:34s} FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    large = policy.select("segmented_sort", torch.device("cuda"), "large").as_dict()
    print("shipped large bucket:", large, flush=True)
    if "--caps" in sys.argv:
        cases = [(torch.float32, 2048, 2048, False), (torch.float32, 4096, 1500, False),
                 (torch.float32, 8192, 1100, False), (torch.int32, 2048, 2048, False),
                 (torch.float16, 2048, 2048, False), (torch.float32, 1024, 4096, False)]
        cfgs = [("cap 0 (shipped)", None)] + [(f"cap {c}", {**large, "RADIX_MAXNREG": c}) for c in (56, 64)]
    else:
        cases = [(torch.float32, 512, 8192, False), (torch.float32, 512, 8192, True),
                 (torch.float32, 2048, 8192, False), (torch.float32, 4096, 4608, False),
                 (torch.float32, 1024, 6000, False), (torch.int32, 512, 8192, False),
                 (torch.float16, 512, 8192, False), (torch.int64, 512, 8192, False),
                 (torch.float32, 64, 8192, False)]
        # (the first run, bench/results/logs/block_radix_8192_probe-h200-20261128.log, raised MAX_BLOCK
        # itself: int64 rows then went to the in-register tile sort of 8192 keys, which did not finish)
        cfgs = [("long path (RADIX_MAX_BLOCK 4096)", {**large, "RADIX_MAX_BLOCK": 4096}),
                ("shipped (block radix, 16 warps x 16)", None),
                ("block radix 8192, 8 warps x 32", {**large, "RADIX_ITEMS": 32})]
    for dtype, rows, L, desc in cases:
        x = data(dtype, rows, L, g)
        t = bench_ms(lambda: torch.sort(x, dim=-1, descending=desc, stable=True))
        print(f"{str(dtype)[6:]} {rows}x{L}{' desc' if desc else ''}: torch.sort {t:.4f} ms", flush=True)
        for label, cfg in cfgs:
            time_one(label, x, desc, cfg)


if __name__ == "__main__":
    main()
