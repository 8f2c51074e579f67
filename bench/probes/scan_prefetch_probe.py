"""Probe: does a persistent single-pass scan that prefetches its next tile beat one tile per program?

The one-tile-per-program kernel (tritoncub's ``_scan_single_pass_kernel``) loads its tile, scans it,
then waits in the look-back with no load in flight. Here each program loops over tiles taken from
the same atomic counter and issues the load of its *next* tile before working on the current one,
so the memory system stays busy while the look-back spins. Forward progress holds: a program waits
only on tiles with smaller tickets, and the smallest unfinished ticket always belongs to a program
working on it as its current tile.

    python bench/probes/scan_prefetch_probe.py

Prints ms and GB/s (read + write) per config for inclusive sums of fp32 at 2^26 and 2^28, next to
tritoncub's scan, torch.cumsum and a copy, checking every result against a float64 cumsum.
"""
import itertools

import torch
import triton
import triton.language as tl
import triton.testing

from tritoncub.agent.lookback import (LOOKBACK_AGGREGATE, LOOKBACK_INCLUSIVE, allocate_status, look_back,
                                      lookback_reduce, publish)
from tritoncub.device import scan as S


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _persistent_scan(x_ptr, y_ptr, counter_ptr, status_ptr, n, num_tiles, LB_REDUCE: tl.constexpr,
                     TILE: tl.constexpr, WINDOW: tl.constexpr, PREFETCH: tl.constexpr):
    k = tl.arange(0, TILE)
    tile = tl.atomic_add(counter_ptr, 1)
    if PREFETCH:
        base = tile * TILE
        x_next = tl.load(x_ptr + base + k, mask=base + k < n, other=0.0)
    else:
        x_next = tl.zeros([TILE], tl.float32)
    while tile < num_tiles:
        start = tile * TILE
        if PREFETCH:
            x = x_next
            nxt = tl.atomic_add(counter_ptr, 1)
            nb = nxt * TILE
            x_next = tl.load(x_ptr + nb + k, mask=nb + k < n, other=0.0)
        else:
            x = tl.load(x_ptr + start + k, mask=start + k < n, other=0.0)
            nxt = tl.atomic_add(counter_ptr, 1)
        s = tl.cumsum(x, 0)
        a = tl.sum(x, 0)
        if tile > 0:
            publish(status_ptr, 0, tile, a, a, LOOKBACK_AGGREGATE, 1, True)
            p, _ = look_back(status_ptr, 0, tile, 0, a, a, _add, LB_REDUCE, 1, WINDOW, False, True)
            publish(status_ptr, 0, tile, p + a, p + a, LOOKBACK_INCLUSIVE, 1, True)
            s = s + p
        else:
            publish(status_ptr, 0, tile, a, a, LOOKBACK_INCLUSIVE, 1, True)
        tl.store(y_ptr + start + k, s, mask=start + k < n)
        tile = nxt


def persistent(x, tile, warps, programs_per_sm, window, prefetch):
    n = x.numel()
    num_tiles = triton.cdiv(n, tile)
    y = torch.empty_like(x)
    counter, status, _ = allocate_status(num_tiles, [torch.float32], False, x.device)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    grid = (min(num_tiles, sms * programs_per_sm),)
    _persistent_scan[grid](x, y, counter, status, n, num_tiles, LB_REDUCE=lookback_reduce(_add, 1), TILE=tile,
                           WINDOW=window, PREFETCH=prefetch, num_warps=warps, num_stages=1)
    return y


def main():
    dev = torch.device("cuda")
    for logn in (26, 28):
        n = 1 << logn
        x = torch.randn(n, device=dev)
        ref = torch.cumsum(x.double(), 0)
        scale = torch.cumsum(x.double().abs(), 0)
        gb = 2 * n * 4 / 1e9

        def report(name, fn, check=True):
            if check:
                out = fn()
                err = ((out.double() - ref).abs() / (scale + 1)).max().item()
                ok = err < 1e-5
            else:
                ok, err = True, 0.0
            ms = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
            print(f"n=2^{logn} {name:52s} {ms:8.4f} ms {gb / ms * 1e3:7.0f} GB/s {'ok' if ok else f'WRONG {err:.2g}'}",
                  flush=True)

        y = torch.empty_like(x)
        report("copy", lambda: y.copy_(x), check=False)
        report("torch.cumsum", lambda: torch.cumsum(x, 0))
        report("tritoncub inclusive_sum (policy)", lambda: S.inclusive_sum(x))
        for tile, warps, pps, window, pf in itertools.product((2048, 4096, 8192), (4, 8), (2, 4, 8), (32,), (0, 1)):
            if tile // (32 * warps) > 64:
                continue
            try:
                report(f"persistent tile={tile} warps={warps} per_sm={pps} win={window} prefetch={pf}",
                       lambda: persistent(x, tile, warps, pps, window, bool(pf)))
            except Exception as e:  # a probe: report and go on
                print(f"tile={tile} warps={warps} per_sm={pps} prefetch={pf}: {type(e).__name__}: {str(e)[:200]}")
        del x, ref, scale, y


if __name__ == "__main__":
    main()
