"""64-bit keys in long segments / many long rows: the segmented radix sort (keys and 4-byte
positions apart) against what they took before (segments_fit forced off: the merge path for
segmented_sort, whose composite keys cannot hold 64 key bits and a segment number; a key sort plus a
stable sort of the row ids for sort), with torch in the same run; every result checked.

    python bench/probes/segments_64bit_probe.py
"""
from __future__ import annotations

import torch
import triton
import triton.testing

import tritoncub  # noqa: F401
from tritoncub.device import radix_sort as rs
from tritoncub.device import segmented_sort as ss


def _bench(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median")


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    real = rs.segments_fit
    for dtype in (torch.int64, torch.float64):
        for b, length in ((16, 1 << 20), (512, 16384)):
            x = (torch.randint(-2**62, 2**62, (b, length), device="cuda", generator=g) if dtype == torch.int64
                 else torch.randn(b, length, device="cuda", generator=g, dtype=dtype))
            offs = torch.arange(0, b * length + 1, length, device="cuda")
            flat = x.reshape(-1)
            wv, wi = torch.sort(x, dim=-1, stable=True)
            row = {}
            for name, fit in (("segments", real), ("before", lambda *a: False)):
                rs.segments_fit = fit
                v, i = torch.ops.tritoncub.sort(x)
                assert torch.equal(v, wv) and torch.equal(i, wi), (name, dtype, b, length)
                assert torch.equal(ss.segmented_sort(flat, offs), wv.reshape(-1)), (name, dtype, b, length)
                row["sort " + name] = _bench(lambda: torch.ops.tritoncub.sort(x))
                row["segmented_sort " + name] = _bench(lambda: ss.segmented_sort(flat, offs))
            rs.segments_fit = real
            row["torch.sort"] = _bench(lambda: torch.sort(x, dim=-1))
            print(f"{str(dtype)[6:]} {b}x{length}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    main()
