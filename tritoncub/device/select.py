"""DeviceSelect: stable compaction (CUB's ``DeviceSelect``), and the compaction engine that
``partition``, ``run_length_encode`` and ``unique`` build on.

* :func:`flagged` — items whose flag is nonzero; :func:`if_` — items for which a user
  ``@triton.jit`` predicate ``pred(x)`` holds (a tile of booleans, or of numbers: nonzero holds); :func:`unique` — the first item of each
  run of equal consecutive items; :func:`unique_by_key` — the same over keys, carrying values.
* torch operators ``torch.ops.tritoncub.masked_select(x, mask)`` and ``nonzero(x)``.

Guarantees: selected items keep their input order (stable). The device functions return a buffer
of ``n`` items whose first ``num_selected`` hold the result (the rest is unspecified) and the count
as a device tensor — nothing is read back to the host. The torch operators read the count back once
(one host sync) to size their result exactly (a view of the worst-case buffer when the result fills
at least a quarter of it, else a compact copy). Equality for ``unique`` is ``==`` on the values: NaN
is never equal to NaN (each NaN is its own run, as in torch), ``-0.0 == 0.0`` (the first item of the
run is kept).

Algorithm (the policy's ``PASSES``):

* **single pass** (CUB's DeviceSelect; the default): each tile counts its selected items, publishes
  the count and obtains the number selected before it by decoupled look-back
  (:mod:`tritoncub.agent.lookback`), then scatters each selected item to that prefix plus its
  exclusive in-tile count; the last tile writes the total. The input is read once.
  On NVIDIA GPUs (sm_80+, compiled kernels; the policy's ``WARP_SYNC``) flagged selections and runs
  take the warp-synchronous form of the same pass (CUB's): a warp-striped tile, one ballot per
  register slot for the in-warp counts, a look-back window of ``LOOKBACK_WINDOW`` tiles spread over
  the warps, int32 positions below 2^31 items (:func:`_select_warp_sync_kernel`); predicates, n-d
  indices and the interpreter use the portable kernel.
* **two passes** (reduce-then-scan): pass 1 counts the selected items of every tile (reading only
  what decides selection) and pass 2 scatters. Partition, ``nonzero`` and ``masked_select`` use it
  (policy bucket ``two_pass``), and so do run heads (bucket ``heads``: run-length encoding,
  ``unique_consecutive``, sorted ``unique``): partition needs the total before anything is written,
  and the torch operators that size their result on the host get the count after pass 1 — the scan stores it straight into pinned host
  memory (:class:`~tritoncub._utils.Mailbox`) — while pass 2 writes a worst-case buffer, so the GPU
  never idles for the host's reaction to the sync.
  Flagged, predicate and run-head selections take the *bitmask* form: pass 1
  (:func:`_count_bits_kernel`) stores one bit per item and the tile counts, a small multi-program
  scan (:func:`_scan_counts_kernel`) turns the counts into tile offsets and the total, and pass 2
  (:func:`_scatter_bits_kernel`) reads the bits instead of what decided selection — a sparse tile
  word by word (one round per set bit of its fullest word), a dense one item by item; run
  lengths (plans made with ``run_lengths``) are written by pass 2 too, each head ending the run
  before it (the previous head: in its word, an earlier word, or the last earlier tile with a head,
  which the scan finds), so no run starts are stored. Non-trivial runs (with their items loaded) take
  it with a second bitmask, of each selected run's last item: pass 2 writes each run's end from it (the
  run's slot is the count of selected first items up to it, minus one) and a last kernel subtracts the
  starts. Three-way partitions take the older form: pass 1's last program to finish (an
  acquire-release ticket) scans the counts, and pass 2 reads the tile again.

Counts are integers, so either way the result does not depend on timing.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.extra import libdevice

from .. import policy
from .._library import custom_op
from ..agent.launch_chain import chain_kwargs, chain_link, memo_key as chain_memo_key
from ..agent.lookback import (LOOKBACK_AGGREGATE, LOOKBACK_INCLUSIVE, STATUS_HEADER_WORDS, allocate_status,
                              count_look_back, count_publish, look_back, lookback_reduce, packed_layout, publish,
                              status_scratch, tile_index)
from .. import _launch
from .._launch import LaunchPlan, launch, record_launches, recording_launches, relocatable, replay, replays_ok
from .._utils import (ALL_NUMERIC_DTYPES, COMPLEX_DTYPES, InputTypeError, InputValueError, Mailbox, cdiv,
                      check_jit_function, check_same_device, check_tensor, device_constant, dtype_names,
                      interpreter_active, maxnreg_kwargs, num_sms, refuse_capture, smem_atomics_ok)
from ..block.discontinuity import flag_inequality
from ..block.load import warp_striped_vector_offsets
from ..warp.scan import warp_ballot_sum

# selection modes (what decides that an item is selected)
SELECT_FLAGGED = tl.constexpr(0)    # flags[i] != 0
SELECT_IF = tl.constexpr(1)         # PRED(x[i])
SELECT_HEADS = tl.constexpr(2)      # i == 0 or x[i] != x[i-1]  (first of each run)
SELECT_NONTRIVIAL = tl.constexpr(3)  # head and x[i+1] == x[i]  (first of each run longer than 1)
SELECT_THREE_WAY = tl.constexpr(4)  # category 1: PRED(x); category 2: not PRED(x) and PRED2(x)

BOOL_DTYPES = (torch.bool,)
SELECTABLE_DTYPES = ALL_NUMERIC_DTYPES + BOOL_DTYPES


@triton.jit
def _never(x):
    return x != x


@triton.jit
def tile_heads(x_ptr, idx, inb, x):
    """Head flags of a tile: item ``i`` starts a run when ``i == 0`` or ``x[i] != x[i-1]`` (the item
    before the tile is read from memory)."""
    prev = tl.load(x_ptr + idx - 1, mask=inb & (idx > 0))
    return inb & ((idx == 0) | flag_inequality(prev, x))


@triton.jit
def word_tile_heads(x_ptr, loc, rem, has_predecessor, n_after=0, NONTRIVIAL: tl.constexpr = False):
    """Head flags of a word-shaped tile of 32- or 64-bit items, packed: ``(words, counts, ends)``, bit
    ``b`` of word ``[t, w]`` set when item ``loc[t, w, b]`` (``loc`` = ``(t * WORDS + w) * 32 + b``,
    relative to ``x_ptr``; items at ``rem`` and past it are not flagged) starts a run. ``counts[t]``:
    the set bits of row ``t``. ``has_predecessor``: whether the item before ``x_ptr`` exists (else item 0 is a head).

    ``NONTRIVIAL``: the bits are instead those of the first items of the runs longer than one item (a
    head whose next item is equal), and ``ends`` those of these runs' last items (not a head; the next
    item differs, or there is none); ``n_after``: the items from ``x_ptr`` to the input's end (the next
    item of the tile's last may lie past ``rem``). Without it ``ends`` is ``words``.

    Each item's neighbours come from registers, not from second, shifted loads: the tile is loaded as
    16-byte vectors (four 32-bit items a thread, or two 64-bit ones), items of a quad (pair) compare
    with each other in the thread, a quad's first item with the quad before's last (a gather across the
    word's lanes), and a word's first item with the word before's last, one load per word.
    ``NONTRIVIAL`` then works on whole words (:func:`nontrivial_run_words`): whether each item's next
    starts a run is the head bits shifted down by one, and for a word's last item a comparison with the
    next word's first (two more loads per word, not per item)."""
    x = tl.load(x_ptr + loc, mask=loc < rem)
    WORDS: tl.constexpr = loc.shape[1]
    word_first = (tl.arange(0, loc.shape[0])[:, None] * WORDS + tl.arange(0, WORDS)[None, :]) * 32
    first_prev = tl.load(x_ptr + word_first - 1, mask=(word_first < rem) & ((word_first > 0) | has_predecessor))
    if x_ptr.dtype.element_ty.primitive_bitwidth == 64:
        # pairs (one 16-byte vector a thread): item 1 against item 0 in the thread, item 0 against the
        # pair before's item 1 by a gather across the word's 16 lanes
        PAIRS: tl.constexpr = 16
        c0, c1 = tl.split(tl.reshape(x, (loc.shape[0], WORDS, PAIRS, 2)))
        l0, _ = tl.split(tl.reshape(loc, (loc.shape[0], WORDS, PAIRS, 2)))   # [rows, WORDS, PAIRS]
        q = l0 // 2 % PAIRS
        p0 = tl.where(q == 0, first_prev[:, :, None], tl.gather(c1, tl.maximum(q - 1, 0), 2))
        s0 = (l0 < rem) & (((l0 == 0) & (not has_predecessor)) | flag_inequality(p0, c0))
        s1 = (l0 + 1 < rem) & flag_inequality(c0, c1)
        shift = (l0 & 31).to(tl.uint32)
        words = tl.sum((s0.to(tl.uint32) << shift) | (s1.to(tl.uint32) << (shift + 1)), 2)
        counts = tl.sum(tl.sum(s0.to(tl.int32) + s1.to(tl.int32), 2), 1)
    else:
        QUADS: tl.constexpr = 8
        xa, xb = tl.split(tl.reshape(x, (loc.shape[0], WORDS, QUADS, 2, 2)))
        c0, c2 = tl.split(xa)
        c1, c3 = tl.split(xb)
        la, _ = tl.split(tl.reshape(loc, (loc.shape[0], WORDS, QUADS, 2, 2)))
        l0, _ = tl.split(la)                                        # [rows, WORDS, QUADS]: each quad's first item
        q = l0 // 4 % QUADS
        p0 = tl.where(q == 0, first_prev[:, :, None], tl.gather(c3, tl.maximum(q - 1, 0), 2))
        d0 = flag_inequality(p0, c0)   # (item k of a quad differs from the item before it)
        d1 = flag_inequality(c0, c1)
        d2 = flag_inequality(c1, c2)
        d3 = flag_inequality(c2, c3)
        s0 = (l0 < rem) & (((l0 == 0) & (not has_predecessor)) | d0)
        s1 = (l0 + 1 < rem) & d1
        s2 = (l0 + 2 < rem) & d2
        s3 = (l0 + 3 < rem) & d3
        shift = (l0 & 31).to(tl.uint32)
        words = tl.sum((s0.to(tl.uint32) << shift) | (s1.to(tl.uint32) << (shift + 1))
                       | (s2.to(tl.uint32) << (shift + 2)) | (s3.to(tl.uint32) << (shift + 3)), 2)
        counts = tl.sum(tl.sum(s0.to(tl.int32) + s1.to(tl.int32) + s2.to(tl.int32) + s3.to(tl.int32), 2), 1)
    ends = words
    if NONTRIVIAL:
        words, counts, ends = nontrivial_run_words(x_ptr, words, word_first, rem, n_after)
    return words, counts, ends


@triton.jit
def nontrivial_run_words(x_ptr, heads, word_first, rem, n_after):
    """From the head bits ``heads`` of a block of words (word ``[t, w]``'s first item at ``word_first``,
    relative to ``x_ptr``; items at ``rem`` and past it unflagged; ``n_after`` items to the input's end):
    ``(firsts, counts, lasts)``, the bits of the first and of the last items of the runs longer than one
    item, and the set bits of ``firsts`` per row. Bit ``b`` of ``follows`` says whether item ``b + 1``
    starts a run (the heads shifted down one bit, and for bit 31 the word's last item against the next
    word's first: two loads per word) or item ``b`` is the input's last (or past it: ``valid`` drops
    those); a long run's first item is a head not followed by one, its last item is not a head and
    followed by one."""
    word_last = tl.load(x_ptr + word_first + 31, mask=word_first + 31 < rem)
    next_first = tl.load(x_ptr + word_first + 32, mask=word_first + 32 < n_after)
    cross = flag_inequality(word_last, next_first).to(tl.uint32)
    ones = tl.full([], 0xFFFFFFFF, tl.uint32)   # (`^ ones`, not `~`: the interpreter's `~` fails on uint32)
    no_next = tl.minimum(tl.maximum(n_after - word_first - 1, 0), 32).to(tl.int32)   # (bits at and past it)
    past_end = tl.where(no_next >= 32, 0, ones << tl.minimum(no_next, 31).to(tl.uint32))
    in_range = tl.minimum(tl.maximum(rem - word_first, 0), 32).to(tl.int32)
    valid = tl.where(in_range >= 32, ones, (ones << tl.minimum(in_range, 31).to(tl.uint32)) ^ ones)
    follows = (heads >> 1) | (cross << 31) | past_end
    lasts = valid & (heads ^ ones) & follows
    firsts = heads & (follows ^ ones)
    return firsts, tl.sum(popcount32(firsts).to(tl.int32), 1), lasts


@triton.jit
def tile_selection(x_ptr, flags_ptr, idx, inb, n, MODE: tl.constexpr, PRED: tl.constexpr,
                   PRED2: tl.constexpr, LOAD_X: tl.constexpr):
    """(selected, second category, head flags, items) of one tile of global indices ``idx``."""
    if LOAD_X:
        x = tl.load(x_ptr + idx, mask=inb)
    else:
        x = tl.zeros(idx.shape, tl.int32)
    sel2 = inb & False
    heads = inb & False
    if MODE == SELECT_FLAGGED:
        f = tl.load(flags_ptr + idx, mask=inb, other=0)
        sel = inb & (f != 0)
    elif MODE == SELECT_IF:
        # (a predicate's result counts as C++'s conversion to bool does: nonzero selects; an integer
        # tile used as it is would select by its bits)
        sel = inb & (PRED(x) != 0)
    elif MODE == SELECT_THREE_WAY:
        p1 = PRED(x) != 0
        sel = inb & p1
        sel2 = inb & (~p1) & (PRED2(x) != 0)
    elif MODE == SELECT_HEADS:
        heads = tile_heads(x_ptr, idx, inb, x)
        sel = heads
    else:  # SELECT_NONTRIVIAL
        heads = tile_heads(x_ptr, idx, inb, x)
        nxt = tl.load(x_ptr + idx + 1, mask=inb & (idx + 1 < n))
        sel = heads & (idx + 1 < n) & ~flag_inequality(x, nxt)   # (bfloat16 as the heads compare it)
    return sel, sel2, heads, x


@triton.jit
def _scan_tile_counts(counts_ptr, offsets_ptr, total_ptr, num_tiles, BLOCK: tl.constexpr):
    """Exclusive scan of the tile counts into int64 tile offsets, and their total (run by one
    program; the counts are read ``volatile`` because other programs wrote them)."""
    running = tl.full([], 0, tl.int64)
    start = 0
    while start < num_tiles:
        idx = start + tl.arange(0, BLOCK)
        m = idx < num_tiles
        c = tl.load(counts_ptr + idx, mask=m, other=0, volatile=True).to(tl.int64)
        inc = tl.cumsum(c, 0)
        tl.store(offsets_ptr + idx, running + inc - c, mask=m)
        running += tl.sum(c, 0)
        start += BLOCK
    tl.store(total_ptr, running)


@triton.jit
def _count_kernel(x_ptr, flags_ptr, counts_ptr, counts2_ptr, offsets_ptr, offsets2_ptr, totals_ptr, n,
                  num_tiles, tiles_per_program, MODE: tl.constexpr, PRED: tl.constexpr, PRED2: tl.constexpr,
                  LOAD_X: tl.constexpr, TILE: tl.constexpr, SCAN_BLOCK: tl.constexpr):
    """Pass 1: the selected items of every tile (``tiles_per_program`` consecutive tiles per
    program); the last program to finish (a ticket taken with an acquire-release atomic after the
    counts are stored: one per program, so the ticket counter is not a serial bottleneck) scans the
    counts into tile offsets and the total — one launch, no waiting on other programs.
    ``totals = [total, total2, ticket]``."""
    pid = tl.program_id(0)
    j = 0
    while j < tiles_per_program:   # (a while loop: the interpreter takes no runtime range() bound)
        tile = pid * tiles_per_program + j
        j += 1
        if tile < num_tiles:
            idx = tile.to(tl.int64) * TILE + tl.arange(0, TILE)
            inb = idx < n
            sel, sel2, heads, x = tile_selection(x_ptr, flags_ptr, idx, inb, n, MODE, PRED, PRED2, LOAD_X)
            tl.store(counts_ptr + tile, tl.sum(sel.to(tl.int32), 0))
            if MODE == SELECT_THREE_WAY:
                tl.store(counts2_ptr + tile, tl.sum(sel2.to(tl.int32), 0))
    tl.debug_barrier()  # every thread's count store before the ticket
    ticket = tl.atomic_add(totals_ptr + 2, 1, sem="acq_rel")
    if ticket == tl.num_programs(0) - 1:
        _scan_tile_counts(counts_ptr, offsets_ptr, totals_ptr, num_tiles, SCAN_BLOCK)
        if MODE == SELECT_THREE_WAY:
            _scan_tile_counts(counts2_ptr, offsets2_ptr, totals_ptr + 1, num_tiles, SCAN_BLOCK)


@triton.jit
def _finish_lengths_kernel(lengths_ptr, starts_ptr, total_ptr, n, BLOCK: tl.constexpr, FROM_STARTS: tl.constexpr):
    """``lengths[r] = end[r] - start[r]`` for the ``*total_ptr`` runs (pass 2 stored each run's end
    in ``lengths``; with ``FROM_STARTS`` — runs of heads mode, which tile the input — run ``r`` ends
    where run ``r + 1`` starts, the last one at ``n``, and pass 2 wrote no ends); programs past the
    runs exit at once. Programs stride over the runs (a grid sized for the worst case would be mostly
    programs with nothing to do: the number of runs is known on the device only)."""
    total = tl.load(total_ptr)
    r0 = tl.program_id(0).to(tl.int64) * BLOCK
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    while r0 < total:
        r = r0 + tl.arange(0, BLOCK)
        m = r < total
        if FROM_STARTS:
            end = tl.load(starts_ptr + r + 1, mask=r + 1 < total).to(tl.int64)
            end = tl.where(r + 1 < total, end, n)
        else:
            end = tl.load(lengths_ptr + r, mask=m).to(tl.int64)
        start = tl.load(starts_ptr + r, mask=m).to(tl.int64)
        tl.store(lengths_ptr + r, end - start, mask=m)
        r0 += step


@triton.jit
def _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                      out_inv_ptr, idx, inb, sel, s32, x, before, LOAD_X: tl.constexpr,
                      WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr,
                      NDIM: tl.constexpr, ADD_BASE: tl.constexpr, WRITE_INVERSE: tl.constexpr):
    """Write what the compaction produces for the selected items at ``before`` (their output
    positions): the items, the carried values, the indices (plus ``*index_base_ptr`` with
    ``ADD_BASE``, or coordinates when ``NDIM > 1``); ``WRITE_INVERSE`` writes every item's
    ``before + selected - 1``."""
    if WRITE_KEYS:
        if not LOAD_X:
            x = tl.load(x_ptr + idx, mask=sel)
        tl.store(out_ptr + before, x, mask=sel)
    if WITH_VALUES:
        v = tl.load(vals_ptr + idx, mask=sel)
        tl.store(out_vals_ptr + before, v, mask=sel)
    if WRITE_INDEX:
        if NDIM == 1:
            if ADD_BASE:
                tl.store(out_idx_ptr + before, idx + tl.load(index_base_ptr), mask=sel)
            else:
                tl.store(out_idx_ptr + before, idx, mask=sel)
        else:
            rest = idx
            for d in tl.static_range(NDIM - 1, -1, -1):
                size_d = tl.load(shape_ptr + d)
                tl.store(out_idx_ptr + before * NDIM + d, rest % size_d, mask=sel)
                rest = rest // size_d
    if WRITE_INVERSE:
        tl.store(out_inv_ptr + idx, before + s32 - 1, mask=inb)


