"""sort (values + indices) of 2^20 fp32 and int32 keys through the torch operator, as the bench calls
it (4 input copies in rotation), timed three times interleaved with torch.sort: how much the
host-bound time of a call varies between runs and dtypes.

    PYTHONPATH=. python bench/probes/sort_small_repeat_probe.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from _timing import bench_ms, kernel_breakdown  # noqa: E402

import tritoncub  # noqa: E402,F401

n = 1 << 20
g = torch.Generator(device="cuda").manual_seed(0)
inputs = {"float32": [torch.randn(n, device="cuda", generator=g) for _ in range(4)],
          "int32": [torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", generator=g, dtype=torch.int32)
                    for _ in range(4)]}


def rotating(xs, fn):
    it = [0]

    def call():
        it[0] += 1
        return fn(xs[it[0] % len(xs)])
    return call


print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for rnd in range(3):
    for name, xs in inputs.items():
        ours = rotating(xs, lambda t: torch.ops.tritoncub.sort(t))
        theirs = rotating(xs, lambda t: torch.sort(t))
        gpu = sum(us for _, us, _ in kernel_breakdown(ours))
        print(f"round {rnd} {name} 2^20: tritoncub {bench_ms(ours) * 1e3:.1f} us (GPU {gpu:.1f} us), "
              f"torch {bench_ms(theirs) * 1e3:.1f} us", flush=True)
