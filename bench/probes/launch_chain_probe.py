"""Launch chains (programmatic dependent launch, :mod:`tritoncub.agent.launch_chain`) on and off:
op times as ``python -m bench`` takes them (do_bench median, L2 flushed), interleaved, three repeats
each, the GPU time of the kernels (torch.profiler; a chained kernel's time counts from its early
launch) and one call's kernel timeline, for the multi-kernel ops that chain, in three settings
(:data:`SETTINGS`). Every result is checked against torch in each setting first.

    PYTHONPATH=. python bench/probes/launch_chain_probe.py [case-substring ...]
"""
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub.agent import launch_chain
from tritoncub.device import radix_sort as RS
from tritoncub.device import reduce_by_key as RBK
from tritoncub.device import run_length_encode as RLE
from _inputs import rbk_inputs, rbk_matches, select_inputs
from _timing import bench_ms, gpu_us

ops = torch.ops.tritoncub
n = 1 << 26


def cases():
    _, (x,), masks, (runs,) = select_inputs(n, (0.01, 0.5))
    ref_u, ref_c = torch.unique_consecutive(runs, return_counts=True)
    r = ref_u.numel()

    def rle_ok():
        u, lengths, nr = RLE.encode(runs)
        return int(nr) == r and torch.equal(u[:r], ref_u) and torch.equal(lengths[:r].long(), ref_c)

    def uc_ok():
        u, _, c = ops.unique_consecutive(runs, False, True)
        return torch.equal(u, ref_u) and torch.equal(c, ref_c)

    pairs, uk, sums = rbk_inputs(n, copies=1)
    yield "run-length encode", lambda: RLE.encode(runs), rle_ok
    yield "unique_consecutive with counts", lambda: ops.unique_consecutive(runs, False, True), uc_ok
    yield "unique_consecutive", lambda: ops.unique_consecutive(runs), \
        lambda: torch.equal(ops.unique_consecutive(runs)[0], ref_u)
    yield "reduce_by_key", lambda: RBK.reduce_by_key(*pairs[0], "sum"), \
        lambda: rbk_matches(RBK.reduce_by_key(*pairs[0], "sum"), uk, sums)
    for d in (0.01, 0.5):
        m = masks[d][0]
        yield f"masked_select {d:.0%}", lambda m=m: ops.masked_select(x, m), \
            lambda m=m: torch.equal(ops.masked_select(x, m), torch.masked_select(x, m))


def timeline(fn, reps: int = 3):
    """Kernel start and end times (us) of one call after an L2 flush, relative to the first kernel's
    start, as the profiler records them (a chained kernel starts when it is launched, before it waits)."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            cache.zero_()
            fn()
            torch.cuda.synchronize()
    evs = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                 key=lambda e: e.time_range.start)
    calls, cur = [], []
    for e in evs:
        if "FillFunctor<signed char>" in e.name:   # the flush
            if cur:
                calls.append(cur)
            cur = []
            continue
        cur.append(e)
    if cur:
        calls.append(cur)
    last = calls[-1]
    t0 = last[0].time_range.start
    return "; ".join(f"{e.name[:22]} {e.time_range.start - t0:.1f}-{e.time_range.end - t0:.1f}" for e in last)


def sort_cases():
    g = torch.Generator(device="cuda").manual_seed(1)
    for lg in (20, 22, 24, 28):
        k = torch.randint(0, 1 << 32, (1 << lg,), device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
        yield f"sort_keys uint32 2^{lg}", lambda k=k: RS.sort_keys(k), \
            lambda k=k: torch.equal(RS.sort_keys(k).view(torch.int32),
                                    torch.sort(k.long()).values.to(torch.uint32).view(torch.int32))
    for lg in (20, 24):
        x = torch.randn(1 << lg, device="cuda", generator=g)
        yield f"sort fp32 2^{lg} (values+indices)", lambda x=x: ops.sort(x), \
            lambda x=x: all(torch.equal(a, b) for a, b in zip(ops.sort(x), torch.sort(x, stable=True)))


#: (ENABLED, EARLY) of each setting: chained late (as shipped), chained early (every next kernel
#: launched once all programs have started), and each kernel on its own
SETTINGS = {"late": (True, False), "early": (True, True), "apart": (False, False)}


def _use(setting):
    launch_chain.ENABLED, launch_chain.EARLY = SETTINGS[setting]


def main(filters):
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    for name, fn, ok in list(cases()) + list(sort_cases()):
        if filters and not any(f in name for f in filters):
            continue
        res = {s: [] for s in SETTINGS}
        for s in SETTINGS:
            _use(s)
            assert ok(), f"{name}: wrong result ({s})"
        for _ in range(3):
            for s in SETTINGS:
                _use(s)
                res[s].append(bench_ms(fn) * 1e3)
        gpu = {}
        for s in SETTINGS:
            _use(s)
            gpu[s] = gpu_us(fn)
            print(f"  timeline {s}: {timeline(fn)}", flush=True)
        _use("late")
        print(f"{name}: " + "; ".join(f"{s} {' '.join(f'{v:.1f}' for v in res[s])} us (gpu {gpu[s]:.1f})"
                                      for s in SETTINGS), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
