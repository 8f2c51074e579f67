"""Timers shared by the probes (run as scripts: this directory is on ``sys.path``).

* :func:`bench_ms` — ``triton.testing.do_bench`` median in ms, L2 flushed, as ``python -m bench``;
* :func:`gpu_us` — GPU time per call in us from ``torch.profiler`` (no host time; ``match``: only the
  kernels whose name contains it);
* :func:`kernel_breakdown` — ``(name, us per call, launches per call)`` of every kernel of a call;
* :func:`host_ms` — host time per call in ms, calls queued back to back;
* :func:`host_idle_us` — host time of one call in us with the GPU idle before it (median);
* :func:`event_ms` — wall time per call in ms by CUDA events, back to back or each after a sync;
* :func:`host_profile_lines` — cProfile of a few calls: the functions with the most host time per call.
"""
import torch
import triton.testing


def bench_ms(fn, rep: int = 100) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=rep, return_mode="median")


def kernel_breakdown(fn, reps: int = 5):
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    return [(e.key, e.device_time_total / reps, e.count // reps) for e in prof.key_averages()
            if e.device_time_total > 0]


def gpu_us(fn, reps: int = 5, match: str | None = None) -> float:
    return sum(us for name, us, _ in kernel_breakdown(fn, reps) if match is None or match in name)


def host_ms(fn, calls: int = 20, warmup: int = 5) -> float:
    """Host time per call in ms with ``calls`` calls queued back to back (after ``warmup`` and a
    sync; the queue is drained afterwards)."""
    import time
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    ms = (time.perf_counter() - t0) / calls * 1e3
    torch.cuda.synchronize()
    return ms


def host_idle_us(fn, reps: int = 100) -> float:
    """Median host time in us of ``reps`` calls, each after a sync (the GPU idle: what one call of a
    host-bound op costs its caller)."""
    import time
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t)
    torch.cuda.synchronize()
    ts.sort()
    return ts[reps // 2] / 1e3


def event_ms(fn, reps: int = 50, sync_each: bool = False) -> float:
    """Median per-call wall time in ms of ``reps`` calls by CUDA events around each: back to back, or each
    after a sync (``sync_each``: the GPU idle before it, so a host-bound call's host time counts)."""
    import statistics
    times = []
    for _ in range(reps):
        if sync_each:
            torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        times.append((a, b))
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in times)


def host_profile_lines(fn, calls: int = 5, top: int = 25, column: int = 3) -> list:
    """cProfile of ``calls`` calls (after one, and a sync): the ``top`` functions by host time per call in us
    (``column`` 3: cumulative, 2: own), one line each: time, calls per call, ``file:line(function)``."""
    import cProfile
    import pstats
    fn()
    torch.cuda.synchronize()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    pr.disable()
    st = pstats.Stats(pr).stats   # {func: (cc, nc, tottime, cumtime, callers)}
    return [f"{v[column] / calls * 1e6:9.1f}  {v[1] / calls:7.1f}x  {file.split('/')[-1]}:{line}({name})"
            for (file, line, name), v in sorted(st.items(), key=lambda e: -e[1][column])[:top]]


def timing_line(fn, repeats: int = 3, reps: int = 5) -> str:
    """``repeats`` :func:`bench_ms` medians, then the GPU time per call and its four largest kernels."""
    ms = [bench_ms(fn) for _ in range(repeats)]
    kb = kernel_breakdown(fn, reps=reps)
    top = ", ".join(f"{name[:24]} {us:.1f}" for name, us, _ in sorted(kb, key=lambda e: -e[1])[:4])
    return " ".join(f"{m:.4f}" for m in ms) + f" ms  gpu {sum(u for _, u, _ in kb):.1f} us: {top}"


def interleaved_us(cases: dict, rounds: int = 3) -> dict:
    """``{name: [us, ...]}``: :func:`bench_ms` of every case in turn, ``rounds`` times over (so drift
    of the GPU's clocks or temperature spreads over all cases alike), printed one line per case."""
    times = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            times[name].append(bench_ms(fn) * 1e3)
    for name, ts in times.items():
        print(f"  {name:<44} {' '.join(f'{t:.1f}' for t in ts)} us", flush=True)
    return times