@triton.jit
def _store_partitioned(vals_ptr, out_ptr, out_vals_ptr, idx, inb, x, dest, WITH_VALUES: tl.constexpr):
    """Partition: every item ``x`` of the tile (and its carried value) to its position ``dest``."""
    tl.store(out_ptr + dest, x, mask=inb)
    if WITH_VALUES:
        v = tl.load(vals_ptr + idx, mask=inb)
        tl.store(out_vals_ptr + dest, v, mask=inb)


@triton.jit
def _compact_kernel(x_ptr, flags_ptr, vals_ptr, offsets_ptr, offsets2_ptr, totals_ptr, shape_ptr,
                    index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, out_len_ptr, out_inv_ptr, n,
                    MODE: tl.constexpr, PRED: tl.constexpr, PRED2: tl.constexpr, LOAD_X: tl.constexpr,
                    WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr,
                    NDIM: tl.constexpr, ADD_BASE: tl.constexpr, WRITE_ENDS: tl.constexpr,
                    WRITE_INVERSE: tl.constexpr, PARTITION: tl.constexpr, TILE: tl.constexpr):
    """Pass 2: every selected item goes to ``tile offset + exclusive in-tile count``.

    ``PARTITION``: rejected items follow the selected ones, in input order (position ``total +
    rejected before it``); three-way partition writes category 2 after category 1, then the rest.
    ``WRITE_INDEX``: the item's index (``NDIM > 1``: its coordinates, row-major, ``[k, NDIM]``).
    ``WRITE_ENDS`` (heads / non-trivial runs): the last item of each selected run writes
    ``index + 1`` to its run's slot of ``out_len`` (:func:`_finish_lengths_kernel` subtracts the
    starts). ``WRITE_INVERSE``: every item's run number (inclusive selected count - 1)."""
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    inb = idx < n
    sel, sel2, heads, x = tile_selection(x_ptr, flags_ptr, idx, inb, n, MODE, PRED, PRED2, LOAD_X)
    s32 = sel.to(tl.int32)
    inc = tl.cumsum(s32, 0)
    before = tl.load(offsets_ptr + pid) + (inc - s32).to(tl.int64)   # selected items before i
    if PARTITION:
        if not LOAD_X:
            x = tl.load(x_ptr + idx, mask=inb)
        total = tl.load(totals_ptr)
        if MODE == SELECT_THREE_WAY:
            t32 = sel2.to(tl.int32)
            before2 = tl.load(offsets2_ptr + pid) + (tl.cumsum(t32, 0) - t32).to(tl.int64)
            total2 = tl.load(totals_ptr + 1)
            dest = tl.where(sel, before, tl.where(sel2, total + before2, total + total2 + idx - before - before2))
        else:
            dest = tl.where(sel, before, total + idx - before)
        _store_partitioned(vals_ptr, out_ptr, out_vals_ptr, idx, inb, x, dest, WITH_VALUES)
    else:
        _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                          out_inv_ptr, idx, inb, sel, s32, x, before, LOAD_X, WRITE_KEYS, WITH_VALUES,
                          WRITE_INDEX, NDIM, ADD_BASE, WRITE_INVERSE)
        if WRITE_ENDS:
            nxt = tl.load(x_ptr + idx + 1, mask=inb & (idx + 1 < n))
            tails = inb & ((idx == n - 1) | flag_inequality(x, nxt))
            if MODE == SELECT_NONTRIVIAL:
                tails = tails & ~heads
            tl.store(out_len_ptr + (before + s32 - 1), idx + 1, mask=tails)


#: bit counts by the GPU's own instructions (popc, clz) where kernels are compiled for NVIDIA GPUs;
#: the interpreter and other targets take the portable forms (shifts and masks)
_HW_BITS = tl.constexpr(not interpreter_active() and torch.version.hip is None)


@triton.jit
def popcount32(w):
    """Set bits of each uint32 ``w`` (uint32)."""
    if _HW_BITS:
        count = libdevice.popc(w.to(tl.int32, bitcast=True)).to(tl.uint32)
    else:   # (SWAR)
        w = w - ((w >> 1) & 0x55555555)
        w = (w & 0x33333333) + ((w >> 2) & 0x33333333)
        w = (w + (w >> 4)) & 0x0F0F0F0F
        count = (w * 0x01010101) >> 24
    return count


@triton.jit
def highest_set_bit(words):
    """The index of the highest set bit of each uint32 word, -1 for a zero word (int32)."""
    if _HW_BITS:
        index = 31 - libdevice.clz(words.to(tl.int32, bitcast=True))
    else:   # (the bits below the highest smeared in, then counted)
        words = words | (words >> 1)
        words = words | (words >> 2)
        words = words | (words >> 4)
        words = words | (words >> 8)
        words = words | (words >> 16)
        index = popcount32(words).to(tl.int32) - 1
    return index


@triton.jit
def lowest_set_bit(words):
    """``(lowest set bit, its index)`` of each uint32 word (``words & -words``; the index of a zero
    word is 32)."""
    one = tl.full([], 1, tl.uint32)
    low = words & ((tl.full([], 0xFFFFFFFF, tl.uint32) - words) + one)
    return low, popcount32(low - one).to(tl.int32)


