"""Rows and segments of 512-1024 64-bit keys in the in-register tile sort: 16 warps a program
(``segmented_sort.WIDE_KEYS_WARPS``) against the bucket policy's warps, in one process, for every
caller of the tile sort that takes such rows (the sort operator, a segmented sort, top-k); every result
checked against torch first; GPU time per call (profiler), torch's alongside.

    PYTHONPATH=. python bench/probes/sort64_medium_rows_ab.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
from _switches import with_segmented_sort_value  # noqa: E402
import tritoncub  # noqa: E402,F401
from tritoncub.device import segmented_sort as SS  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(1)
SHIPPED = dict(SS.WIDE_KEYS_WARPS)
POLICY_WARPS = {b: w for b, w in SHIPPED.items() if b not in (512, 1024)}


def with_warps(table, fn):
    return with_segmented_sort_value("WIDE_KEYS_WARPS", table, fn)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "shipped", SHIPPED, flush=True)
    for dtype in (torch.int64, torch.float64):
        for shape in ((1, 600), (1, 1024), (64, 1000), (1024, 1024), (4096, 512), (16384, 700)):
            x = (torch.randn(shape, device=d, generator=g, dtype=dtype) if dtype.is_floating_point else
                 torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g, dtype=dtype))
            k = min(64, shape[1] // 4)
            offs = torch.arange(shape[0] + 1, device=d) * shape[1]
            ref_s = torch.sort(x, stable=True)
            ref_t = torch.topk(x, k)[0]
            calls = {"sort": (lambda: ops.sort(x), lambda r: torch.equal(r[0], ref_s[0]) and torch.equal(r[1], ref_s[1]),
                              lambda: torch.sort(x, stable=True)),
                     "segmented_sort": (lambda: ops.segmented_sort(x.view(-1), offs),
                                        lambda r: torch.equal(r, ref_s[0].view(-1)), None),
                     f"topk k={k}": (lambda: ops.topk(x, k), lambda r: torch.equal(r[0], ref_t),
                                     lambda: torch.topk(x, k))}
            for name, (fn, ok, theirs) in calls.items():
                line = f"{str(dtype)[6:]:8s} {str(shape):13s} {name:14s}"
                for label, table in (("policy warps", POLICY_WARPS), ("16 warps", SHIPPED)):
                    good = with_warps(table, lambda: ok(fn()))
                    line += f" | {label} {with_warps(table, lambda: gpu_us(fn)):7.1f}{'' if good else ' DIFF'}"
                if theirs is not None:
                    line += f" | torch {gpu_us(theirs):7.1f}"
                print(line + " us", flush=True)


if __name__ == "__main__":
    main()
