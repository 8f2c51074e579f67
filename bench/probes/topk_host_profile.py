"""Where the host time of top-k calls goes (cProfile), with a calibration of the host (a tiny torch op,
a Python loop), and the host time of a replayed row sort.

    python bench/probes/topk_host_profile.py
"""
import cProfile, pstats, sys, time
import torch
sys.path.insert(0, ".")
import tritoncub
from tritoncub.device import topk as tk
from tritoncub.device import segmented_sort as ss
from bench.probes.reduce_overhead import host_us

x = torch.ones(16, device="cuda")
print(f"calibration: x.add_(1) host {host_us(lambda: x.add_(1), reps=2000):.1f} us/call, "
      f"torch.empty(16) {host_us(lambda: torch.empty(16, device='cuda'), reps=2000):.1f}, "
      f"torch.topk(16, 4) {host_us(lambda: torch.topk(x, 4), reps=2000):.1f}", flush=True)
t = time.perf_counter(); s = 0
for i in range(1000000): s += i
print(f"python loop 1e6 adds: {(time.perf_counter()-t)*1e3:.1f} ms", flush=True)
cases = [("rows 65536x128 k=8", torch.randn(65536, 128, device="cuda"), 8),
         ("2^26 k=100", torch.randn(1 << 26, device="cuda"), 100),
         ("2^26 k=10000", torch.randn(1 << 26, device="cuda"), 10000),
         ("16x2^20 k=1000", torch.randn(16, 1 << 20, device="cuda"), 1000),
         ("16x2^20 k=1000 keys in [0,1)", torch.rand(16, 1 << 20, device="cuda"), 1000)]
for name, xx, k in cases:
    fn = lambda: tk.topk(xx, k)
    op = lambda: torch.ops.tritoncub.topk(xx, k, -1, True, True)
    print(f"== {name}: host {host_us(fn, reps=100):.1f} us/call (torch op {host_us(op, reps=100):.1f}); "
          f"remembered long-row problems {len(tk._LONG_REPLAYS)}, unrecorded {len(tk._LONG_UNRECORDED)}",
          flush=True)
    for _ in range(5): fn()
    torch.cuda.synchronize()
    pr = cProfile.Profile(); pr.enable()
    for _ in range(100): fn()
    pr.disable(); torch.cuda.synchronize()
    st = pstats.Stats(pr); st.sort_stats("tottime"); st.print_stats(14)
rows = torch.randn(4096, 1024, device="cuda")
print(f"== sort_rows 4096x1024 host {host_us(lambda: ss.sort_rows(rows), reps=200):.1f} us/call")
