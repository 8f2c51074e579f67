"""DeviceScan: prefix scans of a tensor along one dimension (CUB's ``DeviceScan``), and the torch
operators ``tritoncub::cumsum``, ``cumprod``, ``cummax``, ``cummin`` and ``logcumsumexp``.

Kernels:

* **single pass** (rows longer than the policy's ``ROWS_MAX_LEN``, including 1-D inputs): tiles of
  ``TILE_ITEMS`` items (for a small input, the smallest power of two, at least 512, that makes at most
  ``MIN_TILES`` tiles) taken in order from an atomic counter, chained by the decoupled look-back of
  :mod:`tritoncub.agent.lookback`. Each item is read once and written once. A batch of long rows is
  one launch: every row is a look-back *segment* (its first tile has no predecessor).
* **warp-synchronous single pass** (forward sums on NVIDIA GPUs, policy buckets ``sum`` / ``sum_det``
  for float32 / int32 accumulators, ``sum64`` / ``sum64_det`` for float64 / int64): the same scheme with CUB's warp-level tile scan, vector
  loads and stores, and a look-back of one read per tile (:func:`_scan_warp_sync_kernel`); logcumsumexp's
  float32 and float64 pairs (both directions) have one of their own on the same plan
  (:func:`_logcumsumexp_warp_sync_kernel`, buckets ``lse32``, ``lse64``).
* **rows** (short rows): each program scans ``BLOCK_R`` whole rows of ``BLOCK_C`` slots with one
  ``tl.associative_scan`` along the row, no look-back.
* **strided** (a dimension other than the last): each program walks ``BLOCK_I`` neighbouring
  columns down the scan dimension in chunks, carrying their prefixes, in place. When that leaves
  too few programs for a long scan dimension, the dimension is moved last (a copy) and the
  single-pass kernel runs instead.

**Operators.** ``combine_fn`` is any ``@triton.jit`` function: ``f(a, b)`` for one tensor, or
``f(a0, a1, b0, b1) -> (c0, c1)`` for a pair of tensors scanned together (``(value, index)`` for a
running argmax, ``(a, b)`` for the linear recurrence ``x[t] = a[t] * x[t-1] + b[t]``...), ``a``
being the earlier operand. It must be associative (the caller's responsibility: a non-associative
one gives results that depend on the tile size); it need not be commutative. Items are combined in
index order (``reverse=True``: from the last item, ``out[i] = x[i] ⊕ ... `` in the order
``x[n-1], x[n-2], ...``, i.e. ``flip(scan(flip(x)))``).

**Determinism.** Integer scans are exact. Float scans in the fast mode may differ in the last bits
between runs (where the look-back meets an inclusive prefix depends on timing). The reproducible
mode (``deterministic=True``, or ``torch.are_deterministic_algorithms_enabled()``) fixes the
association by the tile index (anchored look-back windows): bitwise identical results across runs
for the same shape, policy and GPU (the tile follows the input's size: ``MIN_TILES``). The rows and
strided kernels are deterministic in both modes, and so is the warp-synchronous sum when its policy
says ``ANCHORED`` (it does on sm_90: the anchored look-back was the faster one there, so the fast mode
uses it too).

**Tuning.** ``python bench/probes/scan_sweep.py`` on a GPU times tile shapes and look-back windows
(fast and reproducible modes, 32-bit, 64-bit and pair values, short rows), checks every config and
writes ``tritoncub/policies/<arch>/scan.json``; without that file the built-in values below apply.
"""
from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.language.extra import libdevice
from triton.experimental.gluon import language as gl

from .. import policy
from .._library import custom_op
from .. import _launch as _launch_module
from .._launch import (bind, direct_ok, launch, record_launches, recording_launches, relocatable, replay,
                       replays_ok)
from .._utils import (COMPLEX_DTYPES, FLOAT_DTYPES, KEPT_FOR_GRAPHS, UINT_DTYPES, InputTypeError, InputValueError, capturing, cdiv,
                      check_flag, check_init_value, check_jit_function, check_tensor, dtype_names,
                      grid_y_batches, inline_ptx_ok, interpreter_active, next_power_of_2, no_host_data, num_sms,
                      smem_atomics_ok, wrap_dim)
from ..agent.lookback import (LOOKBACK_AGGREGATE, LOOKBACK_INCLUSIVE, STATUS_HEADER_WORDS, allocate_status, bind_jit,
                              look_back, lookback_reduce, packed_layout, pair_look_back, pair_publish, publish,
                              segmented_combine, tile_index, value_look_back, value_publish)
from ..block.discontinuity import flag_inequality
from ..block.load import warp_striped_vector_offsets
from ..block.scan import block_shift_right
from ..warp.scan import striped_last_lane, striped_shift_up


# ----------------------------------------------------------------------------------------------
# Combine functions (torch's semantics)
# ----------------------------------------------------------------------------------------------

@triton.jit
def combine_add(a, b):
    return a + b


@triton.jit
def combine_mul(a, b):
    return a * b


@triton.jit
def combine_complex_mul(ar, ai, br, bi):
    """Complex products of ``(real, imaginary)`` pairs (torch.cumprod of complex tensors)."""
    return ar * br - ai * bi, ar * bi + ai * br


@triton.jit
def combine_cummax(a, ai, b, bi):
    """torch.cummax: the later item wins ties (``>=``); a NaN wins over numbers and a later NaN over
    an earlier one (torch's running-max rule, as an associative pair operator)."""
    take_b = (b != b) | ((a == a) & (b >= a))
    return tl.where(take_b, b, a), tl.where(take_b, bi, ai)


@triton.jit
def combine_cummin(a, ai, b, bi):
    """torch.cummin: the later item wins ties (``<=``); NaN as in :func:`combine_cummax`."""
    take_b = (b != b) | ((a == a) & (b <= a))
    return tl.where(take_b, b, a), tl.where(take_b, bi, ai)


#: compiled kernels take the math library's log1p (faster than the portable form below: H200, float32
#: logcumsumexp of 2^24 items 311 -> 256 us, bench/probes/logaddexp_combine_probe.py); the
#: interpreter has no libdevice
_LIB_LOG1P = tl.constexpr(not interpreter_active())


@triton.jit
def _log1p(e):
    """log(1 + e) without losing a small ``e`` (``e >= 0``)."""
    if _LIB_LOG1P:
        r = libdevice.log1p(e)
    else:
        # log(u) * e / (u - 1), u = 1 + e (exact where u rounds to 1)
        u = 1.0 + e
        one = u == 1.0
        r = tl.where(one, e, tl.log(u) * (e / tl.where(one, 1.0, u - 1.0)))
    return r


@triton.jit
def combine_logaddexp(a, b):
    """log(exp(a) + exp(b)) as torch's logcumsumexp: equal infinities give themselves, NaN spreads."""
    mx = tl.maximum(a, b)
    mn = tl.minimum(a, b)
    r = mx + _log1p(tl.exp(mn - mx))
    same_inf = (mn == mx) & (tl.abs(mn) == float("inf"))
    r = tl.where(same_inf, a, r)
    return tl.where((a != a) | (b != b), a + b, r)


@triton.jit
def combine_logsumexp_pair(m1, t1, m2, t2):
    """log-sum-exp as ``(m, t)`` pairs standing for ``m + log1p(t)``: ``m`` the running maximum, ``t``
    the sum of the other items' ``exp(x - m)`` (an item is ``(x, 0)``). One ``exp`` a combine and no
    log (:func:`combine_logaddexp` takes an exp and a log1p); the scan's output is ``m + log1p(t)``.
    ``t`` lies in ``[0, items - 1]``: no overflow, and a small ``t`` keeps its bits (``1 + t`` would
    round them away). Equal maxima (infinities too) add ``1 + t`` whole; NaN spreads through ``m``."""
    mx = tl.maximum(m1, m2)
    mn = tl.minimum(m1, m2)
    e = tl.exp(tl.where(m1 == m2, 0.0, mn - mx))
    first_big = m1 >= m2
    big = tl.where(first_big, t1, t2)
    small = tl.where(first_big, t2, t1)
    m = tl.where((m1 != m1) | (m2 != m2), m1 + m2, mx)
    return m, big + (small * e + e)


@triton.jit
def combine_linear_recurrence(a0, b0, a1, b1):
    """``(a, b)`` pairs of ``x[t] = a[t] * x[t-1] + b[t]``: composing two steps."""
    return a0 * a1, a1 * b0 + b1


@triton.jit
def _pick_last1(ka, a, kb, b):
    take_b = kb > ka
    return tl.maximum(ka, kb), tl.where(take_b, b, a)


@triton.jit
def _pick_last2(ka, a0, a1, kb, b0, b1):
    take_b = kb > ka
    return tl.maximum(ka, kb), tl.where(take_b, b0, a0), tl.where(take_b, b1, a1)


# ----------------------------------------------------------------------------------------------
# Tile helpers
# ----------------------------------------------------------------------------------------------

@triton.jit
def _extract(key, v0, v1, AXIS: tl.constexpr, NUM_VALUES: tl.constexpr):
    """The value(s) where ``key`` (int32 0/1) is 1, along ``AXIS``: an exact select, no arithmetic."""
    if NUM_VALUES == 1:
        _, r0 = tl.reduce((key, v0), AXIS, _pick_last1)
        r1 = r0
    else:
        _, r0, r1 = tl.reduce((key, v0, v1), AXIS, _pick_last2)
    return r0, r1


@triton.jit
def _combine(a0, a1, b0, b1, COMBINE: tl.constexpr, NUM_VALUES: tl.constexpr):
    if NUM_VALUES == 1:
        c0 = COMBINE(a0, b0)
        c1 = c0
    else:
        c0, c1 = COMBINE(a0, a1, b0, b1)
    return c0, c1


# Tile scan / reduce, bound per operator (``combine_fn`` is a global of the bound copy): handing the
# constexpr combine on to tl.reduce through the helpers failed to compile in this kernel (see
# tritoncub.agent.lookback).
def _tile_scan_t(x0, x1, AXIS: tl.constexpr, NUM_VALUES: tl.constexpr):
    if NUM_VALUES == 1:
        s0 = tl.associative_scan(x0, AXIS, combine_fn)  # noqa: F821
        s1 = s0
    else:
        s0, s1 = tl.associative_scan((x0, x1), AXIS, combine_fn)  # noqa: F821
    return s0, s1


def _tile_scan_plus_zero_t(x0, x1, AXIS: tl.constexpr, NUM_VALUES: tl.constexpr):
    # (logcumsumexp: every item gets + 0.0 first, so an item the scan copies through (a row's first) is
    # log(exp(x)) too, -0.0 coming out as +0.0 as torch's; every other value is unchanged)
    s0 = tl.associative_scan(x0 + 0.0, AXIS, combine_fn)  # noqa: F821
    return s0, s0


def _tile_reduce_t(x0, x1, AXIS: tl.constexpr, NUM_VALUES: tl.constexpr):
    if NUM_VALUES == 1:
        r0 = tl.reduce(x0, AXIS, combine_fn)  # noqa: F821
        r1 = r0
    else:
        r0, r1 = tl.reduce((x0, x1), AXIS, combine_fn)  # noqa: F821
    return r0, r1


@functools.lru_cache(maxsize=None)
def tile_ops(combine_fn, plus_zero=False):
    """``(SCAN, REDUCE)``: ``@triton.jit`` tile scan and reduce with ``combine_fn`` bound in;
    ``plus_zero`` (one value only): the scan adds 0.0 to each item first (-0.0 becomes +0.0)."""
    scan = bind_jit(_tile_scan_plus_zero_t if plus_zero else _tile_scan_t, combine_fn=combine_fn)
    return scan, bind_jit(_tile_reduce_t, combine_fn=combine_fn)


@triton.jit
def _load_items(ptr, idx, valid, FULL: tl.constexpr):
    if FULL:
        return tl.load(ptr + idx)
    else:
        return tl.load(ptr + idx, mask=valid, other=0)


@triton.jit
def _load_inputs(x0_ptr, x1_ptr, idx, pos, valid, ACC0: tl.constexpr, ACC1: tl.constexpr, NUM_VALUES: tl.constexpr,
                 X1_INDEX: tl.constexpr, BY_KEY: tl.constexpr, FULL: tl.constexpr, REVERSE: tl.constexpr, start=0,
                 idx_base=0, LSE: tl.constexpr = False):
    """The tile's items as accumulator values: ``x0`` (and ``x1``) at ``x_ptr + idx``, the items
    ``idx_base + idx`` of the row (the pointers come offset by ``idx_base``); ``start + pos`` is
    the position in scan order. ``X1_INDEX``: ``x1`` is the item index. ``BY_KEY``: ``x0_ptr``
    holds keys and ``x0`` becomes the segment-head flag. ``LSE``: ``x1`` is 0 (the ``(m, t)`` pairs of
    :func:`combine_logsumexp_pair`)."""
    if BY_KEY:
        k = _load_items(x0_ptr, idx, valid, FULL)
        if REVERSE:
            nb = idx + 1
        else:
            nb = idx - 1
        kp = tl.load(x0_ptr + nb, mask=valid & (start + pos > 0), other=0)
        x0 = (flag_inequality(kp, k) | (start + pos == 0)).to(tl.int32)
    else:
        x0 = _load_items(x0_ptr, idx, valid, FULL).to(ACC0)
    if NUM_VALUES == 2:
        if LSE:
            x1 = tl.zeros_like(x0)
        elif X1_INDEX:
            x1 = tl.broadcast_to((idx_base + idx).to(ACC1), x0.shape)
        else:
            x1 = _load_items(x1_ptr, idx, valid, FULL).to(ACC1)
    else:
        x1 = x0
    return x0, x1


