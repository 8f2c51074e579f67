"""BlockRadixSort: sort one tile of keys (or keys + values) in a program, over a bit range.

``block_radix_sort_keys`` / ``block_radix_sort_pairs`` run LSD radix passes of ``RADIX_BITS`` bits
over the ordered key bits ``[BEGIN_BIT, END_BIT)`` (``tritoncub.thread.radix_traits``: any key dtype,
torch's order, ``DESCENDING`` reverses it). Each pass ranks the tile by the digit with
:func:`~tritoncub.block.radix_rank.block_radix_rank` (stable), turns the ranks into a gather
permutation (a ``tl.sort`` of ``rank * TILE + index``, whose low bits are the source of every sorted
position) and gathers keys and values with ``tl.gather``. The result is stable.

Arrangement: the returned tile is *blocked* (position ``i`` holds the ``i``-th smallest key), or
*striped* with ``STRIPED=True``: viewed as ``[THREADS, ITEMS]`` rows (thread ``t``'s items), thread
``t`` holds ranks ``t, t + THREADS, ...`` -- CUB's ``SortBlockedToStriped``, which lets a store of
consecutive ranks be coalesced. In Triton a tile is a tensor whose register layout the compiler
picks, so "striped" is a permutation of the returned tile, not a register assignment.

Cost: per pass a one-hot rank (O(TILE x 2**RADIX_BITS)) and a bitonic ``tl.sort`` of the tile: meant
for tiles of up to a few thousand keys inside other kernels (CPU tests, the portable path); the
device-wide sort uses the onesweep kernels of ``tritoncub.device.radix_sort``.

**Shared-memory BlockRadixSort** (compiled NVIDIA kernels only, ``triton.experimental.gluon``):
:func:`block_radix_sort_smem` sorts a *warp-striped* tile (see ``radix_rank``) the way CUB's
``BlockRadixSort`` does: per pass the warps rank their keys with ballots
(:func:`~tritoncub.block.radix_rank.warp_ballot_rank`, leaving per-warp digit counts in shared
memory), the ``[WARPS, RADIX]`` counts are scanned into each warp's first position per digit, and
every key and its source column are scattered to their positions in shared memory and read back in
tile order. The segmented and batched-row sort (``tritoncub.device.segmented_sort``) uses it for
rows of a few hundred to a few thousand keys.
"""
from __future__ import annotations

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from ..thread.radix_traits import extract_digit, to_ordered_bits
from .radix_rank import block_radix_rank, smem_load_words, smem_store_words, warp_ballot_rank, warp_mixed_rank


@triton.jit
def _gather_order(ranks, TILE: tl.constexpr):
    # source index of every sorted position: sort rank * TILE + index, keep the index bits
    idx = tl.arange(0, TILE)
    packed = ranks.to(tl.int64) * TILE + idx
    return (tl.sort(packed) % TILE).to(tl.int32)


@triton.jit
def _pass_order(bits, SHIFT: tl.constexpr, END_BIT: tl.constexpr, RADIX_BITS: tl.constexpr, TILE: tl.constexpr,
                valid=None):
    # gather order of one LSD pass over the digit [SHIFT, min(SHIFT + RADIX_BITS, END_BIT))
    WIDTH: tl.constexpr = RADIX_BITS if END_BIT - SHIFT > RADIX_BITS else END_BIT - SHIFT
    d = extract_digit(bits, SHIFT, RADIX_BITS) & ((1 << WIDTH) - 1)
    if valid is not None:
        # invalid items rank after every valid one, keeping their order
        d = tl.where(valid, d, 1 << WIDTH)
        ranks, _, _ = block_radix_rank(d, WIDTH + 1)
    else:
        ranks, _, _ = block_radix_rank(d, WIDTH)
    return _gather_order(ranks, TILE)


@triton.jit
def _to_striped(tile, THREADS: tl.constexpr, ITEMS: tl.constexpr):
    # blocked sorted tile -> thread t's items are ranks t, t + THREADS, ...
    return tl.reshape(tl.trans(tl.reshape(tile, (ITEMS, THREADS))), (THREADS * ITEMS,))


