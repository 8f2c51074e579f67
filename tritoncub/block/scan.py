"""BlockScan: prefix scans over the items of a tile, in item order (CUB's ``BlockScan``).

Tiles may have any shape; items are taken in row-major order (a blocked
``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile flattens to item order) and results come back in the
tile's shape. ``COMBINE`` is any associative ``@triton.jit`` function of two tiles (it need not be
commutative: items are combined in item order; for ``REVERSE`` scans Triton calls
``COMBINE(later, earlier)``). Exclusive scans need no inverse of ``COMBINE``: the inclusive scan is
shifted by one item (``tl.gather``) and seeded with ``init``, so they work for min, max, products and
user operators alike; integer sums use the exact ``inclusive - x``, float sums the shifted form (so
``inf`` and NaN never meet a subtraction).

Aggregates (CUB's ``block_aggregate``) are the inclusive scan's last item, so they agree bitwise
with the scan; they never include ``init``. Multi-tile loops pass the running prefix of earlier
tiles in (``*_with_prefix``) and receive the new running prefix back: CUB's
``BlockPrefixCallbackOp``, the prefix being ``prefix ⊕ aggregate``.

(value, index) pairs scan with :func:`block_inclusive_scan_pair` (e.g. a running argmin).
bfloat16 tiles are combined in float32 and rounded back (:func:`tritoncub.warp.scan.widen`).
CUB's BlockScanAlgorithm (RAKING, RAKING_MEMOIZE, WARP_SCANS) has no analogue: Triton lowers
``tl.associative_scan`` itself (in-thread, warp-shuffle, then shared-memory steps).
"""
import triton
import triton.language as tl

from ..warp.scan import fill_like, widen
from .reduce import combine_add


@triton.jit
def _flat(tile):
    return widen(tl.reshape(tile, (tile.numel,)))


@triton.jit
def _last(flat):
    """The last item of a 1-D tile as a scalar (a gather: bit-exact)."""
    N: tl.constexpr = flat.numel
    return tl.reshape(tl.gather(flat, tl.full([1], N - 1, tl.int32), 0), ())


@triton.jit
def block_inclusive_scan(tile, COMBINE: tl.constexpr, REVERSE: tl.constexpr = False):
    """Inclusive scan along the tile (``REVERSE`` scans from the last item)."""
    inc = tl.associative_scan(_flat(tile), 0, COMBINE, reverse=REVERSE)
    return tl.reshape(inc, tile.shape).to(tile.dtype)


@triton.jit
def block_inclusive_sum(tile, REVERSE: tl.constexpr = False):
    """Inclusive prefix sum in the tile's dtype (integers wrap)."""
    tl.static_assert(tile.dtype != tl.int1, "block_inclusive_sum: no sum of a bool tile (an or under the "
                     "interpreter, a parity compiled): convert it to an integer dtype")
    return block_inclusive_scan(tile, combine_add, REVERSE)


@triton.jit
def block_shift_right(tile, fill, REVERSE: tl.constexpr = False):
    """``out[i] = tile[i-1]`` (``out[0] = fill``); with ``REVERSE``, ``out[i] = tile[i+1]``. Any shape,
    item order."""
    N: tl.constexpr = tile.numel
    flat = tl.reshape(tile, (N,))
    idx = tl.arange(0, N)
    if REVERSE:
        src = tl.minimum(idx + 1, N - 1)
        edge = idx == N - 1
    else:
        src = tl.maximum(idx - 1, 0)
        edge = idx == 0
    shifted = tl.gather(flat, src, 0)
    return tl.reshape(tl.where(edge, fill_like(flat, fill), shifted), tile.shape)


@triton.jit
def block_exclusive_sum(tile, REVERSE: tl.constexpr = False):
    """Exclusive sum; the first item's result is 0. Integers: ``inclusive - x`` (exact under
    wrap-around). Floats: the inclusive sum shifted by one item, so each output is exactly the inclusive
    result of the item before (no ``inf - inf``)."""
    tl.static_assert(tile.dtype != tl.int1, "block_exclusive_sum: no sum of a bool tile (an or under the "
                     "interpreter, a parity compiled): convert it to an integer dtype")
    inc = block_inclusive_scan(tile, combine_add, REVERSE)
    if tile.dtype.is_floating():
        out = block_shift_right(inc, 0.0, REVERSE)
    else:
        out = inc - tile
    return out


