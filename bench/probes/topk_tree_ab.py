"""GPU time of top-k's long-row cases, for an A/B of two source trees in separate processes (the
tritoncub on PYTHONPATH; the old tree e.g. from ``git archive <commit> tritoncub | tar -x -C old``):

    PYTHONPATH=old python bench/probes/topk_tree_ab.py old; PYTHONPATH=. python bench/probes/topk_tree_ab.py new
"""
import sys

import torch

import tritoncub
sys.path.insert(0, "bench/probes")
from _timing import gpu_us, bench_ms
ops = torch.ops.tritoncub
print(sys.argv[1], tritoncub.__file__, flush=True)
g = torch.Generator(device="cuda").manual_seed(0)
for shape, k, mk in (((1 << 26,), 100, torch.randn), ((1 << 26,), 10000, torch.randn), ((16, 1 << 20), 1000, torch.randn),
                     ((1 << 26,), 10000, torch.rand), ((16, 1 << 20), 1000, torch.rand)):
    x = mk(shape, device="cuda", generator=g)
    f = lambda: ops.topk(x, k, -1, True, True)
    f(); torch.cuda.synchronize()
    print(f"{sys.argv[1]} {mk.__name__} {shape} k={k}: gpu {gpu_us(f):.1f} us, wall {bench_ms(f)*1000:.1f} us", flush=True)
