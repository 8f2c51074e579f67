"""Where a top-k of one long row with many keys equal to the k-th one spends its GPU time: kernel
breakdown (torch.profiler) of topk(1 x 2^26 fp32, k=10000) on integer-valued keys (0..999: ~67k items
tie with the k-th) against uniform random keys, torch.topk alongside.

    PYTHONPATH=. python bench/probes/topk_ties_breakdown.py
"""
import torch

import tritoncub  # noqa: F401
from _timing import bench_ms, kernel_breakdown

ops = torch.ops.tritoncub
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
for name, x in (("ties (0..999)", torch.randint(0, 1000, (1, 1 << 26), device="cuda").float()),
                ("uniform", torch.rand(1, 1 << 26, device="cuda"))):
    k = 10000
    v, i = ops.topk(x, k, -1, True, True)
    assert torch.equal(v, torch.topk(x, k).values)
    print(f"## {name}: ours {bench_ms(lambda: ops.topk(x, k, -1, True, True)):.4f} ms, torch "
          f"{bench_ms(lambda: torch.topk(x, k)):.4f} ms", flush=True)
    for kname, us, count in sorted(kernel_breakdown(lambda: ops.topk(x, k, -1, True, True)), key=lambda r: -r[1]):
        print(f"   {us:9.1f} us  x{count:<3} {kname[:90]}", flush=True)