@triton.jit
def _count_bits_kernel(x_ptr, flags_ptr, bits_ptr, counts_ptr, status_ptr, first_items_ptr, n, num_tiles,
                       MODE: tl.constexpr, PRED: tl.constexpr, LOAD_X: tl.constexpr, TILE: tl.constexpr,
                       TILES: tl.constexpr, ZERO_STATUS: tl.constexpr = 0, PDL: tl.constexpr = 0,
                       HEADS_SHIFT: tl.constexpr = 0, WORD_KEYS: tl.constexpr = 0):
    """Pass 1 of the bitmask compaction: ``TILES`` consecutive tiles per program, held at once as a
    ``[TILES, TILE / 32, 32]`` block (all loads in flight together). Each item's selection becomes
    one bit of a uint32 word (bit ``i % 32`` of word ``i // 32``, stored to ``bits``) and each tile's
    count goes to ``counts`` (:func:`_scan_counts_kernel` turns them into offsets: no program here
    waits on another, or on a fence). Program 0 zeroes the scan's ``ZERO_STATUS`` status words.
    ``PDL``: the first kernel of a launch chain (:mod:`tritoncub.agent.launch_chain`).
    ``HEADS_SHIFT`` (run heads and non-trivial runs of 32- and 64-bit items; the policy's value): 1 takes each
    item's predecessor from registers (:func:`word_tile_heads`), 0 from a second load shifted by one item
    (non-trivial runs take the next item's difference from the head words either way).
    Non-trivial runs (``MODE == SELECT_NONTRIVIAL``): the bits select each such run's first item, and a
    second bitmask (``num_tiles * TILE / 32`` words after the first) marks each such run's last item.
    ``WORD_KEYS`` (run heads of 32- or 64-bit items with ``HEADS_SHIFT``; ignored otherwise; plans ask
    for it for 32-bit items only, the case measured to gain): each word's first head item is also
    stored, one per word, to ``first_items`` (whatever for a word without a head), so that the scatter
    reads those items with the words, in order, instead of gathering them from ``x`` after them."""
    chain_link(PDL)
    WORDS: tl.constexpr = TILE // 32
    pid = tl.program_id(0)
    if ZERO_STATUS > 0:
        if pid == 0:
            tl.store(status_ptr + tl.arange(0, ZERO_STATUS), tl.zeros([ZERO_STATUS], tl.int64))
    t = pid * TILES + tl.arange(0, TILES)
    w = tl.arange(0, WORDS)
    b = tl.arange(0, 32)
    # offsets relative to the program's first item (int32: fewer registers per item)
    base = pid.to(tl.int64) * (TILES * TILE)
    rem = tl.minimum(n - base, TILES * TILE).to(tl.int32)
    word = (t - pid * TILES)[:, None] * WORDS + w[None, :]                  # [TILES, WORDS]
    loc = word[:, :, None] * 32 + b[None, None, :]                          # [TILES, WORDS, 32]
    inb = loc < rem
    RUNS: tl.constexpr = MODE == SELECT_HEADS or MODE == SELECT_NONTRIVIAL
    if RUNS and HEADS_SHIFT and (x_ptr.dtype.element_ty.primitive_bitwidth == 32
                                 or x_ptr.dtype.element_ty.primitive_bitwidth == 64):
        words, tile_counts, ends = word_tile_heads(x_ptr + base, loc, rem, base > 0, n - base,
                                                   MODE == SELECT_NONTRIVIAL)
        if WORD_KEYS and MODE == SELECT_HEADS:
            # (read again at the first head: an L1 hit, the tile was just read; selecting it from the
            # registers, a gather across the word's lanes, measured slower)
            _, first_bit = lowest_set_bit(words)
            first_item = tl.load(x_ptr + base + word * 32 + first_bit, mask=words != 0)
            tl.store(first_items_ptr + base // 32 + word, first_item, mask=(t < num_tiles)[:, None])
    elif RUNS:   # (tile_heads with program-relative offsets)
        x = tl.load(x_ptr + base + loc, mask=inb)
        prev = tl.load(x_ptr + base + loc - 1, mask=inb & ((loc > 0) | (base > 0)))
        heads = inb & (((loc == 0) & (base == 0)) | flag_inequality(prev, x))
        words = tl.sum(heads.to(tl.uint32) << b[None, None, :].to(tl.uint32), 2)
        if MODE == SELECT_NONTRIVIAL:   # (the next item may lie in the next program's tiles)
            words, tile_counts, ends = nontrivial_run_words(x_ptr + base, words, word * 32, rem, n - base)
        else:
            tile_counts = tl.sum(tl.sum(heads.to(tl.int32), 2), 1)
    else:
        sel, sel2, heads, x = tile_selection(x_ptr + base, flags_ptr + base, loc, inb, rem, MODE, PRED, PRED, LOAD_X)
        words = tl.sum(sel.to(tl.uint32) << b[None, None, :].to(tl.uint32), 2)   # distinct bits: the sum is an OR
        tile_counts = tl.sum(tl.sum(sel.to(tl.int32), 2), 1)
    if MODE == SELECT_NONTRIVIAL:
        tl.store(bits_ptr + num_tiles * WORDS + base // 32 + word, ends.to(tl.int32, bitcast=True),
                 mask=(t < num_tiles)[:, None])
    live = t < num_tiles
    tl.store(bits_ptr + base // 32 + word, words.to(tl.int32, bitcast=True), mask=live[:, None])
    tl.store(counts_ptr + t, tile_counts, mask=live)


@triton.jit
def _max_before(inc_a, before_a, inc_b, before_b):
    # segments summarised as (max of all, max of all but the last item): a scan of (v, -1) gives, at
    # every position, the maximum strictly before it
    return tl.maximum(inc_a, inc_b), tl.maximum(inc_a, before_b)


@triton.jit
def exclusive_max(v, axis: tl.constexpr):
    """The maximum of ``v`` strictly before each position along ``axis`` (-1 at the first)."""
    _, before = tl.associative_scan((v, tl.full(v.shape, -1, v.dtype)), axis, _max_before)
    return before


@triton.jit
def _scan_counts_kernel(counts_ptr, offsets_ptr, totals_ptr, host_ptr, prev_ptr, status_ptr, num_tiles,
                        BLOCK: tl.constexpr, TO_HOST: tl.constexpr, PREV: tl.constexpr = False,
                        PUBLISH: tl.constexpr = 0, PDL: tl.constexpr = 0):
    """Exclusive scan of the tile counts into int64 tile offsets, a program per BLOCK tiles; the last
    program writes the total to ``totals[0]`` (and ``TO_HOST``: to the host's mailbox ``host_ptr``).
    ``PREV``: also the last tile before each tile that selected anything (-1: none; int32) into
    ``prev_ptr`` (run lengths taken in the scatter, see :func:`_scatter_bits_kernel`).

    The counts before a program's block: ``PUBLISH`` 0: the program sums them itself (BLOCK at a
    time); ``PUBLISH`` P (a power of two, at least the number of programs): each program publishes
    its block's sum (and last tile with a count) in ``status_ptr`` (``4 P`` int64 words, zero before
    the launch: a flag bit with the value in one word) and adds up the words of the programs before
    it once they are all published. Programs take their blocks in the order they start (a ticket,
    word ``2 P``), so every block a program waits for belongs to a program already running.
    ``PDL``: a kernel of a launch chain, after the count pass."""
    chain_link(PDL)
    if PUBLISH:
        b = tl.atomic_add(status_ptr + 2 * PUBLISH, 1, sem="relaxed")
    else:
        b = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    start = b.to(tl.int64) * BLOCK
    m = start + lane < num_tiles
    c = tl.load(counts_ptr + start + lane, mask=m, other=0).to(tl.int64)
    here = tl.where(c > 0, (start + lane).to(tl.int32), -1)
    if PUBLISH:
        FLAG: tl.constexpr = 1 << 62
        # (one atomic 64-bit word each: its flag and value are seen together)
        tl.atomic_xchg(status_ptr + b, tl.sum(c, 0) | FLAG, sem="relaxed")
        if PREV:
            tl.atomic_xchg(status_ptr + PUBLISH + b, (tl.max(here, 0) + 1).to(tl.int64) | FLAG, sem="relaxed")
        j = tl.arange(0, PUBLISH)
        before = j < b
        words = tl.load(status_ptr + j, mask=before, other=FLAG, volatile=True)
        while tl.min(words & FLAG, 0) == 0:
            words = tl.load(status_ptr + j, mask=before, other=FLAG, volatile=True)
        prefix = tl.sum(words & (FLAG - 1), 0)
        if PREV:
            lasts = tl.load(status_ptr + PUBLISH + j, mask=before, other=FLAG, volatile=True)
            while tl.min(lasts & FLAG, 0) == 0:
                lasts = tl.load(status_ptr + PUBLISH + j, mask=before, other=FLAG, volatile=True)
            prev_before = (tl.max(lasts & (FLAG - 1), 0) - 1).to(tl.int32)
    else:
        acc = tl.zeros([BLOCK], tl.int64)
        acc_prev = tl.full([BLOCK], -1, tl.int32)
        jj = start * 0
        while jj < start:
            cj = tl.load(counts_ptr + jj + lane)
            acc += cj.to(tl.int64)
            if PREV:
                acc_prev = tl.maximum(acc_prev, tl.where(cj > 0, (jj + lane).to(tl.int32), -1))
            jj += BLOCK
        prefix = tl.sum(acc, 0)
        prev_before = tl.max(acc_prev, 0)
    tl.store(offsets_ptr + start + lane, prefix + tl.cumsum(c, 0) - c, mask=m)
    if PREV:
        tl.store(prev_ptr + start + lane, tl.maximum(exclusive_max(here, 0), prev_before), mask=m)
    if b == tl.num_programs(0) - 1:
        tl.store(totals_ptr, prefix + tl.sum(c, 0))
        if TO_HOST:
            tl.store(host_ptr, prefix + tl.sum(c, 0))


@triton.jit
def _scatter_bits_kernel(bits_ptr, x_ptr, vals_ptr, offsets_ptr, totals_ptr, shape_ptr, index_base_ptr, out_ptr,
                         out_vals_ptr, out_idx_ptr, out_inv_ptr, prev_ptr, out_len_ptr, first_items_ptr, n,
                         WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr,
                         NDIM: tl.constexpr, ADD_BASE: tl.constexpr, WRITE_INVERSE: tl.constexpr,
                         PARTITION: tl.constexpr, TILE: tl.constexpr, SPARSE_DIV: tl.constexpr,
                         GROUP: tl.constexpr = 1, WRITE_LENGTHS: tl.constexpr = False, PDL: tl.constexpr = 0,
                         WRITE_ENDS: tl.constexpr = False, WORD_KEYS: tl.constexpr = 0):
    """Pass 2 of the bitmask compaction: a tile's selection comes from its ``TILE / 32`` words
    (nothing that decided it is read again); an item's output position is the tile offset, plus the
    set bits of the earlier words (a scan of the words' popcounts), plus the set bits below it in
    its word. Selected items (and carried values) are loaded only where selected (``PARTITION``:
    every item; rejected items follow the selected ones in input order).

    A sparse tile (at most ``TILE / SPARSE_DIV`` selected; not with ``PARTITION`` or
    ``WRITE_INVERSE``, which write every item) works on its words instead of its items: round ``k``
    writes the lowest remaining set bit of every word, whose rank in its word is ``k``, and clears
    it, for as many rounds as the fullest word has bits.

    ``GROUP`` consecutive tiles per program: when all of them are sparse their words are held at once as
    a ``[GROUP, TILE / 32]`` block and go through the rounds together (a sparse tile's work is a few
    dependent memory round trips; a group keeps ``GROUP`` times more of them in flight per program);
    otherwise the program does its tiles one after another (slower on dense inputs: the policy's
    ``heads`` bucket, mostly sparse selections, groups; the others do not).

    ``WRITE_LENGTHS`` (run heads, which tile the input): the length of every run, into
    ``out_len_ptr``: a head at ``i`` in slot ``r`` ends run ``r - 1``, which started at the head before
    it (the highest set bit before ``i``: in an earlier round of its word, an earlier word of its tile,
    or the words of tile ``prev_ptr[tile]``, the last earlier tile with a head), and the last head's run
    ends at ``n``.

    ``WRITE_ENDS`` (non-trivial runs: the bits select each run's first item, a second bitmask after them
    marks its last): each run's end (its last item's index + 1) into its slot of ``out_len_ptr``
    (:func:`_scatter_run_ends`; the lengths kernel then subtracts the starts).

    ``WORD_KEYS`` (run heads written with their items, the count pass having stored each word's first
    head item): a sparse tile's first round takes its items from ``first_items``, loaded with the words
    (in every tile, dense ones too: loaded after the words it would add their latency).

    ``PDL``: a kernel of a launch chain, after the count scan (or whatever the caller queued since)."""
    chain_link(PDL)
    WORDS: tl.constexpr = TILE // 32
    pid = tl.program_id(0)
    if GROUP == 1 or PARTITION or WRITE_INVERSE:
        for t in range(GROUP):
            _scatter_bits_tile(pid.to(tl.int64) * GROUP + t, bits_ptr, x_ptr, vals_ptr, offsets_ptr, totals_ptr,
                               shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, out_inv_ptr, prev_ptr,
                               out_len_ptr, first_items_ptr, n, WRITE_KEYS, WITH_VALUES, WRITE_INDEX, NDIM, ADD_BASE,
                               WRITE_INVERSE, PARTITION, TILE, SPARSE_DIV, GROUP > 1, WRITE_LENGTHS, WRITE_ENDS,
                               WORD_KEYS)
    else:
        w = tl.arange(0, WORDS)
        tile = pid.to(tl.int64) * GROUP + tl.arange(0, GROUP)
        live = tile * TILE < n
        words = tl.load(bits_ptr + tile[:, None] * WORDS + w[None, :], mask=live[:, None],
                        other=0).to(tl.uint32, bitcast=True)
        first_items = words   # (unused without WORD_KEYS)
        if WORD_KEYS and WRITE_KEYS:
            first_items = tl.load(first_items_ptr + tile[:, None] * WORDS + w[None, :], mask=live[:, None])
        wc = popcount32(words).to(tl.int32)
        wex = tl.cumsum(wc, 1) - wc
        if SPARSE_DIV == 0:
            sparse = True
        else:
            sparse = tl.max(tl.sum(wc, 1), 0) <= TILE // SPARSE_DIV
        if sparse:
            offset = tl.load(offsets_ptr + tile, mask=live, other=0)[:, None]
            base = tile[:, None] * TILE + w[None, :] * 32
            prev = _heads_before_words(words, base, bits_ptr, prev_ptr, tile, live, 1, WRITE_LENGTHS)
            _scatter_word_rounds(words, tl.max(tl.max(wc, 1), 0), wex, base, offset, prev, x_ptr, vals_ptr,
                                 shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr,
                                 n, WRITE_KEYS, WITH_VALUES, WRITE_INDEX, NDIM, ADD_BASE, WRITE_LENGTHS,
                                 first_items, WORD_KEYS and WRITE_KEYS)
            if WRITE_ENDS:
                ends = tl.load(bits_ptr + tl.cdiv(n, TILE) * WORDS + tile[:, None] * WORDS + w[None, :],
                               mask=live[:, None], other=0).to(tl.uint32, bitcast=True)
                _scatter_run_ends(ends, words, wex, base, offset, out_len_ptr)
        else:
            for t in range(GROUP):
                _scatter_bits_tile(pid.to(tl.int64) * GROUP + t, bits_ptr, x_ptr, vals_ptr, offsets_ptr,
                                   totals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                                   out_inv_ptr, prev_ptr, out_len_ptr, first_items_ptr, n, WRITE_KEYS, WITH_VALUES,
                                   WRITE_INDEX, NDIM, ADD_BASE, WRITE_INVERSE, PARTITION, TILE, SPARSE_DIV, True,
                                   WRITE_LENGTHS, WRITE_ENDS, WORD_KEYS)


@triton.jit
def _scatter_bits_tile(tile, bits_ptr, x_ptr, vals_ptr, offsets_ptr, totals_ptr, shape_ptr, index_base_ptr, out_ptr,
                       out_vals_ptr, out_idx_ptr, out_inv_ptr, prev_ptr, out_len_ptr, first_items_ptr, n,
                       WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr,
                       NDIM: tl.constexpr, ADD_BASE: tl.constexpr, WRITE_INVERSE: tl.constexpr,
                       PARTITION: tl.constexpr, TILE: tl.constexpr, SPARSE_DIV: tl.constexpr, GUARD: tl.constexpr,
                       WRITE_LENGTHS: tl.constexpr, WRITE_ENDS: tl.constexpr = False, WORD_KEYS: tl.constexpr = 0):
    """One tile of :func:`_scatter_bits_kernel` (``GUARD``: it may lie past the last tile)."""
    WORDS: tl.constexpr = TILE // 32
    if (not GUARD) or tile * TILE < n:
        w = tl.arange(0, WORDS)
        b = tl.arange(0, 32).to(tl.uint32)
        words = tl.load(bits_ptr + tile * WORDS + w).to(tl.uint32, bitcast=True)
        first_items = words   # (unused without WORD_KEYS)
        if WORD_KEYS and WRITE_KEYS and (not PARTITION) and (not WRITE_INVERSE):
            first_items = tl.load(first_items_ptr + tile * WORDS + w)
        wc = popcount32(words).to(tl.int32)
        wex = tl.cumsum(wc, 0) - wc
        offset = tl.load(offsets_ptr + tile)
        if SPARSE_DIV == 0:
            sparse = True
        else:
            sparse = tl.sum(wc, 0) <= TILE // SPARSE_DIV
        if (not PARTITION) and (not WRITE_INVERSE) and sparse:
            base = tile * TILE + w * 32
            prev = _heads_before_words(words, base, bits_ptr, prev_ptr, tile, True, 0, WRITE_LENGTHS)
            _scatter_word_rounds(words, tl.max(wc, 0), wex, base, offset, prev, x_ptr, vals_ptr, shape_ptr,
                                 index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr, n,
                                 WRITE_KEYS, WITH_VALUES, WRITE_INDEX, NDIM, ADD_BASE, WRITE_LENGTHS,
                                 first_items, WORD_KEYS and WRITE_KEYS)
            if WRITE_ENDS:
                ends = tl.load(bits_ptr + tl.cdiv(n, TILE) * WORDS + tile * WORDS + w).to(tl.uint32, bitcast=True)
                _scatter_run_ends(ends, words, wex, base, offset, out_len_ptr)
        else:
            # item by item (the compaction kernel's tile scan): the words spread to the items
            lane = tl.arange(0, TILE)
            sel = tl.reshape(((words[:, None] >> b[None, :]) & 1) != 0, [TILE])    # (bits past n are 0)
            idx = tile * TILE + lane
            inb = idx < n
            s32 = sel.to(tl.int32)
            before = offset + (tl.cumsum(s32, 0) - s32).to(tl.int64)
            if PARTITION:
                x = tl.load(x_ptr + idx, mask=inb)
                dest = tl.where(sel, before, tl.load(totals_ptr) + idx - before)
                _store_partitioned(vals_ptr, out_ptr, out_vals_ptr, idx, inb, x, dest, WITH_VALUES)
            else:
                _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                                  out_inv_ptr, idx, inb, sel, s32, idx, before, False, WRITE_KEYS, WITH_VALUES,
                                  WRITE_INDEX, NDIM, ADD_BASE, WRITE_INVERSE)
                if WRITE_LENGTHS:
                    # lengths word by word as in a sparse tile (item-wide int64 positions of the heads
                    # before every item would double the kernel's registers, for every tile)
                    base = tile * TILE + w * 32
                    prev = _heads_before_words(words, base, bits_ptr, prev_ptr, tile, True, 0, True)
                    _scatter_word_rounds(words, tl.max(wc, 0), wex, base, offset, prev, x_ptr, vals_ptr, shape_ptr,
                                         index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr,
                                         n, False, False, False, NDIM, ADD_BASE, True, words, False)
                if WRITE_ENDS:
                    # (a run's last item is not selected: the run's slot is the count of first items
                    # before it, minus one)
                    ends = tl.load(bits_ptr + tl.cdiv(n, TILE) * WORDS + tile * WORDS + w).to(tl.uint32,
                                                                                               bitcast=True)
                    is_end = tl.reshape(((ends[:, None] >> b[None, :]) & 1) != 0, [TILE])
                    tl.store(out_len_ptr + before - 1, idx + 1, mask=is_end)


@triton.jit
def _heads_before_words(words, base, bits_ptr, prev_ptr, tile, live, AXIS: tl.constexpr,
                        WRITE_LENGTHS: tl.constexpr):
    """For each word (first item at ``base``) of a tile (``AXIS`` 0: one tile's words; 1: a
    ``[GROUP, words]`` block of tiles ``tile``), the index of the last head before it: the highest set
    bit of the earlier words, else of the words of tile ``prev_ptr[tile]`` (the last tile before it
    with a head; -1 when there is none). ``base`` unless ``WRITE_LENGTHS``."""
    if WRITE_LENGTHS:
        # (positions in a tile in int32: fewer registers)
        WORDS: tl.constexpr = words.shape[AXIS]
        w = tl.arange(0, WORDS)
        if AXIS == 1:
            w = w[None, :]
        before_rel = exclusive_max(tl.where(words != 0, w * 32 + highest_set_bit(words), -1), AXIS)
        if AXIS == 1:
            pt = tl.load(prev_ptr + tile, mask=live, other=-1)[:, None]
        else:
            pt = tl.load(prev_ptr + tile)
        pw = tl.load(bits_ptr + pt.to(tl.int64) * WORDS + w, mask=pt >= 0, other=0).to(tl.uint32, bitcast=True)
        last_rel = tl.max(tl.where(pw != 0, w * 32 + highest_set_bit(pw), -1), AXIS, keep_dims=AXIS == 1)
        before_tile = tl.where(pt >= 0, pt.to(tl.int64) * (WORDS * 32) + last_rel, -1)
        prev = tl.where(before_rel >= 0, (base - w * 32) + before_rel, before_tile)
    else:
        prev = base
    return prev


@triton.jit
def _scatter_run_ends(ends, starts, wex, base, offset, out_len_ptr):
    """Non-trivial runs, word by word: a set bit of ``ends`` (a run's last item, at ``base`` + its bit)
    writes its index + 1 to the run's slot, ``offset + wex`` plus the set bits of ``starts`` (its word
    of the runs' first items) at or below it, minus one: a run's first item precedes its last, and no
    other run starts between them (the run may have started in an earlier word or tile)."""
    rest = ends
    rounds = tl.max(tl.reshape(popcount32(ends), [ends.numel]), 0)
    k = 0
    while k < rounds:
        low, bit_index = lowest_set_bit(rest)
        at_or_below = starts & (low | (low - 1))
        slot = offset + (wex + popcount32(at_or_below).to(tl.int32) - 1).to(tl.int64)
        tl.store(out_len_ptr + slot, base + bit_index + 1, mask=rest != 0)
        rest = rest ^ low
        k += 1


@triton.jit
def _store_run_lengths(out_len_ptr, totals_ptr, n, idx, prev, slot, sel):
    """Heads at ``idx`` in slots ``slot`` (where ``sel``), the head before each at ``prev``: run
    ``slot - 1`` is ``idx - prev`` long, and the last run (slot ``total - 1``) ends at ``n``."""
    tl.store(out_len_ptr + slot - 1, idx - prev, mask=sel & (slot > 0))
    tl.store(out_len_ptr + slot, n - idx, mask=sel & (slot == tl.load(totals_ptr) - 1))


@triton.jit
def _scatter_word_rounds(words, rounds, wex, base, offset, prev, x_ptr, vals_ptr, shape_ptr, index_base_ptr,
                         out_ptr, out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr, n, WRITE_KEYS: tl.constexpr,
                         WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr, NDIM: tl.constexpr,
                         ADD_BASE: tl.constexpr, WRITE_LENGTHS: tl.constexpr, first_items, FIRST_ITEMS: tl.constexpr):
    """The word-by-word scatter of a tile (or a group of tiles): ``rounds`` (the most set bits of any
    word) rounds of :func:`_scatter_lowest_bits`, word ``w``'s ``k``-th bit going to ``offset + wex + k``
    (``wex``: the set bits of the earlier words); ``prev``: the head before each word (run lengths).
    ``FIRST_ITEMS``: ``first_items`` holds each word's item at its lowest set bit (round 0's items)."""
    rest = words
    k = 0
    if FIRST_ITEMS:
        rest, prev = _scatter_lowest_bits(rest, wex, base, offset, prev, x_ptr, vals_ptr, shape_ptr, index_base_ptr,
                                          out_ptr, out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr, n, WRITE_KEYS,
                                          WITH_VALUES, WRITE_INDEX, NDIM, ADD_BASE, WRITE_LENGTHS, first_items, True)
        k = 1
    while k < rounds:
        rest, prev = _scatter_lowest_bits(rest, wex + k, base, offset, prev, x_ptr, vals_ptr, shape_ptr, index_base_ptr,
                                          out_ptr, out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr, n, WRITE_KEYS,
                                          WITH_VALUES, WRITE_INDEX, NDIM, ADD_BASE, WRITE_LENGTHS, rest, False)
        k += 1


@triton.jit
def _scatter_lowest_bits(rest, rank, base, offset, prev, x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr,
                         out_vals_ptr, out_idx_ptr, totals_ptr, out_len_ptr, n, WRITE_KEYS: tl.constexpr,
                         WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr, NDIM: tl.constexpr,
                         ADD_BASE: tl.constexpr, WRITE_LENGTHS: tl.constexpr, items, HAVE_ITEMS: tl.constexpr):
    """One round of the word-by-word scatter: the item at the lowest set bit of each word ``rest``
    (whose first item is at ``base``) goes to ``offset + rank``; returns the words without those
    bits, and ``prev`` (``WRITE_LENGTHS``: the head before each word's next bit) updated.
    ``HAVE_ITEMS``: ``items`` are those items (else they are read from ``x``)."""
    low, bit_index = lowest_set_bit(rest)
    idx = base + bit_index
    sel = rest != 0
    if HAVE_ITEMS:
        x = items
    else:
        x = idx
    _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, out_idx_ptr,
                      idx, sel, sel, sel.to(tl.int32), x, offset + rank.to(tl.int64), HAVE_ITEMS, WRITE_KEYS,
                      WITH_VALUES, WRITE_INDEX, NDIM, ADD_BASE, False)
    if WRITE_LENGTHS:
        _store_run_lengths(out_len_ptr, totals_ptr, n, idx, prev, offset + rank.to(tl.int64), sel)
        prev = tl.where(sel, idx, prev)
    return rest ^ low, prev


