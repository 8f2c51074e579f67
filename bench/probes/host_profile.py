"""Where the host time of a large operator call goes (cProfile over repeated calls, sorted by own
time): when a call's wall time is well above its kernels' GPU time, this says which Python work
the GPU waits for.

    PYTHONPATH=. python bench/probes/host_profile.py [case-substring ...]
"""
import cProfile
import io
import pstats
import sys
import time

import torch

import tritoncub  # noqa: F401


def cases():
    ops = torch.ops.tritoncub
    g = torch.Generator(device="cuda").manual_seed(0)
    n = 1 << 26
    x = torch.randn(n, device="cuda", generator=g)
    m = torch.rand(n, device="cuda", generator=g) < 0.5
    u = torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32)
    s = torch.sort(u).values
    m1 = torch.rand(n, device="cuda", generator=g) < 0.01
    r = torch.randn(16, 1 << 20, device="cuda", generator=g)
    r2 = torch.randn(4096, 1024, device="cuda", generator=g)
    x20 = torch.randn(1 << 20, device="cuda", generator=g)
    return {
        "topk k=100": lambda: ops.topk(x, 100),
        "topk k=10000": lambda: ops.topk(x, 10000),
        "topk rows 16x2^20 k=8": lambda: ops.topk(r, 8),
        "topk rows 16x2^20 k=1000": lambda: ops.topk(r, 1000),
        "sort rows 4096x1024": lambda: ops.sort(r2),
        "sort 2^20": lambda: ops.sort(x20),
        "masked_select 50%": lambda: ops.masked_select(x, m),
        "masked_select 1%": lambda: ops.masked_select(x, m1),
        "unique_consecutive": lambda: ops.unique_consecutive(s),
        "unique": lambda: ops.unique(u),
    }


def main(filters):
    for name, fn in cases().items():
        if filters and not any(f in name for f in filters):
            continue
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        reps = 30
        t0 = time.perf_counter()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        pr.disable()
        wall = (time.perf_counter() - t0) / reps * 1e3
        st = io.StringIO()
        pstats.Stats(pr, stream=st).sort_stats("tottime").print_stats(22)
        print(f"\n==== {name}: {wall:.3f} ms/call under the profiler ({reps} calls) ====")
        print(st.getvalue(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
