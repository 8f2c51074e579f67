"""The onesweep upfront histogram (``_histogram_gluon_kernel``) over 2^28 uint32 keys, 4 places of 8
bits: warps x keys per thread x programs per SM, loading the next tile's keys before counting this
one's (PREFETCH) or not; do_bench medians (L2 flushed), counts checked against the shipped
configuration's. (At b719add the kernel also zeroed the look-back words, 64 MB for 2^28 keys: ~22 us more
inside it, as much as the fill kernel it replaced, so that was taken out again; the log
sort_hist_config_probe-20261124t.log holds both columns.)

    PYTHONPATH=. python bench/probes/sort_hist_config_probe.py [special]

``special``: the shipped shape (16 warps x 8 keys, 1 program per SM) over fp32 keys counting the keys
whose canonical bits differ (``COUNT_SPECIAL``, as sorts of float keys run it) or not, and over uint32
keys; the count checked against torch (keys with -0.0, a NaN with its sign set and canonical NaNs).
"""
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub.device import radix_sort as RS
from tritoncub._utils import cdiv, num_sms
from _timing import bench_ms

N = 1 << 28


def hist_call(k, hist, warps, items, per_sm, prefetch=True, count_special=False):
    n_tiles = cdiv(N, warps * items * 32)
    grid = (min(n_tiles, num_sms(k.device) * per_sm), 1)
    hist.zero_()
    RS.launch(RS._histogram_gluon_kernel, grid, k, hist, N, n_tiles, 0, 32,
              NUM_PLACES=4, RADIX_BITS=8, DESCENDING=False, WARPS=warps, ITEMS=items,
              SMEM_ROWS=1 << (4 * warps - 1).bit_length(), COUNT_SPECIAL=count_special, PREFETCH=prefetch, num_warps=warps,
              PDL=0)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(5)
    k = torch.randint(0, 1 << 32, (N,), device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
    hist = torch.zeros(4 * 256, device="cuda", dtype=torch.int64)
    hist_call(k, hist, 8, 8, 4)
    ref = hist.clone()
    assert int(ref.sum()) == 4 * N
    for prefetch in (False, True):
        for warps, items, per_sm in [(8, 8, 4), (8, 8, 2), (8, 8, 3), (8, 4, 4), (8, 4, 6), (8, 16, 2), (4, 8, 4),
                                     (4, 8, 8), (16, 8, 2), (16, 4, 2), (16, 4, 3), (16, 2, 2), (16, 8, 1), (16, 16, 1),
                                     (32, 4, 1), (32, 8, 1)]:
            hist_call(k, hist, warps, items, per_sm, prefetch)
            ok = torch.equal(hist, ref)
            t = [bench_ms(lambda: hist_call(k, hist, warps, items, per_sm, prefetch)) * 1e3 for _ in range(2)]
            print(f"prefetch {int(prefetch)} warps {warps:2d} items {items:2d} per SM {per_sm}: ok={ok} "
                  f"{t[0]:.1f} {t[1]:.1f} us", flush=True)


def special():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(5)
    u = torch.randint(0, 1 << 32, (N,), device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
    f = torch.randn(N, device="cuda", generator=g)
    fs = f.clone()
    fs[:1000] = -0.0
    fs[1000:1500] = torch.tensor(-0x400000, dtype=torch.int32).view(torch.float32)   # 0xFFC00000: -qNaN
    fs[1500:1700] = float("nan")                                                          # +qNaN (canonical)
    hist = torch.zeros(4 * 256 + 1, device="cuda", dtype=torch.int64)
    for name, k, cs in (("uint32", u, False), ("fp32", f, False), ("fp32 COUNT_SPECIAL", f, True),
                        ("fp32 with specials, COUNT_SPECIAL", fs, True)):
        hist_call(k, hist, 16, 8, 1, True, cs)
        ok = int(hist[:256].sum()) == N
        if cs:   # (the count before this change took canonical NaNs too: 1700)
            ok = ok and int(hist[-1]) in ((1500, 1700) if k is fs else (0,))
        t = [bench_ms(lambda: hist_call(k, hist, 16, 8, 1, True, cs)) * 1e3 for _ in range(3)]
        print(f"{name}: ok={ok} specials counted {int(hist[-1])}  {t[0]:.1f} {t[1]:.1f} {t[2]:.1f} us", flush=True)


if __name__ == "__main__":
    special() if sys.argv[1:] == ["special"] else main()
