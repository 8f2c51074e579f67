"""BlockShuffle (tritoncub.block.shuffle): offset up/down, rotate, up/down by one with the edge item."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, _np, make_data, poisoned
from tritoncub.block.shuffle import (block_shuffle_down, block_shuffle_offset, block_shuffle_rotate,
                                     block_shuffle_up)

DISTANCES = [1, -1, 3, -5, 0, 40, -40]  # runtime distances, including beyond the tile

def _adversarial(n, dtype):
    """``make_data("special")``, or random data where this torch lacks ``torch.where`` for the dtype
    (torch 2.11 has none for uint16/uint32/uint64)."""
    try:
        return make_data("special", n, dtype)
    except NotImplementedError:
        return make_data("random", n, dtype)



@triton.jit
def _kernel(x_ptr, d_ptr, out_ptr, edge_ptr, fill, ND: tl.constexpr, BT: tl.constexpr, IPT: tl.constexpr):
    TILE: tl.constexpr = BT * IPT
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    x = tl.load(x_ptr + slot)
    for k in tl.static_range(ND):
        d = tl.load(d_ptr + k)
        tl.store(out_ptr + (2 * k) * TILE + slot, block_shuffle_offset(x, d, fill))
        tl.store(out_ptr + (2 * k + 1) * TILE + slot, block_shuffle_rotate(x, d))
    up, suffix = block_shuffle_up(x, fill)
    down, prefix = block_shuffle_down(x, fill)
    tl.store(out_ptr + (2 * ND) * TILE + slot, up)
    tl.store(out_ptr + (2 * ND + 1) * TILE + slot, down)
    tl.store(edge_ptr + 0, suffix)
    tl.store(edge_ptr + 1, prefix)


def _run(dtype, bt, ipt):
    tile = bt * ipt
    x = _adversarial(tile, dtype)
    d = torch.tensor(DISTANCES, dtype=torch.int32, device=x.device)
    out = poisoned((2 * len(DISTANCES) + 2) * tile, dtype)
    edge = poisoned(2, dtype)
    fill = 5.0 if dtype.is_floating_point else 5
    _kernel[(1,)](x, d, out, edge, fill, ND=len(DISTANCES), BT=bt, IPT=ipt)
    xn = _np(x)
    on = _np(out).reshape(-1, tile)
    fn = np.array([fill]).astype(xn.dtype)[0]
    i = np.arange(tile)
    for k, dist in enumerate(DISTANCES):
        src = i + dist
        inside = (src >= 0) & (src < tile)
        np.testing.assert_array_equal(on[2 * k], np.where(inside, xn[np.clip(src, 0, tile - 1)], fn), f"offset {dist}")
        np.testing.assert_array_equal(on[2 * k + 1], xn[(i + dist) % tile], f"rotate {dist}")
    np.testing.assert_array_equal(on[-2], np.concatenate([[fn], xn[:-1]]).astype(xn.dtype), "up")
    np.testing.assert_array_equal(on[-1], np.concatenate([xn[1:], [fn]]).astype(xn.dtype), "down")
    np.testing.assert_array_equal(_np(edge), np.array([xn[-1], xn[0]]), "suffix / prefix")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_shuffle_dtypes(dtype):
    _run(dtype, 8, 2)


def test_shuffle_one_item_per_thread():
    _run(torch.float32, 32, 1)


@triton.jit
def _rotate_literal_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), block_shuffle_rotate(x, -3))
    tl.store(out_ptr + N + tl.arange(0, N), block_shuffle_rotate(x, 11))


def test_shuffle_rotate_by_a_literal():
    """A distance written as an integer literal (``int % constexpr`` failed under the interpreter)."""
    x = make_data("random", 8, torch.int32)
    out = poisoned(16, torch.int32)
    _rotate_literal_kernel[(1,)](x, out, N=8)
    xn, i = _np(x), np.arange(8)
    np.testing.assert_array_equal(_np(out)[:8], xn[(i - 3) % 8])
    np.testing.assert_array_equal(_np(out)[8:], xn[(i + 11) % 8])