@triton.jit
def _store_outputs(y0_ptr, y1_ptr, idx, valid, o0, o1, NUM_VALUES: tl.constexpr, STORE0: tl.constexpr,
                   FULL: tl.constexpr, LSE: tl.constexpr = False):
    """Store the scan's values (``LSE``: one output, ``m + log1p(t)`` of the ``(m, t)`` pairs)."""
    if LSE:
        o0 = o0 + _log1p(o1)
    if STORE0:
        if FULL:
            tl.store(y0_ptr + idx, o0.to(y0_ptr.dtype.element_ty))
        else:
            tl.store(y0_ptr + idx, o0.to(y0_ptr.dtype.element_ty), mask=valid)
    if NUM_VALUES == 2 and not LSE:
        if FULL:
            tl.store(y1_ptr + idx, o1.to(y1_ptr.dtype.element_ty))
        else:
            tl.store(y1_ptr + idx, o1.to(y1_ptr.dtype.element_ty), mask=valid)


@triton.jit
def _local_scan(x0, x1, k, AXIS: tl.constexpr, SCAN: tl.constexpr, NUM_VALUES: tl.constexpr,
                EXCLUSIVE: tl.constexpr, ONE_D: tl.constexpr = True):
    """The tile's own scan, before any prefix is known: the inclusive scan, or for an exclusive
    scan the inclusive one shifted by one item (slot ``k == 0`` is garbage until seeded).
    Returns ``(l0, l1, inc0, inc1)``."""
    inc0, inc1 = SCAN(x0, x1, AXIS, NUM_VALUES)
    l0, l1 = _shift_for_exclusive(inc0, inc1, k, x0, AXIS, EXCLUSIVE, ONE_D)
    return l0, l1, inc0, inc1


@triton.jit
def _shift_for_exclusive(inc0, inc1, k, x0, AXIS: tl.constexpr, EXCLUSIVE: tl.constexpr, ONE_D: tl.constexpr):
    """The local scan from the tile's inclusive scan (see :func:`_local_scan`)."""
    if EXCLUSIVE:
        if ONE_D:
            l0 = block_shift_right(inc0, tl.full((), 0, inc0.dtype))
            l1 = block_shift_right(inc1, tl.full((), 0, inc1.dtype))
        else:
            src = tl.broadcast_to(tl.maximum(k - 1, 0), x0.shape)
            l0 = tl.gather(inc0, src, AXIS)
            l1 = tl.gather(inc1, src, AXIS)
    else:
        l0 = inc0
        l1 = inc1
    return l0, l1


@triton.jit
def _seed_tile(l0, l1, heads, p0, p1, has_prefix, init0_ptr, init1_ptr, k, COMBINE: tl.constexpr,
               NUM_VALUES: tl.constexpr, EXCLUSIVE: tl.constexpr, HAS_INIT: tl.constexpr, BY_KEY: tl.constexpr):
    """Seed a tile's local scan ``l`` (from :func:`_local_scan`) with the prefix ``p`` of earlier
    items (when ``has_prefix``) and the initial value (``HAS_INIT``); ``k`` is the position along
    the scan axis in scan order, ``heads`` the segment heads of a scan by key."""
    if HAS_INIT:
        # (init in the prefix's shape: the rows and strided kernels pass tiles, and Triton's interpreter
        # mis-types a scalar comparison broadcast against a tile, so an operator that combines
        # comparisons with | or & failed there on a scalar init)
        s0 = tl.broadcast_to(tl.load(init0_ptr).to(l0.dtype), p0.shape)
        if BY_KEY:
            s0 = tl.zeros_like(s0)
        if NUM_VALUES == 2:
            s1 = tl.broadcast_to(tl.load(init1_ptr).to(l1.dtype), p1.shape)
        else:
            s1 = s0
        c0, c1 = _combine(s0, s1, p0, p1, COMBINE, NUM_VALUES)
        s0 = tl.where(has_prefix, c0, s0)
        s1 = tl.where(has_prefix, c1, s1)
        has_seed = True
    else:
        s0 = p0
        s1 = p1
        has_seed = has_prefix
    b0 = tl.broadcast_to(s0, l0.shape)
    b1 = tl.broadcast_to(s1, l1.shape)
    c0, c1 = _combine(b0, b1, l0, l1, COMBINE, NUM_VALUES)
    if EXCLUSIVE:
        first = k == 0
        o0 = tl.where(first, b0, c0)
        o1 = tl.where(first, b1, c1)
        if BY_KEY:
            # o1 is each item's exclusive prefix within its run (the heads restart the segmented
            # combine, init included); init (+) it: the segmented combine of two non-head pairs
            # is the user's combine
            init1 = tl.broadcast_to(tl.load(init1_ptr).to(l1.dtype), o1.shape)
            no_head = tl.zeros_like(o0)
            _, w1 = _combine(no_head, init1, no_head, o1, COMBINE, NUM_VALUES)
            o1 = tl.where(heads != 0, init1, w1.to(l1.dtype))
    else:
        o0 = tl.where(has_seed, c0, l0)
        o1 = tl.where(has_seed, c1, l1)
    return o0, o1


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------

# row_len / tiles_per_row / plane_stride only enter comparisons and the look-back: no
# specialisation on their divisibility (one compiled kernel for every length); the strides keep it
# (they decide the load alignment: a 1-D scan passes 0).
@triton.jit(do_not_specialize=["plane_stride", "row_len", "tiles_per_row"])
def _scan_single_pass_kernel(
        x0_ptr, x1_ptr, y0_ptr, y1_ptr, init0_ptr, init1_ptr, total0_ptr, total1_ptr,
        counter_ptr, status_ptr, plane_stride, row_len, stride_in, stride_out, tiles_per_row,
        ACC0: tl.constexpr, ACC1: tl.constexpr, COMBINE: tl.constexpr, SCAN: tl.constexpr, REDUCE: tl.constexpr,
        LB_REDUCE: tl.constexpr,
        NUM_VALUES: tl.constexpr, X1_INDEX: tl.constexpr, BY_KEY: tl.constexpr, STORE0: tl.constexpr,
        EXCLUSIVE: tl.constexpr, HAS_INIT: tl.constexpr, REVERSE: tl.constexpr, WRITE_TOTAL: tl.constexpr,
        DETERMINISTIC: tl.constexpr, PACKED: tl.constexpr,
        TILE_ITEMS: tl.constexpr, LOOKBACK_WINDOW: tl.constexpr, LSE: tl.constexpr = False):
    # 1. the tile, in start order (forward progress: predecessors have started)
    tile = tile_index(counter_ptr)
    row = tile // tiles_per_row
    t = tile - row * tiles_per_row
    first_tile = tile - t
    k = tl.arange(0, TILE_ITEMS)
    start = t * TILE_ITEMS                         # first position of the tile in scan order
    full = start + TILE_ITEMS <= row_len
    xin0 = x0_ptr + row * stride_in
    xin1 = x1_ptr + row * stride_in
    yout0 = y0_ptr + row * stride_out
    yout1 = y1_ptr + row * stride_out
    # 2. items, their scan and the aggregate: the scan's last valid item (garbage past the end of a
    #    ragged tile must not enter it, and a generic operator has no identity to pad with; nor is
    #    tl.reduce usable: on the GPU it may combine out of order, wrong for the non-commutative
    #    operators a scan allows). A full forward tile is addressed as scalar base + arange:
    #    unmasked, 16-byte vector accesses.
    if full:
        if REVERSE:
            x0, x1 = _load_inputs(xin0, xin1, row_len - 1 - (start + k), k, k >= 0, ACC0, ACC1, NUM_VALUES, X1_INDEX,
                                  BY_KEY, True, REVERSE, start, LSE=LSE)
        else:
            x0, x1 = _load_inputs(xin0 + start, xin1 + start, k, k, k >= 0, ACC0, ACC1, NUM_VALUES, X1_INDEX, BY_KEY,
                                  True, REVERSE, start, start, LSE=LSE)
    else:
        pos = start + k
        if REVERSE:
            idx = row_len - 1 - pos
        else:
            idx = pos
        x0, x1 = _load_inputs(xin0, xin1, idx, k, pos < row_len, ACC0, ACC1, NUM_VALUES, X1_INDEX, BY_KEY, False,
                              REVERSE, start, LSE=LSE)
    s0, s1 = SCAN(x0, x1, 0, NUM_VALUES)
    last = tl.minimum(row_len - start, TILE_ITEMS) - 1
    a0, a1 = _extract((k == last).to(tl.int32), s0, s1, 0, NUM_VALUES)
    # 3. publish the aggregate; the local scan is ready before waiting on predecessors: while the
    #    look-back spins only the scan (not the items as well) stays in registers
    has_prefix = t > 0
    if has_prefix:
        publish(status_ptr, plane_stride, tile, a0, a1, LOOKBACK_AGGREGATE, NUM_VALUES, PACKED)
    l0, l1 = _shift_for_exclusive(s0, s1, k, x0, 0, EXCLUSIVE, True)
    # 4. look back, publish the inclusive prefix
    p0 = a0
    p1 = a1
    i0 = a0
    i1 = a1
    if has_prefix:
        p0, p1 = look_back(status_ptr, plane_stride, tile, first_tile, a0, a1, COMBINE, LB_REDUCE, NUM_VALUES,
                           LOOKBACK_WINDOW, DETERMINISTIC, PACKED)
        i0, i1 = _combine(p0, p1, a0, a1, COMBINE, NUM_VALUES)
    publish(status_ptr, plane_stride, tile, i0, i1, LOOKBACK_INCLUSIVE, NUM_VALUES, PACKED)
    if WRITE_TOTAL:
        if t == tiles_per_row - 1:
            tl.store(total0_ptr + row, i0.to(total0_ptr.dtype.element_ty))
            if NUM_VALUES == 2:
                tl.store(total1_ptr + row, i1.to(total1_ptr.dtype.element_ty))
    # 5. seed the local scan with the prefix and store
    o0, o1 = _seed_tile(l0, l1, x0, p0, p1, has_prefix, init0_ptr, init1_ptr, k, COMBINE, NUM_VALUES, EXCLUSIVE,
                        HAS_INIT, BY_KEY)
    if full:
        if REVERSE:
            idx = row_len - 1 - (start + k)
            _store_outputs(yout0, yout1, idx, k >= 0, o0, o1, NUM_VALUES, STORE0, True, LSE)
        else:
            _store_outputs(yout0 + start, yout1 + start, k, k >= 0, o0, o1, NUM_VALUES, STORE0, True, LSE)
    else:
        pos = start + k
        if REVERSE:
            idx = row_len - 1 - pos
        else:
            idx = pos
        _store_outputs(yout0, yout1, idx, pos < row_len, o0, o1, NUM_VALUES, STORE0, False, LSE)


@triton.jit
def _scan_rows_kernel(
        x0_ptr, x1_ptr, y0_ptr, y1_ptr, init0_ptr, init1_ptr, total0_ptr, total1_ptr,
        n_rows, row_len, stride_in, stride_out,
        ACC0: tl.constexpr, ACC1: tl.constexpr, COMBINE: tl.constexpr, SCAN: tl.constexpr, REDUCE: tl.constexpr,
        NUM_VALUES: tl.constexpr, X1_INDEX: tl.constexpr, BY_KEY: tl.constexpr, STORE0: tl.constexpr,
        EXCLUSIVE: tl.constexpr, HAS_INIT: tl.constexpr, REVERSE: tl.constexpr, WRITE_TOTAL: tl.constexpr,
        BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, LSE: tl.constexpr = False):
    pid = tl.program_id(0).to(tl.int64)
    r = pid * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.arange(0, BLOCK_C)[None, :]
    valid = (r < n_rows) & (c < row_len)
    if REVERSE:
        col = row_len - 1 - c
    else:
        col = c
    x0, x1 = _load_inputs(x0_ptr + r * stride_in, x1_ptr + r * stride_in, col, c, valid, ACC0, ACC1, NUM_VALUES,
                          X1_INDEX, BY_KEY, False, REVERSE, LSE=LSE)
    l0, l1, inc0, inc1 = _local_scan(x0, x1, c, 1, SCAN, NUM_VALUES, EXCLUSIVE, False)
    o0, o1 = _seed_tile(l0, l1, x0, x0, x1, False, init0_ptr, init1_ptr, c, COMBINE, NUM_VALUES, EXCLUSIVE, HAS_INIT,
                        BY_KEY)
    _store_outputs(y0_ptr + r * stride_out, y1_ptr + r * stride_out, col, valid, o0, o1, NUM_VALUES, STORE0, False,
                   LSE)
    if WRITE_TOTAL:
        key = tl.broadcast_to((c == row_len - 1).to(tl.int32), inc0.shape)
        t0, t1 = _extract(key, inc0, inc1, 1, NUM_VALUES)
        rr = pid * BLOCK_R + tl.arange(0, BLOCK_R)
        tl.store(total0_ptr + rr, t0.to(total0_ptr.dtype.element_ty), mask=rr < n_rows)
        if NUM_VALUES == 2:
            tl.store(total1_ptr + rr, t1.to(total1_ptr.dtype.element_ty), mask=rr < n_rows)


