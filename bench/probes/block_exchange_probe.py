"""Rows sorted one per program by the shared-memory block radix sort: every shape checked against
torch.sort, then do_bench medians and GPU time per call. Run it once per tree to compare two versions
of ``block_radix_sort_smem`` (e.g. its exchange words): ``PYTHONPATH=<tree>:bench/probes python
bench/probes/block_exchange_probe.py LABEL [JSON]``; JSON: policy values merged over the tuned
segmented_sort bucket of every shape (e.g. ``'{"RADIX_ITEMS": 16}'``), fp32 shapes only then.
"""
import contextlib
import json
import sys

import torch

from _timing import bench_ms, gpu_us
from tritoncub import policy
from tritoncub.device.segmented_sort import _bucket, sort_rows

SHAPES = ((16384, 256), (8192, 512), (4096, 1024), (2048, 2048), (1024, 4096))


def _rows(b, length, dtype, g):
    if dtype.is_floating_point:
        x = torch.randn(b, length, device="cuda", generator=g).to(dtype)
        x[0, :7] = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf"), 1.0, 1.0])
        return x
    return torch.randint(-2**31, 2**31 - 1, (b, length), device="cuda", generator=g, dtype=torch.int64).to(dtype)


def _config(cfg: dict | None, length: int):
    if cfg is None:
        return contextlib.nullcontext()
    bucket = _bucket(length)
    base = policy.select("segmented_sort", torch.device("cuda"), bucket).as_dict()
    return policy.override("segmented_sort", {**base, **cfg}, bucket)


def _case(label, dtype, b, length, g):
    xs = [_rows(b, length, dtype, g) for _ in range(2)]
    v, i = sort_rows(xs[0])
    tv, ti = torch.sort(xs[0], dim=-1, stable=True)
    as_bits = (lambda t: t.view(torch.uint8)) if dtype.is_floating_point else (lambda t: t)
    ok = torch.equal(as_bits(v), as_bits(tv)) and torch.equal(i, ti)
    state = {"k": 0}

    def call():
        state["k"] ^= 1
        return sort_rows(xs[state["k"]])
    ms = [bench_ms(call) for _ in range(3)]
    us = gpu_us(call, reps=10)
    print(f"{label} {str(dtype)[6:]:8s} {b}x{length}: ok={ok} ms " + " ".join(f"{m:.4f}" for m in ms)
          + f"  gpu {us:.1f} us", flush=True)


def main(label: str, cfg: dict | None = None) -> None:
    g = torch.Generator(device="cuda").manual_seed(0)
    print(label, torch.cuda.get_device_name(), torch.__version__, json.dumps(cfg), flush=True)
    for dtype in (torch.float32,) if cfg else (torch.float32, torch.int32, torch.float16):
        for b, length in SHAPES:
            with _config(cfg, length):
                _case(label, dtype, b, length, g)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tree", json.loads(sys.argv[2]) if len(sys.argv) > 2 else None)
