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
