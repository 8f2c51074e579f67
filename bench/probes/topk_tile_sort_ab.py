"""A/B of the tile sort inside topk (the sort of the radix select's k items): the block radix sort against
the bitonic tile sort (``block_radix_available`` patched off), whole-op do_bench times and GPU kernel times
(torch.profiler), torch.topk in the same run. Showed the whole-op topk times of the radix-select path to be
host-bound and noisy (the same config 0.90 and 1.18 ms with 0.20 ms of GPU time).

    PYTHONPATH=. python bench/probes/topk_tile_sort_ab.py
"""
import torch, sys
sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
from _timing import bench_ms, kernel_breakdown
from tritoncub.device import segmented_sort as ss
real = ss.block_radix_available
import tritoncub  # noqa
g = torch.Generator(device="cuda").manual_seed(0)
cases = [((16, 1 << 20), 1000), ((1 << 26,), 100), ((1 << 26,), 10000), ((65536, 128), 8)]
for shape, k in cases:
    x = torch.randn(*shape, device="cuda", generator=g)
    tt = bench_ms(lambda: torch.topk(x, k))
    out = [f"{shape} k={k}: torch {tt:.4f}"]
    for ts in ("bitonic", "radix", "bitonic", "radix"):
        ss.block_radix_available = real if ts == "radix" else (lambda d: False)
        if True:
            v, i = torch.ops.tritoncub.topk(x, k, -1, True, True)
            rv, ri = torch.topk(x, k)
            assert torch.equal(v, rv)
            t = bench_ms(lambda: torch.ops.tritoncub.topk(x, k, -1, True, True))
            kb = kernel_breakdown(lambda: torch.ops.tritoncub.topk(x, k, -1, True, True))
        out.append(f"{ts} {t:.4f} (gpu {sum(u for _, u, _ in kb):.1f} us: " + ", ".join(f"{n[:24]} {u:.1f}" for n, u, _ in kb) + ")")
    print(" | ".join(out), flush=True)