@triton.jit
def _count_add(a, b):
    return a + b


@triton.jit
def _scatter_inputs(x_ptr, flags_ptr, vals_ptr, idx, n, MODE: tl.constexpr, PRED: tl.constexpr,
                    LOAD_X: tl.constexpr, WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr,
                    WRITE_ENDS: tl.constexpr):
    """Everything the scatter of the tile ``idx`` reads: ``(selected, items, values, run tails)``
    (items are loaded when they are written, values when carried, tails for run lengths)."""
    inb = idx < n
    sel, sel2, heads, x = tile_selection(x_ptr, flags_ptr, idx, inb, n, MODE, PRED, PRED, LOAD_X)
    if WRITE_KEYS:
        if not LOAD_X:
            x = tl.load(x_ptr + idx, mask=sel)
    v = x
    if WITH_VALUES:
        v = tl.load(vals_ptr + idx, mask=sel)
    tails = sel
    if WRITE_ENDS:
        nxt = tl.load(x_ptr + idx + 1, mask=inb & (idx + 1 < n))
        tails = inb & ((idx == n - 1) | flag_inequality(x, nxt))
        if MODE == SELECT_NONTRIVIAL:
            tails = tails & ~heads
    return sel, x, v, tails


@triton.jit(do_not_specialize=["plane_stride"])
def _select_single_pass_kernel(
        x_ptr, flags_ptr, vals_ptr, counter_ptr, status_ptr, plane_stride, totals_ptr, shape_ptr, index_base_ptr,
        out_ptr, out_vals_ptr, out_idx_ptr, out_len_ptr, out_inv_ptr, n, num_tiles,
        MODE: tl.constexpr, PRED: tl.constexpr, LOAD_X: tl.constexpr,
        WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr, NDIM: tl.constexpr,
        ADD_BASE: tl.constexpr, WRITE_ENDS: tl.constexpr, WRITE_INVERSE: tl.constexpr,
        COUNT: tl.constexpr, LB_REDUCE: tl.constexpr, PACKED: tl.constexpr, TILE: tl.constexpr,
        LOOKBACK_WINDOW: tl.constexpr):
    """The single-pass compaction (CUB's DeviceSelect): a tile (its index from ``counter``, in start
    order) counts its selected items, publishes the count, obtains the count of selected items
    before it by decoupled look-back (:mod:`tritoncub.agent.lookback`, ``COUNT``-typed: exact), and
    scatters; the last tile writes the total to ``totals[0]``. What the scatter reads (the items
    to write, carried values, the next item for run ends) is loaded before the look-back, so those
    loads are in flight while the tile waits on its predecessors."""
    tile = tile_index(counter_ptr)
    idx = tile.to(tl.int64) * TILE + tl.arange(0, TILE)
    sel, x, v, tails = _scatter_inputs(x_ptr, flags_ptr, vals_ptr, idx, n, MODE, PRED, LOAD_X, WRITE_KEYS,
                                       WITH_VALUES, WRITE_ENDS)
    s32 = sel.to(tl.int32)
    agg = tl.sum(s32, 0).to(COUNT)
    if tile > 0:
        publish(status_ptr, plane_stride, tile, agg, agg, LOOKBACK_AGGREGATE, 1, PACKED)
    excl = tl.cumsum(s32, 0) - s32
    prefix = agg * 0
    if tile > 0:
        prefix, _ = look_back(status_ptr, plane_stride, tile, 0, agg, agg, _count_add, LB_REDUCE, 1,
                              LOOKBACK_WINDOW, False, PACKED)
    publish(status_ptr, plane_stride, tile, prefix + agg, agg, LOOKBACK_INCLUSIVE, 1, PACKED)
    if tile == num_tiles - 1:
        tl.store(totals_ptr, (prefix + agg).to(tl.int64))
    before = prefix.to(tl.int64) + excl.to(tl.int64)
    _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, out_inv_ptr,
                      idx, idx < n, sel, s32, x, before, True, WRITE_KEYS, False, WRITE_INDEX, NDIM, ADD_BASE,
                      WRITE_INVERSE)
    if WITH_VALUES:
        tl.store(out_vals_ptr + before, v, mask=sel)
    if WRITE_ENDS:
        tl.store(out_len_ptr + (before + s32 - 1), idx + 1, mask=tails)