@triton.jit
def _scan_strided_kernel(
        x0_ptr, x1_ptr, y0_ptr, y1_ptr, init0_ptr, init1_ptr, total0_ptr, total1_ptr,
        scan_len, inner, outer_base,
        ACC0: tl.constexpr, ACC1: tl.constexpr, COMBINE: tl.constexpr, SCAN: tl.constexpr, REDUCE: tl.constexpr,
        NUM_VALUES: tl.constexpr, X1_INDEX: tl.constexpr, BY_KEY: tl.constexpr, STORE0: tl.constexpr,
        EXCLUSIVE: tl.constexpr, HAS_INIT: tl.constexpr, REVERSE: tl.constexpr, WRITE_TOTAL: tl.constexpr,
        BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr, LSE: tl.constexpr = False):
    """A scan along a middle dimension of an ``[outer, scan_len, inner]`` tensor, in place (no
    transposing copies): program ``(i, o)`` walks ``BLOCK_I`` neighbouring columns of outer index
    ``o`` down the scan dimension in chunks of ``BLOCK_L`` rows, carrying each column's prefix (outer
    indices from ``outer_base`` on: grid axis 1 holds at most 65535)."""
    pid_i = tl.program_id(0)
    pid_o = tl.program_id(1).to(tl.int64) + outer_base
    cols = pid_i.to(tl.int64) * BLOCK_I + tl.arange(0, BLOCK_I)[None, :]   # (int64: inner past 2^31)
    cmask = cols < inner
    kk = tl.arange(0, BLOCK_L)[:, None]
    base = pid_o * scan_len * inner
    carry0 = tl.zeros((1, BLOCK_I), ACC0)
    carry1 = tl.zeros((1, BLOCK_I), ACC1)
    l_start = 0
    while l_start < scan_len:  # (a while loop: the interpreter cannot range() over a runtime bound)
        pos = l_start + kk
        valid = (pos < scan_len) & cmask
        if REVERSE:
            li = scan_len - 1 - pos
        else:
            li = pos
        offs = base + li.to(tl.int64) * inner + cols
        x0 = tl.load(x0_ptr + offs, mask=valid, other=0).to(ACC0)
        if NUM_VALUES == 2:
            if LSE:
                x1 = tl.zeros_like(x0)
            elif X1_INDEX:
                x1 = tl.broadcast_to(li.to(ACC1), x0.shape)
            else:
                x1 = tl.load(x1_ptr + offs, mask=valid, other=0).to(ACC1)
        else:
            x1 = x0
        has_prefix = l_start > 0
        l0, l1, inc0, inc1 = _local_scan(x0, x1, kk, 0, SCAN, NUM_VALUES, EXCLUSIVE, False)
        o0, o1 = _seed_tile(l0, l1, x0, carry0, carry1, has_prefix, init0_ptr, init1_ptr, kk, COMBINE, NUM_VALUES,
                            EXCLUSIVE, HAS_INIT, False)
        _store_outputs(y0_ptr, y1_ptr, offs, valid, o0, o1, NUM_VALUES, STORE0, False, LSE)
        last = tl.minimum(scan_len - l_start, BLOCK_L) - 1
        key = tl.broadcast_to((kk == last).to(tl.int32), inc0.shape)
        a0, a1 = _extract(key, inc0, inc1, 0, NUM_VALUES)
        a0 = a0[None, :]
        a1 = a1[None, :]
        n0, n1 = _combine(carry0, carry1, a0, a1, COMBINE, NUM_VALUES)
        carry0 = tl.where(has_prefix, n0, a0)
        carry1 = tl.where(has_prefix, n1, a1)
        l_start += BLOCK_L

    if WRITE_TOTAL:
        tl.store(total0_ptr + pid_o * inner + cols, carry0.to(total0_ptr.dtype.element_ty), mask=cmask)
        if NUM_VALUES == 2:
            tl.store(total1_ptr + pid_o * inner + cols, carry1.to(total1_ptr.dtype.element_ty), mask=cmask)


_STATE_STATUS = gl.constexpr(STATUS_HEADER_WORDS)


@gluon.jit
def _add_gl(a, b):
    return a + b


@gluon.jit
def _inclusive_exclusive_gl(ai, ae, bi, be):
    """Scan operator on ``(inclusive, exclusive)`` sum pairs: scanning ``(x, identity)`` gives both
    scans at once, with no subtraction (inexact for floats, NaN for infinities)."""
    return ai + bi, ai + be


@gluon.jit(do_not_specialize=["row_len", "tiles_per_row", "num_tiles"])
def _scan_warp_sync_kernel(
        x_ptr, y_ptr, init_ptr, total_ptr, state_ptr, row_len, stride_in, stride_out, tiles_per_row, num_tiles,
        ACC: gl.constexpr, BITS: gl.constexpr, IDENTITY_BITS: gl.constexpr, EXCLUSIVE: gl.constexpr,
        HAS_INIT: gl.constexpr, WRITE_TOTAL: gl.constexpr, DETERMINISTIC: gl.constexpr, WARPS: gl.constexpr,
        ITEMS: gl.constexpr, VEC: gl.constexpr, LOOKBACK_WINDOW: gl.constexpr, LOOKBACK_SLEEP: gl.constexpr,
        PROBE: gl.constexpr = 0):
    """The single-pass prefix *sum* (float32, int32, float64 or int64 accumulators ``ACC``; ``BITS``:
    the integer type of its width) with CUB's warp-synchronous tile scan (compiled NVIDIA kernels;
    ``DETERMINISTIC``: the anchored look-back). The tile is warp-striped in vectors: warp
    ``w`` holds ``ITEMS // VEC`` register slots of ``32 * VEC`` consecutive items, lane ``l`` the ``VEC``
    items ``l*VEC ..`` of each slot, so full tiles load and store with vector accesses. The scan runs
    within each lane's vector (registers), across the lanes of a slot (shuffles), along the slots
    (registers) and across the warps (shared memory); tiles are chained by
    :func:`~tritoncub.agent.lookback.value_look_back` (both modes). Every exclusive prefix is formed
    without subtraction, and padding is the identity, given by its bits ``IDENTITY_BITS`` (``-0.0``
    for floats: adding it is exact for every value; a float constant would lose its sign).
    ``PROBE`` (measurement only, wrong results): 1 skips the look-back."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    SLOTS: gl.constexpr = ITEMS // VEC
    L4: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1, VEC], [1, 1, 32, 1], [WARPS, 1, 1, 1], [3, 2, 1, 0])
    LS: gl.constexpr = gl.SliceLayout(3, L4)     # one value per (warp, slot, lane)
    # (scans take blocked layouts: LS3 places the values exactly as LS does, the conversion is free)
    LS3: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    LC: gl.constexpr = gl.BlockedLayout([WARPS, 1], [1, 32], [1, WARPS], [1, 0])   # every warp in each thread
    status_ptr = state_ptr + _STATE_STATUS   # (word 0: the tile counter)
    tile = gl.atomic_add(state_ptr, 1, sem="relaxed").to(gl.int32)
    row = tile // tiles_per_row
    t = tile - row * tiles_per_row
    first_tile = tile - t
    start = t.to(gl.int64) * TILE
    local, e4 = warp_striped_vector_offsets(L4, WARPS, SLOTS, VEC)
    rem = gl.minimum(row_len - start, TILE).to(gl.int32)
    xb = x_ptr + row.to(gl.int64) * stride_in + start
    yb = y_ptr + row.to(gl.int64) * stride_out + start
    ident4 = gl.full([WARPS, SLOTS, 32, VEC], IDENTITY_BITS, BITS, L4).to(ACC, bitcast=True)
    if rem == TILE:
        x = gl.load(xb + local).to(ACC)
    else:
        x = gl.where(local < rem, gl.load(xb + local, mask=local < rem).to(ACC), ident4)
    # the tile scan: lane vectors, lanes of a slot, slots, warps
    if EXCLUSIVE:
        e_inc, e_exc = gl.associative_scan((x, ident4), 3, _inclusive_exclusive_gl)
    else:
        e_inc = gl.associative_scan(x, 3, _add_gl)
    lane_total = gl.convert_layout(gl.sum(gl.where(e4 == VEC - 1, e_inc, ident4), 3), LS3)
    lane_inc = gl.associative_scan(lane_total, 2, _add_gl)
    ident3 = gl.full([WARPS, SLOTS, 32], IDENTITY_BITS, BITS, LS3).to(ACC, bitcast=True)
    lane_exc = striped_shift_up(lane_inc, ident3)
    slot_total = striped_last_lane(lane_inc)
    slot_inc, slot_exc = gl.associative_scan((slot_total, ident3), 1, _inclusive_exclusive_gl)
    s3 = gl.expand_dims(gl.expand_dims(gl.arange(0, SLOTS, layout=gl.SliceLayout(0, gl.SliceLayout(2, LS3))), 0), 2)
    warp_total = gl.convert_layout(gl.sum(gl.where(s3 == SLOTS - 1, slot_inc, ident3), 1), LC)
    identc = gl.full([WARPS, 32], IDENTITY_BITS, BITS, LC).to(ACC, bitcast=True)
    warp_inc, warp_exc = gl.associative_scan((warp_total, identc), 0, _inclusive_exclusive_gl)
    wc = gl.expand_dims(gl.arange(0, WARPS, layout=gl.SliceLayout(1, LC)), 1)
    agg = gl.max(gl.sum(gl.where(wc == WARPS - 1, warp_inc, identc), 0), 0)   # (the same in every lane)
    # the tile's prefix
    identity = gl.max(gl.max(identc, 0), 0)
    if DETERMINISTIC:
        inclusive_slot = num_tiles + tile   # (a second plane: the aggregates stay readable)
    else:
        inclusive_slot = tile
    if t == 0 or PROBE == 1:
        value_publish(status_ptr, inclusive_slot, agg, 2)
        prefix = identity
    else:
        value_publish(status_ptr, tile, agg, 1)
        prefix = value_look_back(status_ptr, tile, first_tile, num_tiles, identity, WARPS, LOOKBACK_WINDOW,
                                 LOOKBACK_SLEEP, DETERMINISTIC)
        value_publish(status_ptr, inclusive_slot, prefix + agg, 2)
    if WRITE_TOTAL:
        if t == tiles_per_row - 1:
            gl.store(total_ptr + row, (prefix + agg).to(total_ptr.dtype.element_ty))
    if HAS_INIT:
        prefix = gl.load(init_ptr).to(ACC) + prefix
    warp_seed = gl.convert_layout(prefix + warp_exc, gl.SliceLayout(1, LS3))
    lane_seed = gl.convert_layout((gl.expand_dims(warp_seed, 1) + slot_exc) + lane_exc, LS)
    if EXCLUSIVE:
        out = gl.expand_dims(lane_seed, 3) + e_exc
    else:
        out = gl.expand_dims(lane_seed, 3) + e_inc
    out = out.to(y_ptr.dtype.element_ty)
    if rem == TILE:
        gl.store(yb + local, out)
    else:
        gl.store(yb + local, out, mask=local < rem)


@gluon.jit
def _lse_inclusive_exclusive_gl(am, at, bm, bt, cm, ct, dm, dt):
    """Scan operator on ``(inclusive, exclusive)`` pairs of log-sum-exp pairs: scanning ``(x,
    identity)`` gives both scans at once (as :func:`_inclusive_exclusive_gl` for sums). (Gluon code calls
    the ``@triton.jit`` operator of the portable kernels: the same arithmetic in both.)"""
    im, it = combine_logsumexp_pair(am, at, cm, ct)
    em, et = combine_logsumexp_pair(am, at, dm, dt)
    return im, it, em, et


@gluon.jit
def _lse_last(v, mask, AXIS: gl.constexpr):
    """The item of ``v`` where ``mask`` along ``AXIS`` (one per line): a sum of it and zeros, exact but
    for a ``-0.0`` maximum read as ``+0.0``, which no output tells apart (a maximum of ``±0`` reaches
    an output through ``m + log1p(t)``, ``+0.0`` either way)."""
    return gl.sum(gl.where(mask, v, 0.0), AXIS)


@gluon.jit(do_not_specialize=["row_len", "tiles_per_row", "num_tiles"])
def _logcumsumexp_warp_sync_kernel(
        x_ptr, y_ptr, state_ptr, row_len, stride_in, stride_out, tiles_per_row, num_tiles,
        ACC: gl.constexpr, REVERSE: gl.constexpr, WARPS: gl.constexpr, ITEMS: gl.constexpr, VEC: gl.constexpr,
        LOOKBACK_WINDOW: gl.constexpr, LOOKBACK_SLEEP: gl.constexpr):
    """logcumsumexp of float32 or float64 accumulators (``ACC``) along rows (compiled NVIDIA kernels) with
    CUB's warp-synchronous tile scan, as :func:`_scan_warp_sync_kernel` arranges it, over the ``(m, t)``
    pairs of :func:`combine_logsumexp_pair`: each item is combined twice (in its lane's vector, then
    with its lane's seed), where ``tl.associative_scan``'s tile scan and the seeding took five
    combines an item. Tiles are chained by the anchored :func:`~tritoncub.agent.lookback.pair_look_back`
    (both modes: the association is fixed by the tile index, results repeat bit for bit). Padding and
    the prefix of a row's first tile are the identity ``(-inf, 0)`` (exact for every pair but those of
    maximum ``-inf``, whose ``t`` no output reads). ``REVERSE``: the row is scanned from its last item.
    Every access is a vector of ``VEC`` items (when the row's start is aligned to it)."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    SLOTS: gl.constexpr = ITEMS // VEC
    L4: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1, VEC], [1, 1, 32, 1], [WARPS, 1, 1, 1], [3, 2, 1, 0])
    LS: gl.constexpr = gl.SliceLayout(3, L4)
    LS3: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    LC: gl.constexpr = gl.BlockedLayout([WARPS, 1], [1, 32], [1, WARPS], [1, 0])
    status_ptr = state_ptr + _STATE_STATUS
    tile = gl.atomic_add(state_ptr, 1, sem="relaxed").to(gl.int32)
    row = tile // tiles_per_row
    t = tile - row * tiles_per_row
    first_tile = tile - t
    # the tile's items in memory: a reverse scan takes the row's tiles from the last and scans each from
    # its highest item down, so tiles stay aligned in memory (vector accesses) and a ragged tile is a
    # row's first in scan order, its padding (past the row's end) scanned before its items
    if REVERSE:
        start = (tiles_per_row - 1 - t).to(gl.int64) * TILE
    else:
        start = t.to(gl.int64) * TILE
    local, e4 = warp_striped_vector_offsets(L4, WARPS, SLOTS, VEC)
    rem = gl.minimum(row_len - start, TILE).to(gl.int32)
    xb = x_ptr + row.to(gl.int64) * stride_in + start
    yb = y_ptr + row.to(gl.int64) * stride_out + start
    ninf4 = gl.full([WARPS, SLOTS, 32, VEC], float("-inf"), ACC, L4)
    zero4 = gl.zeros([WARPS, SLOTS, 32, VEC], ACC, L4)
    if rem == TILE:
        x = gl.load(xb + local).to(ACC)
    else:
        x = gl.where(local < rem, gl.load(xb + local, mask=local < rem).to(ACC), ninf4)
    # the tile scan: lane vectors, lanes of a slot, slots, warps (each from its highest index down when
    # REVERSE; END_*: the index that comes last in scan order)
    END_VEC: gl.constexpr = 0 if REVERSE else VEC - 1
    END_SLOT: gl.constexpr = 0 if REVERSE else SLOTS - 1
    END_WARP: gl.constexpr = 0 if REVERSE else WARPS - 1
    e_m, e_t = gl.associative_scan((x, zero4), 3, combine_logsumexp_pair, reverse=REVERSE)
    lane_m = gl.convert_layout(_lse_last(e_m, e4 == END_VEC, 3), LS3)
    lane_t = gl.convert_layout(_lse_last(e_t, e4 == END_VEC, 3), LS3)
    lane_im, lane_it = gl.associative_scan((lane_m, lane_t), 2, combine_logsumexp_pair, reverse=REVERSE)
    ninf3 = gl.full([WARPS, SLOTS, 32], float("-inf"), ACC, LS3)
    zero3 = gl.zeros([WARPS, SLOTS, 32], ACC, LS3)
    lane_em = striped_shift_up(lane_im, ninf3, REVERSE)
    lane_et = striped_shift_up(lane_it, zero3, REVERSE)
    slot_im, slot_it, slot_em, slot_et = gl.associative_scan(
        (striped_last_lane(lane_im, REVERSE), striped_last_lane(lane_it, REVERSE), ninf3, zero3), 1,
        _lse_inclusive_exclusive_gl, reverse=REVERSE)
    s3 = gl.expand_dims(gl.expand_dims(gl.arange(0, SLOTS, layout=gl.SliceLayout(0, gl.SliceLayout(2, LS3))), 0), 2)
    warp_m = gl.convert_layout(_lse_last(slot_im, s3 == END_SLOT, 1), LC)
    warp_t = gl.convert_layout(_lse_last(slot_it, s3 == END_SLOT, 1), LC)
    ninfc = gl.full([WARPS, 32], float("-inf"), ACC, LC)
    zeroc = gl.zeros([WARPS, 32], ACC, LC)
    warp_im, warp_it, warp_em, warp_et = gl.associative_scan((warp_m, warp_t, ninfc, zeroc), 0,
                                                             _lse_inclusive_exclusive_gl, reverse=REVERSE)
    wc = gl.expand_dims(gl.arange(0, WARPS, layout=gl.SliceLayout(1, LC)), 1)
    # (the same in every lane: max of equal values)
    agg_m = gl.max(_lse_last(warp_im, wc == END_WARP, 0), 0)
    agg_t = gl.max(_lse_last(warp_it, wc == END_WARP, 0), 0)
    # the tile's prefix
    p_m = gl.max(gl.max(ninfc, 0), 0)
    p_t = gl.max(gl.max(zeroc, 0), 0)
    if t == 0:
        pair_publish(status_ptr, num_tiles, tile, agg_m, agg_t, 2)
    else:
        pair_publish(status_ptr, num_tiles, tile, agg_m, agg_t, 1)
        p_m, p_t = pair_look_back(status_ptr, tile, first_tile, num_tiles, p_m, p_t, combine_logsumexp_pair,
                                  WARPS, LOOKBACK_WINDOW, LOOKBACK_SLEEP)
        i_m, i_t = combine_logsumexp_pair(p_m, p_t, agg_m, agg_t)
        pair_publish(status_ptr, num_tiles, tile, i_m, i_t, 2)
    w_m, w_t = combine_logsumexp_pair(p_m, p_t, warp_em, warp_et)
    w_m = gl.expand_dims(gl.convert_layout(w_m, gl.SliceLayout(1, LS3)), 1)
    w_t = gl.expand_dims(gl.convert_layout(w_t, gl.SliceLayout(1, LS3)), 1)
    s_m, s_t = combine_logsumexp_pair(w_m, w_t, slot_em, slot_et)
    l_m, l_t = combine_logsumexp_pair(s_m, s_t, lane_em, lane_et)
    o_m, o_t = combine_logsumexp_pair(gl.expand_dims(gl.convert_layout(l_m, LS), 3),
                                      gl.expand_dims(gl.convert_layout(l_t, LS), 3), e_m, e_t)
    out = (o_m + libdevice.log1p(o_t)).to(y_ptr.dtype.element_ty)
    if rem == TILE:
        gl.store(yb + local, out)
    else:
        gl.store(yb + local, out, mask=local < rem)


