"""The radix select's compaction over every key (``_rs_compact_kernel``, the largest kernel of
topk k=10000 over 2^26 fp32): its tile, warps per program and programs per SM. Small programs of one
or two warps make the per-tile reductions warp-local (no block barrier per tile). GPU time of the
compaction and of the whole call (torch.profiler), do_bench of the call, torch.topk in the same run;
every result checked against torch.topk.

    PYTHONPATH=. python bench/probes/topk_compact_probe.py
"""
import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import topk as T
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
x = torch.randn(1 << 26, device="cuda", generator=g)
shipped = policy.select("segmented_sort", x.device, "large")
base = {**shipped.values, "num_warps": shipped.num_warps, "num_stages": shipped.num_stages}
for k in (100, 10000):
    ref = torch.topk(x, k).values
    print(f"k={k}: torch {bench_ms(lambda: torch.topk(x, k)):.4f} ms", flush=True)
    for block, warps, per_sm in ((2048, 8, 8), (2048, 4, 16), (1024, 4, 16), (1024, 2, 32), (512, 1, 32),
                                 (1024, 1, 32), (2048, 2, 16), (4096, 4, 8)):
        T._RS_COMPACT_BLOCK, T._RS_COMPACT_WARPS, T._RS_COMPACT_PER_SM = block, warps, per_sm
        v, i = ops.topk(x, k, -1, True, True)
        ok = torch.equal(v, ref) and torch.equal(x[i], v)
        ks = kernel_breakdown(lambda: ops.topk(x, k, -1, True, True))
        comp = sum(us for name, us, _ in ks if "compact" in name)
        total = sum(us for _, us, _ in ks)
        print(f"  compact block={block} warps={warps} per_sm={per_sm}: compaction {comp:.1f} us, kernels {total:.1f} us, "
              f"call {bench_ms(lambda: ops.topk(x, k, -1, True, True)):.4f} ms {'ok' if ok else 'WRONG'}", flush=True)
    # the sort of the selected k (k > the tile sort's MAX_BLOCK): device radix sort against merge passes
    T._RS_COMPACT_BLOCK, T._RS_COMPACT_WARPS, T._RS_COMPACT_PER_SM = 512, 1, 32
    for path in ("radix", "merge"):
        with policy.override("segmented_sort", {**base, "LONG_PATH": path}, bucket="large"):
            v, i = ops.topk(x, k, -1, True, True)
            ok = torch.equal(v, ref) and torch.equal(x[i], v)
            ks = kernel_breakdown(lambda: ops.topk(x, k, -1, True, True))
            print(f"  sort of the selected by {path}: kernels {sum(us for _, us, _ in ks):.1f} us, call "
                  f"{bench_ms(lambda: ops.topk(x, k, -1, True, True)):.4f} ms {'ok' if ok else 'WRONG'}; "
                  + ", ".join(f"{n[:28]} x{c} {us:.1f}us" for n, us, c in ks), flush=True)
