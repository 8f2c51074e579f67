"""Sort with indices (torch.sort API) of 2^20 and 2^22 keys: host time per call (back-to-back calls),
GPU time per kernel (torch.profiler) and do_bench, ours against torch.sort in the same run.

    PYTHONPATH=. python bench/probes/small_sort_kernels_probe.py
"""
import sys
sys.path.insert(0, "bench/probes")
import torch, triton
import tritoncub  # noqa: F401 (registers the ops)
from tritoncub.device import radix_sort as rs
from reduce_overhead import host_us
from torch.profiler import profile, ProfilerActivity

def kern(fn, reps=50):
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    out = []
    tot = 0
    for e in prof.key_averages():
        if e.device_time_total > 0:
            tot += e.device_time_total
            out.append(f"{e.key[:28]}:{e.device_time_total/reps:.1f}x{e.count//reps}")
    return tot / reps, out

ops = torch.ops.tritoncub
for n in (1 << 20, 1 << 22):
    for dt in (torch.float32, torch.int32):
        x = torch.randn(n, device="cuda").to(dt) if dt.is_floating_point else torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", dtype=dt)
        for name, fn in (("ours", lambda: ops.sort(x, -1, False, True)), ("torch", lambda: torch.sort(x, stable=True))):
            h = host_us(fn)
            k, names = kern(fn)
            b = triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median") * 1e3
            print(f"n=2^{n.bit_length()-1} {str(dt)[6:]:8} {name:5} host {h:6.1f} gpu {k:6.1f} do_bench {b:6.1f} us  replays={len(rs._SORT_REPLAYS)} {' '.join(names)}", flush=True)
