"""Host time per layer of a top-k call: the torch operator, the Python function under it, the rows
launcher, and the radix select alone; then cProfile by cumulative time. Wall time per call of 50
calls without a sync.

    PYTHONPATH=. python bench/probes/topk_host_layers.py
"""
import cProfile
import io
import pstats
import time

import torch
import triton

import tritoncub  # noqa: F401
from tritoncub.device import topk as T


def per_call(fn, reps=50):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t = (time.perf_counter() - t0) / reps * 1e3
    torch.cuda.synchronize()
    return t


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    r = torch.randn(16, 1 << 20, device="cuda", generator=g)
    x = torch.randn(1 << 26, device="cuda", generator=g)
    for name, inp, k in (("16x2^20 k=1000", r, 1000), ("2^26 k=10000", x, 10000)):
        xc = inp if inp.dim() == 2 else inp.view(1, -1)
        print(f"{name}: op {per_call(lambda: torch.ops.tritoncub.topk(inp, k)):.4f} ms, "
              f"function {per_call(lambda: T.topk(inp, k)):.4f}, rows {per_call(lambda: T._topk_rows(xc, k, True, True)):.4f}, "
              f"unsorted rows {per_call(lambda: T._topk_rows(xc, k, True, False)):.4f}, "
              f"torch.empty x2 {per_call(lambda: (torch.empty(16, k, device='cuda'), torch.empty(16, k, device='cuda'))):.4f}, "
              f"torch.zeros {per_call(lambda: torch.zeros(2144, dtype=torch.int64, device='cuda')):.4f}, "
              f"torch.topk {per_call(lambda: torch.topk(inp, k)):.4f}", flush=True)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(30):
            torch.ops.tritoncub.topk(inp, k)
        torch.cuda.synchronize()
        pr.disable()
        st = io.StringIO()
        pstats.Stats(pr, stream=st).sort_stats("cumulative").print_stats(45)
        print(st.getvalue(), flush=True)


if __name__ == "__main__":
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    main()
