"""torch.diff of 2^26 fp32 (one row) at 0.97x torch (0.188 ms against 0.182, a copy of the same bytes
0.182): does a cache hint or a persistent grid close the last 3%? Variants of the shipped rows kernel
(``_diff_rows_kernel``: item index division, both loads scalar, the store vectorised), each checked
against torch.diff first, timed as the bench times (do_bench medians, L2 flushed), three interleaved
repeats:

* ``evict``: loads with ``evict_first`` (the read is streamed once; the shifted load hits L1/L2);
* ``evict+cs``: also the store with the ``.cs`` (streaming) cache modifier;
* ``persistent``: 1-4 programs per SM looping over the tiles (loads of the next tile in flight while
  the current one is stored, ``num_stages``).

    PYTHONPATH=. python bench/probes/diff_cache_probe.py

Result (H100, ``bench/results/logs/diff_cache_probe-20261125.log``): no. The probe's copy of the
kernel launched with ``rows`` = 1 (a constexpr once Triton specialises it) took 211 us at the
policy's 1024/8w, the shipped op 188; the hints did not help it (evict_first 211, ``.cs`` stores
212-215, both 215; at 2048/4w and 4096/4w 227-327), and the persistent grids were slower still
(257-497 us). torch.diff 182-183, the copy 182. The op is left as it is.
"""
import torch
import triton
import triton.language as tl

import tritoncub  # noqa: F401  (registers torch.ops.tritoncub)
from _timing import interleaved_us


@triton.jit
def _diff_hint_kernel(x_ptr, out_ptr, rows, length, TILE: tl.constexpr, EVICT: tl.constexpr, CS: tl.constexpr):
    pid = tl.program_id(0)
    i = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    out_len = length - 1
    m = i < tl.cast(rows, tl.int64) * out_len
    r = i // out_len
    src = r * length + (i - r * out_len)
    a = tl.load(x_ptr + src + 1, mask=m, eviction_policy=EVICT)
    b = tl.load(x_ptr + src, mask=m, eviction_policy=EVICT)
    if CS:
        tl.store(out_ptr + i, a - b, mask=m, cache_modifier=".cs")
    else:
        tl.store(out_ptr + i, a - b, mask=m)


@triton.jit
def _diff_persistent_kernel(x_ptr, out_ptr, rows, length, TILE: tl.constexpr, STAGES: tl.constexpr):
    out_len = length - 1
    total = tl.cast(rows, tl.int64) * out_len
    n_tiles = tl.cdiv(total, TILE)
    for t in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0), num_stages=STAGES):
        i = t.to(tl.int64) * TILE + tl.arange(0, TILE)
        m = i < total
        r = i // out_len
        src = r * length + (i - r * out_len)
        a = tl.load(x_ptr + src + 1, mask=m)
        b = tl.load(x_ptr + src, mask=m)
        tl.store(out_ptr + i, a - b, mask=m)


n = 1 << 26
x = torch.randn(n, device="cuda")
ref = torch.diff(x)
out = torch.empty(n - 1, device="cuda")
src, dst = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
sms = torch.cuda.get_device_properties(0).multi_processor_count


def hint(tile, warps, evict, cs):
    def run():
        _diff_hint_kernel[(triton.cdiv(n - 1, tile),)](x, out, 1, n, TILE=tile, EVICT=evict, CS=cs, num_warps=warps)
        return out
    return run


def persistent(tile, warps, per_sm, stages):
    def run():
        _diff_persistent_kernel[(sms * per_sm,)](x, out, 1, n, TILE=tile, STAGES=stages, num_warps=warps)
        return out
    return run


cases = {"torch.diff": lambda: torch.diff(x), "copy of the bytes": lambda: dst.copy_(src),
         "ops.diff (shipped policy)": lambda: torch.ops.tritoncub.diff(x),
         "plain 1024/8w": hint(1024, 8, "", False)}
for tile, warps in ((1024, 8), (2048, 4), (4096, 4)):
    cases[f"evict {tile}/{warps}w"] = hint(tile, warps, "evict_first", False)
    cases[f"evict+cs {tile}/{warps}w"] = hint(tile, warps, "evict_first", True)
    cases[f"cs {tile}/{warps}w"] = hint(tile, warps, "", True)
for tile, warps, per_sm, stages in ((2048, 4, 4, 2), (4096, 8, 2, 2), (4096, 4, 4, 3), (8192, 8, 2, 3)):
    cases[f"persistent {tile}/{warps}w {per_sm}/SM stages {stages}"] = persistent(tile, warps, per_sm, stages)

print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
for name, fn in cases.items():
    if not (name.startswith("torch") or name.startswith("copy")):
        out.fill_(float("nan"))
        assert torch.equal(fn()[: n - 1], ref), name
interleaved_us(cases)
