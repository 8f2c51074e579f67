"""BlockReduce: combine every item of a tile into one value (CUB's ``BlockReduce``).

A tile is a tensor of any shape held by one Triton program (one CTA); its items are reduced in
item order (row-major; a blocked ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile flattens to item order).
``COMBINE`` is any associative and commutative ``@triton.jit`` function (see the last paragraph;
:func:`block_reduce_valid` alone needs no commutativity) of two arguments, or of four for (value, index)
pairs (:func:`block_reduce_pair`, :func:`block_argmin`, :func:`block_argmax`).

* full tiles: :func:`block_reduce`, :func:`block_sum`, :func:`block_min`, :func:`block_max`;
* ragged tiles: :func:`block_reduce_partial` (items past ``valid_items`` count as ``identity``) or
  :func:`block_reduce_valid` (no identity needed: the inclusive scan's item ``valid_items - 1``).

Determinism: the reduction order inside a tile is fixed by the compiler's tree (the same for every
run of the same compiled kernel), so block results are bitwise reproducible; for floats it is not
the sequential order, so sums may differ from ``torch.sum`` in the last bits. Sums follow
``tl.sum``: integers narrower than 32 bits accumulate in (u)int32. bfloat16 tiles are combined in
float32 and rounded back (:func:`tritoncub.warp.scan.widen`). CUB's BlockReduceAlgorithm (RAKING,
WARP_REDUCTIONS, RAKING_COMMUTATIVE_ONLY) has no analogue: ``tl.reduce`` lowers to in-thread, then
warp-shuffle, then shared-memory steps chosen by Triton — that is WARP_REDUCTIONS' shape, and the
operator must be commutative as well as associative for the tree to equal the sequential result.
"""
import triton
import triton.language as tl

from ..warp.scan import sum_operand, widen


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
    """min that returns NaN if either side is NaN (torch's amin); ties return ``b``. (Two selects,
    not an OR of the masks: the interpreter cannot OR a scalar's mask with a tile's.)"""
    return tl.where(a != a, a, tl.where(a < b, a, b))


@triton.jit
def combine_max_propagate_nan(a, b):
    """max that returns NaN if either side is NaN (torch's amax); ties return ``b``."""
    return tl.where(a != a, a, tl.where(a > b, a, b))


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
    """Reduce a tile (any shape) to a scalar with ``COMBINE``, which must be associative and
    commutative (``tl.reduce``'s tree combines items in no fixed order on a GPU)."""
    flat = widen(tl.reshape(tile, (tile.numel,)))
    return tl.reduce(flat, 0, COMBINE).to(tile.dtype)


@triton.jit
def block_reduce_pair(values, indices, COMBINE: tl.constexpr):
    """Reduce a (values, indices) pair of tiles with a 4-argument ``COMBINE``; returns the pair."""
    v = widen(tl.reshape(values, (values.numel,)))
    i = tl.reshape(indices, (indices.numel,))
    rv, ri = tl.reduce((v, i), 0, COMBINE)
    return rv.to(values.dtype), ri


@triton.jit
def block_reduce_partial(tile, valid_items, identity, COMBINE: tl.constexpr):
    """Reduce the first ``valid_items`` items of a tile; the rest count as ``identity``. ``COMBINE``
    must be commutative as well as associative (``tl.reduce``'s tree)."""
    flat = widen(tl.reshape(tile, (tile.numel,)))
    idx = tl.arange(0, tile.numel)
    flat = tl.where(idx < valid_items, flat, identity)
    return tl.reduce(flat, 0, COMBINE).to(tile.dtype)


@triton.jit
def block_reduce_valid(tile, valid_items, COMBINE: tl.constexpr):
    """Reduce the first ``valid_items`` (>= 1) items of a tile with no identity element (CUB's
    ``Reduce(input, op, num_valid)``): the inclusive scan's item ``valid_items - 1``. Items are
    combined in item order, so ``COMBINE`` need not be commutative."""
    N: tl.constexpr = tile.numel
    inc = tl.associative_scan(widen(tl.reshape(tile, (N,))), 0, COMBINE)
    last = tl.minimum(tl.maximum(valid_items - 1, 0), N - 1)
    return tl.reshape(tl.gather(inc, tl.full([1], last, tl.int32), 0), ()).to(tile.dtype)


@triton.jit
def block_sum(tile):
    """Sum of a tile (``tl.sum``'s accumulator types: integers narrower than 32 bits in (u)int32)."""
    flat = sum_operand(tl.reshape(tile, (tile.numel,)))
    out = tl.reduce(flat, 0, combine_add)
    if tile.dtype == tl.bfloat16:
        out = out.to(tl.bfloat16)
    return out


@triton.jit
def block_min(tile):
    """Smallest item (``tl.minimum``: where a NaN is involved the result is unspecified; use
    ``block_reduce(tile, combine_min_propagate_nan)`` for torch's NaN-propagating amin)."""
    return block_reduce(tile, combine_min)


@triton.jit
def block_max(tile):
    """Largest item (NaN: see :func:`block_min`)."""
    return block_reduce(tile, combine_max)


@triton.jit
def block_argmin(tile):
    """``(value, index)`` of the smallest item; ``index`` (int32) is the item position in tile order.
    NaN counts as smallest, ties keep the lowest index (torch's argmin)."""
    idx = tl.reshape(tl.arange(0, tile.numel), tile.shape)
    return block_reduce_pair(tile, idx, combine_argmin)


@triton.jit
def block_argmax(tile):
    """``(value, index)`` of the largest item; NaN counts as largest, ties keep the lowest index."""
    idx = tl.reshape(tl.arange(0, tile.numel), tile.shape)
    return block_reduce_pair(tile, idx, combine_argmax)
