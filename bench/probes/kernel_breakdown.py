"""Per-kernel GPU time of one operator call (torch.profiler), to see where a slow op spends it.

    python bench/probes/kernel_breakdown.py topk        # the top-k cases of the benchmark
"""
from __future__ import annotations

import sys

import torch

import tritoncub  # noqa: F401


def _cases(name):
    ops = torch.ops.tritoncub
    g = torch.Generator(device="cuda").manual_seed(0)
    if name == "topk":
        x = torch.randn(1 << 26, device="cuda", generator=g)
        r = torch.randn(16, 1 << 20, device="cuda", generator=g)
        yield "topk 2^26 k=100", lambda: ops.topk(x, 100)
        yield "topk 2^26 k=10000", lambda: ops.topk(x, 10000)
        yield "topk 16x2^20 k=8", lambda: ops.topk(r, 8)
        yield "topk 16x2^20 k=1000", lambda: ops.topk(r, 1000)
        yield "torch.topk 16x2^20 k=1000", lambda: torch.topk(r, 1000)
        yield "torch.topk 2^26 k=100", lambda: torch.topk(x, 100)
    elif name == "rows":
        for shape in ((4096, 1024), (65536, 128)):
            r = torch.randn(*shape, device="cuda", generator=g)
            yield f"sort rows {shape[0]}x{shape[1]}", lambda r=r: ops.sort(r)
            yield f"torch.sort rows {shape[0]}x{shape[1]}", lambda r=r: torch.sort(r)
    elif name == "select":
        x = torch.randn(1 << 26, device="cuda", generator=g)
        m = torch.rand(1 << 26, device="cuda", generator=g) < 0.5
        u = torch.randint(0, 1 << 20, (1 << 26,), device="cuda", generator=g, dtype=torch.int32)
        yield "masked_select 50%", lambda: ops.masked_select(x, m)
        yield "unique 2^20 distinct", lambda: ops.unique(u)
        yield "torch.masked_select 50%", lambda: torch.masked_select(x, m)
        m1 = torch.rand(1 << 26, device="cuda", generator=g) < 0.01
        yield "masked_select 1%", lambda: ops.masked_select(x, m1)
        yield "torch.masked_select 1%", lambda: torch.masked_select(x, m1)
        yield "torch.unique 2^20 distinct", lambda: torch.unique(u)
        s = torch.sort(u).values
        yield "unique_consecutive sorted", lambda: ops.unique_consecutive(s)
        yield "unique_consecutive +counts+inverse", lambda: ops.unique_consecutive(s, True, True)
        yield "torch.unique_consecutive sorted", lambda: torch.unique_consecutive(s)
        from tritoncub.device import run_length_encode as RLE, reduce_by_key as RBK
        v = torch.randn(1 << 26, device="cuda", generator=g)
        yield "rle encode", lambda: RLE.encode(s)
        yield "reduce_by_key", lambda: RBK.reduce_by_key(s, v, "sum")
    elif name == "long_rows":
        # many rows longer than sort_rows takes: one segmented sort (sort_segments)
        for b, length in ((512, 8192), (4096, 4608)):
            r = torch.randn(b, length, device="cuda", generator=g)
            yield f"sort rows {b}x{length}", lambda r=r: ops.sort(r)
    elif name == "topk64":
        # top-k of 64-bit rows and segments by the sort routes (topk._WIDE_ROWS_BY_SORT / _WIDE_SEGMENTS_BY_SORT)
        from tritoncub.device import segmented_sort as ss
        r = torch.randint(-(1 << 62), 1 << 62, (1024, 4096), device="cuda", generator=g)
        lengths = torch.randint(1000, 4097, (1024,), generator=torch.Generator().manual_seed(1024))
        offs = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).cuda()
        x = torch.randint(-(1 << 62), 1 << 62, (int(lengths.sum()),), device="cuda", generator=g)
        pos = torch.arange(x.numel(), device="cuda")
        yield "topk int64 rows 1024x4096 k=16", lambda: ops.topk(r, 16)
        yield "sort_rows int64 1024x4096 (for scale)", lambda: ops.sort(r)
        yield "segmented_topk int64 1024 x 1000-4096 k=16", lambda: ops.segmented_topk(x, offs, 16)
        yield "segmented_sort_pairs int64 1024 x 1000-4096 (for scale)", \
            lambda: ss.segmented_sort_pairs(x, pos, offs[:-1], offs[1:], descending=True)
        pos32 = pos.to(torch.int32)
        yield "segmented_sort_pairs int64 + int32 values 1024 x 1000-4096 (for scale)", \
            lambda: ss.segmented_sort_pairs(x, pos32, offs[:-1], offs[1:], descending=True)
        yield "segmented_sort keys only int64 1024 x 1000-4096 (for scale)", \
            lambda: ss.segmented_sort(x, offs[:-1], offs[1:], descending=True)
        yield "torch.topk int64 rows 1024x4096 k=16", lambda: torch.topk(r, 16)
    elif name == "segmented":
        # the benchmark's ragged case: 100k power-law segments, 2^26 keys
        from bench.bench_segmented import _power_law_offsets
        from tritoncub.device import segmented_sort as ss
        offs = torch.as_tensor(_power_law_offsets(100_000, 1 << 26), device="cuda")
        keys = torch.randn(1 << 26, device="cuda", generator=g)
        vals = torch.arange(1 << 26, device="cuda", dtype=torch.int32)
        yield "segmented_sort keys", lambda: ss.segmented_sort(keys, offs)
        yield "segmented_sort pairs", lambda: ss.segmented_sort_pairs(keys, vals, offs)
        yield "sort_pairs 2^26 fp32 + int32 (for scale)", lambda: torch.ops.tritoncub.sort(keys)


def main(names, flags=()):
    import time
    import triton.testing
    for name in names:
        for label, fn in _cases(name):
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            t_host = (time.perf_counter() - t0) / 20 * 1e3
            torch.cuda.synchronize()
            t_all = (time.perf_counter() - t0) / 20 * 1e3
            t_bench = triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")
            print(f"### {label}: do_bench {t_bench:.4f} ms, host {t_host:.4f} ms/call (returns), "
                  f"{t_all:.4f} ms/call incl. sync", flush=True)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA,
                                                    torch.profiler.ProfilerActivity.CPU]) as prof:
                for _ in range(5):
                    fn()
                torch.cuda.synchronize()
            print(f"=== {label} (5 calls)")
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=60))
            if "--cprofile" in flags:
                from _timing import host_profile_lines
                for title, col in (("cumulative", 3), ("own", 2)):
                    print(f"--- host time per call, {title} (us; 5 calls profiled)")
                    print("\n".join(host_profile_lines(fn, top=30, column=col)))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args or ["topk"], [a for a in sys.argv[1:] if a.startswith("--")])