# ----------------------------------------------------------------------------------------------
# Policy
# ----------------------------------------------------------------------------------------------

def _valid(cfg: dict) -> bool:
    return (cfg["TILE_ITEMS"] >= 32 * cfg["num_warps"] and 2 <= cfg["LOOKBACK_WINDOW"] <= 1024
            and cfg["ROWS_TILE"] >= cfg["ROWS_MAX_LEN"])


# Built-in values (no tuned file). Tile shape: registers decide the occupancy of this kernel (the
# tile scan is held in registers while the look-back spins); ptxas for sm_90 reports 64 registers
# for 4096 fp32 items on 8 warps (16 items a thread: 4 CTAs = 16K items in flight per SM) against
# 158 for 4096 on 4 warps and 159 for 8192 on 8 (32 items a thread: 1-2 CTAs per SM), so 16 items
# a thread; 64-bit values and pairs take 2048 items on 8 warps (64 and 56 registers); the rows
# kernel 4096 slots on 8 warps (40 registers).
# Look-back window: a tile in the fast mode stops at the nearest inclusive prefix, which in steady
# state lies about (tiles started per look-back latency) places back, so a window of ~100 finds it
# in one read. In the reproducible mode a tile waits for the inclusive prefix exactly WINDOW places
# back: the window must exceed the number of tiles in flight on the GPU (~4 per SM) or tiles queue
# behind each other; the window costs one int64 word per tile read from L2.
_DET = {"LOOKBACK_WINDOW": 512}
_WIDE = {"TILE_ITEMS": 2048}
# The warp-synchronous sum (buckets "sum", "sum_det"): 32 items a thread on 4 warps (108 registers),
# the anchored look-back over 128 tiles (one read of the window per tile) in both modes.
# Costly operators (buckets *_costly: logcumsumexp): the tuned 4B / 8B tiles serve cheap operators
# (memory-bound; 8192 items on 4 warps for 32-bit values) but starve these of parallelism (one tile a
# thread block per SM at 2^20 items). 4B_costly: the one-value log-add-exp scan (an exp and a log1p a
# combine; now only a 0-d logcumsumexp), measured on an H200 (bench/probes/scan_tile_probe.py, do_bench
# GPU us, one row of 2^20 / 2^24 / 2^26 items): 125 / 556 / 1950 at the tuned 4B tile against 47 / 311 /
# 1208 at 4096 items on 8 warps, window 128 (torch 37 / 154 / 526). 8B_costly, 16B_costly: the (m, t)
# pairs of float32 and float64 logcumsumexp (one exp a combine), the fastest of the tiles tried in
# bench/probes/logcumsumexp_pairs_probe.py (H200, do_bench GPU us): float32 2^20 / 2^24 / 2^26 items
# 21.0 / 153.3 / 571.4 at 2048 items on 4 warps (2048 on 8: 27.8 / 199.1 / 710.2; 4096 on 8: 22.3 /
# 173.4 / 646.4; torch 35.9 / 153.1 / 525.2), rows of 4096 x 1024 / 65536 x 128 21.6 / 32.3-33.0 at a
# rows tile of 2048 on 4 warps (4096 on 8: 24.9 / 33.8-34.5; torch 73.4 / 78.3); float64 2^20 / 2^24
# 59.5 / 829.2 at 1024 items on 4 warps (2048 on 8: 76.0 / 931.7; torch 81.1 / 880.4), rows 116.3-117.0
# / 163.9-164.4 at 2048 on 8 warps (4096 on 8: 298 / 251; torch 148.4 / 197.8).
_COSTLY = {"TILE_ITEMS": 4096, "num_warps": 8, "LOOKBACK_WINDOW": 128}
_COSTLY_PAIRS = {"TILE_ITEMS": 2048, "num_warps": 4, "LOOKBACK_WINDOW": 128, "ROWS_TILE": 2048, "ROWS_WARPS": 4}
# (1024 items lie outside the TILE_ITEMS the tuner's space lists: a built-in value only)
_COSTLY_PAIRS64 = {"TILE_ITEMS": 1024, "num_warps": 4, "LOOKBACK_WINDOW": 128, "ROWS_TILE": 2048, "ROWS_WARPS": 8}
# ... and in the reproducible mode (8B_costly_det, 16B_costly_det; `--det` of that probe, H200, 2^24 items):
# the portable kernel's float32 pairs at 2048 items on 4 warps, window 512: 237.0 us (the plain 8B_det tiles,
# 2048 on 8 warps: 289.5; 4096 on 8: 214.2, but 22.8-35.1 against 23.9 at 2^20), float64 1490 (16B_det's:
# 1805); wider windows (1024) were slower for every tile (each tile reads its whole window).
_COSTLY_PAIRS_DET = {**_COSTLY_PAIRS, "LOOKBACK_WINDOW": 512}
_COSTLY_PAIRS64_DET = {**_COSTLY_PAIRS64, "TILE_ITEMS": 2048, "num_warps": 4, "LOOKBACK_WINDOW": 512}
_SUM = {"TILE_ITEMS": 4096, "num_warps": 4, "LOOKBACK_WINDOW": 128}
# lse32: logcumsumexp's float32 pairs on NVIDIA GPUs (both modes: _logcumsumexp_warp_sync_kernel's anchored
# look-back is reproducible; short rows keep the rows kernel at 8B_costly's tile), measured on an H200
# (bench/probes/lse_warp_sync_probe.py, logs/lse_warp_sync_probe-h200-20261130*.log, do_bench GPU us, 1-D
# 2^20 / 2^24 / 2^26 items, 2^24 reversed, rows of 16 x 2^20): 2048 items on 4 warps in vectors of 8,
# window 256, no sleep 20.1 / 112.2 / 398.3 / 134.6 / 112.1 (vectors of 4, window 128: 20.9 / 130.1 /
# 480.4 / 141.7 / 130.0; of 8, window 128: 19.8 / 115.7 / 421.4 / 128.2 / 107.8; window 512: 20.8 /
# 137.0 / 495.7; window 32: 71 / 934 / 3668; vectors of 16: 20.4 / 124.0 / 451.2; 4096 items on 4 warps
# 19.7 / 174.3 / 641.1; 1024 on 2 warps 29.7 / 240.2 / 905.2; the portable kernel at 8B_costly's tiles
# 20.8 / 153.9 / 571.2 / 282.1 / 152.9; torch 35.9 / 153.2 / 526.3 / 153.2 / 3136.9). (VEC 8 lies
# outside the tuner's space: a built-in value only.)
_LSE32 = {**_COSTLY_PAIRS, "LOOKBACK_WINDOW": 256, "VEC": 8, "LOOKBACK_SLEEP": 0}
# lse64: float64 pairs on the same kernel (short rows: the rows kernel at 16B_costly's tile), H200
# (the same probe, --f64; logs/lse_warp_sync_probe-f64-h200-20261130e.log; 1-D 2^20 / 2^24 / 2^26, 2^24
# reversed, 16 x 2^20 rows): 1024 items on 4 warps in vectors of 4, window 128, no sleep 46.8 / 531.1 /
# 2058 / 619.8 / 528.4 (window 256: 50.4 / 661.6 / 2688 / 729.7 / 657.6; 512: 62.7 / 982.9 / 4655;
# vectors of 8, window 256: 49.6 / 616.8 / 2354 / 606.2 / 611.0; of 2: 66.6 / 901.1 / 3556; 512 items on
# 4 warps 70.3 / 878.6 / 3458; 2048 on 4 warps 71.6 / 979.2 / 3811; 2048 on 8 61.3 / 814.9 / 3210; 1024 on
# 2 78.4 / 1071.7 / 4242; the portable kernel at 16B_costly's tiles 58.3 / 833.6 / 3305 / 1109.9 / 826.4;
# torch 79.8 / 884.1 / 3224 / 885.2 / 7268)
_LSE64 = {**_COSTLY_PAIRS64, "LOOKBACK_WINDOW": 128, "VEC": 4, "LOOKBACK_SLEEP": 0}
_SUM64 = _SUM
SCAN_POLICY = policy.register(
    "scan",
    space={"TILE_ITEMS": [2048, 4096, 8192, 16384], "LOOKBACK_WINDOW": [32, 64, 128, 256, 512],
           "WARP_SYNC": [0, 1], "VEC": [1, 4], "LOOKBACK_SLEEP": [0, 1], "ANCHORED": [0, 1],
           "num_warps": [2, 4, 8, 16], "num_stages": [1]},
    fallback={"TILE_ITEMS": 4096, "LOOKBACK_WINDOW": 128, "ROWS_TILE": 4096, "ROWS_MAX_LEN": 2048,
              "WARP_SYNC": 1, "VEC": 4, "LOOKBACK_SLEEP": 1, "ANCHORED": 1, "ROWS_WARPS": 8, "MIN_TILES": 64,
              "num_warps": 8, "num_stages": 1},
    valid=_valid,
    buckets=("4B", "8B", "16B", "4B_det", "8B_det", "16B_det", "4B_costly", "8B_costly", "16B_costly",
             "8B_costly_det", "16B_costly_det", "lse32", "lse64", "sum", "sum_det", "sum64", "sum64_det"),
    bucket_fallbacks={"4B_det": _DET, "8B": _WIDE, "16B": _WIDE, "8B_det": {**_WIDE, **_DET},
                      "4B_costly": _COSTLY, "8B_costly": _COSTLY_PAIRS, "16B_costly": _COSTLY_PAIRS64,
                      "8B_costly_det": _COSTLY_PAIRS_DET, "16B_costly_det": _COSTLY_PAIRS64_DET, "lse32": _LSE32,
                      "lse64": _LSE64,
                      "16B_det": {**_WIDE, **_DET}, "sum": _SUM, "sum_det": _SUM, "sum64": _SUM64,
                      "sum64_det": _SUM64},
    doc="single-pass scan (decoupled look-back) and short-rows scan; buckets: bytes of the scanned value "
        "(4B: one 32-bit value; 8B: a 64-bit value or a pair of 32-bit ones; 16B: larger pairs), "
        "_det: the reproducible mode; 4B_costly, 8B_costly, 16B_costly: a costly operator (logcumsumexp: one "
        "value, or float32 / float64 pairs) in the fast mode, 8B_costly_det, 16B_costly_det: its pairs in the "
        "reproducible mode; lse32, lse64: float32 / float64 logcumsumexp pairs on NVIDIA GPUs (both "
        "modes), which with WARP_SYNC 1 take a warp-synchronous kernel of their own (VEC, LOOKBACK_SLEEP "
        "as for sums; the anchored look-back); sum, sum_det (float32, int32 accumulators), sum64, sum64_det (float64, "
        "int64): sums, which on NVIDIA GPUs with WARP_SYNC 1 take the warp-synchronous kernel (VEC items per "
        "thread loaded as one vector; LOOKBACK_SLEEP 1: its look-back sleeps briefly between reads of an "
        "unpublished slot; windows below 32 read 32; ANCHORED 1: the fast mode uses the reproducible mode's "
        "look-back too, one read of the window per tile; 64-bit sums always do). MIN_TILES (every bucket): "
        "the single-pass tile is the smallest power of two, at least 512 items and two a thread, that splits "
        "the input (all its rows) into at most MIN_TILES tiles, never more than TILE_ITEMS, so that a small "
        "scan spreads over the SMs (0: TILE_ITEMS always)",
)


