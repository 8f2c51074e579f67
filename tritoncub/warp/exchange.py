"""WarpExchange: re-arrange the items of each logical warp between the blocked and striped arrangements.

Tiles are ``[WARPS, LANES, ITEMS_PER_THREAD]`` (see :mod:`tritoncub.warp.load`): ``tile[w, t, i]`` is
item ``i`` of lane ``t`` of logical warp ``w``; lanes ``t >= LOGICAL_WARP_THREADS`` are padding.

* blocked: lane ``t`` holds the warp's items ``t*ITEMS_PER_THREAD .. t*ITEMS_PER_THREAD + ITEMS_PER_THREAD - 1``;
* striped: lane ``t`` holds items ``t, t + LOGICAL_WARP_THREADS, t + 2*LOGICAL_WARP_THREADS, ...``.

For a power-of-two logical warp (no padding lanes) the exchange is a ``tl.permute`` plus
``tl.reshape``: the values move, and the compiler implements the move with a register/shared-memory
layout conversion, as CUB does through shared memory. For other sizes it is a ``tl.gather`` along the
flattened warp row; padding lanes of the result hold the value of the input's first padding slot.
"""
import triton
import triton.language as tl


@triton.jit
def warp_striped_to_blocked(tile, LOGICAL_WARP_THREADS: tl.constexpr):
    """Striped → blocked within every logical warp (CUB's ``WarpExchange::StripedToBlocked``)."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    ITEMS: tl.constexpr = tile.shape[2]
    if LANES == LOGICAL_WARP_THREADS:
        out = tl.reshape(tl.permute(tile, (0, 2, 1)), (WARPS, LANES, ITEMS))
    else:
        SEGMENT: tl.constexpr = LOGICAL_WARP_THREADS * ITEMS
        p = tl.arange(0, LANES * ITEMS)  # blocked slot (t, i) flattened = t*ITEMS + i = item index
        src = (p % LOGICAL_WARP_THREADS) * ITEMS + p // LOGICAL_WARP_THREADS
        src = tl.where(p < SEGMENT, src, SEGMENT)  # padding lanes read the first padding slot
        src2 = tl.broadcast_to(src[None, :], (WARPS, LANES * ITEMS))
        flat = tl.gather(tl.reshape(tile, (WARPS, LANES * ITEMS)), src2, 1)
        out = tl.reshape(flat, (WARPS, LANES, ITEMS))
    return out


@triton.jit
def warp_blocked_to_striped(tile, LOGICAL_WARP_THREADS: tl.constexpr):
    """Blocked → striped within every logical warp (CUB's ``WarpExchange::BlockedToStriped``)."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    ITEMS: tl.constexpr = tile.shape[2]
    if LANES == LOGICAL_WARP_THREADS:
        out = tl.permute(tl.reshape(tile, (WARPS, ITEMS, LANES)), (0, 2, 1))
    else:
        SEGMENT: tl.constexpr = LOGICAL_WARP_THREADS * ITEMS
        q = tl.arange(0, LANES * ITEMS)  # striped slot (t, i) flattened = t*ITEMS + i
        t = q // ITEMS
        i = q % ITEMS
        src = tl.where(t < LOGICAL_WARP_THREADS, i * LOGICAL_WARP_THREADS + t, SEGMENT)
        src2 = tl.broadcast_to(src[None, :], (WARPS, LANES * ITEMS))
        flat = tl.gather(tl.reshape(tile, (WARPS, LANES * ITEMS)), src2, 1)
        out = tl.reshape(flat, (WARPS, LANES, ITEMS))
    return out