#: where the status words start in the warp-synchronous kernel's state buffer
_STATE_STATUS = gl.constexpr(STATUS_HEADER_WORDS)


@gluon.jit
def _load_tile(ptr, local, full, inb, mask=None):
    """Items ``ptr[local]`` of a tile: unmasked (vector loads) when the tile is ``full``, else only the
    items in bounds; ``mask`` (constant over each thread's vector) narrows the full-tile load."""
    if full:
        if mask is None:
            v = gl.load(ptr + local)
        else:
            v = gl.load(ptr + local, mask=mask)
    else:
        if mask is None:
            v = gl.load(ptr + local, mask=inb)
        else:
            v = gl.load(ptr + local, mask=inb & mask)
    return v


@gluon.jit
def _select_warp_sync_kernel(
        x_ptr, flags_ptr, vals_ptr, state_ptr, index_base_ptr,
        out_ptr, out_vals_ptr, out_idx_ptr, out_len_ptr, out_inv_ptr, n, num_tiles,
        MODE: gl.constexpr, LOAD_X: gl.constexpr, WRITE_KEYS: gl.constexpr, WITH_VALUES: gl.constexpr,
        WRITE_INDEX: gl.constexpr, ADD_BASE: gl.constexpr, WRITE_ENDS: gl.constexpr, WRITE_INVERSE: gl.constexpr,
        INDEX64: gl.constexpr, WARPS: gl.constexpr, ITEMS: gl.constexpr, VEC: gl.constexpr,
        LOOKBACK_WINDOW: gl.constexpr, LOOKBACK_SLEEP: gl.constexpr, ANCHORED: gl.constexpr = False,
        PROBE: gl.constexpr = 0):
    """:func:`_select_single_pass_kernel` with CUB's warp-synchronous tile scan (compiled NVIDIA
    kernels; modes flagged, heads and non-trivial runs, 1-D indices). The tile is *warp-striped* in
    vectors: warp ``w`` holds ``ITEMS // VEC`` register slots of ``32 * VEC`` consecutive items, lane
    ``l`` the ``VEC`` items ``l*VEC ..`` of each slot, so full tiles load with vector loads. Per
    slot, each lane counts its selected items, :func:`~tritoncub.warp.scan.warp_ballot_sum` gives
    the counts of the lower lanes and of the slot (one ballot per bit of the count), slot counts are
    scanned in registers and warp counts across warps; the selected items of a slot land in
    consecutive output slots. The tile count is chained by
    :func:`~tritoncub.agent.lookback.count_look_back`. Positions are int32 unless ``INDEX64``."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    SLOTS: gl.constexpr = ITEMS // VEC
    L4: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1, VEC], [1, 1, 32, 1], [WARPS, 1, 1, 1], [3, 2, 1, 0])
    LS: gl.constexpr = gl.SliceLayout(3, L4)     # one value per (warp, slot, lane)
    status_ptr = state_ptr + _STATE_STATUS   # (word 0: the tile counter, word 8: the total)
    tile = gl.atomic_add(state_ptr, 1, sem="relaxed").to(gl.int32)
    base = tile.to(gl.int64) * TILE
    local, _ = warp_striped_vector_offsets(L4, WARPS, SLOTS, VEC)
    rem = gl.minimum(n - base, TILE).to(gl.int32)
    full = rem == TILE
    inb = local < rem
    # (tile-relative int32 offsets from here on: nothing 64-bit per item stays live across the look-back)
    xb = x_ptr + base
    # what decides selection, and everything the scatter reads, before the look-back
    if LOAD_X:
        x = _load_tile(xb, local, full, inb)
    if MODE == SELECT_FLAGGED:
        f = _load_tile(flags_ptr + base, local, full, inb)
        sel = inb & (f != 0)
    else:
        first = (local == 0) & (tile == 0)
        prev = gl.load(xb + local - 1, mask=inb & ~first)
        heads = inb & (first | (x != prev))
        sel = heads
        if MODE == SELECT_NONTRIVIAL or WRITE_ENDS:
            has_next = local + 1 < gl.minimum(n - base, TILE + 1).to(gl.int32)   # idx + 1 < n
            nxt = gl.load(xb + local + 1, mask=inb & has_next)
            if MODE == SELECT_NONTRIVIAL:
                sel = heads & has_next & (nxt == x)
            tails = inb & (~has_next | (nxt != x))   # the last item of its run
            if MODE == SELECT_NONTRIVIAL:
                tails = tails & ~heads
    s32 = sel.to(gl.int32)
    lane_count = gl.sum(s32, 3)
    if WRITE_KEYS:
        if not LOAD_X:   # only the vectors holding a selected item
            x = _load_tile(xb, local, full, sel, gl.expand_dims(lane_count, 3) != 0)
    if WITH_VALUES:
        v = _load_tile(vals_ptr + base, local, full, sel, gl.expand_dims(lane_count, 3) != 0)
    # the tile scan: within the lane in registers, lanes by ballot, slots in registers, warps
    # through shared memory
    in_lane = gl.associative_scan(s32, 3, _add_gl) - s32
    lower, slot_count = warp_ballot_sum(lane_count, VEC.bit_length())
    # (scans take blocked layouts: LS3 places the values exactly as LS does, the conversion is free)
    LS3: gl.constexpr = gl.BlockedLayout([1, SLOTS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    slot_count = gl.convert_layout(slot_count, LS3)
    slot_excl = gl.convert_layout(gl.associative_scan(slot_count, 1, _add_gl) - slot_count, LS)
    warp_count = gl.sum(slot_count, 1)    # [WARPS, 32], the same in every lane of a warp
    LC: gl.constexpr = gl.BlockedLayout([WARPS, 1], [1, 32], [1, WARPS], [1, 0])
    warp_incl = gl.associative_scan(gl.convert_layout(warp_count, LC), 0, _add_gl)   # in each thread
    agg = gl.max(gl.max(warp_incl, 0), 0)
    warp_excl = gl.convert_layout(gl.convert_layout(warp_incl, gl.SliceLayout(1, LS3)) - warp_count,
                                  gl.SliceLayout(1, LS))
    if ANCHORED:
        inclusive_ptr = status_ptr + num_tiles   # (a second plane: the aggregates stay readable)
    else:
        inclusive_ptr = status_ptr
    if tile == 0 or PROBE == 1:   # (PROBE 1, measurement only: no look-back, wrong positions)
        count_publish(inclusive_ptr, tile, agg, 2)
        prefix = agg.to(gl.int64) * 0
    else:
        count_publish(status_ptr, tile, agg, 1)
        prefix = count_look_back(status_ptr, tile, WARPS, LOOKBACK_WINDOW, LOOKBACK_SLEEP, num_tiles, ANCHORED)
        count_publish(inclusive_ptr, tile, prefix + agg, 2)
    if tile == num_tiles - 1:
        gl.store(state_ptr + 8, prefix + agg)
    if INDEX64:
        start = prefix
    else:
        start = prefix.to(gl.int32)
    lane_before = (start + gl.expand_dims(warp_excl, 1) + slot_excl + lower).to(start.dtype)
    before = gl.expand_dims(lane_before, 3) + in_lane.to(start.dtype)
    if PROBE == 2:   # (measurement only: one store per warp instead of the scatter)
        sel = sel & (local == 0)
    if WRITE_KEYS:
        gl.store(out_ptr + before, x, mask=sel)
    if WITH_VALUES:
        gl.store(out_vals_ptr + before, v, mask=sel)
    if WRITE_INDEX:
        if ADD_BASE:
            gl.store(out_idx_ptr + before, base + gl.load(index_base_ptr) + local, mask=sel)
        else:
            gl.store(out_idx_ptr + before, base + local, mask=sel)
    run = before + sel.to(before.dtype) - 1
    if WRITE_INVERSE:
        gl.store(out_inv_ptr + base + local, run.to(gl.int64), mask=inb)
    if WRITE_ENDS:
        gl.store(out_len_ptr + run, base + 1 + local, mask=tails)


@gluon.jit
def _add_gl(a, b):
    return a + b


_POLICY = policy.register(
    "select",
    space={"TILE": [1024, 2048, 4096, 8192, 16384], "PASSES": [1, 2], "LOOKBACK_WINDOW": [32, 64, 128, 256],
           "WARP_SYNC": [0, 1], "VEC": [1, 4, 16], "LOOKBACK_SLEEP": [0, 1], "ANCHORED": [0, 1],
           "COUNT_TILES": [1, 2, 4, 8], "SCATTER_TILES": [1, 2, 4, 8, 16], "SPARSE_SCATTER_TILES": [1, 2, 4, 8, 16],
           "SCATTER_MAXNREG": [0, 64, 80, 96], "HEADS_SHIFT": [0, 1], "WORD_KEYS": [0, 1],
           "COUNT_MAXNREG": [0, 48, 56, 64],
           "num_warps": [4, 8, 16],
           "num_stages": [1, 2]},
    fallback={"TILE": 4096, "PASSES": 1, "LOOKBACK_WINDOW": 64, "WARP_SYNC": 1, "VEC": 4, "LOOKBACK_SLEEP": 1,
              "ANCHORED": 0, "COUNT_TILES": 2, "SCATTER_TILES": 1, "SPARSE_SCATTER_TILES": 8, "SCATTER_MAXNREG": 0,
              "HEADS_SHIFT": 1, "WORD_KEYS": 0, "COUNT_MAXNREG": 0,
              "num_warps": 4,
              "num_stages": 1},
    valid=lambda v: v["TILE"] * v["COUNT_TILES"] <= 32768,   # (the count pass's items per program)
    buckets=("default", "runs", "two_pass", "heads"),
    bucket_fallbacks={"runs": {"TILE": 2048}, "two_pass": {"PASSES": 2}, "heads": {"PASSES": 2}},
    doc="TILE items per program of the compaction. PASSES 1: single pass with decoupled look-back "
        "(LOOKBACK_WINDOW predecessors read at once; WARP_SYNC 1: on NVIDIA GPUs, the warp-synchronous "
        "kernel, TILE / (32 num_warps) items per thread, for flagged selections and runs; LOOKBACK_SLEEP 1: "
        "its look-back sleeps briefly between reads of an unpublished slot; ANCHORED 1: it reads the window once, "
        "up to the inclusive prefix WINDOW tiles back (two planes of status words); VEC: items per thread loaded as "
        "one vector, at most the items per thread); 2: count pass, then scatter pass (partition and "
        "nonzero always take two passes: they need the total before scattering); flagged, predicate and "
        "run-head selections keep one bit per item between the passes (COUNT_TILES tiles per program of the "
        "count pass; SCATTER_TILES: tiles per program of the scatter pass, whose sparse tiles go through it "
        "together; SPARSE_SCATTER_TILES instead when the host's count, or the last count of the same size and "
        "selection, says the selection is sparse, at most TILE / 8 per tile on average, and 1 when it is denser; "
        "SCATTER_MAXNREG: a register cap per thread of the scatter pass on NVIDIA GPUs, 0 none; HEADS_SHIFT: "
        "how the count pass of run heads and non-trivial runs of 32- and 64-bit items finds each item's "
        "predecessor, 1 from registers, 0 by a second load shifted by one item; WORD_KEYS 1: the count pass "
        "of run heads of 32-bit items (with HEADS_SHIFT 1) also stores each word's first head item, which the scatter "
        "then reads with the words instead of gathering it; COUNT_MAXNREG: a register cap per thread of that "
        "count pass (with WORD_KEYS) on NVIDIA GPUs, 0 none), "
        "so the scatter pass reads nothing that decided selection. Bucket 'two_pass': the callers "
        "that take two passes (nonzero, partition; masked_select, whose count reaches the host after pass 1 "
        "while pass 2 runs; reduce_by_key runs its own tile on the bitmask count), 'heads': run heads in two "
        "passes (run-length encoding, unique_consecutive, sorted unique: mostly sparse selections, where "
        "SCATTER_TILES pays), 'runs': non-trivial runs (PASSES 2: the bitmask form, with a second bitmask of "
        "the runs' last items), 'default': every other selection.")


# ----------------------------------------------------------------------------------------------
# The compaction engine (launchers)
# ----------------------------------------------------------------------------------------------

#: programs per SM of pass 1 (the tile counts)
_COUNT_PROGRAMS_PER_SM = 8
#: the bitmask form's scatter works word by word in tiles with at most TILE / _SPARSE_DIV selected
#: (0: in every tile); a module constant so tests can force either form
_SPARSE_DIV = 8
#: per (size, mode, load_x): whether the last selection whose count reached the host was sparse (at
#: most n / _SPARSE_DIV selected). The bitmask scatter groups its tiles by it when pass 2 is launched
#: before the count is known (see Plan._scatter_two_pass): a guess, which decides speed, never results
_LAST_SPARSE: dict = {}
#: count_to_host plans of at most this many items wait for the count before their outputs are sized
#: (see Plan.host_count_if_ready)
_WAIT_COUNT_MAX = 1 << 22
#: remembered launches of the bitmask form (count and scan; scatter)
_BITS_PLANS: dict = {}
#: programs of the bitmask form's count scan, for up to 8192 * _SCAN_PROGRAMS tiles (beyond that, more)
_SCAN_PROGRAMS = 64
#: tile counts per program of the count scan, at least (a module constant so tests reach several programs)
_SCAN_MIN_BLOCK = 1024
#: the count scan's programs publish their block sums and read each other's (True), or each re-sums
#: the counts before its block (False); a module constant so tests cover both
_SCAN_PUBLISH = True
#: the single pass counts in int32 below this many items (one packed status word per tile), else in
#: int64 (the split status layout); a module constant so tests can force the int64 path
_COUNT32_LIMIT = 1 << 31
#: measurement switch for bench/probes only (see _select_warp_sync_kernel); 0 in any real use
_PROBE = 0
#: the warp-synchronous single pass keeps positions in int32 below this many items
_INDEX32_LIMIT = 1 << 31
#: remembered launches of the warp-synchronous scatter (see Plan._scatter_warp_sync)
_SCATTER_PLANS: dict = {}
#: the syncing selections' bitmask plans, remembered whole (see bitmask_plan): key -> (policy, the
#: plan's fixed state, its buffer's words, its count pass's relocatable launches)
_PLAN_TEMPLATES: dict = {}
#: their scatters (see Plan._scatter_two_pass): key -> relocatable launches, or None (not relocatable:
#: that scatter launches through its LaunchPlan)
_SCATTER_REPLAYS: dict = {}
_NOT_SEEN = object()
#: the single pass's count types and look-back
_TL_COUNT = {torch.int32: tl.int32, torch.int64: tl.int64}
_LB_COUNT = lookback_reduce(_count_add, 1)


class _BitmaskLayout(NamedTuple):
    """The bitmask plan's one buffer (int64 words) and its launch shapes; see :func:`_bitmask_layout`."""
    words: int
    #: int64 words of each part: bits (non-trivial runs: then the run ends' bits), tile counts, scan status
    #: words, tile offsets, totals, the last tile with a head before each tile (run lengths only), each
    #: word's first head item (WORD_KEYS only)
    sizes: tuple
    #: where each part starts (int64 words, each 16-byte aligned)
    starts: tuple
    #: int32 words of bits (one bit per item, whole tiles)
    bit_words: int
    #: tile counts per program of the count scan; its status words (4 per program, 0: none); tiles per
    #: program of pass 1
    block: int
    publish: int
    tiles: int


