"""WarpReduce and WarpScan (tritoncub.warp.reduce, .scan) against numpy.

One launch per (dtype, warp shape) checks every reduction and scan flavour at once: sum and min /
max / a non-commutative operator (``take_left``: the first item wins, so lane order shows; only
through the lane-ordered forms, since the full-warp ``tl.reduce`` path asks for a commutative
operator), full and
``valid_items``-partial, head- and tail-segmented, (value, index) pairs, inclusive / exclusive with
init and the aggregate; logical warps of power-of-two and other sizes padded in a power-of-two tile.
"""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, DEVICE, _np, make_data, poisoned
from tritoncub.warp.reduce import (warp_head_segmented_reduce, warp_reduce, warp_reduce_pair,
                                   warp_reduce_partial, warp_sum, warp_sum_partial,
                                   warp_tail_segmented_reduce)
from tritoncub.warp.scan import (warp_exclusive_scan, warp_exclusive_sum, warp_inclusive_scan,
                                 warp_inclusive_scan_init, warp_inclusive_sum,
                                 warp_segmented_inclusive_scan)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _min(a, b):
    return tl.minimum(a, b)


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _take_left(a, b):
    return a


@triton.jit
def _argmin(a, ai, b, bi):
    take_a = (a < b) | ((a == b) & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def _kernel(x_ptr, flag_ptr, valid_ptr, red_ptr, sums_ptr, scan_ptr, idx_ptr, init,
            WARPS: tl.constexpr, LANES: tl.constexpr, LWT: tl.constexpr):
    w = tl.arange(0, WARPS)
    t = tl.arange(0, LANES)
    slot = w[:, None] * LANES + t[None, :]
    x = tl.load(x_ptr + slot)
    flags = tl.load(flag_ptr + slot)
    valid = tl.load(valid_ptr + w)
    # [k, WARPS] reductions in the tile dtype
    tl.store(red_ptr + 0 * WARPS + w, warp_reduce(x, _min, LWT))
    tl.store(red_ptr + 1 * WARPS + w, warp_reduce(x, _max, LWT))
    tl.store(red_ptr + 2 * WARPS + w, warp_reduce_partial(x, LWT, _take_left))  # ordered full-warp form
    tl.store(red_ptr + 3 * WARPS + w, warp_reduce(x, _add, LWT))
    tl.store(red_ptr + 4 * WARPS + w, warp_reduce_partial(x, valid, _max))
    tl.store(red_ptr + 5 * WARPS + w, warp_reduce_partial(x, valid, _take_left))
    ai = tl.broadcast_to(t[None, :], (WARPS, LANES))
    v, i = warp_reduce_pair(x, ai, _argmin, LWT)
    tl.store(red_ptr + 6 * WARPS + w, v)
    tl.store(idx_ptr + w, i)
    # sums follow tl.sum's accumulator type
    tl.store(sums_ptr + 0 * WARPS + w, warp_sum(x, LWT))
    tl.store(sums_ptr + 1 * WARPS + w, warp_sum_partial(x, valid))
    # [k, WARPS, LANES] scans and segmented reductions
    T: tl.constexpr = WARPS * LANES
    s, agg = warp_inclusive_sum(x, LWT)
    tl.store(scan_ptr + 0 * T + slot, s)
    tl.store(red_ptr + 7 * WARPS + w, agg)
    s, agg = warp_exclusive_sum(x, LWT)
    tl.store(scan_ptr + 1 * T + slot, s)
    tl.store(red_ptr + 8 * WARPS + w, agg)
    s, agg = warp_inclusive_scan(x, _max, LWT)
    tl.store(scan_ptr + 2 * T + slot, s)
    tl.store(red_ptr + 9 * WARPS + w, agg)
    s, agg = warp_exclusive_scan(x, init, _min, LWT)
    tl.store(scan_ptr + 3 * T + slot, s)
    tl.store(red_ptr + 10 * WARPS + w, agg)
    s, agg = warp_inclusive_scan_init(x, init, _take_left, LWT)
    tl.store(scan_ptr + 4 * T + slot, s)
    tl.store(red_ptr + 11 * WARPS + w, agg)
    tl.store(scan_ptr + 5 * T + slot, warp_head_segmented_reduce(x, flags, _add, LWT))
    tl.store(scan_ptr + 6 * T + slot, warp_head_segmented_reduce(x, flags, _take_left, LWT))
    tl.store(scan_ptr + 7 * T + slot, warp_tail_segmented_reduce(x, flags, _add, LWT))
    tl.store(scan_ptr + 8 * T + slot, warp_tail_segmented_reduce(x, flags, _take_left, LWT))
    tl.store(scan_ptr + 9 * T + slot, warp_segmented_inclusive_scan(x, flags, _add))
    s, agg = warp_exclusive_scan(x, init, _take_left, LWT)
    tl.store(scan_ptr + 10 * T + slot, s)


def _seg_ids(heads):
    h = heads.copy()
    h[:, 0] = True
    return np.cumsum(h, axis=1) - 1


def _data(dtype, n):
    if dtype.is_floating_point:  # small integers: every sum below is exact in fp16 / bf16
        return torch.randint(-8, 9, (n,)).to(dtype).to(DEVICE)
    return make_data("random", n, dtype)


def _wrap(a, dtype):
    """numpy result reduced to the wrap-around arithmetic of ``dtype``, as ``_np`` represents it."""
    a = np.asarray(a)
    if dtype.is_floating_point or dtype.itemsize == 8:
        return a.astype(_np(torch.zeros(1, dtype=dtype)).dtype)
    bits = 8 * dtype.itemsize
    a = a.astype(np.int64) % (1 << bits)
    if dtype.is_signed:
        a = np.where(a >= 1 << (bits - 1), a - (1 << bits), a)
    return a


SHAPES = [(2, 32, 32), (3, 8, 5), (4, 4, 1), (1, 16, 13)]  # (WARPS, LANES, LOGICAL_WARP_THREADS)


CASES = ([(d, s) for s in SHAPES[:2] for d in ALL_DTYPES]
         + [(d, s) for s in SHAPES[2:] for d in (torch.int16, torch.float32, torch.uint64)])


@pytest.mark.parametrize("dtype,shape", CASES, ids=lambda v: str(v) if isinstance(v, torch.dtype) else
                         "w{}l{}t{}".format(*v))
def test_warp_reduce_scan(dtype, shape):
    failures = []

    def check(got, expect, what):
        try:
            np.testing.assert_array_equal(got, expect, what)
        except AssertionError as e:
            failures.append(f"{what}: {str(e).strip().splitlines()[-2:]}")

    _check_all(dtype, shape, check)
    assert not failures, f"{len(failures)} checks failed:\n" + "\n".join(failures)


def _check_all(dtype, shape, check):
    warps, lanes, lwt = shape
    if warps == 3:
        warps = 4  # power-of-two tile rows; the 3 is only in the id to vary shapes
    n = warps * lanes
    x = _data(dtype, n)
    flags = (torch.rand(n) < 0.3).to(torch.int32).to(DEVICE)
    valid = torch.randint(1, lwt + 1, (warps,), dtype=torch.int32).to(DEVICE)
    red = poisoned(12 * warps, dtype)
    sum_dtype = {torch.int8: torch.int32, torch.int16: torch.int32, torch.uint8: torch.uint32,
                 getattr(torch, "uint16", None): torch.uint32}.get(dtype, dtype)
    sums = poisoned(2 * warps, sum_dtype)
    scans = poisoned(11 * n, dtype)
    idx = poisoned(warps, torch.int32)
    init = 3.0 if dtype.is_floating_point else 3
    _kernel[(1,)](x, flags, valid, red, sums, scans, idx, init, WARPS=warps, LANES=lanes, LWT=lwt)

    xn = _np(x).reshape(warps, lanes)
    xv = xn[:, :lwt]
    wide = xv.astype(np.float64) if dtype.is_floating_point else xv.astype(np.int64)
    if dtype == getattr(torch, "uint64", None):
        wide = xv.astype(np.uint64)
    fl = _np(flags).reshape(warps, lanes)[:, :lwt] != 0
    vn = _np(valid)
    rd = _np(red).reshape(12, warps)
    cast = lambda a: _wrap(a, dtype)  # noqa: E731
    check(rd[0], xv.min(1), "min")
    check(rd[1], xv.max(1), "max")
    check(rd[2], xv[:, 0], "take_left")
    check(rd[3], cast(wide.sum(1)), "reduce add")
    check(rd[4], [xv[w, :vn[w]].max() for w in range(warps)], "partial max")
    check(rd[5], xv[:, 0], "partial take_left")
    check(rd[6], xv.min(1), "argmin value")
    check(_np(idx), xv.argmin(1), "argmin index")
    sn = _np(sums).reshape(2, warps)
    check(sn[0], _wrap(wide.sum(1), sum_dtype), "warp_sum")
    check(sn[1], _wrap(np.array([wide[w, :vn[w]].sum() for w in range(warps)]),
                                               sum_dtype), "warp_sum_partial")
    sc = _np(scans).reshape(11, warps, lanes)[:, :, :lwt]
    inc = cast(np.cumsum(wide, 1))
    check(sc[0], inc, "inclusive sum")
    check(rd[7], inc[:, -1], "inclusive sum aggregate")
    exc = np.concatenate([np.zeros((warps, 1), inc.dtype), inc[:, :-1]], 1)
    check(sc[1], exc, "exclusive sum")
    check(rd[8], inc[:, -1], "exclusive sum aggregate")
    check(sc[2], np.maximum.accumulate(xv, 1), "inclusive max")
    check(rd[9], xv.max(1), "inclusive max aggregate")
    init_col = np.full((warps, 1), init, dtype=xv.dtype)
    exmin = np.minimum.accumulate(np.concatenate([init_col, xv], 1), 1)[:, :-1]
    check(sc[3], exmin, "exclusive min with init")
    check(rd[10], xv.min(1), "exclusive min aggregate (no init)")
    check(sc[4], np.broadcast_to(init_col, xv.shape), "inclusive take_left with init")
    check(rd[11], xv[:, 0], "take_left aggregate")
    # segmented: head flags = flags; tail flags = flags
    heads = fl.copy()
    seg = _seg_ids(heads)
    tails = fl.copy()
    tseg = np.concatenate([np.zeros((warps, 1), np.int64), np.cumsum(tails[:, :-1], 1)], 1)
    for k, (ids, name) in enumerate([(seg, "head"), (tseg, "tail")]):
        tot = np.zeros_like(wide)
        first = np.zeros_like(xv)
        for w in range(warps):
            for s in np.unique(ids[w]):
                m = ids[w] == s
                tot[w, m] = wide[w, m].sum()
                first[w, m] = xv[w, m][0]
        check(sc[5 + 2 * k], cast(tot), f"{name}-segmented sum")
        check(sc[6 + 2 * k], first, f"{name}-segmented take_left")
    segscan = np.zeros_like(wide)
    for w in range(warps):
        for s in np.unique(seg[w]):
            m = seg[w] == s
            segscan[w, m] = np.cumsum(wide[w, m])
    check(sc[9], cast(segscan), "segmented inclusive sum")
    # init ⊕ x0 ⊕ ... with the first argument winning: every lane gets init (order check)
    check(sc[10], np.broadcast_to(init_col, xv.shape), "exclusive take_left")
