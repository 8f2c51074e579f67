"""DeviceRadixSort: onesweep LSD radix sort of keys or key-value pairs (CUB's ``DeviceRadixSort``).

Algorithm (Adinets & Merrill 2022, "Onesweep"):

1. **Upfront histogram**: one pass over the keys counts every digit of every digit place
   (``RADIX_BITS`` bits each, from ``begin_bit`` to ``end_bit``) at once.
2. Places where every key has the same digit are **skipped** (common for small-range keys); this
   needs the histogram on the host: one small device-to-host copy per sort, which also says whether
   float keys hold ``-0.0`` or NaNs other than the canonical ``+qNaN`` (without them the passes skip
   the canonicalisation of ``tritoncub.thread.radix_traits``). The first place's pass is launched
   before the host waits for the copy (whatever the counts; except for positions packed with the
   keys, where that pass's form depends on the count of passes), so the GPU does not idle on the
   round trip; that pass does nothing when all keys share the first place's digit (the offsets
   kernel's summary says so on the GPU too), and the host then runs the next pass as the first.
   Below the policy's
   ``SKIP_PLACES_MIN_N`` keys there is no copy: every place runs, and the launches queue without
   waiting for the GPU.
   Inputs of at most ``SMALL_N`` keys of up to 32 bits (a policy value; 0 = off, the default until
   it is timed on a GPU) skip all of this: one program sorts them with a single ``tl.sort``.
3. **One pass per remaining place**: each program takes the next tile (atomic tile counter), ranks
   its keys by the place's digit, publishes its digit counts and finds, by a decoupled look-back
   (Merrill & Garland 2016) over the per-digit status words of the tiles before it, how many keys
   of each digit earlier tiles hold; the keys (and values) then go to
   ``digit_offset[d] + earlier_tiles[d] + rank``. The sort is stable.

Two kernel families implement steps 1 and 3:

* the **fast path** (compiled NVIDIA GPUs, sm_70+): Gluon kernels with explicit layouts whose tile
  ranking finds each key's peers in its warp by ballots over the digit bits (or ``match.any.sync``,
  measured 1.5x slower) and bumps shared-memory counters (``tritoncub.block.radix_rank``), and
  which reorder the tile through shared memory before writing, so writes go out in runs of equal
  digits. What crosses shared memory is a policy choice: the keys themselves (32-bit keys:
  ``EXCHANGE_KEYS``; 64-bit keys and the packed key-position words: ``EXCHANGE_WIDE``, 8 bytes a key,
  a 64 KB buffer at 4096-key tiles; with each key's source position beside it in passes that generate
  positions: ``EXCHANGE_SRC``), or only each key's source position, the keys (and any values) then
  gathered back from global memory in sorted order (L1/L2 hits). H200, 2^28 keys: the wide exchange
  took int64 keys from 19.4 to 16.4 ms and ``sort`` of fp32 keys with indices from 9.55 to 8.39.
  Values (of 4 or 8 bytes) carried by a pass whose keys cross shared memory follow them as in CUB
  (``EXCHANGE_VALUES``): once the keys are written out, the values are read in input order, put in
  the keys' part of the buffer at their keys' ranks (kept in registers) and written to their keys'
  destinations (each sorted slot's digit kept in a second part); else they are gathered by position. H200,
  2^28: int64+int64 pairs 36.5 -> 28.3 ms, fp32+int32 12.1 -> 9.1, ``sort`` of int64 keys with indices
  29.5 -> 23.2 (``bench/results/logs/exchange_values_probe-h200-20261128.log``);
* the **portable path** (the interpreter, other GPUs): ``tl`` kernels with the one-hot ranking of
  ``block_radix_rank`` and a direct scatter; same protocol, same results.

Temporary memory: one alternate buffer for the keys and one for the values (none with the
double-buffer API), the histogram (places x 2**RADIX_BITS int64), and the look-back status words,
``tiles x 2**RADIX_BITS`` int32 (int64 when n >= 2**29), reused by every pass: n/16 bytes at the
fast path's 4096-key tiles, 8-bit digits (small sorts, up to 2**22 words for all passes together,
get one set per pass, zeroed with the histogram). ``sort``/``argsort`` (keys of up to 32 bits, not
bool) carry each key and the position it came from packed in one uint64 word between the first and
the last pass: one 8-byte scatter per key instead of a 4-byte key and a 4-byte position (sort of 2^28
fp32 keys with indices on the H100: 10.4 ms against 13.5 ms apart); their temporary memory is one
word buffer (8 bytes per key; the int64 index output is the other). Otherwise they carry the
positions as int32 between passes (two int32 buffers instead of one alternate int64 buffer).

Host work: a sort below ``SKIP_PLACES_MIN_N`` keys reads nothing back, so its launches queue; they
are remembered per problem (sizes, dtypes, alignments, policy) and re-launched directly on later
calls, with every pass's offsets into one zeroed scratch buffer instead of per-pass tensor views
(sort of 2^20 fp32 keys with indices on the H100: 457 us per call before, 128 us after, GPU 94 us).

File layout: kernels, policy registration, Python launchers, torch operators.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .. import policy
from ..agent.launch_chain import chain_kwargs, chain_link, chain_link_gluon, memo_key as chain_memo_key
from .._library import custom_op
from .._launch import bind, direct_ok, launch, recording_launches, relocatable, replay
from .._utils import (INT_OF_SIZE, KEPT_FOR_GRAPHS, InputTypeError, InputValueError, as_int, capturing, cdiv, check_flag,
                      check_no_overlap, check_tensor, maxnreg_kwargs, next_power_of_2, num_sms,
                      smem_atomics_ok, smem_per_block, wrap_dim)
from ..block.histogram import block_histogram
from ..block.radix_rank import (block_radix_rank, smem_count_words, smem_count_words_if, smem_load_dwords,
                                smem_load_words, smem_store_dwords, smem_store_words, warp_ballot_rank,
                                warp_ballot_rank_store, warp_ballot_rank_store64, warp_ballot_rank_store_with,
                                warp_match_rank_packed)
from ..thread.radix_traits import (KEY_DTYPES, extract_digit, is_special_float, key_bits, pack_key_position,
                                   to_ordered_bits, to_ordered_bits_noting_changes, unpack_key_position)

# ==============================================================================================
# Kernels
# ==============================================================================================


@triton.jit
def _digit_lookback(status_ptr, tile, dig, kw, tot, parity, RADIX: tl.constexpr, FLAG_SHIFT: tl.constexpr):
    """Decoupled look-back over per-digit status words; returns earlier tiles' count per digit.

    ``status_ptr`` points at ``[tiles, RADIX]`` words (int32 with ``FLAG_SHIFT=29``, int64 with
    61), zero before the first pass that uses them. Word = ``flag << FLAG_SHIFT | count``; flag
    ``1 | 4*parity``: this tile's count (aggregate), ``2 | 4*parity``: count of this tile and all
    before it (inclusive). Passes sharing the words alternate ``parity``: a word left by the pass
    before reads as unpublished, so the words are zeroed once, not before every pass. ``dig`` ``[RADIX]`` digit ids
    and ``tot`` ``[RADIX]`` this tile's counts (same layout); ``kw`` ``[WINDOW]`` = 0..WINDOW-1 in
    the layout whose ``[RADIX, WINDOW]`` parent slices to ``dig``'s (row = digit, a window of
    predecessors per thread). Each step reads ``WINDOW`` predecessors of every digit at once: the
    nearest inclusive word ends the digit's walk, aggregates before it are summed, and an
    unpublished word (flag 0) makes the digit wait there. Builds no tensors (explicit layouts OK).
    """
    tv = tot.to(status_ptr.dtype.element_ty)
    zero = tv * 0
    ptrs = status_ptr + tile.to(tl.int64) * RADIX + dig
    first = tile == 0
    par = parity * 4
    # flag and count share one word, so readers never need ordering beyond the word itself
    tl.atomic_xchg(ptrs, tv | ((zero + tl.where(first, 2, 1) + par) << FLAG_SHIFT), sem="relaxed")
    WINDOW: tl.constexpr = kw.shape[0]
    excl = zero
    j = (dig * 0 + tile - 1).to(tl.int64)       # nearest predecessor not yet folded in
    done = (dig * 0 + tile) == 0
    todo = tl.sum((~done).to(tl.int32), 0)
    while todo > 0:
        t2 = j[:, None] - kw[None, :]            # [RADIX, WINDOW]: j, j-1, ...
        live = (~done)[:, None] & (t2 >= 0)
        w = tl.load(status_ptr + t2 * RADIX + dig[:, None], mask=live, other=0, volatile=True)
        # this pass's flags as 1 (aggregate) and 2 (inclusive); below tile 0 reads as an inclusive
        # zero (never reached: tile 0 is inclusive)
        flag = ((w >> FLAG_SHIFT) & 7) ^ par
        flag = tl.where((t2 < 0) & (~done)[:, None], 2, flag)
        kk = (t2 * 0 + kw[None, :]).to(tl.int32)
        first_inc = tl.min(tl.where(flag == 2, kk, WINDOW), 1)
        first_zero = tl.min(tl.where((flag != 1) & (flag != 2), kk, WINDOW), 1)
        stop = tl.minimum(first_inc, first_zero)
        take = (kk < stop[:, None]) | ((kk == first_inc[:, None]) & (first_inc < first_zero)[:, None])
        excl += tl.sum(tl.where(take & live, w & ((1 << FLAG_SHIFT) - 1), w * 0), 1).to(excl.dtype)
        done = done | (first_inc < first_zero)
        j = j - stop.to(tl.int64)
        todo = tl.sum((~done).to(tl.int32), 0)
    if tile > 0:
        tl.atomic_xchg(ptrs, (excl + tv) | ((zero + 2 + par) << FLAG_SHIFT), sem="relaxed")
    return excl


# Per-thread spin look-back of one digit (CUB's scheme): $1 = address of the nearest predecessor's
# status word of this thread's digit (0: no predecessor), $2 = bytes between two tiles' words, $3 =
# 4 * parity (see _digit_lookback: flags xor $3 are 1, aggregate, or 2, inclusive, once published).
# Walks back one tile per step, waiting on unpublished words, summing counts until an inclusive one.
_SPIN_LOOKBACK32 = gl.constexpr("""{
.reg .pred p, q;
.reg .b32 w, f, h, v, acc;
.reg .b64 a, st;
mov.b32 acc, 0;
mov.b64 a, $1;
setp.eq.u64 p, a, 0;
@p bra DONE${:uid};
cvt.u64.u32 st, $2;
LOOP${:uid}:
ld.relaxed.gpu.global.b32 w, [a];
shr.u32 f, w, 29;
xor.b32 f, f, $3;
sub.u32 h, f, 1;
setp.gt.u32 q, h, 1;
@q bra LOOP${:uid};
and.b32 v, w, 0x1FFFFFFF;
add.u32 acc, acc, v;
setp.eq.u32 q, f, 2;
@q bra DONE${:uid};
sub.u64 a, a, st;
bra LOOP${:uid};
DONE${:uid}:
mov.b32 $0, acc;
}""")

_SPIN_LOOKBACK64 = gl.constexpr("""{
.reg .pred p, q;
.reg .b64 w, f, h, v, acc, a, st, par;
mov.b64 acc, 0;
mov.b64 a, $1;
setp.eq.u64 p, a, 0;
@p bra DONE${:uid};
cvt.u64.u32 st, $2;
cvt.u64.u32 par, $3;
LOOP${:uid}:
ld.relaxed.gpu.global.b64 w, [a];
shr.u64 f, w, 61;
xor.b64 f, f, par;
sub.u64 h, f, 1;
setp.gt.u64 q, h, 1;
@q bra LOOP${:uid};
and.b64 v, w, 0x1FFFFFFFFFFFFFFF;
add.u64 acc, acc, v;
setp.eq.u64 q, f, 2;
@q bra DONE${:uid};
sub.u64 a, a, st;
bra LOOP${:uid};
DONE${:uid}:
mov.b64 $0, acc;
}""")


@gluon.jit
def _digit_base(digit_off_ptr, dig, ROWS: gl.constexpr):
    """The place's digit offsets (0 for rows and segments: rows add each key's row's own in the
    write-back, segments the tile's two segments' to the adjustment)."""
    if ROWS:
        base = dig.to(gl.int64) * 0
    else:
        base = gl.load(digit_off_ptr + dig)
    return base


@gluon.jit
def _publish_aggregate(status_ptr, tile, dig, tot, parity, RADIX: gl.constexpr, FLAG_SHIFT: gl.constexpr):
    """Publish this tile's digit counts (inclusive for tile 0) as soon as they are known."""
    tv = tot.to(status_ptr.dtype.element_ty)
    zero = tv * 0
    first = tile == 0
    gl.atomic_xchg(status_ptr + tile.to(gl.int64) * RADIX + dig,
                   tv | ((zero + gl.where(first, 2, 1) + parity * 4) << FLAG_SHIFT), sem="relaxed")


