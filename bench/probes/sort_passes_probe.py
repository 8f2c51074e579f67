"""Where the keys-only sort of 2^28 keys spends its time between kernels, and why its odd passes
ran ~70 us longer than its even ones (H100 timelines: 1532 / 1605 / 1526 / 1596 us).

1. ``first pass``: ``radix_sort.SPECULATIVE_FIRST_PASS`` on and off, interleaved (do_bench medians,
   L2 flushed, as ``python -m bench``), for sorts that read the digit counts back, with one call's
   kernel timeline each.
2. ``passes``: each pass kernel's duration (torch.profiler, median of 5 calls) for the library call,
   the double-buffer API, 3-place bit ranges, and a hand-driven sort (the library's kernels launched
   here) whose passes use the parity the library uses (``i % 2``, one set of status words), parity 0
   with the words zeroed before each pass, or one set of words per pass.

    PYTHONPATH=. python bench/probes/sort_passes_probe.py [first|passes]
"""
import statistics
import sys

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import radix_sort as RS
from tritoncub._utils import num_sms
from _timing import bench_ms
from launch_chain_probe import timeline

N = 1 << 28


def _ref_equal(out, k):
    return torch.equal(out.view(torch.int32), torch.sort(k.long()).values.to(torch.uint32).view(torch.int32)) \
        if k.dtype == torch.uint32 else torch.equal(out, torch.sort(k).values)


def first_pass():
    g = torch.Generator(device="cuda").manual_seed(3)
    u = torch.randint(0, 1 << 32, (N,), device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
    cases = [("uint32 2^28 uniform", u),
             ("int32 2^28 uniform", u.view(torch.int32)),
             ("fp32 2^28 uniform", torch.randn(N, device="cuda", generator=g)),
             ("uint32 2^25 uniform", u[: 1 << 25].clone()),
             ("uint32 2^28 equal", torch.full((N,), 7, device="cuda", dtype=torch.uint32)),
             ("uint32 2^28 small range (< 2^16)", (u.view(torch.int32) & 0xFFFF).view(torch.uint32)),
             ("fp32 2^28 widened from bf16", torch.randn(N, device="cuda", generator=g).bfloat16().float())]
    for name, k in cases:
        res = {True: [], False: []}
        for s in (True, False):
            RS.SPECULATIVE_FIRST_PASS = s
            assert _ref_equal(RS.sort_keys(k), k), (name, s)
        for _ in range(3):
            for s in (True, False):
                RS.SPECULATIVE_FIRST_PASS = s
                res[s].append(bench_ms(lambda: RS.sort_keys(k)))
        for s in (True, False):
            RS.SPECULATIVE_FIRST_PASS = s
            print(f"  timeline first-pass-{'early' if s else 'after'}: {timeline(lambda: RS.sort_keys(k))}", flush=True)
        RS.SPECULATIVE_FIRST_PASS = True
        print(f"{name}: first pass early " + " ".join(f"{v:.4f}" for v in res[True]) + " ms; after the read-back "
              + " ".join(f"{v:.4f}" for v in res[False]) + f" ms; Gkeys/s early {N / min(res[True]) / 1e6:.1f}"
              if k.numel() == N else
              f"{name}: first pass early " + " ".join(f"{v:.4f}" for v in res[True]) + " ms; after "
              + " ".join(f"{v:.4f}" for v in res[False]) + " ms", flush=True)


def pass_times(fn, reps: int = 5):
    """Median duration (us) of each ``_onesweep_gluon_kernel`` launch of one call, in launch order."""
    fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(reps):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        evs = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                      and "_onesweep_gluon_kernel" in e.name), key=lambda e: e.time_range.start)
        per_call.append([e.time_range.end - e.time_range.start for e in evs])
    return [statistics.median(c[i] for c in per_call) for i in range(len(per_call[0]))]


