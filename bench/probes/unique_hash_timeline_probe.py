"""Where the hash path's op time goes beyond its GPU time at 2^26 items (the bench's wide row): CUDA
events and host clocks at the call's start, when the distinct values' sort starts (right after the host
sync) and at the end, per call; the GPU idles between the sync and the first post-sync launch.

    PYTHONPATH=. python bench/probes/unique_hash_timeline_probe.py
"""
import time

import torch

from tritoncub.device import unique as U

print(torch.cuda.get_device_name(), torch.__version__, flush=True)
real_sort_found = U._sort_found
marks = {}


def timed_sort_found(*a, **kw):
    marks["sort_host"] = time.perf_counter()
    marks["sort_ev"].record()
    out = real_sort_found(*a, **kw)
    marks["sort_done_host"] = time.perf_counter()
    return out


U._sort_found = timed_sort_found
for distinct in (1 << 20, 65536, 100):
    pool = torch.randint(-(1 << 31), (1 << 31) - 1, (distinct,), device="cuda", dtype=torch.int32)
    x = pool[torch.randint(0, distinct, (1 << 26,), device="cuda")]
    for ri, rc in ((False, False), (True, True)):
        rows = []
        for rep in range(8):
            e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            marks["sort_ev"] = e1
            torch.cuda.synchronize()
            h0 = time.perf_counter()
            e0.record()
            res = U._hash_path(x, ri, rc)
            e2.record()
            h2 = time.perf_counter()
            torch.cuda.synchronize()
            ok = torch.equal(res[0], torch.unique(x))
            print(f"    rep {rep}: sort host {(marks['sort_done_host'] - marks['sort_host']) * 1e3:.3f} ms, ok={ok}",
                  flush=True)
            rows.append((e0.elapsed_time(e1), e1.elapsed_time(e2), (marks["sort_host"] - h0) * 1e3,
                         (marks["sort_done_host"] - marks["sort_host"]) * 1e3, (h2 - marks["sort_done_host"]) * 1e3))
        # (the median of each column on its own: the first call, which compiles, lands in no median)
        r = [sorted(col)[len(col) // 2] for col in zip(*rows)]
        print(f"2^26 distinct={distinct:8d} inv+counts={ri!s:5s} | GPU start->sync {r[0]:.3f} ms, sync->end {r[1]:.3f} ms"
              f" | host to the sync's end {r[2]:.3f} ms, the sort's host {r[3]:.3f}, after it {r[4]:.3f}", flush=True)
