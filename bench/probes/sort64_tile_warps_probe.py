"""The in-register tile sort of rows of 64-bit keys (2048-4096 items: 74-196 us a row on an H200 with the
"large" policy's 4 warps, ``sort64_rows_probe-h200-20261202.log``) under more warps and either network,
GPU time per call against torch.sort's.

    PYTHONPATH=. python bench/probes/sort64_tile_warps_probe.py [--short]
"""
import dataclasses
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub.device import segmented_sort as SS  # noqa: E402

d = "cuda"
g = torch.Generator(device=d).manual_seed(0)
_select = SS.policy.select


def sort_with(x, warps, network):
    def select(op, device=None, bucket="default"):
        p = _select(op, device, bucket)
        if op != "segmented_sort":
            return p
        return dataclasses.replace(p, num_warps=warps, values={**p.values, "NETWORK": network})
    SS.policy.select = select
    wide_warps, SS.WIDE_KEYS_WARPS = SS.WIDE_KEYS_WARPS, {}   # (since set from this probe: it would win)
    wide_max, SS.WIDE_KEYS_MAX_BLOCK = SS.WIDE_KEYS_MAX_BLOCK, (4096, 4096)   # (the tile sort for every shape)
    try:
        return SS.sort_rows(x)
    finally:
        SS.policy.select = _select
        SS.WIDE_KEYS_WARPS, SS.WIDE_KEYS_MAX_BLOCK = wide_warps, wide_max


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    shapes = ((1, 2048), (1, 4096), (64, 2048), (1024, 4096))
    if "--short" in sys.argv:   # (rows of 512 and 1024 keys: logs/sort64_tile_warps_probe-short-h200-20261202d.log)
        shapes = ((1, 1024), (1024, 1024), (4096, 512), (1024, 2048))
    for shape in shapes:
        x = torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g, dtype=torch.int64)
        ref = torch.sort(x, stable=True)
        line = f"{str(shape):12s} torch {gpu_us(lambda: torch.sort(x, stable=True)):7.1f} us"
        for warps, net in ((4, "tl"), (8, "tl"), (16, "tl"), (16, "own"), (32, "tl")):
            try:
                v, i = sort_with(x, warps, net)
                ok = torch.equal(v, ref[0]) and torch.equal(i, ref[1])
                line += f" | {warps}w {net} {gpu_us(lambda: sort_with(x, warps, net)):7.1f}{'' if ok else ' DIFF'}"
            except Exception as e:   # (reported, the probe goes on)
                line += f" | {warps}w {net} ERROR {type(e).__name__}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