@triton.jit
def block_radix_sort_pairs(keys, values, BEGIN_BIT: tl.constexpr, END_BIT: tl.constexpr,
                           RADIX_BITS: tl.constexpr = 4, DESCENDING: tl.constexpr = False,
                           STRIPED: tl.constexpr = False, THREADS: tl.constexpr = 1, valid=None):
    """Stable sort of a 1-D tile of keys with values, by ordered key bits ``[BEGIN_BIT, END_BIT)``.

    ``valid`` (optional boolean tile): invalid items sort after all valid ones, in their input order
    (their keys and values are moved there unchanged; also for an empty bit range). Needs
    ``0 <= BEGIN_BIT <= END_BIT <=`` the key's bit width (an empty range only moves the invalid
    items). ``STRIPED`` needs ``THREADS`` dividing the tile size. Returns ``(keys, values)``.
    """
    TILE: tl.constexpr = keys.shape[0]
    bits = to_ordered_bits(keys, DESCENDING)
    for p in tl.static_range((END_BIT - BEGIN_BIT + RADIX_BITS - 1) // RADIX_BITS):
        # the pass's shift goes to a helper as a constexpr argument: a ``tl.constexpr`` assigned in
        # the unrolled loop body would be re-assigned on the next pass, which the compiler refuses
        src = _pass_order(bits, BEGIN_BIT + p * RADIX_BITS, END_BIT, RADIX_BITS, TILE, valid)
        bits = tl.gather(bits, src, 0)
        keys = tl.gather(keys, src, 0)
        values = tl.gather(values, src, 0)
        if valid is not None:
            valid = tl.gather(valid.to(tl.int32), src, 0) != 0
    if valid is not None:
        if END_BIT <= BEGIN_BIT:
            # no bits to rank (no pass ran): still move the invalid items after the valid ones, stably
            ranks, _, _ = block_radix_rank(tl.where(valid, 0, 1), 1)
            src = _gather_order(ranks, TILE)
            keys = tl.gather(keys, src, 0)
            values = tl.gather(values, src, 0)
    if STRIPED:
        keys = _to_striped(keys, THREADS, TILE // THREADS)
        values = _to_striped(values, THREADS, TILE // THREADS)
    return keys, values


@triton.jit
def block_radix_sort_keys(keys, BEGIN_BIT: tl.constexpr, END_BIT: tl.constexpr, RADIX_BITS: tl.constexpr = 4,
                          DESCENDING: tl.constexpr = False, STRIPED: tl.constexpr = False,
                          THREADS: tl.constexpr = 1, valid=None):
    """Keys-only :func:`block_radix_sort_pairs`."""
    out, _ = block_radix_sort_pairs(keys, keys, BEGIN_BIT, END_BIT, RADIX_BITS, DESCENDING, STRIPED, THREADS,
                                    valid)
    return out


# ----------------------------------------------------------------------------------------------
# Shared-memory BlockRadixSort (compiled NVIDIA kernels only)
# ----------------------------------------------------------------------------------------------

@triton.constexpr_function
def _pack_from(key_bits, log_tile, radix_bits):
    """Passes of :func:`block_radix_sort_smem` ranked before a key's remaining bits and its item index
    fit one 32-bit word (0: from the start)."""
    return (key_bits + log_tile - 32 + radix_bits - 1) // radix_bits if key_bits + log_tile > 32 else 0


@gluon.jit
def _add(a, b):
    return a + b


@gluon.jit
def block_radix_sort_smem(bits, valid, local, warp, smem, KEY_BITS: gl.constexpr, RADIX_BITS: gl.constexpr,
                          WARPS: gl.constexpr, WARP_ROWS: gl.constexpr = False, OR_EVERY: gl.constexpr = 0,
                          payload=None, PAYLOAD: gl.constexpr = False, bits_hi=None):
    """Stable ascending LSD radix sort of one warp-striped tile by its ``KEY_BITS`` low bits
    (``WARP_ROWS``: of each warp's part of the tile on its own -- CUB's WarpRadixSort, a row per warp).

    ``bits``: int32 ordered key bits (``to_ordered_bits``, widened), a ``[WARPS, ITEMS, 32]`` tile in
    the warp-striped layout (warp ``w`` holds items ``w*32*ITEMS + s*32 + lane``); ``valid``: the
    items that take part (the first ones: ``local < length``; the others sort after every valid key,
    in item order); ``local``: each item's index in the tile; ``warp``: its warp (``[WARPS, 1, 1]``).
    Returns ``(col, sorted_payload)``: at every tile position, the index of the item that sorts there
    (items of equal keys keep their order; with ``WARP_ROWS`` an index within the same warp's part),
    and with ``PAYLOAD`` the int32 ``payload`` tile (one word per item, in item order, e.g. the raw
    keys) in sorted order, moved through shared memory (CUB's BlockExchange) rather than gathered from
    global memory by ``col`` (else ``col`` again). While the item indices have their own exchange buffer
    (``PACK_FROM`` >= 2) the payload goes there during the last pass, whose barriers order it; otherwise
    after the last pass, with two more barriers.

    The exchange of a pass moves each item's key bits that later passes still rank and its item
    index as one 32-bit word once they fit: from the first pass when ``KEY_BITS + log2(TILE) <= 32``
    (8- and 16-bit keys), else after the first ``PACK_FROM = ceil((KEY_BITS + log2(TILE) - 32) /
    RADIX_BITS)`` passes, which move two words (key bits, index). For 32-bit keys and 8-bit digits:
    tiles of up to 256 items one word from the first pass, up to 2^16 items two words in the first
    pass and one in every later one.

    Keys of 64 bits (``KEY_BITS`` 64, ``RADIX_BITS`` 8): ``bits`` holds their low 32 ordered bits
    and ``bits_hi`` the high ones (int32 tiles of the same layout). The passes over the low word move it,
    the high word and the item index (three words); then the high word and the index; from
    ``PACK_FROM`` on, as above, the high word's remaining bits above the index in one word. One more
    exchange buffer of ``TILE`` words (:func:`block_radix_sort_smem_words` counts it).

    ``smem``: the kernel's first shared-memory allocation (so it starts ``global_smem``), int32
    ``[rows, 2**RADIX_BITS]`` of at least ``2 * WARPS * 2**RADIX_BITS + 2 * TILE`` words: two sets of
    digit counters (a pass zeroes the other set, the next pass's, while it ranks into its own), then
    the exchange buffers of key bits and indices (``+ TILE`` only, when ``PACK_FROM`` <= 1: the index
    buffer is never used; ``+ TILE`` more for 64-bit keys, their high words;
    :func:`block_radix_sort_smem_words` counts it all). ``OR_EVERY`` > 0: every
    ``OR_EVERY``-th register slot finds its keys' peers through mask words in shared memory instead of
    ballots (:func:`~tritoncub.block.radix_rank.warp_mixed_rank`: ballots load the ALU pipe, mask
    words the shared-memory pipe); the mask words are the other counter set, zero while a pass ranks
    (so no more shared memory). ``RADIX_BITS`` in 5..8 (checked). Calls ``gl.thread_barrier()``: the
    whole block must call it; a caller that uses ``smem`` afterwards must call it first.
    """
    gl.static_assert((RADIX_BITS >= 5) & (RADIX_BITS <= 8), "block_radix_sort_smem: RADIX_BITS must be 5..8")
    WIDE: gl.constexpr = KEY_BITS > 32
    # (a digit of a wide key never straddles its two words)
    gl.static_assert((not WIDE) or ((RADIX_BITS == 8) & (KEY_BITS == 64)),
                     "block_radix_sort_smem: keys wider than 32 bits are 64-bit keys in 8-bit digits")
    RADIX: gl.constexpr = 1 << RADIX_BITS
    TILE: gl.constexpr = bits.shape[0] * bits.shape[1] * bits.shape[2]
    LOG_TILE: gl.constexpr = TILE.bit_length() - 1
    PASSES: gl.constexpr = (KEY_BITS + RADIX_BITS - 1) // RADIX_BITS
    # passes ranked before the key's remaining bits and the index share a word (0: from the start)
    PACK_FROM: gl.constexpr = _pack_from(KEY_BITS, LOG_TILE, RADIX_BITS)
    gl.static_assert(PACK_FROM < PASSES, "block_radix_sort_smem: the tile is too large for its key bits")
    XK: gl.constexpr = 2 * WARPS * RADIX        # exchange buffer of key bits (or packed words)
    XI: gl.constexpr = 2 * WARPS * RADIX + TILE  # exchange buffer of item indices (while not packed)
    XH: gl.constexpr = 2 * WARPS * RADIX + 2 * TILE   # exchange buffer of a wide key's high word
    LO_PASSES: gl.constexpr = 32 // RADIX_BITS   # (wide keys: the passes over the low word)
    # the scan's layouts: each thread holds CPT consecutive digits (of every warp, in LC), so the scan
    # over digits adds within the thread before one chain of shuffles
    CPT: gl.constexpr = max(RADIX // (32 * WARPS), 1)
    LC: gl.constexpr = gl.BlockedLayout([WARPS, CPT], [1, 32], [1, WARPS], [1, 0])
    LD: gl.constexpr = gl.BlockedLayout([CPT], [32], [WARPS], [0])
    LW: gl.constexpr = gl.BlockedLayout([1, RADIX // 32], [1, 32], [WARPS, 1], [1, 0])   # a warp's own row
    warp_base = gl.arange(0, WARPS, layout=gl.SliceLayout(1, LW)) * (TILE // WARPS)
    col = local
    # items past the valid ones take all-ones key bits: every digit of theirs is the largest a pass
    # can see, and they come last in item order, so they stay after every valid key without a
    # per-pass select (valid keys of all-ones bits keep their place before them: the sort is stable)
    bits = gl.where(valid, bits, -1)
    if WIDE:
        hi = gl.where(valid, bits_hi, -1)
    if PACK_FROM == 0:
        bits = (bits << LOG_TILE) | local
    # counter sets: pass p counts in rows [(p % 2) * WARPS, + WARPS) of smem, one row per warp
    smem.slice(0, 2 * WARPS, 0).store(gl.zeros([2 * WARPS, RADIX], gl.int32, LC))
    gl.thread_barrier()
    for p in gl.static_range(PASSES):
        counters = smem.slice((p % 2) * WARPS, WARPS, 0)
        if OR_EVERY > 0:
            if p > 0:
                # the other set: this pass's mask words (each warp zeroes its own row: the rank asm's
                # warp barrier orders the stores before its ORs), then the next pass's counters
                smem.slice(((p + 1) % 2) * WARPS, WARPS, 0).store(gl.zeros([WARPS, RADIX], gl.int32, LW))
        elif (p > 0) & (p + 1 < PASSES):
            # zero the next pass's set: the previous pass read it last, before its exchange barrier;
            # this pass's barriers order these stores before the next pass's atomics
            smem.slice(((p + 1) % 2) * WARPS, WARPS, 0).store(gl.zeros([WARPS, RADIX], gl.int32, LC))
        if p < PACK_FROM:
            if WIDE and p >= LO_PASSES:
                d = extract_digit(hi.to(gl.uint32, bitcast=True), (p - LO_PASSES) * RADIX_BITS, RADIX_BITS)
            else:
                d = extract_digit(bits.to(gl.uint32, bitcast=True), p * RADIX_BITS, RADIX_BITS)
        else:
            d = extract_digit(bits.to(gl.uint32, bitcast=True), LOG_TILE + (p - PACK_FROM) * RADIX_BITS, RADIX_BITS)
        word = ((p % 2) * WARPS + warp) * RADIX + d
        if OR_EVERY > 0:
            # (mask words in the other set: WARPS rows after this pass's, or before them)
            rank = warp_mixed_rank(word, RADIX_BITS, TILE // (32 * WARPS), OR_EVERY, (1 - 2 * (p % 2)) * WARPS * RADIX)
        else:
            rank = warp_ballot_rank(word, RADIX_BITS)     # among the warp's keys; counts per warp left
        gl.thread_barrier()
        if PAYLOAD and (PACK_FROM >= 2) and (p + 1 == PASSES):
            # (the index buffer was last read in pass PACK_FROM - 2, before the barrier above; the
            # payload is read at the end, after this pass's later barriers)
            smem_store_words(XI + local, payload)
        if WARP_ROWS:
            # each warp scans its own digits' counts (in its lanes), from its part's first position
            cnt = counters.load(LW)
            excl = gl.associative_scan(cnt, 1, _add) - cnt + gl.expand_dims(warp_base, 1)
            counters.store(excl)
        else:
            # each thread holds CPT consecutive digits' counts of every warp: the scan over warps stays
            # in-thread, and the scan over digits adds within the thread before its shuffles
            cnt = counters.load(LC)
            tot = gl.convert_layout(gl.sum(cnt, 0), LD)
            wexcl = gl.associative_scan(cnt, 0, _add) - cnt
            texcl = gl.associative_scan(tot, 0, _add) - tot
            # (the compiler puts a barrier between this load and store of one allocation: threads that
            # hold copies of a digit's column, when 32 * WARPS > RADIX, all read before any writes)
            counters.store(wexcl + gl.expand_dims(gl.convert_layout(texcl, gl.SliceLayout(0, LC)), 0))
        gl.thread_barrier()
        pos = smem_load_words(word) + rank
        if p + 1 < PACK_FROM:
            if (not WIDE) or (p + 1 < LO_PASSES):   # (a wide key's low word: while later passes rank it)
                smem_store_words(XK + pos, bits)
            smem_store_words(XI + pos, col)
            if WIDE:
                smem_store_words(XH + pos, hi)
            gl.thread_barrier()
            if (not WIDE) or (p + 1 < LO_PASSES):
                bits = smem_load_words(XK + local)
            col = smem_load_words(XI + local)
            if WIDE:
                hi = smem_load_words(XH + local)
        else:
            if p + 1 == PACK_FROM:
                # the bits the later passes rank, above the item index, in one word from here on
                if WIDE:   # (PACK_FROM >= 5 for wide keys: those bits are all in the high word)
                    high = hi.to(gl.uint32, bitcast=True) >> (PACK_FROM * RADIX_BITS - 32)
                else:
                    high = bits.to(gl.uint32, bitcast=True) >> (PACK_FROM * RADIX_BITS)
                bits = ((high << LOG_TILE) | col.to(gl.uint32, bitcast=True)).to(gl.int32, bitcast=True)
            smem_store_words(XK + pos, bits)
            gl.thread_barrier()
            bits = smem_load_words(XK + local)
        # (no barrier here: the next pass ranks into the other counter set, and its first write to the
        # exchange buffers comes after two barriers)
    col = bits & (TILE - 1)
    if PAYLOAD:
        if PACK_FROM >= 2:
            moved = smem_load_words(XI + col)
        else:
            moved = smem_exchange_words(payload, local, col)
    else:
        moved = col
    return col, moved


@gluon.jit
def smem_exchange_words(payload, local, col):
    """BlockExchange through ``global_smem``'s first words: int32 ``payload`` (item ``local``'s word at
    each item, ``local`` in ``[0, TILE)``) returned in the order ``col`` (each position gets item
    ``col``'s word). A barrier before the stores (earlier reads of those words finish first) and one
    between the stores and the loads; the whole block must call it, and a caller that writes shared
    memory afterwards must call ``gl.thread_barrier()`` first. The caller's allocation must start at
    ``global_smem`` and hold the ``TILE`` words, and nothing of Triton's own may use shared memory
    after the caller's last visible use of it (the words are addressed by inline asm, outside the
    compiler's view: as with :func:`block_radix_sort_smem`'s exchange buffers)."""
    gl.thread_barrier()
    smem_store_words(local, payload)
    gl.thread_barrier()
    return smem_load_words(col)


def block_radix_sort_smem_words(key_bits: int, radix_bits: int, warps: int, tile: int) -> int:
    """Words of shared memory :func:`block_radix_sort_smem` uses for a tile of ``tile`` keys: two
    counter sets, then one exchange buffer, or two while the key bits and the index do not fit one
    word after the first pass, three for keys wider than 32 bits."""
    pack_from = _pack_from(key_bits, tile.bit_length() - 1, radix_bits)
    return 2 * warps * (1 << radix_bits) + (3 if key_bits > 32 else 2 if pack_from > 1 else 1) * tile