@gluon.jit
def _digit_lookback_spin(status_ptr, tile, dig, tot, parity, RADIX: gl.constexpr, FLAG_SHIFT: gl.constexpr):
    """Second half of :func:`_digit_lookback` after :func:`_publish_aggregate`, each thread spinning on
    its own digit (no block synchronisation per step); for compiled NVIDIA kernels."""
    tv = tot.to(status_ptr.dtype.element_ty)
    zero = tv * 0
    ptrs = status_ptr + tile.to(gl.int64) * RADIX + dig
    prev = gl.where(dig * 0 + tile > 0, (ptrs - RADIX).to(gl.int64, bitcast=True), 0)
    stride = dig * 0 + RADIX * (status_ptr.dtype.element_ty.primitive_bitwidth // 8)
    par = dig * 0 + parity * 4
    if FLAG_SHIFT == 29:
        excl = gl.inline_asm_elementwise(_SPIN_LOOKBACK32, "=r,l,r,r", [prev, stride, par], dtype=gl.int32,
                                         is_pure=False, pack=1)
    else:
        excl = gl.inline_asm_elementwise(_SPIN_LOOKBACK64, "=l,l,r,r", [prev, stride, par], dtype=gl.int64,
                                         is_pure=False, pack=1)
    if tile > 0:
        gl.atomic_xchg(ptrs, (excl + tv) | ((zero + 2 + parity * 4) << FLAG_SHIFT), sem="relaxed")
    return excl


@triton.jit
def _place_digit(bits, begin_bit, end_bit, p, RADIX_BITS: tl.constexpr):
    """Digit of place ``p`` (bits ``[begin_bit + p*RADIX_BITS, min(.. + RADIX_BITS, end_bit))``)."""
    shift = begin_bit + p * RADIX_BITS
    width = tl.minimum(end_bit - shift, RADIX_BITS)
    return extract_digit(bits, shift, RADIX_BITS) & ((1 << width) - 1)


# ---------------------------------------------------------------- portable (tl) kernels -------

@triton.jit(do_not_specialize=["n", "begin_bit", "end_bit"])
def _histogram_tl_kernel(keys_ptr, hist_ptr, n, begin_bit, end_bit, NUM_PLACES: tl.constexpr,
                         RADIX_BITS: tl.constexpr, DESCENDING: tl.constexpr, TILE: tl.constexpr):
    # (rows as the fast kernel's: num_programs(1) rows of n keys, counted apart)
    RADIX: tl.constexpr = 1 << RADIX_BITS
    pid = tl.program_id(0)
    row = tl.program_id(1)
    offs = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    valid = offs < n
    bits = to_ordered_bits(tl.load(keys_ptr + row.to(tl.int64) * n + offs, mask=valid), DESCENDING)
    bins = tl.arange(0, RADIX)
    for p in tl.static_range(NUM_PLACES):
        d = _place_digit(bits, begin_bit, end_bit, p, RADIX_BITS)
        h = tl.sum(((d[:, None] == bins[None, :]) & valid[:, None]).to(tl.int64), 0)
        tl.atomic_add(hist_ptr + (p * tl.num_programs(1) + row) * RADIX + bins, h, sem="relaxed")


@triton.jit
def _restore_special_keys(key, pos, keys_in, mask, CANONICAL: tl.constexpr):
    """Keys decoded from packed words (:func:`unpack_key_position`) hold canonical bits: with
    ``CANONICAL``, float zeros and NaNs are read back from the input (their signs and payloads)."""
    if CANONICAL and key.dtype.is_floating():
        special = (key == 0) | is_special_float(key)
        key = tl.where(special, tl.load(keys_in + pos, mask=mask & special), key)
    return key


@triton.jit
def _row_position(pos, row_len, col_bits, ROWS: tl.constexpr):
    """The position packed with a key: the flat position, or for a batch of rows of ``row_len``
    keys ``row << col_bits | column`` (the passes read the row there, the last one the column; ``ROWS``
    1). Segments (``ROWS`` 2) pack the flat position: a key's segment follows from where it is."""
    if ROWS == 1:   # (positions < 2**31 here: a 32-bit division)
        p32 = pos.to(tl.int32)
        r = p32 // row_len
        pos = (r.to(tl.int64) << col_bits) | (p32 - r * row_len).to(tl.int64)
    return pos


@triton.jit
def _key_row(key_or_word, flat, row_len, col_bits, VALUE_MODE: tl.constexpr):
    """Row of a key in a batch of rows: from its flat position (first pass, mode 3), else from the
    position packed in its word."""
    if VALUE_MODE == 3:
        r = flat.to(tl.int32) // row_len
    else:
        r = ((key_or_word & 0xFFFFFFFF) >> col_bits).to(tl.int32)
    return r


@triton.jit
def _unpacked_row_position(pos, row_len, col_bits, ROWS: tl.constexpr):
    """Inverse of :func:`_row_position`: ``(flat position, output index)`` (the column for rows)."""
    if ROWS == 1:
        r = pos >> col_bits
        col = pos - (r << col_bits)
        return r * row_len + col, col
    return pos, pos


@triton.jit
def _write_back(keys_out, vals_in, vals_out, offsets_ptr, dest, k, d, pos, mask, row_len, col_bits, seg_first,
                seg_next, seg_begin, RADIX: tl.constexpr, VALUE_MODE: tl.constexpr, DESCENDING: tl.constexpr,
                CANONICAL: tl.constexpr, ROWS: tl.constexpr, DEST_HAS_SEGMENT: tl.constexpr = False):
    """A pass's write-back (both pass kernels): key ``k`` of digit ``d`` read from flat position
    ``pos`` goes to ``dest`` (plus, for ``ROWS``, its row's offset of the digit from the table at
    ``offsets_ptr``), with what ``VALUE_MODE`` carries (see :func:`_onesweep_gluon_kernel`).
    ``ROWS`` 2 (segments): a key read at ``pos`` is in segment ``seg_first`` (which begins at
    ``seg_begin``), or ``seg_first + 1`` from ``seg_next`` (where that one begins) on (see
    :func:`_segment_of_tile`); ``ROWS`` 3: the same, and the last pass writes positions within the
    segment (minus its first position) instead of flat ones. ``DEST_HAS_SEGMENT`` (segments): ``dest``
    already holds the segment's digit offset (the fast kernel adds the tile's two segments' per digit).
    """
    if ROWS == 1:   # each key's row's offsets (see _digit_offsets_kernel)
        row = _key_row(k, pos, row_len, col_bits, VALUE_MODE)
        dest += tl.load(offsets_ptr + row.to(tl.int64) * RADIX + d, mask=mask, other=0)
    elif ROWS >= 2:
        second = pos >= seg_next
        if not DEST_HAS_SEGMENT:
            dest += tl.load(offsets_ptr + (seg_first + second.to(tl.int64)) * RADIX + d, mask=mask, other=0)
        if ROWS == 3:
            seg_begin = tl.where(second, seg_next, seg_begin)
    if VALUE_MODE == 3:     # packed positions, first pass: key bits and position in one word
        tl.store(keys_out + dest, pack_key_position(to_ordered_bits(k, DESCENDING, CANONICAL),
                                                    _row_position(pos, row_len, col_bits, ROWS)), mask=mask)
    elif VALUE_MODE == 4:   # packed positions, last pass: the key and its int64 position (or column)
        key, packed_pos = unpack_key_position(k, keys_out.dtype.element_ty, DESCENDING)
        flat, index = _unpacked_row_position(packed_pos, row_len, col_bits, ROWS)
        key = _restore_special_keys(key, flat, vals_in, mask, CANONICAL)
        tl.store(keys_out + dest, key, mask=mask)
        if ROWS == 3:
            index -= seg_begin
        tl.store(vals_out + dest, index, mask=mask)
    else:
        tl.store(keys_out + dest, k, mask=mask)
    if VALUE_MODE == 1:
        v = tl.load(vals_in + pos, mask=mask)
        if ROWS == 3:   # (64-bit keys: int32 positions apart; the last pass widens them to int64)
            if vals_out.dtype.element_ty == tl.int64 and vals_in.dtype.element_ty == tl.int32:
                v = v.to(tl.int64) - seg_begin
        tl.store(vals_out + dest, v.to(vals_out.dtype.element_ty), mask=mask)   # int32 -> int64 positions too
    elif VALUE_MODE == 2:
        tl.store(vals_out + dest, pos.to(vals_out.dtype.element_ty), mask=mask)


@triton.jit
def _segment_of_tile(hist_ptr, seg_off, tile, n, TILE: tl.constexpr):
    """Segments (``ROWS`` 2, 3): ``(first segment, where the next one begins, where the first one
    begins)`` of pass tile ``tile``.

    Each pass leaves every segment's keys in the segment's own slice (its keys land at its digit
    offsets), so a position's segment is the same in every pass, and a tile of ``TILE`` positions
    spans at most two segments when every segment holds ``TILE`` keys or more (the launcher's
    condition). The tables are int64 words at ``hist_ptr + seg_off``: the first segment of each
    tile, then every segment's first position (and ``n`` after the last)."""
    n_tiles = (n.to(tl.int64) + TILE - 1) // TILE   # (n is an int32 argument below 2**31: no wrap)
    first = tl.load(hist_ptr + seg_off + tile)
    starts = hist_ptr + seg_off + n_tiles + first
    return first, tl.load(starts + 1), tl.load(starts)


@triton.jit(do_not_specialize=["n", "seg_off", "begin_bit", "end_bit", "n_segs"])
def _segment_histogram_kernel(keys_ptr, hist_ptr, n, seg_off, begin_bit, end_bit, n_segs,
                              NUM_PLACES: tl.constexpr, RADIX_BITS: tl.constexpr, DESCENDING: tl.constexpr,
                              TILE: tl.constexpr):
    """Upfront histogram of a segmented sort: ``hist[place][digit][segment]`` (segments innermost: the
    prefix over segments then runs along rows), one program per pass tile (see
    :func:`_segment_of_tile`). The tile's keys of its two segments count in one histogram of
    ``2 * RADIX`` bins (the second segment's digits shifted by ``RADIX``)."""
    RADIX: tl.constexpr = 1 << RADIX_BITS
    tile = tl.program_id(0)
    offs = tile.to(tl.int64) * TILE + tl.arange(0, TILE)
    valid = offs < n
    k = tl.load(keys_ptr + offs, mask=valid)
    first, nxt, _ = _segment_of_tile(hist_ptr, seg_off, tile, n, TILE)
    second = (offs >= nxt).to(tl.int32) * RADIX
    bits = to_ordered_bits(k, DESCENDING, True)
    b = tl.arange(0, 2 * RADIX)
    live = (b < RADIX) | (first + 1 < n_segs)
    for p in tl.static_range(NUM_PLACES):
        h = block_histogram(_place_digit(bits, begin_bit, end_bit, p, RADIX_BITS).to(tl.int32) + second,
                            2 * RADIX, valid_items=n - tile.to(tl.int64) * TILE)
        tl.atomic_add(hist_ptr + (p * RADIX + b % RADIX).to(tl.int64) * n_segs + first + b // RADIX, h.to(tl.int64),
                      mask=live & (h != 0), sem="relaxed")


@triton.jit(do_not_specialize=["n_segs"])
def _segment_prefix_kernel(hist_ptr, n_segs, BLOCK: tl.constexpr):
    """In place, row ``program_id(0)`` (a place and digit) of the counts ``hist[place][digit][segment]``
    of a segmented sort becomes its inclusive prefix over segments (``BLOCK`` segments a step)."""
    row = hist_ptr + tl.program_id(0).to(tl.int64) * n_segs
    carry = tl.zeros([], tl.int64)
    s0 = 0
    while s0 < n_segs:   # (not a range over a runtime bound: the interpreter refuses that here)
        s = s0 + tl.arange(0, BLOCK)
        m = s < n_segs
        c = tl.load(row + s, mask=m, other=0)
        tl.store(row + s, tl.cumsum(c, 0) + carry, mask=m)
        carry += tl.sum(c, 0)
        s0 += BLOCK


@triton.jit(do_not_specialize=["n_segs", "starts_off", "offsets_off"])
def _segment_offsets_kernel(hist_ptr, n_segs, starts_off, offsets_off, RADIX: tl.constexpr, SEGS: tl.constexpr):
    """Digit offsets of a segmented sort, ``SEGS`` segments of place ``program_id(1)`` per program:
    ``offsets[place][segment][digit]`` (at ``hist_ptr + offsets_off``) = the segment's first
    position + the digit's exclusive prefix within the segment - its count in all earlier segments.
    From the counts' inclusive prefix over segments ``hist[place][digit][segment]``
    (:func:`_segment_prefix_kernel`): a segment's counts are its prefix minus the previous segment's,
    and the two exclusive prefixes add up to the digits' inclusive prefix within the segment minus the
    prefix over segments."""
    p = tl.program_id(1)   # (segments along grid axis 0: no 65535 limit)
    s = tl.program_id(0) * SEGS + tl.arange(0, SEGS)
    d = tl.arange(0, RADIX)
    m = (s < n_segs)[None, :]
    idx = (p * RADIX + d[:, None]).to(tl.int64) * n_segs + s[None, :]
    upto = tl.load(hist_ptr + idx, mask=m, other=0)
    before = tl.load(hist_ptr + idx - 1, mask=m & (s > 0)[None, :], other=0)
    start = tl.load(hist_ptr + starts_off + s, mask=s < n_segs, other=0)
    off = start[None, :] + tl.cumsum(upto - before, 0) - upto
    tl.store(hist_ptr + offsets_off + (p * n_segs + s[None, :]).to(tl.int64) * RADIX + d[:, None], off, mask=m)


@triton.jit
def _digit_offsets_kernel(hist_ptr, summary_ptr, row_len, rows, NUM_PLACES: tl.constexpr, RADIX: tl.constexpr,
                          ROWS_BLOCK: tl.constexpr = 1, PDL: tl.constexpr = 0):
    """Destination offsets of place ``program_id(0)`` for row ``program_id(1)`` of ``rows`` rows
    (the grid's second dimension, at most ``ROWS_BLOCK``) of ``row_len`` keys, from the counts ``hist[place][row][digit]``,
    written after them and the row of special-key counts. The row-0 programs also write the summary
    the host reads back (``NUM_PLACES + 1`` words at ``summary_ptr``): the count of float keys the
    canonicalisation changes, then each place's largest digit count over all rows (the key count when
    every key shares one digit).

    One row (a plain sort): the exclusive prefix of the digit counts. Rows: ``row * row_len`` + the
    row's exclusive prefix - the counts of the digit in all earlier rows; the passes' look-back
    counts keys of every row before a tile, so subtracting the earlier rows' counts leaves the
    count within the row, and each row lands in its own slice. ``PDL``: a kernel of the sort's launch
    chain (:mod:`tritoncub.agent.launch_chain`), as are the histogram and the fast-path passes."""
    chain_link(PDL)
    p = tl.program_id(0)
    r = tl.program_id(1)
    d = tl.arange(0, RADIX)
    h = tl.load(hist_ptr + (p * rows + r) * RADIX + d)
    earlier_rows = tl.zeros([RADIX], tl.int64)
    CH: tl.constexpr = 16 if ROWS_BLOCK > 16 else ROWS_BLOCK
    for q0 in tl.static_range(0, ROWS_BLOCK, CH):
        q = q0 + tl.arange(0, CH)
        blk = tl.load(hist_ptr + (p * rows + q[:, None]) * RADIX + d[None, :], mask=(q < r)[:, None], other=0)
        earlier_rows += tl.sum(blk, 0)
    off = r.to(tl.int64) * row_len + tl.cumsum(h, 0) - h - earlier_rows
    tl.store(hist_ptr + ((NUM_PLACES + p) * rows + r + 1) * RADIX + d, off)
    if r == 0:
        total = tl.zeros([RADIX], tl.int64)
        for q0 in tl.static_range(0, ROWS_BLOCK, CH):
            q = q0 + tl.arange(0, CH)
            total += tl.sum(tl.load(hist_ptr + (p * rows + q[:, None]) * RADIX + d[None, :], mask=(q < rows)[:, None],
                                    other=0), 0)
        tl.store(summary_ptr + 1 + p, tl.max(total, 0))
        if p == 0:
            tl.store(summary_ptr, tl.load(hist_ptr + NUM_PLACES * rows * RADIX))


@triton.jit(do_not_specialize=["n", "shift", "width", "status_off", "counter_off", "hist_off", "parity", "shared_off",
                              "row_len", "col_bits", "seg_off"])
def _onesweep_tl_kernel(keys_in, keys_out, vals_in, vals_out, status_ptr, counter_ptr, hist_ptr,
                        n, shift, width, status_off, counter_off, hist_off, parity, row_len, col_bits, shared_off,
                        seg_off,
                        RADIX_BITS: tl.constexpr, DESCENDING: tl.constexpr, VALUE_MODE: tl.constexpr,
                        FLAG_SHIFT: tl.constexpr, TILE: tl.constexpr, WINDOW: tl.constexpr,
                        ROWS: tl.constexpr = False, SKIP_SHARED: tl.constexpr = False):
    RADIX: tl.constexpr = 1 << RADIX_BITS
    if SKIP_SHARED:   # (as the fast kernel's)
        if tl.load(hist_ptr + shared_off) == n:
            return
    status_ptr += status_off
    tile = tl.atomic_add(counter_ptr + counter_off, 1, sem="relaxed")
    base = tile.to(tl.int64) * TILE
    idx = tl.arange(0, TILE)
    offs = base + idx
    valid = offs < n
    k = tl.load(keys_in + offs, mask=valid)
    # (VALUE_MODE as the fast kernel's: 4 reads packed words, plain bits, and decodes descending keys)
    d = extract_digit(to_ordered_bits(k, DESCENDING and VALUE_MODE != 4), shift, RADIX_BITS) & ((1 << width) - 1)
    ranks, excl, counts = block_radix_rank(d, RADIX_BITS, valid)
    if ROWS >= 2:
        seg_first, seg_next, seg_begin = _segment_of_tile(hist_ptr, seg_off, tile, n, TILE)
    else:
        seg_first, seg_next, seg_begin = 0, 0, 0
    dig = tl.arange(0, RADIX)
    earlier = _digit_lookback(status_ptr, tile, dig, tl.arange(0, WINDOW), counts, parity, RADIX, FLAG_SHIFT)
    # destination = digit offset + keys of the digit in earlier tiles + rank among the tile's
    # keys of the digit (= tile rank - tile's exclusive digit prefix)
    adj = earlier.to(tl.int64) - excl.to(tl.int64)
    if not ROWS:
        adj += tl.load(hist_ptr + hist_off + dig)
    onehot = d[:, None] == dig[None, :]
    dest = tl.sum(tl.where(onehot, adj[None, :], 0), 1) + ranks.to(tl.int64)
    _write_back(keys_out, vals_in, vals_out, hist_ptr + hist_off, dest, k, d, offs, valid, row_len, col_bits,
                seg_first, seg_next, seg_begin, RADIX, VALUE_MODE, DESCENDING, True, ROWS)


@triton.jit(do_not_specialize=["n", "begin_bit", "end_bit"])
def _small_sort_kernel(keys_in, keys_out, vals_in, vals_out, n, begin_bit, end_bit, DESCENDING: tl.constexpr,
                       VALUE_MODE: tl.constexpr, BLOCK: tl.constexpr):
    """Single-program sort of up to BLOCK keys of at most 32 bits: one ``tl.sort`` of
    ``(bit-range digits << log2(BLOCK)) | index`` (the index makes it stable), then gathers."""
    LOG: tl.constexpr = BLOCK.bit_length() - 1
    o = tl.arange(0, BLOCK)
    m = o < n
    k = tl.load(keys_in + o, mask=m)
    bits = to_ordered_bits(k, DESCENDING).to(tl.int64)
    width = end_bit - begin_bit
    sub = (bits >> begin_bit) & ((tl.full([BLOCK], 1, tl.int64) << width) - 1)
    sub = tl.where(m, sub, tl.full([BLOCK], 1, tl.int64) << 32)      # padding sorts last
    src = (tl.sort((sub << LOG) | o.to(tl.int64)) & (BLOCK - 1)).to(tl.int32)
    tl.store(keys_out + o, tl.gather(k, src, 0), mask=m)
    if VALUE_MODE == 1:
        tl.store(vals_out + o, tl.gather(tl.load(vals_in + o, mask=m), src, 0).to(vals_out.dtype.element_ty), mask=m)
    elif VALUE_MODE == 2:
        tl.store(vals_out + o, src.to(vals_out.dtype.element_ty), mask=m)


# ---------------------------------------------------------------- fast (Gluon) kernels --------

@gluon.jit
def _add(a, b):
    return a + b


@gluon.jit(do_not_specialize=["n_tiles", "begin_bit", "end_bit"])  # n stays specialised: vector loads
def _histogram_gluon_kernel(keys_ptr, hist_ptr, n, n_tiles, begin_bit, end_bit,
                            NUM_PLACES: gl.constexpr, RADIX_BITS: gl.constexpr, DESCENDING: gl.constexpr,
                            WARPS: gl.constexpr, ITEMS: gl.constexpr, SMEM_ROWS: gl.constexpr,
                            COUNT_SPECIAL: gl.constexpr = False, PREFETCH: gl.constexpr = True,
                            PDL: gl.constexpr = 0, PLACES: gl.constexpr = 0):
    """All digit places' histograms (``hist_ptr``: NUM_PLACES x rows x RADIX int64 counts), per-warp
    shared counters (red.shared), persistent over tiles. The keys are ``num_programs(1)`` rows of
    ``n`` keys (one row: a plain sort), ``n_tiles`` tiles per row, each row counted apart.
    ``PLACES`` (0: all ``NUM_PLACES``; else a divisor of it): the places a program counts, places
    ``PLACES * program_id(2)`` on: a small input's few programs split the places between them instead
    of each counting every place of its tiles.
    ``COUNT_SPECIAL`` (float keys): also adds the number of keys the canonicalisation changes
    (``-0.0``, NaNs other than ``+qNaN``) to ``hist_ptr[NUM_PLACES * rows * RADIX]`` (the first group
    of places). ``PREFETCH``: each tile's keys are loaded before the previous tile's are counted
    (measured on the H100, 2^28 keys: 534 us against 547).
    ``PDL``: the first kernel of the sort's launch chain."""
    chain_link_gluon(PDL)
    OWN: gl.constexpr = NUM_PLACES if PLACES == 0 else PLACES   # places counted by this program
    gl.static_assert(NUM_PLACES % OWN == 0)
    place0 = gl.program_id(2) * OWN
    RADIX: gl.constexpr = 1 << RADIX_BITS
    TILE: gl.constexpr = WARPS * ITEMS * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    LH: gl.constexpr = gl.BlockedLayout([1, RADIX // 32], [1, 32], [WARPS, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [SMEM_ROWS, RADIX], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    for q in gl.static_range(OWN):
        smem.slice(q * WARPS, WARPS, 0).store(gl.zeros([WARPS, RADIX], gl.int32, LH))
    gl.thread_barrier()
    i = gl.arange(0, TILE, layout=LB)
    wid = i // (32 * ITEMS)
    special = i * 0
    row = gl.program_id(1)
    rows = gl.num_programs(1)
    row_ptr = keys_ptr + row.to(gl.int64) * n
    step = gl.num_programs(0)
    if PREFETCH:
        first = gl.program_id(0).to(gl.int64) * TILE + i
        k_next = gl.load(row_ptr + first, mask=first < n)
    for t in range(gl.program_id(0), n_tiles, step):
        offs = t.to(gl.int64) * TILE + i
        valid = offs < n
        if PREFETCH:   # the next tile's keys are loaded before this one's are counted
            k = k_next
            k_next = gl.load(row_ptr + offs + step * TILE, mask=offs + step * TILE < n)
        else:
            k = gl.load(row_ptr + offs, mask=valid)
        if COUNT_SPECIAL:
            bits, changed = to_ordered_bits_noting_changes(k, DESCENDING)
            special += (changed & valid).to(gl.int32)
        else:
            bits = to_ordered_bits(k, DESCENDING)
        for q in gl.static_range(OWN):
            d = _place_digit(bits, begin_bit, end_bit, place0 + q, RADIX_BITS)
            # keys past n count as digit 0 (taken off at the end)
            word = (q * WARPS + wid) * RADIX + gl.where(valid, d, 0)
            smem_count_words(word)
    gl.thread_barrier()
    dig = gl.arange(0, RADIX, layout=gl.SliceLayout(0, LH))
    # the padding keys of the last tile were counted as digit 0: program 0 takes them off again
    pad = gl.where((dig == 0) & (gl.program_id(0) == 0), n_tiles.to(gl.int64) * TILE - n, 0)
    for q in gl.static_range(OWN):
        c = gl.sum(smem.slice(q * WARPS, WARPS, 0).load(LH), 0)
        # relaxed: only the sums matter (the default acq_rel fences every atomic)
        gl.atomic_add(hist_ptr + ((place0 + q) * rows + row) * RADIX + dig, c.to(gl.int64) - pad, sem="relaxed")
    if COUNT_SPECIAL:
        if gl.program_id(2) == 0:
            gl.atomic_add(hist_ptr + NUM_PLACES * rows * RADIX, gl.sum(special, 0).to(gl.int64), sem="relaxed")


@gluon.jit(do_not_specialize=["n", "seg_off", "begin_bit", "end_bit", "n_segs"])
def _segment_histogram_gluon_kernel(keys_ptr, hist_ptr, n, seg_off, begin_bit, end_bit, n_segs,
                                    NUM_PLACES: gl.constexpr, RADIX_BITS: gl.constexpr, DESCENDING: gl.constexpr,
                                    WARPS: gl.constexpr, ITEMS: gl.constexpr, TILES: gl.constexpr,
                                    SMEM_ROWS: gl.constexpr):
    """:func:`_segment_histogram_kernel` on the fast path: one program per ``TILES`` consecutive pass
    tiles, which span at most ``TILES + 1`` segments (each holds a tile or more), counts their keys in
    shared memory (``red.shared``; a row of counters per place and segment among those;
    ``SMEM_ROWS``: ``NUM_PLACES * (TILES + 1)`` rounded up to a power of two), then adds the non-zero
    counts to the segments' columns (one tile per program paid a global atomic per place, digit and
    segment of every tile: 118 us for 2^24 keys in rows of 16384 on the H100)."""
    RADIX: gl.constexpr = 1 << RADIX_BITS
    TILE: gl.constexpr = WARPS * ITEMS * 32
    SEGS: gl.constexpr = TILES + 1
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    LH: gl.constexpr = gl.BlockedLayout([1, RADIX // 32], [1, 32], [WARPS, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [SMEM_ROWS, RADIX], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    smem.store(gl.zeros([SMEM_ROWS, RADIX], gl.int32, LH))
    t0 = gl.program_id(0) * TILES
    n_tiles = (n.to(gl.int64) + TILE - 1) // TILE
    first0, _, _ = _segment_of_tile(hist_ptr, seg_off, t0, n, TILE)
    gl.thread_barrier()
    for j in range(TILES):
        tile = t0 + j
        if tile < n_tiles:
            offs = tile.to(gl.int64) * TILE + gl.arange(0, TILE, layout=LB)
            valid = offs < n
            k = gl.load(keys_ptr + offs, mask=valid)
            first, nxt, _ = _segment_of_tile(hist_ptr, seg_off, tile, n, TILE)
            seg = (first - first0).to(gl.int32) + (offs >= nxt).to(gl.int32)   # (among the program's)
            bits = to_ordered_bits(k, DESCENDING, True)
            for p in gl.static_range(NUM_PLACES):
                d = _place_digit(bits, begin_bit, end_bit, p, RADIX_BITS)
                smem_count_words_if((p * SEGS + seg) * RADIX + d, valid.to(gl.int32))
    gl.thread_barrier()
    dig = gl.arange(0, RADIX, layout=gl.SliceLayout(0, LH))
    for p in gl.static_range(NUM_PLACES):
        for h in gl.static_range(SEGS):
            c = gl.sum(smem.slice(p * SEGS + h, 1, 0).load(LH), 0)
            live = (c != 0) & (first0 + h < n_segs)
            gl.atomic_add(hist_ptr + (p * RADIX + dig).to(gl.int64) * n_segs + first0 + h, c.to(gl.int64), mask=live,
                          sem="relaxed")


_MOV32 = gl.constexpr("mov.b32 $0, $1;")


@gluon.jit
def _opaque32(x):
    """``x`` (int32) through an opaque move: later code recomputing from it is not merged with code
    computed from ``x`` itself."""
    return gl.inline_asm_elementwise(_MOV32, "=r,r", [x], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _slot_destination(adj_word, slot, RADIX: gl.constexpr, INDEX64: gl.constexpr):
    """Global destination of sorted slot ``slot`` whose digit's adjustment (output offset of the digit
    minus its first slot in the tile) is at shared word ``adj_word`` (low word; the high one is
    ``RADIX`` words on when ``INDEX64``; else every destination is below 2**31)."""
    if INDEX64:
        lo = smem_load_words(adj_word).to(gl.uint32).to(gl.int64)
        hi = smem_load_words(adj_word + RADIX).to(gl.int64)
        return (hi << 32) + lo + slot
    else:
        return (smem_load_words(adj_word) + slot).to(gl.int64)


@gluon.jit
def _warp_rank(word, RADIX_BITS: gl.constexpr, RANK_PACK: gl.constexpr, RANK_MATCH: gl.constexpr):
    """Rank of each key among its warp's earlier keys of the same counter word, bumping the counters
    (``RANK_MATCH`` 0: peers by ``match.any``, ``RANK_PACK`` slots per asm block; 1: by ballots)."""
    if RANK_MATCH:
        return warp_ballot_rank(word, RADIX_BITS)
    else:
        return warp_match_rank_packed(word, RANK_PACK)


@gluon.jit(do_not_specialize=["n", "shift", "width", "status_off", "counter_off", "hist_off", "parity",
                             "row_len", "col_bits", "shared_off", "seg_off"])
def _onesweep_gluon_kernel(keys_in, keys_out, vals_in, vals_out, status_ptr, counter_ptr, hist_ptr,
                           n, shift, width, status_off, counter_off, hist_off, parity, row_len, col_bits, shared_off,
                           seg_off,
                           RADIX_BITS: gl.constexpr, DESCENDING: gl.constexpr,
                           VALUE_MODE: gl.constexpr, FLAG_SHIFT: gl.constexpr, WARPS: gl.constexpr,
                           ITEMS: gl.constexpr, SMEM_ROWS: gl.constexpr, WINDOW: gl.constexpr,
                           KEYS_IN_SMEM: gl.constexpr, COUNTS_COLUMNS: gl.constexpr, INDEX64: gl.constexpr,
                           RANK_PACK: gl.constexpr, EXCHANGE_APART: gl.constexpr, EARLY_COUNTS: gl.constexpr = 0,
                           RANK_MATCH: gl.constexpr = 0, CANONICAL: gl.constexpr = True,
                           RECOMPUTE_WORD: gl.constexpr = False, FUSED_EXCHANGE: gl.constexpr = False,
                           ROWS: gl.constexpr = False, PROBE: gl.constexpr = 0, SKIP_SHARED: gl.constexpr = False,
                           PDL: gl.constexpr = 0, VALUES_IN_SMEM: gl.constexpr = False):
    """One onesweep pass over one tile (see the module doc).

    The pass's look-back words start at ``status_ptr + status_off``, its tile counter is
    ``counter_ptr[counter_off]`` and its place's digit offsets (the exclusive prefix of its digit
    counts, :func:`_digit_offsets_kernel`) are ``hist_ptr[hist_off:][:RADIX]``: offsets into shared
    scratch, so a launcher needs no views.

    Shared words: [0, W*RADIX) per-warp counters, then tile bases; the exchange buffer (the tile's
    source indices in sorted order, TILE words; or its keys themselves, ``KEYS_IN_SMEM``: TILE words
    of 32-bit keys or 2 * TILE of 64-bit ones at 8-byte words, then, where the pass needs positions,
    TILE words of source indices; with ``VALUES_IN_SMEM``, TILE items of the wider of key and value,
    holding the keys and then the values, then TILE words of each sorted slot's digit) overlapping
    them (EXCHANGE_APART=0: needs a
    barrier between the last base read and the first exchange write) or after them; then the
    per-digit destination adjustment (low, high 32 bits; for segments, ``ROWS`` 2 and 3, two more
    rows: the adjustment of the tile's second segment). ``FUSED_EXCHANGE`` puts the exchange
    buffer first and the counters after it, and the ranking's asm block writes each key there as
    soon as its position is known (see ``warp_ballot_rank_store``).

    ``EARLY_COUNTS`` (CUB's early counts): the tile's digit counts come first, from one
    ``red.shared.add`` per key; they are published to successors before the ranking, scanned into
    each warp's starting offset per digit, and the match-based ranking then bumps those offsets, so
    it yields every key's final position in the tile. Otherwise the ranking counts within each warp
    and the scanned counters are added afterwards. ``CANONICAL=False`` (float keys of which the
    canonicalisation changes none, counted by the histogram: no ``-0.0``, no NaN but ``+qNaN``): the
    keys' order bits without the canonicalisation.

    ``VALUE_MODE``: 0 keys only, 1 values carried, 2 positions generated (first pass); packed
    positions (keys of up to 32 bits sorted with their positions, :func:`pack_key_position`): 3 the
    first pass, keys in, uint64 words out; middle passes are mode 0 over the words (``shift`` + 32,
    not descending); 4 the last pass, words in, keys and int64 positions out (``vals_in``: the input
    keys, re-read for -0.0 and NaN, which the words hold in canonical form). ``ROWS`` (packed
    positions): a batch of rows of ``row_len`` keys sorted each on its own, positions packed as
    ``row << col_bits | column`` (:func:`_row_position`); ``hist_off`` then locates a table of
    offsets per row and digit (:func:`_digit_offsets_kernel`) that each key adds for its row, and the
    last pass writes columns. ``ROWS`` 2: ragged segments, each at least a tile long, the positions
    flat; a key's segment follows from where it is read (:func:`_segment_of_tile`, tables at
    ``hist_ptr + seg_off``); ``ROWS`` 3: the same, the last pass writing positions within the segment.
    ``SKIP_SHARED`` (a first pass launched before the host has seen the digit
    counts): the program does nothing when ``hist_ptr[shared_off]``, the place's largest digit count,
    is ``n`` (all keys share the digit; the host then runs the next pass as the first). ``PDL``: a
    kernel of the sort's launch chain (after the digit offsets or the pass before).
    """
    chain_link_gluon(PDL)
    if SKIP_SHARED:
        if gl.load(hist_ptr + shared_off) == n:
            return
    RADIX: gl.constexpr = 1 << RADIX_BITS
    TILE: gl.constexpr = WARPS * ITEMS * 32
    # the last packed pass reads words (plain unsigned bits); DESCENDING then applies to decoding
    KEY_DESC: gl.constexpr = DESCENDING and VALUE_MODE != 4
    L3: gl.constexpr = gl.BlockedLayout([1, ITEMS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    LH: gl.constexpr = gl.BlockedLayout([1, RADIX // 32], [1, 32], [WARPS, 1], [1, 0])
    LD: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    LS: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    # words of the exchange buffer per key: 64-bit keys exchanged themselves take two; passes that
    # need each key's source position (values gathered back, generated positions, segments)
    # exchanging keys keep it in a second part of the buffer (SRC: its first word)
    XW: gl.constexpr = 2 if (KEYS_IN_SMEM and keys_in.dtype.element_ty.primitive_bitwidth == 64) else 1
    # VALUES_IN_SMEM (CUB's exchange of values; VALUE_MODE 1, ROWS 0, keys in shared memory, values of
    # 4 or 8 bytes): after the keys' write-back the values go through the keys' part of the buffer
    # (XR words per item) by the ranks kept in registers, and each sorted slot's digit waits in the
    # second part (SRC: its first word)
    VW: gl.constexpr = 2 if vals_in.dtype.element_ty.primitive_bitwidth == 64 else 1
    XR: gl.constexpr = (VW if VW > XW else XW) if VALUES_IN_SMEM else XW
    WITH_SRC: gl.constexpr = KEYS_IN_SMEM and (VALUES_IN_SMEM or VALUE_MODE == 1 or VALUE_MODE == 2
                                               or VALUE_MODE == 3 or ROWS >= 2)
    XWORDS: gl.constexpr = TILE * (XR + 1) if WITH_SRC else TILE * XW
    if FUSED_EXCHANGE:      # exchange buffer first, then the counters (CNT: their first word)
        XOFF: gl.constexpr = 0
        CNT: gl.constexpr = XWORDS
        ADJ: gl.constexpr = XWORDS + WARPS * RADIX
    elif EXCHANGE_APART:
        XOFF: gl.constexpr = WARPS * RADIX
        CNT: gl.constexpr = 0
        ADJ: gl.constexpr = WARPS * RADIX + XWORDS
    else:
        XOFF: gl.constexpr = 0
        CNT: gl.constexpr = 0
        ADJ: gl.constexpr = WARPS * RADIX if WARPS * RADIX > XWORDS else XWORDS
    SRC: gl.constexpr = XOFF + TILE * XR

    smem = gl.allocate_shared_memory(gl.int32, [SMEM_ROWS, RADIX], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    smem.slice(CNT // RADIX, WARPS, 0).store(gl.zeros([WARPS, RADIX], gl.int32, LH))
    status_ptr += status_off
    digit_off_ptr = hist_ptr + hist_off
    tile = gl.atomic_add(counter_ptr + counter_off, 1, sem="relaxed")
    base = tile.to(gl.int64) * TILE
    if ROWS >= 2:
        seg_first, seg_next, seg_begin = _segment_of_tile(hist_ptr, seg_off, tile, n, TILE)
    else:
        seg_first, seg_next, seg_begin = 0, 0, 0

    w = gl.arange(0, WARPS, layout=gl.SliceLayout(1, gl.SliceLayout(2, L3)))
    s = gl.arange(0, ITEMS, layout=gl.SliceLayout(0, gl.SliceLayout(2, L3)))
    ln = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(1, L3)))
    w3 = gl.expand_dims(gl.expand_dims(w, 1), 2)
    local = w3 * (32 * ITEMS) + gl.expand_dims(gl.expand_dims(s, 0), 2) * 32 + gl.expand_dims(gl.expand_dims(ln, 0), 1)
    # keys of this tile (32-bit compares: the tile's remainder fits)
    rem = gl.minimum(n - base, TILE).to(gl.int32)
    valid = local < rem
    k = gl.load(keys_in + base + local, mask=valid)
    d = extract_digit(to_ordered_bits(k, KEY_DESC, CANONICAL), shift, RADIX_BITS) & ((1 << width) - 1)
    # keys past n (the last tile's end) take the largest digit: they rank after every key of the tile,
    # so the real keys' positions are unchanged, and the write-back skips positions >= rem (their
    # counts reach only the last tile's status words, which nothing reads)
    word = CNT + w3 * RADIX + gl.where(valid, d, RADIX - 1)
    gl.thread_barrier()
    if not EARLY_COUNTS:
        rank = _warp_rank(word, RADIX_BITS, RANK_PACK, RANK_MATCH)
    else:
        smem_count_words(word)
    gl.thread_barrier()

    if COUNTS_COLUMNS:
        # each thread holds one digit's counts of every warp: the scan over warps stays in-thread
        LC: gl.constexpr = gl.BlockedLayout([WARPS, 1], [1, 32], [1, WARPS], [1, 0])
        cnt = smem.slice(CNT // RADIX, WARPS, 0).load(LC)
        tot = gl.convert_layout(gl.sum(cnt, 0), LD)
        if PROBE == 0 and WINDOW == 0 and EARLY_COUNTS:
            _publish_aggregate(status_ptr, tile, gl.arange(0, RADIX, layout=LD), tot, parity, RADIX, FLAG_SHIFT)
        wexcl = gl.associative_scan(cnt, 0, _add) - cnt
        texcl = gl.associative_scan(tot, 0, _add) - tot
        # (the compiler puts a barrier between this load and store of one allocation: threads holding
        # copies of a column, when 32 * WARPS > RADIX, all read before any writes)
        smem.slice(CNT // RADIX, WARPS, 0).store(wexcl + gl.expand_dims(gl.convert_layout(texcl, gl.SliceLayout(0, LC)), 0))
    else:
        cnt = smem.slice(CNT // RADIX, WARPS, 0).load(LH)
        wexcl = gl.associative_scan(cnt, 0, _add) - cnt
        tot = gl.convert_layout(gl.sum(cnt, 0), LD)
        if PROBE == 0 and WINDOW == 0 and EARLY_COUNTS:
            _publish_aggregate(status_ptr, tile, gl.arange(0, RADIX, layout=LD), tot, parity, RADIX, FLAG_SHIFT)
        texcl = gl.associative_scan(tot, 0, _add) - tot
        gl.thread_barrier()
        # tile-local sorted position of every key -> exchange buffer (source index, sorted order)
        smem.slice(CNT // RADIX, WARPS, 0).store(wexcl + gl.expand_dims(gl.convert_layout(texcl, gl.SliceLayout(0, LH)), 0))
    if PROBE == 0 and WINDOW == 0 and not EARLY_COUNTS:
        # successors may use this tile's counts from now on
        _publish_aggregate(status_ptr, tile, gl.arange(0, RADIX, layout=LD), tot, parity, RADIX, FLAG_SHIFT)
    gl.thread_barrier()
    if EARLY_COUNTS:
        if RECOMPUTE_WORD and k.dtype.primitive_bitwidth == 32:
            # the counter words again, from keys the compiler cannot prove equal to the ones above:
            # ``word`` then need not stay live (in registers) across the scan (32-bit keys)
            k_again = _opaque32(k.to(gl.int32, bitcast=True)).to(k.dtype, bitcast=True)
            d_again = extract_digit(to_ordered_bits(k_again, KEY_DESC, CANONICAL), shift, RADIX_BITS) & ((1 << width) - 1)
            word = CNT + w3 * RADIX + gl.where(valid, d_again, RADIX - 1)
        # the counters hold each warp's first position per digit: the ranking gives final positions
        if FUSED_EXCHANGE:   # and each key goes to the exchange buffer in the same asm block
            if VALUES_IN_SMEM and XW == 2:   # (the ranks stay in registers for the values)
                pos = warp_ballot_rank_store64(word, k, RADIX_BITS)
            elif VALUES_IN_SMEM:
                pos = warp_ballot_rank_store(word, k.to(gl.int32, bitcast=True), RADIX_BITS)
            elif WITH_SRC:
                warp_ballot_rank_store_with(word, k, local, RADIX_BITS, SRC)
            elif KEYS_IN_SMEM and XW == 2:
                warp_ballot_rank_store64(word, k, RADIX_BITS)
            elif KEYS_IN_SMEM:
                warp_ballot_rank_store(word, k.to(gl.int32, bitcast=True), RADIX_BITS)
            else:
                warp_ballot_rank_store(word, local, RADIX_BITS)
        else:
            pos = _warp_rank(word, RADIX_BITS, RANK_PACK, RANK_MATCH)
    else:
        pos = smem_load_words(word) + rank
    if not FUSED_EXCHANGE:
        if not EXCHANGE_APART:
            gl.thread_barrier()
        if KEYS_IN_SMEM:   # exchange the keys themselves (64-bit keys: 8-byte words, XOFF even)
            if XW == 2:
                smem_store_dwords(XOFF // 2 + pos, k)
            else:
                smem_store_words(XOFF + pos, k.to(gl.int32, bitcast=True))
            if WITH_SRC and not VALUES_IN_SMEM:   # and where each came from
                smem_store_words(SRC + pos, local)
        else:              # exchange source indices; keys and values are gathered back (L1/L2 hits)
            smem_store_words(XOFF + pos, local)
    # chain the tile's digit counts with the tiles before it
    # (PROBE: measurement switch of the probes only; 1 skips the look-back, 2 also the scatter:
    #  wrong results, never used by the launchers)
    # (ROWS 1: each key adds its row's offset of its digit in the write-back instead; 2, 3: the tile's
    # two segments' offsets join the adjustment below)
    if PROBE >= 1:
        dig = gl.arange(0, RADIX, layout=LD)
        adj = _digit_base(digit_off_ptr, dig, ROWS) - texcl.to(gl.int64)
    elif WINDOW == 0:
        dig = gl.arange(0, RADIX, layout=LD)
        earlier = _digit_lookback_spin(status_ptr, tile, dig, tot, parity, RADIX, FLAG_SHIFT)
        adj = _digit_base(digit_off_ptr, dig, ROWS) + earlier.to(gl.int64) - texcl.to(gl.int64)
    else:
        LW: gl.constexpr = gl.BlockedLayout([1, WINDOW], [32, 1], [WARPS, 1], [1, 0])
        dig = gl.arange(0, RADIX, layout=gl.SliceLayout(1, LW))
        kw = gl.arange(0, WINDOW, layout=gl.SliceLayout(0, LW))
        earlier = _digit_lookback(status_ptr, tile, dig, kw, gl.convert_layout(tot, gl.SliceLayout(1, LW)),
                                  parity, RADIX, FLAG_SHIFT)
        adj = gl.convert_layout(_digit_base(digit_off_ptr, dig, ROWS) + earlier.to(gl.int64), LD) - texcl.to(gl.int64)
    if ROWS >= 2:
        # the tile's (at most) two segments' digit offsets, per digit: rows ADJ.. for the first segment,
        # ADJ + 2.. for the second (when the tile reaches one); no per-key gather in the write-back
        dseg = gl.arange(0, RADIX, layout=LD)
        adj2 = adj + gl.load(digit_off_ptr + (seg_first + 1) * RADIX + dseg, mask=(dseg < RADIX) & (seg_next < n),
                             other=0)
        adj += gl.load(digit_off_ptr + seg_first * RADIX + dseg)
        smem.slice(ADJ // RADIX + 2, 1, 0).store(gl.expand_dims(gl.convert_layout((adj2 & 0xFFFFFFFF).to(gl.int32), gl.SliceLayout(0, LH)), 0))
        smem.slice(ADJ // RADIX + 3, 1, 0).store(gl.expand_dims(gl.convert_layout((adj2 >> 32).to(gl.int32), gl.SliceLayout(0, LH)), 0))
    smem.slice(ADJ // RADIX, 1, 0).store(gl.expand_dims(gl.convert_layout((adj & 0xFFFFFFFF).to(gl.int32), gl.SliceLayout(0, LH)), 0))
    smem.slice(ADJ // RADIX + 1, 1, 0).store(gl.expand_dims(gl.convert_layout((adj >> 32).to(gl.int32), gl.SliceLayout(0, LH)), 0))
    gl.thread_barrier()
    # read the tile back in sorted order, one key per thread at a time (low register pressure),
    # consecutive lanes holding consecutive sorted positions: writes go out in runs of equal digits
    NT: gl.constexpr = 32 * WARPS
    for c in gl.static_range(ITEMS):
        i = c * NT + gl.arange(0, NT, layout=LS)
        mi = i < rem
        if KEYS_IN_SMEM:
            if XW == 2:
                k2 = smem_load_dwords(XOFF // 2 + i).to(keys_in.dtype.element_ty, bitcast=True)
            else:
                k2 = smem_load_words(XOFF + i).to(keys_in.dtype.element_ty, bitcast=True)
            if WITH_SRC and not VALUES_IN_SMEM:
                src = smem_load_words(SRC + i)
            else:   # (not needed: keys only, the last packed pass, whose words hold the positions, or
                src = i   # values exchanged here too)
        else:
            src = smem_load_words(XOFF + i)
            k2 = gl.load(keys_in + base + src, mask=mi)
        d2 = extract_digit(to_ordered_bits(k2, KEY_DESC, CANONICAL), shift, RADIX_BITS) & ((1 << width) - 1)
        if ROWS >= 2:   # (the second segment's adjustment rows)
            a2 = ADJ + ((base + src) >= seg_next).to(gl.int32) * (2 * RADIX) + d2
        else:
            a2 = ADJ + d2
        dest = _slot_destination(a2, i, RADIX, INDEX64)
        if PROBE == 2:
            mi = mi & (k2 == 12345)
        if VALUES_IN_SMEM:   # (the keys alone here; the slot's digit kept for its value)
            smem_store_words(SRC + i, d2.to(gl.int32))
            _write_back(keys_out, vals_in, vals_out, digit_off_ptr, dest, k2, d2, base + src, mi, row_len, col_bits,
                        seg_first, seg_next, seg_begin, RADIX, 0, DESCENDING, CANONICAL, ROWS, True)
        else:
            _write_back(keys_out, vals_in, vals_out, digit_off_ptr, dest, k2, d2, base + src, mi, row_len, col_bits,
                        seg_first, seg_next, seg_begin, RADIX, VALUE_MODE, DESCENDING, CANONICAL, ROWS, True)
    if VALUES_IN_SMEM:
        # the values: read in input order, into the buffer at their keys' ranks (once every key has
        # been read back), then out in sorted order to their keys' destinations
        gl.thread_barrier()
        v = gl.load(vals_in + base + local, mask=valid)
        if VW == 2:
            smem_store_dwords(XOFF // 2 + pos, v)
        else:
            smem_store_words(XOFF + pos, v.to(gl.int32, bitcast=True))
        gl.thread_barrier()
        for c in gl.static_range(ITEMS):
            i = c * NT + gl.arange(0, NT, layout=LS)
            mi = i < rem
            if VW == 2:
                v2 = smem_load_dwords(XOFF // 2 + i).to(vals_in.dtype.element_ty, bitcast=True)
            else:
                v2 = smem_load_words(XOFF + i).to(vals_in.dtype.element_ty, bitcast=True)
            a2 = ADJ + smem_load_words(SRC + i)
            if PROBE == 2:
                mi = mi & (i < 0)
            dest = _slot_destination(a2, i, RADIX, INDEX64)
            gl.store(vals_out + dest, v2.to(vals_out.dtype.element_ty), mask=mi)   # int32 -> int64 positions too


# ==============================================================================================
# Policy
# ==============================================================================================

def _hist_place_groups(num_places: int, programs: int, max_programs: int) -> int:
    """Groups of digit places the upfront histogram's ``programs`` (per group) split between them: the
    largest divisor of ``num_places`` that keeps ``programs x groups`` within ``max_programs`` (the policy's
    ``HIST_SPLIT_PLACES`` programs per SM; 0: one group). A small input's few programs each count every
    place of their tiles, one after another; split, they count fewer places each, side by side."""
    return max(g for g in range(1, num_places + 1) if num_places % g == 0 and (g == 1 or programs * g <= max_programs))


def _valid_policy(c: dict) -> bool:
    return (c["WARPS"] == c["num_warps"] and c["MAXNREG"] in (0, 40, 48, 56, 64, 72, 80, 96, 128) and c["RADIX_BITS"] in (5, 6, 7, 8)
            and c["ITEMS"] in (8, 16) and c["WARPS"] in (4, 8, 16)
            and c["TL_TILE"] in (64, 128, 256, 512, 1024) and c["WINDOW"] in (0, 1, 2, 4, 8, 16, 32)
            and c["EXCHANGE_KEYS"] in (0, 1) and c["COUNTS_COLUMNS"] in (0, 1)
            and c["RANK_PACK"] in (1, 2, 4) and c["ITEMS"] % c["RANK_PACK"] == 0
            and c["EXCHANGE_APART"] in (0, 1) and c["SMALL_N"] in (0, 256, 512, 1024, 2048, 4096, 8192)
            and c.get("EARLY_COUNTS", 0) in (0, 1) and c.get("RANK_MATCH", 0) in (0, 1)
            and c.get("SKIP_PLACES_MIN_N", 0) in (0,) + tuple(1 << k for k in range(10, 33))
            and c.get("RECOMPUTE_WORD", 0) in (0, 1) and c.get("FUSED_EXCHANGE", 0) in (0, 1)
            and c.get("MAXNREG_WIDE", 0) in (0, 40, 48, 56, 64, 72, 80, 96, 128)
            and c.get("PACKED_POSITIONS", 0) in (0, 1) and c.get("EXCHANGE_WIDE", 0) in (0, 1)
            and c.get("EXCHANGE_SRC", 0) in (0, 1) and c.get("EXCHANGE_VALUES", 0) in (0, 1)
            and c.get("HIST_WARPS", 0) in (0, 4, 8, 16) and c.get("HIST_PER_SM", 4) in (1, 2, 3, 4, 6, 8)
            and c.get("HIST_SMS_PER_PROGRAM", 1) in (1, 2, 4) and c.get("HIST_MIN_TILES", 1) in (1, 2, 4, 8, 16)
            and c.get("HIST_SPLIT_PLACES", 0) in (0, 1, 2, 4)
            # the fused exchange is a form of the early-count ballot ranking, its buffer apart
            and (not c.get("FUSED_EXCHANGE", 0)
                 or (c["EARLY_COUNTS"] and c["RANK_MATCH"] == 1 and c["EXCHANGE_APART"])))


policy.register(
    "radix_sort",
    space={"RADIX_BITS": [8], "WARPS": [4, 8, 16], "ITEMS": [8, 16], "HIST_ITEMS": [8, 16], "HIST_WARPS": [0, 4, 8, 16],
           "HIST_PER_SM": [1, 2, 4], "HIST_SMS_PER_PROGRAM": [1, 2], "HIST_MIN_TILES": [1, 4, 8],
           "HIST_SPLIT_PLACES": [0, 1, 2], "TL_TILE": [128, 256, 512], "MAXNREG": [0, 64, 80], "WINDOW": [0, 8, 16],
           "EXCHANGE_KEYS": [0, 1], "COUNTS_COLUMNS": [0, 1], "RANK_PACK": [1, 2, 4], "EXCHANGE_APART": [0, 1],
           "EARLY_COUNTS": [0, 1], "RANK_MATCH": [0, 1], "RECOMPUTE_WORD": [0, 1], "FUSED_EXCHANGE": [0, 1],
           "MAXNREG_WIDE": [0, 64, 80], "PACKED_POSITIONS": [0, 1], "EXCHANGE_WIDE": [0, 1],
           "EXCHANGE_SRC": [0, 1], "EXCHANGE_VALUES": [0, 1],
           "SKIP_PLACES_MIN_N": [0, 1 << 20, 1 << 22], "SMALL_N": [0, 1024, 4096], "num_warps": [4, 8, 16], "num_stages": [1]},
    fallback={"RADIX_BITS": 8, "WARPS": 8, "ITEMS": 16, "HIST_ITEMS": 8, "TL_TILE": 128, "MAXNREG": 64, "WINDOW": 0,
              "EXCHANGE_KEYS": 1, "COUNTS_COLUMNS": 1, "RANK_PACK": 1, "EXCHANGE_APART": 1, "EARLY_COUNTS": 1,
              "RANK_MATCH": 1, "RECOMPUTE_WORD": 1, "FUSED_EXCHANGE": 1, "MAXNREG_WIDE": 64, "PACKED_POSITIONS": 1, "EXCHANGE_WIDE": 0, "EXCHANGE_SRC": 0, "EXCHANGE_VALUES": 0, "SKIP_PLACES_MIN_N": 0, "SMALL_N": 0, "HIST_WARPS": 0,
              "HIST_PER_SM": 4, "HIST_SMS_PER_PROGRAM": 1, "HIST_MIN_TILES": 1, "HIST_SPLIT_PLACES": 0, "num_warps": 8,
              "num_stages": 1},
    valid=_valid_policy,
    buckets=("default", "small"),
    doc="onesweep radix sort (buckets: 'small' below 2**22 keys, where a pass has too few tiles to hide "
        "the look-back chain, and 'default'): RADIX_BITS digit width; WARPS x ITEMS x 32 keys per tile of the fast "
        "path; HIST_ITEMS keys per thread of the upfront histogram, HIST_WARPS its warps per program (0: "
        "WARPS), HIST_PER_SM its persistent programs per SM (inputs of fewer than 64 tiles per SM take one per "
        "HIST_SMS_PER_PROGRAM SMs), and at most one program per HIST_MIN_TILES of a row's tiles; HIST_SPLIT_PLACES "
        "(0 off) lets those programs split the digit places between them into groups, programs x groups at most "
        "HIST_SPLIT_PLACES x SMs; TL_TILE the "
        "tile of the portable (one-hot) path used by the interpreter and non-NVIDIA GPUs; MAXNREG a "
        "register cap for the fast pass kernel on 32-bit keys alone (0: the compiler's choice), "
        "MAXNREG_WIDE the cap when values travel or keys are wider; WINDOW the look-back "
        "predecessors read per step (0: per-thread spin in PTX); EXCHANGE_KEYS 1 moves 32-bit keys "
        "through shared memory (0: exchange source indices and gather keys back); EXCHANGE_WIDE 1 moves "
        "64-bit keys (and packed key-position words) through it too, 8 bytes each; EXCHANGE_SRC 1 lets "
        "passes that generate positions (sort's first; not of segments) exchange keys too, with their "
        "source positions beside them (a larger buffer; else positions alone, and keys gathered back); "
        "EXCHANGE_VALUES 1: passes carrying values of 4 or 8 bytes whose keys cross shared memory send "
        "the values through it too, by the keys' ranks, after the keys (flat sorts; 0, or segments: "
        "positions exchanged, keys and values gathered back); COUNTS_COLUMNS 1 "
        "scans the per-warp digit counters with one digit column per thread; RANK_PACK slots ranked "
        "per asm block (their latencies overlap); EXCHANGE_APART 1 keeps the exchange buffer apart from "
        "the counters (one barrier less, more shared memory unless the power-of-two rounding absorbs it); "
        "EARLY_COUNTS 1 counts the tile's digits first and publishes them before the match ranking (CUB's "
        "early counts), which then yields final tile positions; RANK_MATCH 0 finds a key's peers in its warp "
        "with match.any, 1 with one ballot per digit bit (RANK_PACK applies to 0 only); SKIP_PLACES_MIN_N: "
        "inputs of fewer keys run every digit place without reading the histogram back (no host sync, no "
        "skipped places, canonical float ordering); RECOMPUTE_WORD 1 (early counts) recomputes each key's "
        "counter word after the scan instead of keeping it in registers; FUSED_EXCHANGE 1 (early counts, "
        "ballots, buffer apart) writes each key to the exchange buffer in the ranking's asm block, slot by "
        "slot, so no rank stays in a register (but for EXCHANGE_VALUES's passes, which keep the ranks "
        "for the values); PACKED_POSITIONS 1: sorts that generate positions (sort, "
        "argsort) carry each key (of at most 32 bits, not bool) and its position packed in one uint64 word "
        "between the first and the last pass; "
        "SMALL_N: up to this many keys (of at most 32 bits) one program sorts everything with one "
        "tl.sort (0: off; not yet measured on a GPU, so off by default)",
)


# ==============================================================================================
# Launchers
# ==============================================================================================

def _bucket(n: int) -> str:
    return "small" if n < (1 << 22) else "default"


def _reads_back(pol, n: int) -> bool:
    return n >= pol.get("SKIP_PLACES_MIN_N", 0)


def reads_back(n: int, device: torch.device) -> bool:
    """Whether a sort of ``n`` keys on ``device`` reads its digit counts back to the host (one sync,
    to skip digit places all keys share): from the policy's ``SKIP_PLACES_MIN_N`` keys on."""
    return _reads_back(policy.select("radix_sort", device if device.type == "cuda" else None, _bucket(n)), n)


#: set True to run the portable kernels on a GPU too (tests compare the two paths)
FORCE_PORTABLE = False
#: sorts with generated positions (``sort``, ``argsort``) carry them as int32 below this many keys
#: (a module constant so tests can lower it and cover both paths)
_NARROW_INDEX_LIMIT = 1 << 31
#: up to this many look-back status words in all, every pass gets its own (one zeroing launch)
_STATUS_ONCE_WORDS = 1 << 22
#: measurement switch for bench/probes only (see _onesweep_gluon_kernel); 0 in any real use
_PROBE = 0
#: sorts that read the digit counts back launch the first place's pass before waiting for them
#: (see :func:`_radix_sort_db`); a module switch so that probes can time both orders
SPECULATIVE_FIRST_PASS = True


def _use_fast_path(device: torch.device) -> bool:
    """The Gluon passes with warp-synchronous ranking: compiled NVIDIA kernels on sm_80+ (the device's
    capability asked once per process: the query costs the host microseconds per call)."""
    return not FORCE_PORTABLE and smem_atomics_ok(device)


def _smem_rows(radix: int, warps: int, tile: int, apart: bool = False, segments: bool = False) -> int:
    """Rows of ``radix`` words of the fast pass's shared memory, a power of two (see
    :func:`_onesweep_gluon_kernel`: counters, exchange, then the adjustment's rows, 4 for segments)."""
    words = (warps * radix + tile if apart else max(warps * radix, tile)) + (4 if segments else 2) * radix
    rows = cdiv(words, radix)
    return 1 << (rows - 1).bit_length()


class DoubleBuffer:
    """CUB's ``DoubleBuffer``: two equal buffers and a selector naming the one holding the data.

    A sort reads ``current`` and leaves its result in one of the two, updating ``selector``; the
    other one's contents are scratch. Sorting this way needs no alternate buffer of its own.
    """

    def __init__(self, current: torch.Tensor, alternate: torch.Tensor):
        self.buffers = [current, alternate]
        self.selector = 0
        self.validate()

    def validate(self, name: str = "DoubleBuffer") -> None:
        """Check the buffers and the selector (also before every sort: both are plain attributes)."""
        if not isinstance(self.selector, int) or self.selector not in (0, 1):
            raise InputValueError(f"{name}.selector must be 0 or 1, got {self.selector!r}")
        if len(self.buffers) != 2 or not all(isinstance(b, torch.Tensor) for b in self.buffers):
            raise InputValueError(f"{name}.buffers must be two tensors")
        current, alternate = self.buffers
        if current.shape != alternate.shape or current.dtype != alternate.dtype:
            raise InputValueError(f"{name} buffers must have the same shape and dtype")
        if current.device != alternate.device:
            raise InputValueError(f"{name} buffers must be on one device (got {current.device} and "
                                  f"{alternate.device})")
        if not (current.is_contiguous() and alternate.is_contiguous()):
            raise InputValueError(f"{name} buffers must be contiguous (the passes write them as flat arrays)")

    @property
    def current(self) -> torch.Tensor:
        return self.buffers[self.selector]

    @property
    def alternate(self) -> torch.Tensor:
        return self.buffers[self.selector ^ 1]


def _check_double_buffer(db, name: str) -> None:
    if not isinstance(db, DoubleBuffer):
        raise InputTypeError(f"{name} must be a DoubleBuffer (current and alternate buffers), got {type(db).__name__}")
    db.validate(name)


def _check_bits(dtype: torch.dtype, begin_bit: int, end_bit: Optional[int]) -> tuple[int, int]:
    width = key_bits(dtype)
    if end_bit is None:
        end_bit = width
    begin_bit, end_bit = as_int(begin_bit, "begin_bit"), as_int(end_bit, "end_bit")
    if not (0 <= begin_bit <= end_bit <= width):
        raise InputValueError(f"bit range [{begin_bit}, {end_bit}) is outside the {width}-bit key "
                              f"({str(dtype).replace('torch.', '')}); need 0 <= begin_bit <= end_bit <= {width}")
    return begin_bit, end_bit


def _check_keys(keys: torch.Tensor, name: str = "keys") -> None:
    check_tensor(keys, name, KEY_DTYPES)
    if keys.dim() != 1:
        raise InputValueError(f"{name} must be 1-D (got shape {tuple(keys.shape)}); use torch.ops.tritoncub.sort "
                              "(tritoncub.device.radix_sort.sort) for N-d tensors")


#: value dtypes the kernels take as they are (Triton has pointer types for them)
_NATIVE_VALUE_DTYPES = frozenset(d for d in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
                                             getattr(torch, "uint16", None), getattr(torch, "uint32", None),
                                             getattr(torch, "uint64", None), torch.float16, torch.bfloat16,
                                             torch.float32, torch.float64) if d is not None)


def _bits_view(x: torch.Tensor) -> torch.Tensor:
    """Values travel as raw bits: bool, complex and other dtypes without a Triton pointer type as a
    same-size integer view (items of 1, 2, 4 or 8 bytes; wider values are sorted through their
    indices, see :func:`sort_pairs`)."""
    if x.dtype in _NATIVE_VALUE_DTYPES:
        return x
    return x.view(INT_OF_SIZE[x.element_size()])


def _radix_sort_db(keys: DoubleBuffer, values: Optional[DoubleBuffer], descending: bool, begin_bit: int,
                   end_bit: int, gen_indices: bool = False, keys_src: Optional[torch.Tensor] = None,
                   values_src: Optional[torch.Tensor] = None, indices_out: Optional[torch.Tensor] = None,
                   words: Optional[torch.Tensor] = None, rows: Optional[tuple[int, int]] = None,
                   trace: Optional[dict] = None, segments: Optional[np.ndarray] = None,
                   segment_positions: bool = False, scratch: Optional[list] = None) -> None:
    """Sort ``keys.current`` (and ``values.current``) into one of the two buffers (selector updated).

    ``keys_src``/``values_src``, when given, are read by the first pass instead of the current
    buffers (so a caller's input is never written). ``gen_indices``: the values are the input
    positions (int64), produced by the first pass; ``values.current`` is then not read.
    ``indices_out`` (with ``gen_indices``): the values buffers are int32 and the last pass writes the
    positions widened to int64 into ``indices_out`` (``values`` is then scratch): 4 bytes less per key
    moved by every pass but the last (a first pass launched before the read-back that turns out to be
    the only one leaves them in ``values``: they are copied). ``words`` (with ``gen_indices`` and ``indices_out``,
    keys of at most 32 bits, not bool; ``values`` None): a uint64 scratch buffer of ``n`` words; keys and
    positions then travel packed in one word between the first and the last pass (one 8-byte scatter
    per key instead of two 4-byte ones), and ``indices_out`` is the second word buffer. The result
    lands in ``keys.alternate`` (a caller passes the output buffer as both buffers). ``rows`` (with
    ``words``): ``(B, L)``, the keys are B rows of L keys (B <= 256, ceil(log2(B)) + ceil(log2(L)) <=
    32) sorted each on its own: the histogram counts per row, each pass's keys add their row's
    offsets (:func:`_digit_offsets_kernel`), positions are packed as row and column, and
    ``indices_out`` gets the columns (``torch.sort(x, dim=-1)``'s indices). ``segments`` (with
    ``gen_indices`` and ``indices_out``; instead of ``rows``; positions packed in ``words`` or, for
    64-bit keys, apart): host int64 ``[S + 1]`` offsets of S segments covering the keys,
    each at least a pass tile long (:func:`segments_fit`), sorted each on its own: the upfront
    histogram counts per segment (:func:`_segment_histogram_kernel`), every place runs (nothing is
    read back), the passes find a key's segment from where it is (:func:`_segment_of_tile`), and
    ``indices_out`` gets flat positions (``segment_positions``: positions within the segment).
    ``trace`` (a dict): filled
    with what a replay of this sort needs when it queued bound launches only (see :func:`_sort_into`):
    ``hist`` (the one zeroed workspace) and ``launches`` (each launch's bound form and arguments).
    ``scratch`` (a list): gets ``(buffer, True)`` for every workspace allocated here (each zeroed), in
    order (for a caller recording the launches, see :func:`sort_pairs_recorded`).
    """
    kin = keys.current if keys_src is None else keys_src
    n = kin.numel()
    dev = kin.device
    pol = policy.select("radix_sort", dev if dev.type == "cuda" else None, _bucket(n))
    rb = pol["RADIX_BITS"]
    radix = 1 << rb
    num_places = cdiv(end_bit - begin_bit, rb) if end_bit > begin_bit else 0
    fast = _use_fast_path(dev)

    def finish_without_passes():
        # nothing to reorder: the result is the input itself
        if keys_src is not None:
            keys.current.copy_(keys_src)
        if values is not None or indices_out is not None:
            if gen_indices:
                dst = values.current if indices_out is None else indices_out
                if rows is not None:
                    dst.copy_(torch.arange(rows[1], device=dev, dtype=dst.dtype).repeat(rows[0]))
                else:
                    torch.arange(n, device=dev, dtype=dst.dtype, out=dst)
            elif values_src is not None:
                values.current.copy_(values_src)

    if n <= 1 or num_places == 0:
        finish_without_passes()
        return

    if n <= pol["SMALL_N"] and key_bits(kin.dtype) <= 32 and rows is None and segments is None:
        # small input: one program sorts everything (no histogram, no host sync, one launch)
        block = 1 << (n - 1).bit_length()
        if values is not None or gen_indices:
            vm = 2 if gen_indices else 1
            src_v = _bits_view(values_src if values_src is not None else
                               (values.current if values is not None else kin))
            dst_v = _bits_view(values.alternate if indices_out is None else indices_out)
        else:
            vm, src_v, dst_v = 0, kin, kin
        launch(_small_sort_kernel, (1,), kin, keys.alternate, src_v, dst_v, n, begin_bit, end_bit,
               DESCENDING=descending, VALUE_MODE=vm, BLOCK=block, num_warps=4 if block <= 1024 else 8)
        keys.selector ^= 1
        if values is not None:
            values.selector ^= 1
        return

    # 1. upfront histogram of every place: ``radix`` int64 counts per place and row (one row unless
    #    ``rows``), one more row whose first word counts the keys the canonicalisation changes (fast
    #    path), then the places' digit offsets (per row). Small sorts keep every pass's look-back words and tile
    #    counter (int32) after them: one zeroed buffer
    tile = pol["WARPS"] * pol["ITEMS"] * 32 if fast else pol["TL_TILE"]
    n_tiles = cdiv(n, tile)
    status64 = n >= (1 << 29)
    # (a graph capture cannot wait for the GPU; segments read nothing back)
    read_back = _reads_back(pol, n) and not capturing(dev) and segments is None
    n_rows, row_len = rows if rows is not None else (1, n)
    if segments is not None:
        n_rows = len(segments) - 1
    # (then the read-back summary: the special keys' count and each place's largest digit count;
    # segments: then their tables, see _segment_of_tile)
    summary_at = (2 * num_places * n_rows + 1) * radix
    seg_off = summary_at + num_places + 1
    hist_words = seg_off + (0 if segments is None else n_tiles + n_rows + 1)
    # (rows: a lone place runs twice, so that a first pass packs and a last one unpacks)
    max_passes = max(num_places, 2) if (rows is not None or segments is not None) else num_places
    status_once = max_passes * n_tiles * radix <= _STATUS_ONCE_WORDS and not status64
    hist = torch.zeros(hist_words + (cdiv(max_passes * (n_tiles * radix + 1), 2) if status_once else 0),
                       device=dev, dtype=torch.int64)
    summary = hist[summary_at:hist_words]
    if status_once:   # (int32 words after the int64 ones: n < 2**29 here)
        status = counters = hist.view(torch.int32)
        status_step, status_base = n_tiles * radix, 2 * hist_words
        counter_base = status_base + max_passes * n_tiles * radix
    else:  # one set of look-back words, zeroed once (the passes alternate their flags' parity)
        status = torch.zeros(n_tiles * radix, device=dev, dtype=torch.int64 if status64 else torch.int32)
        counters = torch.zeros(max_passes, device=dev, dtype=torch.int32)
        status_step, status_base, counter_base = 0, 0, 0
    if scratch is not None:
        scratch += [(hist, True)] + ([] if status_once else [(status, True), (counters, True)])
    # a sort that reads nothing back queues all its launches; their bound forms are remembered per
    # problem (sizes, dtypes, alignments, policy), so a repeated call skips the launch bookkeeping
    memo_key = plan = new_plan = new_checks = None
    replayed_steps: list = []
    row_modes = (3 if segment_positions else 2) if segments is not None else (1 if rows is not None else 0)
    # (not read_back: a capture's reads nothing back but its plan must not serve other calls;
    # segments never read back, and their tables are data, not launch arguments)
    # (nor inside a caller's recording of launches: it would miss launches replayed from a plan)
    if (fast and (segments is not None or not _reads_back(pol, n)) and not status64 and direct_ok()
            and not recording_launches()):
        tensors = (kin, keys.current, keys.alternate) + (() if words is None else (words, indices_out)) + (
            () if values is None else (
            values.current, values.alternate, values_src if values_src is not None else values.current,
            indices_out if indices_out is not None else values.current))
        memo_key = (n, kin.dtype, descending, begin_bit, end_bit, gen_indices, indices_out is not None, words is not None,
                    rows, row_modes, n_rows,
                    None if values is None else values.current.dtype, dev, _PROBE, _STATUS_ONCE_WORDS, chain_memo_key(),
                    tuple(t.data_ptr() & 15 == 0 for t in tensors))
        plan = _QUEUED_PLANS.get(memo_key)
        if plan is not None and plan[0] is not pol:   # made under another policy
            plan = None
        if plan is None:
            new_plan, new_checks = [], []

    if trace is not None and memo_key is not None and status_once:
        trace.update(hist=hist, launches=[])
    traced = trace.get("launches") if trace is not None else None

    def run(step, kernel, grid, args, kwargs):
        if plan is not None:
            if step >= len(plan[2]) or plan[2][step][0] is not kernel or plan[2][step][1] != grid:
                _plan_mismatch(memo_key, step)
            fn = plan[1][step]
            fn(*args)
            replayed_steps.append(step)
        elif new_plan is not None:
            fn = bind(kernel, grid, *args, **kwargs())
            new_plan.append(fn)
            new_checks.append((kernel, grid))
        else:
            fn = None
            launch(kernel, grid, *args, **kwargs())
        if traced is not None:
            traced.append((fn, args))

    count_special = kin.dtype.is_floating_point
    if segments is not None:
        # the tables, then the histogram per segment, then each segment's digit offsets: its first
        # position + its exclusive prefix - the digit's count in all earlier segments (the passes'
        # look-back counts keys of every segment before a tile; see _digit_offsets_kernel's rows)
        tables = _segment_tables(segments, n_tiles, tile, dev)
        hist[seg_off:hist_words].copy_(tables, non_blocking=True)
        if fast:
            # (tiles per program: as many as 32 rows of counters allow, 64 for 8 places)
            tiles = max(32, 8 * num_places) // num_places - 1
            run(0, _segment_histogram_gluon_kernel, (cdiv(n_tiles, tiles),),
                (kin, hist, n, seg_off, begin_bit, end_bit, n_rows),
                lambda: dict(NUM_PLACES=num_places, RADIX_BITS=rb, DESCENDING=descending, WARPS=pol["WARPS"],
                             ITEMS=pol["ITEMS"], TILES=tiles, SMEM_ROWS=next_power_of_2(num_places * (tiles + 1)),
                             num_warps=pol["WARPS"]))
        else:
            launch(_segment_histogram_kernel, (n_tiles,), kin, hist, n, seg_off, begin_bit, end_bit, n_rows,
                   NUM_PLACES=num_places, RADIX_BITS=rb, DESCENDING=descending, TILE=tile, num_warps=4)
        # (the prefix over segments along the counts' rows, in place: torch's scan along an outer dim
        # is serial per column, 0.73 ms for 1850 segments on the H100; along the rows, a copy, 47 us for
        # 1024 rows of 16384 keys; elementwise torch ops over transposed views cost 0.55 ms of a 1.4 ms
        # sort of 4096 rows of 4608 keys)
        run(1, _segment_prefix_kernel, (num_places * radix,), (hist, n_rows),
            lambda: dict(BLOCK=min(1024, next_power_of_2(n_rows)), num_warps=4))
        segs = 16
        run(2, _segment_offsets_kernel, (cdiv(n_rows, segs), num_places),
            (hist, n_rows, seg_off + n_tiles, (num_places * n_rows + 1) * radix),
            lambda: dict(RADIX=radix, SEGS=segs, num_warps=4))
        if traced is not None:
            trace.update(tables=tables, tables_at=(seg_off, hist_words), tile=tile)
    elif fast:
        warps, items = pol.get("HIST_WARPS", 0) or pol["WARPS"], pol["HIST_ITEMS"]
        h_tiles = cdiv(row_len, warps * items * 32)   # (per row)
        # persistent programs; their final atomics contend, so small inputs take fewer (by default one per SM)
        # (measured on the H100: 2^20 keys 47 us at 4 per SM, 19 us at 1; 2^28 with the next tile
        # prefetched, at 8 warps x 8 keys 535 us at 4 per SM, 515 at 2; at 16 warps x 8 keys, 1 per
        # SM, 505: bench/probes/sort_hist_config_probe.py)
        sms = num_sms(dev)
        # (smaller inputs: one program per HIST_SMS_PER_PROGRAM SMs; any input: at most one program per
        # HIST_MIN_TILES tiles of a row. Each program's flush adds (its places) x RADIX atomics and a sum over
        # its warps' counters. Few programs split the places between them, programs x groups at most
        # HIST_SPLIT_PLACES per SM: 4096 int64 keys' histogram 14.0 -> 3.4 us on an H200,
        # bench/probes/sort_hist_split_probe.py)
        programs = (sms * pol.get("HIST_PER_SM", 4) if h_tiles * n_rows >= 64 * sms
                    else max(1, sms // pol.get("HIST_SMS_PER_PROGRAM", 1)))
        grid0 = max(1, min(h_tiles, cdiv(programs, n_rows), cdiv(h_tiles, pol.get("HIST_MIN_TILES", 1))))
        groups = _hist_place_groups(num_places, grid0 * n_rows, sms * pol.get("HIST_SPLIT_PLACES", 0))
        own = num_places // groups
        run(0, _histogram_gluon_kernel, (grid0, n_rows, groups), (kin, hist, row_len, h_tiles, begin_bit, end_bit),
            lambda: dict(NUM_PLACES=num_places, RADIX_BITS=rb, DESCENDING=descending, WARPS=warps, ITEMS=items,
                         SMEM_ROWS=1 << (own * warps - 1).bit_length(), COUNT_SPECIAL=count_special,
                         PLACES=0 if groups == 1 else own, num_warps=warps, **chain_kwargs(dev, False)))
    else:
        launch(_histogram_tl_kernel, (cdiv(row_len, tile), n_rows), kin, hist, row_len, begin_bit, end_bit,
               NUM_PLACES=num_places, RADIX_BITS=rb, DESCENDING=descending, TILE=tile, num_warps=4)
    if segments is None:
        run(1, _digit_offsets_kernel, (num_places, n_rows), (hist, summary, row_len, n_rows),
            lambda: dict(NUM_PLACES=num_places, RADIX=radix, ROWS_BLOCK=next_power_of_2(n_rows), num_warps=4,
                         **chain_kwargs(dev, fast)))
    # 2. skip places where all keys share one digit (one device-to-host copy of the summary, which also
    #    says whether float keys hold -0.0 or NaNs other than +qNaN: without them the passes skip the
    #    canonicalisation)
    #    (below the policy's SKIP_PLACES_MIN_N keys: no read-back, every place runs, canonical). The
    #    first place's pass is launched before the host waits for the copy, canonical, whatever the
    #    counts: the GPU never idles on the round trip, and the later passes are launched while it
    #    runs; when all keys share the first place's digit the pass does nothing (it reads the same
    #    summary) and the next one becomes the first. Not with packed positions (see below)
    row_args = (row_len, max(1, (row_len - 1).bit_length())) if rows is not None else (1, 0)
    first_pass_step = 2 if segments is None else 3   # (the launches before the passes)

    def launch_pass(i, p, n_places, canonical, skip_shared=False):
        """Pass ``i`` (of ``n_places``) sorting by place ``p`` (``skip_shared``: see the pass kernels)."""
        shift, width = begin_bit + p * rb, min(rb, end_bit - begin_bit - p * rb)
        pass_desc = descending
        # packed positions: pass 0 writes words, the middle passes move words between ``words`` and
        # ``indices_out`` (as uint64), the last reads ``words`` (so the first writes there when the
        # count of passes is even) and writes keys and positions
        packed = words is not None and n_places >= 2
        last = n_places is not None and i == n_places - 1   # (None: the count is not known yet)
        if packed:
            word_bufs = (words, indices_out.view(torch.uint64))
            first = i == 0
            src_k = kin if first else word_bufs[(n_places + i - 1) % 2]
            dst_k = keys.alternate if last else word_bufs[(n_places + i) % 2]
            vm = 3 if first else (4 if last else 0)
            src_v, dst_v = (kin, indices_out) if last else (kin, kin)
            if not first:
                shift += 32   # (the key bits: the upper half of the word)
                pass_desc = descending and last   # (mode 4 decodes with it; words are plain bits)
        else:
            src_k = kin if i == 0 else keys.current
            dst_k = keys.alternate
            if values is not None or words is not None:
                vm = 2 if (i == 0 and gen_indices) else 1
                src_v = (values_src if (i == 0 and values_src is not None) else
                         (values.current if values is not None else kin))
                dst_v = indices_out if (last and indices_out is not None) else values.alternate
                src_v, dst_v = _bits_view(src_v), _bits_view(dst_v)
            else:
                vm, src_v, dst_v = 0, kin, kin
        args = (src_k, dst_k, src_v, dst_v, status, counters, hist, n, shift, width, status_base + i * status_step,
                counter_base + i, (num_places * n_rows + 1 + p * n_rows) * radix, i % 2, *row_args, summary_at + 1 + p,
                seg_off)
        if fast:
            run(i + first_pass_step, _onesweep_gluon_kernel, (n_tiles,), args,
                lambda: _pass_kwargs(pol, src_k, vm, rb, pass_desc, status64, tile, n, canonical, row_modes,
                                     skip_shared, src_v))
        else:
            launch(_onesweep_tl_kernel, (n_tiles,), *args, RADIX_BITS=rb, DESCENDING=pass_desc, VALUE_MODE=vm,
                   FLAG_SHIFT=61 if status64 else 29, TILE=tile, WINDOW=max(1, pol["WINDOW"]), ROWS=row_modes,
                   SKIP_SHARED=skip_shared, num_warps=4)
        if not packed or last:
            keys.selector ^= 1
            if values is not None:
                values.selector ^= 1

    done = 0   # passes launched
    # (not with packed positions: the first pass's output depends on the count of passes there; a
    # lone first pass writes keys and positions apart, two or more pack them in words. Launching it
    # early as if every place ran would cost keys of one 8-bit place, e.g. class labels, an unpacking
    # pass more than they run now)
    speculate = read_back and SPECULATIVE_FIRST_PASS and words is None
    if read_back:
        if dev.type == "cuda":
            host = torch.empty(num_places + 1, dtype=torch.int64, pin_memory=True)
            host.copy_(summary, non_blocking=True)
            copied = torch.cuda.Event()
            copied.record(torch.cuda.current_stream(dev))   # (the keys' GPU, whichever is current)
        else:
            host, copied = summary, None
        if speculate:
            launch_pass(0, 0, None, True, skip_shared=True)
            done = 1
        if copied is not None:
            copied.synchronize()
        specials, *hmax = host.tolist()
        canonical = not (fast and count_special and specials == 0)
        if done and hmax[0] == n:   # the early pass found its place shared and did nothing
            assert words is None   # (that pass flipped the selectors: never one with packed positions)
            done = 0
            keys.selector ^= 1
            if values is not None:
                values.selector ^= 1
        places = [p for p in range(done, num_places) if hmax[p] != n]
    else:
        canonical, places = True, list(range(num_places))
    if not places and not done:
        finish_without_passes()
        return

    # 3. one pass per remaining place
    if (rows is not None or segments is not None) and done + len(places) == 1:
        # (sorting by the same digit again changes nothing)
        places = places * 2
    n_places = done + len(places)
    for i, p in enumerate(places, start=done):
        launch_pass(i, p, n_places, canonical)
    if done and n_places == 1 and indices_out is not None:
        # the early first pass was the only one: its int32 positions went to the values buffers
        indices_out.copy_(values.current)
    if plan is not None and len(replayed_steps) != len(plan[2]):   # (fewer launches than recorded)
        _plan_mismatch(memo_key, len(replayed_steps))
    if new_plan is not None and all(r is not None for r in new_plan):
        if len(_QUEUED_PLANS) >= 256:
            _QUEUED_PLANS.clear()
        _QUEUED_PLANS[memo_key] = (pol, new_plan, new_checks)


#: bound launches of queued sorts (see :func:`_radix_sort_db`), per problem: ``(policy, bound launches,
#: (kernel, grid) of each)``
_QUEUED_PLANS: dict = {}


def _plan_mismatch(memo_key, step: int):
    """A remembered queued-sort plan that does not match its call (the key does not fix the launches):
    forgotten, and said, rather than replayed on."""
    _QUEUED_PLANS.pop(memo_key, None)
    raise RuntimeError(f"internal: a remembered sort plan does not match this call (launch {step}): "
                       "its key is incomplete")


def _segment_tables(offsets: np.ndarray, n_tiles: int, tile: int, dev: torch.device) -> torch.Tensor:
    """The tables a segmented sort's kernels read (see :func:`_segment_of_tile`): the first segment
    of each pass tile, then every segment's first position (and ``n``), int64 on the host (pinned for
    a GPU; kept for a graph being captured, whose copy reads it at every replay)."""
    starts = np.asarray(offsets, dtype=np.int64)
    tile_first_seg = np.searchsorted(starts, np.arange(n_tiles, dtype=np.int64) * tile, side="right") - 1
    tables = torch.from_numpy(np.concatenate([tile_first_seg, starts]))
    if dev.type == "cuda":
        tables = tables.pin_memory()
        if capturing(dev):
            KEPT_FOR_GRAPHS.append(tables)
    return tables


def _pass_kwargs(pol, kin, vm, rb, descending, status64, tile, n, canonical, rows=False, skip_shared=False,
                 vin=None) -> dict:
    """Compile-time arguments of one fast-path pass (``kin``: the keys the pass reads; ``vin``: the values)."""
    radix = 1 << rb
    # keys alone of 32 bits: the tight register cap; values or wider keys need more registers
    cap = pol["MAXNREG"] if (vm == 0 and kin.element_size() <= 4) else pol.get("MAXNREG_WIDE", pol["MAXNREG"])
    # keys exchanged themselves (32-bit: EXCHANGE_KEYS; 64-bit keys or packed words: EXCHANGE_WIDE), and
    # with them their source positions where the pass needs those: only in passes that generate
    # positions, not of segments (EXCHANGE_SRC; a pass gathering values back by position keeps the
    # tile in L1, which the larger buffer takes; segments were not timed with it), if the buffer fits
    # the device; else source positions alone
    size = kin.element_size()
    keys_in_smem = (bool(pol["EXCHANGE_KEYS"]) if size == 4 else size == 8 and bool(pol.get("EXCHANGE_WIDE", 0)))
    # values carried (VALUE_MODE 1) through shared memory too, by the ranks (EXCHANGE_VALUES): the
    # keys' part holds the wider of key and value, a second part each sorted slot's digit; else the
    # values are gathered by position
    vsize = vin.element_size() if vin is not None else 0
    values_in_smem = (keys_in_smem and vm == 1 and not rows and vsize in (4, 8)
                      and bool(pol.get("EXCHANGE_VALUES", 0)))
    need_src = (vm in (1, 2, 3) or rows >= 2) and not values_in_smem
    keys_in_smem = keys_in_smem and (not need_src or (bool(pol.get("EXCHANGE_SRC", 0)) and vm in (2, 3)
                                                      and rows < 2))
    words = (max(size, vsize) // 4 + 1) if values_in_smem else (size // 4 + need_src) if keys_in_smem else 1
    smem_rows = _smem_rows(radix, pol["WARPS"], tile * words, bool(pol["EXCHANGE_APART"]), rows >= 2)
    if keys_in_smem and words > 1 and smem_rows * radix * 4 + 1024 > smem_per_block(kin.device):
        keys_in_smem = values_in_smem = False
        smem_rows = _smem_rows(radix, pol["WARPS"], tile, bool(pol["EXCHANGE_APART"]), rows >= 2)
    return dict(
        RADIX_BITS=rb, DESCENDING=descending, VALUE_MODE=vm, FLAG_SHIFT=61 if status64 else 29,
        WARPS=pol["WARPS"], ITEMS=pol["ITEMS"],
        SMEM_ROWS=smem_rows,
        # the windowed look-back gave wrong output on the H100 with more threads than digits
        # (WARPS=16 at 8-bit digits, in an autotune run): those configs spin per digit instead
        WINDOW=pol["WINDOW"] if pol["WARPS"] * 32 <= radix else 0,
        KEYS_IN_SMEM=keys_in_smem,
        COUNTS_COLUMNS=bool(pol["COUNTS_COLUMNS"]), INDEX64=n + tile >= (1 << 31),
        RANK_PACK=pol["RANK_PACK"], EXCHANGE_APART=bool(pol["EXCHANGE_APART"]),
        EARLY_COUNTS=bool(pol.get("EARLY_COUNTS", 0)), RANK_MATCH=pol.get("RANK_MATCH", 0),
        CANONICAL=canonical, RECOMPUTE_WORD=bool(pol.get("RECOMPUTE_WORD", 0)),
        FUSED_EXCHANGE=bool(pol.get("FUSED_EXCHANGE", 0)), ROWS=rows, PROBE=_PROBE, SKIP_SHARED=skip_shared,
        VALUES_IN_SMEM=values_in_smem, num_warps=pol["WARPS"],
        **maxnreg_kwargs(cap), **chain_kwargs(kin.device, True))


def _prepare(keys, values, descending, begin_bit, end_bit):
    _check_keys(keys)
    check_flag(descending, "descending")
    begin_bit, end_bit = _check_bits(keys.dtype, begin_bit, end_bit)
    if values is not None:
        check_tensor(values, "values", device=keys.device)
        if values.dim() != 1 or values.numel() != keys.numel():
            raise InputValueError(f"values must be 1-D with as many items as keys ({keys.numel()}), got shape "
                                  f"{tuple(values.shape)}")
    return begin_bit, end_bit


#: replays of whole sorts with generated positions (see :func:`_sort_into`), per problem
_SORT_REPLAYS: dict = {}


def _sort_into(keys, values, descending, begin_bit, end_bit, gen_indices=False, rows=None, segments=None,
               segment_positions=False, scratch=None):
    """Sort into fresh tensors; the last pass lands in the returned buffers (no final copy).
    ``rows`` (packed positions only) / ``segments`` (see :func:`_radix_sort_db`): sort B rows of L
    keys each / each segment.

    A sort with generated positions packed with the keys (``torch.sort``'s case, one row or up to 256
    rows as one problem) whose launches were all queued as bound launches is remembered per problem
    (size, rows, dtype, bit range, direction, device, the keys' alignment, the policy and launch-chain
    settings): a later call allocates its buffers and replays the launches with their pointer
    arguments moved to the new buffers, skipping the planning (host time is most of a small sort's
    time). So are segmented sorts (``segments``) with packed positions, per count of segments (the
    tables of segment starts are kept with the replay and reused when the offsets are the same, e.g.
    rows of one length, else computed afresh). ``scratch`` (a list; keys with values only): gets
    ``(buffer, zeroed)`` for every buffer allocated, the results' among them, in order (see
    :func:`sort_pairs_recorded`)."""
    n = keys.numel()
    packed = rows is not None or (gen_indices and values is None and 1 < n < _NARROW_INDEX_LIMIT
                                  and _packs_positions(keys))
    replay_key = None
    if (gen_indices and values is None and keys.is_cuda and (segments is None or packed)
            and not recording_launches()):   # (a caller's recording would miss a replay)
        replay_key = (n, rows, keys.dtype, descending, begin_bit, end_bit, keys.device, keys.data_ptr() & 15 == 0,
                      chain_memo_key(), FORCE_PORTABLE, _NARROW_INDEX_LIMIT, _STATUS_ONCE_WORDS, _PROBE,
                      None if segments is None else (len(segments), segment_positions))
        hit = _SORT_REPLAYS.get(replay_key)
        if hit is not None and hit[0] is policy.select("radix_sort", keys.device, _bucket(n)) and direct_ok():
            return _replay_sort(keys, hit, segments)
    out_k = torch.empty_like(keys)
    if packed:
        # keys and positions packed in uint64 words between the first and the last pass
        indices_out = torch.empty(n, device=keys.device, dtype=torch.int64)
        words = torch.empty(n, device=keys.device, dtype=torch.uint64)
        kdb = DoubleBuffer(out_k, out_k)
        trace = {} if replay_key is not None else None
        _radix_sort_db(kdb, None, descending, begin_bit, end_bit, gen_indices=True, keys_src=keys,
                       indices_out=indices_out, words=words, rows=rows, trace=trace, segments=segments,
                       segment_positions=segment_positions)
        if trace:
            _remember_sort(replay_key, keys, (keys, out_k, indices_out, words, trace["hist"]), trace, segments)
        return out_k, indices_out
    alt_k = torch.empty_like(keys) if n > 1 else out_k
    kdb = DoubleBuffer(alt_k, out_k)  # selector flips every pass; fixed up below
    vdb = indices_out = None
    if gen_indices and values is None and 1 < n < _NARROW_INDEX_LIMIT:
        # the passes move int32 positions; the last one writes them as int64
        indices_out = torch.empty(n, device=keys.device, dtype=torch.int64)
        vdb = DoubleBuffer(torch.empty(n, device=keys.device, dtype=torch.int32),
                           torch.empty(n, device=keys.device, dtype=torch.int32))
    elif values is not None or gen_indices:
        vt = values if values is not None else torch.empty(n, device=keys.device, dtype=torch.int64)
        out_v = torch.empty_like(vt)
        alt_v = torch.empty_like(vt) if n > 1 else out_v
        vdb = DoubleBuffer(alt_v, out_v)
    if scratch is not None:
        assert values is not None and not gen_indices, "scratch is reported for sorts of keys with values"
        scratch += [(t, False) for t in dict.fromkeys((out_k, alt_k, out_v, alt_v))]   # (distinct, in order)
    # the first pass reads the caller's tensors; count the passes to make the last one write out_*
    _radix_sort_db(kdb, vdb, descending, begin_bit, end_bit, gen_indices=gen_indices, keys_src=keys,
                   values_src=values, indices_out=indices_out, segments=segments,
                   segment_positions=segment_positions, scratch=scratch)
    k = kdb.current
    v = indices_out if indices_out is not None else (vdb.current if vdb is not None else None)
    return k, v


def _remember_sort(replay_key, keys, roots, trace, segments=None) -> None:
    """Keep a replay of the sort just queued (see :func:`_sort_into`) on ``roots`` (keys, sorted keys,
    positions, words, the zeroed workspace);
    nothing is kept when a launch was not bound (then every call plans afresh). A segmented sort's
    replay first copies its tables into the workspace, as :func:`_radix_sort_db` does: those of the
    recorded call when its ``segments`` (offsets) are the same, else made afresh."""
    seg = None
    if "tables" in trace:
        seg = (np.array(segments, dtype=np.int64), trace["tables"], trace["tables_at"], trace["tile"])
    launches = relocatable(trace["launches"], roots)
    if launches is None:
        return
    if len(_SORT_REPLAYS) >= 64:
        _SORT_REPLAYS.clear()
    _SORT_REPLAYS[replay_key] = (policy.select("radix_sort", keys.device, _bucket(keys.numel())),
                                 roots[4].numel(), launches, seg)


def _replay_sort(keys: torch.Tensor, hit, segments=None) -> tuple[torch.Tensor, torch.Tensor]:
    """A remembered sort (:func:`_remember_sort`) of ``keys``: fresh buffers, the same launches
    (``segments``: the offsets of a segmented sort)."""
    _, hist_words, launches, seg = hit
    n, dev = keys.numel(), keys.device
    out_k = torch.empty_like(keys)
    indices_out = torch.empty(n, device=dev, dtype=torch.int64)
    words = torch.empty(n, device=dev, dtype=torch.uint64)
    hist = torch.zeros(hist_words, device=dev, dtype=torch.int64)
    if seg is not None:
        starts, tables, (lo, hi), tile = seg
        if not np.array_equal(starts, segments):
            tables = _segment_tables(segments, cdiv(n, tile), tile, dev)
        elif capturing(dev):
            KEPT_FOR_GRAPHS.append(tables)
        hist[lo:hi].copy_(tables, non_blocking=True)
    replay(launches, (keys.data_ptr(), out_k.data_ptr(), indices_out.data_ptr(), words.data_ptr(), hist.data_ptr()))
    return out_k, indices_out


def _packs_positions(keys: torch.Tensor) -> bool:
    """Whether a sort generating positions packs them with the keys (keys of at most 32 bits, not
    bool; the policy's ``PACKED_POSITIONS``)."""
    if keys.dtype == torch.bool or key_bits(keys.dtype) > 32:
        return False
    return bool(policy.select("radix_sort", keys.device, _bucket(keys.numel())).get("PACKED_POSITIONS", 0))


def sort_keys(keys: torch.Tensor, descending: bool = False, begin_bit: int = 0,
              end_bit: Optional[int] = None) -> torch.Tensor:
    """Stable radix sort of a 1-D key tensor (any strides) over bits ``[begin_bit, end_bit)`` of the
    ordered key (``tritoncub.thread.radix_traits``); returns a new contiguous tensor."""
    begin_bit, end_bit = _prepare(keys, None, descending, begin_bit, end_bit)
    return _sort_into(keys.contiguous(), None, descending, begin_bit, end_bit)[0]


def sort_pairs(keys: torch.Tensor, values: torch.Tensor, descending: bool = False, begin_bit: int = 0,
               end_bit: Optional[int] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Stable radix sort of keys with values of any dtype carried along (1-D, any strides); returns new
    contiguous tensors. Values of 1, 2, 4 or 8 bytes move through the passes as raw bits; wider ones
    (complex128) are gathered once through the sorted positions."""
    begin_bit, end_bit = _prepare(keys, values, descending, begin_bit, end_bit)
    # (a lazily conjugated complex tensor's memory holds the unconjugated values: materialised first, as
    # the dispatcher does for the operator)
    keys, values = keys.contiguous(), values.resolve_conj().contiguous()
    if values.element_size() not in INT_OF_SIZE:
        k, idx = _sort_into(keys, None, descending, begin_bit, end_bit, gen_indices=True)
        return k, values[idx]
    return _sort_into(keys, values, descending, begin_bit, end_bit)


def replay_key_parts() -> tuple:
    """The module switches a sort's launches depend on beyond its problem and policy: what a caller
    that remembers them (e.g. :func:`sort_pairs_recorded`'s) must key them on."""
    return (chain_memo_key(), FORCE_PORTABLE, _STATUS_ONCE_WORDS, _PROBE)


def sort_pairs_recorded(keys: torch.Tensor, values: torch.Tensor, descending: bool,
                        scratch: list) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`sort_pairs` of 1-D contiguous keys (every bit) and values of 1, 2, 4 or 8 bytes, for a
    caller that records its launches (:func:`tritoncub._launch.record_launches`) to replay them on
    fresh buffers: every buffer the sort allocates is appended to ``scratch`` as ``(buffer,
    zeroed)``, in order, the two it returns among them. The caller makes sure the sort reads nothing
    back (``not reads_back(n, device)``): then every launch is queued, and a replay on buffers of the
    same shapes, dtypes and zeroing redoes it (a sort that would read back is refused: its launches
    depend on the keys)."""
    n = keys.numel()
    pol = policy.select("radix_sort", keys.device if keys.is_cuda else None, _bucket(n))
    if _reads_back(pol, n) and not capturing(keys.device):
        raise RuntimeError(f"internal: a recorded sort of {n} keys would read its digit counts back "
                           "(the caller must check reads_back)")
    return _sort_into(keys, values, descending, 0, key_bits(keys.dtype), scratch=scratch)


def sort_keys_double_buffer(keys: DoubleBuffer, descending: bool = False, begin_bit: int = 0,
                            end_bit: Optional[int] = None) -> DoubleBuffer:
    """Sort ``keys.current`` using ``keys.alternate`` as scratch; the result is ``keys.current``
    afterwards (``keys.selector`` updated). No other key-sized memory is allocated."""
    _check_double_buffer(keys, "keys")
    begin_bit, end_bit = _prepare(keys.current, None, descending, begin_bit, end_bit)
    check_no_overlap(keys.buffers[0], keys.buffers[1], "keys.current", "keys.alternate")
    _radix_sort_db(keys, None, descending, begin_bit, end_bit)
    return keys


def sort_pairs_double_buffer(keys: DoubleBuffer, values: DoubleBuffer, descending: bool = False,
                             begin_bit: int = 0, end_bit: Optional[int] = None) -> tuple[DoubleBuffer, DoubleBuffer]:
    """Pairs version of :func:`sort_keys_double_buffer` (when the two selectors differ, ``values.buffers``
    is reordered so that they agree; ``values.current`` is the same tensor before and after that)."""
    _check_double_buffer(keys, "keys")
    _check_double_buffer(values, "values")
    begin_bit, end_bit = _prepare(keys.current, values.current, descending, begin_bit, end_bit)
    if values.current.numel() != keys.current.numel():
        raise InputValueError("keys and values must have the same length")
    if values.current.element_size() not in INT_OF_SIZE:
        raise InputTypeError(f"values of {values.current.element_size()}-byte items ({values.current.dtype}) cannot "
                             "move through the passes; use sort_pairs, or sort indices and gather")
    named = [(keys.buffers[0], "keys.current"), (keys.buffers[1], "keys.alternate"),
             (values.buffers[0], "values.current"), (values.buffers[1], "values.alternate")]
    for i, (a, a_name) in enumerate(named):
        for b, b_name in named[i + 1:]:
            check_no_overlap(a, b, a_name, b_name)
    if values.selector != keys.selector:
        # keep both selectors equal so one pass count flips both the same way
        values.buffers.reverse()
        values.selector = keys.selector
    _radix_sort_db(keys, values, descending, begin_bit, end_bit)
    return keys, values


def rows_in_one_sort(x: torch.Tensor) -> bool:
    """Whether the rows of the 2-D ``x`` [B, L] sort as one problem (see :func:`_sort_lastdim`)."""
    b, length = x.shape
    return (1 < b <= 256 and (b - 1).bit_length() + (length - 1).bit_length() <= 32
            and x.numel() < _NARROW_INDEX_LIMIT and _packs_positions(x))


def segments_fit(shortest: int, n: int, keys: torch.Tensor) -> bool:
    """Whether segments of ``n`` keys in all, the shortest holding ``shortest``, sort as one problem
    (:func:`sort_segments`): keys of any sort dtype but bool, positions within 32 bits, and every
    segment at least one pass tile long."""
    dev = keys.device
    pol = policy.select("radix_sort", dev if dev.type == "cuda" else None, _bucket(n))
    tile = pol["WARPS"] * pol["ITEMS"] * 32 if _use_fast_path(dev) else pol["TL_TILE"]
    return 1 < n < _NARROW_INDEX_LIMIT and shortest >= tile and keys.dtype != torch.bool


def sort_segments(keys: torch.Tensor, offsets: np.ndarray, descending: bool = False,
                  segment_positions: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort each segment ``[offsets[i], offsets[i+1])`` of the 1-D ``keys`` on its own, stably, in one
    onesweep sort (CUB's DeviceSegmentedRadixSort for long segments): ``(sorted keys, int64 flat
    positions they came from)``, or with ``segment_positions`` the positions within the segment
    (``torch.sort(dim=-1)``'s indices when the segments are rows). ``offsets``: host int64, from 0 to ``keys.numel()``, the segments
    as :func:`segments_fit` needs. Every place runs (no read-back); the passes move 8 bytes per key
    (key and position in one word; 64-bit keys: 12, the key and a 4-byte position), as ``sort``'s,
    against 12 for a key made of the segment number and the key with a 4-byte position (impossible
    for 64-bit keys). Temporary memory beyond ``sort``'s: the counts (turned into their prefix over
    segments in place) and the digit offsets, ``2 * places * 2**RADIX_BITS`` int64 per segment (with
    8-bit digits 1 byte a key per place when every segment is one 4096-key tile)."""
    _check_keys(keys)
    check_flag(descending, "descending")
    if keys.dim() != 1 or not keys.is_contiguous():
        raise InputValueError(f"sort_segments: keys must be 1-D and contiguous, got shape {tuple(keys.shape)} "
                              f"and strides {keys.stride()}")
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.size < 2 or offsets[0] != 0 or offsets[-1] != keys.numel() or not segments_fit(
            int(np.diff(offsets).min()), keys.numel(), keys):
        raise InputValueError("sort_segments: the offsets must cover the keys, in segments that segments_fit allows")
    check_flag(segment_positions, "segment_positions")
    return _sort_into(keys, None, descending, 0, key_bits(keys.dtype), gen_indices=True, segments=offsets,
                      segment_positions=segment_positions)


def _sort_lastdim(x: torch.Tensor, descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort the rows of a contiguous 2-D tensor [B, L]: values and int64 indices, torch.sort's result.

    Up to 256 rows (of keys of at most 32 bits, positions packed with the keys, ``B * L`` within 32
    bits of row and column) sort as one problem with one more pass over the row ids. Other rows (more
    of them, or 64-bit keys), each at least a pass tile long, sort as segments
    (:func:`sort_segments`: no pass over the row ids; the last pass writes columns). Otherwise rows form a batch by a second stable
    sort of the row ids: sort every item by key (carrying its flat position), then stably by row
    (carrying the flat position); the row sort needs only ceil(log2(B)) bits.
    """
    b, length = x.shape
    flat = x.reshape(-1)
    if b == 1:
        vals, idx = _sort_into(flat, None, descending, 0, key_bits(x.dtype), gen_indices=True)
        return vals.view(1, length), idx.view(1, length)
    if rows_in_one_sort(x):
        vals, idx = _sort_into(flat, None, descending, 0, key_bits(x.dtype), gen_indices=True, rows=(b, length))
        return vals.view(b, length), idx.view(b, length)
    if segments_fit(length, b * length, x):
        vals, idx = sort_segments(flat, np.arange(b + 1, dtype=np.int64) * length, descending, segment_positions=True)
        return vals.view(b, length), idx.view(b, length)
    _, pos = _sort_into(flat, None, descending, 0, key_bits(x.dtype), gen_indices=True)
    row = (pos // length).to(torch.int32 if b < 2 ** 31 else torch.int64)   # (row ids past int32: int64)
    _, pos2 = _sort_into(row, pos, False, 0, max(1, (b - 1).bit_length()))
    vals = flat[pos2].view(b, length)
    return vals, (pos2 % length).view(b, length)


def sorts_rows_in_one_program(dtype: torch.dtype, length: int, device: torch.device, rows: int) -> bool:
    """Whether :func:`sort` gives ``rows`` rows of ``length`` keys of ``dtype`` to the segmented sort's
    one-program strategies (one launch for all rows) rather than to the onesweep device sort."""
    from . import segmented_sort  # imported here: its long-segment path imports this module
    return dtype in segmented_sort.ROWS_DTYPES and length <= segmented_sort._one_program_limit(
        policy.select("segmented_sort", device, "large"), dtype.itemsize * 8, device, rows)


def sort(x: torch.Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """``torch.sort(x, dim, descending, stable=True)``: values and int64 indices (always stable).

    Rows (the slices along ``dim``) of up to the segmented-sort policy's ``MAX_BLOCK`` items (keys that
    the block radix sort takes, 64-bit keys too in 8-bit digits: up to ``RADIX_MAX_BLOCK`` where it fits
    the device's shared memory; 64-bit keys it does not take, on compiled kernels: up to
    ``segmented_sort.WIDE_KEYS_MAX_BLOCK``, 2048 for one row or more, but not below the policy's
    ``MERGE_TILE`` nor above its ``MAX_BLOCK``) go to
    :func:`tritoncub.device.segmented_sort.sort_rows` (short rows: several per program in registers;
    rows of a few hundred keys and more: one per program, the shared-memory block radix sort);
    longer rows go through the onesweep device sort, all rows as one batch.
    """
    check_tensor(x, "x", KEY_DTYPES)
    check_flag(descending, "descending")
    check_flag(stable, "stable")
    dim = wrap_dim(dim, x.dim())
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    moved = dim != x.dim() - 1
    xt = x.movedim(dim, -1).contiguous() if moved else x.contiguous()
    shape = xt.shape
    length = shape[-1]
    if xt.numel() == 0:
        return x.clone(), torch.zeros(x.shape, dtype=torch.int64, device=x.device)
    if sorts_rows_in_one_program(x.dtype, length, x.device, xt.numel() // length):
        from . import segmented_sort  # imported here: its long-segment path imports this module
        v, i = segmented_sort.sort_rows(xt, descending)
    elif xt.dim() == 1:   # (one row: no reshaping)
        v, i = _sort_into(xt, None, descending, 0, key_bits(x.dtype), gen_indices=True)
    else:
        v, i = _sort_lastdim(xt.view(-1, length), descending)
        v, i = v.view(shape), i.view(shape)
    if moved:
        return v.movedim(-1, dim).contiguous(), i.movedim(-1, dim).contiguous()
    return v, i


# ==============================================================================================
# Torch operators
# ==============================================================================================

@custom_op("tritoncub::sort", mutates_args=())
def _sort_op(x: torch.Tensor, dim: int = -1, descending: bool = False,
             stable: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return sort(x, dim, descending, stable)


@_sort_op.register_fake
def _(x, dim=-1, descending=False, stable=False):
    check_tensor(x, "x", KEY_DTYPES)   # (the real op's argument checks)
    wrap_dim(dim, x.dim())
    # (contiguous results, whatever x's strides, as the real op returns)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device), torch.empty(x.shape, dtype=torch.int64,
                                                                              device=x.device)


def _sort_setup_context(ctx, inputs, output):
    x, dim = inputs[0], inputs[1]
    ctx.dim = dim
    ctx.shape = x.shape
    ctx.save_for_backward(output[1])


def _sort_backward(ctx, grad_values, grad_indices):
    (idx,) = ctx.saved_tensors
    if len(ctx.shape) == 0:
        return grad_values, None, None, None
    g = torch.zeros(ctx.shape, dtype=grad_values.dtype, device=grad_values.device)
    return g.scatter(ctx.dim, idx, grad_values), None, None, None


_sort_op.register_autograd(_sort_backward, setup_context=_sort_setup_context)


@custom_op("tritoncub::argsort", mutates_args=())
def _argsort_op(x: torch.Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> torch.Tensor:
    return sort(x, dim, descending, stable)[1]


@_argsort_op.register_fake
def _(x, dim=-1, descending=False, stable=False):
    check_tensor(x, "x", KEY_DTYPES)
    wrap_dim(dim, x.dim())
    return torch.empty(x.shape, dtype=torch.int64, device=x.device)


@custom_op("tritoncub::sort_keys", mutates_args=())
def _sort_keys_op(keys: torch.Tensor, descending: bool = False, begin_bit: int = 0,
                  end_bit: Optional[int] = None) -> torch.Tensor:
    return sort_keys(keys, descending, begin_bit, end_bit)


@_sort_keys_op.register_fake
def _(keys, descending=False, begin_bit=0, end_bit=None):
    _prepare(keys, None, descending, begin_bit, end_bit)
    return torch.empty(keys.shape, dtype=keys.dtype, device=keys.device)


@custom_op("tritoncub::sort_pairs", mutates_args=())
def _sort_pairs_op(keys: torch.Tensor, values: torch.Tensor, descending: bool = False, begin_bit: int = 0,
                   end_bit: Optional[int] = None) -> tuple[torch.Tensor, torch.Tensor]:
    return sort_pairs(keys, values, descending, begin_bit, end_bit)


@_sort_pairs_op.register_fake
def _(keys, values, descending=False, begin_bit=0, end_bit=None):
    _prepare(keys, values, descending, begin_bit, end_bit)
    return (torch.empty(keys.shape, dtype=keys.dtype, device=keys.device),
            torch.empty(values.shape, dtype=values.dtype, device=values.device))


def argsort(x: torch.Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> torch.Tensor:
    """The indices of :func:`sort` (always stable: equal keys keep input order; NaN after +inf
    ascending, before it descending; equal to ``torch.argsort(x, dim, descending, stable=True)``)."""
    return sort(x, dim, descending, stable)[1]
