"""Kernel breakdown (GPU time per call of each kernel, profiler) of a few small calls the operator sweep
ranked slowest against torch (bench/results/logs/torch_sweep_probe-full-h200-20261202.log): histc of 65536
and 2^20 samples into 16 to 65536 bins, sort of 4096 and 65536 int64 keys, diff of 65536 and 2^20 items;
torch's kernels alongside. Times only: results are checked by the sweep and the tests.

    PYTHONPATH=. python bench/probes/small_ops_breakdown_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import kernel_breakdown  # noqa: E402
import tritoncub  # noqa: E402,F401

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
for n, bins in ((65536, 16), (65536, 65536), (1 << 20, 65536), (65536, 1000)):
    x = torch.rand(n, device="cuda", generator=g)
    print("histc", n, bins, "ours", [(k[:50], round(u, 2), c) for k, u, c in kernel_breakdown(lambda: ops.histc(x, bins, 0, 1))])
    print("   torch", [(k[:50], round(u, 2), c) for k, u, c in kernel_breakdown(lambda: torch.histc(x, bins, 0, 1))], flush=True)
for n in (4096, 65536):
    x = torch.randint(-2**62, 2**62, (n,), device="cuda", generator=g)
    print("sort int64", n, "ours", [(k[:50], round(u, 2), c) for k, u, c in kernel_breakdown(lambda: ops.sort(x))])
    print("   torch", [(k[:50], round(u, 2), c) for k, u, c in kernel_breakdown(lambda: torch.sort(x, stable=True))], flush=True)
for n in (65536, 1 << 20):
    x = torch.randn(n, device="cuda", generator=g)
    print("diff", n, "ours", [(k[:50], round(u, 2), c) for k, u, c in kernel_breakdown(lambda: ops.diff(x))])
    print("   torch", [(k[:50], round(u, 2), c) for k, u, c in kernel_breakdown(lambda: torch.diff(x))], flush=True)
