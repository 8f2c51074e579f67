"""BlockStore: write a tile of ``BLOCK_THREADS * ITEMS_PER_THREAD`` items to global memory.

The algorithms mirror :mod:`tritoncub.block.load` (CUB's ``BlockStoreAlgorithm``): the tile passed in
is in the arrangement the algorithm names (blocked for DIRECT/VECTORIZE/TRANSPOSE, striped for
STRIPED), and the items land at their input-order positions.

``CACHE_MODIFIER`` is ``tl.store``'s (``""``, ``".wb"`` write-back, ``".cg"`` L2 only, ``".cs"``
streaming / evict-first, ``".wt"`` write-through); ``EVICTION`` its ``eviction_policy``. Offsets are
int64.
"""
import triton
import triton.language as tl

from .load import LOAD_DIRECT, LOAD_STRIPED, LOAD_TRANSPOSE, LOAD_VECTORIZE, tile_indices, vector_items

STORE_DIRECT = LOAD_DIRECT
STORE_STRIPED = LOAD_STRIPED
STORE_VECTORIZE = LOAD_VECTORIZE
STORE_TRANSPOSE = LOAD_TRANSPOSE
STORE_ALGORITHMS = {"direct": 0, "striped": 1, "vectorize": 2, "transpose": 3}


@triton.jit
def store_tile(ptr, tile_base, num_items, vals, TILE_ITEMS: tl.constexpr, VECTORIZE: tl.constexpr = False,
               CACHE_MODIFIER: tl.constexpr = tl.constexpr(""), EVICTION: tl.constexpr = tl.constexpr("")):
    """Store a 1-D tile in input order at ``[tile_base, tile_base + TILE_ITEMS)``, skipping slots
    ``>= num_items``. ``VECTORIZE`` gives full tiles an unmasked, vectorisable path."""
    tl.static_assert((CACHE_MODIFIER == "") or (EVICTION == ""),
                     "a cache modifier and an eviction policy cannot be combined (ptxas rejects it)")
    base = tl.cast(tile_base, tl.int64)
    offs = tl.arange(0, TILE_ITEMS)
    if VECTORIZE:
        VEC: tl.constexpr = vector_items(ptr)
        if (base + TILE_ITEMS <= num_items) & (base % VEC == 0):
            aligned = (base // VEC) * VEC
            offs = tl.max_contiguous(tl.multiple_of(offs, TILE_ITEMS), TILE_ITEMS)
            tl.store(ptr + aligned + offs, vals, cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
        else:
            tl.store(ptr + base + offs, vals, mask=base + offs < num_items,
                     cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    else:
        tl.store(ptr + base + offs, vals, mask=base + offs < num_items,
                 cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)


@triton.jit
def block_store(ptr, tile_base, num_items, tile, BLOCK_THREADS: tl.constexpr, ITEMS_PER_THREAD: tl.constexpr,
                ALGORITHM: tl.constexpr = STORE_DIRECT, CACHE_MODIFIER: tl.constexpr = tl.constexpr(""),
                EVICTION: tl.constexpr = tl.constexpr("")):
    """Store a ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile given in the arrangement of ``ALGORITHM``."""
    tl.static_assert((CACHE_MODIFIER == "") or (EVICTION == ""),
                     "a cache modifier and an eviction policy cannot be combined (ptxas rejects it)")
    TILE: tl.constexpr = BLOCK_THREADS * ITEMS_PER_THREAD
    base = tl.cast(tile_base, tl.int64)
    if ALGORITHM == STORE_STRIPED:
        idx = tile_indices(BLOCK_THREADS, ITEMS_PER_THREAD, True)
        tl.store(ptr + base + idx, tile, mask=base + idx < num_items,
                 cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    elif ALGORITHM == STORE_TRANSPOSE:
        store_tile(ptr, tile_base, num_items, tl.reshape(tile, (TILE,)), TILE, False, CACHE_MODIFIER, EVICTION)
    elif ALGORITHM == STORE_VECTORIZE:
        store_tile(ptr, tile_base, num_items, tl.reshape(tile, (TILE,)), TILE, True, CACHE_MODIFIER, EVICTION)
    else:
        idx = tile_indices(BLOCK_THREADS, ITEMS_PER_THREAD, False)
        tl.store(ptr + base + idx, tile, mask=base + idx < num_items,
                 cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
