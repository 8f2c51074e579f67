"""BlockDiscontinuity and BlockAdjacentDifference (tritoncub.block.discontinuity,
.adjacent_difference) over several tiles with the neighbour tile's edge items, against numpy."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, DEVICE, _np, make_data, poisoned
from tritoncub.block.adjacent_difference import block_subtract_left, block_subtract_right
from tritoncub.block.discontinuity import (block_flag_heads, block_flag_heads_and_tails, block_flag_tails)


@triton.jit
def _greater(a, b):
    return a > b


@triton.jit
def _kernel(x_ptr, flags_ptr, diff_ptr, n, valid, BT: tl.constexpr, IPT: tl.constexpr):
    TILE: tl.constexpr = BT * IPT
    pid = tl.program_id(0)
    base = pid * TILE
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    x = tl.load(x_ptr + base + slot)
    has_pred = base > 0
    has_succ = base + TILE < n
    pred = tl.load(x_ptr + tl.maximum(base - 1, 0))
    succ = tl.load(x_ptr + tl.minimum(base + TILE, n - 1))
    f = flags_ptr + pid * 8 * TILE
    tl.store(f + 0 * TILE + slot, block_flag_heads(x).to(tl.int8))
    tl.store(f + 1 * TILE + slot, block_flag_heads(x, tile_predecessor_item=pred, has_predecessor=has_pred).to(tl.int8))
    tl.store(f + 2 * TILE + slot, block_flag_tails(x).to(tl.int8))
    tl.store(f + 3 * TILE + slot, block_flag_tails(x, tile_successor_item=succ, has_successor=has_succ).to(tl.int8))
    tl.store(f + 4 * TILE + slot, block_flag_tails(x, valid_items=valid).to(tl.int8))
    h, t = block_flag_heads_and_tails(x, _greater, pred, has_pred, succ, has_succ)
    tl.store(f + 5 * TILE + slot, h.to(tl.int8))
    tl.store(f + 6 * TILE + slot, t.to(tl.int8))
    d = diff_ptr + pid * 6 * TILE
    tl.store(d + 0 * TILE + slot, block_subtract_left(x))
    tl.store(d + 1 * TILE + slot, block_subtract_left(x, tile_predecessor_item=pred, has_predecessor=has_pred))
    tl.store(d + 2 * TILE + slot, block_subtract_left(x, valid_items=valid))
    tl.store(d + 3 * TILE + slot, block_subtract_right(x))
    tl.store(d + 4 * TILE + slot, block_subtract_right(x, tile_successor_item=succ, has_successor=has_succ))
    tl.store(d + 5 * TILE + slot, block_subtract_right(x, valid_items=valid))


def _run(dtype, bt, ipt, programs, valid):
    tile = bt * ipt
    n = programs * tile
    x = make_data("special" if dtype.is_floating_point else "few_unique", n, dtype)
    flags = poisoned(programs * 8 * tile, torch.int8)
    diff = poisoned(programs * 6 * tile, dtype)
    _kernel[(programs,)](x, flags, diff, n, valid, BT=bt, IPT=ipt)
    xt = x.cpu()
    xn = _np(xt)
    fl = _np(flags).reshape(programs, 8, tile)
    with np.errstate(invalid="ignore"):
        neq_prev = np.concatenate([[True], xn[1:] != xn[:-1]])       # global heads
        neq_next = np.concatenate([xn[:-1] != xn[1:], [True]])       # global tails
        gt_prev = np.concatenate([[True], xn[:-1] > xn[1:]])
        gt_next = np.concatenate([xn[:-1] > xn[1:], [True]])
    # differences in the dtype's own arithmetic, computed by torch on the CPU
    left = xt.clone()
    left[1:] = xt[1:] - xt[:-1] if dtype not in (torch.uint16, torch.uint32, torch.uint64) else \
        (xt[1:].to(torch.int64) - xt[:-1].to(torch.int64)).to(dtype) if dtype != torch.uint64 else \
        (xt[1:].view(torch.int64) - xt[:-1].view(torch.int64)).view(torch.uint64)
    ln = _np(left)
    dn = _np(diff).reshape(programs, 6, tile)
    eq = np.testing.assert_array_equal
    if dtype == torch.bfloat16:
        # the interpreter rounds float32 -> bfloat16 by truncation (the GPU rounds to nearest even)
        eq_diff = lambda a, b, msg: np.testing.assert_allclose(a, b, rtol=2 ** -7, err_msg=msg)  # noqa: E731
    else:
        eq_diff = eq
    for p in range(programs):
        s = slice(p * tile, (p + 1) * tile)
        local_heads = neq_prev[s].copy()
        local_heads[0] = True
        eq(fl[p, 0], local_heads, "heads, no predecessor")
        eq(fl[p, 1], neq_prev[s], "heads with predecessor")
        local_tails = neq_next[s].copy()
        local_tails[-1] = True
        eq(fl[p, 2], local_tails, "tails, no successor")
        eq(fl[p, 3], neq_next[s], "tails with successor")
        vt = local_tails.copy()
        vt[valid - 1] = True
        vt[valid:] = False
        eq(fl[p, 4], vt, "tails with valid_items")
        eq(fl[p, 5], gt_prev[s], "heads (a > b) with predecessor")
        eq(fl[p, 6], gt_next[s], "tails (a > b) with successor")
        local_left = ln[s].copy()
        local_left[0] = xn[s][0]
        eq_diff(dn[p, 0], local_left, "subtract left")
        eq_diff(dn[p, 1], ln[s], "subtract left with predecessor")
        partial = local_left.copy()
        partial[valid:] = xn[s][valid:]
        eq_diff(dn[p, 2], partial, "subtract left partial")
        # right differences: x[i] - x[i+1] = -(left[i+1]) computed directly
        xs = xt[s]
        xnext = torch.cat([xt[s][1:], xt[min((p + 1) * tile, n - 1)].reshape(1)])
        if dtype in (torch.uint16, torch.uint32):
            r = (xs.to(torch.int64) - xnext.to(torch.int64)).to(dtype)
        elif dtype == torch.uint64:
            r = (xs.view(torch.int64) - xnext.view(torch.int64)).view(torch.uint64)
        else:
            r = xs - xnext
        rn = _np(r)
        local_right = rn.copy()
        local_right[-1] = xn[s][-1]
        eq_diff(dn[p, 3], local_right, "subtract right")
        with_succ = rn.copy()
        if (p + 1) * tile >= n:
            with_succ[-1] = xn[s][-1]
        eq_diff(dn[p, 4], with_succ, "subtract right with successor")
        partial = rn.copy()
        partial[valid - 1:] = xn[s][valid - 1:]
        eq_diff(dn[p, 5], partial, "subtract right partial")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_discontinuity_and_adjacent_difference(dtype):
    _run(dtype, 8, 2, 3, 11)


def test_one_item_per_thread():
    _run(torch.int32, 32, 1, 2, 1)


@triton.jit
def _past_tile_kernel(x_ptr, flags_ptr, diff_ptr, valid, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(flags_ptr + tl.arange(0, N), block_flag_tails(x, valid_items=valid).to(tl.int8))
    tl.store(diff_ptr + tl.arange(0, N), block_subtract_right(x, valid_items=valid))


@pytest.mark.parametrize("valid", [8, 9, 100])
def test_valid_items_past_the_tile(valid):
    """valid_items >= the tile (a full tile given num_items - tile_base): the tile's last item ends it,
    as without valid_items and no successor (it used to compare the last item with itself)."""
    x = torch.tensor([1, 2, 2, 5, 7, 7, 8, float("nan")], device=DEVICE)
    flags, diff = poisoned(8, torch.int8), poisoned(8, torch.float32)
    _past_tile_kernel[(1,)](x, flags, diff, valid, N=8)
    np.testing.assert_array_equal(_np(flags), [1, 0, 1, 1, 0, 1, 1, 1])
    ref = _np(x.cpu())[:-1] - _np(x.cpu())[1:]
    np.testing.assert_array_equal(_np(diff)[:-1], ref)
    assert np.isnan(_np(diff)[-1])     # the last item unchanged (NaN), not x - x


@triton.jit
def _bool_diff_kernel(x_ptr, o_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N)) != 0
    tl.store(o_ptr + tl.arange(0, N), block_subtract_left(x, tile_predecessor_item=False).to(tl.int32))


def test_subtract_left_of_bool_tiles_is_xor():
    # (torch.diff's rule for bool; a - b of bools failed under the interpreter)
    x = torch.tensor([1, 1, 0, 1, 0, 0, 1, 1], dtype=torch.int32, device=DEVICE)
    o = torch.full((8,), 7, dtype=torch.int32, device=DEVICE)
    _bool_diff_kernel[(1,)](x, o, N=8)
    ref = torch.diff(torch.cat([torch.tensor([False]), x.cpu().bool()])).to(torch.int32)
    assert o.cpu().tolist() == ref.tolist()
