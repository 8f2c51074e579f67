"""Where the host time of a 2^20-key sort with indices goes: the op, the Python function, the replay
of its remembered launches, its four allocations, torch.sort (median host time of one call with the
GPU idle), then a cProfile of the op.

    PYTHONPATH=. python bench/probes/small_sort_host_probe.py
"""
import time, cProfile, pstats, io
import torch
import tritoncub  # noqa: F401 (registers the ops)
from tritoncub.device import radix_sort as rs

def host1(fn, reps=200):
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e6)
    ts.sort(); return ts[len(ts) // 2]

ops = torch.ops.tritoncub
x = torch.randn(1 << 20, device="cuda")
key = None
for _ in range(3):
    ops.sort(x, -1, False, False)
hit = list(rs._SORT_REPLAYS.values())[0]
cases = [("op sort", lambda: ops.sort(x, -1, False, False)),
         ("rs.sort", lambda: rs.sort(x)),
         ("_replay_sort", lambda: rs._replay_sort(x, hit)),
         ("4 allocs", lambda: (torch.empty_like(x), torch.empty(1 << 20, device="cuda", dtype=torch.int64),
                               torch.empty(1 << 20, device="cuda", dtype=torch.uint64), torch.zeros(2048, device="cuda", dtype=torch.int64))),
         ("torch.sort", lambda: torch.sort(x)),
         ("torch.empty", lambda: torch.empty(10, device="cuda"))]
for name, fn in cases:
    print(f"{name:14} host {host1(fn):7.1f} us (median, queue empty)", flush=True)
print("launches in replay:", len(hit[2]))
pr = cProfile.Profile()
pr.enable()
for _ in range(300):
    ops.sort(x, -1, False, False)
    torch.cuda.synchronize()
pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue()[:6000])
