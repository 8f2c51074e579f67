"""histc 256 bins over 2^26 fp32 (the benchmark case) timed repeatedly in one process, with the shipped
policy and the same config forced by an override: how much of the run-to-run spread of the
benchmark is the op and how much the state of the GPU.

    PYTHONPATH=. python bench/probes/histc_repeat_probe.py
"""
import torch, triton, triton.testing
import tritoncub
from tritoncub import policy
from bench.harness import rotating
ops = torch.ops.tritoncub
print(policy.select("histogram", torch.device("cuda")))
n = 1 << 26
gen = torch.Generator(device="cuda").manual_seed(0)
xs = [torch.rand(n, device="cuda", generator=gen)]
for rep in range(3):
    t = triton.testing.do_bench(rotating(xs, lambda x: ops.histc(x, 256, 0., 1.)), warmup=25, rep=100, return_mode="median") * 1e3
    with policy.override("histogram", {"PRIVATE_ALGO": 2, "SMEM_COPIES": 1, "num_warps": 16, "PROGRAMS_PER_SM": 1, "PREFETCH": 1, "TILE": 8192}):
        t2 = triton.testing.do_bench(rotating(xs, lambda x: ops.histc(x, 256, 0., 1.)), warmup=25, rep=100, return_mode="median") * 1e3
    print(f"shipped {t:.1f} override {t2:.1f}", flush=True)
