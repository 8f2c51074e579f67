"""BlockLoad: read a tile of ``BLOCK_THREADS * ITEMS_PER_THREAD`` items from global memory.

CUB's ``BlockLoadAlgorithm`` chooses how threads map to items. In Triton the compiler assigns items
to threads and registers, so an algorithm here is the *index pattern* of the load, the *arrangement*
of the returned tile, and the hints the load carries:

``LOAD_DIRECT``     blocked arrangement: tile ``[BLOCK_THREADS, ITEMS_PER_THREAD]``, row ``t`` holds
                    items ``t*ITEMS_PER_THREAD .. +ITEMS_PER_THREAD``. One masked load; the compiler
                    emits 16-byte vector loads only when it can prove alignment of the pointer *and*
                    of the item count (Triton specialises integer arguments divisible by 16).
``LOAD_STRIPED``    striped arrangement: row ``t`` holds items ``t, t+BLOCK_THREADS, ...``
                    (tile ``[BLOCK_THREADS, ITEMS_PER_THREAD]``, element ``[t, i]`` = item
                    ``i*BLOCK_THREADS + t``).
``LOAD_VECTORIZE``  blocked arrangement, like DIRECT, but a full tile whose first item is 16-byte
                    aligned (``tile_base`` a multiple of 16 bytes' worth of items) takes an *unmasked*
                    path with contiguity/divisibility hints, so fp32 loads are ``ld.global.v4``
                    whatever the item count; the ragged last tile and unaligned tiles are DIRECT (CUB
                    falls back the same way). The pointer must be 16-byte aligned for the vector
                    width to reach 16 bytes: torch allocations are, and Triton checks it when it
                    specialises the kernel (a misaligned view just gets narrower loads).
``LOAD_TRANSPOSE``  blocked arrangement, loaded in the coalesced striped pattern and re-arranged in
                    registers/shared memory (CUB's BlockExchange). In Triton the layout conversion is
                    the compiler's; the values equal DIRECT's, and the generated code may be the same.

Cache modifiers (CUB's ``CacheLoadModifier``): ``CACHE_MODIFIER`` is passed to ``tl.load``
(``""`` default, ``".ca"`` cache at all levels, ``".cg"`` cache in L2 only, ``".cv"`` don't cache and
fetch again) and ``EVICTION`` to its ``eviction_policy`` (``""``, ``"evict_first"`` = streaming,
``"evict_last"``). Under the interpreter modifiers and hints have no effect. What Triton 3.6 emits
for sm_90 (``python bench/ptx_check.py``): ``.ca`` → ``ld.global.ca``, ``.cg`` → ``ld.global.cg``,
``evict_first``/``evict_last`` → ``ld.global.L1::evict_first``/``L1::evict_last`` with an L2 cache
hint; ``.cv`` gives a plain ``ld.global`` (the same code as the default). There is no streaming
*load* modifier in ``tl.load`` (CUB's ``LOAD_CS``): ``evict_first`` is the analogue. A cache modifier
and an eviction policy cannot be combined (ptxas rejects ``ld.global.cg.L1::evict_first``); the
helpers reject the pair at compile time.

All offsets are computed in int64: tiles past 2^31 items are safe.

(String defaults are written ``tl.constexpr("")``: Triton 3.6's compiler passes a plain ``""`` default
of a called ``@triton.jit`` function on as a Python string and fails; the interpreter accepts both.)
"""
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

LOAD_DIRECT = tl.constexpr(0)
LOAD_STRIPED = tl.constexpr(1)
LOAD_VECTORIZE = tl.constexpr(2)
LOAD_TRANSPOSE = tl.constexpr(3)
LOAD_ALGORITHMS = {"direct": 0, "striped": 1, "vectorize": 2, "transpose": 3}


@triton.constexpr_function
def _vector_items(bits):
    return 128 // max(int(bits), 8)   # (bool: int1 elements are stored as bytes)


@triton.jit
def vector_items(ptr):
    """Items of ``ptr``'s element type in 16 bytes (the widest vector load): 4 for fp32, 2 for fp64."""
    return _vector_items(ptr.dtype.element_ty.primitive_bitwidth)


