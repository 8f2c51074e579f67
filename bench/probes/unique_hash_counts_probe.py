"""unique of few distinct values spread over the int32 range (the hash path), with and without counts:
GPU time per call of ops.unique against torch.unique, every result checked against torch first. With
counts, every item adds to its key's counter by a global atomic: few distinct values queue on few words.

    PYTHONPATH=TREE:. python bench/probes/unique_hash_counts_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: E402
from _timing import gpu_us, kernel_breakdown  # noqa: E402

ops = torch.ops.tritoncub
print(torch.cuda.get_device_name(), "tritoncub from", tritoncub.__file__, flush=True)
g = torch.Generator(device="cuda").manual_seed(0)
for n in (1 << 22, 1 << 26):
    for distinct in (2, 100, 4096, 65536, 1 << 20):
        pool = torch.randint(-2**31, 2**31 - 1, (distinct,), device="cuda", generator=g, dtype=torch.int64)
        x = pool[torch.randint(0, distinct, (n,), device="cuda", generator=g)].to(torch.int32)
        line = f"n=2^{n.bit_length() - 1} distinct={distinct:8d}"
        for rc in (False, True):
            got = ops.unique(x, True, False, rc)
            ref = torch.unique(x, return_counts=True)
            assert torch.equal(got[0], ref[0]) and (not rc or torch.equal(got[2], ref[1]))
            line += (f" | counts={int(rc)} {gpu_us(lambda: ops.unique(x, True, False, rc)):8.1f}"
                     f" torch {gpu_us(lambda: torch.unique(x, return_counts=rc)):8.1f}")
        print(line + " us of GPU time", flush=True)
        if distinct == 100 and n == 1 << 26:
            print("    kernels: " + ", ".join(f"{k[:28]} {us:.1f}" for k, us, _ in
                                             kernel_breakdown(lambda: ops.unique(x, True, False, True))), flush=True)
