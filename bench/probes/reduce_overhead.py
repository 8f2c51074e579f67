"""Where the time of a small reduction goes: host time per call vs GPU kernel time.

    python bench/probes/reduce_overhead.py
"""
import time

import torch
import triton.testing
from torch.profiler import ProfilerActivity, profile

import tritoncub  # noqa: F401
from tritoncub.device import reduce as R
from tritoncub.device import segmented_reduce as S


def host_us(fn, reps=300):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    host = (time.perf_counter() - t) / reps * 1e6
    torch.cuda.synchronize()
    return host


def kernel_times(fn, reps=50) -> dict:
    """GPU time per call of each kernel (and memset/copy) ``fn`` runs, and how many times a call
    runs it, by its full name (torch.profiler)."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    return {e.key: (e.device_time_total / reps, e.count // reps)
            for e in prof.key_averages() if e.device_time_total > 0}


def kernel_us(fn, reps=50):
    times = kernel_times(fn, reps)
    return sum(t for t, _ in times.values()), [f"{k[:40]}x{c * reps}" for k, (_, c) in times.items()]


def main():
    x = torch.randn(1 << 20, device="cuda")
    xb = x.bfloat16()
    rows = torch.randn(65536, 128, device="cuda")
    cases = [("R.sum fp32 2^20", lambda: R.sum(x)), ("op sum fp32 2^20", lambda: torch.ops.tritoncub.sum(x)),
             ("torch.sum fp32 2^20", lambda: torch.sum(x)), ("R.sum bf16 2^20", lambda: R.sum(xb)),
             ("R.argmax fp32 2^20", lambda: R.argmax(x)),
             ("rows 65536x128", lambda: S.reduce_rows(rows, "sum")),
             ("op rows 65536x128", lambda: torch.ops.tritoncub.sum(rows, [-1])),
             ("torch rows 65536x128", lambda: rows.sum(-1))]
    for name, fn in cases:
        h = host_us(fn)
        k, names = kernel_us(fn)
        b = triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median") * 1e3
        print(f"{name:<24} host {h:7.1f} us/call  gpu {k:7.1f} us/call  do_bench {b:7.1f} us  {names}", flush=True)


if __name__ == "__main__":
    main()
