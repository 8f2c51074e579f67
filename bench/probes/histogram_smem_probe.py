"""histc over 2^26 fp32 samples with the shared-memory histogram (PRIVATE_ALGO=2) under the benchmark's
method: TILE, warps, programs per SM and PREFETCH swept for 256, 100 and 1024 bins, and uint8 samples.
The source of the hand-set default of policies/sm_90/histogram.json.

    PYTHONPATH=. python bench/probes/histogram_smem_probe.py
"""
import itertools, torch, triton, triton.testing
import tritoncub
from tritoncub import policy
from bench.harness import rotating
ops = torch.ops.tritoncub

def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3
n = 1 << 26
gen = torch.Generator(device="cuda").manual_seed(0)
xs = [torch.rand(n, device="cuda", generator=gen) for _ in range(2)]
assert torch.equal(ops.histc(xs[0], 256, 0.0, 1.0), torch.histc(xs[0], 256, 0.0, 1.0))
print(f"torch clone {bench(rotating(xs, lambda x: x.clone())):7.2f} us")
print(f"torch histc {bench(rotating(xs, lambda x: torch.histc(x, 256, 0., 1.))):7.2f} us")
print(f"histc256 op {bench(rotating(xs, lambda x: ops.histc(x, 256, 0., 1.))):7.2f} us", flush=True)
for bins in (256, 100, 1024):
    res = []
    for tile, w, pf, pps in itertools.product((4096, 8192), (8, 16), (0, 1), (1, 2, 3)):
        cfg = {"PRIVATE_ALGO": 2, "TILE": tile, "num_warps": w, "SMEM_COPIES": 1, "PROGRAMS_PER_SM": pps, "PREFETCH": pf}
        with policy.override("histogram", cfg):
            t = bench(rotating(xs, lambda x: ops.histc(x, bins, 0., 1.)))
        res.append((t, cfg))
    res.sort(key=lambda r: r[0])
    print(bins, "best", [f"{t:.1f} {c}" for t, c in res[:4]], "worst", f"{res[-1][0]:.1f}", flush=True)
    print("   ", [f"{t:.1f} pf{c['PREFETCH']} pps{c['PROGRAMS_PER_SM']} t{c['TILE']} w{c['num_warps']}" for t, c in res])
u8 = [torch.randint(0, 256, (n,), device="cuda", dtype=torch.uint8) for _ in range(4)]
from tritoncub.device import histogram as H
for pf in (0, 1):
    for pps in (1, 2, 4):
        with policy.override("histogram", {"PRIVATE_ALGO": 2, "TILE": 8192, "num_warps": 16, "SMEM_COPIES": 1, "PROGRAMS_PER_SM": pps, "PREFETCH": pf}):
            print(f"u8 256 pf{pf} pps{pps} {bench(rotating(u8, lambda x: H.histogram_even(x, 257, 0, 256))):7.2f} us", flush=True)
