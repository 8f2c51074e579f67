"""BlockHistogram (tritoncub.block.histogram) over integer sample dtypes, out-of-range samples,
ragged tiles and composites across several programs, against numpy."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import INT_DTYPES, UINT_DTYPES, DEVICE, _np, make_data, poisoned
from tritoncub.block.histogram import block_histogram, block_histogram_composite


@triton.jit
def _kernel(x_ptr, out_ptr, acc_ptr, n, BT: tl.constexpr, IPT: tl.constexpr, BINS: tl.constexpr):
    TILE: tl.constexpr = BT * IPT
    pid = tl.program_id(0)
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    base = pid * TILE
    x = tl.load(x_ptr + base + slot, mask=base + slot < n, other=0)
    bins = tl.arange(0, BINS)
    tl.store(out_ptr + pid * 2 * BINS + bins, block_histogram(x, BINS, n - base))
    start = tl.full([BINS], 1, tl.int32)
    tl.store(out_ptr + (pid * 2 + 1) * BINS + bins, block_histogram_composite(x, start, BINS))
    tl.atomic_add(acc_ptr + bins, block_histogram(x, BINS, n - base))


@pytest.mark.parametrize("dtype", INT_DTYPES + UINT_DTYPES, ids=str)
@pytest.mark.parametrize("bins", [8, 256])
def test_block_histogram(dtype, bins):
    bt, ipt, programs = 16, 4, 3
    tile = bt * ipt
    n = programs * tile - 11
    # mostly in range, some out of range (negative / >= bins / huge)
    m = programs * tile
    raw = _np(make_data("random", m, dtype))  # mixed in numpy: torch 2.11 has no where() for uint16..64
    rng = np.random.default_rng()
    mixed = np.where(rng.random(m) < 0.7, rng.integers(0, bins, m).astype(raw.dtype), raw)
    x = torch.from_numpy(mixed)
    x = (x if x.dtype == dtype else x.to(dtype)).to(DEVICE)
    out = poisoned(programs * 2 * bins, torch.int32)
    acc = torch.zeros(bins, dtype=torch.int32, device=DEVICE)
    _kernel[(programs,)](x, out, acc, n, BT=bt, IPT=ipt, BINS=bins)
    xn = _np(x)
    on = _np(out).reshape(programs, 2, bins)
    total = np.zeros(bins, np.int64)
    for p in range(programs):
        seg = xn[p * tile:(p + 1) * tile]
        valid = seg[: max(0, min(tile, n - p * tile))]
        ref = np.bincount(valid[(valid >= 0) & (valid < bins)].astype(np.int64), minlength=bins)
        seg = seg.copy()
        seg[max(0, n - p * tile):] = 0  # the kernel's masked load fills past n with 0
        full = np.bincount(seg[(seg >= 0) & (seg < bins)].astype(np.int64), minlength=bins)
        np.testing.assert_array_equal(on[p, 0], ref, f"program {p} histogram")
        np.testing.assert_array_equal(on[p, 1], full + 1, f"program {p} composite")
        total += ref
    np.testing.assert_array_equal(_np(acc), total, "atomic merge")


@pytest.mark.parametrize("seed", range(6))
def test_count_halves_ptx_simulated(seed):
    # the PTX of smem_count_halves_if (16-bit shared-memory counters, run only by the GPU tests
    # otherwise), slot after slot on 32 lanes, the lanes taking the atomics in a random order: counters
    # that start just below the spill (both halves of a word, alone and together), flags off for some
    # lanes, many lanes on one counter. Every counter must end as start + adds - spill * (its spills),
    # below the spill, its neighbour untouched by carries, and each spill reported by exactly one add
    from ptx_sim import run_warp_ptx
    from tritoncub.block.histogram import _SPILL, count_halves_ptx
    g = torch.Generator().manual_seed(seed)
    counters, base = 8, 64          # 16-bit counters base .. base + 7: words base/2 .. base/2 + 3
    start = [_SPILL - 1, _SPILL - 2, 5, _SPILL - 1, 0, _SPILL - 32, _SPILL - 1, _SPILL - 3]
    smem = {2 * (base + c): start[c] | (start[c + 1] << 16) for c in range(0, counters, 2)}
    adds, spills = [0] * counters, [0] * counters
    for slot in range(12):
        if slot % 3 == 0:   # all lanes on one counter
            which = [int(torch.randint(0, counters, (1,), generator=g))] * 32
        else:
            which = torch.randint(0, counters if slot % 3 == 1 else 2, (32,), generator=g).tolist()
        flags = (torch.rand(32, generator=g) < 0.8).long().tolist()
        order = torch.randperm(32, generator=g).tolist()
        out = run_warp_ptx(count_halves_ptx(), [[base + c for c in which], flags], 1, smem, lane_order=order)[0]
        for c, f, o in zip(which, flags, out):
            assert o in (0, 1) and (f or not o)
            adds[c] += f
            spills[c] += o
    for c in range(counters):
        word = smem[2 * (base + c - c % 2)]
        half = (word >> (16 * (c % 2))) & 0xFFFF
        assert half < _SPILL and start[c] + adds[c] == half + _SPILL * spills[c], (c, half, adds[c], spills[c])
    assert sum(spills) >= 3   # (the starts force spills)
