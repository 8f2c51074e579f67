"""Host time per call of the scans other than sums (small inputs, calls queued back to back: the
GPU is never the limit), and a cProfile of the slowest, to find where the host's time goes."""
import cProfile
import pstats
import sys
import torch
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/scan_host_probe.py
sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401
from tritoncub.device import scan as S
from _timing import host_ms

print(torch.cuda.get_device_name(), torch.__version__, flush=True)
x = torch.randn(1 << 16, device="cuda")
r = torch.randn(64, 1024, device="cuda")
ops = {"cumsum 1-D": lambda: S.inclusive_sum(x, 0), "cumprod 1-D": lambda: S.cumprod(x, 0),
       "logcumsumexp 1-D": lambda: S.logcumsumexp(x, 0), "cummax 1-D": lambda: S.cummax(x, 0),
       "cumsum rows": lambda: S.inclusive_sum(r, 1), "cumprod rows": lambda: S.cumprod(r, 1),
       "logcumsumexp rows": lambda: S.logcumsumexp(r, 1), "torch.cumprod 1-D": lambda: torch.cumprod(x, 0),
       "torch.logcumsumexp rows": lambda: torch.logcumsumexp(r, 1)}
for rnd in range(2):
    print(f"round {rnd}: " + "  ".join(f"{k} {host_ms(f, calls=200) * 1e3:.1f} us" for k, f in ops.items()), flush=True)
for name in ("cumprod 1-D", "logcumsumexp rows"):
    f = ops[name]
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(300):
        f()
    prof.disable()
    torch.cuda.synchronize()
    print(f"--- {name}: 300 calls", flush=True)
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)
