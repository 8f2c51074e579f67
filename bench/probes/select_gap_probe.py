"""Where the op time of a sync-bound selection goes beyond its kernels: do_bench's loop (256 MB L2
flush, start event, the call, end event) replayed under torch.profiler (CPU and GPU), printing one
iteration's timeline in microseconds from the end of the flush: every GPU activity (start, end), the
runtime calls that launch, copy, record or wait, and gaps where the GPU idles.

    PYTHONPATH=. python bench/probes/select_gap_probe.py
"""
import json
import os
import tempfile
import time

import torch

import tritoncub  # noqa: F401
from tritoncub.device import select as S, unique as U

ops = torch.ops.tritoncub
n = 1 << 26
gen = torch.Generator(device="cuda").manual_seed(7)
x = torch.randn(n, device="cuda", generator=gen)
runs = torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", generator=gen, dtype=torch.int32)).values
masks = {d: torch.rand(n, device="cuda", generator=gen) < d for d in (0.01, 0.5)}
cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
RUNTIME = ("Launch", "Memcpy", "EventRecord", "EventSynchronize", "StreamSynchronize", "HostAlloc", "Malloc",
           "EventQuery", "StreamWaitEvent")


def timeline(label, fn, iters=12):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    walls, evs = [], []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            cache.zero_()
            s.record()
            t0 = time.perf_counter()
            fn()
            walls.append((time.perf_counter() - t0) * 1e6)
            e.record()
            torch.cuda.synchronize()
            evs.append(s.elapsed_time(e) * 1e3)
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    events = [ev for ev in json.load(open(path))["traceEvents"] if ev.get("ph") == "X"]
    gpu = sorted((ev for ev in events if ev.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                 key=lambda ev: ev["ts"])
    flushes = [ev for ev in gpu if "fill" in ev["name"].lower() and ev["dur"] > 30]   # (not the ops' small fills)
    f = flushes[-2]                      # the second-to-last iteration (the last one may trail the profiler)
    t0 = f["ts"] + f["dur"]
    t1 = flushes[-1]["ts"]
    print(f"== {label}: start->end event {sorted(evs)[len(evs) // 2]:.1f} us (median of {iters}), host time of "
          f"the call {sorted(walls)[len(walls) // 2]:.1f} us, flush {f['dur']:.1f} us")
    rows = []
    for ev in gpu:
        if t0 - 1 <= ev["ts"] < t1:
            rows.append((ev["ts"] - t0, f"  GPU {ev['ts'] - t0:8.1f} .. {ev['ts'] + ev['dur'] - t0:8.1f}  {ev['name'][:60]}"))
    for ev in events:
        if ev.get("cat") in ("cuda_runtime", "cuda_driver") and any(k in ev["name"] for k in RUNTIME):
            if f["ts"] - 200 <= ev["ts"] < t1:
                rows.append((ev["ts"] - t0, f"  CPU {ev['ts'] - t0:8.1f} .. {ev['ts'] + ev['dur'] - t0:8.1f}  {ev['name'][:60]}"))
    for _, r in sorted(rows):
        print(r)
    busy_end = max(ev["ts"] + ev["dur"] for ev in gpu if t0 - 1 <= ev["ts"] < t1)
    busy = sum(ev["dur"] for ev in gpu if t0 - 1 <= ev["ts"] < t1)
    print(f"  GPU busy {busy:.1f} us of the {busy_end - t0:.1f} us from the flush to the last activity", flush=True)


for d in (0.01, 0.5):
    for two_pass in (False, True):
        S.MASKED_SELECT_TWO_PASS = two_pass
        timeline(f"masked_select {d} {'two_pass' if two_pass else 'single'}",
                 lambda: ops.masked_select(x, masks[d]))
U.HEADS_TWO_PASS = True
timeline("unique_consecutive two_pass", lambda: ops.unique_consecutive(runs))