def _bucket(acc_dtypes, deterministic: bool = False, costly: bool = False) -> str:
    size = sum(d.itemsize for d in acc_dtypes)
    name = "4B" if size <= 4 else "8B" if size <= 8 else "16B"
    if deterministic:
        # (costly values of 8 or 16 bytes, logcumsumexp's float32 / float64 pairs, have tiles of their
        # own in the reproducible mode too (a single costly 64-bit value, a 0-d float64 logcumsumexp now,
        # takes the float32 pairs' ones); a single costly 32-bit value shares the cheap operators')
        return name + ("_costly_det" if costly and size > 4 else "_det")
    return name + "_costly" if costly else name


# ----------------------------------------------------------------------------------------------
# Launcher
# ----------------------------------------------------------------------------------------------

SCAN_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
               torch.float16, torch.bfloat16, torch.float32, torch.float64)
#: items of prefix sums and products: also the unsigned 16/32/64-bit integers (torch.cumsum and
#: torch.cumprod take them, promoted to int64 as every integer; uint64 items wrap, as in torch), and
#: complex items (sums: two float scans of the real and imaginary parts; products: one scan of the
#: (real, imaginary) pairs under the complex product)
SUM_SCAN_DTYPES = SCAN_DTYPES + tuple(d for d in UINT_DTYPES if d not in SCAN_DTYPES) + COMPLEX_DTYPES
_ACC_OK = (torch.int32, torch.int64, torch.float32, torch.float64)


def _widen(dtype: torch.dtype) -> torch.dtype:
    """The 32/64-bit type a value is carried in during a scan (exact for min/max/select)."""
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if dtype in (torch.bool, torch.uint8, torch.int8, torch.int16):
        return torch.int32
    return dtype


_TL = {torch.int32: tl.int32, torch.int64: tl.int64, torch.float32: tl.float32, torch.float64: tl.float64}
_GL = {torch.int32: gl.int32, torch.float32: gl.float32, torch.int64: gl.int64, torch.float64: gl.float64}
#: measurement switch for bench/probes only (see _scan_warp_sync_kernel); 0 in any real use
_PROBE = 0


def _resolve_deterministic(deterministic) -> bool:
    if deterministic is None:
        return torch.are_deterministic_algorithms_enabled()
    return bool(deterministic)


def _check_flags(reverse, deterministic, return_total=False) -> None:
    """The public scans' flags: bools (``deterministic`` also None: follow torch's setting), not
    read as true or false from an int or a string."""
    check_flag(reverse, "reverse")
    check_flag(return_total, "return_total")
    if deterministic is not None:
        check_flag(deterministic, "deterministic")


def _as_rows(t: torch.Tensor, dim: int) -> torch.Tensor:
    """``t`` with ``dim`` moved last, contiguous, viewed as [rows, len]."""
    if dim != t.dim() - 1:
        t = t.movedim(dim, -1)
    t = t.contiguous()
    return t.reshape(-1, t.shape[-1]) if t.dim() > 0 else t.reshape(1, 1)


def _init_item(v, dtype: torch.dtype, device, out_dtype: torch.dtype) -> torch.Tensor:
    """A number (or one-item tensor) as a one-item ``dtype`` (the accumulator's) tensor on ``device``;
    one that the accumulator or the output dtype (``out_dtype``: an int8 scan accumulates in int32)
    cannot hold is refused (as by the device-wide reduce, :func:`check_init_value`), not wrapped or
    truncated. (A number is checked on the host and filled on the device, no copy.)"""
    check_init_value(v, dtype)
    check_init_value(v, out_dtype)
    if isinstance(v, torch.Tensor):
        return v.reshape(1).to(device=device, dtype=dtype)
    return torch.full((1,), v, dtype=dtype, device=device)


#: columns a program of the strided scan (a scan along a dimension that is not the last) takes at most
_STRIDED_MAX_COLUMNS = 1024

#: replays of scans along the last dimension (see :func:`scan_rows_launch`), per problem: (bucket, policy,
#: relocatable launches, sizes of the zeroed int64 scratch buffers)
_SCAN_REPLAYS: dict = {}


def _replayable(x: torch.Tensor) -> bool:
    """Whether scans of ``x`` may be remembered and replayed (:func:`tritoncub._launch.replays_ok`)."""
    return replays_ok(x, (launch, _launch_module.launch))


def _new_outputs(shape, out_dtypes, num_values, store0, device):
    return tuple(torch.empty(shape, dtype=d, device=device) if (i > 0 or store0) else None
                 for i, d in enumerate(out_dtypes[:num_values]))


def scan_rows_launch(xs, combine_fn, *, acc_dtypes, out_dtypes, dim=-1, exclusive=False, init=None,
                     reverse=False, deterministic=None, want_total=False, x1_index=False, by_key=False,
                     store0=True, memo_key=None, plus_zero=False, costly=False, lse=False):
    """The common launcher: scan ``xs`` (one or two tensors of one shape; with ``x1_index`` the
    second is the item index, with ``by_key`` the first holds keys) along ``dim``. ``plus_zero``
    (one floating value, no init): each item gets + 0.0 before the scan.
    ``costly``: ``combine_fn`` costs far more than a memory access (the ``*_costly`` policy buckets).
    ``lse`` (one floating tensor, :func:`combine_logsumexp_pair`, no init or totals): each item ``x``
    enters as the pair ``(x, 0)`` and the one output is ``m + log1p(t)`` of the scanned pairs.

    Returns ``(outputs, totals)``: tuples with one tensor per value (``outputs[0]`` is None when
    ``store0`` is False); totals are per-row tensors of the scan's values, or None. ``memo_key``
    (:func:`_sum`'s short-rows fast path): a launch of the rows kernel is remembered under it.

    A scan of contiguous inputs along their last dimension without init or totals is remembered per
    problem (operator, shape, dtypes, 16-byte alignments, flags, device) on GPUs: a later call of the
    same problem under the same policy replays its launches on new outputs and fresh zeroed scratch,
    skipping the planning (host time per call, H200 host, 2^16 items: see
    bench/probes/scan_host_probe.py)."""
    x0 = xs[0]
    num_values = 2 if (len(xs) == 2 or x1_index or lse) else 1
    replay_key = None
    if (init is None and not want_total and x0.dim() >= 1 and x0.numel() > 0
            and type(dim) is int and dim in (-1, x0.dim() - 1) and _replayable(x0)
            and all(t.is_contiguous() for t in xs) and not recording_launches()):
        # (not inside a caller's recording of launches: its record would miss launches replayed here)
        replay_key = (combine_fn, x0.shape, tuple((t.dtype, t.data_ptr() & 15 == 0) for t in xs), tuple(acc_dtypes),
                      tuple(out_dtypes), exclusive, reverse, _resolve_deterministic(deterministic), x1_index, by_key,
                      store0, plus_zero, costly, lse, x0.device, _PROBE)
        hit = _SCAN_REPLAYS.get(replay_key)
        if hit is not None and policy.select("scan", x0.device, hit[0]) is hit[1]:
            outs = _new_outputs(x0.shape, out_dtypes, num_values, store0, x0.device)
            bufs = [torch.zeros(n, dtype=torch.int64, device=x0.device) for n in hit[3]]
            replay(hit[2], tuple(t.data_ptr() for t in (*xs, *(o for o in outs if o is not None), *bufs)))
            return outs, None
    kw = dict(acc_dtypes=acc_dtypes, out_dtypes=out_dtypes, dim=dim, exclusive=exclusive, init=init, reverse=reverse,
              deterministic=deterministic, want_total=want_total, x1_index=x1_index, by_key=by_key, store0=store0,
              memo_key=memo_key, plus_zero=plus_zero, costly=costly, lse=lse)
    if replay_key is None:
        return _scan_rows(xs, combine_fn, **kw)
    made: dict = {"scratch": []}   # (what the launcher used: its bucket, policy and zeroed scratch)
    with record_launches() as rec:
        outs, totals = _scan_rows(xs, combine_fn, made=made, **kw)
    roots = (*xs, *(o for o in outs if o is not None), *made["scratch"])
    launches = relocatable(rec, roots) if "pol" in made else None
    if launches is not None:
        if len(_SCAN_REPLAYS) >= 64:
            _SCAN_REPLAYS.clear()
        _SCAN_REPLAYS[replay_key] = (made["bucket"], made["pol"], launches, tuple(b.numel() for b in made["scratch"]))
    return outs, totals


