"""sort_rows at three shapes: do_bench medians (three), GPU time, host time per call, torch.sort.

    PYTHONPATH=. python bench/probes/sort_rows_host_probe.py
"""
import sys, time, torch, tritoncub
sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us
from tritoncub.device import segmented_sort as ss
def host_us(fn, reps=200):
    for _ in range(5): fn()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(reps): fn()
    t1 = time.perf_counter(); torch.cuda.synchronize()
    return (t1 - t0) / reps * 1e6
for shape in ((4096, 1024), (65536, 128), (32, 32000)):
    xs = [torch.randn(shape, device="cuda") for _ in range(4)]
    st = {"i": 0}
    def f():
        st["i"] = (st["i"] + 1) % 4
        return ss.sort_rows(xs[st["i"]])
    ms = [bench_ms(f) for _ in range(3)]
    print(shape, "do_bench", " ".join(f"{m*1e3:.1f}" for m in ms), "us; gpu", f"{gpu_us(f):.1f}", "us; host/call", f"{host_us(f):.1f}", "us; torch", f"{bench_ms(lambda: torch.sort(xs[0], dim=-1))*1e3:.1f}", flush=True)
