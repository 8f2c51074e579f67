"""A/B of two tritoncub trees on one machine: do_bench (host included) and summed GPU kernel times of
topk (k=100, k=10000 over 2^26 fp32) and unique (2^26 int32, 2^20 distinct).
    python3 bench/probes/ab_host_vs_gpu_probe.py PATH_OF_A_TREE"""
import sys, os, torch, triton
root = sys.argv[1]
sys.path.insert(0, root)
import tritoncub
print("tritoncub from", tritoncub.__file__)
bench = lambda f: triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median")
def gpu_us(fn, reps=10):
    fn(); torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    tot = 0.0
    for e in prof.key_averages():
        if e.device_type.name == "CUDA":
            tot += getattr(e, "self_device_time_total", 0)
    return tot / reps
ops = torch.ops.tritoncub
x = torch.randn(1 << 26, device="cuda")
u = torch.randint(0, 1 << 20, (1 << 26,), device="cuda", dtype=torch.int32)
for name, f in (("topk k=100", lambda: ops.topk(x, 100, -1, True, True)),
                ("topk k=10000", lambda: ops.topk(x, 10000, -1, True, True)),
                ("unique 2^20 distinct", lambda: ops.unique(u, True, False, False, None))):
    print(f"{name}: do_bench {bench(f)*1000:.1f} us, GPU kernels {gpu_us(f):.1f} us", flush=True)
