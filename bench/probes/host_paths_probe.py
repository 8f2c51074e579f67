"""Where the host time of host-bound ops goes: by default three sorts (2^20 fp32 keys with indices,
``sort_rows`` of 32 x 32000 fp32, a batch of vocabulary logits, and the ragged segmented sort of the
bench: 100k power-law segments, 2^26 keys); by name also the syncing selections (unique_consecutive,
run-length encode, masked_select) at the select bench's sizes and at 2^20, ``unique`` past the
one-program path's sizes, and ``ops.sort`` of batches of
logits, descending (top-p sampling's sort; fp32 and bf16, 1 to 32 rows of 32000 or 128256). Per case: host time of one call with the GPU idle
(median of 100), host time per call queued back to back, GPU time per call (profiler), do_bench; then a
cProfile of the case by own time and cumulative time. Every result is checked against torch first.

    PYTHONPATH=. python bench/probes/host_paths_probe.py [--no-profile] [case ...]
    PYTHONPATH=OLD_TREE:. python bench/probes/host_paths_probe.py ...   # another tree's package (A/B)
"""
import cProfile
import io
import os
import pstats
import sys

import numpy as np
import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401,E402
from _timing import bench_ms, gpu_us, host_idle_us, host_ms, kernel_breakdown  # noqa: E402
from bench.bench_segmented import _power_law_offsets  # noqa: E402
from tritoncub.device import run_length_encode as RLE  # noqa: E402
from tritoncub.device import segmented_sort as ss  # noqa: E402

ops = torch.ops.tritoncub


def _sort20():
    x20 = torch.randn(1 << 20, device="cuda")
    ref_v, ref_i = torch.sort(x20, stable=True)
    v, i = ops.sort(x20, -1, False, False)
    assert torch.equal(v, ref_v) and torch.equal(i, ref_i)
    return lambda: ops.sort(x20, -1, False, False), lambda: torch.sort(x20)


def _rows():
    rows = torch.randn(32, 32000, device="cuda")
    v, i = ss.sort_rows(rows)
    rv, ri = torch.sort(rows, dim=-1, stable=True)
    assert torch.equal(v, rv) and torch.equal(i, ri)
    return lambda: ss.sort_rows(rows), lambda: torch.sort(rows, dim=-1)


def _ragged():
    offs_np = _power_law_offsets(100_000, 1 << 26)
    offs = torch.as_tensor(offs_np, device="cuda")
    keys = torch.randn(1 << 26, device="cuda")
    out = ss.segmented_sort(keys, offs)
    seg = torch.repeat_interleave(torch.arange(100_000, device="cuda"),
                                  torch.as_tensor(np.diff(offs_np), device="cuda"))
    _, p = torch.sort(keys, stable=True)
    _, q = torch.sort(seg[p], stable=True)
    assert torch.equal(out, keys[p[q]])
    return lambda: ss.segmented_sort(keys, offs), None


def _runs(n, distinct):
    """Sorted int32 keys in about ``distinct`` runs (as the select bench's run-head cases)."""
    return torch.sort(torch.randint(0, distinct, (n,), device="cuda", dtype=torch.int32)).values


def _unique_consecutive(n, distinct, counts=False):
    def make():
        x = _runs(n, distinct)
        got = ops.unique_consecutive(x, False, counts)
        ref = torch.unique_consecutive(x, return_counts=True)
        assert torch.equal(got[0], ref[0]) and (not counts or torch.equal(got[2], ref[1]))
        return (lambda: ops.unique_consecutive(x, False, counts),
                lambda: torch.unique_consecutive(x, return_counts=counts))
    return make


def _rle(n, distinct):
    def make():
        x = _runs(n, distinct)
        u, lengths, k = RLE.encode(x)
        rv, rc = torch.unique_consecutive(x, return_counts=True)
        assert int(k) == rv.numel() and torch.equal(u[:int(k)], rv) and torch.equal(lengths[:int(k)].long(), rc)
        return lambda: RLE.encode(x), lambda: torch.unique_consecutive(x, return_counts=True)
    return make


def _masked_select(n, density):
    def make():
        x = torch.randn(n, device="cuda")
        m = torch.rand(n, device="cuda") < density
        assert torch.equal(ops.masked_select(x, m), torch.masked_select(x, m))
        return lambda: ops.masked_select(x, m), lambda: torch.masked_select(x, m)
    return make


def _unique(n, hi, dtype, flags):
    """``ops.unique`` of ``n`` keys drawn from ``[0, hi)`` (sorted; ``flags``: inverse and counts)."""
    def make():
        x = torch.randint(0, hi, (n,), device="cuda").to(dtype)
        got = ops.unique(x, True, flags, flags)
        ref = torch.unique(x, return_inverse=True, return_counts=True)
        assert torch.equal(got[0], ref[0])
        if flags:
            assert torch.equal(got[1], ref[1]) and torch.equal(got[2], ref[2])
        return (lambda: ops.unique(x, True, flags, flags),
                lambda: torch.unique(x, return_inverse=flags, return_counts=flags))
    return make


