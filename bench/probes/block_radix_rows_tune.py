"""Tuning sweep of the shared-memory block radix sort of ``tritoncub.device.segmented_sort`` (rows of
128..4096 keys, one row per program): items per thread (hence warps) and radix bits, against
torch.sort(dim=-1) and the in-register bitonic tile sort, in the same run. Every config is checked
against torch.sort (stable, values bit for bit and indices) before it is timed.

Its first run (bench/results/logs/block_radix_rows_tune-20261123.*) swept warps instead of items and
a second exchange of 32-bit keys (one 64-bit word per key and column, since removed: no consistent
gain over two 32-bit words).

    PYTHONPATH=. python bench/probes/block_radix_rows_tune.py [OUT.json] [--caps]

``--caps``: the register-cap sweep (RADIX_MAXNREG 0/56/64/72) of the shapes of 256-2048 keys at the
items and radix bits the sm_90 policy uses.
"""
import json
import sys

import torch
import triton

from _timing import bench_ms
from tritoncub import policy
from tritoncub.device import segmented_sort as ss

SHAPES = [(65536, 128), (16384, 256), (8192, 512), (4096, 1024), (2048, 2048), (1024, 4096)]
ITEMS = (2, 4, 8, 16, 32)
RADIX_BITS = (6, 7, 8)
MAXNREG = (0,)        # register caps per thread (policy RADIX_MAXNREG; 0 none)
CASES = None          # None: SHAPES in fp32 and two fp16 cases; else [((rows, L), dtype), ...]


def check(x, v, i):
    rv, ri = torch.sort(x, dim=-1, stable=True)
    assert torch.equal(i, ri) and torch.equal(v.view(torch.uint8), rv.view(torch.uint8)), tuple(x.shape)


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    records = []
    cases = CASES or [(s, torch.float32) for s in SHAPES] + [((4096, 1024), torch.float16),
                                                             ((65536, 128), torch.float16)]
    for (rows, L), dtype in cases:
        x = torch.randn(rows, L, device="cuda", generator=g).to(dtype)
        x.view(-1)[::97] = float("nan")
        t_torch = bench_ms(lambda: torch.sort(x, dim=-1))
        with policy.override("segmented_sort", dict(TILE_SORT="bitonic")):
            check(x, *ss.sort_rows(x))
            t_bitonic = bench_ms(lambda: ss.sort_rows(x))
        line = [f"torch {t_torch:.4f}", f"bitonic {t_bitonic:.4f}"]
        best = None
        for items in ITEMS:
            if not 1 <= L // (32 * items) <= 16:
                continue
            for rb in RADIX_BITS:
                for cap in MAXNREG:
                    cfg = dict(TILE_SORT="radix", RADIX_MIN_BLOCK=128, RADIX_ITEMS=items, RADIX_BITS=rb,
                               RADIX_MAXNREG=cap)
                    with policy.override("segmented_sort", cfg):
                        check(x, *ss.sort_rows(x))
                        t = bench_ms(lambda: ss.sort_rows(x))
                    records.append(dict(rows=rows, L=L, dtype=str(dtype), items=items, radix_bits=rb, maxnreg=cap,
                                        ms=t, torch_ms=t_torch, bitonic_ms=t_bitonic))
                    line.append(f"{items}i r{rb} cap{cap} {t:.4f}")
                    if best is None or t < best[0]:
                        best = (t, f"{items}i r{rb} cap{cap}")
        print(f"{rows}x{L} {str(dtype)[6:]}: best {best[1]} {best[0]:.4f} ms = {t_torch / best[0]:.2f}x torch, "
              f"{t_bitonic / best[0]:.2f}x bitonic | " + ", ".join(line), flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                           records=records), f, indent=1)


if __name__ == "__main__":
    if "--caps" in sys.argv:
        sys.argv.remove("--caps")
        ITEMS, RADIX_BITS, MAXNREG = (8,), (7, 8), (0, 56, 64, 72)
        CASES = [((16384, 256), torch.float32), ((8192, 512), torch.float32), ((4096, 1024), torch.float32),
                 ((2048, 2048), torch.float32), ((4096, 1024), torch.float16)]
    main()
