"""A stall seen by unique_hash_timeline_probe.py: the hash path's sort of 65536 distinct keys (keys only,
the onesweep sort) took ~416 ms per call. Times each call alone (host clock around the call and a sync):
the sort of 65535/65536/65537 random int32 keys, and unique's hash path over 65536 wide values.

    PYTHONPATH=. python bench/probes/sort_keys_stall_probe.py
"""
import time

import torch

from tritoncub.device import radix_sort
from tritoncub.device import unique as U


def timed(fn, reps=4):
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e3)
    return " ".join(f"{v:.3f}" for v in out)


print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for k in (65535, 65536, 65537, 1 << 20):
    keys = torch.randint(-(1 << 31), (1 << 31) - 1, (k,), device="cuda", dtype=torch.int32)
    ok = torch.equal(radix_sort.sort_keys(keys), torch.sort(keys).values)
    print(f"sort_keys int32 k={k}: ok={ok} ms per call {timed(lambda: radix_sort.sort_keys(keys))}", flush=True)
for log_n in (24, 26):
    pool = torch.randint(-(1 << 31), (1 << 31) - 1, (65536,), device="cuda", dtype=torch.int32)
    x = pool[torch.randint(0, 65536, (1 << log_n,), device="cuda")]
    found = torch.unique(x)
    print(f"hash path 2^{log_n} over {found.numel()} distinct: ms per call {timed(lambda: U._hash_path(x, False, False))}",
          flush=True)
    f2 = found[torch.randperm(found.numel(), device="cuda")]
    print(f"  sort_keys of those {found.numel()} values shuffled: {timed(lambda: radix_sort.sort_keys(f2))}", flush=True)
