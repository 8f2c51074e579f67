"""Kernel breakdown (torch.profiler) of top-k on long rows of torch.randn keys, the tritoncub on
PYTHONPATH (see topk_tree_ab.py):

    PYTHONPATH=. python bench/probes/topk_tree_kernels.py new
"""
import sys

import torch

import tritoncub
sys.path.insert(0, "bench/probes")
from _timing import kernel_breakdown
ops = torch.ops.tritoncub
print(sys.argv[1], tritoncub.__file__, flush=True)
g = torch.Generator(device="cuda").manual_seed(0)
for shape, k in (((1 << 26,), 100), ((16, 1 << 20), 1000)):
    x = torch.randn(shape, device="cuda", generator=g)
    f = lambda: ops.topk(x, k, -1, True, True)
    f(); torch.cuda.synchronize()
    print(f"## {sys.argv[1]} {shape} k={k}", flush=True)
    for kname, us, count in sorted(kernel_breakdown(f), key=lambda r: -r[1]):
        print(f"   {us:9.1f} us  x{count:<3} {kname[:100]}", flush=True)
