"""BlockExchange: re-arrange a tile between the blocked and striped arrangements, or scatter it by rank.

A tile is ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` (powers of two). Blocked: ``tile[t, i]`` is item
``t*ITEMS_PER_THREAD + i``; striped: ``tile[t, i]`` is item ``i*BLOCK_THREADS + t``
(see :mod:`tritoncub.block.load`).

CUB moves items through shared memory. Here blocked ↔ striped is ``tl.reshape`` plus ``tl.trans``:
the values move exactly as in CUB, and Triton implements the move as a layout conversion (registers
and shared memory) of its own choosing — which may be no data movement at all when the consumer's
layout allows it. No ``TempStorage`` and no barrier are needed by the caller.

Scatter by rank (``ScatterToBlocked``/``ScatterToStriped``): item ``j`` of the tile goes to position
``ranks[j]``, ranks being a permutation of ``0 .. TILE-1``. Triton has no register scatter, so the
inverse permutation is built with one ``tl.sort`` of ``rank * TILE + j`` keys and applied with
``tl.gather`` — a bitonic sort's ``log²(TILE)`` steps, not CUB's one shared-memory round trip. It is
exact for any dtype; device ops that scatter to global memory (radix sort) should store to the
ranked addresses directly instead.
"""
import triton
import triton.language as tl


@triton.jit
def block_blocked_to_striped(tile):
    """Blocked → striped (CUB's ``BlockedToStriped``); returns a ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile."""
    BT: tl.constexpr = tile.shape[0]
    IPT: tl.constexpr = tile.shape[1]
    return tl.trans(tl.reshape(tile, (IPT, BT)))


@triton.jit
def block_striped_to_blocked(tile):
    """Striped → blocked (CUB's ``StripedToBlocked``)."""
    BT: tl.constexpr = tile.shape[0]
    IPT: tl.constexpr = tile.shape[1]
    return tl.reshape(tl.trans(tile), (BT, IPT))


@triton.jit
def block_blocked_to_flat(tile):
    """A blocked tile as a 1-D tile in item order (a reshape: no data moves)."""
    return tl.reshape(tile, (tile.numel,))


@triton.jit
def block_striped_to_flat(tile):
    """A striped tile as a 1-D tile in item order."""
    return tl.reshape(tl.trans(tile), (tile.numel,))


@triton.jit
def block_inverse_permutation(ranks):
    """``inv`` with ``inv[ranks[j]] = j`` for ranks forming a permutation of ``0 .. N-1`` (1-D, any
    integer dtype), as int32 (a ``tl.sort`` of ``rank * N + j``)."""
    N: tl.constexpr = ranks.numel
    j = tl.arange(0, N)
    if N * N <= 2**31 - 1:
        key = ranks.to(tl.int32) * N + j
        inv = tl.sort(key) % N
    else:
        key = ranks.to(tl.int64) * N + j
        inv = (tl.sort(key) % N).to(tl.int32)
    return inv


@triton.jit
def block_scatter_to_flat(items, ranks):
    """``out[ranks[j]] = items[j]`` over the tile's items in tile order (any shape; ``ranks`` of the
    same shape, a permutation of ``0 .. N-1``); returns a 1-D tile."""
    N: tl.constexpr = items.numel
    flat = tl.reshape(items, (N,))
    inv = block_inverse_permutation(tl.reshape(ranks, (N,)))
    return tl.gather(flat, inv, 0)


@triton.jit
def block_scatter_to_blocked(items, ranks):
    """CUB's ``ScatterToBlocked``: the item with rank ``r`` lands in blocked slot ``r`` (thread
    ``r // ITEMS_PER_THREAD``, item ``r % ITEMS_PER_THREAD``). ``items``/``ranks`` are
    ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tiles; ranks are a permutation of the tile's slots."""
    return tl.reshape(block_scatter_to_flat(items, ranks), items.shape)


@triton.jit
def block_scatter_to_striped(items, ranks):
    """CUB's ``ScatterToStriped``: the item with rank ``r`` lands in striped slot ``r`` (thread
    ``r % BLOCK_THREADS``, item ``r // BLOCK_THREADS``)."""
    BT: tl.constexpr = items.shape[0]
    IPT: tl.constexpr = items.shape[1]
    flat = block_scatter_to_flat(items, ranks)
    return tl.trans(tl.reshape(flat, (IPT, BT)))
