"""BlockExchange (tritoncub.block.exchange): blocked <-> striped and scatter by rank, every dtype."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, _np, make_data, poisoned
from tritoncub.block.exchange import (block_blocked_to_striped, block_inverse_permutation,
                                      block_scatter_to_blocked, block_scatter_to_striped,
                                      block_striped_to_blocked, block_striped_to_flat)

def _adversarial(n, dtype):
    """``make_data("special")``, or random data where this torch lacks ``torch.where`` for the dtype
    (torch 2.11 has none for uint16/uint32/uint64)."""
    try:
        return make_data("special", n, dtype)
    except NotImplementedError:
        return make_data("random", n, dtype)



@triton.jit
def _kernel(x_ptr, rank_ptr, out_ptr, inv_ptr, BT: tl.constexpr, IPT: tl.constexpr):
    TILE: tl.constexpr = BT * IPT
    pid = tl.program_id(0)
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    x = tl.load(x_ptr + pid * TILE + slot)
    ranks = tl.load(rank_ptr + pid * TILE + slot)
    o = out_ptr + pid * 6 * TILE
    s = block_blocked_to_striped(x)
    tl.store(o + 0 * TILE + slot, s)
    tl.store(o + 1 * TILE + slot, block_striped_to_blocked(s))
    tl.store(o + 2 * TILE + tl.arange(0, TILE), block_striped_to_flat(s))
    tl.store(o + 3 * TILE + slot, block_scatter_to_blocked(x, ranks))
    tl.store(o + 4 * TILE + slot, block_scatter_to_striped(x, ranks))
    tl.store(o + 5 * TILE + slot, block_striped_to_blocked(x))
    tl.store(inv_ptr + pid * TILE + tl.arange(0, TILE), block_inverse_permutation(tl.reshape(ranks, (TILE,))))


def _check(dtype, bt, ipt, programs):
    tile = bt * ipt
    x = _adversarial(programs * tile, dtype)
    ranks = torch.stack([torch.randperm(tile) for _ in range(programs)]).to(torch.int32).to(DEVICE)
    out = poisoned(programs * 6 * tile, dtype)
    inv = poisoned(programs * tile, torch.int32)
    _kernel[(programs,)](x, ranks, out, inv, BT=bt, IPT=ipt)
    xn = _np(x).reshape(programs, tile)
    rn = _np(ranks).reshape(programs, tile)
    on = _np(out).reshape(programs, 6, tile)
    t, i = np.meshgrid(np.arange(bt), np.arange(ipt), indexing="ij")
    striped_item = (i * bt + t).reshape(-1)  # item held by striped slot (t, i)
    for p in range(programs):
        np.testing.assert_array_equal(on[p, 0], xn[p][striped_item], "blocked->striped")
        np.testing.assert_array_equal(on[p, 1], xn[p], "striped->blocked round trip")
        np.testing.assert_array_equal(on[p, 2], xn[p], "striped->flat")
        scattered = np.empty_like(xn[p])
        scattered[rn[p]] = xn[p]
        np.testing.assert_array_equal(on[p, 3], scattered, "scatter to blocked")
        np.testing.assert_array_equal(on[p, 4], scattered[striped_item], "scatter to striped")
        # x read as a striped tile: blocked slot (t, i) holds item t*ipt+i, which sits at striped slot
        # (item % bt, item // bt)
        item = np.arange(tile)
        np.testing.assert_array_equal(on[p, 5], xn[p][(item % bt) * ipt + item // bt], "striped->blocked")
        ref_inv = np.empty(tile, np.int64)
        ref_inv[rn[p]] = np.arange(tile)
        np.testing.assert_array_equal(_np(inv).reshape(programs, tile)[p], ref_inv, "inverse permutation")


# data movement is dtype-blind: one dtype of each width, and every float format (NaN payloads, -0.0)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int32, torch.uint64, torch.float16,
                                   torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_block_exchange_dtypes(dtype):
    _check(dtype, 8, 4, 2)


@pytest.mark.parametrize("shape", [(32, 1), (1, 16), (4, 8)], ids=str)
def test_block_exchange_shapes(shape):
    _check(torch.float32, *shape, 1)
