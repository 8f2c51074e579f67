"""Rows sorted by the block radix sort: sorted keys gathered from global memory by their source
column (``RADIX_SMEM_GATHER`` 0) against keys carried through shared memory with the sort (1) or
read again in input order after it and exchanged through shared memory (2), every other policy value
as shipped. Each result is checked against ``torch.sort(dim=-1, stable=True)``
first; then do_bench medians (L2 flushed, as ``python -m bench``) and GPU time per call (profiler),
the settings interleaved over ``--rounds`` rounds.

    PYTHONPATH=. python bench/probes/smem_gather_probe.py [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import bench_ms, gpu_us  # noqa: E402

import tritoncub  # noqa: E402,F401
from tritoncub import policy  # noqa: E402
from tritoncub.device import segmented_sort as ss  # noqa: E402

SHAPES = (("float32", 4096, 1024), ("int32", 4096, 1024), ("float16", 4096, 1024), ("int8", 4096, 1024),
          ("float32", 16384, 256), ("float32", 2048, 2048), ("float32", 1024, 4096), ("float32", 512, 8192),
          ("float32", 8192, 600))


def data(dtype: str, rows: int, length: int, g) -> torch.Tensor:
    dt = getattr(torch, dtype)
    if dt.is_floating_point:
        x = torch.randn(rows, length, device="cuda", generator=g).to(dt)
        x.view(-1)[:6] = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf"), -0.0])
        return x
    info = torch.iinfo(dt)
    return torch.randint(info.min, info.max, (rows, length), device="cuda", generator=g,
                         dtype=torch.int64).to(dt)


def with_gather(gather: int, length: int):
    """An override of the bucket of rows of ``length`` keys: the shipped policy, RADIX_SMEM_GATHER set."""
    bucket = ss._bucket(max(ss.MIN_BLOCK, 1 << (length - 1).bit_length()))
    shipped = policy.select("segmented_sort", torch.device("cuda"), bucket).as_dict()
    # (the "large" bucket's values decide which rows take the block radix sort: keep them too)
    large = policy.select("segmented_sort", torch.device("cuda"), "large").as_dict()
    return bucket, dict(shipped, RADIX_SMEM_GATHER=gather), dict(large, RADIX_SMEM_GATHER=gather)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()}  torch {torch.__version__}  triton "
          f"{__import__('triton').__version__}; us per call: do_bench median / GPU (profiler)")
    g = torch.Generator(device="cuda").manual_seed(0)
    results = {}
    for dtype, rows, length in SHAPES:
        x = data(dtype, rows, length, g)
        ref_v, ref_i = torch.sort(x, dim=-1, stable=True)
        cases = {}
        for gather in (0, 1, 2):
            bucket, vals, large = with_gather(gather, length)

            def run(x=x, bucket=bucket, vals=vals, large=large):
                with policy.override("segmented_sort", large, bucket="large"), \
                        policy.override("segmented_sort", vals, bucket=bucket):
                    return ss.sort_rows(x)
            v, i = run()
            ok = torch.equal(i, ref_i) and torch.equal(v.view(torch.uint8), ref_v.view(torch.uint8))
            if not ok:
                print(f"MISMATCH {dtype} {rows}x{length} gather={gather}")
                sys.exit(1)
            cases[gather] = run
        torch_fn = lambda x=x: torch.sort(x, dim=-1, stable=True)   # noqa: E731
        for r in range(args.rounds):
            for name, fn in ((0, cases[0]), (1, cases[1]), (2, cases[2]), ("torch", torch_fn)):
                ms = bench_ms(fn)
                us = gpu_us(fn)
                results.setdefault((dtype, rows, length, name), []).append((ms * 1e3, us))
        line = f"{dtype:8s} {rows:6d}x{length:<5d}"
        for name in (0, 1, 2, "torch"):
            t = results[(dtype, rows, length, name)]
            line += f"  {('gather', 'smem', 'reload', 'torch')[name if name != 'torch' else 3]}: " + " ".join(
                f"{a:.1f}/{b:.1f}" for a, b in t)
        print(line, flush=True)


if __name__ == "__main__":
    main()
