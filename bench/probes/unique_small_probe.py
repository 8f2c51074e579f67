"""Sorted unique of small inputs (the one-program path's sizes): host time of one call with the GPU
idle, GPU time per call, do_bench, against torch.unique in the same process; every result is checked
against torch first (values, inverse, counts; no NaN in the data).

    PYTHONPATH=. python bench/probes/unique_small_probe.py
    PYTHONPATH=OLD_TREE:. python bench/probes/unique_small_probe.py   # another tree's package (A/B)
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: E402
from _timing import bench_ms, gpu_us, host_idle_us  # noqa: E402

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
print(f"{torch.cuda.get_device_name()} torch {torch.__version__}, tritoncub from {tritoncub.__file__}")
for n in (100, 1024, 4096):
    for dtype, hi in ((torch.int32, 100), (torch.float32, 1000), (torch.int16, 30000)):
        x = torch.randint(0, hi, (n,), device="cuda", generator=g).to(dtype)
        for flags in ((False, False), (True, True)):
            got = ops.unique(x, True, *flags)
            ref = torch.unique(x, return_inverse=True, return_counts=True)
            assert torch.equal(got[0], ref[0])
            if flags[0]:
                assert torch.equal(got[1], ref[1]) and torch.equal(got[2], ref[2])
            fn = lambda: ops.unique(x, True, *flags)   # noqa: E731
            tfn = lambda: torch.unique(x, return_inverse=flags[0], return_counts=flags[1])   # noqa: E731
            print(f"n {n:5d} {str(dtype)[6:]:8s} inverse+counts {int(flags[0])}: host {host_idle_us(fn):7.1f} us, "
                  f"gpu {gpu_us(fn):6.1f} us, do_bench {bench_ms(fn) * 1e3:7.1f} us | torch host "
                  f"{host_idle_us(tfn):6.1f}, gpu {gpu_us(tfn):6.1f}, do_bench {bench_ms(tfn) * 1e3:6.1f}", flush=True)
