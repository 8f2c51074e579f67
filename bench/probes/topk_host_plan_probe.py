"""Host work of the radix-select top-k: remembered launch sequences (LaunchPlan) on and off, and the
sort of one long row of selected items by the device radix sort or the merge path. Per case: wall
time per call of 30 calls without a sync (host), do_bench median, and the values checked against
torch.topk.

    PYTHONPATH=. python bench/probes/topk_host_plan_probe.py
"""
import time

import torch
import triton
import triton.testing

import tritoncub  # noqa: F401
from tritoncub import _launch
from tritoncub.device import topk as T


class _NoPlan(_launch.LaunchPlan):
    def __init__(self, memo, key, tag=None):
        super().__init__(memo, None, tag)


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(1 << 26, device="cuda", generator=g)
    r = torch.randn(16, 1 << 20, device="cuda", generator=g)
    cases = {"topk 2^26 k=10000": (x, 10000), "topk 16x2^20 k=1000": (r, 1000), "topk 2^26 k=100": (x, 100)}
    plan = T.LaunchPlan
    variants = {"plan+radix": (plan, True), "noplan+radix": (_NoPlan, True),
                "plan+merge": (plan, False), "noplan+merge": (_NoPlan, False)}
    for name, (inp, k) in cases.items():
        ref = torch.topk(inp, k)[0]
        t_torch = triton.testing.do_bench(lambda: torch.topk(inp, k), warmup=10, rep=100, return_mode="median")
        line = [f"{name}: torch {t_torch:.4f} ms"]
        for vname, (plan_cls, radix) in variants.items():
            T.LaunchPlan, T._RADIX_SORT_SELECTED = plan_cls, radix
            fn = lambda: torch.ops.tritoncub.topk(inp, k)   # noqa: E731
            v, _ = fn()
            ok = torch.equal(v, ref)
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(30):
                fn()
            host = (time.perf_counter() - t0) / 30 * 1e3
            torch.cuda.synchronize()
            t = triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median")
            line.append(f"{vname} host {host:.4f} do_bench {t:.4f} ({t_torch / t:.2f}x) {'ok' if ok else 'WRONG'}")
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    main()
