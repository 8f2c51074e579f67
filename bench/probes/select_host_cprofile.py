"""Host time of masked_select (two-pass form), unique_consecutive and run-length encode, by function: cProfile over many
calls at a size whose GPU time is small (2^20 items), so the host is the bottleneck; plus the host
time per call without the profiler.

    PYTHONPATH=. python bench/probes/select_host_cprofile.py
"""
import cProfile
import pstats
import time

import torch

import tritoncub  # noqa: F401
from tritoncub.device import run_length_encode as RLE

ops = torch.ops.tritoncub
n = 1 << 20
x = torch.randn(n, device="cuda")
m = torch.rand(n, device="cuda") < 0.01
runs = torch.sort(torch.randint(0, 1 << 14, (n,), device="cuda", dtype=torch.int32)).values
cases = {"masked_select 1%": lambda: ops.masked_select(x, m), "torch.masked_select 1%": lambda: torch.masked_select(x, m),
         "unique_consecutive": lambda: ops.unique_consecutive(runs),
         "run_length_encode": lambda: RLE.encode(runs),
         "torch.unique_consecutive": lambda: torch.unique_consecutive(runs)}
for name, fn in cases.items():
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(500):
        fn()
    torch.cuda.synchronize()
    print(f"{name:28s} {(time.perf_counter() - t) / 500 * 1e6:7.1f} us per call (host-bound loop)", flush=True)
for name in ("masked_select 1%", "unique_consecutive", "run_length_encode"):
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(500):
        cases[name]()
    torch.cuda.synchronize()
    prof.disable()
    print(f"== {name}: cProfile, 500 calls, by own time")
    pstats.Stats(prof).sort_stats("tottime").print_stats(28)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(24)
