"""Sort with indices of 2^20 / 2^22 fp32 keys: do_bench of ours and torch.sort with rotating and fixed
inputs (two rounds), the host time of one call with the queue empty, and the upfront histogram's GPU
time under HIST_WARPS x HIST_ITEMS (the sort under each of those checked against torch.sort).

    PYTHONPATH=. python bench/probes/small_sort_probe.py
"""
import sys, time, math
sys.path.insert(0, "bench/probes")
import torch, triton
import tritoncub  # noqa: F401 (registers the ops)
from tritoncub import policy
from tritoncub.device import radix_sort as rs
from reduce_overhead import kernel_times
from bench.harness import rotating as rot

ops = torch.ops.tritoncub
db = lambda f: triton.testing.do_bench(f, warmup=25, rep=100, return_mode="median") * 1e3
for n in (1 << 20, 1 << 22):
    xs = [torch.randn(n, device="cuda", generator=torch.Generator(device="cuda").manual_seed(s)) for s in range(max(1, math.ceil(2 * 62914560 / (4 * n))))]
    base = dict(policy.select("radix_sort", torch.device("cuda"), rs._bucket(n)).values)
    for rep in range(2):
        print(f"n=2^{n.bit_length()-1} round {rep}: ours rotating {db(rot(xs, lambda t: ops.sort(t, -1, False, False))):.1f} "
              f"ours fixed {db(lambda: ops.sort(xs[0], -1, False, False)):.1f} torch rotating {db(rot(xs, lambda t: torch.sort(t))):.1f} "
              f"torch fixed {db(lambda: torch.sort(xs[0])):.1f} us", flush=True)
    torch.cuda.synchronize()
    for _ in range(5):
        torch.cuda.synchronize(); t = time.perf_counter(); ops.sort(xs[1], -1, False, False); h = (time.perf_counter() - t) * 1e6
    print(f"  host time of one call (queue empty): {h:.1f} us", flush=True)
    for hw in (8, 16):
        for hi in (8, 16):
            for per_sm in (1,):
                pol = dict(base, HIST_WARPS=hw, HIST_ITEMS=hi, HIST_PER_SM=per_sm)
                with policy.override("radix_sort", pol):
                    v, i = ops.sort(xs[0], -1, False, False)
                    r = torch.sort(xs[0], stable=True)
                    ok = torch.equal(v, r.values) and torch.equal(i, r.indices)
                    assert ok, pol
                    d = {k: t for k, (t, _) in kernel_times(lambda: ops.sort(xs[0], -1, False, False)).items()}
                h = {k: v for k, v in d.items() if "histogram" in k}
                print(f"  HIST_WARPS {hw:2} HIST_ITEMS {hi:2} PER_SM {per_sm}: ok={ok} hist {list(h.values())[0] if h else -1:.1f} us total gpu {sum(d.values()):.1f}", flush=True)
