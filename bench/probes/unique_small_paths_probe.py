"""unique of small inputs by each path (dense range marks, hash table, sort + run heads): host time of
one call with the GPU idle (median of 200), GPU time per call, and do_bench, against torch.unique;
every path's result checked against torch first.

    PYTHONPATH=. python bench/probes/unique_small_paths_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us, host_idle_us  # noqa: E402
from tritoncub.device import unique as U  # noqa: E402

ops = torch.ops.tritoncub


print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for n in (1000, 4096, 16384, 65536, 1 << 18, 1 << 20, 1 << 22):
    for hi in (100, n):
        x = torch.randint(0, hi, (n,), device="cuda", dtype=torch.int32)
        for ri, rc in ((False, False), (True, True)):
            ref = torch.unique(x, return_inverse=True, return_counts=True)
            paths = {"dense": lambda: U._dense_path(x, ri, rc), "hash": lambda: U._hash_path(x, ri, rc),
                     "sort": lambda: U._sort_path(x, ri, rc), "op": lambda: ops.unique(x, True, ri, rc),
                     "torch": lambda: torch.unique(x, return_inverse=ri, return_counts=rc)}
            line = []
            for name, fn in paths.items():
                r = fn()
                if r is None:
                    line.append(f"{name} -")
                    continue
                if name != "torch":
                    assert torch.equal(r[0], ref[0]), name
                    if rc:
                        assert torch.equal(r[2], ref[2]), name
                    if ri:
                        assert torch.equal(r[1].view(-1), ref[1].view(-1)), name
                line.append(f"{name} host {host_idle_us(fn, 200):6.1f} gpu {gpu_us(fn):6.1f} bench {bench_ms(fn) * 1e3:6.1f}")
            print(f"n={n:8d} range={hi:8d} inv+counts={ri!s:5s} | " + " | ".join(line), flush=True)
