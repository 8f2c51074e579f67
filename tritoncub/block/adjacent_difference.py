"""BlockAdjacentDifference: differences of neighbouring items of a tile (CUB's ``BlockAdjacentDifference``).

Tiles are in item order (any shape, row-major; a blocked tile flattens to item order); results come
back in the tile's shape. ``DIFF_OP(a, b)`` is called with the item first and its neighbour second
(default :func:`diff_subtract`, ``a - b``: integers wrap, floats follow IEEE, so ``inf - inf`` is NaN).

* ``block_subtract_left``: ``out[i] = DIFF_OP(x[i], x[i-1])``; ``out[0]`` is
  ``DIFF_OP(x[0], tile_predecessor_item)`` when a predecessor is given and ``has_predecessor`` holds,
  else ``x[0]`` unchanged (CUB's ``SubtractLeft``).
* ``block_subtract_right``: ``out[i] = DIFF_OP(x[i], x[i+1])``; the last item is
  ``DIFF_OP(x[N-1], tile_successor_item)`` or unchanged (CUB's ``SubtractRight``).

``valid_items`` (the ``*PartialTile`` forms): items at ``>= valid_items`` are returned unchanged, and
for ``block_subtract_right`` item ``valid_items - 1`` is the last one (unchanged; no successor).
Results take the type of ``DIFF_OP``'s result promoted with the tile's dtype. bfloat16 tiles are
differenced in float32 and rounded back (one rounding, as bfloat16 arithmetic does).
"""
import triton
import triton.language as tl

from ..warp.scan import fill_like, widen
from .discontinuity import _neighbour


@triton.jit
def _narrow(out, dtype: tl.constexpr):
    if (dtype == tl.bfloat16) & (out.dtype == tl.float32):
        res = out.to(tl.bfloat16)
    else:
        res = out
    return res


@triton.jit
def diff_subtract(a, b):
    """The default difference: ``a - b`` (bool tiles: ``a != b``, torch.diff's rule for bool, on every
    backend)."""
    if a.dtype == tl.int1:
        r = a != b
    else:
        r = a - b
    return r


@triton.jit
def block_subtract_left(tile, DIFF_OP: tl.constexpr = diff_subtract, tile_predecessor_item=None,
                        has_predecessor=True, valid_items=None):
    """``out[i] = DIFF_OP(x[i], x[i-1])`` (see the module doc for item 0 and ``valid_items``)."""
    N: tl.constexpr = tile.numel
    flat = widen(tl.reshape(tile, (N,)))
    idx = tl.arange(0, N)
    diff = DIFF_OP(flat, _neighbour(flat, -1))
    if tile_predecessor_item is None:
        first = flat
    else:
        pred = fill_like(flat, tile_predecessor_item)
        first = tl.where(has_predecessor, DIFF_OP(flat, pred), flat)
    out = tl.where(idx == 0, first, diff)
    if valid_items is not None:
        out = tl.where(idx < valid_items, out, flat)
    return _narrow(tl.reshape(out, tile.shape), tile.dtype)


@triton.jit
def block_subtract_right(tile, DIFF_OP: tl.constexpr = diff_subtract, tile_successor_item=None,
                         has_successor=True, valid_items=None):
    """``out[i] = DIFF_OP(x[i], x[i+1])`` (see the module doc for the last item and ``valid_items``)."""
    N: tl.constexpr = tile.numel
    flat = widen(tl.reshape(tile, (N,)))
    idx = tl.arange(0, N)
    diff = DIFF_OP(flat, _neighbour(flat, 1))
    if valid_items is None:
        if tile_successor_item is None:
            last = flat
        else:
            succ = fill_like(flat, tile_successor_item)
            last = tl.where(has_successor, DIFF_OP(flat, succ), flat)
        out = tl.where(idx == N - 1, last, diff)
    else:
        out = tl.where(idx < tl.minimum(idx * 0 + valid_items, N) - 1, diff, flat)   # (valid_items may pass N)
    return _narrow(tl.reshape(out, tile.shape), tile.dtype)