def _logits(b, v, dtype):
    """``ops.sort`` of a batch of vocabulary logits, descending (top-p sampling's sort)."""
    def make():
        x = (torch.randn(b, v, device="cuda") * 3).to(dtype)
        got = ops.sort(x, -1, True, False)
        ref = torch.sort(x, dim=-1, descending=True, stable=True)
        assert torch.equal(got[0], ref[0]) and torch.equal(got[1], ref[1])
        return lambda: ops.sort(x, -1, True, False), lambda: torch.sort(x, dim=-1, descending=True)
    return make


cases = {
    "sort 2^20 fp32": _sort20,
    "sort_rows 32x32000": _rows,
    "segmented_sort 100k power law": _ragged,
    "unique_consecutive 2^26 1M runs": _unique_consecutive(1 << 26, 1 << 20),
    "unique_consecutive+counts 2^26": _unique_consecutive(1 << 26, 1 << 20, True),
    "unique_consecutive 2^20": _unique_consecutive(1 << 20, 1 << 14),
    "rle encode 2^26 1M runs": _rle(1 << 26, 1 << 20),
    "masked_select 2^26 50%": _masked_select(1 << 26, 0.5),
    "masked_select 2^20 1%": _masked_select(1 << 20, 0.01),
    "masked_select 2^26 1%": _masked_select(1 << 26, 0.01),
    "unique 16384 int32 < 100": _unique(16384, 100, torch.int32, False),
    "unique 65536 int32 < 65536 inv+counts": _unique(65536, 65536, torch.int32, True),
    "unique 6000 int64 < 2^40": _unique(6000, 1 << 40, torch.int64, False),
    "unique 6000 int64 < 2^40 inv+counts": _unique(6000, 1 << 40, torch.int64, True),
    "unique 65536 fp32 < 1000": _unique(65536, 1000, torch.float32, False),
    "unique 2^20 int32 < 2^20": _unique(1 << 20, 1 << 20, torch.int32, False),
    "unique 2^26 int32 < 2^20": _unique(1 << 26, 1 << 20, torch.int32, False),
    "unique 2^26 int32 < 2^20 inv+counts": _unique(1 << 26, 1 << 20, torch.int32, True),
    "unique 1000 int32 < 100 (one program)": _unique(1000, 100, torch.int32, False),
    "sort desc 1x128256 fp32": _logits(1, 128256, torch.float32),
    "sort desc 1x32000 fp32": _logits(1, 32000, torch.float32),
    "sort desc 32x32000 bf16": _logits(32, 32000, torch.bfloat16),
    "sort desc 8x128256 bf16": _logits(8, 128256, torch.bfloat16),
}
PROFILE_ROWS = int(os.environ.get("PROFILE_ROWS", "22"))     # (rows and characters of each printed profile)
PROFILE_CHARS = int(os.environ.get("PROFILE_CHARS", "5000"))
args = [a for a in sys.argv[1:] if a != "--no-profile"]
want = args or list(cases)[:3]
made = {name: cases[name]() for name in want}
print("checked against torch", flush=True)
print(f"{torch.cuda.get_device_name()} torch {torch.__version__}, tritoncub from {tritoncub.__file__}")
for name in want:
    fn, tfn = made[name]
    line = (f"{name:30s} host(idle) {host_idle_us(fn):8.1f} us  host(queued) {host_ms(fn, 50) * 1e3:8.1f} us  "
            f"gpu {gpu_us(fn):8.1f} us  do_bench {bench_ms(fn) * 1e3:8.1f} us")
    if tfn is not None:
        line += (f" | torch host(idle) {host_idle_us(tfn):7.1f} gpu {gpu_us(tfn):7.1f} "
                 f"do_bench {bench_ms(tfn) * 1e3:7.1f}")
    print(line, flush=True)
    print("    kernels (us per call, launches): " + ", ".join(
        f"{k[:40]} {us:.1f} x{c}" for k, us, c in kernel_breakdown(fn)), flush=True)
for name in want if "--no-profile" not in sys.argv else ():
    fn = made[name][0]
    reps = 200 if "segmented" not in name else 20
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(reps):
        fn()
        torch.cuda.synchronize()
    pr.disable()
    for order in ("tottime", "cumulative"):
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats(order).print_stats(PROFILE_ROWS)
        print(f"== {name}: cProfile of {reps} calls (each followed by a sync), by {order}")
        print(s.getvalue()[:PROFILE_CHARS], flush=True)
