"""The onesweep upfront histogram (``_histogram_gluon_kernel``) over 2^28 uint32 keys, 4 places of 8
bits: warps x keys per thread x programs per SM, loading the next tile's keys before counting this
one's (PREFETCH) or not, with and without the look-back words' zero fill it now also does (2^24 int32 words, 64 MB, as a 2^28 sort's); do_bench medians (L2 flushed), counts
checked against the shipped configuration's.

    PYTHONPATH=. python bench/probes/sort_hist_config_probe.py
"""
import torch

import tritoncub  # noqa: F401
from tritoncub.device import radix_sort as RS
from tritoncub._utils import cdiv, num_sms
from _timing import bench_ms

N = 1 << 28
ZERO_WORDS = (N // 4096) * 256


def hist_call(k, hist, zbuf, warps, items, per_sm, zero, prefetch=True):
    n_tiles = cdiv(N, warps * items * 32)
    grid = (min(n_tiles, num_sms(k.device) * per_sm), 1)
    hist.zero_()
    RS.launch(RS._histogram_gluon_kernel, grid, k, hist, N, n_tiles, 0, 32, zbuf, ZERO_WORDS if zero else 0,
              NUM_PLACES=4, RADIX_BITS=8, DESCENDING=False, WARPS=warps, ITEMS=items,
              SMEM_ROWS=1 << (4 * warps - 1).bit_length(), COUNT_SPECIAL=False, PREFETCH=prefetch, num_warps=warps,
              PDL=0)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(5)
    k = torch.randint(0, 1 << 32, (N,), device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
    hist = torch.zeros(4 * 256, device="cuda", dtype=torch.int64)
    zbuf = torch.full((ZERO_WORDS,), -1, device="cuda", dtype=torch.int32)
    hist_call(k, hist, zbuf, 8, 8, 4, True)
    ref = hist.clone()
    assert int(ref.sum()) == 4 * N and int(zbuf.abs().sum()) == 0
    for prefetch in (False, True):
        for warps, items, per_sm in [(8, 8, 4), (8, 8, 2), (8, 8, 3), (8, 4, 4), (8, 4, 6), (8, 16, 2), (4, 8, 4),
                                     (4, 8, 8), (16, 8, 2), (16, 4, 2), (16, 4, 3), (16, 2, 2), (16, 8, 1)]:
            zbuf.fill_(-1)
            hist_call(k, hist, zbuf, warps, items, per_sm, True, prefetch)
            ok = torch.equal(hist, ref) and int(zbuf.abs().sum()) == 0
            t = [bench_ms(lambda z=z: hist_call(k, hist, zbuf, warps, items, per_sm, z, prefetch)) * 1e3
                 for z in (False, True, False, True)]
            print(f"prefetch {int(prefetch)} warps {warps:2d} items {items:2d} per SM {per_sm}: ok={ok} counting "
                  f"{t[0]:.1f} {t[2]:.1f} us, with the 64 MB zero fill {t[1]:.1f} {t[3]:.1f} us", flush=True)

if __name__ == "__main__":
    main()
