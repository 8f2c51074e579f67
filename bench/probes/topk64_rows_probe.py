"""Top-k of rows of 64-bit keys: the tile path (the row sorted whole in registers as (key, index) pairs)
against the block radix sort of the rows and the first k (``topk._WIDE_ROWS_BY_SORT``), in one process;
every result checked against torch first (a mismatch stops the probe); GPU time per call (profiler),
torch's alongside.

    PYTHONPATH=. python bench/probes/topk64_rows_probe.py \
        [rows-ab | rows-host | segments | segments-host | segments-bins | segments-ab]

``rows-ab``: int64 rows through the block radix sort, its first-k variant (``topk._WIDE_ROWS_FIRST_K``: one
launch writing each row's first k) against the sort of the whole rows and a copy of the first k, interleaved
(five rounds of do_bench each, medians), with GPU times and torch's.
``rows-host``: one row of 1000 int64 keys, k=1 (a host-bound call): do_bench and host time per idle call of
the tile path, the sort of the rows and the first-k kernel, torch's alongside, and a cProfile of the first-k
route's host work (cumulative and own time).
``segments``: segmented_topk of ragged segments of 64-bit keys (129-4096 keys each), the tile path against
the block radix sort's first k (``topk._WIDE_SEGMENTS_BY_SORT``; its log of 2026-12-02 timed an earlier form,
the whole segmented sort and a gather); torch's top-k of the same segments padded into rows
alongside (torch has no segmented top-k).
``segments-host``: the same segments' do_bench and host time per idle call of both routes, and a cProfile of the
sort route's host work.
``segments-bins``: int64 segments confined to one bin each (and two mixed layouts), both routes: do_bench
(L2 flushed), the wall time of one call after a sync (CUDA events), host time per idle call, GPU time;
then, for the mixed 129-1024 layout, each route's timeline of kernels (idle gaps show) and its host
functions by own time.
``segments-ab``: the same layouts, the two routes interleaved (five rounds of each, medians): do_bench and the
wall time of one call after a sync (the host's time varies by 2x from one run to the next).
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, event_ms, gpu_us, host_idle_us, host_profile_lines  # noqa: E402
from _switches import with_topk_value  # noqa: E402

ops = torch.ops.tritoncub
d = "cuda"
g = torch.Generator(device=d).manual_seed(3)
CASES = (((4096, 1000), 16), ((1024, 4096), 512), ((1024, 4096), 8), ((16384, 300), 8), ((32768, 256), 4),
         ((65536, 200), 50), ((1, 4096), 10), ((1, 1000), 1), ((64, 2048), 100))


def with_route(on, fn):
    return with_topk_value("_WIDE_ROWS_BY_SORT", on, fn)


def with_segments_route(on, fn):
    return with_topk_value("_WIDE_SEGMENTS_BY_SORT", on, fn)


def rows_ab(rounds=5):
    import statistics
    for shape, k in (((4096, 1000), 16), ((1024, 4096), 512), ((1024, 4096), 8), ((16384, 300), 8),
                     ((65536, 200), 50), ((1, 1000), 1)):
        x = torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g)
        fn = lambda: ops.topk(x, k)  # noqa: E731
        routes = {label: (lambda on=on: with_topk_value("_WIDE_ROWS_FIRST_K", on, fn))
                  for label, on in (("sort+copy", False), ("first-k", True))}
        ref = torch.topk(x, k)[0]
        for route in routes.values():
            v, i = route()
            assert torch.equal(v, ref) and torch.equal(x.gather(-1, i), v), (shape, k)
        times = {label: [] for label in routes}
        for _ in range(rounds):
            for label, route in routes.items():
                times[label].append(bench_ms(route) * 1e3)
        line = f"int64 {str(shape):13s} k={k:<4d}"
        for label, route in routes.items():
            line += f" | {label} do_bench {statistics.median(times[label]):7.1f} gpu {gpu_us(route):7.1f}"
        print(f"{line} | torch do_bench {bench_ms(lambda: torch.topk(x, k)) * 1e3:7.1f} "
              f"gpu {gpu_us(lambda: torch.topk(x, k)):7.1f} us", flush=True)


def rows_host():
    x = torch.randint(-(1 << 62), 1 << 62, (1, 1000), device=d, generator=g)
    fn = lambda: ops.topk(x, 1)  # noqa: E731
    routes = {"tile": lambda: with_route(False, fn),
              "sort+copy": lambda: with_topk_value("_WIDE_ROWS_FIRST_K", False, fn),
              "first-k": lambda: with_topk_value("_WIDE_ROWS_FIRST_K", True, fn),
              "torch": lambda: torch.topk(x, 1)}
    ref = torch.topk(x, 1)[0]
    for label, route in routes.items():
        v, i = route()
        assert torch.equal(v, ref) and torch.equal(x.gather(-1, i), v), label
        print(f"int64 (1, 1000) k=1 {label:10s} do_bench {bench_ms(route) * 1e3:7.1f} "
              f"host {host_idle_us(route, 50):7.1f} us", flush=True)
    for column, what in ((3, "cumulative"), (2, "own")):
        print(f"--- first-k route, host time per call by {what} time (us)")
        print("\n".join(host_profile_lines(routes["first-k"], calls=20, top=30, column=column)), flush=True)


def segments():
    for dtype in (torch.int64, torch.float64):
        for nseg, lo, hi in ((4096, 129, 1024), (1024, 1000, 4096), (16384, 129, 512)):
            lengths = torch.randint(lo, hi + 1, (nseg,), generator=torch.Generator().manual_seed(nseg))
            offs = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).to(d)
            n = int(lengths.sum())
            x = (torch.randn(n, device=d, generator=g, dtype=dtype) if dtype.is_floating_point else
                 torch.randint(-(1 << 62), 1 << 62, (n,), device=d, generator=g, dtype=dtype))
            lowest = float("-inf") if dtype.is_floating_point else torch.iinfo(dtype).min
            padded = torch.full((nseg, hi), lowest, device=d, dtype=dtype)
            col = torch.arange(hi, device=d)
            ln = lengths.to(d)
            padded[col[None, :] < ln[:, None]] = x
            for k in (16, 100):
                ref = torch.topk(padded, k)[0]
                line = f"{str(dtype)[6:]:8s} segments {nseg} x {lo}-{hi} k={k:<4d}"
                for label, on in (("tile", False), ("sort", True)):
                    v, i = with_segments_route(on, lambda: ops.segmented_topk(x, offs, k))
                    assert torch.equal(v, ref) and torch.equal(x[i], v), (dtype, nseg, k, label)
                    us = with_segments_route(on, lambda: gpu_us(lambda: ops.segmented_topk(x, offs, k)))
                    line += f" | {label} {us:8.1f}"
                print(f"{line} | torch (padded rows) {gpu_us(lambda: torch.topk(padded, k)):8.1f} us", flush=True)


def segments_host():
    for nseg, lo, hi in ((4096, 129, 1024), (1024, 1000, 4096)):
        lengths = torch.randint(lo, hi + 1, (nseg,), generator=torch.Generator().manual_seed(nseg))
        offs = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).to(d)
        x = torch.randint(-(1 << 62), 1 << 62, (int(lengths.sum()),), device=d, generator=g)
        line = f"int64 segments {nseg} x {lo}-{hi} k=16"
        for label, on in (("tile", False), ("sort", True)):
            fn = lambda: ops.segmented_topk(x, offs, 16)  # noqa: E731
            t = with_segments_route(on, lambda: (bench_ms(fn), host_idle_us(fn, 30), gpu_us(fn)))
            line += f" | {label} do_bench {t[0] * 1e3:7.1f} host {t[1]:7.1f} gpu {t[2]:7.1f}"
        print(line + " us", flush=True)
        lines = with_segments_route(True, lambda: host_profile_lines(lambda: ops.segmented_topk(x, offs, 16)))
        print("--- sort route, host time per call, cumulative (us)")
        print("\n".join(lines), flush=True)


BIN_LAYOUTS = ((4096, 129, 256), (4096, 257, 512), (2048, 513, 1024), (1024, 1025, 2048), (512, 2049, 4096),
               (4096, 129, 1024), (1024, 1000, 4096))


def int64_segments(nseg, lo, hi):
    """(keys, offsets) of ``nseg`` segments of ``lo`` to ``hi`` random int64 keys each."""
    lengths = torch.randint(lo, hi + 1, (nseg,), generator=torch.Generator().manual_seed(nseg + lo))
    offs = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).to(d)
    return torch.randint(-(1 << 62), 1 << 62, (int(lengths.sum()),), device=d, generator=g), offs


def segments_ab(rounds=5):
    import statistics
    for nseg, lo, hi in BIN_LAYOUTS:
        x, offs = int64_segments(nseg, lo, hi)
        fn = lambda: ops.segmented_topk(x, offs, 16)  # noqa: E731
        routes = {label: (lambda on=on: with_segments_route(on, fn)) for label, on in (("tile", False), ("sort", True))}
        ref = routes["tile"]()
        v, i = routes["sort"]()
        assert torch.equal(v, ref[0]) and torch.equal(x[i], v), (nseg, lo, hi)
        times = {(label, how): [] for label in routes for how in ("do_bench", "after-sync")}
        for _ in range(rounds):
            for label, route in routes.items():
                times[label, "do_bench"].append(bench_ms(route) * 1e3)
                times[label, "after-sync"].append(event_ms(route, 20, sync_each=True) * 1e3)
        line = f"int64 segments {nseg:5d} x {lo:4d}-{hi:4d} k=16"
        for (label, how), ts in times.items():
            line += f" | {label} {how} {statistics.median(ts):7.1f}"
        print(line + " us (medians of 5, interleaved)", flush=True)


def segments_bins():
    from topk_timeline import timeline
    for nseg, lo, hi in BIN_LAYOUTS:
        x, offs = int64_segments(nseg, lo, hi)
        fn = lambda: ops.segmented_topk(x, offs, 16)  # noqa: E731
        ref = with_segments_route(False, fn)
        line = f"int64 segments {nseg:5d} x {lo:4d}-{hi:4d} k=16"
        for label, on in (("tile", False), ("sort", True)):
            v, i = with_segments_route(on, fn)
            assert torch.equal(v, ref[0]) and torch.equal(x[i], v), (nseg, lo, hi, label)
            t = with_segments_route(on, lambda: (bench_ms(fn), event_ms(fn, sync_each=True) * 1e3,
                                                 host_idle_us(fn, 30), gpu_us(fn)))
            line += f" | {label} do_bench {t[0] * 1e3:7.1f} after-sync {t[1]:7.1f} host {t[2]:7.1f} gpu {t[3]:7.1f}"
        print(line + " us", flush=True)
        if (lo, hi) == (129, 1024):
            for label, on in (("tile", False), ("sort", True)):
                print(f"--- {label} route: timeline of 3 calls, each after an L2 flush")
                print("\n".join(with_segments_route(on, lambda: timeline(fn))), flush=True)
                print(f"--- {label} route: host time per call by own time (us)")
                print("\n".join(with_segments_route(on, lambda: host_profile_lines(fn, column=2))), flush=True)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    if sys.argv[1:] == ["rows-ab"]:
        return rows_ab()
    if sys.argv[1:] == ["rows-host"]:
        return rows_host()
    if sys.argv[1:] == ["segments"]:
        return segments()
    if sys.argv[1:] == ["segments-host"]:
        return segments_host()
    if sys.argv[1:] == ["segments-bins"]:
        return segments_bins()
    if sys.argv[1:] == ["segments-ab"]:
        return segments_ab()
    for dtype in (torch.int64, torch.float64):
        for shape, k in CASES:
            x = (torch.randn(shape, device=d, generator=g, dtype=dtype) if dtype.is_floating_point else
                 torch.randint(-(1 << 62), 1 << 62, shape, device=d, generator=g, dtype=dtype))
            ref = torch.topk(x, k)[0]
            line = f"{str(dtype)[6:]:8s} {str(shape):13s} k={k:<4d}"
            for label, on in (("tile", False), ("sort rows", True)):
                v, i = with_route(on, lambda: ops.topk(x, k))
                assert torch.equal(v, ref) and torch.equal(x.gather(-1, i), v), (dtype, shape, k, label)
                line += f" | {label} {with_route(on, lambda: gpu_us(lambda: ops.topk(x, k))):8.1f}"
            print(f"{line} | torch {gpu_us(lambda: torch.topk(x, k)):8.1f} us", flush=True)


if __name__ == "__main__":
    main()
