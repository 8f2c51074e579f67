"""torch's ``unique`` and ``unique_consecutive`` as tritoncub operators.

``torch.ops.tritoncub.unique_consecutive(x, return_inverse, return_counts, dim=None)`` — the first
item of every run of equal consecutive items (flattened input), with each item's run number and
each run's length; the select engine's head compaction (:mod:`tritoncub.device.select`), one host
sync for the result's size.

``torch.ops.tritoncub.unique(x, sorted=True, return_inverse, return_counts, dim=None)`` — the
distinct values in ascending order (``sorted=False`` gives the same sorted result, as torch's CUDA
implementation does). Four algorithms, tried in this order (the dense one decides on the device; the
next runs only when the one before says it cannot hold the values):

* **one program** (at most ``UNIQUE_TILE_MAX`` keys, any dtype): the keys' ordered bits sorted with
  their positions in one program (packed into one word for keys of at most 32 bits, pairs for 64-bit
  keys; from ``PRESORT_MIN_N`` keys, where the block radix sort is available, the permutation of
  ``radix_sort.sort`` instead, launched before it), run heads and tails flagged there (each value the
  item of its run first met in the input);
  one launch and one read-back of the count (a host mailbox), where a small call of the other paths
  spends most of its time on the host (several launches, allocations, copies);
* **dense integers** (integer and bool dtypes except uint64): when ``max - min < RANGE_CAP`` (a
  buffer of ``min(max(n, 4096), 2^22)`` counters), each item marks (or, for counts, atomically
  counts) its slot ``x - min``; the marked slots compacted in index order are the sorted distinct
  values, their counters the counts, and each item's inverse is the rank of its slot. No sort: one
  read of the input for min/max, one to mark, one more for the inverse. Counts are exact integers.
  The host's part is kept small (it is most of a call below a few million items): one allocation for
  every buffer, zeroed by the min/max pass (no fill launched), the launches remembered and replayed,
  the count (or the overflow) stored by a kernel into a host mailbox; up to ``_DENSE_SMALL_N`` items,
  one program finds the min and max and the per-tile marking takes every range (three launches fewer).
  With counts, on NVIDIA sm_80+, a range of up to ``COUNT_SMEM_BINS`` values (and no more than a
  program has items) is counted in shared memory per program (``red.shared.add``), each program
  then adding its non-zero counters to the slots: an atomic per item on the same few slots made
  counting 2^26 items over 4096 values ten times slower (H200: 2.0 ms against 0.2).
  Without counts, on NVIDIA sm_80+, a range of up to ``BITMAP_BITS`` values is marked in a
  shared-memory bitmap per program (``red.shared.or``, one program per SM, OR-ed into a global
  bitmap at the end, then expanded into the slots): a byte store per item to a random slot in
  global memory made the marking over ten times the read of the input (1.06 ms against 0.09 ms for
  2^26 int32 on an H100).
* **hash table** (integers of at most 32 bits whose range is too wide for the dense path, from
  ``HASH_MIN_N`` items on: below it the sort path, level or ahead there once the host's time is
  counted; so 16-bit keys, whose range the dense path always holds at those sizes, reach it only when
  called directly): each item's key goes into an open-addressing table of int64 slots (twice the
  items, at most ``HASH_SLOTS_MAX``: from ``HASH_MIN_N`` on, always that many; Fibonacci hashing,
  linear probing, an empty slot claimed by compare-and-swap); the occupied slots are compacted and
  the distinct values alone sorted (by one program up to the segmented sort's one-program limit, else
  by the onesweep radix sort); the inverse is each item's probe to its slot, rewritten as the key's
  bits and its rank. Counts: a
  sample of 1024 items taken first decides on the device; with many distinct values each item is
  counted in its slot's counter as it is inserted; with few (where those atomics queue on few
  counters: 2^26 items of 2 distinct values took 24.8 ms on an H200, against torch's 1.4) the items
  are counted afterwards from their ranks, in shared memory (up to its limit; past it, in the slots'
  counters as the ranks are found). Reads the input once (twice with the inverse, or with the
  counts of few distinct values) and sorts only the distinct values. A table too full to place a key
  within ``_HASH_MAX_PROBES`` slots (more distinct values than about half its slots) falls back to
  the sort path (a second host sync).
* **otherwise** (floats and 64-bit integers past the one-program path, small wide inputs, overflowing hash
  tables): sort with tritoncub's onesweep radix sort
  (:mod:`tritoncub.device.radix_sort`; keys only, or keys and the permutation when the inverse is
  wanted), then the head compaction of the sorted items; the inverse is scattered back through the
  permutation. The radix sort orders ``-0.0`` with ``+0.0`` and NaNs last, as torch does; of equal
  zeros the value returned is the first in input order (``-0.0`` or ``+0.0``: torch's choice of the
  sign varies with the size).

Each path reads exactly one value back to the host (the number of distinct values, with the dense
and hash paths' flags in the same read; the run heads of the sort path and of ``unique_consecutive``
get theirs from pass 1 of the bitmask compaction, stored into host memory while pass 2 runs). The
dense and sort paths queue all their GPU work before it, so the GPU never waits for the host in the
middle; the hash path sorts its distinct values after it (sized by it), and there computes the inverse
and the counts of few distinct values. Results are written into worst-case-sized buffers and returned as
views (or compact copies when the view would be less than a quarter full, see ``select.shrink``; the
one-program path's always views, of at most ``UNIQUE_TILE_MAX`` items). When the
dense path overflows, the hash path (for keys of at most 32 bits) or the sort path runs and reads its own
count (a second sync, only then; a third when the hash table overflows too). NaN: every NaN is its own value (NaN != NaN),
sorted last, as torch does, and the inverse maps the NaNs of ``x`` to those slots in input order (the
sort is stable; torch's CPU order among NaNs is its own sort's); ``-0.0`` and ``0.0`` are one value.

With ``dim``, both operators work on the slices ``x.select(dim, i)`` as torch does: the slices are
rows ``[x.shape[dim], rest]``; ``unique`` orders them lexicographically by a stable radix sort of
their positions per column, last column first (one sort per column), and both compact the heads of
runs of equal rows (a row differs from the one before it where any item is ``!=``; NaN never equals
NaN). The inverse then has ``x.shape[dim]`` items. One host sync for the result's size.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .. import policy
from .._library import custom_op
from .._launch import LaunchPlan, launch
from .._utils import (INT_DTYPES, InputTypeError, InputValueError, Mailbox, as_int, cdiv, check_tensor, dtype_names,
                      inline_ptx_ok, next_power_of_2, num_sms, refuse_capture, smem_atomics_ok, smem_per_block,
                      wrap_dim)
from ..block.discontinuity import block_flag_heads, block_flag_tails
from ..block.histogram import block_histogram
from ..block.radix_rank import smem_count_words_if, smem_load_words, smem_or_words_if, smem_store_words
from ..block.reduce import combine_max
from ..block.scan import block_inclusive_scan, block_inclusive_sum
from ..thread.radix_traits import KEY_DTYPES, to_ordered_bits
from . import radix_sort
from . import select as select_mod
from .segmented_sort import block_radix_available, sort_tile_descending
from .select import SELECT_FLAGGED, SELECT_HEADS, SELECTABLE_DTYPES, Plan, bitmask_plan, flat_input, shrink

RANGE_CAP_MAX = 1 << 22
#: uint16/uint32 where this torch has them (min/max taken through int64: torch's aminmax lacks them in
#: some builds, e.g. on the CPU)
_WIDE_UNSIGNED = tuple(d for d in (getattr(torch, "uint16", None), getattr(torch, "uint32", None)) if d is not None)
_DENSE_DTYPES = INT_DTYPES + (torch.uint8, torch.bool) + _WIDE_UNSIGNED


@gluon.jit
def _smem_mark_tiles(x_ptr, n, mn, TILE: gl.constexpr, LB: gl.constexpr, COUNT: gl.constexpr):
    """Every item of the program's tiles (``pid, pid + programs, ...``; the next tile is loaded before
    the current one is marked) marks its slot ``x - mn`` in shared memory (``global_smem``): with
    ``COUNT`` adds 1 to word ``slot`` (``red.shared.add``), else sets bit ``slot`` of a bitmap
    (``red.shared.or``)."""
    i = gl.arange(0, TILE, layout=LB)
    n_tiles = (n - 1) // TILE + 1   # (not (n + TILE - 1) // TILE: an int32 n near 2^31 would wrap)
    t = gl.program_id(0)
    step = gl.num_programs(0)
    offs = t.to(gl.int64) * TILE + i
    v_next = gl.load(x_ptr + offs, mask=offs < n, other=0)
    while t < n_tiles:
        m = offs < n
        v = v_next
        t += step
        offs = t.to(gl.int64) * TILE + i
        v_next = gl.load(x_ptr + offs, mask=offs < n, other=0)
        slot = (v.to(gl.int64) - mn).to(gl.int32)
        if COUNT:
            smem_count_words_if(slot, m.to(gl.int32))
        else:
            smem_or_words_if(slot >> 5, gl.full([TILE], 1, gl.int32, LB) << (slot & 31), m.to(gl.int32))


@gluon.jit
def _mark_bitmap_kernel(x_ptr, n, minmax_ptr, bitmap_ptr, limit, WARPS: gl.constexpr, ITEMS: gl.constexpr,
                        WORDS: gl.constexpr):
    """Set bit ``x - min`` of the global ``bitmap`` for every item, when ``max - min < limit``
    (``limit <= 32 * WORDS``; otherwise nothing is done). Each program marks its tiles (``pid, pid +
    programs, ...``; the next tile is loaded before the current one is marked) in a shared-memory
    bitmap of ``WORDS`` words, then ORs its non-zero words into ``bitmap``."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    LW: gl.constexpr = gl.BlockedLayout([4], [32], [WARPS], [0])
    smem = gl.allocate_shared_memory(gl.int32, [WORDS], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    mn = gl.load(minmax_ptr)
    span = gl.load(minmax_ptr + 1) - mn  # negative when it overflows int64
    if (span >= 0) & (span < limit):
        smem.store(gl.zeros([WORDS], gl.int32, LW))
        gl.thread_barrier()
        _smem_mark_tiles(x_ptr, n, mn, TILE, LB, False)
        gl.thread_barrier()
        w = smem.load(LW)
        gl.atomic_or(bitmap_ptr + gl.arange(0, WORDS, layout=LW), w, mask=w != 0, sem="relaxed")


@gluon.jit
def _count_smem_kernel(x_ptr, n, minmax_ptr, slots_ptr, limit, WARPS: gl.constexpr, ITEMS: gl.constexpr,
                       BINS: gl.constexpr):
    """Add the count of every slot ``x - min`` to ``slots`` when ``max - min < limit`` (``limit <=
    BINS``; otherwise nothing is done): each program counts its tiles (``pid, pid + programs, ...``; the
    next tile is loaded before the current one is counted) in int32 counters in shared memory
    (``red.shared.add``: CUB's shared-memory atomic histogram), then adds its non-zero counters to
    ``slots`` (one global atomic per value it saw). Only the counters of the range are zeroed and
    flushed, in chunks of ``CHUNK`` (``BINS`` is a multiple of it)."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    CHUNK: gl.constexpr = WARPS * 4 * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    LW: gl.constexpr = gl.BlockedLayout([4], [32], [WARPS], [0])
    smem = gl.allocate_shared_memory(gl.int32, [BINS], gl.SwizzledSharedLayout(1, 1, 1, [0]))  # (at global_smem)
    mn = gl.load(minmax_ptr)
    span = gl.load(minmax_ptr + 1) - mn  # negative when it overflows int64
    if (span >= 0) & (span < limit):
        w = gl.arange(0, CHUNK, layout=LW)
        end = span.to(gl.int32) + 1
        smem.slice(0, CHUNK).store(gl.zeros([CHUNK], gl.int32, LW))   # (a use keeps the allocation)
        for c0 in range(CHUNK, end, CHUNK):
            smem_store_words(c0 + w, gl.zeros([CHUNK], gl.int32, LW))
        gl.thread_barrier()
        _smem_mark_tiles(x_ptr, n, mn, TILE, LB, True)
        gl.thread_barrier()
        for c0 in range(0, end, CHUNK):
            c = smem_load_words(c0 + w)
            gl.atomic_add(slots_ptr + c0 + w, c.to(slots_ptr.dtype.element_ty), mask=(c != 0) & (c0 + w < end),
                          sem="relaxed")


@triton.jit
def _expand_bitmap_kernel(bitmap_ptr, minmax_ptr, slots_ptr, limit, BLOCK: tl.constexpr):
    """``slots[i] = bit i of bitmap`` for ``i < limit``, when the bitmap path marked (``max - min <
    limit``)."""
    mn = tl.load(minmax_ptr)
    span = tl.load(minmax_ptr + 1) - mn
    if (span >= 0) & (span < limit):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < limit
        w = tl.load(bitmap_ptr + (i >> 5), mask=m, other=0)
        tl.store(slots_ptr + i, ((w >> (i & 31)) & 1).to(tl.int8), mask=m)


@triton.jit
def _minmax_zero_kernel(x_ptr, n, ws_ptr, zero_from, zero_end, TILE: tl.constexpr, ZERO_BLOCK: tl.constexpr):
    """Program ``p`` stores the min and max (as int64) of tiles ``p, p + programs, ...`` of ``x`` to
    words ``2p`` and ``2p + 1`` of ``ws`` (int64's max and min for a program without a tile), and zeroes
    its share of words ``[zero_from, zero_end)`` (the dense path's zeroed buffers: one allocation, no fill
    launched by the host)."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    lo = tl.full([TILE], 0x7FFFFFFFFFFFFFFF, tl.int64)
    hi = tl.full([TILE], -0x7FFFFFFFFFFFFFFF - 1, tl.int64)
    n_tiles = (n - 1) // TILE + 1   # (n >= 1; not (n + TILE - 1) // TILE, which an int32 n near 2^31 wraps)
    t = pid
    while t < n_tiles:
        idx = t.to(tl.int64) * TILE + tl.arange(0, TILE)
        m = idx < n
        v = tl.load(x_ptr + idx, mask=m, other=0).to(tl.int64)
        lo = tl.where(m, tl.minimum(lo, v), lo)
        hi = tl.where(m, tl.maximum(hi, v), hi)
        t += programs
    tl.store(ws_ptr + 2 * pid, tl.min(lo))
    tl.store(ws_ptr + 2 * pid + 1, tl.max(hi))
    z = zero_from + pid.to(tl.int64) * ZERO_BLOCK
    while z < zero_end:
        i = z + tl.arange(0, ZERO_BLOCK)
        tl.store(ws_ptr + i, tl.zeros([ZERO_BLOCK], tl.int64), mask=i < zero_end)
        z += programs * ZERO_BLOCK


@triton.jit
def _minmax_reduce_kernel(ws_ptr, programs, BLOCK: tl.constexpr):
    """Words ``2 * programs`` and ``2 * programs + 1`` of ``ws``: the min and max of the ``programs``
    pairs :func:`_minmax_zero_kernel` stored (``programs <= BLOCK``)."""
    i = tl.arange(0, BLOCK)
    m = i < programs
    lo = tl.load(ws_ptr + 2 * i, mask=m, other=0x7FFFFFFFFFFFFFFF)
    hi = tl.load(ws_ptr + 2 * i + 1, mask=m, other=-0x7FFFFFFFFFFFFFFF - 1)
    tl.store(ws_ptr + 2 * programs, tl.min(lo))
    tl.store(ws_ptr + 2 * programs + 1, tl.max(hi))


@triton.jit
def _dense_report_kernel(total_ptr, overflow_ptr, box_ptr):
    """The dense path's one value for the host: the number of distinct values, or -1 when the value
    range overflowed the slots."""
    tl.store(box_ptr, tl.where(tl.load(overflow_ptr) != 0, -1, tl.load(total_ptr).to(tl.int64)))


@triton.jit
def _count_by_histogram(slots_ptr, slot, inb, BINS: tl.constexpr):
    """Add the tile's count of each slot below ``BINS`` to ``slots``: one atomic per slot present."""
    h = block_histogram(tl.where(inb, slot, -1), BINS)
    tl.atomic_add(slots_ptr + tl.arange(0, BINS), h.to(slots_ptr.dtype.element_ty), mask=h > 0, sem="relaxed")


@triton.jit
def _mark_kernel(x_ptr, n, minmax_ptr, slots_ptr, cap, skip_below, overflow_ptr, COUNT: tl.constexpr,
                 TILE: tl.constexpr, HIST_BINS: tl.constexpr):
    """Mark (``COUNT``: count with relaxed atomics) slot ``x - min`` of every item when ``skip_below
    <= max - min < cap`` (below, a shared-memory kernel marks or counts); when the value range does not
    fit in ``cap`` slots program 0 raises the overflow flag and nothing is written. Counting over at most
    ``HIST_BINS`` values (a power of two of at least 256, at most ``cap``), a program counts its tile
    in a block histogram (256 bins for at most 256 values: the histogram's cost grows with its bins)
    and adds one count per value it holds: an atomic per item would make every program queue on the
    same few words."""
    pid = tl.program_id(0)
    mn = tl.load(minmax_ptr).to(tl.int64)
    mx = tl.load(minmax_ptr + 1).to(tl.int64)
    span = mx - mn  # negative when it overflows int64
    fits = (span >= 0) & (span < cap)
    if fits & (span >= skip_below):
        idx = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
        inb = idx < n
        v = tl.load(x_ptr + idx, mask=inb, other=0).to(tl.int64)
        slot = v - mn
        if COUNT:
            if span < 256:
                _count_by_histogram(slots_ptr, slot, inb, 256)
            elif span < HIST_BINS:
                _count_by_histogram(slots_ptr, slot, inb, HIST_BINS)
            else:
                tl.atomic_add(slots_ptr + slot, tl.full((TILE,), 1, slots_ptr.dtype.element_ty), mask=inb,
                              sem="relaxed")
        else:
            tl.store(slots_ptr + slot, tl.full((TILE,), 1, tl.int8), mask=inb)
    if not fits:
        if pid == 0:
            tl.store(overflow_ptr, 1)


@triton.jit
def _gather_rank_kernel(x_ptr, n, minmax_ptr, rank_ptr, inv_ptr, cap, TILE: tl.constexpr):
    """``inverse[i] = rank[x[i] - min]`` (nothing is read when the range overflowed ``cap``)."""
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    inb = idx < n
    mn = tl.load(minmax_ptr).to(tl.int64)
    v = tl.load(x_ptr + idx, mask=inb, other=0).to(tl.int64)
    slot = v - mn
    inb = inb & (slot >= 0) & (slot < cap)
    r = tl.load(rank_ptr + slot, mask=inb)
    tl.store(inv_ptr + idx, r, mask=inb)


# ----------------------------------------------------------------------------------------------
# The one-program path (inputs of at most UNIQUE_TILE_MAX keys)
# ----------------------------------------------------------------------------------------------

@triton.jit
def _unique_tile_kernel(x_ptr, perm_ptr, n, vals_ptr, inv_ptr, counts_ptr, k_ptr, BLOCK: tl.constexpr,
                        LOG_BLOCK: tl.constexpr, PACK: tl.constexpr, MINMAX_DIMS: tl.constexpr, PRESORTED: tl.constexpr,
                        INVERSE: tl.constexpr, COUNTS: tl.constexpr):
    """torch.unique of ``n <= BLOCK`` keys in one program: the keys' ordered bits (``-0.0`` as ``+0.0``,
    NaNs canonical) sorted with their positions by the segmented sort's network, so equal keys lie
    together in input order (``PACK`` 32 or 64: the complemented key and the inverted position packed
    into one word where they fit; 0: the pair network, for 64-bit keys); ``PRESORTED``: that permutation
    is given instead (``perm_ptr``: int64 positions of a stable ascending sort, NaN last, ``-0.0`` equal to
    ``+0.0``, as torch.sort's); a run's head (``!=`` its predecessor: every NaN its own run) stores its item,
    the first met in the input, at the run's rank; ``inv[position]`` is that rank; a run's tail stores its
    length. The count of distinct values goes to ``k_ptr`` (a host mailbox)."""
    i = tl.arange(0, BLOCK)
    live = i < n
    if PRESORTED:
        pos = tl.load(perm_ptr + i, mask=live, other=0).to(tl.int32)
    else:
        x = tl.load(x_ptr + i, mask=live)
        # (the complemented keys largest first, equal ones by position: ascending keys in input order; padding
        # is 0, after every key, a key complemented to 0 included, by its larger position)
        flipped = tl.where(live, to_ordered_bits(x, True).to(tl.uint64), 0)
        pos = tl.reshape(sort_tile_descending(tl.reshape(flipped, [1, BLOCK]), i, 1, BLOCK, LOG_BLOCK, LOG_BLOCK,
                                              PACK, False, MINMAX_DIMS), [BLOCK]).to(tl.int32)
    sx = tl.load(x_ptr + pos, mask=live)
    heads = block_flag_heads(sx) & live
    rank = block_inclusive_sum(heads.to(tl.int32)) - 1
    tl.store(vals_ptr + rank, sx, mask=heads)
    if INVERSE:
        tl.store(inv_ptr + pos, rank.to(tl.int64), mask=live)
    if COUNTS:
        start = block_inclusive_scan(tl.where(heads, i, 0), combine_max)   # (each item's run's head)
        tl.store(counts_ptr + rank, (i + 1 - start).to(tl.int64), mask=block_flag_tails(sx, valid_items=n) & live)
    tl.store(k_ptr, tl.sum(heads.to(tl.int64), 0))


# ----------------------------------------------------------------------------------------------
# The hash path (integers of at most 32 bits whose range is too wide for the dense path)
# ----------------------------------------------------------------------------------------------

#: an empty slot of the hash table (no key of at most 32 bits widened to int64 equals it)
_EMPTY = tl.constexpr(-(1 << 63))


@triton.jit
def _hash_slot(v, LOG_SLOTS: tl.constexpr):
    # Fibonacci hashing of the int64 key: the top LOG_SLOTS bits of key * 2^64 / golden ratio
    return ((v.to(tl.uint64, bitcast=True) * 0x9E3779B97F4A7C15) >> (64 - LOG_SLOTS)).to(tl.int64)


#: ``old = atom.global.cas.b64 [$1], $2, $3`` where ``$4 != 0`` (relaxed, GPU scope); elsewhere no
#: memory operation and ``old = $2 + 1`` (the compare value of a claim is the empty slot, so a lane that
#: does not claim never reads as having claimed)
_CAS_IF_ASM = tl.constexpr("""{
.reg .pred p;
setp.ne.u32 p, $4, 0;
add.s64 $0, $2, 1;
@p atom.global.cas.b64 $0, [$1], $2, $3;
}""")


@triton.jit
def _claim(table_ptr, h, v, try_claim, PTX: tl.constexpr):
    """The slot's key before a compare-and-swap of empty -> ``v`` at ``h`` where ``try_claim``.
    ``tl.atomic_cas`` takes no mask: its form has every lane run an atomic, those that do not claim
    with a compare value no slot holds at their own slot (on the H100 a shared spare slot serialised
    them: 0.3 s for 2^26 keys); compiled NVIDIA kernels predicate the PTX ``atom.cas`` instead, so only
    the claims reach memory."""
    if PTX:
        old = tl.inline_asm_elementwise(_CAS_IF_ASM, "=l,l,l,l,r",
                                        [(table_ptr + h).to(tl.int64, bitcast=True),
                                         tl.full(h.shape, _EMPTY, tl.int64), v, try_claim.to(tl.int32)],
                                        dtype=tl.int64, is_pure=False, pack=1)
    else:
        old = tl.atomic_cas(table_ptr + h, tl.where(try_claim, tl.full(h.shape, _EMPTY, tl.int64), _EMPTY + 1),
                            v, sem="relaxed")
    return old


@triton.jit
def _hash_sample_kernel(x_ptr, n, state_ptr, MAX_DISTINCT: tl.constexpr, SAMPLE: tl.constexpr):
    """``state[1] = 1`` (count during the insert) when ``SAMPLE`` items at an even stride over ``x``
    (all of it when shorter) hold more than ``MAX_DISTINCT`` distinct values, else 0. Only speed
    depends on it: many distinct values are counted as they are inserted (each counter takes few
    items), few are counted afterwards in shared memory (an atomic per item would queue on them)."""
    i = tl.arange(0, SAMPLE)
    idx = i.to(tl.int64) * tl.maximum(n // SAMPLE, 1)
    # (short inputs repeat their last item; the keys' 32 bits as int32: equal where the keys are)
    v = tl.load(x_ptr + tl.minimum(idx, n - 1)).to(tl.int64).to(tl.int32)
    distinct = tl.sum(block_flag_heads(tl.sort(v)).to(tl.int32), 0)
    tl.store(state_ptr + 1, (distinct > MAX_DISTINCT).to(tl.int64))


@triton.jit
def _hash_insert_kernel(x_ptr, n, table_ptr, count_ptr, state_ptr, max_probes, LOG_SLOTS: tl.constexpr,
                        COUNT: tl.constexpr, PTX: tl.constexpr, TILE: tl.constexpr):
    """Insert every item's key into the open-addressing table (linear probing; a claim is a
    compare-and-swap of an empty slot, :func:`_claim`); with ``COUNT``, where ``state[1]`` (set by
    :func:`_hash_sample_kernel`) says so, also count each key's occurrences in its slot's counter. An item
    still unplaced after ``max_probes`` slots raises ``overflow`` (the table is too full: the caller
    sorts instead). Once ``overflow`` is raised the table's result is not used: items drop out as
    soon as their thread sees it (when the program starts, and after every probe) and a program stops
    when none is left, so an input with far more distinct values than slots costs about a table's
    worth of inserts, not ``max_probes`` probes per item. (Buckets of four slots
    read at once were measured 3-6x slower on the H100.)"""
    SLOTS: tl.constexpr = 1 << LOG_SLOTS
    idx = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    # (each thread reads the flag itself, so it only clears that thread's items: the loop condition is a
    # reduction over the program, the same in every warp — a per-thread exit from a loop whose
    # reductions synchronise the warps would be undefined)
    overflow_ptr = state_ptr
    active = (idx < n) & (tl.load(overflow_ptr, volatile=True) == 0)
    counting = False
    if COUNT:
        counting = tl.load(state_ptr + 1) != 0   # (one flag for the whole launch: a uniform branch below)
    v = tl.load(x_ptr + idx, mask=active, other=0).to(tl.int64)
    h = _hash_slot(v, LOG_SLOTS)
    probes = tl.full((), 0, tl.int32)
    while (tl.max(active.to(tl.int32), 0) > 0) & (probes < max_probes):
        # (a slot read from before another program's claim fails the claim: the probe moves on)
        cur = tl.load(table_ptr + h, mask=active, other=0)
        found = active & (cur == v)
        try_claim = active & (cur == _EMPTY)
        old = _claim(table_ptr, h, v, try_claim, PTX)
        placed = found | (try_claim & ((old == _EMPTY) | (old == v)))
        if COUNT:
            if counting:
                tl.atomic_add(count_ptr + h, tl.full((TILE,), 1, count_ptr.dtype.element_ty), mask=placed,
                              sem="relaxed")
        active = active & ~placed & (tl.load(overflow_ptr, volatile=True) == 0)
        h = (h + 1) & (SLOTS - 1)
        probes += 1
    if tl.max(active.to(tl.int32), 0) > 0:   # (items dropped because the flag was up need not raise it)
        tl.store(overflow_ptr, 1)


@triton.jit
def _hash_rank_kernel(table_ptr, x_ptr, n, inv_ptr, count_ptr, max_probes, LOG_SLOTS: tl.constexpr,
                      TILE: tl.constexpr, STORE: tl.constexpr, COUNT: tl.constexpr):
    """The rank of every ``x[i]`` among the distinct values: with ``STORE`` written to ``inv[i]`` (as
    ``inv``'s dtype); with ``COUNT`` the item is counted in its slot's counter (an atomic). Every
    occupied slot now holds
    ``key bits << 32 | rank`` (one read per probe; every key is in the table and its probe never
    passes an empty slot before reaching it)."""
    SLOTS: tl.constexpr = 1 << LOG_SLOTS
    idx = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    active = idx < n
    v = tl.load(x_ptr + idx, mask=active, other=0).to(tl.int64)
    h = _hash_slot(v, LOG_SLOTS)
    key_bits = v & 0xFFFFFFFF
    probes = tl.full((), 0, tl.int32)
    while (tl.max(active.to(tl.int32), 0) > 0) & (probes < max_probes):
        cur = tl.load(table_ptr + h, mask=active, other=0)
        hit = active & (((cur >> 32) & 0xFFFFFFFF) == key_bits)
        rank = cur & 0xFFFFFFFF
        if STORE:
            tl.store(inv_ptr + idx, rank.to(inv_ptr.dtype.element_ty), mask=hit)
        if COUNT:
            tl.atomic_add(count_ptr + h, tl.full((TILE,), 1, count_ptr.dtype.element_ty), mask=hit, sem="relaxed")
        active = active & ~hit
        h = (h + 1) & (SLOTS - 1)
        probes += 1


@triton.jit
def _rank_slots_kernel(table_ptr, where_ptr, perm_ptr, slot_of_ptr, minmax_ptr, k, BLOCK: tl.constexpr):
    """After the distinct values are sorted: the ``r``-th smallest sits in slot ``s = where[perm[r]]``;
    ``slot_of[r] = s`` and the slot becomes ``key bits << 32 | r``
    (what :func:`_hash_rank_kernel` reads). The first program also writes the ranks' range ``[0, k -
    1]`` to ``minmax`` (for the counting in shared memory)."""
    r = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = r < k
    p = tl.load(perm_ptr + r, mask=m, other=0)
    s = tl.load(where_ptr + p, mask=m, other=0)
    tl.store(slot_of_ptr + r, s, mask=m)
    key = tl.load(table_ptr + s, mask=m, other=0)
    tl.store(table_ptr + s, ((key & 0xFFFFFFFF) << 32) | r, mask=m)
    if tl.program_id(0) == 0:
        tl.store(minmax_ptr + tl.arange(0, 2), tl.arange(0, 2).to(tl.int64) * (k - 1))


_TILE = 4096
#: the dense path's min/max pass: items per tile, most programs (each reduces a strided share of the tiles
#: to one pair, one more program the pairs), and the words each program zeroes per step
_MINMAX_TILE, _MINMAX_PROGRAMS, _ZERO_BLOCK = 4096, 1024, 1024
#: inputs of at most this many items take the dense path in the fewest launches: one program finds the
#: min and max, and the per-tile marking marks and counts every range (no shared-memory bitmap or counters,
#: which pay where the items are many); the GPU's share of such a call is small beside the host's launches
_DENSE_SMALL_N = 1 << 16
#: where the shared-memory counting does not run (see COUNT_SMEM_BINS), counting unique values over at
#: most this many values (a power of two from 256 to 4096), the dense path's programs count their tiles
#: in a block histogram before adding to the slots (see _mark_kernel).
#: H200, 2^26 int32 with counts, GPU time (bench/probes/unique_counts_probe.py; logs unique_counts_*-h200-
#: 20261129.log): values in [0, 100) 14.9 ms with an atomic per item, 0.39 ms by 256-bin histograms;
#: [0, 1000) 5.9 ms, 1.03 ms by 1024 bins; torch.unique 1.4-1.5 ms. 4096 bins cost more than the
#: atomics they save (4.9 ms for any range below 4096 values, against 2.0 ms by atomics at 4096 values)
_MARK_HIST_BINS = 1024
#: values of the shared-memory bitmap path (128 KiB of shared memory: one program per SM)
BITMAP_BITS = 1 << 20
_BITMAP_WARPS, _BITMAP_ITEMS = 16, 8
#: counting over ranges of up to ``COUNT_SMEM_BINS`` values (a power of two, at least 2048; 0: off), and of
#: no more values than a program has items, on NVIDIA sm_80+ the dense path counts in shared memory
#: (``_count_smem_kernel``; at most 4 programs an SM, as many as their counters fit). H200, 2^26 int32 with
#: counts, GPU time (``bench/probes/unique_counts_probe.py --smem``, ``logs/unique_counts_smem-h200-20261129.log``):
#: values in [0, 100) 390 us by tile histograms, 198 us in shared memory; [0, 4096) 2005 us by an atomic per
#: item, 201 us in shared memory; [0, 32768) 1063, 234; torch.unique 1400-1520. With fewer items than values
#: per program (2^20 items, 16384 values) the flush costs more than the atomics it saves (45 us against 40).
COUNT_SMEM_BINS = 1 << 15
_COUNT_SMEM_WARPS, _COUNT_SMEM_ITEMS = 16, 8


def _bitmap_ok(device) -> bool:
    """The bitmap path runs where shared-memory atomics do (compiled NVIDIA sm_80+) and a program may
    hold the bitmap in shared memory (the kernel is then one program per SM)."""
    if not smem_atomics_ok(device):
        return False
    return smem_per_block(device) >= BITMAP_BITS // 8 + 1024


def _count_smem_shape(device, cap: int, n: int) -> tuple[int, int, int]:
    """``(bins, limit, programs)`` of the shared-memory counting (``_count_smem_kernel``) of ``n`` items
    into ``cap`` slots (at least 4096): ``bins`` 0 where it does not run."""
    if not COUNT_SMEM_BINS or not smem_atomics_ok(device):
        return 0, 0, 0
    bins = min(COUNT_SMEM_BINS, 1 << (cap - 1).bit_length())
    if bins < _COUNT_SMEM_WARPS * 4 * 32:   # (the kernel zeroes and flushes chunks of this many counters)
        return 0, 0, 0
    per_sm = min(4, smem_per_block(device) // (4 * bins + 1024))
    if per_sm < 1:
        return 0, 0, 0
    programs = max(1, min(num_sms(device) * per_sm, cdiv(n, _COUNT_SMEM_WARPS * _COUNT_SMEM_ITEMS * 32)))
    return bins, min(cap, bins, max(4096, cdiv(n, programs))), programs


#: inputs of at most this many keys take the one-program path (``_unique_tile_kernel``): one launch and one
#: read-back, where the other paths' several launches, allocations and copies cost the host most of a small
#: call's time. Not 8192: a block of 8192 keys takes the program 231-239 us of GPU time (32-bit keys) or
#: 543-561 (64-bit), level with or slower than the other paths at 4097-8192 items on an H200 (with inverse
#: and counts, do_bench: int32 271-313 against 266-393 us, float32 273-318 against 138-164, float64
#: 590-632 against 269-292; ``bench/results/logs/unique_small_probe-limit-h200-20261201.log``)
UNIQUE_TILE_MAX = 4096
#: the one-program path's innermost sort dims compared by min/max where (key, position) fit a 32-bit word
#: (keys of 8 and 16 bits; see ``segmented_sort.bitonic_sort_descending``). H200, GPU time with inverse and
#: counts, 0 / 2 / 7: 4096 int16 keys 42.0 / 41.4-41.5 / 39.1 us (``tl.sort`` of 64-bit words: 63.9),
#: 1024 7.2 / 7.0 / 6.5 (9.8-9.9); 32- and 64-bit keys, as 64-bit words or pairs, equal to ``tl.sort``
#: (``bench/results/logs/unique_small_probe-network-h200-20261201.log``)
_TILE_MINMAX_DIMS = 7


def _tile_warps(block: int, wide: bool) -> int:
    """The one-program path's warps: a warp per 128 keys (64 for 64-bit keys), up to 1024 threads.
    Measured on an H200 (``bench/probes/unique_small_probe.py --warps``, GPU time with inverse and
    counts): 1024 int32 keys 13.7 / 9.6 / 10.0 us on 4 / 8 / 16 warps, 4096 91.9 / 82.0 / 87.6 / 64.2 on
    4 / 8 / 16 / 32; 1024 int64 28.9 / 20.3 / 16.2 / 15.6, 4096 206 / 187 / 200 / 138."""
    most = 16 if torch.version.hip is not None else 32   # (64-lane wavefronts on AMD)
    return max(1, min(most, block // (64 if wide else 128)))


#: inputs of at least this many keys (and at most ``UNIQUE_TILE_MAX``) are sorted by
#: :func:`tritoncub.device.radix_sort.sort` first where the segmented sort's block radix sort is available
#: (compiled NVIDIA kernels; that sort's one launch, for 64-bit keys too since the block radix sort takes
#: them: the int64 figures below were measured before, with the device radix sort's several launches past
#: 2048 keys), the one-program kernel then flagging the runs of that permutation:
#: its own sort network, which packs a 32-bit key and its position into a 64-bit word (pairs for 64-bit
#: keys), spills. H200, GPU time per call without / with inverse and counts, network -> presorted (torch):
#: 4096 int32 keys 53.9 / 63.8 -> 14.0 / 24.6 us (14.4 / 45.0), float32 54.1 / 64.1 -> 14.3 / 24.9, int16
#: 28.7 / 39.1 -> 11.3 / 21.9, int64 126.7 / 137.8 -> 62.4 / 74.0 (61.6 / 74.9); at 2048 keys 20.3 -> 9.4
#: (int32) but 34.8 -> 37.1 (int64). do_bench, which counts the host's work with the GPU idle (most of a
#: small call, the count read back each call), rose on that host: 2048 int32 keys 49 -> 230 us, 4096 87 ->
#: 137 (with inverse and counts 108 -> 129), 4096 int64 156 -> 434 (248 -> 273)
#: (``bench/results/logs/small_unique_histc_probe-unique-h200-20261202.log``). So from 2049 keys, where the
#: GPU time falls 2-4x to torch's: what a call costs when the host runs ahead of the GPU. None: never.
PRESORT_MIN_N = 2049


def _presorts(xs: torch.Tensor) -> bool:
    """Whether the one-program path takes its permutation from the radix sort (see ``PRESORT_MIN_N``)."""
    return PRESORT_MIN_N is not None and xs.numel() >= PRESORT_MIN_N and block_radix_available(xs.device)


def _tile_path(xf, return_inverse, return_counts):
    """Distinct values of at most ``UNIQUE_TILE_MAX`` keys in one program (see ``_unique_tile_kernel``),
    after a sort of the keys from ``PRESORT_MIN_N`` keys on: the results are views of buffers of ``n`` items."""
    n, dev = xf.numel(), xf.device
    xs = xf.view(torch.uint8) if xf.dtype == torch.bool else xf
    perm = radix_sort.sort(xs)[1] if _presorts(xs) else None
    block = max(32, next_power_of_2(n))
    vals = torch.empty(n, dtype=xs.dtype, device=dev)
    inv = torch.empty(n if return_inverse else 0, dtype=torch.int64, device=dev)
    counts = torch.empty(n if return_counts else 0, dtype=torch.int64, device=dev)
    box = Mailbox.take(dev)
    log_block = block.bit_length() - 1
    bits = xs.element_size() * 8
    pack = 32 if bits + log_block <= 32 else 64 if bits + log_block <= 64 else 0
    minmax = min(_TILE_MINMAX_DIMS, log_block) if pack == 32 else 0
    if perm is not None:
        pack = minmax = 0   # (the network is not compiled in: one kernel per block whatever the key width)
    launch(_unique_tile_kernel, (1,), xs, perm if perm is not None else xs, n, vals, inv if return_inverse else vals,
           counts if return_counts else vals, box.tensor, BLOCK=block, LOG_BLOCK=log_block, PACK=pack,
           MINMAX_DIMS=minmax, PRESORTED=perm is not None, INVERSE=return_inverse, COUNTS=return_counts,
           num_warps=_tile_warps(block, bits == 64))
    k = box.read()   # the one host sync
    vals = vals[:k]
    return vals.view(torch.bool) if xf.dtype == torch.bool else vals, inv, counts[:k] if return_counts else counts


def _sort(x: torch.Tensor, with_indices: bool):
    """Ascending stable sort (NaN last) with tritoncub's onesweep radix sort: keys only, or values
    and the permutation when the inverse is wanted."""
    if with_indices:
        return radix_sort.sort(x)
    return radix_sort.sort_keys(x), None


#: run heads (unique_consecutive, sorted unique) take the bitmask two-pass form, its count stored to a
#: host mailbox by pass 1 (False: the single pass). H100, 2^26 sorted int32 in 2^20 runs, op times:
#: 0.26-0.29 ms against 0.38 single pass; +counts 0.226 against 0.31-0.32; +inverse+counts 0.599
#: against 0.84-0.87 (bench/results/logs/select_overlap_probe-mailbox-20261124.log). Tests run both.
HEADS_TWO_PASS = True


def _sort_path(xf, return_inverse, return_counts):
    sv, perm = _sort(xf, return_inverse)
    return _heads(sv, return_inverse, return_counts, perm)


def _heads(xf, return_inverse, return_counts, perm=None, two_pass=None):
    """Head compaction of ``xf`` (values, inverse in ``xf``'s order or through ``perm``, counts),
    all queued before the one host sync that sizes the results (``two_pass``: the bitmask form, whose
    count leaves for the host after pass 1 while pass 2 runs)."""
    two_pass = HEADS_TWO_PASS if two_pass is None else two_pass
    n = xf.numel()
    dev = xf.device
    plan = (bitmask_plan(xf, None, SELECT_HEADS, run_lengths=return_counts, pol=policy.select("select", dev, "heads"))
            if two_pass else Plan(xf, None, SELECT_HEADS, run_lengths=return_counts))
    # (the count is known already for a small problem, or when the host is behind the GPU: exact outputs,
    # nothing to shrink)
    k = plan.host_count_if_ready() if two_pass else None
    size = n if k is None else k
    vals = torch.empty(size, dtype=xf.dtype, device=dev)
    counts = torch.empty(size if return_counts else 0, dtype=torch.int64, device=dev)
    # (run starts: the single pass takes counts from them; the bitmask form's scatter writes counts)
    starts = torch.empty(size, dtype=torch.int64, device=dev) if return_counts and not two_pass else None
    inv = torch.empty(n if return_inverse else 0, dtype=torch.int64, device=dev)
    plan.scatter(out=vals, out_index=starts,
                 out_lengths=counts if return_counts else None, out_inverse=inv if return_inverse else None,
                 count=k)
    if return_inverse and perm is not None:
        inv = torch.empty_like(inv).scatter_(0, perm, inv)
    if k is not None:
        return vals, inv, counts
    k = plan.host_count() if two_pass else int(plan.num_selected.item())  # the one host sync
    return shrink(vals, k), inv, shrink(counts, k) if return_counts else counts


#: inputs of at least this many items count in int64 slots (int32 ones could wrap)
_COUNT64_MIN_N = 1 << 31
#: remembered launches of the dense path (see _dense_path)
_DENSE_PLANS: dict = {}


def _dense_path(xf, return_inverse, return_counts):
    """Returns None when the value range does not fit (then the caller sorts)."""
    n = xf.numel()
    dev = xf.device
    cap = min(max(n, 4096), RANGE_CAP_MAX)
    xs = xf.view(torch.uint8) if xf.dtype == torch.bool else xf
    count_dtype = torch.int64 if n >= _COUNT64_MIN_N else torch.int32   # (a count may reach n)
    slot_dtype = count_dtype if return_counts else torch.int8
    small = n <= _DENSE_SMALL_N
    bitmap_limit = min(cap, BITMAP_BITS) if not (return_counts or small) and _bitmap_ok(dev) else 0
    smem_bins, smem_limit, smem_programs = (_count_smem_shape(dev, cap, n) if return_counts and not small
                                            else (0, 0, 0))
    skip_hi = bitmap_limit or smem_limit   # (ranges a shared-memory kernel takes; the per-tile marking skips them)
    # one allocation (host time per call matters at small sizes), int64 words in 16-byte aligned parts: the
    # min/max pass's pairs (one program's pair is the min and max), the min and max, the overflow flag, the
    # compaction's state, the bitmap (when it is used), the slots, the slots' ranks (for the inverse); the
    # min/max pass zeroes the flag to the slots
    programs = 1 if small else min(cdiv(n, _MINMAX_TILE), _MINMAX_PROGRAMS)
    state_words = Plan.warp_sync_state_words(cap, SELECT_FLAGGED, dev, load_x=False)
    o_minmax = 2 * programs if programs > 1 else 0
    o_state = o_minmax + 4
    o_bitmap = o_state + ((state_words + 1) & ~1)
    o_slots = o_bitmap + (BITMAP_BITS // 64 if bitmap_limit else 0)
    o_rank = o_slots + ((cdiv(cap * slot_dtype.itemsize, 8) + 1) & ~1)
    ws = torch.empty(o_rank + (cap if return_inverse else 0), dtype=torch.int64, device=dev)
    box = Mailbox.take(dev)
    # the launches are fixed by the size, the outputs wanted, the slots' dtype and the input's dtype and
    # alignment (the parts' alignments by the layout above): repeated calls re-launch them without the
    # per-argument bookkeeping, and take the parts' addresses (no views)
    # (with the compaction's launch: the select policy is the tag, its constants in the key, the outputs'
    # alignments fixed, being fresh allocations)
    run = LaunchPlan(_DENSE_PLANS, (n, xs.dtype, xs.data_ptr() & 15, dev, cap, return_counts, return_inverse,
                                    slot_dtype, bitmap_limit, BITMAP_BITS, _TILE, _MARK_HIST_BINS, smem_bins, skip_hi,
                                    programs, _MINMAX_TILE, _ZERO_BLOCK, state_words, select_mod._PROBE,
                                    select_mod._INDEX32_LIMIT),
                     tag=policy.select("select", dev, "default"))
    if run.steps is not None:
        base = ws.data_ptr()
        minmax, overflow, bitmap, slots = (base + 8 * o for o in (o_minmax, o_minmax + 2, o_bitmap, o_slots))
    else:
        minmax, overflow = ws[o_minmax:o_minmax + 2], ws[o_minmax + 2:o_minmax + 3]
        bitmap = ws[o_bitmap:o_slots].view(torch.int32)
        slots = ws[o_slots:o_rank].view(slot_dtype)[:cap]
    run(_minmax_zero_kernel, (programs,), xs, n, ws, o_minmax + 2, o_rank, TILE=_MINMAX_TILE,
        ZERO_BLOCK=_ZERO_BLOCK, num_warps=8)
    if programs > 1:
        run(_minmax_reduce_kernel, (1,), ws, programs, BLOCK=max(32, next_power_of_2(programs)), num_warps=4)
    if bitmap_limit:
        run(_mark_bitmap_kernel, (num_sms(dev),), xs, n, minmax, bitmap, bitmap_limit, WARPS=_BITMAP_WARPS,
            ITEMS=_BITMAP_ITEMS, WORDS=BITMAP_BITS // 32, num_warps=_BITMAP_WARPS)
        run(_expand_bitmap_kernel, (cdiv(bitmap_limit, 4096),), bitmap, minmax, slots, bitmap_limit, BLOCK=4096,
            num_warps=8)
    if smem_bins:
        run(_count_smem_kernel, (smem_programs,), xs, n, minmax, slots, skip_hi, WARPS=_COUNT_SMEM_WARPS,
            ITEMS=_COUNT_SMEM_ITEMS, BINS=smem_bins, num_warps=_COUNT_SMEM_WARPS)
    run(_mark_kernel, (cdiv(n, _TILE),), xs, n, minmax, slots, cap, skip_hi, overflow, COUNT=return_counts,
        TILE=_TILE, HIST_BINS=1 << (min(_MARK_HIST_BINS, cap).bit_length() - 1), num_warps=8)
    # the compaction of the marked slots (one of this path's remembered launches; the plan takes views)
    if run.steps is not None:
        slots_v = ws.view(slot_dtype)[o_slots * 8 // slot_dtype.itemsize:][:cap]
        minmax_v = ws[o_minmax:o_minmax + 2]
    else:
        slots_v, minmax_v = slots, minmax
    rank = ws[o_rank:] if return_inverse else None
    state = ws[o_state:o_state + state_words] if state_words else None
    plan = Plan(slots_v, slots_v, SELECT_FLAGGED, load_x=False, state=state)
    vals = torch.empty(cap, dtype=xs.dtype, device=dev)
    counts = torch.empty(cap if return_counts else 0, dtype=torch.int64, device=dev)
    plan.scatter(out_index=vals, index_base=minmax_v, values=slots_v if return_counts else None,
                 out_values=counts if return_counts else None, out_inverse=rank, run=run)
    inv = torch.empty(n if return_inverse else 0, dtype=torch.int64, device=dev)
    if return_inverse:
        run(_gather_rank_kernel, (cdiv(n, _TILE),), xs, n, minmax, base + 8 * o_rank if run.steps is not None else rank,
            inv, cap, TILE=_TILE, num_warps=8)
    # (the warp-synchronous state's total, word 8, by its address where the launches replay)
    in_state = state is not None and plan.warp_sync and plan.state is state
    total = base + 8 * (o_state + 8) if in_state and run.steps is not None else plan.num_selected
    run(_dense_report_kernel, (1,), total, overflow, box.tensor, num_warps=1)
    run.done()
    k = box.read()   # the one host sync
    if k < 0:
        return None
    vals = shrink(vals, k)
    if xf.dtype == torch.bool:
        vals = vals.view(torch.bool)
    return vals, inv, shrink(counts, k) if return_counts else counts


#: slots of the hash table: twice the items (all distinct still fill only half), at most
#: ``HASH_SLOTS_MAX`` (int64 slots: 32 MiB, which an H100's L2 holds); inputs with more distinct values
#: than the table takes overflow to the sort path
HASH_SLOTS_MAX = 1 << 22
#: inputs of fewer items whose range is too wide for the dense path sort instead of hashing. H200, int32
#: values drawn from D wide distinct ones, GPU time per call, hash path against sort path
#: (``bench/probes/unique_hash_vs_sort_probe.py``, ``logs/unique_hash_vs_sort_probe-after-h200-20261129.log``):
#: at 2^22 items the hash path is ahead for D <= 65536 (D = 100: 68 against 158 us; with inverse and counts
#: 125 against 352) and behind for D = 2^20 (206 against 179; counts 368 against 188); at 2^23 ahead but for
#: D = 2^20 with counts; at 2^26 ahead by 1.5-9x but for counts alone of 2^20 values (1838 against 1671).
#: do_bench, which adds the host's time, was level at 2^22 and ahead for the sort path below it: the hash
#: path's ~15 launches and allocations, some after its host sync, cost more host time than a sort's
HASH_MIN_N = 1 << 23
#: with counts, the items sampled before the insert and the most distinct values among them for which
#: the insert leaves the counting to a pass after it (see _hash_sample_kernel). H200, 2^26 int32 over D
#: distinct wide values, counts alone, GPU time (``bench/probes/unique_hash_counts_probe.py``, logs
#: ``unique_hash_counts*-h200-20261129.log``): counting during the insert D = 2 24.8 ms, 100 1.92, 4096
#: 1.30, 65536 1.37, 2^20 1.87; afterwards from the ranks (in shared memory, or an atomic per item by rank)
#: 0.63, 0.66, 0.99, 1.97, 2.59; torch.unique 1.41-1.69. 960 of 1024 sampled: about 8000 distinct values
#: evenly spread. The sample takes 7.5 us (4096 items: 76-89 us), and the insert with counting compiled in
#: 256 us instead of 220 when it does not count (``bench/probes/hash_sample_probe.py``)
_HASH_SAMPLE, _HASH_SAMPLE_MAX_DISTINCT = 1024, 960
#: slots an insert probes before it gives up (the table is then too full: the sort path runs)
_HASH_MAX_PROBES = 256
_HASH_TILE, _HASH_WARPS = 1024, 4
_RANK_SLOTS_BLOCK = 1024
_HASH_DTYPES = (torch.int16, torch.int32) + _WIDE_UNSIGNED


def _hash_path(xf, return_inverse, return_counts):
    """Distinct values of integers of at most 32 bits through a hash table (see the module doc);
    None when the table overflows (then the caller sorts)."""
    n = xf.numel()
    dev = xf.device
    log_slots = max(12, min(HASH_SLOTS_MAX.bit_length() - 1, (2 * n - 1).bit_length()))
    slots = 1 << log_slots
    table = torch.full((slots,), int(_EMPTY), dtype=torch.int64, device=dev)
    count_dtype = torch.int64 if n >= _COUNT64_MIN_N else torch.int32
    counts_in = torch.zeros(slots if return_counts else 1, dtype=count_dtype, device=dev)
    state = torch.zeros(2, dtype=torch.int64, device=dev)   # the overflow flag; whether the insert counts
    if return_counts:
        launch(_hash_sample_kernel, (1,), xf, n, state, MAX_DISTINCT=_HASH_SAMPLE_MAX_DISTINCT, SAMPLE=_HASH_SAMPLE,
               num_warps=8)
    launch(_hash_insert_kernel, (cdiv(n, _HASH_TILE),), xf, n, table, counts_in, state, _HASH_MAX_PROBES,
           LOG_SLOTS=log_slots, COUNT=return_counts, PTX=inline_ptx_ok(dev), TILE=_HASH_TILE, num_warps=_HASH_WARPS)
    plan = Plan(table, table != int(_EMPTY), SELECT_FLAGGED, load_x=False)
    found = torch.empty(slots, dtype=torch.int64, device=dev)
    where = torch.empty(slots if (return_inverse or return_counts) else 0, dtype=torch.int64, device=dev)
    plan.scatter(out=found, out_index=where if (return_inverse or return_counts) else None)
    k, ovf, counted = torch.cat([plan.num_selected.view(1), state]).tolist()  # the one host sync
    if ovf:
        return None
    found = found[:k].to(xf.dtype)
    empty = ranks = torch.empty(0, dtype=torch.int64, device=dev)
    if not (return_inverse or return_counts):
        return _sort_found(found), empty, empty
    # the sorted values, and where each one's slot is found (its position among the found values)
    vals, perm = _sort_found(found, with_positions=True)
    # not counted during the insert (few distinct values in the sample): of at most the shared-memory
    # counting's limit, counted in shared memory from each item's rank (the inverse, or int32 ranks only
    # the counting reads); of more, in their slots' counters as the ranks are found
    bins, limit, programs = (_count_smem_shape(dev, max(k, 4096), n) if return_counts and not counted
                             else (0, 0, 0))
    by_rank = return_counts and not counted and 0 < k <= limit   # (limit 0: no shared-memory counting here)
    by_slot = return_counts and not counted and not by_rank
    # every occupied slot becomes key bits << 32 | rank of its key (k < 2^31), read by the probes
    slot_of = torch.empty(k, dtype=torch.int64, device=dev)
    minmax = torch.empty(2, dtype=torch.int64, device=dev)   # (the ranks' range, for the counting)
    launch(_rank_slots_kernel, (cdiv(k, _RANK_SLOTS_BLOCK),), table, where, perm, slot_of, minmax, k,
           BLOCK=_RANK_SLOTS_BLOCK, num_warps=4)
    if return_inverse or return_counts and not counted:
        store = return_inverse or by_rank
        ranks = torch.empty(n if store else 0, dtype=torch.int64 if return_inverse else torch.int32, device=dev)
        launch(_hash_rank_kernel, (cdiv(n, _HASH_TILE),), table, xf, n, ranks, counts_in, _HASH_MAX_PROBES,
               LOG_SLOTS=log_slots, TILE=_HASH_TILE, STORE=store, COUNT=by_slot, num_warps=_HASH_WARPS)
    inv = ranks if return_inverse else empty
    if not return_counts:
        return vals, inv, empty
    if by_rank:
        counts = torch.zeros(k, dtype=torch.int64, device=dev)
        launch(_count_smem_kernel, (programs,), ranks, n, minmax, counts, limit, WARPS=_COUNT_SMEM_WARPS,
               ITEMS=_COUNT_SMEM_ITEMS, BINS=bins, num_warps=_COUNT_SMEM_WARPS)
        return vals, inv, counts
    return vals, inv, counts_in[slot_of].to(torch.int64)


def _sort_found(found: torch.Tensor, with_positions: bool = False):
    """The hash path's distinct values sorted (ascending); ``with_positions``: and their positions in
    ``found``. Up to the segmented sort's one-program limit for one row (8192 keys on sm_90, 64-bit keys
    too where the block radix sort takes them; else 2048 of 64 bits: the tile sort of more 64-bit keys took
    twice the onesweep sort's GPU time or more) one program sorts them
    (:func:`tritoncub.device.radix_sort.sort` sends them there: one launch, where the onesweep sort's
    histogram, passes and host read-back took several times the host time)."""
    if not with_positions and not radix_sort.sorts_rows_in_one_program(found.dtype, found.numel(), found.device,
                                                                       rows=1):
        return radix_sort.sort_keys(found)
    vals, positions = radix_sort.sort(found)
    return (vals, positions) if with_positions else vals


def _slice_dim(x: torch.Tensor, dim: int) -> int:
    """``dim`` of unique over slices, checked as torch does."""
    if x.dim() == 0:   # (torch's error: no dim of a 0-d tensor is taken, not even 0 or -1)
        raise IndexError(f"Dimension specified as {as_int(dim, 'dim')} but tensor has no dimensions")
    d = wrap_dim(dim, x.dim())
    if x.numel() == 0 and x.shape[d] != 0:
        raise InputValueError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    if x.shape[d] == 0 and sum(s == 0 for s in x.shape) > 1:
        raise InputValueError("Number of zero sized dimensions is more than one, so unique cannot be applied")
    return d


def _unique_dim(x, d, sort, return_inverse, return_counts):
    """``(values, inverse, counts)`` over the slices of ``x`` along ``d`` (see the module docstring)."""
    moved = x.movedim(d, 0)
    rows = moved.reshape(x.shape[d], moved[0].numel() if x.shape[d] else 0)
    r = rows.shape[0]
    dev = x.device
    perm = torch.arange(r, device=dev, dtype=torch.int64)
    if sort and r > 1:
        for c in range(rows.shape[1] - 1, -1, -1):   # least significant column first: stable passes
            _, perm = radix_sort.sort_pairs(rows[:, c][perm].contiguous(), perm)
        rows = rows[perm]
    heads = torch.ones(r, dtype=torch.bool, device=dev)
    if r > 1:
        heads[1:] = (rows[1:] != rows[:-1]).any(dim=1)
    pos, k = _flag_positions(heads)
    k = int(k)   # the one host sync
    pos = pos[:k]
    shape = list(x.movedim(d, 0).shape)
    shape[0] = k
    vals = rows[pos].reshape(shape).movedim(0, d).contiguous()
    inv = torch.empty(0, dtype=torch.int64, device=dev)
    if return_inverse:
        run = torch.cumsum(heads, 0) - 1
        inv = torch.empty(r, dtype=torch.int64, device=dev).scatter_(0, perm, run) if sort else run
    counts = torch.empty(0, dtype=torch.int64, device=dev)
    if return_counts:
        counts = torch.diff(pos, append=pos.new_full((1,), r))   # (made on the device: no wait for the queue)
    return vals, inv, counts


def _flag_positions(flags):
    """Positions of the nonzero flags (a buffer whose first ``count`` items hold them) and ``count``."""
    from .select import flagged
    return flagged(torch.arange(flags.numel(), device=flags.device, dtype=torch.int64), flags)


def _check_fake_dtype(x):
    """The dtype check of the real operators, for their fake implementations."""
    if x.dtype not in SELECTABLE_DTYPES:
        raise InputTypeError(f"x has dtype {x.dtype}; supported dtypes are {dtype_names(SELECTABLE_DTYPES)}")


def _dim_fake(x, dim, return_inverse, return_counts):
    d = _slice_dim(x, dim)
    k = torch.library.get_ctx().new_dynamic_size()
    shape = list(x.shape)
    shape[d] = k
    return (x.new_empty(shape), x.new_empty((x.shape[d],) if return_inverse else (0,), dtype=torch.int64),
            x.new_empty((k,) if return_counts else (0,), dtype=torch.int64))


def _unique_impl(x, sorted_, return_inverse, return_counts, dim):
    check_tensor(x, "x", SELECTABLE_DTYPES)
    refuse_capture(x.device, "unique")
    if dim is not None:
        return _unique_dim(x, _slice_dim(x, dim), True, return_inverse, return_counts)
    xf = flat_input(x)
    if xf.numel() == 0:
        res = (xf.new_empty(0), torch.empty(x.shape if return_inverse else (0,), dtype=torch.int64,
                                            device=x.device), torch.empty(0, dtype=torch.int64, device=x.device))
        return res
    res = None
    if xf.numel() <= UNIQUE_TILE_MAX and xf.dtype in KEY_DTYPES:   # (the dtypes with ordered bits)
        res = _tile_path(xf, return_inverse, return_counts)
    if res is None and xf.dtype in _DENSE_DTYPES:
        res = _dense_path(xf, return_inverse, return_counts)
    if res is None and xf.dtype in _HASH_DTYPES and xf.numel() >= HASH_MIN_N:
        res = _hash_path(xf, return_inverse, return_counts)
    if res is None:
        res = _sort_path(xf, return_inverse, return_counts)
    vals, inv, counts = res
    if return_inverse:
        inv = inv.view(x.shape)
    return vals, inv, counts


@custom_op("tritoncub::unique", mutates_args=(), cudagraph_unsafe=True)
def unique(x: torch.Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torch.unique: ``(values, inverse, counts)``; ``inverse`` (shape of ``x``, or ``x.shape[dim]``
    items with ``dim``) and ``counts`` are empty unless requested. Values (or slices along ``dim``)
    ascending; one host sync."""
    return _unique_impl(x, sorted, return_inverse, return_counts, dim)


@unique.register_fake
def _(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    _check_fake_dtype(x)
    if dim is not None:
        return _dim_fake(x, dim, return_inverse, return_counts)
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return (x.new_empty((k,)), x.new_empty(x.shape if return_inverse else (0,), dtype=torch.int64),
            x.new_empty((k,) if return_counts else (0,), dtype=torch.int64))


def _unique_consecutive_impl(x, return_inverse, return_counts, dim):
    check_tensor(x, "x", SELECTABLE_DTYPES)
    refuse_capture(x.device, "unique_consecutive",
                   "use tritoncub.device.select.unique or run_length_encode.encode (counts stay on the device)")
    if dim is not None:
        return _unique_dim(x, _slice_dim(x, dim), False, return_inverse, return_counts)
    xf = flat_input(x)
    if xf.numel() == 0:
        return (xf.new_empty(0), torch.empty(x.shape if return_inverse else (0,), dtype=torch.int64,
                                             device=x.device), torch.empty(0, dtype=torch.int64, device=x.device))
    vals, inv, counts = _heads(xf, return_inverse, return_counts)
    if return_inverse:
        inv = inv.view(x.shape)
    return vals, inv, counts


@custom_op("tritoncub::unique_consecutive", mutates_args=(), cudagraph_unsafe=True)
def unique_consecutive(x: torch.Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torch.unique_consecutive: ``(values, inverse, counts)``, the last two empty unless requested
    (runs of equal slices along ``dim`` when given). One host sync."""
    return _unique_consecutive_impl(x, return_inverse, return_counts, dim)


@unique_consecutive.register_fake
def _(x, return_inverse=False, return_counts=False, dim=None):
    _check_fake_dtype(x)
    if dim is not None:
        return _dim_fake(x, dim, return_inverse, return_counts)
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return (x.new_empty((k,)), x.new_empty(x.shape if return_inverse else (0,), dtype=torch.int64),
            x.new_empty((k,) if return_counts else (0,), dtype=torch.int64))
