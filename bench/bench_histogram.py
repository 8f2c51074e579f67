"""Histograms: ``torch.ops.tritoncub.histc`` / ``bincount`` / ``histogram_even`` against torch and CUB
(``cupy.histogram``, which CuPy routes to CUB's DeviceHistogram when the CUB accelerator is on).

``bytes_moved`` is the samples read once (the histogram itself is negligible), so GB/s compares with
the copy bandwidth at the top of the run (the read-only floor is about half a copy's time).
Variant rows ``cfg:...`` time the same op under other policy configs (what the sm_90 policy file
was chosen from).
"""
from __future__ import annotations

import torch

from bench.harness import Case, cupy_module, rotating, to_cupy
from tritoncub import policy
from tritoncub.device import histogram as H

ops = torch.ops.tritoncub

SWEEP_256 = [
    {"PRIVATE_ALGO": 0, "TILE": 1024, "PROGRAMS_PER_SM": 8, "num_warps": 4},
    {"PRIVATE_ALGO": 0, "TILE": 2048, "PROGRAMS_PER_SM": 16, "num_warps": 2},
    {"PRIVATE_ALGO": 1, "TILE": 1024, "PROGRAMS_PER_SM": 8, "num_warps": 4},
    {"PRIVATE_ALGO": 1, "TILE": 1024, "PROGRAMS_PER_SM": 4, "num_warps": 8},
    {"PRIVATE_ALGO": 1, "TILE": 512, "PROGRAMS_PER_SM": 16, "num_warps": 4},
    {"PRIVATE_ALGO": 1, "TILE": 1024, "PROGRAMS_PER_SM": 8, "num_warps": 4, "num_stages": 3},
    {"PRIVATE_ALGO": 2, "TILE": 4096, "SMEM_COPIES": 4, "num_warps": 8},
    {"PRIVATE_ALGO": 2, "TILE": 8192, "SMEM_COPIES": 8, "num_warps": 8},
    {"PRIVATE_ALGO": 2, "TILE": 2048, "SMEM_COPIES": 1, "num_warps": 4},
]
SWEEP_1024 = [
    {"PRIVATE_ALGO": 1, "MAX_PRIVATE_BINS": 1024, "TILE": 512, "PROGRAMS_PER_SM": 8, "num_warps": 4},
    {"PRIVATE_ALGO": 1, "MAX_PRIVATE_BINS": 1024, "TILE": 512, "PROGRAMS_PER_SM": 4, "num_warps": 8},
    {"MAX_PRIVATE_BINS": 512, "ATOMIC_COPIES": 64},
    {"MAX_PRIVATE_BINS": 512, "ATOMIC_COPIES": 8},
]
#: the shared-memory path with 32-bit counters in two chunks of bins (the H200 file takes 16-bit ones)
SMEM_32BIT = {"PRIVATE_ALGO": 2, "TILE": 8192, "PROGRAMS_PER_SM": 1, "SMEM_COPIES": 1, "PREFETCH": 1,
              "SMEM_HALF_MIN_BINS": 0, "SMEM_MAX_CHUNKS": 8, "num_warps": 16}
SWEEP_ATOMIC = [
    SMEM_32BIT,
    {"ATOMIC_COPIES": 1},
    {"ATOMIC_COPIES": 8},
    {"ATOMIC_COPIES": 64, "TILE": 4096, "PROGRAMS_PER_SM": 4, "num_warps": 8},
]


def _tag(cfg):
    return "cfg:" + ",".join(f"{k}={v}" for k, v in cfg.items())


