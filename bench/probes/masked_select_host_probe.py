"""Where masked_select's wall time goes on this host: per-call wall (loop, sync at end), cProfile,
and the same with small inputs (host-bound) against torch."""
import cProfile, pstats, sys, time
import torch
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/masked_select_host_probe.py
import tritoncub
from tritoncub.device import select as S
from bench.probes.reduce_overhead import host_us, kernel_times
ops = torch.ops.tritoncub

def wall_us(fn, reps=200):
    for _ in range(10): fn()
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(reps): fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / reps * 1e6

x0 = torch.ones(16, device="cuda")
print(f"calibration: x.add_(1) host {host_us(lambda: x0.add_(1), reps=2000):.1f} us/call", flush=True)
for n, d in ((1 << 26, 0.01), (1 << 26, 0.5), (1 << 20, 0.01), (1 << 16, 0.5)):
    x = torch.randn(n, device="cuda"); m = torch.rand(n, device="cuda") < d
    assert torch.equal(ops.masked_select(x, m), torch.masked_select(x, m))
    for name, fn in (("ops", lambda: ops.masked_select(x, m)),
                     ("impl two-pass", lambda: S._masked_select_impl(x, m, True)),
                     ("impl one-pass", lambda: S._masked_select_impl(x, m, False)),
                     ("torch", lambda: torch.masked_select(x, m))):
        w = [wall_us(fn) for _ in range(3)]
        kt = kernel_times(fn, reps=20)
        gpu = sum(t for t, _ in kt.values())
        names = [f"{k[:28]}x{c}:{t:.1f}" for k, (t, c) in kt.items()]
        print(f"n={n} d={d} {name:14s} wall us/call {' '.join(f'{v:.1f}' for v in w)}  gpu {gpu:.1f}  {names}", flush=True)
    fn = lambda: ops.masked_select(x, m)
    pr = cProfile.Profile(); pr.enable()
    for _ in range(200): fn()
    pr.disable(); torch.cuda.synchronize()
    st = pstats.Stats(pr); st.sort_stats("tottime"); st.print_stats(12)
