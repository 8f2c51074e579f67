"""Row sums: where the time goes (GPU time with the benchmark's L2 flush, host time per call, the
kernels each path launches), against a device-wide sum of the same bytes (one output: the floor a
row reduction of those bytes can reach on this GPU and timer).

    python bench/probes/rows_probe.py
"""
from __future__ import annotations

import torch
import triton.testing

import tritoncub  # noqa: F401
from reduce_overhead import host_us  # the same timer (this directory is on sys.path when run as a script)
from tritoncub.device import reduce as R
from tritoncub.device import segmented_reduce as S


def main():
    for m, k in ((65536, 128), (4096, 1024)):
        x = torch.randn(m, k, device="cuda")
        flat = x.view(-1)
        paths = {"reduce_rows": lambda: S.reduce_rows(x, "sum"), "op sum(x,[-1])": lambda: torch.ops.tritoncub.sum(x, [-1]),
                 "torch x.sum(-1)": lambda: x.sum(-1), "device sum (same bytes)": lambda: R.sum(flat),
                 "torch copy (2x bytes)": lambda: flat.clone()}
        for name, fn in paths.items():
            ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
            print(f"{m}x{k:<6} {name:<26} gpu {ms * 1e3:7.2f} us   host {host_us(fn):7.1f} us/call", flush=True)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                torch.ops.tritoncub.sum(x, [-1])
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=6, max_name_column_width=50))


if __name__ == "__main__":
    main()
