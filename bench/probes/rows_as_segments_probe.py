"""Rows too many for one rows-mode sort (> 256) and longer than sort_rows takes: one segmented
onesweep sort (radix_sort.sort_segments) against the former two stable sorts (keys, then row ids),
and torch.sort(dim=-1), in one run; every result checked against torch.

    python bench/probes/rows_as_segments_probe.py
"""
from __future__ import annotations

import torch
import triton.testing

import tritoncub  # noqa: F401
from tritoncub.device import radix_sort as rs


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    real_fit = rs.segments_fit
    for b, length in ((512, 8192), (1024, 16384), (300, 65536), (4096, 4608)):
        x = torch.randn(b, length, device="cuda", generator=g)
        want_v, want_i = torch.sort(x, dim=-1, stable=True)
        row = {}
        for name, fit in (("segments", real_fit), ("two sorts", lambda *a: False)):
            rs.segments_fit = fit
            v, i = torch.ops.tritoncub.sort(x)
            assert torch.equal(v, want_v) and torch.equal(i, want_i), (name, b, length)
            row[name] = triton.testing.do_bench(lambda: torch.ops.tritoncub.sort(x), warmup=10, rep=100,
                                                return_mode="median")
        rs.segments_fit = real_fit
        row["torch"] = triton.testing.do_bench(lambda: torch.sort(x, dim=-1), warmup=10, rep=100, return_mode="median")
        print(f"{b}x{length} fp32: " + ", ".join(f"{k} {v:.4f} ms" for k, v in row.items())
              + f"  (segments vs torch {row['torch'] / row['segments']:.2f}x)", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    main()
