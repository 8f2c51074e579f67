"""WarpReduce: combine the inputs of every logical warp of a ``[WARPS, LANES]`` tile (CUB's ``WarpReduce``).

Row ``w`` is logical warp ``w``; lane ``t`` holds that thread's input. ``LOGICAL_WARP_THREADS``
(1..32; ``0`` = the whole row) may be any size up to ``LANES``: for a full power-of-two warp the
reduction is ``tl.reduce`` along axis 1 (Triton lowers it to in-register and warp-shuffle steps, CUB's
shuffle reduction); for a smaller or non-power-of-two warp, and for ``valid_items``, the result is the
inclusive scan's value at the last real lane, so no identity element is needed for ``COMBINE`` and
the padding lanes never contribute. ``COMBINE`` is any associative ``@triton.jit`` function; pairs
such as (value, index) go through :func:`warp_reduce_pair`. The ``tl.reduce`` path combines lanes in
a butterfly (CUB's shuffle reduction), so there ``COMBINE`` must also be commutative; the scan-based
forms (:func:`warp_reduce_partial` with ``valid_items = LOGICAL_WARP_THREADS``, the segmented
reductions) combine in lane order and take any associative operator.

Results are ``[WARPS]`` tensors — one value per warp, CUB's "valid in lane 0" — except the
segmented reductions, which return ``[WARPS, LANES]`` with every lane holding the aggregate of its
own segment (CUB promises it only in the segment's first lane).

Sums follow ``tl.sum``: integers narrower than 32 bits accumulate in (u)int32. bfloat16 is combined
in float32 and rounded back to bfloat16 (:func:`tritoncub.warp.scan.widen`).
"""
import triton
import triton.language as tl

from .scan import _warp_add, sum_operand, warp_lane, warp_segmented_inclusive_scan, widen


@triton.jit
def _warp_min(a, b):
    return tl.minimum(a, b)


@triton.jit
def warp_reduce(tile, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Reduce each warp's ``LOGICAL_WARP_THREADS`` lanes with ``COMBINE``; returns ``[WARPS]``."""
    LANES: tl.constexpr = tile.shape[1]
    x = widen(tile)
    if (LOGICAL_WARP_THREADS == 0) or (LOGICAL_WARP_THREADS == LANES):
        out = tl.reduce(x, 1, COMBINE)
    else:
        inc = tl.associative_scan(x, 1, COMBINE)
        out = warp_lane(inc, LOGICAL_WARP_THREADS - 1)
    return out.to(tile.dtype)


@triton.jit
def warp_reduce_pair(values, indices, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Reduce (value, index) pairs with a 4-argument ``COMBINE`` (``combine_argmin``...); returns
    ``([WARPS] values, [WARPS] indices)``."""
    LANES: tl.constexpr = values.shape[1]
    x = widen(values)
    if (LOGICAL_WARP_THREADS == 0) or (LOGICAL_WARP_THREADS == LANES):
        v, i = tl.reduce((x, indices), 1, COMBINE)
    else:
        sv, si = tl.associative_scan((x, indices), 1, COMBINE)
        v = warp_lane(sv, LOGICAL_WARP_THREADS - 1)
        i = warp_lane(si, LOGICAL_WARP_THREADS - 1)
    return v.to(values.dtype), i


@triton.jit
def warp_sum(tile, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Sum of each warp's ``LOGICAL_WARP_THREADS`` lanes (padding lanes count as 0)."""
    LANES: tl.constexpr = tile.shape[1]
    x = sum_operand(tile)
    if (LOGICAL_WARP_THREADS == 0) or (LOGICAL_WARP_THREADS == LANES):
        out = tl.reduce(x, 1, _warp_add)
    else:
        t = tl.arange(0, LANES)[None, :]
        out = tl.reduce(tl.where(t < LOGICAL_WARP_THREADS, x, tl.zeros_like(x)), 1, _warp_add)
    if tile.dtype == tl.bfloat16:
        out = out.to(tl.bfloat16)
    return out


@triton.jit
def warp_reduce_partial(tile, valid_items, COMBINE: tl.constexpr):
    """Reduce lanes ``0 .. valid_items-1`` of each warp (CUB's ``Reduce(input, op, valid_items)``).
    ``valid_items`` is a scalar or a ``[WARPS]`` tensor, ``1 <= valid_items <=`` the tile's lanes
    (with 0 the result is lane 0's input). A logical warp narrower than the tile's lanes: keep
    ``valid_items`` at most its width (lanes past it would count)."""
    inc = tl.associative_scan(widen(tile), 1, COMBINE)
    return warp_lane(inc, valid_items - 1).to(tile.dtype)


@triton.jit
def warp_sum_partial(tile, valid_items):
    """Sum of lanes ``0 .. valid_items-1`` of each warp (``valid_items`` scalar or ``[WARPS]``; 0 gives 0;
    lanes past a logical warp narrower than the tile count if ``valid_items`` reaches them)."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    t = tl.arange(0, LANES)[None, :]
    limit = (tl.zeros([WARPS], dtype=tl.int32) + valid_items)[:, None]
    x = sum_operand(tile)
    out = tl.reduce(tl.where(t < limit, x, tl.zeros_like(x)), 1, _warp_add)
    if tile.dtype == tl.bfloat16:
        out = out.to(tl.bfloat16)
    return out


@triton.jit
def warp_head_segmented_reduce(tile, head_flags, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Segmented reduction, segments starting at lanes whose ``head_flags`` are set (lane 0 always
    starts one). Returns ``[WARPS, LANES]``: every real lane holds its segment's aggregate, combined in
    lane order (CUB's ``HeadSegmentedReduce`` guarantees the first lane of each segment)."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    L: tl.constexpr = LANES if LOGICAL_WARP_THREADS == 0 else LOGICAL_WARP_THREADS
    heads = (head_flags != 0)
    t = tl.broadcast_to(tl.arange(0, LANES)[None, :], (WARPS, LANES))
    inc = warp_segmented_inclusive_scan(tile, heads, COMBINE)
    # last lane of each lane's segment: the nearest lane >= t whose successor starts a segment
    nxt = tl.gather(heads.to(tl.int32), tl.minimum(t + 1, LANES - 1), 1) != 0
    is_tail = ((t + 1 < L) & nxt) | (t >= L - 1)
    ends = tl.associative_scan(tl.where(is_tail, t, LANES - 1), 1, _warp_min, reverse=True)
    return tl.gather(inc, ends, 1)


@triton.jit
def warp_tail_segmented_reduce(tile, tail_flags, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Segmented reduction, segments ending at lanes whose ``tail_flags`` are set (the last real lane
    always ends one). Returns ``[WARPS, LANES]`` with every real lane holding its segment's aggregate."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    t = tl.broadcast_to(tl.arange(0, LANES)[None, :], (WARPS, LANES))
    prev_tail = tl.gather((tail_flags != 0).to(tl.int32), tl.maximum(t - 1, 0), 1) != 0
    heads = (t == 0) | prev_tail
    return warp_head_segmented_reduce(tile, heads, COMBINE, LOGICAL_WARP_THREADS)
