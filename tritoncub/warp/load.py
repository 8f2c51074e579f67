"""WarpLoad: each logical warp reads its own segment of ``LOGICAL_WARP_THREADS * ITEMS_PER_THREAD`` items.

A *logical warp* is a group of 1..32 threads (CUB's ``LOGICAL_WARP_THREADS``). A program holds
``WARPS`` logical warps at once as the rows of a 3-D tile ``[WARPS, LANES, ITEMS_PER_THREAD]``:
``tile[w, t, i]`` is item ``i`` of thread (lane) ``t`` of logical warp ``w``. ``LANES`` is
``LOGICAL_WARP_THREADS`` rounded up to a power of two (Triton tensors have power-of-two
extents); lanes ``t >= LOGICAL_WARP_THREADS`` are padding: they never touch memory and hold
``other``. Warp ``w`` owns items ``[base + w*S, base + (w+1)*S)`` with
``S = LOGICAL_WARP_THREADS * ITEMS_PER_THREAD``; items at positions ``>= num_items`` hold ``other``
(the guarded load of CUB, ``valid_items`` being ``num_items - base - w*S``).

The four algorithms (CUB's ``WarpLoadAlgorithm``), and what each is in Triton:

``WARP_LOAD_DIRECT``     blocked arrangement (``tile[w,t,i]`` = item ``t*ITEMS_PER_THREAD + i`` of the
                         warp), one masked load. The compiler vectorises it only when it can prove
                         alignment of the pointer and of the mask (``num_items`` divisible by 16, which
                         Triton specialises on); with any other ``num_items`` it emits scalar loads.
``WARP_LOAD_STRIPED``    striped arrangement: ``tile[w,t,i]`` = item ``i*LOGICAL_WARP_THREADS + t``.
                         Consecutive lanes touch consecutive items (coalesced); no vector loads.
``WARP_LOAD_VECTORIZE``  blocked arrangement. When the whole ``[WARPS, S]`` region is in range and
                         ``base`` is a multiple of ``ITEMS_PER_THREAD`` (CUB's "quad-word aligned
                         offset" condition), a path with no item mask and contiguity/divisibility
                         hints of ``ITEMS_PER_THREAD`` items per lane is taken, so each lane reads its
                         items with 16-byte ``ld.global.v4`` loads (fp32, ``ITEMS_PER_THREAD >= 4``,
                         16-byte aligned pointer, as torch allocates); otherwise it is DIRECT.
``WARP_LOAD_TRANSPOSE``  blocked arrangement obtained from a striped (coalesced) load followed by a
                         warp exchange (:func:`tritoncub.warp.exchange.warp_striped_to_blocked`).
                         For a power-of-two warp the exchange is a pure reshape and Triton picks the
                         register layout itself, so the machine code may equal DIRECT's; for other
                         warp sizes it is a ``tl.gather`` within each warp row.

``CACHE_MODIFIER`` / ``EVICTION`` are passed to ``tl.load`` as in :mod:`tritoncub.block.load`. Offsets are
int64.
"""
import triton
import triton.language as tl

from .exchange import warp_striped_to_blocked

WARP_LOAD_DIRECT = tl.constexpr(0)
WARP_LOAD_STRIPED = tl.constexpr(1)
WARP_LOAD_VECTORIZE = tl.constexpr(2)
WARP_LOAD_TRANSPOSE = tl.constexpr(3)
WARP_LOAD_ALGORITHMS = {"direct": 0, "striped": 1, "vectorize": 2, "transpose": 3}


@triton.jit
def warp_indices(WARPS: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr, ITEMS_PER_THREAD: tl.constexpr,
                 STRIPED: tl.constexpr):
    """``(offsets, lane_valid)`` of a ``[WARPS, LANES, ITEMS_PER_THREAD]`` warp tile: the item offset
    (relative to the first warp's first item) of every slot in the blocked or striped arrangement, and
    the mask of real (non-padding) lanes."""
    LANES: tl.constexpr = triton.next_power_of_2(LOGICAL_WARP_THREADS)
    SEGMENT: tl.constexpr = LOGICAL_WARP_THREADS * ITEMS_PER_THREAD
    w = tl.arange(0, WARPS)[:, None, None]
    t = tl.arange(0, LANES)[None, :, None]
    i = tl.arange(0, ITEMS_PER_THREAD)[None, None, :]
    if STRIPED:
        offs = w * SEGMENT + i * LOGICAL_WARP_THREADS + t
    else:
        offs = w * SEGMENT + t * ITEMS_PER_THREAD + i
    lane_valid = (t < LOGICAL_WARP_THREADS) & (i < ITEMS_PER_THREAD) & (w < WARPS)
    return offs, lane_valid


@triton.jit
def warp_load(ptr, base, num_items, WARPS: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr,
              ITEMS_PER_THREAD: tl.constexpr, ALGORITHM: tl.constexpr = WARP_LOAD_DIRECT,
              CACHE_MODIFIER: tl.constexpr = tl.constexpr(""), EVICTION: tl.constexpr = tl.constexpr(""), other=0):
    """Load ``WARPS`` consecutive warp segments starting at item ``base`` as a
    ``[WARPS, LANES, ITEMS_PER_THREAD]`` tile in the arrangement of ``ALGORITHM`` (see the module doc).
    Items at positions ``>= num_items`` and padding lanes hold ``other``."""
    tl.static_assert((CACHE_MODIFIER == "") or (EVICTION == ""),
                     "a cache modifier and an eviction policy cannot be combined (ptxas rejects it)")
    SEGMENT: tl.constexpr = LOGICAL_WARP_THREADS * ITEMS_PER_THREAD
    start = tl.cast(base, tl.int64)
    if ALGORITHM == WARP_LOAD_STRIPED:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, True)
        tile = tl.load(ptr + start + offs, mask=lane_valid & (start + offs < num_items), other=other,
                       cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    elif ALGORITHM == WARP_LOAD_TRANSPOSE:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, True)
        striped = tl.load(ptr + start + offs, mask=lane_valid & (start + offs < num_items), other=other,
                          cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
        tile = warp_striped_to_blocked(striped, LOGICAL_WARP_THREADS)
    elif ALGORITHM == WARP_LOAD_VECTORIZE:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, False)
        if (start + WARPS * SEGMENT <= num_items) & (start % ITEMS_PER_THREAD == 0):
            # every lane's ITEMS_PER_THREAD items are contiguous and start at a multiple of
            # ITEMS_PER_THREAD (rewriting ``start`` so the compiler can see it): no item mask, so
            # each lane's load is one vector
            aligned = (start // ITEMS_PER_THREAD) * ITEMS_PER_THREAD
            vec_offs = tl.max_contiguous(tl.multiple_of(offs, [1, 1, ITEMS_PER_THREAD]),
                                         [1, 1, ITEMS_PER_THREAD])
            if LOGICAL_WARP_THREADS == triton.next_power_of_2(LOGICAL_WARP_THREADS):
                tile = tl.load(ptr + aligned + vec_offs, cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
            else:
                tile = tl.load(ptr + aligned + vec_offs, mask=lane_valid, other=other,
                               cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
        else:
            tile = tl.load(ptr + start + offs, mask=lane_valid & (start + offs < num_items), other=other,
                           cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    else:
        offs, lane_valid = warp_indices(WARPS, LOGICAL_WARP_THREADS, ITEMS_PER_THREAD, False)
        tile = tl.load(ptr + start + offs, mask=lane_valid & (start + offs < num_items), other=other,
                       cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    return tile