def hand_sort(k, out, alt, parity_mode):
    """The library's keys-only fast path for 32-bit keys, driven here: histogram, offsets, 4 passes.
    ``parity_mode``: "alternate" (as the library: one set of words, parity i % 2), "zero" (parity 0,
    the words zeroed before every pass), "sets" (parity 0, one zeroed set of words per pass)."""
    pol = policy.select("radix_sort", k.device, "default")
    rb, radix = 8, 256
    places = 4
    tile = pol["WARPS"] * pol["ITEMS"] * 32
    n_tiles = RS.cdiv(N, tile)
    hist_words = (2 * places + 1) * radix + places + 1
    hist = torch.zeros(hist_words, device="cuda", dtype=torch.int64)
    warps, items = pol["WARPS"], pol["HIST_ITEMS"]
    h_tiles = RS.cdiv(N, warps * items * 32)
    grid = (min(h_tiles, num_sms(k.device) * 4), 1)
    RS.launch(RS._histogram_gluon_kernel, grid, k, hist, N, h_tiles, 0, 32, NUM_PLACES=places, RADIX_BITS=rb,
              DESCENDING=False, WARPS=warps, ITEMS=items, SMEM_ROWS=1 << (places * warps - 1).bit_length(),
              COUNT_SPECIAL=False, num_warps=warps, PDL=0)
    RS.launch(RS._digit_offsets_kernel, (places, 1), hist, hist[(2 * places + 1) * radix:], N, 1, NUM_PLACES=places,
              RADIX=radix, ROWS_BLOCK=1, num_warps=4, PDL=0)
    sets = places if parity_mode == "sets" else 1
    status = torch.zeros(sets * n_tiles * radix, device="cuda", dtype=torch.int32)
    counters = torch.zeros(places, device="cuda", dtype=torch.int32)
    src = k
    for i in range(places):
        if parity_mode == "zero" and i > 0:
            status.zero_()
        dst = alt if i % 2 == 0 else out
        kw = RS._pass_kwargs(pol, k, 0, rb, False, False, tile, N, True)
        kw.update(PDL=0)
        kw.pop("launch_pdl", None)
        RS.launch(RS._onesweep_gluon_kernel, (n_tiles,), src, dst, k, k, status, counters, hist, N, i * rb, rb,
                  (i * n_tiles * radix) if parity_mode == "sets" else 0, i, (places + 1 + i) * radix,
                  (i % 2) if parity_mode == "alternate" else 0, 1, 0, 0, 0, **kw)
        src = dst
    return out


def passes():
    g = torch.Generator(device="cuda").manual_seed(4)
    k = torch.randint(0, 1 << 32, (N,), device="cuda", generator=g, dtype=torch.int64).to(torch.uint32)
    ref = torch.sort(k.long()).values.to(torch.uint32).view(torch.int32)
    a, b = torch.empty_like(k), torch.empty_like(k)

    def db():
        kdb = RS.DoubleBuffer(a, b)
        a.copy_(k)
        RS.sort_keys_double_buffer(kdb)
        return kdb.current

    cases = [("library sort_keys", lambda: RS.sort_keys(k), True),
             ("double buffer (one copy kernel first)", db, True),
             ("end_bit=24 (3 places)", lambda: RS.sort_keys(k, end_bit=24), False),
             ("begin_bit=8 (3 places)", lambda: RS.sort_keys(k, begin_bit=8), False)]
    for mode in ("alternate", "zero", "sets"):
        cases.append((f"hand-driven, parity {mode}", lambda mode=mode: hand_sort(k, a, b, mode), True))
    for name, fn, full in cases:
        if full:
            assert torch.equal(fn().view(torch.int32), ref), name
        t = pass_times(fn)
        print(f"{name}: passes " + " ".join(f"{x:.1f}" for x in t) + f" us (sum {sum(t):.1f})", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    what = sys.argv[1:] or ["first", "passes"]
    if "first" in what:
        first_pass()
    if "passes" in what:
        passes()
