"""Reductions over a dim that is not the last (``reduce_columns``): where the GPU time goes (the
kernels of one call, torch's beside), then the columns kernel's geometry swept — items per program
step, columns per program at least, programs per SM for the row split, warps, pipeline stages — with
GPU time per call (profiler) for the shapes and dtypes where the torch sweep found us slower.

The first run (log ``columns_geometry_probe-h200-20261201.log``) swept the geometry before
``_columns_geometry``: ``_COLUMNS_MAX_BLOCK`` (columns per program at most, 256 then) in place of
``_COLUMNS_MIN_BLOCK``.

    PYTHONPATH=. python bench/probes/columns_geometry_probe.py [--breakdown-only]
"""
import itertools
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us, kernel_breakdown  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub.device import segmented_reduce as seg  # noqa: E402

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
CASES = [((4, 1 << 20), 0, dt, op) for dt in (torch.float32, torch.bfloat16) for op in ("sum", "argmin")]
CASES += [((4, 1 << 20), 0, torch.int32, "argmin"), ((4096, 1024), 0, torch.float32, "sum")]
CASES += [((4096, 1024), 0, torch.bfloat16, op) for op in ("sum", "argmin")]
CASES += [((64, 128, 256), 1, torch.float32, op) for op in ("sum", "argmax")]
CASES += [((4096, 1024), 0, torch.int32, "sum"), ((4096, 1024), 0, torch.float32, "argmax")]


def make(shape, dt):
    x = torch.randn(shape, device="cuda", generator=g)
    return (x * 1000).to(dt) if not dt.is_floating_point else x.to(dt)


def call(op, x, dim, ours):
    if op == "sum":
        return (lambda: ops.sum(x, [dim])) if ours else (lambda: torch.sum(x, dim))
    f = getattr(ops, op) if ours else getattr(torch, op)
    return lambda: f(x, dim)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    base = {k: getattr(seg, k, None) for k in ("_COLUMNS_TILE", "_COLUMNS_MIN_BLOCK", "_COLUMNS_PER_SM",
                                                "_COLUMNS_WARPS", "_COLUMNS_STAGES")}
    print("committed geometry:", base)
    xs = {}
    for shape, dim, dt, op in CASES:
        x = xs.setdefault((shape, dt), make(shape, dt))
        for who in (True, False):
            f = call(op, x, dim, who)
            parts = kernel_breakdown(f)
            print(f"{'ours ' if who else 'torch'} {op:6s} {str(dt):15s} {str(shape):16s} dim={dim}: "
                  f"{sum(us for _, us, _ in parts):7.1f} us | "
                  + "; ".join(f"{n[:60]} {us:.1f}x{c}" for n, us, c in parts), flush=True)
    if "--breakdown-only" in sys.argv:
        return
    grid = list(itertools.product((8192, 16384, 32768), (128, 256, 512), (4, 8), (4, 8), (3,)))
    best = {}
    for tile, mb, per_sm, warps, stages in grid:
        for k, v in dict(_COLUMNS_TILE=tile, _COLUMNS_MIN_BLOCK=mb, _COLUMNS_PER_SM=per_sm, _COLUMNS_WARPS=warps,
                         _COLUMNS_STAGES=stages).items():
            setattr(seg, k, v)
        row = []
        for shape, dim, dt, op in CASES:
            x = xs[(shape, dt)]
            f = call(op, x, dim, True)
            want = call(op, x, dim, False)()
            got = f()
            same = torch.equal(got, want) if op != "sum" or not dt.is_floating_point else \
                torch.allclose(got.double(), want.double(), rtol=1e-2, atol=1e-1)
            us = gpu_us(f)
            row.append(f"{us:6.1f}{'' if same else '!'}")
            key = (shape, dim, dt, op)
            if key not in best or us < best[key][0]:
                best[key] = (us, (tile, mb, per_sm, warps, stages))
        print(f"tile {tile:5d} min_block {mb:4d} per_sm {per_sm} warps {warps} stages {stages}: " + " ".join(row),
              flush=True)
    for k, v in base.items():
        setattr(seg, k, v)
    print("\nbest per case (tile, min_block, per_sm, warps, stages):")
    for key, (us, cfg) in best.items():
        print(f"  {key[3]:6s} {str(key[2]):15s} {str(key[0]):16s} dim={key[1]}: {us:6.1f} us  {cfg}")


if __name__ == "__main__":
    main()
