"""WarpStore: each logical warp writes its segment of ``LOGICAL_WARP_THREADS * ITEMS_PER_THREAD`` items.

The mirror of :mod:`tritoncub.warp.load` (CUB's ``WarpStoreAlgorithm``). The tile passed in is
``[WARPS, LANES, ITEMS_PER_THREAD]`` in the arrangement the algorithm names — blocked for DIRECT,
VECTORIZE and TRANSPOSE, striped for STRIPED — and every item lands at its input-order position
``base + w*S + item``. Padding lanes and positions ``>= num_items`` are not written.

``WARP_STORE_VECTORIZE`` takes an unmasked, hinted path (``st.global.v4`` for fp32 with
``ITEMS_PER_THREAD >= 4``) when the whole region is in range and ``base`` is a multiple of
``ITEMS_PER_THREAD``; ``WARP_STORE_TRANSPOSE`` exchanges the blocked tile to striped
(:func:`tritoncub.warp.exchange.warp_blocked_to_striped`) and stores it coalesced. ``CACHE_MODIFIER``
is ``tl.store``'s (``""``, ``".wb"``, ``".cg"``, ``".cs"``, ``".wt"``), ``EVICTION`` its eviction policy.
"""
import triton
import triton.language as tl

from .exchange import warp_blocked_to_striped
from .load import WARP_LOAD_DIRECT, WARP_LOAD_STRIPED, WARP_LOAD_TRANSPOSE, WARP_LOAD_VECTORIZE, warp_indices

WARP_STORE_DIRECT = WARP_LOAD_DIRECT
WARP_STORE_STRIPED = WARP_LOAD_STRIPED
WARP_STORE_VECTORIZE = WARP_LOAD_VECTORIZE
WARP_STORE_TRANSPOSE = WARP_LOAD_TRANSPOSE
WARP_STORE_ALGORITHMS = {"direct": 0, "striped": 1, "vectorize": 2, "transpose": 3}


@triton.jit
def warp_store(ptr, base, num_items, tile, WARPS: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr,
               ITEMS_PER_THREAD: tl.constexpr, ALGORITHM: tl.constexpr = WARP_STORE_DIRECT,
               CACHE_MODIFIER: tl.constexpr = tl.constexpr(""), EVICTION: tl.constexpr = tl.constexpr("")):
    """Store a ``[WARPS, LANES, ITEMS_PER_THREAD]`` warp tile given in the arrangement of ``ALGORITHM``."""
    tl.static_assert((CACHE_MODIFIER == "") or (EVICTION == ""),
                     "a cache modifier and an eviction policy cannot be combined (ptxas rejects it)")
    SEGMENT: tl.constexpr = LOGICAL_WARP_THREADS * ITEMS_PER_THREAD
    start = tl.cast(base, tl.int64)
    if ALGORITHM == WARP_STORE_STRIPED:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, True)
        tl.store(ptr + start + offs, tile, mask=lane_valid & (start + offs < num_items),
                 cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    elif ALGORITHM == WARP_STORE_TRANSPOSE:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, True)
        striped = warp_blocked_to_striped(tile, LOGICAL_WARP_THREADS)
        tl.store(ptr + start + offs, striped, mask=lane_valid & (start + offs < num_items),
                 cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    elif ALGORITHM == WARP_STORE_VECTORIZE:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, False)
        if (start + WARPS * SEGMENT <= num_items) & (start % ITEMS_PER_THREAD == 0):
            aligned = (start // ITEMS_PER_THREAD) * ITEMS_PER_THREAD
            vec_offs = tl.max_contiguous(tl.multiple_of(offs, [1, 1, ITEMS_PER_THREAD]),
                                         [1, 1, ITEMS_PER_THREAD])
            if LOGICAL_WARP_THREADS == triton.next_power_of_2(LOGICAL_WARP_THREADS):
                tl.store(ptr + aligned + vec_offs, tile, cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
            else:
                tl.store(ptr + aligned + vec_offs, tile, mask=lane_valid,
                         cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
        else:
            tl.store(ptr + start + offs, tile, mask=lane_valid & (start + offs < num_items),
                     cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    else:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, False)
        tl.store(ptr + start + offs, tile, mask=lane_valid & (start + offs < num_items),
                 cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
