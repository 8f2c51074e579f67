"""sort_rows of many rows longer than MAX_BLOCK through the long-segment path: the segmented radix
sort (sort_segments, keys gathered/viewed, then an unpacking pass) against the composite-key sort
(segments_fit forced off), with torch.sort(dim=-1); do_bench, host time per call and GPU kernels.

    python bench/probes/sort_rows_long_paths_probe.py
"""
import torch, triton, triton.testing, time
import tritoncub  # noqa: F401
from tritoncub.device import radix_sort as rs, segmented_sort as ss
g = torch.Generator(device="cuda").manual_seed(0)
real = rs.segments_fit
for b, L in ((512, 8192), (1024, 16384)):
    x = torch.randn(b, L, device="cuda", generator=g)
    wv, wi = torch.sort(x, dim=-1, stable=True)
    for name, fit in (("segments", real), ("composite", lambda *a: False)):
        rs.segments_fit = fit
        v, i = ss.sort_rows(x)
        assert torch.equal(v, wv) and torch.equal(i, wi)
        for _ in range(3): ss.sort_rows(x)
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(20): ss.sort_rows(x)
        th = (time.perf_counter() - t0) / 20 * 1e3
        torch.cuda.synchronize(); ta = (time.perf_counter() - t0) / 20 * 1e3
        tb = triton.testing.do_bench(lambda: ss.sort_rows(x), warmup=20, rep=200, return_mode="median")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(5): ss.sort_rows(x)
            torch.cuda.synchronize()
        gpu = sum(e.self_device_time_total for e in prof.key_averages()) / 5 / 1e3
        print(f"sort_rows {b}x{L} {name}: do_bench {tb:.4f} ms, host {th:.4f} ms/call, with sync {ta:.4f}, GPU {gpu:.4f} ms", flush=True)
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=8, max_name_column_width=50))
    rs.segments_fit = real
    print(f"torch {b}x{L}: {triton.testing.do_bench(lambda: torch.sort(x, dim=-1), warmup=20, rep=200, return_mode='median'):.4f} ms")
