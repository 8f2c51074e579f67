"""Host time of run-length encode and unique_consecutive (2^26 sorted int32 keys in 2^20 runs): wall
time per call of 500 calls queued back to back, and a cProfile of them by own time.

    PYTHONPATH=. python bench/probes/heads_host_cprofile.py
"""
import cProfile
import pstats
import time

import torch

from tritoncub.device import run_length_encode as RLE
from _inputs import select_inputs

ops = torch.ops.tritoncub
n = 1 << 26
_, _, _, runs = select_inputs(n, (), copies=2)
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for name, body in (("rle_encode", lambda x: RLE.encode(x)),
                   ("unique_consecutive", lambda x: ops.unique_consecutive(x, False, False))):
    for i in range(20):
        body(runs[i % 2])
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(500):
        body(runs[i % 2])
    host = (time.perf_counter() - t) / 500
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t) / 500
    print(f"== {name}: host {host * 1e6:.1f} us per call, with the GPU {wall * 1e6:.1f} us", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    for i in range(500):
        body(runs[i % 2])
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(22)
