"""Top-k timings of the package tree at argv[1] (e.g. an older checkout, to compare two trees in one run):
do_bench time and torch.topk's, host time per call, GPU time per call and kernels per call.

    python bench/probes/topk_host_ab_probe.py TREE
"""
import sys, time
sys.path.insert(0, sys.argv[1])
import torch, triton.testing
sys.path.insert(1, ".")
import tritoncub
from tritoncub.device import topk as tk
from bench.probes.reduce_overhead import host_us, kernel_times
print("tree", sys.argv[1], tritoncub.__file__)
cases = [((65536, 128), 8, True), ((4096, 1024), 16, True), ((16, 1 << 20), 8, True), ((1 << 26,), 100, True),
         ((1 << 26,), 10000, True), ((16, 1 << 20), 1000, True)]
for shape, k, largest in cases:
    gen = torch.Generator(device="cuda").manual_seed(0)
    xs = [torch.randn(shape, device="cuda", generator=gen) for _ in range(2)]
    st = {"i": 0}
    def fn():
        st["i"] ^= 1
        return tk.topk(xs[st["i"]], k, largest=largest)
    v, i = fn(); rv, _ = torch.topk(xs[st["i"]], k, largest=largest); assert torch.equal(v, rv)
    ms = triton.testing.do_bench(fn, warmup=50, rep=300)
    tms = triton.testing.do_bench(lambda: torch.topk(xs[0], k, largest=largest), warmup=50, rep=300)
    h = host_us(fn, reps=200)
    kt = kernel_times(fn, reps=50)
    gpu = sum(t for t, _ in kt.values())
    print(f"{str(shape):16s} k={k:<6d} do_bench {ms*1e3:7.1f} us  torch {tms*1e3:7.1f}  host/call {h:6.1f} us  gpu {gpu:6.1f} us  kernels {sum(c for _, c in kt.values())}", flush=True)