@triton.jit
def _exclusive_from_inclusive(inc, init, COMBINE: tl.constexpr, REVERSE: tl.constexpr):
    N: tl.constexpr = inc.numel
    idx = tl.arange(0, N)
    init_t = tl.full((N,), init, inc.dtype)
    prev = block_shift_right(inc, init_t, REVERSE)
    if REVERSE:
        first = idx == N - 1
    else:
        first = idx == 0
    return tl.where(first, init_t, COMBINE(init_t, prev))


@triton.jit
def block_exclusive_scan(tile, init, COMBINE: tl.constexpr, REVERSE: tl.constexpr = False):
    """Exclusive scan seeded with ``init``: ``out[i] = init ⊕ tile[0] ⊕ ... ⊕ tile[i-1]``."""
    inc = tl.associative_scan(_flat(tile), 0, COMBINE, reverse=REVERSE)
    out = _exclusive_from_inclusive(inc, init, COMBINE, REVERSE)
    return tl.reshape(out, tile.shape).to(tile.dtype)


@triton.jit
def block_inclusive_scan_aggregate(tile, COMBINE: tl.constexpr):
    """Inclusive scan and the block aggregate: ``(scan, aggregate)``."""
    inc = tl.associative_scan(_flat(tile), 0, COMBINE)
    return tl.reshape(inc, tile.shape).to(tile.dtype), _last(inc).to(tile.dtype)


@triton.jit
def block_exclusive_scan_aggregate(tile, init, COMBINE: tl.constexpr):
    """Exclusive scan seeded with ``init`` and the block aggregate (without ``init``): ``(scan, aggregate)``."""
    inc = tl.associative_scan(_flat(tile), 0, COMBINE)
    out = _exclusive_from_inclusive(inc, init, COMBINE, False)
    return tl.reshape(out, tile.shape).to(tile.dtype), _last(inc).to(tile.dtype)


@triton.jit
def block_exclusive_sum_aggregate(tile):
    """Exclusive sum and the block total: ``(scan, aggregate)``."""
    tl.static_assert(tile.dtype != tl.int1, "block_exclusive_sum_aggregate: no sum of a bool tile (an or under the "
                     "interpreter, a parity compiled): convert it to an integer dtype")
    inc = block_inclusive_scan(tile, combine_add)
    if tile.dtype.is_floating():
        out = block_shift_right(inc, 0.0)
    else:
        out = inc - tile
    return out, _last(tl.reshape(inc, (tile.numel,)))


@triton.jit
def block_inclusive_scan_with_prefix(tile, prefix, COMBINE: tl.constexpr):
    """Inclusive scan seeded with the running ``prefix`` of earlier tiles.

    Returns ``(scan, new_prefix)`` where ``new_prefix = prefix ⊕ aggregate(tile)`` (the scan's last item)."""
    inc = tl.associative_scan(_flat(tile), 0, COMBINE)
    seeded = COMBINE(tl.full(inc.shape, prefix, inc.dtype), inc)
    return tl.reshape(seeded, tile.shape).to(tile.dtype), _last(seeded).to(tile.dtype)


@triton.jit
def block_exclusive_scan_with_prefix(tile, prefix, COMBINE: tl.constexpr):
    """Exclusive scan seeded with the running ``prefix``; returns ``(scan, new_prefix)``."""
    inc = tl.associative_scan(_flat(tile), 0, COMBINE)
    out = _exclusive_from_inclusive(inc, prefix, COMBINE, False)
    new_prefix = COMBINE(tl.full((1,), prefix, inc.dtype), tl.full((1,), _last(inc), inc.dtype))
    return tl.reshape(out, tile.shape).to(tile.dtype), tl.reshape(new_prefix, ()).to(tile.dtype)


@triton.jit
def block_inclusive_scan_pair(values, indices, COMBINE: tl.constexpr):
    """Inclusive scan of (value, index) pairs with a 4-argument ``COMBINE`` (a running argmin with
    ``combine_argmin``); returns the pair of scanned tiles in the input's shape."""
    v = _flat(values)
    i = tl.reshape(indices, (indices.numel,))
    sv, si = tl.associative_scan((v, i), 0, COMBINE)
    return tl.reshape(sv, values.shape).to(values.dtype), tl.reshape(si, indices.shape)
