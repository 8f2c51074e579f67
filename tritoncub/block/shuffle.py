"""BlockShuffle: move items between the positions of a tile (CUB's ``BlockShuffle``).

CUB shuffles one item per thread (``Offset``, ``Rotate``) or a blocked arrangement by one item
(``Up``, ``Down``). Here the tile is taken in item order (any shape, row-major; a ``[BLOCK_THREADS, 1]``
or 1-D tile is CUB's one-item-per-thread case) and results come back in the tile's shape. Positions
whose source falls outside the tile receive ``fill`` (CUB leaves them unwritten). Every move is a
``tl.gather`` along the flattened tile, so values (NaN payloads, -0.0) move bit-exactly;
``distance`` may be a runtime scalar.
"""
import triton
import triton.language as tl

from ..warp.scan import fill_like


@triton.jit
def _item(flat, index):
    """``flat[index]`` as a scalar."""
    return tl.reshape(tl.gather(flat, tl.full([1], index, tl.int32), 0), ())


@triton.jit
def block_shuffle_offset(tile, distance, fill):
    """``out[i] = x[i + distance]`` (CUB's ``Offset``); out-of-range sources give ``fill``."""
    N: tl.constexpr = tile.numel
    flat = tl.reshape(tile, (N,))
    src = tl.arange(0, N) + distance
    inside = (src >= 0) & (src < N)
    moved = tl.gather(flat, tl.where(inside, src, 0).to(tl.int32), 0)
    return tl.reshape(tl.where(inside, moved, fill_like(flat, fill)), tile.shape)


@triton.jit
def block_shuffle_rotate(tile, distance):
    """``out[i] = x[(i + distance) mod N]`` (CUB's ``Rotate``; any integer ``distance``)."""
    N: tl.constexpr = tile.numel
    flat = tl.reshape(tile, (N,))
    # (the distance as a scalar tensor first: an int literal is a plain int under the interpreter, and
    # ``int % constexpr`` has no operator there)
    d = (tl.zeros([], tl.int64) + distance) % N
    src = (tl.arange(0, N) + d + N) % N
    return tl.reshape(tl.gather(flat, src.to(tl.int32), 0), tile.shape)


@triton.jit
def block_shuffle_up(tile, fill):
    """Shift up by one item: ``out[i] = x[i-1]``, ``out[0] = fill``. Returns ``(out, block_suffix)``,
    the suffix being the tile's last item (CUB's ``Up``)."""
    N: tl.constexpr = tile.numel
    flat = tl.reshape(tile, (N,))
    return block_shuffle_offset(tile, -1, fill), _item(flat, N - 1)


@triton.jit
def block_shuffle_down(tile, fill):
    """Shift down by one item: ``out[i] = x[i+1]``, ``out[N-1] = fill``. Returns ``(out, block_prefix)``,
    the prefix being the tile's first item (CUB's ``Down``)."""
    N: tl.constexpr = tile.numel
    flat = tl.reshape(tile, (N,))
    return block_shuffle_offset(tile, 1, fill), _item(flat, 0)
