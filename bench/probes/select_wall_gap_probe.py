"""Why some compaction rows of ``python -m bench select`` take far longer in ``do_bench`` than their GPU
time (H200, 2^26 items: run-length encode 0.187 ms against 0.110 of GPU time, unique_consecutive 0.266
against 0.106, masked_select 1% 0.190 against 0.069), while forced-config rows of the same ops do not.

For each case: ``do_bench`` (L2 flushed, as the bench), calls queued back to back timed by events
(no flush), the GPU time per call (profiler), host time per call (queued, and after a sync), then one
profiled ``do_bench``-like loop (flush, event, call, event) whose last call is printed as a timeline:
every CUDA runtime call on the host and every kernel, memset and copy on the GPU, in us from the
call's start, so host waits and GPU gaps show. Every result is checked against torch.

    python bench/probes/select_wall_gap_probe.py [OUT_DIR]
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: E402,F401
from _timing import bench_ms, gpu_us, host_idle_us, host_ms  # noqa: E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import run_length_encode as RLE  # noqa: E402

ops = torch.ops.tritoncub
out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(0)
runs = torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32)).values
x = torch.randn(n, device="cuda", generator=g)
m1 = torch.rand(n, device="cuda", generator=g) < 0.01
m50 = torch.rand(n, device="cuda", generator=g) < 0.5

ru, rc = torch.unique_consecutive(runs, return_counts=True)
e = RLE.encode(runs)
k = int(e[2])
assert k == ru.numel() and torch.equal(e[0][:k], ru) and torch.equal(e[1][:k].long(), rc)
assert torch.equal(ops.unique_consecutive(runs)[0], ru)
assert torch.equal(ops.masked_select(x, m1), torch.masked_select(x, m1))
assert torch.equal(ops.nonzero(m50), torch.nonzero(m50))

cases = {
    "rle encode": lambda: RLE.encode(runs),
    "rle encode (policy override, same heads config)": None,
    "unique_consecutive": lambda: ops.unique_consecutive(runs),
    "torch.unique_consecutive": lambda: torch.unique_consecutive(runs),
    "masked_select 1%": lambda: ops.masked_select(x, m1),
    "torch.masked_select 1%": lambda: torch.masked_select(x, m1),
    "nonzero 50%": lambda: ops.nonzero(m50),
    "empty 2x256MB (allocation only)": lambda: (torch.empty(n, dtype=torch.int32, device="cuda"),
                                               torch.empty(n, dtype=torch.int32, device="cuda")),
}
heads_cfg = policy.select("select", torch.device("cuda"), "heads").as_dict()


def rle_override():
    with policy.override("select", heads_cfg, "heads"):
        return RLE.encode(runs)


cases["rle encode (policy override, same heads config)"] = rle_override


def queued_ms(fn, calls=20):
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(calls):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / calls


def timeline(name, fn):
    """One profiled do_bench-like loop; prints the last call's host runtime calls and GPU activity."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for i in range(6):
            cache.zero_()
            with torch.profiler.record_function(f"call{i}"):
                fn()
        torch.cuda.synchronize()
    path = os.path.join(out_dir, "trace-" + "".join(c if c.isalnum() else "_" for c in name) + ".json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        evs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    call = [e for e in evs if e.get("name") == "call5" and e.get("cat") == "user_annotation"][0]
    t0, t1 = call["ts"], call["ts"] + call["dur"]
    rt = [e for e in evs if e.get("cat") in ("cuda_runtime", "cuda_driver") and t0 <= e["ts"] <= t1]
    corr = {e["args"].get("correlation") for e in rt}
    gpu = [e for e in evs if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")
           and e["args"].get("correlation") in corr]
    print(f"  timeline of one call (host span {call['dur']:.1f} us; us from its start)")
    for e in sorted(rt + gpu, key=lambda e: e["ts"]):
        side = "host" if e.get("cat") in ("cuda_runtime", "cuda_driver") else "gpu "
        print(f"    {side} {e['ts'] - t0:8.1f} +{e['dur']:7.1f}  {e['name'][:70]}")
    if gpu:
        end = max(e["ts"] + e["dur"] for e in gpu)
        busy = sum(e["dur"] for e in gpu)
        print(f"  gpu: first start {min(e['ts'] for e in gpu) - t0:.1f} us, last end {end - t0:.1f} us, "
              f"busy {busy:.1f} us")


for name, fn in cases.items():
    fn()
    torch.cuda.synchronize()
    b = [bench_ms(fn) for _ in range(2)]
    print(f"{name}: do_bench {b[0]:.4f} {b[1]:.4f} ms, queued {queued_ms(fn):.4f} ms, gpu {gpu_us(fn):.1f} us, "
          f"host queued {host_ms(fn) * 1e3:.1f} us, host after sync {host_idle_us(fn):.1f} us", flush=True)
    timeline(name, fn)
    time.sleep(0.1)
print("device", torch.cuda.get_device_name(), "torch", torch.__version__)
