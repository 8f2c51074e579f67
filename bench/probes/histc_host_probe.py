"""Host time of ``ops.histc`` and ``ops.bincount`` (with their remembered launches, and planned afresh
every call) at sizes whose GPU time is small, next to torch's: host time of one call with the GPU idle,
calls queued back to back, GPU time; then cProfile of both ops by own and cumulative time.

    PYTHONPATH=. python bench/probes/histc_host_probe.py [--profile]
"""
import cProfile
import pstats
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import gpu_us, host_idle_us, host_ms  # noqa: E402
from tritoncub.device import histogram as H  # noqa: E402

ops = torch.ops.tritoncub
_replayable = H._replayable


def planned(fn):
    """``fn`` with histc's remembered launches off (every call plans and launches afresh)."""
    def run():
        H._replayable = lambda x: False
        try:
            return fn()
        finally:
            H._replayable = _replayable
    return run


print(torch.cuda.get_device_name(), torch.__version__, flush=True)
cases = {}
for n in (1024, 1 << 20):
    x = torch.randn(n, device="cuda")
    xi = torch.randint(0, 1000, (n,), device="cuda")
    cases[f"ops.histc 256 bins n={n}"] = lambda x=x: ops.histc(x, 256, -3.0, 3.0)
    cases[f"ops.histc 256 bins n={n} planned"] = planned(lambda x=x: ops.histc(x, 256, -3.0, 3.0))
    cases[f"torch.histc 256 bins n={n}"] = lambda x=x: torch.histc(x, 256, -3, 3)
    cases[f"ops.bincount n={n}"] = lambda xi=xi: ops.bincount(xi)
    cases[f"ops.bincount n={n} planned"] = planned(lambda xi=xi: ops.bincount(xi))
    cases[f"torch.bincount n={n}"] = lambda xi=xi: torch.bincount(xi)
for name, fn in cases.items():
    print(f"{name:<42} host idle {host_idle_us(fn, 200):7.1f} us  queued {host_ms(fn, 200) * 1e3:7.1f} us  "
          f"gpu {gpu_us(fn, 5):6.1f} us", flush=True)
if "--profile" in sys.argv:
    for name in ("ops.histc 256 bins n=1024", "ops.bincount n=1024"):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(300):
            cases[name]()
        torch.cuda.synchronize()
        prof.disable()
        print(f"== {name}: cProfile, 300 calls")
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
