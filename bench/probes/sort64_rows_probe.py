"""Rows of 64-bit keys up to the tile sort's MAX_BLOCK (4096): the in-register tile sort (one program
per few rows) against the onesweep device sort (one row: ``_sort_into``; more rows: ``_sort_lastdim``,
segments) and torch.sort, GPU time per call (profiler). The sweep found one row of 4096 int64 keys at
191.6 us against torch's 38.6 (``torch_sweep_probe-full-h200-20261202.log``). Then, for the next
slow spots of that sweep, each call's kernels. Its first run (``sort64_rows_probe-h200-20261202.log``) hit
its 400 s limit at float64 (4, 4096), the tile sort's compiles and slow calls: the kernel lists never printed.
Since ``segmented_sort.WIDE_KEYS_MAX_BLOCK`` (set from it) and ``WIDE_KEYS_WARPS`` (set from
``sort64_tile_warps_probe.py``), the "tile" column is ``sort_rows`` as routed: the tile sort with 32 warps
for rows of 1025-2048 keys, the device radix sort past 2048.

    PYTHONPATH=. python bench/probes/sort64_rows_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us, kernel_breakdown  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub.device import radix_sort as RS, segmented_sort as SS  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(0)


def keys(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, device=d, generator=g, dtype=dtype)
    return torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g, dtype=dtype)


def onesweep(x):
    if x.shape[0] == 1:
        return RS._sort_into(x.view(-1), None, False, 0, 64, gen_indices=True)
    return RS._sort_lastdim(x, False)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    for dtype in (torch.int64, torch.float64):
        for shape in ((1, 512), (1, 1024), (1, 2048), (1, 3000), (1, 4096), (4, 4096), (16, 4096), (132, 4096),
                      (1024, 4096), (16, 2048), (1024, 1024)):
            x = keys(shape, dtype)
            ref = torch.sort(x, stable=True)
            line = f"{str(dtype):14s} {str(shape):14s}"
            for name, fn in (("torch", lambda: torch.sort(x, stable=True)), ("tile", lambda: SS.sort_rows(x)),
                             ("onesweep", lambda: onesweep(x))):
                try:
                    v, i = fn()
                    ok = torch.equal(v.view(ref[0].shape), ref[0]) and torch.equal(i.view(ref[1].shape), ref[1])
                    line += f" | {name} {gpu_us(fn):8.1f} us{'' if ok else ' DIFF'}"
                except Exception as e:   # (reported, the probe goes on)
                    line += f" | {name} ERROR {type(e).__name__}: {str(e)[:60]}"
            print(line, flush=True)
    x = keys((1, 4096), torch.int64)
    for name, fn in (("tile (1, 4096) int64", lambda: SS.sort_rows(x)), ("onesweep (1, 4096) int64", lambda: onesweep(x))):
        print(f"== {name}")
        for k, us, c in kernel_breakdown(fn):
            print(f"   {us:8.1f} us x{c}  {k[:110]}")
    # the next slow spots of the sweep
    u = torch.randint(0, 100, (4096,), device=d, generator=g, dtype=torch.int32)
    h = torch.rand(65536, device=d, generator=g)
    c = torch.randn(65536, device=d, generator=g) * 1e-6 + 1
    s = torch.randn(16384, device=d, generator=g)
    a = torch.randn(16, 1 << 20, device=d, generator=g)
    for name, fn in (("unique int32 4096 <100", lambda: ops.unique(u)), ("torch.unique", lambda: torch.unique(u)),
                     ("histc 65536 bins=65536", lambda: ops.histc(h, 65536, 0, 1)),
                     ("torch.histc", lambda: torch.histc(h, 65536, 0, 1)),
                     ("histc 65536 bins=16", lambda: ops.histc(h, 16, 0, 1)),
                     ("torch.histc 16", lambda: torch.histc(h, 16, 0, 1)),
                     ("cumprod 65536", lambda: ops.cumprod(c, 0)), ("torch.cumprod", lambda: torch.cumprod(c, 0)),
                     ("cumsum 16384", lambda: ops.cumsum(s, 0)), ("torch.cumsum", lambda: torch.cumsum(s, 0)),
                     ("argmax (16, 2^20) dim 1", lambda: ops.argmax(a, 1)), ("torch.argmax", lambda: torch.argmax(a, 1))):
        print(f"== {name}")
        for k, us, c_ in kernel_breakdown(fn):
            print(f"   {us:8.1f} us x{c_}  {k[:110]}")


if __name__ == "__main__":
    main()
