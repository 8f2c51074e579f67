"""BlockDiscontinuity: flag the first (head) and last (tail) items of runs of equal items in a tile.

Tiles are in item order (a blocked ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile or a 1-D tile, any
shape: the items are taken in row-major order and the flags come back in the tile's shape, as int1).

``FLAG_OP(a, b)`` is true where ``a`` and the item ``b`` after it are discontinuous (default
:func:`flag_inequality`, ``a != b``: NaN is unequal to everything, so every NaN starts and ends a run;
``-0.0 == 0.0``). As in CUB:

* heads: ``head[0]`` is ``FLAG_OP(tile_predecessor_item, x[0])`` when a predecessor is given and
  ``has_predecessor`` holds, else 1; ``head[i] = FLAG_OP(x[i-1], x[i])``;
* tails: ``tail[N-1]`` is ``FLAG_OP(x[N-1], tile_successor_item)`` when a successor is given and
  ``has_successor`` holds, else 1; ``tail[i] = FLAG_OP(x[i], x[i+1])``.

The neighbour tile's edge item is the caller's load (``ptr[tile_base - 1]`` when ``tile_base > 0``);
``has_predecessor``/``has_successor`` may be runtime scalars such as ``tile_base > 0``. A ragged last
tile: pass ``valid_items`` to :func:`block_flag_tails` to flag item ``valid_items - 1`` as the end.
bfloat16 items are compared as float32 (exact; see :func:`tritoncub.warp.scan.widen`).
"""
import triton
import triton.language as tl

from ..warp.scan import fill_like, widen


@triton.jit
def flag_inequality(a, b):
    """The default discontinuity test: ``a != b`` (bfloat16 compared as float32: the same result
    compiled, where Triton's interpreter compares bfloat16 by its raw bits, so that -0.0 != +0.0 and
    NaN == NaN there)."""
    if a.dtype == tl.bfloat16:
        return a.to(tl.float32) != b.to(tl.float32)
    return a != b


@triton.jit
def _neighbour(flat, STEP: tl.constexpr):
    N: tl.constexpr = flat.numel
    idx = tl.arange(0, N)
    src = tl.minimum(tl.maximum(idx + STEP, 0), N - 1)
    return tl.gather(flat, src, 0)


@triton.jit
def block_flag_heads(tile, FLAG_OP: tl.constexpr = flag_inequality, tile_predecessor_item=None,
                     has_predecessor=True):
    """Head flags of the tile (CUB's ``FlagHeads``); int1 in the tile's shape."""
    N: tl.constexpr = tile.numel
    flat = widen(tl.reshape(tile, (N,)))
    idx = tl.arange(0, N)
    flags = FLAG_OP(_neighbour(flat, -1), flat) != 0
    if tile_predecessor_item is None:
        first = idx == 0
    else:
        pred = fill_like(flat, tile_predecessor_item)
        first = tl.where(has_predecessor, FLAG_OP(pred, flat) != 0, True)
    flags = tl.where(idx == 0, first, flags)
    return tl.reshape(flags, tile.shape)


@triton.jit
def block_flag_tails(tile, FLAG_OP: tl.constexpr = flag_inequality, tile_successor_item=None,
                     has_successor=True, valid_items=None):
    """Tail flags of the tile (CUB's ``FlagTails``); int1 in the tile's shape. With ``valid_items``
    (ragged last tile) item ``valid_items - 1`` is the end (flagged 1, no successor) and later items
    are flagged 0."""
    N: tl.constexpr = tile.numel
    flat = widen(tl.reshape(tile, (N,)))
    idx = tl.arange(0, N)
    flags = FLAG_OP(flat, _neighbour(flat, 1)) != 0
    if tile_successor_item is None:
        last = idx == N - 1
    else:
        succ = fill_like(flat, tile_successor_item)
        last = tl.where(has_successor, FLAG_OP(flat, succ) != 0, True)
    if valid_items is None:
        flags = tl.where(idx == N - 1, last, flags)
    else:
        v = tl.minimum(idx * 0 + valid_items, N)   # (valid_items past the tile: the tile's last item ends it)
        flags = tl.where(idx == v - 1, True, flags) & (idx < v)
    return tl.reshape(flags, tile.shape)


@triton.jit
def block_flag_heads_and_tails(tile, FLAG_OP: tl.constexpr = flag_inequality, tile_predecessor_item=None,
                               has_predecessor=True, tile_successor_item=None, has_successor=True):
    """``(heads, tails)`` of the tile (CUB's ``FlagHeadsAndTails``)."""
    heads = block_flag_heads(tile, FLAG_OP, tile_predecessor_item, has_predecessor)
    tails = block_flag_tails(tile, FLAG_OP, tile_successor_item, has_successor)
    return heads, tails
