"""Sorts of 2^16..2^24 fp32 keys (torch API, values + indices) with and without the histogram
read-back (policy SKIP_PLACES_MIN_N), per-kernel GPU times from torch.profiler, torch.sort in the same
run; then 2^28 keys-only uint32 and fp32. Log: bench/probes/onesweep_small_h100.log."""
import sys, os, torch, triton
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import tritoncub.device.radix_sort as rs
from tritoncub import policy
def kernel_times(fn, reps=5):
    fn(); torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" or "kernel" in e.key:
            t = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
            out[e.key[:40]] = (round(t / reps, 1), e.count // reps)
    return dict(sorted(out.items(), key=lambda kv: -kv[1][0])[:6])

bench = lambda f: triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median")
shipped = {b: policy.select("radix_sort", torch.device("cuda"), b).as_dict() for b in ("small", "default")}
for lg in (16, 18, 20, 22, 24):
    y = torch.randn(1 << lg, device="cuda")
    r = torch.sort(y, stable=True)
    tt = bench(lambda: torch.sort(y))
    for skip in (0, 1 << 30):
        b = "small" if lg < 22 else "default"
        with policy.override("radix_sort", {**shipped[b], "SKIP_PLACES_MIN_N": skip}):
            v, i = rs.sort(y)
            ok = torch.equal(i, r.indices)
            t = bench(lambda: rs.sort(y))
            kt = kernel_times(lambda: rs.sort(y))
        print(f"sort fp32 2^{lg} skip_min={skip}: ok={ok} {t*1000:.1f} us (torch {tt*1000:.1f}) kernels {kt}", flush=True)
N = 1 << 28
x = torch.randint(0, 2**32, (N,), device="cuda", dtype=torch.int64).to(torch.uint32)
print("uint32 2^28", bench(lambda: rs.sort_keys(x)), kernel_times(lambda: rs.sort_keys(x)))
xf = torch.randn(N, device="cuda")
print("fp32 randn 2^28", bench(lambda: rs.sort_keys(xf)), kernel_times(lambda: rs.sort_keys(xf)))
