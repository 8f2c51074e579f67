"""BlockReduce and BlockScan (tritoncub.block.reduce, .scan) against numpy, every dtype.

One launch per dtype and tile shape runs every flavour: sum, min/max, a non-commutative operator
(``take_left``) where the order is defined, (value, index) argmin/argmax with NaN, partial tiles with
and without an identity, inclusive/exclusive (with init, reverse), aggregates and a running prefix
carried over two tiles. Float inputs are small integers so every sum is exact in fp16/bf16."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, DEVICE, _np, make_data, poisoned
from tritoncub.block.reduce import (block_argmax, block_argmin, block_max, block_min, block_reduce,
                                    block_reduce_pair, block_reduce_partial, block_reduce_valid, block_sum,
                                    combine_add, combine_argmin, combine_max, combine_min)
from tritoncub.block.scan import (block_exclusive_scan, block_exclusive_scan_aggregate,
                                  block_exclusive_scan_with_prefix, block_exclusive_sum,
                                  block_exclusive_sum_aggregate, block_inclusive_scan,
                                  block_inclusive_scan_aggregate, block_inclusive_scan_pair,
                                  block_inclusive_scan_with_prefix, block_inclusive_sum, block_shift_right)


@triton.jit
def _take_left(a, b):
    return a


@triton.jit
def _kernel(x_ptr, y_ptr, red_ptr, sums_ptr, scan_ptr, idx_ptr, valid, init,
            BT: tl.constexpr, IPT: tl.constexpr):
    TILE: tl.constexpr = BT * IPT
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    x = tl.load(x_ptr + slot)   # small integers (floats) / random (ints)
    y = tl.load(y_ptr + slot)   # adversarial: NaN, ±0, ±inf for floats
    tl.store(red_ptr + 0, block_reduce(x, combine_min))
    tl.store(red_ptr + 1, block_reduce(x, combine_max))
    tl.store(red_ptr + 2, block_min(x))
    tl.store(red_ptr + 3, block_max(x))
    tl.store(red_ptr + 4, block_reduce(x, combine_add))
    tl.store(red_ptr + 5, block_reduce_partial(x, valid, 0, combine_add))
    tl.store(red_ptr + 6, block_reduce_valid(x, valid, combine_max))
    tl.store(red_ptr + 7, block_reduce_valid(x, valid, _take_left))
    v, i = block_argmin(y)
    tl.store(red_ptr + 8, v)
    tl.store(idx_ptr + 0, i)
    v, i = block_argmax(y)
    tl.store(red_ptr + 9, v)
    tl.store(idx_ptr + 1, i)
    v, i = block_reduce_pair(y, slot, combine_argmin)
    tl.store(idx_ptr + 2, i)
    tl.store(sums_ptr + 0, block_sum(x))
    s, agg = block_inclusive_scan_aggregate(x, combine_max)
    tl.store(scan_ptr + 0 * TILE + slot, s)
    tl.store(red_ptr + 10, agg)
    tl.store(scan_ptr + 1 * TILE + slot, block_inclusive_sum(x))
    tl.store(scan_ptr + 2 * TILE + slot, block_exclusive_sum(x))
    tl.store(scan_ptr + 3 * TILE + slot, block_exclusive_scan(x, init, combine_min))
    tl.store(scan_ptr + 4 * TILE + slot, block_inclusive_sum(x, True))
    tl.store(scan_ptr + 5 * TILE + slot, block_exclusive_scan(x, init, combine_min, True))
    s, agg = block_exclusive_scan_aggregate(x, init, _take_left)
    tl.store(scan_ptr + 6 * TILE + slot, s)
    tl.store(red_ptr + 11, agg)
    s, agg = block_exclusive_sum_aggregate(x)
    tl.store(scan_ptr + 7 * TILE + slot, s)
    tl.store(red_ptr + 12, agg)
    s1, p1 = block_inclusive_scan_with_prefix(x, init, combine_add)
    s2, p2 = block_inclusive_scan_with_prefix(x, p1, combine_add)
    tl.store(scan_ptr + 8 * TILE + slot, s1)
    tl.store(scan_ptr + 9 * TILE + slot, s2)
    tl.store(red_ptr + 13, p2)
    e1, q1 = block_exclusive_scan_with_prefix(x, init, combine_add)
    e2, q2 = block_exclusive_scan_with_prefix(x, q1, combine_add)
    tl.store(scan_ptr + 10 * TILE + slot, e1)
    tl.store(scan_ptr + 11 * TILE + slot, e2)
    tl.store(red_ptr + 14, q2)
    tl.store(scan_ptr + 12 * TILE + slot, block_inclusive_scan(x, _take_left))
    tl.store(scan_ptr + 13 * TILE + slot, block_shift_right(x, init))
    sv, si = block_inclusive_scan_pair(y, slot, combine_argmin)
    tl.store(scan_ptr + 14 * TILE + slot, sv)
    tl.store(idx_ptr + 3 + slot, si)


def _wrap(a, dtype):
    a = np.asarray(a)
    if dtype.is_floating_point or dtype.itemsize == 8:
        return a.astype(_np(torch.zeros(1, dtype=dtype)).dtype)
    bits = 8 * dtype.itemsize
    a = a.astype(np.int64) % (1 << bits)
    if dtype.is_signed:
        a = np.where(a >= 1 << (bits - 1), a - (1 << bits), a)
    return a


def _argmin_ref(a, largest=False):
    """torch-style argmin/argmax: NaN wins, ties keep the first index."""
    if a.dtype.kind == "f" and np.isnan(a).any():
        return int(np.flatnonzero(np.isnan(a))[0])
    return int(np.argmax(a) if largest else np.argmin(a))


def _run(dtype, bt, ipt, valid):
    tile = bt * ipt
    if dtype.is_floating_point:
        x = torch.randint(-8, 9, (tile,)).to(dtype).to(DEVICE)
    else:
        x = make_data("random", tile, dtype)
    y = make_data("special" if dtype.is_floating_point else "few_unique", tile, dtype)
    red = poisoned(15, dtype)
    sum_dtype = {torch.int8: torch.int32, torch.int16: torch.int32, torch.uint8: torch.uint32,
                 getattr(torch, "uint16", None): torch.uint32}.get(dtype, dtype)
    sums = poisoned(1, sum_dtype)
    scans = poisoned(15 * tile, dtype)
    idx = poisoned(3 + tile, torch.int32)
    init = 3.0 if dtype.is_floating_point else 3
    _kernel[(1,)](x, y, red, sums, scans, idx, valid, init, BT=bt, IPT=ipt)
    xn, yn = _np(x), _np(y)
    wide = xn.astype(np.float64) if dtype.is_floating_point else xn.astype(np.int64)
    if dtype == getattr(torch, "uint64", None):
        wide = xn.astype(np.uint64)
    cast = lambda a: _wrap(a, dtype)  # noqa: E731
    r = _np(red)
    ix = _np(idx)
    eq = np.testing.assert_array_equal
    eq(r[0], xn.min(), "reduce min")
    eq(r[1], xn.max(), "reduce max")
    eq(r[2], xn.min(), "block_min")
    eq(r[3], xn.max(), "block_max")
    eq(r[4], cast(wide.sum()), "reduce add")
    eq(r[5], cast(wide[:valid].sum()), "reduce partial")
    eq(r[6], xn[:valid].max(), "reduce valid max")
    eq(r[7], xn[0], "reduce valid take_left")
    a = _argmin_ref(yn)
    eq(ix[0], a, "argmin index")
    eq(r[8:9], yn[a:a + 1], "argmin value")
    a = _argmin_ref(yn, largest=True)
    eq(ix[1], a, "argmax index")
    eq(r[9:10], yn[a:a + 1], "argmax value")
    eq(ix[2], _argmin_ref(yn), "reduce_pair argmin")
    eq(_np(sums)[0], _wrap(wide.sum(), sum_dtype), "block_sum")
    sc = _np(scans).reshape(15, tile)
    eq(sc[0], np.maximum.accumulate(xn), "inclusive max")
    eq(r[10], xn.max(), "inclusive max aggregate")
    inc = cast(np.cumsum(wide))
    eq(sc[1], inc, "inclusive sum")
    exc = np.concatenate([np.zeros(1, inc.dtype), inc[:-1]])
    eq(sc[2], exc, "exclusive sum")
    init_arr = np.array([init]).astype(xn.dtype)
    eq(sc[3], np.minimum.accumulate(np.concatenate([init_arr, xn]))[:-1], "exclusive min with init")
    eq(sc[4], cast(np.cumsum(wide[::-1])[::-1]), "reverse inclusive sum")
    rev = np.minimum.accumulate(np.concatenate([init_arr, xn[::-1]]))[:-1][::-1]
    eq(sc[5], rev, "reverse exclusive min with init")
    eq(sc[6], np.full(tile, init_arr[0]), "exclusive take_left: init everywhere")
    eq(r[11], xn[0], "exclusive take_left aggregate")
    eq(sc[7], exc, "exclusive sum (aggregate form)")
    eq(r[12], inc[-1], "exclusive sum aggregate")
    two = np.concatenate([wide, wide])
    run = cast(np.cumsum(two) + (init if not dtype.is_floating_point else float(init)))
    eq(sc[8], run[:tile], "inclusive with prefix, tile 1")
    eq(sc[9], run[tile:], "inclusive with prefix, tile 2")
    eq(r[13], run[-1], "running prefix after 2 tiles")
    run_ex = np.concatenate([cast(np.array([init])).astype(run.dtype), run[:-1]])
    eq(sc[10], run_ex[:tile], "exclusive with prefix, tile 1")
    eq(sc[11], run_ex[tile:], "exclusive with prefix, tile 2")
    eq(r[14], run[-1], "exclusive running prefix after 2 tiles")
    eq(sc[12], np.full(tile, xn[0]), "inclusive take_left")
    eq(sc[13], np.concatenate([init_arr, xn[:-1]]), "shift right")
    run_idx = np.array([_argmin_ref(yn[:k + 1]) for k in range(tile)])
    eq(ix[3:], run_idx, "running argmin index")
    eq(sc[14], yn[run_idx], "running argmin value")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_block_reduce_scan_dtypes(dtype):
    _run(dtype, 8, 4, 13)


@pytest.mark.parametrize("shape", [(32, 1), (1, 16), (16, 4)], ids=str)
def test_block_reduce_scan_shapes(shape):
    _run(torch.int32, *shape, shape[0] * shape[1] - 1)
    _run(torch.float32, *shape, 1)


@triton.jit
def _bool_sum_kernel(x_ptr, o_ptr, N: tl.constexpr, WHICH: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N)) != 0
    if WHICH == 0:
        y = block_inclusive_sum(x)
    elif WHICH == 1:
        y = block_exclusive_sum(x)
    else:
        y, _ = block_exclusive_sum_aggregate(x)
    tl.store(o_ptr + tl.arange(0, N), y.to(tl.int32))


@pytest.mark.parametrize("which", [0, 1, 2])
def test_sums_refuse_bool_tiles(which):
    # (a bool "sum" was an or under the interpreter and a parity compiled, and disagreed with block_sum)
    x = torch.tensor([1, 1, 0, 1], dtype=torch.int32, device=DEVICE)
    o = torch.zeros(4, dtype=torch.int32, device=DEVICE)
    with pytest.raises(Exception) as info:
        _bool_sum_kernel[(1,)](x, o, N=4, WHICH=which)
    # (compiled, the assertion's text is on the CompilationError's cause; interpreted, on the error itself)
    chain, e = [], info.value
    while e is not None:
        chain.append(str(e))
        e = e.__cause__
    assert any("no sum of a bool tile" in m for m in chain), chain