@triton.jit
def load_tile(ptr, tile_base, num_items, TILE_ITEMS: tl.constexpr, VECTORIZE: tl.constexpr = False,
              CACHE_MODIFIER: tl.constexpr = tl.constexpr(""), EVICTION: tl.constexpr = tl.constexpr(""), other=0):
    """Load items ``[tile_base, tile_base + TILE_ITEMS)`` (those ``< num_items``) as a 1-D tile in input
    order; out-of-range slots hold ``other``. ``VECTORIZE`` gives full, aligned tiles an unmasked path.
    ``TILE_ITEMS`` is a power of two."""
    tl.static_assert((CACHE_MODIFIER == "") or (EVICTION == ""),
                     "a cache modifier and an eviction policy cannot be combined (ptxas rejects it)")
    base = tl.cast(tile_base, tl.int64)
    offs = tl.arange(0, TILE_ITEMS)
    if VECTORIZE:
        VEC: tl.constexpr = vector_items(ptr)
        if (base + TILE_ITEMS <= num_items) & (base % VEC == 0):
            # full, 16-byte-aligned tile: no mask, and a base the compiler can see is a multiple of VEC
            aligned = (base // VEC) * VEC
            offs = tl.max_contiguous(tl.multiple_of(offs, TILE_ITEMS), TILE_ITEMS)
            vals = tl.load(ptr + aligned + offs, cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
        else:
            vals = tl.load(ptr + base + offs, mask=base + offs < num_items, other=other,
                           cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    else:
        vals = tl.load(ptr + base + offs, mask=base + offs < num_items, other=other,
                       cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    return vals


@triton.jit
def tile_indices(BLOCK_THREADS: tl.constexpr, ITEMS_PER_THREAD: tl.constexpr, STRIPED: tl.constexpr):
    """Item index (within the tile) of each slot of a ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` tile in the
    blocked (``STRIPED=False``) or striped arrangement."""
    t = tl.arange(0, BLOCK_THREADS)[:, None]
    i = tl.arange(0, ITEMS_PER_THREAD)[None, :]
    if STRIPED:
        idx = i * BLOCK_THREADS + t
    else:
        idx = t * ITEMS_PER_THREAD + i
    return idx


@triton.jit
def block_load(ptr, tile_base, num_items, BLOCK_THREADS: tl.constexpr, ITEMS_PER_THREAD: tl.constexpr,
               ALGORITHM: tl.constexpr = LOAD_DIRECT, CACHE_MODIFIER: tl.constexpr = tl.constexpr(""),
               EVICTION: tl.constexpr = tl.constexpr(""), other=0):
    """Load one tile as ``[BLOCK_THREADS, ITEMS_PER_THREAD]`` in the arrangement of ``ALGORITHM``.

    Slots past ``num_items`` (the ragged last tile) hold ``other``."""
    tl.static_assert((CACHE_MODIFIER == "") or (EVICTION == ""),
                     "a cache modifier and an eviction policy cannot be combined (ptxas rejects it)")
    TILE: tl.constexpr = BLOCK_THREADS * ITEMS_PER_THREAD
    base = tl.cast(tile_base, tl.int64)
    if ALGORITHM == LOAD_STRIPED:
        idx = tile_indices(BLOCK_THREADS, ITEMS_PER_THREAD, True)
        tile = tl.load(ptr + base + idx, mask=base + idx < num_items, other=other,
                       cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    elif ALGORITHM == LOAD_TRANSPOSE:
        # coalesced pattern: consecutive items along the fast axis, then re-arranged to blocked
        flat = load_tile(ptr, tile_base, num_items, TILE, False, CACHE_MODIFIER, EVICTION, other)
        tile = tl.reshape(flat, (BLOCK_THREADS, ITEMS_PER_THREAD))
    elif ALGORITHM == LOAD_VECTORIZE:
        flat = load_tile(ptr, tile_base, num_items, TILE, True, CACHE_MODIFIER, EVICTION, other)
        tile = tl.reshape(flat, (BLOCK_THREADS, ITEMS_PER_THREAD))
    else:
        idx = tile_indices(BLOCK_THREADS, ITEMS_PER_THREAD, False)
        tile = tl.load(ptr + base + idx, mask=base + idx < num_items, other=other,
                       cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION)
    return tile


@gluon.jit
def warp_striped_vector_offsets(L4: gl.constexpr, WARPS: gl.constexpr, SLOTS: gl.constexpr, VEC: gl.constexpr):
    """Tile offsets of the *warp-striped vector* arrangement (Gluon kernels; CUB's
    ``BLOCK_LOAD_WARP_TRANSPOSE`` input side, in vectors): a ``[WARPS, SLOTS, 32, VEC]`` int32 tile in
    layout ``L4`` (``BlockedLayout([1, SLOTS, 1, VEC], [1, 1, 32, 1], [WARPS, 1, 1, 1], [3, 2, 1, 0])``)
    where warp ``w`` holds ``SLOTS`` register slots of ``32 * VEC`` consecutive items and lane ``l`` the
    ``VEC`` items ``l*VEC ..`` of each slot: full tiles load and store with one vector access per slot.
    Returns ``(offsets, e)``: the offsets, and the item's place in its vector (``[1, 1, 1, VEC]``)."""
    LS: gl.constexpr = gl.SliceLayout(3, L4)
    w = gl.arange(0, WARPS, layout=gl.SliceLayout(1, gl.SliceLayout(2, LS)))
    s = gl.arange(0, SLOTS, layout=gl.SliceLayout(0, gl.SliceLayout(2, LS)))
    ln = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(1, LS)))
    e = gl.arange(0, VEC, layout=gl.SliceLayout(0, gl.SliceLayout(1, gl.SliceLayout(2, L4))))
    lane_first = ((gl.expand_dims(gl.expand_dims(w, 1), 2) * SLOTS + gl.expand_dims(gl.expand_dims(s, 0), 2)) * 32
                  + gl.expand_dims(gl.expand_dims(ln, 0), 1)) * VEC
    e4 = gl.expand_dims(gl.expand_dims(gl.expand_dims(e, 0), 1), 2)
    return gl.expand_dims(lane_first, 3) + e4, e4