def _histc_cases(ctx, n, bins, sweep):
    gen = torch.Generator(device=ctx.device).manual_seed(0)
    xs = [torch.rand(n, device=ctx.device, generator=gen) for _ in range(ctx.copies_for(4 * n))]
    moved = 4 * n

    def check():
        got = ops.histc(xs[0], bins, 0.0, 1.0)
        ref = torch.histc(xs[0], bins, 0.0, 1.0)
        assert torch.equal(got, ref), f"histc differs from torch ({(got - ref).abs().max().item()})"

    v = f"bins={bins}"
    yield Case("histc", "tritoncub", "float32", n, rotating(xs, lambda x: ops.histc(x, bins, 0.0, 1.0)), moved,
               variant=v, check=check)
    yield Case("histc", "torch", "float32", n, rotating(xs, lambda x: torch.histc(x, bins, 0.0, 1.0)), moved,
               variant=v)
    cp = cupy_module()
    if cp is not None:
        cxs = [to_cupy(x) for x in xs]
        yield Case("histc", "cub", "float32", n, rotating(cxs, lambda x: cp.histogram(x, bins, (0.0, 1.0))), moved,
                   variant=v + " cupy.histogram")
    for cfg in sweep:
        with policy.override("histogram", cfg):
            yield Case("histc", "tritoncub", "float32", n,
                       rotating(xs, lambda x: ops.histc(x, bins, 0.0, 1.0)), moved, variant=f"{v} {_tag(cfg)}")


def _even_u8_cases(ctx, n):
    gen = torch.Generator(device=ctx.device).manual_seed(1)
    xs = [torch.randint(0, 256, (n,), device=ctx.device, generator=gen, dtype=torch.uint8)
          for _ in range(ctx.copies_for(n))]
    yield Case("histogram_even", "tritoncub", "uint8", n, rotating(xs, lambda x: H.histogram_even(x, 257, 0, 256)),
               n, variant="bins=256")
    yield Case("histogram_even", "torch", "uint8", n, rotating(xs, lambda x: torch.bincount(x, minlength=256)), n,
               variant="bins=256 (bincount)")
    cp = cupy_module()
    if cp is not None:
        cxs = [to_cupy(x) for x in xs]
        yield Case("histogram_even", "cub", "uint8", n, rotating(cxs, lambda x: cp.histogram(x, 256, (0, 256))), n,
                   variant="bins=256 cupy.histogram")
    rgba = [x.view(-1) for x in xs]
    yield Case("multi_histogram_even", "tritoncub", "uint8", n,
               rotating(rgba, lambda x: H.multi_histogram_even(x, 4, 3, [65, 65, 65], [0] * 3, [256] * 3)), n,
               variant="RGBA, 3 active x 64 bins")


def _bincount_cases(ctx, n, top):
    gen = torch.Generator(device=ctx.device).manual_seed(2)
    xs = [torch.randint(0, top, (n,), device=ctx.device, generator=gen, dtype=torch.int32)
          for _ in range(ctx.copies_for(4 * n))]

    def check():
        assert torch.equal(ops.bincount(xs[0]), torch.bincount(xs[0]))

    v = f"values<{top}"
    yield Case("bincount", "tritoncub", "int32", n, rotating(xs, lambda x: ops.bincount(x)), 4 * n, variant=v,
               check=check)
    yield Case("bincount", "torch", "int32", n, rotating(xs, lambda x: torch.bincount(x)), 4 * n, variant=v)


def cases(ctx):
    n = 1 << 20 if ctx.quick else 1 << 26
    yield from _histc_cases(ctx, n, 256, [] if ctx.quick else SWEEP_256)
    yield from _histc_cases(ctx, n, 65536, [] if ctx.quick else SWEEP_ATOMIC)
    yield from _histc_cases(ctx, n, 1024, [] if ctx.quick else SWEEP_1024)
    yield from _histc_cases(ctx, n, 100, [] if ctx.quick else [{"PRIVATE_ALGO": 1}])
    yield from _even_u8_cases(ctx, n)
    yield from _bincount_cases(ctx, n, 256)
    yield from _bincount_cases(ctx, n, 1 << 16)
    yield from _bincount_cases(ctx, n, 1 << 17)   # (vocabularies of language models: token counts)
    yield from _bincount_cases(ctx, n, 1 << 18)
