"""BlockScan: prefix scans over the items of a tile, in tile order (CUB's ``BlockScan``).

Tiles are 1-D tensors in item order (a blocked ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile flattens
to that order). ``COMBINE`` is any associative ``@triton.jit`` function of two tiles. Exclusive
scans need no inverse of ``COMBINE``: the inclusive scan is shifted by one item (``tl.gather``) and
seeded with ``init``, so they work for min, max, products and user operators alike; sums have a
cheaper exclusive form (``inclusive - x``) that is exact for integers.

Multi-tile loops pass the running prefix of earlier tiles in (``*_with_prefix``) and receive the
new running prefix (the block aggregate folded into it) back, CUB's ``BlockPrefixCallbackOp``.
CUB's BlockScanAlgorithm (RAKING, RAKING_MEMOIZE, WARP_SCANS) has no analogue: Triton lowers
``tl.associative_scan`` itself.
"""
import triton
import triton.language as tl

from .reduce import combine_add


@triton.jit
def block_inclusive_scan(tile, COMBINE: tl.constexpr, REVERSE: tl.constexpr = False):
    """Inclusive scan along the tile (``REVERSE`` scans from the last item)."""
    return tl.associative_scan(tile, 0, COMBINE, reverse=REVERSE)


@triton.jit
def block_inclusive_sum(tile, REVERSE: tl.constexpr = False):
    return tl.associative_scan(tile, 0, combine_add, reverse=REVERSE)


@triton.jit
def block_exclusive_sum(tile, REVERSE: tl.constexpr = False):
    """Exclusive sum; the first item's result is 0. Exact for integers; for floats it is
    ``inclusive - x``, which may differ from a separately summed prefix in the last bits."""
    inc = tl.associative_scan(tile, 0, combine_add, reverse=REVERSE)
    return inc - tile


@triton.jit
def block_shift_right(tile, fill, REVERSE: tl.constexpr = False):
    """``out[i] = tile[i-1]`` (``out[0] = fill``); with ``REVERSE``, ``out[i] = tile[i+1]``."""
    N: tl.constexpr = tile.numel
    idx = tl.arange(0, N)
    if REVERSE:
        src = tl.minimum(idx + 1, N - 1)
        edge = idx == N - 1
    else:
        src = tl.maximum(idx - 1, 0)
        edge = idx == 0
    shifted = tl.gather(tile, src, 0)
    return tl.where(edge, fill, shifted)


@triton.jit
def block_exclusive_scan(tile, init, COMBINE: tl.constexpr, REVERSE: tl.constexpr = False):
    """Exclusive scan seeded with ``init``: ``out[i] = init ⊕ tile[0] ⊕ ... ⊕ tile[i-1]``."""
    inc = tl.associative_scan(tile, 0, COMBINE, reverse=REVERSE)
    prev = block_shift_right(inc, init, REVERSE)
    N: tl.constexpr = tile.numel
    idx = tl.arange(0, N)
    if REVERSE:
        first = idx == N - 1
    else:
        first = idx == 0
    seeded = COMBINE(tl.full(tile.shape, init, tile.dtype), prev)
    return tl.where(first, tl.full(tile.shape, init, tile.dtype), seeded)


@triton.jit
def block_inclusive_scan_with_prefix(tile, prefix, COMBINE: tl.constexpr):
    """Inclusive scan seeded with the running ``prefix`` of earlier tiles.

    Returns ``(scan, new_prefix)`` where ``new_prefix = prefix ⊕ aggregate(tile)``."""
    inc = tl.associative_scan(tile, 0, COMBINE)
    seeded = COMBINE(tl.full(tile.shape, prefix, tile.dtype), inc)
    new_prefix = COMBINE(prefix, tl.reduce(tile, 0, COMBINE))
    return seeded, new_prefix


@triton.jit
def block_exclusive_scan_with_prefix(tile, prefix, COMBINE: tl.constexpr):
    """Exclusive scan seeded with the running ``prefix``; returns ``(scan, new_prefix)``."""
    out = block_exclusive_scan(tile, prefix, COMBINE)
    new_prefix = COMBINE(prefix, tl.reduce(tile, 0, COMBINE))
    return out, new_prefix