@functools.lru_cache(maxsize=1024)
def _bitmask_layout(nt: int, tile: int, last: bool, count_tiles: int, scan_publish: bool, scan_programs: int,
                    scan_min_block: int, ends: bool = False, key_bytes: int = 0) -> _BitmaskLayout:
    """Parts and launch shapes of a bitmask plan of ``nt`` tiles (the module switches passed in, so tests
    that change them get their own layouts). ``ends`` (non-trivial runs): a second bitmask, of the runs'
    last items, follows the first in the bits part. ``key_bytes``: the size of an item, when each word's
    first head item is kept (WORD_KEYS), else 0."""
    a, c = (nt + 1) & ~1, ((nt + 1) // 2 + 1) & ~1
    bit_words = nt * (tile // 32)
    # the count scan: a block of tile counts per program, at most scan_programs programs (more past
    # 8192 * scan_programs tiles); publishing, 4 status words per program (2 used, a ticket; a power of two
    # the count pass zeroes), at most 512 programs (each waits for all earlier blocks' words)
    block = min(8192, max(scan_min_block, 1 << (cdiv(nt, scan_programs) - 1).bit_length()))
    publish = 1 << (cdiv(nt, block) - 1).bit_length() if scan_publish and cdiv(nt, block) <= 512 else 0
    sizes = (cdiv(bit_words * (2 if ends else 1), 2), c, 4 * publish, a, 4, c if last else 0,
             cdiv(bit_words * key_bytes, 16) * 2)
    starts, at = [0] * 7, 0
    for i in (3, 4, 2, 1, 5, 0, 6):   # (in memory: offsets, totals, status, counts, last heads, bits, word keys)
        starts[i] = at
        at += sizes[i]
    return _BitmaskLayout(at, sizes, tuple(starts), bit_words, block, publish,
                          min(count_tiles, 1 << (nt - 1).bit_length()))


#: the bitmask plan's parts that callers may read (made into views when first asked for): their
#: places in :class:`_BitmaskLayout`
_BITMASK_VIEWS = {"bits": 0, "offsets": 3, "offsets2": 3, "totals": 4, "prev_heads": 5, "first_items": 6}


def _warp_sync_words(pol, mode, load_x: bool, device, n: int) -> int:
    """Words of the zeroed state of a single-pass plan under ``pol`` in the warp-synchronous form (NVIDIA,
    sm_80+, the selections that kernel implements), 0 where it takes another form: the tile counter
    (word 0), the total (word 8), then the status words from ``STATUS_HEADER_WORDS`` (two planes of them
    when ``ANCHORED``)."""
    if not (pol["WARP_SYNC"] and smem_atomics_ok(device)
            and (mode == SELECT_FLAGGED or (load_x and mode in (SELECT_HEADS, SELECT_NONTRIVIAL)))):
        return 0
    return STATUS_HEADER_WORDS + (2 if pol["ANCHORED"] else 1) * max(1, cdiv(n, pol["TILE"]))


class Plan:
    """One compaction. Two passes (``two_pass=True``, or the policy's ``PASSES == 2``; three-way
    partitions always): pass 1 (per-tile counts — and, in the bitmask form, one bit per item — scanned
    into tile offsets and the device total) runs in the constructor, so :attr:`num_selected` is on the
    device before :meth:`scatter` runs pass 2 with what the caller wants written. Single pass (the default policy): :meth:`scatter` counts, looks back and
    scatters in one launch, and :attr:`num_selected` is valid once it is queued."""

    def __init__(self, x, flags, mode, pred=None, pred2=None, *, load_x=True, pol=None, two_pass=False,
                 count_to_host=False, run_lengths=False, state=None):
        """``count_to_host`` (bitmask form only): pass 1's scan also stores the count in a host
        :class:`~tritoncub._utils.Mailbox`, read by :meth:`host_count` while pass 2 runs.
        ``run_lengths`` (run heads): the caller will ask :meth:`scatter` for run lengths; the bitmask
        form then also keeps the last head before every tile, and the scatter writes the lengths
        itself (no run starts needed, no lengths kernel). ``state``: for the warp-synchronous form, a
        zeroed int64 buffer of :meth:`warp_sync_state_words` words that the caller zeroed with its own
        work (no allocation and fill here); ignored by the other forms."""
        self.x, self.flags, self.mode, self.pred, self.pred2, self.load_x = x, flags, mode, pred, pred2, load_x
        self.n = n = x.numel()
        self.pol = pol or policy.select("select", x.device, "two_pass" if two_pass else "default")
        self.tile = tile = self.pol["TILE"]
        self.num_tiles = nt = max(1, cdiv(n, tile))
        dev = x.device
        three = mode == SELECT_THREE_WAY
        self.warp_sync = self.bitmask = self.has_prev_heads = self.word_keys = False
        self.single_pass = not (two_pass or three or self.pol["PASSES"] == 2)
        if self.single_pass:
            # the warp-synchronous kernel (NVIDIA, sm_80+) for the selections it implements
            words = _warp_sync_words(self.pol, mode, load_x, dev, n)
            self.warp_sync = words > 0
            if self.warp_sync:
                # one zeroed buffer the kernel splits itself (fewer host-side views per call)
                if state is not None:
                    if state.dtype != torch.int64 or state.numel() != words:
                        raise ValueError(f"internal: the warp-synchronous state takes {words} int64 words")
                    self.state = state
                else:
                    self.state = torch.zeros(words, dtype=torch.int64, device=dev)
                return
            # one zeroed buffer: the tile counter, the total (a scratch word of its header), the status words
            count_dtype = torch.int32 if n < _COUNT32_LIMIT else torch.int64
            self.count_dtype = count_dtype
            self.packed = packed_layout([count_dtype], False)
            self.counter, self.status, self.plane_stride = allocate_status(nt, [count_dtype], False, dev)
            self.totals = status_scratch(self.counter)[:2]   # total (the last tile writes it), total2 (unused)
            self.offsets = self.offsets2 = self.totals
            return
        # the bitmask form (one bit per item between the passes) for the selections it implements
        self.bitmask = mode in (SELECT_FLAGGED, SELECT_IF, SELECT_HEADS) or (mode == SELECT_NONTRIVIAL and load_x)
        if self.bitmask:
            last = bool(run_lengths) and mode == SELECT_HEADS
            if count_to_host:   # (the host would wait for a kernel the capture only records)
                refuse_capture(dev, "a selection with its count sent to the host")
            self.mailbox = Mailbox.take(dev) if count_to_host else None
            # one allocation (host time per call matters to the ops that sync), in parts made into views
            # only when asked for (see _bitmask_layout); the launches take the parts' addresses
            # (each word's first head item kept: run heads of 32-bit items found from registers, the only
            # case measured to gain)
            self.word_keys = word_keys = bool(mode == SELECT_HEADS and load_x and self.pol["WORD_KEYS"]
                                              and self.pol["HEADS_SHIFT"] and x.element_size() == 4)
            lay = _bitmask_layout(nt, tile, last, self.pol["COUNT_TILES"], _SCAN_PUBLISH, _SCAN_PROGRAMS,
                                  _SCAN_MIN_BLOCK, mode == SELECT_NONTRIVIAL, x.element_size() if word_keys else 0)
            self._layout = lay
            self._ws = torch.empty(lay.words, dtype=torch.int64, device=dev)
            self.has_prev_heads = last
            if n == 0:
                self.totals.zero_()
                if count_to_host:
                    self.mailbox.set(0)
            else:
                f = flags if flags is not None else x
                # the launches are fixed by the size, the mode and predicate, and the inputs' dtypes and
                # alignments: a repeated call re-launches them without the per-argument bookkeeping
                run = LaunchPlan(_BITS_PLANS, ("count", n, mode, pred, load_x, dev, lay, x.dtype, x.data_ptr() & 15,
                                               f.dtype, f.data_ptr() & 15, count_to_host, chain_memo_key()),
                                 tag=self.pol)
                bits, counts, status, offsets, totals, prevs, first_items_part = self._parts(run)
                status = status if lay.publish else totals
                run(_count_bits_kernel, (cdiv(nt, lay.tiles),), x, f, bits, counts, status,
                    first_items_part if word_keys else bits, n, nt, MODE=mode,
                    PRED=pred or _never, LOAD_X=load_x, TILE=tile, TILES=lay.tiles, ZERO_STATUS=4 * lay.publish,
                    HEADS_SHIFT=self.pol["HEADS_SHIFT"] if mode in (SELECT_HEADS, SELECT_NONTRIVIAL) else 0,
                    WORD_KEYS=int(word_keys),
                    # (the cap pays back the registers of the kept items; 64-bit run heads, whose
                    # register form holds twice the bytes, spill under a cap made for them)
                    **maxnreg_kwargs(self.pol["COUNT_MAXNREG"] if word_keys else 0),
                    num_warps=self.pol.num_warps, num_stages=self.pol.num_stages, **chain_kwargs(dev, False))
                run(_scan_counts_kernel, (cdiv(nt, lay.block),), counts, offsets, totals,
                    self.mailbox.tensor if count_to_host else totals, prevs if last else counts, status, nt,
                    BLOCK=lay.block, TO_HOST=count_to_host, PREV=last, PUBLISH=lay.publish, num_warps=8,
                    **chain_kwargs(dev, True))
                run.done()
            return
        if count_to_host:
            raise ValueError("internal: count_to_host needs the bitmask form")
        self.totals = torch.zeros(3, dtype=torch.int64, device=dev)  # total, total2, ticket
        counts = torch.empty(nt * (2 if three else 1), dtype=torch.int32, device=dev)
        offs = torch.empty(nt * (2 if three else 1), dtype=torch.int64, device=dev)
        self.offsets, self.offsets2 = offs[:nt], offs[nt:] if three else offs[:nt]
        scan_block = min(4096, max(128, 1 << (nt - 1).bit_length()))
        if n > 0:
            # a few programs per SM, each counting a run of tiles (one ticket per program)
            tpp = cdiv(nt, num_sms(dev) * _COUNT_PROGRAMS_PER_SM) if dev.type == "cuda" else 2
            launch(_count_kernel, (cdiv(nt, tpp),), x, flags if flags is not None else x, counts,
                   counts[nt:] if three else counts, self.offsets, self.offsets2, self.totals, n, nt, tpp,
                   MODE=mode, PRED=pred or _never, PRED2=pred2 or _never, LOAD_X=load_x,
                   TILE=tile, SCAN_BLOCK=scan_block, num_warps=self.pol.num_warps, num_stages=self.pol.num_stages)

    @staticmethod
    def warp_sync_state_words(n: int, mode, device, load_x: bool = True) -> int:
        """The int64 words of the zeroed state a single-pass plan of ``n`` items would take in the
        warp-synchronous form (``state=`` of the constructor); 0 where it takes another form."""
        pol = policy.select("select", device, "default")
        return 0 if pol["PASSES"] == 2 else _warp_sync_words(pol, mode, load_x, device, n)

    def __getattr__(self, name):
        # the warp-synchronous plan's views of its one buffer, made when first asked for
        if name in ("totals", "offsets", "offsets2") and "state" in self.__dict__:
            self.totals = self.offsets = self.offsets2 = self.state[8:10]
            return self.totals
        # the bitmask plan's views of its one buffer, likewise (each made alone: e.g. run-length encode
        # returns the count, a view of the totals, on every call)
        part = _BITMASK_VIEWS.get(name)
        if part is not None and "_ws" in self.__dict__:
            if name == "offsets2":   # (one view for both, as the other plans have)
                view = self.offsets
            else:
                view = self._part(part) if part != 5 or self.has_prev_heads else None
            setattr(self, name, view)
            return view
        raise AttributeError(name)

    def _parts(self, run):
        """The bitmask plan's parts (bits, tile counts, scan status words, tile offsets, totals, the last
        tile with a head before each tile, each word's first head item): for a launch sequence ``run``
        that replays, their addresses (the remembered launches take them for pointers; no view is made),
        else views of the one buffer (for the launch that records, and for callers; int32 parts as int32
        views of their extent)."""
        if run is not None and run.steps is not None:
            base = self._ws.data_ptr()
            return tuple(base + 8 * i for i in self._layout.starts)
        return tuple(self._part(i) for i in range(7))

    def _part(self, i: int) -> torch.Tensor:
        """View of part ``i`` of the bitmask plan's buffer (the order of :class:`_BitmaskLayout`)."""
        lay = self._layout
        o = lay.starts[i]
        view = self._ws[o:o + (self.num_tiles if i == 3 else lay.sizes[i])]
        if i in (0, 1, 5):   # (int32 parts)
            view = view.view(torch.int32)
            if i == 0 and view.numel() != lay.bit_words:
                view = view[:lay.bit_words]
        elif i == 6:   # (items, one per word of bits)
            view = view.view(self.x.dtype)[:lay.bit_words] if lay.sizes[6] else view
        return view

    def host_count(self) -> int:
        """The number selected, on the host (``count_to_host`` plans): waits for pass 1 only."""
        k = self.mailbox.read()
        self._remember_density(k)
        return k

    def host_count_if_ready(self) -> int | None:
        """:meth:`host_count` if pass 1 has already stored it (then the caller can size its outputs
        exactly before pass 2), else None without waiting (then :meth:`host_count` later). A problem of
        at most ``_WAIT_COUNT_MAX`` items waits for it: its pass 1 takes the GPU a few microseconds, less
        than the host spends on a worst-case buffer and the compacting copy after it."""
        if self.n <= _WAIT_COUNT_MAX:
            return self.host_count()
        k = self.mailbox.poll()
        if k is not None:
            self._remember_density(k)
        return k

    def _remember_density(self, k: int) -> None:
        if len(_LAST_SPARSE) > 256:
            _LAST_SPARSE.clear()
        _LAST_SPARSE[(self.n, self.mode, self.load_x)] = k * _SPARSE_DIV <= self.n

    @property
    def num_selected(self) -> torch.Tensor:
        """The number selected (device int64 scalar; for three-way, a pair)."""
        return self.totals[:2] if self.mode == SELECT_THREE_WAY else self.totals[0]

    def scatter(self, *, out=None, values=None, out_values=None, out_index=None, shape=None,
                index_base=None, out_lengths=None, out_inverse=None, partition=False, count=None, run=None):
        """Pass 2. ``out_lengths`` (run lengths, modes heads / non-trivial runs) needs ``out_index``
        (the runs' start indices) too, unless the plan was made with ``run_lengths`` in the bitmask
        form (1-D), whose scatter writes them. ``count``: the number selected when the host knows it
        (the bitmask form then picks its scatter grouping by how sparse the selection is). ``run``:
        the caller's :class:`~tritoncub._launch.LaunchPlan`, for the warp-synchronous form's one launch
        (its key must then fix this launch too: the size, the outputs asked for, the tensors' dtypes and
        alignments, the select policy as its tag); the other forms launch as usual."""
        n = self.n
        if n == 0:
            return
        ndim = 1 if shape is None else len(shape)
        fused_lengths = out_lengths is not None and self.has_prev_heads and ndim == 1
        if out_lengths is not None and out_index is None and not fused_lengths:
            raise ValueError("internal: run lengths need the run starts (out_index)")
        if out_lengths is not None and self.mode not in (SELECT_HEADS, SELECT_NONTRIVIAL):
            raise ValueError("internal: run lengths are for run selections (heads, non-trivial runs)")
        shape_t = _shape_tensor(shape, self.x.device) if ndim > 1 else None
        if self.single_pass:
            if partition:
                raise ValueError("internal: partition needs the two-pass plan (two_pass=True)")
            if self.warp_sync and ndim == 1:
                self._scatter_warp_sync(values, out, out_values, out_index, out_lengths, out_inverse, index_base,
                                        run)
            else:
                self._scatter_single_pass(values, out, out_values, out_index, out_lengths, out_inverse, index_base,
                                          shape_t, ndim)
        else:
            self._scatter_two_pass(values, out, out_values, out_index, out_lengths, out_inverse, index_base,
                                   shape_t, ndim, partition, count, fused_lengths)
        if out_lengths is not None and not fused_lengths:
            block = 4096
            programs = cdiv(out_lengths.numel(), block)
            if self.x.device.type == "cuda":
                programs = min(programs, 4 * num_sms(self.x.device))
            launch(_finish_lengths_kernel, (max(1, programs),),
                   out_lengths, out_index, self.totals, n, BLOCK=block, FROM_STARTS=self._ends_from_starts(ndim),
                   num_warps=8)

    def _ends_from_starts(self, ndim) -> bool:
        """Whether run lengths come from consecutive run starts (heads mode, 1-D, in the
        warp-synchronous kernel or the bitmask form) rather than from ends written by the scatter.
        (The library's bitmask callers of run heads make their plans with ``run_lengths``: the scatter
        writes the lengths and this path is not taken; non-trivial runs in the bitmask form write their
        ends, and the lengths kernel subtracts the starts.)"""
        if self.mode != SELECT_HEADS or ndim != 1:
            return False
        return (self.single_pass and self.warp_sync) or (not self.single_pass and self.bitmask)

    def _scatter_warp_sync(self, values, out, out_values, out_index, out_lengths, out_inverse, index_base,
                           caller_run=None):
        dummy, nw = self.state, self.pol.num_warps
        items = self.tile // (32 * nw)
        if caller_run is None:
            tensors = (self.x, self.flags, values, out, out_values, out_index, out_lengths, out_inverse, index_base)
            # the launch is fixed by the size, the mode, which outputs are written and the tensors' dtypes
            # and alignments: a repeated call re-launches it without the per-argument bookkeeping
            run = LaunchPlan(_SCATTER_PLANS, (self.n, self.mode, self.load_x, self.x.device, _PROBE, _INDEX32_LIMIT,
                                              tuple(None if t is None else (t.dtype, t.data_ptr() & 15)
                                                    for t in tensors)), tag=self.pol)
        else:
            run = caller_run
        run(_select_warp_sync_kernel, (self.num_tiles,),
            self.x, self.flags if self.flags is not None else self.x,
            values if values is not None else self.x, self.state,
            index_base if index_base is not None else dummy,
            out if out is not None else dummy, out_values if out_values is not None else dummy,
            out_index if out_index is not None else dummy, out_lengths if out_lengths is not None else dummy,
            out_inverse if out_inverse is not None else dummy, self.n, self.num_tiles,
            MODE=self.mode, LOAD_X=self.load_x, WRITE_KEYS=out is not None, WITH_VALUES=values is not None,
            WRITE_INDEX=out_index is not None, ADD_BASE=index_base is not None,
            WRITE_ENDS=out_lengths is not None and not self._ends_from_starts(1),
            WRITE_INVERSE=out_inverse is not None, INDEX64=self.n >= _INDEX32_LIMIT, WARPS=nw,
            ANCHORED=bool(self.pol["ANCHORED"]),
            ITEMS=items, VEC=math.gcd(self.pol["VEC"], items), LOOKBACK_WINDOW=self.pol["LOOKBACK_WINDOW"],
            LOOKBACK_SLEEP=bool(self.pol["LOOKBACK_SLEEP"]), PROBE=_PROBE, num_warps=nw)
        if caller_run is None:
            run.done()

    def _scatter_single_pass(self, values, out, out_values, out_index, out_lengths, out_inverse, index_base,
                             shape_t, ndim):
        n, nt, dummy = self.n, self.num_tiles, self.offsets
        shape_t = dummy if shape_t is None else shape_t
        launch(_select_single_pass_kernel, (nt,),
               self.x, self.flags if self.flags is not None else self.x,
               values if values is not None else self.x, self.counter, self.status, self.plane_stride,
               self.totals, shape_t, index_base if index_base is not None else dummy,
               out if out is not None else dummy, out_values if out_values is not None else dummy,
               out_index if out_index is not None else dummy,
               out_lengths if out_lengths is not None else dummy,
               out_inverse if out_inverse is not None else dummy, n, nt,
               MODE=self.mode, PRED=self.pred or _never, LOAD_X=self.load_x,
               WRITE_KEYS=out is not None, WITH_VALUES=values is not None,
               WRITE_INDEX=out_index is not None, NDIM=ndim, ADD_BASE=index_base is not None,
               WRITE_ENDS=out_lengths is not None, WRITE_INVERSE=out_inverse is not None,
               COUNT=_TL_COUNT[self.count_dtype], LB_REDUCE=_LB_COUNT, PACKED=self.packed, TILE=self.tile,
               LOOKBACK_WINDOW=self.pol["LOOKBACK_WINDOW"],
               num_warps=self.pol.num_warps, num_stages=self.pol.num_stages)

    def _scatter_group(self, count, partition) -> int:
        """Tiles per program of the bitmask scatter: grouping pays for sparse selections only (a dense
        tile in a group goes tile by tile): by the count when the host has it, else by the last count
        of a selection like this one (waiting for the count would leave the GPU idle while the host
        reacts); SCATTER_TILES when neither."""
        n = self.n
        sparse = _LAST_SPARSE.get((n, self.mode, self.load_x)) if count is None else count * _SPARSE_DIV <= n
        if partition or sparse is None:
            group = self.pol["SCATTER_TILES"]
        else:
            group = self.pol["SPARSE_SCATTER_TILES"] if sparse else 1
        return min(group, 1 << (self.num_tiles - 1).bit_length())

    def _scatter_two_pass(self, values, out, out_values, out_index, out_lengths, out_inverse, index_base, shape_t,
                          ndim, partition, count, fused_lengths=False, group=None, record=True):
        n = self.n
        if self.bitmask:
            # (run lengths: written here when fused; non-trivial runs: their ends written here, the starts
            # subtracted afterwards; else the lengths are taken from the run starts afterwards)
            ends = self.mode == SELECT_NONTRIVIAL and out_lengths is not None
            out_lengths = out_lengths if (fused_lengths or ends) else None
            if group is None:
                group = self._scatter_group(count, partition)
            # (the key names the caller's tensors; the plan's own parts are fixed by the layout, and an
            # unused pointer argument is one of them)
            tensors = (self.x, values, out, out_values, out_index, out_inverse, index_base, shape_t, out_lengths)
            shapes = tuple(None if t is None else (t.dtype, t.data_ptr() & 15) for t in tensors)
            # (not inside a caller's recording of launches: its record would miss a replay)
            template = self.__dict__.get("_template") if record and not recording_launches() else None
            if template is not None:
                # a plan made from a template (see bitmask_plan): its scatter is remembered whole too, and
                # replayed on this call's buffers (the launch's argument bookkeeping skipped)
                skey = (template, ndim, partition, group, _SPARSE_DIV, chain_memo_key(), shapes)
                roots = (self._ws,) + tuple(t for t in tensors if t is not None)
                launches = _SCATTER_REPLAYS.get(skey, _NOT_SEEN)
                if launches is not None and launches is not _NOT_SEEN:
                    replay(launches, tuple(t.data_ptr() for t in roots))
                    return
                if launches is _NOT_SEEN:
                    with record_launches() as rec:
                        self._scatter_two_pass(values, out, out_values, out_index, out_lengths, out_inverse,
                                               index_base, shape_t, ndim, partition, count, fused_lengths,
                                               group=group, record=False)
                    if len(_SCATTER_REPLAYS) >= 64:
                        _SCATTER_REPLAYS.clear()
                    _SCATTER_REPLAYS[skey] = relocatable(rec, roots)
                    return
            run = LaunchPlan(_BITS_PLANS, ("scatter", n, self.mode, ndim, partition, self.x.device, _SPARSE_DIV, group,
                                           self._layout, chain_memo_key(), shapes), tag=self.pol)
            bits, _, _, offsets, totals, prevs, first_items_part = self._parts(run)
            dummy = offsets
            word_keys = self.word_keys and out is not None
            run(_scatter_bits_kernel, (cdiv(self.num_tiles, group),),
                bits, self.x, values if values is not None else self.x, offsets, totals,
                shape_t if shape_t is not None else dummy,
                index_base if index_base is not None else dummy,
                out if out is not None else dummy, out_values if out_values is not None else dummy,
                out_index if out_index is not None else dummy,
                out_inverse if out_inverse is not None else dummy,
                prevs if out_lengths is not None and not ends else dummy,
                out_lengths if out_lengths is not None else dummy, first_items_part if word_keys else dummy, n,
                WRITE_KEYS=out is not None, WITH_VALUES=values is not None, WRITE_INDEX=out_index is not None,
                NDIM=ndim, ADD_BASE=index_base is not None, WRITE_INVERSE=out_inverse is not None,
                PARTITION=partition, TILE=self.tile, SPARSE_DIV=_SPARSE_DIV, GROUP=group,
                WRITE_LENGTHS=out_lengths is not None and not ends, WRITE_ENDS=ends, WORD_KEYS=int(word_keys),
                num_warps=self.pol.num_warps, num_stages=self.pol.num_stages,
                **maxnreg_kwargs(self.pol.get("SCATTER_MAXNREG", 0)), **chain_kwargs(self.x.device, True))
            run.done()
            return
        dummy = self.offsets
        shape_t = dummy if shape_t is None else shape_t
        launch(_compact_kernel, (self.num_tiles,),
               self.x, self.flags if self.flags is not None else self.x,
               values if values is not None else self.x, self.offsets, self.offsets2, self.totals, shape_t,
               index_base if index_base is not None else dummy,
               out if out is not None else dummy, out_values if out_values is not None else dummy,
               out_index if out_index is not None else dummy, out_lengths if out_lengths is not None else dummy,
               out_inverse if out_inverse is not None else dummy, n,
               MODE=self.mode, PRED=self.pred or _never, PRED2=self.pred2 or _never, LOAD_X=self.load_x,
               WRITE_KEYS=out is not None, WITH_VALUES=values is not None, WRITE_INDEX=out_index is not None,
               NDIM=ndim, ADD_BASE=index_base is not None, WRITE_ENDS=out_lengths is not None,
               WRITE_INVERSE=out_inverse is not None, PARTITION=partition, TILE=self.tile,
               num_warps=self.pol.num_warps, num_stages=self.pol.num_stages)


def _replayable(x: torch.Tensor) -> bool:
    """Whether a selection on ``x`` may be planned from a template and replayed (see :func:`bitmask_plan`):
    a GPU tensor, direct launches, this module's ``launch`` not replaced, no caller recording launches."""
    return replays_ok(x, (launch, _launch.launch)) and not recording_launches()


def bitmask_plan(x: torch.Tensor, flags: torch.Tensor | None, mode, *, load_x: bool = True, pol=None,
                 count_to_host: bool = True, run_lengths: bool = False) -> Plan:
    """``Plan(x, flags, mode, two_pass=True, ...)`` in the bitmask form (modes flagged and run heads), for
    ops that make the same plan on every call of a problem (the ops that read the count back, and
    run-length encoding). The first call of a problem (size, mode, dtypes and alignments of ``x`` and
    ``flags``, policy) plans it and remembers a template: the plan's fixed state and its count pass's
    launches. Later calls make the plan from it: a fresh buffer (and mailbox), the launches replayed on
    them (most of the constructor's host time skipped), and the plan's scatter is remembered and
    replayed the same way. Results are those of the plain plan."""
    dev = x.device
    pol = pol or policy.select("select", dev, "two_pass")
    if not _replayable(x):
        return Plan(x, flags, mode, load_x=load_x, pol=pol, two_pass=True, count_to_host=count_to_host,
                    run_lengths=run_lengths)
    f = x if flags is None else flags
    same = f is x
    key = (x.numel(), mode, load_x, bool(count_to_host), bool(run_lengths), dev, x.dtype, x.data_ptr() & 15, f.dtype,
           f.data_ptr() & 15, same, chain_memo_key(), _SCAN_PUBLISH, _SCAN_PROGRAMS, _SCAN_MIN_BLOCK)
    hit = _PLAN_TEMPLATES.get(key)
    if hit is not None and hit[0] is pol:
        _, state, words, launches = hit
        if state is None:   # (a problem whose launches were not relocatable: planned afresh every call)
            return Plan(x, flags, mode, load_x=load_x, pol=pol, two_pass=True, count_to_host=count_to_host,
                        run_lengths=run_lengths)
        if count_to_host:
            refuse_capture(dev, "a selection with its count sent to the host")
        plan = Plan.__new__(Plan)
        plan.__dict__.update(state)
        plan.x, plan.flags = x, flags
        ws = plan._ws = torch.empty(words, dtype=torch.int64, device=dev)
        bases = (x.data_ptr(),) if same else (x.data_ptr(), f.data_ptr())
        if count_to_host:
            box = plan.mailbox = Mailbox.take(dev)
            replay(launches, bases + (ws.data_ptr(), box.tensor.data_ptr()))
        else:
            plan.mailbox = None
            replay(launches, bases + (ws.data_ptr(),))
        return plan
    with record_launches() as rec:
        plan = Plan(x, flags, mode, load_x=load_x, pol=pol, two_pass=True, count_to_host=count_to_host,
                    run_lengths=run_lengths)
    if not plan.bitmask or plan.n == 0:
        return plan
    # (roots that overlap, e.g. a mask that is another view of x's storage, are not relocatable: the
    # problem is then remembered as such, and later calls plan afresh without recording)
    roots = ((x,) if same else (x, f)) + (plan._ws,) + ((plan.mailbox.tensor,) if count_to_host else ())
    launches = relocatable(rec, roots)
    if len(_PLAN_TEMPLATES) >= 64:
        _PLAN_TEMPLATES.clear()
    if launches is None:
        _PLAN_TEMPLATES[key] = (pol, None, 0, None)
    else:
        # (the scatters' replays are keyed by this template's own token: a template made again under
        # another policy, whose tiles differ, never finds the scatters remembered under the old one)
        token = object()
        state = {k: v for k, v in plan.__dict__.items() if k not in ("x", "flags", "_ws", "mailbox")}
        state["_template"] = token
        _PLAN_TEMPLATES[key] = (pol, state, plan._ws.numel(), launches)
        plan._template = token
    return plan


#: result buffers of at most this many bytes are returned as views however little of them is used (a
#: copy costs the host a launch and an allocation; holding such a buffer costs nothing worth it)
SHRINK_MIN_BYTES = 1 << 18


def shrink(buf: torch.Tensor, k: int) -> torch.Tensor:
    """The first ``k`` items of a result buffer sized for the worst case: a view when the result
    fills at least a quarter of the buffer (or the buffer is small, ``SHRINK_MIN_BYTES``), else a
    compact copy (so a sparse result does not pin a large buffer; a dense one is not copied again)."""
    if 4 * k >= buf.shape[0] or buf.numel() * buf.element_size() <= SHRINK_MIN_BYTES:
        return buf[:k]
    return buf[:k].clone()


_SHAPES: dict = {}


def _shape_tensor(shape, device) -> torch.Tensor:
    key = (tuple(int(s) for s in shape), str(device))
    return device_constant(list(key[0]), torch.int64, device, _SHAPES, key)


def flat_input(x: torch.Tensor, name: str = "x") -> torch.Tensor:
    """``x`` as a contiguous 1-D tensor (a copy only when it is not contiguous)."""
    if x.dim() == 1 and x.is_contiguous():
        return x    # (no new view: each costs the host microseconds)
    return x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)


def _check_pred(pred, name="pred"):
    """``pred`` must be a ``@triton.jit`` function of the items' tile (select and partition predicates)."""
    check_jit_function(pred, name, 1, "the tile of items")


def _check_flags(x: torch.Tensor, flags: torch.Tensor):
    check_tensor(flags, "flags", SELECTABLE_DTYPES)
    check_same_device(("x", x), ("flags", flags))
    if flags.shape != x.shape:
        raise InputValueError(f"flags has shape {tuple(flags.shape)} but x has {tuple(x.shape)}; they must match "
                              "(flags are not broadcast)")


# ----------------------------------------------------------------------------------------------
# DeviceSelect
# ----------------------------------------------------------------------------------------------

def flagged(x: torch.Tensor, flags: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Items of ``x`` whose flag is nonzero, in input order. Returns ``(out, num_selected)``: ``out``
    has ``x.numel()`` slots of which the first ``num_selected`` (device int64 scalar) are the result."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_flags(x, flags)
    xf, ff = flat_input(x), flat_input(flags)
    plan = Plan(xf, ff, SELECT_FLAGGED, load_x=False)
    out = torch.empty_like(xf)
    plan.scatter(out=out)
    return out, plan.num_selected


def if_(x: torch.Tensor, pred) -> tuple[torch.Tensor, torch.Tensor]:
    """Items of ``x`` for which ``pred`` (a ``@triton.jit`` function: tile -> int1 tile) holds, in
    input order. Returns ``(out, num_selected)`` as :func:`flagged`."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_pred(pred)
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_IF, pred)
    out = torch.empty_like(xf)
    plan.scatter(out=out)
    return out, plan.num_selected


def unique(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The first item of every run of equal consecutive items (CUB's ``DeviceSelect::Unique``).
    Returns ``(out, num_selected)`` as :func:`flagged`."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_HEADS)
    out = torch.empty_like(xf)
    plan.scatter(out=out)
    return out, plan.num_selected


def unique_by_key(keys: torch.Tensor, values: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The first (key, value) of every run of equal consecutive keys. Returns
    ``(keys_out, values_out, num_selected)``."""
    check_tensor(keys, "keys", SELECTABLE_DTYPES)
    check_tensor(values, "values", SELECTABLE_DTYPES, device=keys.device)
    if values.numel() != keys.numel():
        raise InputValueError(f"values has {values.numel()} items but keys has {keys.numel()}")
    kf, vf = flat_input(keys), flat_input(values)
    plan = Plan(kf, None, SELECT_HEADS)
    ko, vo = torch.empty_like(kf), torch.empty_like(vf)
    plan.scatter(out=ko, values=vf, out_values=vo)
    return ko, vo, plan.num_selected


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------

#: masked_select takes the bitmask two-pass form, its count stored to a host mailbox by pass 1 (False:
#: the single pass, whose count is known only when its one kernel ends). H100, 2^26 fp32, op times:
#: 1% 0.125 ms against 0.19-0.25 single pass, 50% 0.216 against 0.253, 99% 0.243 against 0.41-0.42
#: (bench/results/logs/select_overlap_probe-mailbox-20261124.log). The tests run both forms.
MASKED_SELECT_TWO_PASS = True


def _masked_select_impl(x: torch.Tensor, mask: torch.Tensor, two_pass: bool | None = None) -> torch.Tensor:
    two_pass = MASKED_SELECT_TWO_PASS if two_pass is None else two_pass
    if isinstance(x, torch.Tensor):
        refuse_capture(x.device, "masked_select", "use tritoncub.device.select.flagged (its count stays on the device)")
    if isinstance(x, torch.Tensor) and x.dtype in COMPLEX_DTYPES:
        # the (real, imaginary) pairs of the selected items, the mask broadcast over each pair
        check_tensor(mask, "mask", (torch.bool,))
        _check_broadcast(x, mask)
        pairs = _masked_select_impl(torch.view_as_real(x.resolve_conj()), mask.unsqueeze(-1), two_pass)
        return torch.view_as_complex(pairs.view(-1, 2))
    check_tensor(x, "x", SELECTABLE_DTYPES + COMPLEX_DTYPES)   # (complex is taken above: complex32 is refused here)
    check_tensor(mask, "mask", (torch.bool,))
    check_same_device(("x", x), ("mask", mask))
    if x.shape != mask.shape:
        _check_broadcast(x, mask)
        x, mask = torch.broadcast_tensors(x, mask)
    xf, mf = flat_input(x), flat_input(mask)
    # two passes: pass 1 stores the count in host memory, and pass 2 runs while the host waits for it;
    # one pass: the count is known when the one kernel ends (its whole time, then the sync)
    plan = (bitmask_plan(xf, mf, SELECT_FLAGGED, load_x=False) if two_pass
            else Plan(xf, mf, SELECT_FLAGGED, load_x=False))
    k = plan.host_count_if_ready() if two_pass else None
    if k is not None:   # (a small problem, or the host is behind the GPU: the exact size is known already)
        out = torch.empty(k, dtype=x.dtype, device=x.device)
        if k > 0:
            plan.scatter(out=out, count=k)
        return out
    buf = torch.empty(xf.numel(), dtype=x.dtype, device=x.device)
    plan.scatter(out=buf)  # queued before the sync: the GPU never waits for the host
    k = plan.host_count() if two_pass else int(plan.num_selected.item())  # the one host sync: the result's size
    return shrink(buf, k)


def _check_broadcast(x: torch.Tensor, mask: torch.Tensor) -> None:
    try:
        torch.broadcast_shapes(x.shape, mask.shape)
    except RuntimeError:
        raise InputValueError(f"mask of shape {tuple(mask.shape)} does not broadcast with x of shape "
                              f"{tuple(x.shape)}") from None


@custom_op("tritoncub::masked_select", mutates_args=(), cudagraph_unsafe=True)
def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """torch.masked_select: the items of ``x`` where the (broadcast) bool ``mask`` is True, as a 1-D
    tensor in row-major order. One host sync (the count). Autograd: the gradient goes back to the
    selected items (summed where ``x`` was broadcast)."""
    return _masked_select_impl(x, mask)


@masked_select.register_fake
def _(x, mask):
    if x.dtype not in SELECTABLE_DTYPES + COMPLEX_DTYPES:
        raise InputTypeError(f"x has dtype {x.dtype}; supported dtypes are "
                             f"{dtype_names(SELECTABLE_DTYPES + COMPLEX_DTYPES)}")
    if mask.dtype != torch.bool:
        raise InputTypeError(f"mask has dtype {mask.dtype}; supported dtypes are bool")
    _check_broadcast(x, mask)
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return x.new_empty((k,))


def _masked_select_setup(ctx, inputs, output):
    x, mask = inputs
    ctx.x_shape = x.shape
    ctx.save_for_backward(mask)


def _masked_select_backward(ctx, grad):
    """The selected items' gradients back at their places of the broadcast input (zeros elsewhere),
    summed over the dimensions along which ``x`` was broadcast."""
    (mask,) = ctx.saved_tensors
    shape = torch.broadcast_shapes(ctx.x_shape, mask.shape)
    g = grad.new_zeros(shape).masked_scatter(mask.expand(shape), grad)
    return g.sum_to_size(ctx.x_shape), None


masked_select.register_autograd(_masked_select_backward, setup_context=_masked_select_setup)


def _nonzero_impl(x: torch.Tensor) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        refuse_capture(x.device, "nonzero", "use tritoncub.device.select.flagged (its count stays on the device)")
    if isinstance(x, torch.Tensor) and x.dtype in COMPLEX_DTYPES:   # nonzero: either part (NaN included)
        check_tensor(x, "x")
        x = torch.view_as_real(x.resolve_conj()).ne(0).any(-1)
    check_tensor(x, "x", SELECTABLE_DTYPES + COMPLEX_DTYPES)   # (complex is taken above: complex32 is refused here)
    xf = flat_input(x)
    ndim = x.dim()
    plan = bitmask_plan(xf, xf, SELECT_FLAGGED, load_x=False)
    if ndim == 0:
        return torch.empty((plan.host_count(), 0), dtype=torch.int64, device=x.device)
    # pass 2 writes a worst-case buffer while the host waits for the count (pass 1 stores it in host
    # memory), so the GPU never idles for the host's reaction to the sync; or, when the count is known
    # already (a small problem waits for it; the host may be behind the GPU), the exact result
    k = plan.host_count_if_ready()
    buf = torch.empty((xf.numel() if k is None else k, ndim), dtype=torch.int64, device=x.device)
    if k != 0:
        plan.scatter(out_index=buf, shape=tuple(x.shape) if ndim > 1 else None, count=k)
    return buf if k is not None else shrink(buf, plan.host_count())  # the one host sync


@custom_op("tritoncub::nonzero", mutates_args=(), cudagraph_unsafe=True)
def nonzero(x: torch.Tensor) -> torch.Tensor:
    """torch.nonzero: the coordinates (int64, ``[count, x.dim()]``, row-major order) of the nonzero
    items (NaN counts as nonzero, ``-0.0`` does not). One host sync (the count)."""
    return _nonzero_impl(x)


@nonzero.register_fake
def _(x):
    if x.dtype not in SELECTABLE_DTYPES + COMPLEX_DTYPES:
        raise InputTypeError(f"x has dtype {x.dtype}; supported dtypes are "
                             f"{dtype_names(SELECTABLE_DTYPES + COMPLEX_DTYPES)}")
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return x.new_empty((k, x.dim()), dtype=torch.int64)
