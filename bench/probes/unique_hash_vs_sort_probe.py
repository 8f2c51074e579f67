"""unique of wide integer values (a range too wide for the dense path): the hash path against the sort
path (onesweep sort + run heads), by input size, distinct values and outputs, to place the size below
which unique sorts instead of hashing (``HASH_MIN_N`` in ``tritoncub/device/unique.py``). Every path's
result is checked against torch.unique first; then GPU time per call (torch.profiler) and do_bench of
each path and of torch.unique.

    PYTHONPATH=. python bench/probes/unique_hash_vs_sort_probe.py [--sizes 21,22,...]
"""
import argparse
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us  # noqa: E402
from tritoncub.device import unique as U  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="20,21,22,23,24,25,26", help="log2 of the item counts")
ap.add_argument("--distinct", default="100,4096,65536,1048576,0", help="distinct values (0: uniform int32)")
args = ap.parse_args()

print(torch.cuda.get_device_name(), torch.__version__, flush=True)
modes = {"plain": (False, False), "counts": (False, True), "inv+counts": (True, True)}
for log_n in (int(s) for s in args.sizes.split(",")):
    n = 1 << log_n
    for d in (int(s) for s in args.distinct.split(",")):
        if d:
            pool = torch.randint(-(1 << 31), (1 << 31) - 1, (d,), device="cuda", dtype=torch.int32)
            x = pool[torch.randint(0, d, (n,), device="cuda")]
        else:
            x = torch.randint(-(1 << 31), (1 << 31) - 1, (n,), device="cuda", dtype=torch.int32)
        ref = torch.unique(x, return_inverse=True, return_counts=True)
        for mode, (ri, rc) in modes.items():
            paths = {"hash": lambda: U._hash_path(x, ri, rc), "sort": lambda: U._sort_path(x, ri, rc),
                     "torch": lambda: torch.unique(x, return_inverse=ri, return_counts=rc)}
            line = []
            for name, fn in paths.items():
                r = fn()
                if r is None:
                    line.append(f"{name} overflow")
                    continue
                if name != "torch":
                    assert torch.equal(r[0], ref[0]), (name, log_n, d, mode)
                    if rc:
                        assert torch.equal(r[2], ref[2]), (name, log_n, d, mode)
                    if ri:
                        assert torch.equal(r[1].view(-1), ref[1].view(-1)), (name, log_n, d, mode)
                line.append(f"{name} gpu {gpu_us(fn, reps=3):8.1f} bench {bench_ms(fn, rep=60) * 1e3:8.1f}")
            print(f"n=2^{log_n} distinct={d if d else 'uniform':>8} {mode:<10} | " + " | ".join(line), flush=True)
        del x, ref