def _scan_rows(xs, combine_fn, *, acc_dtypes, out_dtypes, dim, exclusive, init, reverse, deterministic, want_total,
               x1_index, by_key, store0, memo_key, plus_zero, costly, lse, made=None):
    """:func:`scan_rows_launch`'s planning and launches. ``made`` (a replay being recorded): gets the
    bucket and policy used, and every zeroed scratch buffer the launches take, in order."""
    num_values = 2 if (len(xs) == 2 or x1_index or lse) else 1
    if lse and (len(xs) != 1 or init is not None or want_total or not store0 or exclusive or by_key):
        raise InputValueError("lse scans take one tensor and no init, totals, exclusive or by-key mode")
    x0 = xs[0]
    shape = x0.shape
    ndim = x0.dim()
    dim = wrap_dim(dim, ndim)   # (torch's rule and errors: a 0-d tensor takes 0 and -1; a non-int is refused)
    for d in acc_dtypes:
        if d not in _ACC_OK:
            raise InputTypeError(f"scan accumulators must be int32, int64, float32 or float64, got {d}")
    deterministic = _resolve_deterministic(deterministic)
    device = x0.device
    outs = _new_outputs(shape, out_dtypes, num_values, store0, device)
    row_len = shape[dim] if ndim else 1
    n_rows = x0.numel() // row_len if row_len else 0
    totals = None
    if want_total:
        tshape = tuple(s for i, s in enumerate(shape) if i != dim) if ndim else ()
        make = torch.zeros if row_len == 0 else torch.empty  # every row's total is written by the kernel
        totals = tuple(make(tshape, dtype=d, device=device) for d in acc_dtypes[:num_values])
    if x0.numel() == 0:
        return outs, totals
    acc0 = acc_dtypes[0]
    acc1 = acc_dtypes[1] if num_values == 2 else acc0
    # sums have a kernel of their own on NVIDIA GPUs, and policy buckets (32- and 64-bit accumulators)
    warp_sum = (combine_fn is combine_add and num_values == 1 and not (by_key or reverse or x1_index) and store0
                and smem_atomics_ok(device))
    # ... and so do logcumsumexp's pairs (one bucket for both modes: the kernel is reproducible; the
    # compile-check mode builds it too, which is why the test is inline_ptx_ok)
    warp_lse = lse and inline_ptx_ok(device)
    if warp_sum:
        bucket = ("sum64" if acc0.itemsize == 8 else "sum") + ("_det" if deterministic else "")
    elif warp_lse:
        bucket = "lse64" if acc0.itemsize == 8 else "lse32"
    else:
        bucket = _bucket([acc0] if num_values == 1 else [acc0, acc1], deterministic, costly)
    pol = policy.select("scan", device, bucket)
    if made is not None:
        made["bucket"], made["pol"] = bucket, pol
    scan_fn, reduce_fn = tile_ops(combine_fn, plus_zero)
    common = dict(ACC0=_TL[acc0], ACC1=_TL[acc1], COMBINE=combine_fn, SCAN=scan_fn, REDUCE=reduce_fn,
                  NUM_VALUES=num_values, X1_INDEX=x1_index, BY_KEY=by_key, STORE0=store0, EXCLUSIVE=exclusive,
                  HAS_INIT=init is not None, REVERSE=reverse, WRITE_TOTAL=want_total, LSE=lse)
    if init is not None:
        inits = [_init_item(v, d, device, o) for v, d, o in zip(init, acc_dtypes[:num_values], out_dtypes[:num_values])]
    else:
        inits = [x0]  # never read (HAS_INIT=False): no allocation
    i0 = inits[0]
    i1 = inits[1] if len(inits) == 2 else i0
    if ndim > 1 and dim != ndim - 1 and not by_key:
        inner = math.prod(shape[dim + 1:])
        outer = math.prod(shape[:dim])
        block_i = min(next_power_of_2(inner), 64)
        block_l = max(1, pol["ROWS_TILE"] // block_i)
        if row_len < block_l:
            # a short scan dimension: a step of its length and more columns a program (no idle lanes;
            # (4, 2^20) along dim 0 took 204 us on an H200 in 64-column programs of 64-row steps, torch 8;
            # bench/results/logs/torch_sweep_probe-h200-20261201.log)
            block_l = next_power_of_2(row_len)
            block_i = max(block_i, min(next_power_of_2(inner), pol["ROWS_TILE"] // block_l, _STRIDED_MAX_COLUMNS))
        programs = outer * cdiv(inner, block_i)
        if programs >= num_sms(device) or row_len <= 4 * block_l:
            xin = [t.contiguous() for t in xs]
            in0 = xin[0]
            in1 = xin[1] if len(xin) == 2 else in0
            o1 = outs[1] if len(outs) == 2 else None
            o0 = outs[0] if outs[0] is not None else o1
            o1 = o1 if o1 is not None else o0
            tt0 = totals[0] if totals is not None else i0
            tt1 = totals[1] if (totals is not None and num_values == 2) else tt0
            warps = max(1, min(pol["ROWS_WARPS"], block_l * block_i // 128))
            warps = 1 << (warps.bit_length() - 1)
            for ob, oe in grid_y_batches(outer):
                launch(_scan_strided_kernel, (cdiv(inner, block_i), oe - ob),
                       in0, in1, o0, o1, i0, i1, tt0, tt1, row_len, inner, ob, BLOCK_L=block_l, BLOCK_I=block_i,
                       num_warps=warps, num_stages=1, **common)
            return outs, totals
    rows_in = [_as_rows(t, dim) for t in xs]
    last = dim == ndim - 1 or ndim == 0
    rows_out = [None if o is None else (o.reshape(n_rows, row_len) if last else
                                       torch.empty((n_rows, row_len), dtype=o.dtype, device=device))
                for o in outs]
    tot_rows = None if totals is None else [t.reshape(-1) for t in totals]
    in0 = rows_in[0]
    in1 = rows_in[1] if len(rows_in) == 2 else in0
    out1_t = rows_out[1] if len(rows_out) == 2 else None
    out0_t = rows_out[0] if rows_out[0] is not None else out1_t
    out1_t = out1_t if out1_t is not None else out0_t
    t0 = tot_rows[0] if tot_rows is not None else i0
    t1 = tot_rows[1] if (tot_rows is not None and num_values == 2) else t0
    if row_len <= pol["ROWS_MAX_LEN"]:
        block_c = next_power_of_2(row_len)
        block_r = max(1, min(pol["ROWS_TILE"] // block_c, next_power_of_2(n_rows)))
        warps = max(1, min(pol["ROWS_WARPS"], block_r * block_c // 128))
        warps = 1 << (warps.bit_length() - 1)
        args = (in0, in1, out0_t, out1_t, i0, i1, t0, t1, n_rows, row_len, in0.stride(0), out0_t.stride(0))
        kw = dict(BLOCK_R=block_r, BLOCK_C=block_c, num_warps=warps, num_stages=1, **common)
        if memo_key is not None:
            # launch, and remember a re-launcher (None off the direct launch path); the init tensor is
            # kept only when the kernel reads it (else the caller's input would be held on to)
            run = bind(_scan_rows_kernel, (cdiv(n_rows, block_r),), *args, **kw)
            if run is not None:
                if len(_ROWS_MEMO) >= 256:
                    _ROWS_MEMO.clear()
                _ROWS_MEMO[memo_key] = (pol, bucket, run, i0 if init is not None else None)
        else:
            launch(_scan_rows_kernel, (cdiv(n_rows, block_r),), *args, **kw)
    else:
        tile = _single_pass_tile(pol, n_rows * row_len)
        lb_dtypes = [acc0] if num_values == 1 else [torch.int32 if by_key else acc0, acc1]
        if warp_sum and pol["WARP_SYNC"]:
            _launch_warp_sync(in0, out0_t, i0, t0, n_rows, row_len, tile, acc0, pol, exclusive=exclusive,
                              has_init=init is not None, want_total=want_total, deterministic=deterministic,
                              made=made)
        elif warp_lse and pol["WARP_SYNC"]:
            _launch_lse_warp_sync(in0, out0_t, n_rows, row_len, tile, acc0, pol, reverse, made)
        else:
            _launch_single_pass(in0, in1, out0_t, out1_t, i0, i1, t0, t1, n_rows, row_len, tile, lb_dtypes,
                                combine_fn, num_values, pol, deterministic, common, made)
    if not last:
        for o, ro in zip(outs, rows_out):
            if o is not None:
                o.copy_(ro.reshape(o.movedim(dim, -1).shape).movedim(-1, dim))
    return outs, totals


#: the smallest tile the MIN_TILES rule makes (the smallest measured; see _single_pass_tile)
_MIN_TILE_ITEMS = 512


def _single_pass_tile(pol, items: int) -> int:
    """The single-pass kernels' tile for ``items`` items in all (every row of a batch): the smallest power of
    two, at least 512 items and two a thread (the least the warp-synchronous kernels' tests cover), that
    splits them into at most ``MIN_TILES`` tiles, never more than the policy's ``TILE_ITEMS``.
    A small input in big tiles runs on a few SMs, each scanning its tile with the look-back's latency
    on top (H200, GPU time: 16384 int32 items summed into int64 3.6 us in 512-item tiles against 5.3 in
    the policy's 4096, 65536 float32 products 3.7 in 2048-item tiles against 4.7 in 8192;
    bench/probes/scan_small_tiles_probe.py)."""
    tile = pol["TILE_ITEMS"]
    if pol["MIN_TILES"] > 0:
        floor = max(_MIN_TILE_ITEMS, 64 * pol.num_warps)
        tile = min(tile, max(floor, next_power_of_2(cdiv(items, pol["MIN_TILES"]))))
    return tile


def _launch_single_pass(in0, in1, out0_t, out1_t, i0, i1, t0, t1, n_rows, row_len, tile, lb_dtypes, combine_fn,
                        num_values, pol, deterministic, common, made=None):
    tiles_per_row = cdiv(row_len, tile)
    num_tiles = n_rows * tiles_per_row
    packed = packed_layout(lb_dtypes, deterministic)
    counter, status, plane_stride = allocate_status(num_tiles, lb_dtypes, deterministic, in0.device)
    if made is not None:
        made["scratch"].append(counter._base)   # (the zeroed buffer that the counter and status views lie in)
    one_row = n_rows == 1
    launch(_scan_single_pass_kernel, (num_tiles,),
           in0, in1, out0_t, out1_t, i0, i1, t0, t1, counter, status, plane_stride, row_len,
           0 if one_row else in0.stride(0), 0 if one_row else out0_t.stride(0), tiles_per_row,
           LB_REDUCE=lookback_reduce(combine_fn, num_values), DETERMINISTIC=deterministic, PACKED=packed,
           TILE_ITEMS=tile, LOOKBACK_WINDOW=pol["LOOKBACK_WINDOW"], num_warps=pol.num_warps,
           num_stages=pol.num_stages, **common)


def _launch_warp_sync(in0, out0_t, init, total, n_rows, row_len, tile, acc, pol, *, exclusive, has_init,
                      want_total, deterministic, made=None):
    """The warp-synchronous single pass (:func:`_scan_warp_sync_kernel`) over ``n_rows`` rows."""
    warps = pol.num_warps
    items = tile // (32 * warps)
    tiles_per_row = cdiv(row_len, tile)
    num_tiles = n_rows * tiles_per_row
    wide = acc.itemsize == 8
    anchored = deterministic or bool(pol["ANCHORED"]) or wide   # (64-bit values: the anchored look-back only)
    # one zeroed buffer: the tile counter (word 0), then one plane of status slots (two when anchored) of
    # one word per slot (two for 64-bit values)
    state = torch.zeros(STATUS_HEADER_WORDS + (2 if anchored else 1) * (2 if wide else 1) * num_tiles,
                        dtype=torch.int64, device=in0.device)
    if made is not None:
        made["scratch"].append(state)
    one_row = n_rows == 1
    launch(_scan_warp_sync_kernel, (num_tiles,),
           in0, out0_t, init, total, state, row_len, 0 if one_row else in0.stride(0),
           0 if one_row else out0_t.stride(0), tiles_per_row, num_tiles,
           ACC=_GL[acc], BITS=gl.int64 if wide else gl.int32,
           IDENTITY_BITS=-(1 << (63 if wide else 31)) if acc.is_floating_point else 0, EXCLUSIVE=exclusive,
           HAS_INIT=has_init,
           WRITE_TOTAL=want_total, DETERMINISTIC=anchored, WARPS=warps, ITEMS=items,
           VEC=math.gcd(pol["VEC"], items), LOOKBACK_WINDOW=max(32, pol["LOOKBACK_WINDOW"]),
           LOOKBACK_SLEEP=pol["LOOKBACK_SLEEP"], PROBE=_PROBE, num_warps=warps)


def _launch_lse_warp_sync(in0, out0_t, n_rows, row_len, tile, acc, pol, reverse, made=None):
    """logcumsumexp's warp-synchronous single pass (:func:`_logcumsumexp_warp_sync_kernel`) over ``n_rows``
    rows, in accumulators ``acc`` (float32 or float64)."""
    warps = pol.num_warps
    items = tile // (32 * warps)
    tiles_per_row = cdiv(row_len, tile)
    num_tiles = n_rows * tiles_per_row
    # one zeroed buffer: the tile counter (word 0), then the four planes of pair_look_back's status words
    # (two words a value for float64)
    state = torch.zeros(STATUS_HEADER_WORDS + 4 * num_tiles * (acc.itemsize // 4), dtype=torch.int64,
                        device=in0.device)
    if made is not None:
        made["scratch"].append(state)
    one_row = n_rows == 1
    launch(_logcumsumexp_warp_sync_kernel, (num_tiles,),
           in0, out0_t, state, row_len, 0 if one_row else in0.stride(0), 0 if one_row else out0_t.stride(0),
           tiles_per_row, num_tiles, ACC=_GL[acc], REVERSE=reverse, WARPS=warps, ITEMS=items,
           VEC=math.gcd(pol["VEC"], items), LOOKBACK_WINDOW=max(32, pol["LOOKBACK_WINDOW"]),
           LOOKBACK_SLEEP=pol["LOOKBACK_SLEEP"], num_warps=warps)


# ----------------------------------------------------------------------------------------------
# Device API
# ----------------------------------------------------------------------------------------------

def _check_inputs(xs, name="x"):
    x0 = xs[0]
    for i, t in enumerate(xs):
        check_tensor(t, f"{name}[{i}]" if len(xs) > 1 else name, SCAN_DTYPES)
        if t.shape != x0.shape:
            raise InputValueError(f"{name}[{i}] has shape {tuple(t.shape)} but {name}[0] has {tuple(x0.shape)}")
        if t.device != x0.device:
            raise InputValueError(f"{name}[{i}] is on {t.device} but {name}[0] is on {x0.device}")


def _as_tuple(x):
    if isinstance(x, torch.Tensor):
        return (x,), False
    xs = tuple(x)
    if not 1 <= len(xs) <= 2:
        raise InputValueError(f"scan inputs: one tensor or a tuple of two, got {len(xs)}")
    return xs, True


def _init_tuple(init, n):
    if init is None:
        return None
    vals = tuple(init) if isinstance(init, (tuple, list)) else (init,)
    if len(vals) != n:
        raise InputValueError(f"init must have {n} value(s), got {len(vals)}")
    for v in vals:
        if isinstance(v, torch.Tensor) and v.numel() != 1:
            raise InputValueError(f"init values must be scalars (one item), got a tensor of shape {tuple(v.shape)}")
    return vals  # tensors, or Python numbers (made on the device by the launcher)


def _generic(x, combine_fn, init, dim, reverse, deterministic, return_total, exclusive):
    xs, is_tuple = _as_tuple(x)
    _check_inputs(xs)
    _check_flags(reverse, deterministic, return_total)
    check_jit_function(combine_fn, "combine_fn", 2 * len(xs),
                       "a, b" if len(xs) == 1 else "the earlier pair, then the later: a0, a1, b0, b1")
    accs = tuple(_widen(t.dtype) for t in xs)
    outs, totals = scan_rows_launch(xs, combine_fn, acc_dtypes=accs, out_dtypes=tuple(t.dtype for t in xs),
                                    dim=dim, exclusive=exclusive, init=_init_tuple(init, len(xs)),
                                    reverse=reverse, deterministic=deterministic, want_total=return_total)
    res = outs if is_tuple else outs[0]
    if return_total:
        return res, (totals if is_tuple else totals[0])
    return res


def inclusive_scan(x, combine_fn, init=None, *, dim: int = -1, reverse: bool = False, deterministic=None,
                   return_total: bool = False):
    """Inclusive scan ``out[i] = init ⊕ x[0] ⊕ ... ⊕ x[i]`` along ``dim`` with ``combine_fn``.

    ``x`` is a tensor or a tuple of two tensors of one shape (then ``combine_fn(a0, a1, b0, b1)``
    returns a pair and the result is a pair). 8/16-bit values are carried widened (fp16/bf16 as
    float32, small ints as int32) and written back in the input dtype. ``combine_fn`` must be
    associative (the caller's responsibility). ``init`` (optional, one value per tensor) seeds
    every row. ``return_total=True`` also returns the combination of each row's items (without
    ``init``; zeros for empty rows), in the carried dtype (int32 for 8/16-bit integers and bool,
    float32 for fp16/bf16: not wrapped or rounded to ``x``'s dtype as the scan's items are).
    ``deterministic``: see the module docstring."""
    return _generic(x, combine_fn, init, dim, reverse, deterministic, return_total, False)


def exclusive_scan(x, combine_fn, init, *, dim: int = -1, reverse: bool = False, deterministic=None,
                   return_total: bool = False):
    """Exclusive scan ``out[0] = init``, ``out[i] = init ⊕ x[0] ⊕ ... ⊕ x[i-1]`` (``init`` is
    required: a generic operator has no identity). Otherwise as :func:`inclusive_scan`."""
    if init is None:
        raise InputValueError("exclusive_scan needs init (the value of out[0])")
    return _generic(x, combine_fn, init, dim, reverse, deterministic, return_total, True)


def _sum_dtypes(x: torch.Tensor, dtype):
    """torch.cumsum's promotion: ``dtype`` if given, else int64 for integers and bool."""
    out = dtype if dtype is not None else (x.dtype if x.dtype.is_floating_point or x.dtype.is_complex
                                           else torch.int64)
    if out == torch.bool:   # (torch: "cumsum_out" / "cumprod_out" not implemented for 'Bool')
        raise InputTypeError("scan output dtype bool is not supported (a sum or product of bools: pass an "
                             "integer dtype, or none for int64)")
    if out not in SCAN_DTYPES + COMPLEX_DTYPES:
        raise InputTypeError(f"scan output dtype {out} is not supported; supported: {SCAN_DTYPES + COMPLEX_DTYPES}")
    return _widen(out), out


#: :func:`_sum`'s fast path for contiguous short rows scanned along the last dimension (small, launch-bound
#: problems): the bound launch of the rows kernel per (shape, dtypes, mode, device, alignment), with the
#: policy it was made under (a hit needs that same policy object: an override or a new file misses)
_ROWS_MEMO: dict = {}


def _sum(x, dim, dtype, reverse, deterministic, return_total, exclusive, combine=combine_add):
    check_tensor(x, "x", SUM_SCAN_DTYPES)
    _check_flags(reverse, deterministic, return_total)
    acc, out = _sum_dtypes(x, dtype)
    if out.is_complex:
        d = wrap_dim(dim, x.dim())
        # (a 0-d x as one item: the scan runs along its dim, never across the (real, imaginary) pair)
        xr = torch.view_as_real(x.to(out).resolve_conj().reshape(x.shape if x.dim() else (1,)))
        if combine is combine_mul:   # a scan of (real, imaginary) pairs under the complex product
            if return_total or exclusive:
                raise InputValueError("complex prefix products: inclusive, without totals")
            re, im = _generic((xr[..., 0], xr[..., 1]), combine_complex_mul, None, d, reverse, deterministic,
                              False, False)
            return torch.view_as_complex(torch.stack((re, im), -1)).reshape(x.shape)
        # the real and imaginary parts: two float prefix sums along the same dim
        res = _sum(xr, d, None, reverse, deterministic, return_total, exclusive)
        if return_total:
            return (torch.view_as_complex(res[0]).reshape(x.shape),
                    torch.view_as_complex(res[1].contiguous()))
        return torch.view_as_complex(res).reshape(x.shape)
    # torch casts the input to ``dtype`` first; when ``dtype`` is the accumulator itself the kernel's
    # own conversion on load is that same cast, so no separate pass over the input is needed
    xin = x if (dtype is None or x.dtype == dtype or (dtype == acc and not x.dtype.is_complex)) else x.to(dtype)
    memo_key = None
    if (combine is combine_add and not (return_total or reverse) and xin.dim() >= 1 and xin.numel() > 0
            and dim in (-1, xin.dim() - 1) and xin.is_contiguous() and xin.is_cuda and direct_ok()
            and not recording_launches()):   # (a caller's recording would miss a remembered launch)
        memo_key = (xin.shape, xin.dtype, out, exclusive, _resolve_deterministic(deterministic), xin.device,
                    xin.data_ptr() & 15 == 0)
        hit = _ROWS_MEMO.get(memo_key)
        capture = capturing(xin.device)
        if hit is not None and policy.select("scan", xin.device, hit[1]) is hit[0]:
            res = torch.empty(xin.shape, dtype=out, device=xin.device)
            row_len = xin.shape[-1]
            init_t = hit[3] if hit[3] is not None else xin   # (not read without an init)
            if capture and hit[3] is not None:
                KEPT_FOR_GRAPHS.append(hit[3])   # a graph reads it: it outlives the memo
            hit[2](xin, xin, res, res, init_t, init_t, init_t, init_t, xin.numel() // row_len, row_len, row_len,
                   row_len)
            return res
        if capture:
            # (a launch made during a capture is not remembered: its init is the graph's memory, which
            # only a replay writes)
            memo_key = None
    init = (0,) if exclusive else None
    outs, totals = scan_rows_launch((xin,), combine, acc_dtypes=(acc,), out_dtypes=(out,), dim=dim,
                                    exclusive=exclusive, init=init, reverse=reverse,
                                    deterministic=deterministic, want_total=return_total, memo_key=memo_key)
    if return_total:
        return outs[0], totals[0]
    return outs[0]


def inclusive_sum(x, dim: int = -1, dtype=None, *, reverse=False, deterministic=None, return_total=False):
    """Inclusive prefix sum along ``dim``, dtype promotion as ``torch.cumsum`` (integers and bool
    to int64 unless ``dtype`` is given; float16/bfloat16 accumulate in float32). ``return_total=True``
    also returns each row's sum, in the accumulator's dtype (e.g. float32 for a float16 result, int32
    for ``dtype=torch.int8``: not rounded or wrapped to the result's dtype)."""
    return _sum(x, dim, dtype, reverse, deterministic, return_total, False)


def exclusive_sum(x, dim: int = -1, dtype=None, *, reverse=False, deterministic=None, return_total=False):
    """Exclusive prefix sum (``out[0] = 0``), promotion as :func:`inclusive_sum`."""
    return _sum(x, dim, dtype, reverse, deterministic, return_total, True)


def _by_key(keys, values, combine_fn, init, exclusive, reverse, deterministic):
    _check_flags(reverse, deterministic)
    check_tensor(keys, "keys", SCAN_DTYPES + tuple(d for d in UINT_DTYPES if d not in SCAN_DTYPES))
    check_tensor(values, "values", SCAN_DTYPES)
    if keys.dim() != 1 or values.shape != keys.shape:
        raise InputValueError(f"keys and values must be 1-D of one length, got {tuple(keys.shape)} and "
                              f"{tuple(values.shape)}")
    if values.device != keys.device:
        raise InputValueError(f"values is on {values.device} but keys is on {keys.device}")
    check_jit_function(combine_fn, "combine_fn", 2, "a, b")
    acc = _widen(values.dtype)
    init_t = None
    if exclusive:
        if init is None:
            raise InputValueError("exclusive_scan_by_key needs an init value (each run's first item gets it)")
        init_t = (0, _init_tuple(init, 1)[0])
    outs, _ = scan_rows_launch((keys, values), segmented_combine(combine_fn, 1),
                               acc_dtypes=(torch.int32, acc), out_dtypes=(torch.int32, values.dtype),
                               dim=0, exclusive=exclusive, init=init_t, reverse=reverse,
                               deterministic=deterministic, by_key=True, store0=False)
    return outs[1]


def inclusive_scan_by_key(keys, values, combine_fn, *, reverse=False, deterministic=None):
    """Inclusive scan of ``values`` restarted at every run of equal consecutive ``keys`` (1-D).
    Keys compare with ``!=`` (a NaN key starts a new run at every item)."""
    return _by_key(keys, values, combine_fn, None, False, reverse, deterministic)


def _counted(values):
    """bool values of a sum by key as int64 0/1 (a count, as torch's cumsum of bool; summed in bool they
    would be a running or)."""
    return values.to(torch.int64) if isinstance(values, torch.Tensor) and values.dtype == torch.bool else values


def inclusive_sum_by_key(keys, values, *, reverse=False, deterministic=None):
    """Inclusive sum of ``values`` per run of equal consecutive ``keys`` (1-D; keys compare with
    ``!=``, so a NaN key starts a new run at every item); the sum is in ``values``' dtype (bool values:
    int64 counts)."""
    return _by_key(keys, _counted(values), combine_add, None, False, reverse, deterministic)


def exclusive_scan_by_key(keys, values, combine_fn, init, *, reverse=False, deterministic=None):
    """Exclusive scan of ``values`` per run of equal consecutive ``keys``: each run starts at ``init``."""
    return _by_key(keys, values, combine_fn, init, True, reverse, deterministic)


def exclusive_sum_by_key(keys, values, *, reverse=False, deterministic=None):
    """Exclusive sum of ``values`` per run of equal consecutive ``keys`` (each run starts at 0; bool
    values: int64 counts)."""
    return _by_key(keys, _counted(values), combine_add, 0, True, reverse, deterministic)


def _cumextreme(x, dim, combine):
    check_tensor(x, "x", SCAN_DTYPES)
    acc = _widen(x.dtype)
    ndim = x.dim()
    dim = wrap_dim(dim, ndim)   # (torch's errors for a bad dim, before the shape is indexed)
    row_len = x.shape[dim] if ndim else 1
    idx_acc = torch.int32 if row_len < 2**31 - 1 else torch.int64
    outs, _ = scan_rows_launch((x,), combine, acc_dtypes=(acc, idx_acc), out_dtypes=(x.dtype, torch.int64),
                               dim=dim, x1_index=True, deterministic=False)
    return outs[0], outs[1]


def cummax(x, dim: int):
    """``torch.cummax``: running maximum and the index where it was found (ties: the later index;
    NaN propagates, with the index of the latest NaN)."""
    return _cumextreme(x, dim, combine_cummax)


def cummin(x, dim: int):
    """``torch.cummin``: running minimum and its index (ties: the later index; NaN as cummax)."""
    return _cumextreme(x, dim, combine_cummin)


def cumprod(x, dim: int, dtype=None, *, reverse=False, deterministic=None):
    """``torch.cumprod`` (promotion as cumsum)."""
    return _sum(x, dim, dtype, reverse, deterministic, False, False, combine=combine_mul)


#: accumulators whose logcumsumexp scans (m, t) pairs (:func:`combine_logsumexp_pair`) rather than
#: one value under :func:`combine_logaddexp`
_LSE_PAIRS_ACC = (torch.float32, torch.float64)


def logcumsumexp(x, dim: int, *, reverse=False, deterministic=None):
    """``torch.logcumsumexp`` (floating dtypes; float16/bfloat16 accumulate in float32).

    The scan carries ``(m, t)`` pairs (:func:`combine_logsumexp_pair`: the running maximum and the sum
    of the other items scaled by it), one exp a combine, and writes ``m + log1p(t)``: NaN, infinities
    and a first item's ``-0.0`` come out as in torch; finite items within a few units of rounding of
    the float64 result (float32 on an H200: 0.96-2.9e-6 against torch's own 7.3e-6-3.2e-4 in
    ``bench/probes/logcumsumexp_pairs_probe.py``). Reproducible as the module says; on NVIDIA GPUs long
    rows take :func:`_logcumsumexp_warp_sync_kernel` (policy buckets ``lse32`` / ``lse64`` with their
    built-in ``WARP_SYNC 1``), bitwise reproducible in both modes."""
    check_tensor(x, "x", FLOAT_DTYPES)
    _check_flags(reverse, deterministic)
    acc = _widen(x.dtype)
    if acc in _LSE_PAIRS_ACC and x.dim() > 0:
        # (m, t) pairs (see combine_logsumexp_pair): the output m + log1p(t) of a first item x0 is
        # x0 + 0.0, which is torch's log(exp(x0)) (-0.0 gives +0.0; torch copies a 0-d x, below)
        outs, _ = scan_rows_launch((x,), combine_logsumexp_pair, acc_dtypes=(acc, acc), out_dtypes=(x.dtype,),
                                   dim=dim, reverse=reverse, deterministic=deterministic, costly=True, lse=True)
        return outs[0]
    # a 0-d x (and an accumulator outside _LSE_PAIRS_ACC, none today): the one-value scan, which copies a
    # lone item through as torch copies a 0-d x (-0.0 stays -0.0). (scan_rows_launch's plus_zero, which
    # gave a leading -0.0 torch's +0.0 on this path before the pairs, is kept for the probes that
    # measured it.)
    outs, _ = scan_rows_launch((x,), combine_logaddexp, acc_dtypes=(acc,), out_dtypes=(x.dtype,), dim=dim,
                               reverse=reverse, deterministic=deterministic, plus_zero=x.dim() > 0, costly=True)
    return outs[0]


# ----------------------------------------------------------------------------------------------
# Torch operators
# ----------------------------------------------------------------------------------------------

def _norm_dim(x: torch.Tensor, dim: int) -> int:
    return wrap_dim(dim, x.dim())


@custom_op("tritoncub::cumsum", mutates_args=())
def _cumsum_op(x: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    return inclusive_sum(x, _norm_dim(x, dim), dtype)


def _fake_like(x, dim, dtype=None, dtypes=SCAN_DTYPES):
    """The fake result of a scan operator: the real ops' checks (dim, ``x``'s dtype among ``dtypes``),
    then a contiguous tensor of x's shape (the real ops return contiguous results whatever x's strides)."""
    _norm_dim(x, dim)
    if x.dtype not in dtypes:
        raise InputTypeError(f"x has dtype {x.dtype}; supported dtypes are {dtype_names(dtypes)}")
    return x.new_empty(x.shape, dtype=x.dtype if dtype is None else dtype)


@_cumsum_op.register_fake
def _(x, dim, dtype=None):
    _fake_like(x, dim, None, SUM_SCAN_DTYPES)   # (x's dtype first, as the real op checks it)
    return _fake_like(x, dim, _sum_dtypes(x, dtype)[1], SUM_SCAN_DTYPES)


def _cumsum_setup(ctx, inputs, output):
    x, dim, dtype = inputs
    ctx.dim = dim
    ctx.in_dtype = x.dtype


def _cumsum_backward(ctx, grad):
    if not (ctx.in_dtype.is_floating_point or ctx.in_dtype.is_complex):
        return None, None, None
    g = torch.ops.tritoncub._reverse_cumsum(grad.contiguous(), ctx.dim)
    return g.to(ctx.in_dtype), None, None


@custom_op("tritoncub::_reverse_cumsum", mutates_args=())
def _reverse_cumsum_op(x: torch.Tensor, dim: int) -> torch.Tensor:
    """``flip(cumsum(flip(x)))`` along ``dim`` (cumsum's gradient)."""
    return inclusive_sum(x, _norm_dim(x, dim), reverse=True)


@_reverse_cumsum_op.register_fake
def _(x, dim):
    return _fake_like(x, dim, _sum_dtypes(x, None)[1], SUM_SCAN_DTYPES)


def _revsum_backward(ctx, grad):
    return torch.ops.tritoncub.cumsum(grad.contiguous(), ctx.dim), None


def _revsum_setup(ctx, inputs, output):
    ctx.dim = inputs[1]


_reverse_cumsum_op.register_autograd(_revsum_backward, setup_context=_revsum_setup)
_cumsum_op.register_autograd(_cumsum_backward, setup_context=_cumsum_setup)


@custom_op("tritoncub::cumprod", mutates_args=())
def _cumprod_op(x: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    return cumprod(x, _norm_dim(x, dim), dtype)


@_cumprod_op.register_fake
def _(x, dim, dtype=None):
    _fake_like(x, dim, None, SUM_SCAN_DTYPES)   # (x's dtype first, as the real op checks it)
    return _fake_like(x, dim, _sum_dtypes(x, dtype)[1], SUM_SCAN_DTYPES)


def _cumprod_setup(ctx, inputs, output):
    x, dim, dtype = inputs
    ctx.dim = dim
    ctx.save_for_backward(x, output)


def _cumprod_backward(ctx, grad):
    x, out = ctx.saved_tensors
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        return None, None, None
    dim = _norm_dim(x, ctx.dim)
    if x.numel() == 0:
        return torch.zeros_like(x), None, None
    if x.dim() == 0 or x.shape[dim] == 1:   # (as torch: no quotient, so an inf or NaN item passes its gradient on)
        return grad.to(x.dtype), None, None
    if not torch.is_grad_enabled() and no_host_data(x, grad, out):
        # traced (torch.compile's backward graph: fake tensors, whose zeros cannot be looked for on the
        # host): a formula that holds with or without zeros
        return _cumprod_grad_with_zeros(x, grad, out, dim).to(x.dtype), None, None
    if bool((x == 0).any()):
        # torch's own formula handles zeros (a product over a zero has no quotient form); when this
        # backward is itself recorded (create_graph), it is built on x and grad, so that higher
        # derivatives go through torch's formula too. Under deterministic mode the same rule from this
        # module's scans instead: torch's formula runs torch.cumsum, which refuses that mode for CUDA
        # floats (a recorded backward still takes torch's, for its higher derivatives)
        create = torch.is_grad_enabled()
        if not create and torch.are_deterministic_algorithms_enabled():
            return _cumprod_grad_with_zeros(x, grad, out, dim).to(x.dtype), None, None
        with torch.enable_grad():
            xx = x if create and x.requires_grad else x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(torch.cumprod(xx, dim, dtype=out.dtype), xx, grad, create_graph=create)
        return g, None, None
    # d out_j / d x_i = out_j / x_i for j >= i (conjugated for complex inputs, torch's convention)
    g = torch.ops.tritoncub._reverse_cumsum((grad * out.conj()).contiguous(), dim)
    return (g / x.conj()).to(x.dtype), None, None


def _cumprod_grad_with_zeros(x, grad, out, dim):
    """cumprod's gradient without reading ``x`` back (torch's rule for rows with zeros):
    ``sum_{j >= i} grad_j * conj(prod_{k <= j, k != i} x_k)``, where an item before its row's first 0
    sums over the ``j`` before that 0 (``out_j / x_i``), the first 0 over the ``j`` before the next 0
    (the product of the row's other items), and every item after the first 0 gets 0."""
    rev = torch.ops.tritoncub._reverse_cumsum
    zero = x == 0
    zeros_so_far = torch.ops.tritoncub.cumsum(zero, dim)
    before, first_run = zeros_so_far == 0, zeros_so_far == 1
    one, nothing = torch.ones_like(x), torch.zeros_like(grad)
    g_before = rev(torch.where(before, grad * out.conj(), nothing).contiguous(), dim)
    g_before = g_before / torch.where(zero, one, x).conj()
    # the first 0's: (product of the items before it) * sum_j grad_j * (product of the items after it, to j)
    head = torch.ops.tritoncub.cumprod(torch.where(before, x, one).contiguous(), dim).conj()
    tail = torch.ops.tritoncub.cumprod(torch.where(before | zero, one, x).contiguous(), dim).conj()
    g_zero = head * rev(torch.where(first_run, grad * tail, nothing).contiguous(), dim)
    return torch.where(before, g_before, torch.where(zero & first_run, g_zero, torch.zeros_like(g_zero)))


_cumprod_op.register_autograd(_cumprod_backward, setup_context=_cumprod_setup)


def _register_extreme(name, fn):
    @custom_op(f"tritoncub::{name}", mutates_args=())
    def op(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
        return fn(x, _norm_dim(x, dim))

    @op.register_fake
    def _(x, dim):
        return _fake_like(x, dim), _fake_like(x, dim, torch.int64)

    def setup(ctx, inputs, output):
        x, dim = inputs
        ctx.dim = dim
        ctx.save_for_backward(output[1])
        ctx.shape = x.shape
        ctx.dtype = x.dtype

    def backward(ctx, grad, grad_idx):
        (idx,) = ctx.saved_tensors
        if not ctx.dtype.is_floating_point:
            return None, None
        if idx.dim() == 0:
            return grad.clone(), None
        g = torch.zeros(ctx.shape, dtype=grad.dtype, device=grad.device)
        return g.scatter_add(_norm_dim(idx, ctx.dim), idx, grad), None

    op.register_autograd(backward, setup_context=setup)
    return op


_cummax_op = _register_extreme("cummax", cummax)
_cummin_op = _register_extreme("cummin", cummin)


@custom_op("tritoncub::logcumsumexp", mutates_args=())
def _logcumsumexp_op(x: torch.Tensor, dim: int) -> torch.Tensor:
    return logcumsumexp(x, _norm_dim(x, dim))


@_logcumsumexp_op.register_fake
def _(x, dim):
    return _fake_like(x, dim, None, FLOAT_DTYPES)


@custom_op("tritoncub::_reverse_logcumsumexp", mutates_args=())
def _reverse_lcse_op(x: torch.Tensor, dim: int) -> torch.Tensor:
    return logcumsumexp(x, _norm_dim(x, dim), reverse=True)


@_reverse_lcse_op.register_fake
def _(x, dim):
    return _fake_like(x, dim, None, FLOAT_DTYPES)


def _lcse_setup(ctx, inputs, output):
    x, dim = inputs
    ctx.dim = dim
    ctx.save_for_backward(x, output)


def _lcse_grad(ctx, grad, other_way):
    """Gradient of a (forward or reverse) logcumsumexp, by torch's formula: the incoming gradient split
    by sign, each part run through the scan the other way in log space (``other_way``: that op, whose
    own gradient is this formula again, so every order of derivative is available)."""
    x, out = ctx.saved_tensors
    if x.numel() == 0:
        return torch.zeros_like(x), None
    dim = _norm_dim(x, ctx.dim)
    lowest = torch.finfo(grad.dtype).min
    log_abs = grad.abs().log()
    pos = torch.where(grad > 0, log_abs, torch.full_like(log_abs, lowest))
    neg = torch.where(grad < 0, log_abs, torch.full_like(log_abs, lowest))
    out_pos = (other_way((pos - out).contiguous(), dim) + x).exp()
    out_neg = (other_way((neg - out).contiguous(), dim) + x).exp()
    return out_pos - out_neg, None


def _lcse_backward(ctx, grad):
    return _lcse_grad(ctx, grad, torch.ops.tritoncub._reverse_logcumsumexp)


def _reverse_lcse_backward(ctx, grad):
    return _lcse_grad(ctx, grad, torch.ops.tritoncub.logcumsumexp)


_logcumsumexp_op.register_autograd(_lcse_backward, setup_context=_lcse_setup)
_reverse_lcse_op.register_autograd(_reverse_lcse_backward, setup_context=_lcse_setup)
