"""Host (CPU) time per call of the torch operators at tiny sizes, where the GPU work is negligible,
next to torch's own operators and a bare Triton launch; then a profile of where our time goes.

    python bench/probes/host_overhead.py [--profile]

Host time per call is the wall time of 2000 back-to-back calls (no synchronisation inside the loop)
divided by 2000. When it exceeds the GPU time of a call, the op is launch-bound and
``triton.testing.do_bench`` reports the host time.
"""
import cProfile
import io
import pstats
import sys

import torch
import triton
import triton.language as tl

import tritoncub  # noqa: F401
from reduce_overhead import host_us  # the same timer (this directory is on sys.path when run as a script)
from tritoncub.device import reduce as R
from tritoncub.device import select as SEL


@triton.jit
def _empty1(x):
    pass


@triton.jit
def _empty16(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, T: tl.constexpr, U: tl.constexpr):
    pass


def main():
    dev = torch.device("cuda")
    x = torch.randn(1024, device=dev)
    xi = torch.randint(0, 100, (1024,), device=dev, dtype=torch.int32)
    r = torch.randn(64, 128, device=dev)
    m = torch.rand(1024, device=dev) < 0.5
    ops = torch.ops.tritoncub
    cases = {
        "triton empty kernel, 1 arg": lambda: _empty1[(1,)](x),
        "triton empty kernel, 16 args": lambda: _empty16[(1,)](x, x, x, x, 1, 2, 3, 4, x, x, x, x, 5, 6, 7, 8,
                                                               T=4, U=8),
        "torch.empty(1)": lambda: torch.empty(1, device=dev),
        "torch.sum": lambda: torch.sum(x),
        "device.reduce.sum": lambda: R.sum(x),
        "ops.sum": lambda: ops.sum(x),
        "reduce._sum_impl (no dispatcher)": lambda: R._sum_impl(x),
        "torch.sum(dim=-1)": lambda: torch.sum(r, -1),
        "ops.sum(dim=-1)": lambda: ops.sum(r, [-1]),
        "torch.cumsum": lambda: torch.cumsum(x, 0),
        "ops.cumsum": lambda: ops.cumsum(x, 0),
        "torch.sort": lambda: torch.sort(x),
        "ops.sort": lambda: ops.sort(x),
        "torch.sort rows": lambda: torch.sort(r, -1),
        "ops.sort rows": lambda: ops.sort(r, -1),
        "torch.topk rows": lambda: torch.topk(r, 8),
        "ops.topk rows": lambda: ops.topk(r, 8),
        "torch.histc": lambda: torch.histc(x, 256, -3, 3),
        "ops.histc": lambda: ops.histc(x, 256, -3.0, 3.0),
        "torch.masked_select": lambda: torch.masked_select(x, m),
        "ops.masked_select": lambda: ops.masked_select(x, m),
        "select._masked_select_impl": lambda: SEL._masked_select_impl(x, m),
        "torch.unique_consecutive": lambda: torch.unique_consecutive(xi),
        "ops.unique_consecutive": lambda: ops.unique_consecutive(xi),
        "torch.unique": lambda: torch.unique(xi),
        "ops.unique": lambda: ops.unique(xi),
    }
    rows = {}
    for name, fn in cases.items():
        try:
            rows[name] = host_us(fn, reps=2000)
            print(f"{name:32s} {rows[name]:8.1f} us/call", flush=True)
        except Exception as e:  # a probe: report and go on
            print(f"{name:32s} ERROR {type(e).__name__}: {str(e)[:160]}", flush=True)
    if "--profile" in sys.argv:
        for name in ("device.reduce.sum", "ops.sum(dim=-1)", "ops.cumsum", "ops.sort", "ops.masked_select",
                     "ops.histc", "ops.sort rows", "ops.unique", "ops.sum"):
            fn = cases[name]
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(500):
                fn()
            pr.disable()
            torch.cuda.synchronize()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(24)
            print(f"\n==== profile: {name} (500 calls) ====")
            print("\n".join(s.getvalue().splitlines()[6:]))


if __name__ == "__main__":
    main()
