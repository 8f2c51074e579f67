"""A segment per warp (``RADIX_WARP_MIN_BLOCK``/``RADIX_WARP_ROWS`` of ``tritoncub.device.segmented_sort``)
against the in-register bitonic tile sort, the one-row-per-program block radix sort and torch.sort(dim=-1),
for rows of 32..512 keys, in the same run. Every config is checked against torch.sort (stable, values bit
for bit and indices) before it is timed.

    PYTHONPATH=. python bench/probes/warp_rows_probe.py
"""
import sys

import torch
import triton

sys.path.insert(0, "bench/probes")
from _timing import bench_ms  # noqa: E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import segmented_sort as ss  # noqa: E402

CASES = [((65536, 128), torch.float32), ((65536, 128), torch.int32), ((65536, 128), torch.float16),
         ((262144, 32), torch.float32), ((131072, 64), torch.float32), ((16384, 256), torch.float32),
         ((8192, 512), torch.float32)]


def check(x, v, i):
    rv, ri = torch.sort(x, dim=-1, stable=True)
    assert torch.equal(i, ri) and torch.equal(v.view(torch.uint8), rv.view(torch.uint8)), tuple(x.shape)


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    for (rows, L), dtype in CASES:
        if dtype.is_floating_point:
            x = torch.randn(rows, L, device="cuda", generator=g).to(dtype)
            x.view(-1)[::97] = float("nan")
        else:
            x = torch.randint(-2**31, 2**31 - 1, (rows, L), device="cuda", generator=g, dtype=dtype)
        t_torch = bench_ms(lambda: torch.sort(x, dim=-1))
        line = [f"torch {t_torch:.4f}"]
        variants = [("bitonic", dict(TILE_SORT="bitonic")), ("shipped", {})]
        if L >= 128:
            variants.append(("block 4i r8", dict(TILE_SORT="radix", RADIX_MIN_BLOCK=32, RADIX_ITEMS=4, RADIX_BITS=8,
                                                 RADIX_MAXNREG=0, RADIX_WARP_MIN_BLOCK=0)))
        for rows_per in (2, 4, 8):
            for rb in (6, 7, 8):
                variants.append((f"warp{rows_per} r{rb}", dict(TILE_SORT="radix", RADIX_MIN_BLOCK=1024,
                                                               RADIX_WARP_MIN_BLOCK=32, RADIX_WARP_ROWS=rows_per,
                                                               RADIX_BITS=rb, RADIX_MAXNREG=0)))
        best = None
        for name, cfg in variants:
            with policy.override("segmented_sort", cfg):
                try:
                    check(x, *ss.sort_rows(x))
                except AssertionError:
                    line.append(f"{name} WRONG")
                    continue
                t = bench_ms(lambda: ss.sort_rows(x))
            line.append(f"{name} {t:.4f}")
            if best is None or t < best[0]:
                best = (t, name)
        print(f"{rows}x{L} {str(dtype)[6:]}: best {best[1]} {best[0]:.4f} ms = {t_torch / best[0]:.2f}x torch | "
              + ", ".join(line), flush=True)


if __name__ == "__main__":
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    main()
