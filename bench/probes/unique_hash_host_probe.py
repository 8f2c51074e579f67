"""Where unique's hash path spends host time: its do_bench time was 0.2-0.9 ms above its GPU time
(``unique_hash_vs_sort_probe.py``). Per case: host time of one call with the GPU idle, calls queued
back to back, GPU time, do_bench; then cProfile over the calls, by own time and cumulative.

    PYTHONPATH=. python bench/probes/unique_hash_host_probe.py [--profile]
"""
import cProfile
import pstats
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us, host_idle_us, host_ms  # noqa: E402
from tritoncub.device import radix_sort  # noqa: E402
from tritoncub.device import unique as U  # noqa: E402

print(torch.cuda.get_device_name(), torch.__version__, flush=True)
profile = "--profile" in sys.argv
cases = {}
for log_n, d in ((20, 100), (20, 4096), (23, 4096)):
    pool = torch.randint(-(1 << 31), (1 << 31) - 1, (d,), device="cuda", dtype=torch.int32)
    x = pool[torch.randint(0, d, (1 << log_n,), device="cuda")]
    for mode, (ri, rc) in {"plain": (False, False), "counts": (False, True), "inv+counts": (True, True)}.items():
        cases[f"hash 2^{log_n} D={d} {mode}"] = (lambda x=x, ri=ri, rc=rc: U._hash_path(x, ri, rc))
    cases[f"torch 2^{log_n} D={d} inv+counts"] = (lambda x=x: torch.unique(x, return_inverse=True, return_counts=True))
    found = torch.unique(x).flip(0).contiguous()
    cases[f"sort_keys of {d}"] = (lambda f=found: radix_sort.sort_keys(f))
    cases[f"sort_pairs of {d}"] = (lambda f=found: radix_sort.sort_pairs(f, f.to(torch.int64)))
for name, fn in cases.items():
    print(f"{name:<36} host idle {host_idle_us(fn, 50):7.1f} us  queued {host_ms(fn, 30) * 1e3:7.1f} us  "
          f"gpu {gpu_us(fn, 3):7.1f} us  bench {bench_ms(fn, 50) * 1e3:7.1f} us", flush=True)
if profile:
    for name in ("hash 2^20 D=4096 plain", "hash 2^20 D=4096 counts"):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(50):
            cases[name]()
        torch.cuda.synchronize()
        prof.disable()
        print(f"== {name}: cProfile, 50 calls")
        pstats.Stats(prof).sort_stats("tottime").print_stats(22)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
