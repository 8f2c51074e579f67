"""GPU time of the hash path's sample kernel (one program sorting SAMPLE int32 keys and counting the
distinct ones) by SAMPLE and num_warps, and of the insert kernel with counting compiled in and the flag
off, against it compiled out (2^26 int32 over 100 wide values).

    PYTHONPATH=. python bench/probes/hash_sample_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us  # noqa: E402
from tritoncub.device import unique as U  # noqa: E402

n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(0)
pool = torch.randint(-2**31, 2**31 - 1, (100,), device="cuda", generator=g, dtype=torch.int64)
x = pool[torch.randint(0, 100, (n,), device="cuda", generator=g)].to(torch.int32)
state = torch.zeros(2, dtype=torch.int64, device="cuda")
for sample in (512, 1024, 2048, 4096):
    for warps in (1, 2, 4, 8):
        def fn():
            U._hash_sample_kernel[(1,)](x, n, state, MAX_DISTINCT=sample - sample // 8, SAMPLE=sample, num_warps=warps)
        fn()
        assert state.tolist() == [0, 0]
        print(f"sample {sample:5d} warps {warps}: {gpu_us(fn, match='sample'):7.1f} us", flush=True)
slots = 1 << 22
table = torch.empty(slots, dtype=torch.int64, device="cuda")
counts = torch.zeros(slots, dtype=torch.int32, device="cuda")
for count in (False, True):
    def ins():
        table.fill_(int(U._EMPTY))
        U._hash_insert_kernel[(n // U._HASH_TILE,)](x, n, table, counts, state, U._HASH_MAX_PROBES, LOG_SLOTS=22,
                                                     COUNT=count, PTX=True, TILE=U._HASH_TILE, num_warps=U._HASH_WARPS)
    print(f"insert COUNT={count} (flag off): {gpu_us(ins, match='insert'):7.1f} us", flush=True)
