"""BlockReduce: combine every item of a tile into one value (CUB's ``BlockReduce``).

A tile is a tensor of any shape held by one Triton program (one CTA); its items are reduced in
tile order. ``COMBINE`` is any associative ``@triton.jit`` function of two arguments (or of ``2k``
arguments returning a k-tuple, for tuples such as (value, index) — pass a tuple of tiles).

The reduction order inside a tile is fixed by the compiler's tree (the same for every run of the
same compiled kernel), so block results are bitwise reproducible. CUB's BlockReduceAlgorithm
(RAKING, WARP_REDUCTIONS, RAKING_COMMUTATIVE_ONLY) has no analogue: ``tl.reduce`` lowers to
in-thread, then warp-shuffle, then shared-memory steps chosen by Triton.
"""
import triton
import triton.language as tl


@triton.jit
def combine_add(a, b):
    return a + b


@triton.jit
def combine_min(a, b):
    return tl.minimum(a, b)


@triton.jit
def combine_max(a, b):
    return tl.maximum(a, b)


@triton.jit
def combine_min_propagate_nan(a, b):
    """min that returns NaN if either side is NaN (torch's amin)."""
    return tl.where((a != a) | (a < b), a, b)


@triton.jit
def combine_max_propagate_nan(a, b):
    """max that returns NaN if either side is NaN (torch's amax)."""
    return tl.where((a != a) | (a > b), a, b)


@triton.jit
def combine_argmin(a, ai, b, bi):
    """(value, index) pair min: smaller value wins, a NaN wins over any number (torch's argmin
    returns the index of a NaN), ties and two NaNs keep the lower index."""
    a_nan = a != a
    b_nan = b != b
    take_a = (a_nan & ~b_nan) | (a < b) | (((a == b) | (a_nan & b_nan)) & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def combine_argmax(a, ai, b, bi):
    """(value, index) pair max: larger value wins, NaN wins (torch's argmax), ties keep the lower index."""
    a_nan = a != a
    b_nan = b != b
    take_a = (a_nan & ~b_nan) | (a > b) | (((a == b) | (a_nan & b_nan)) & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def block_reduce(tile, COMBINE: tl.constexpr):
    """Reduce a tile (any shape) to a scalar with ``COMBINE``."""
    flat = tl.reshape(tile, (tile.numel,))
    return tl.reduce(flat, 0, COMBINE)


@triton.jit
def block_reduce_pair(values, indices, COMBINE: tl.constexpr):
    """Reduce a (values, indices) pair of tiles with a 4-argument ``COMBINE``; returns the pair."""
    v = tl.reshape(values, (values.numel,))
    i = tl.reshape(indices, (indices.numel,))
    return tl.reduce((v, i), 0, COMBINE)


@triton.jit
def block_reduce_partial(tile, valid_items, identity, COMBINE: tl.constexpr):
    """Reduce the first ``valid_items`` items (in tile order) of a tile; the rest count as ``identity``."""
    flat = tl.reshape(tile, (tile.numel,))
    idx = tl.arange(0, tile.numel)
    flat = tl.where(idx < valid_items, flat, identity)
    return tl.reduce(flat, 0, COMBINE)


@triton.jit
def block_sum(tile):
    """Sum of a tile (``tl.sum`` in tile order)."""
    return tl.sum(tl.reshape(tile, (tile.numel,)), 0)
