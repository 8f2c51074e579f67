"""DeviceSegmentedSort / DeviceSegmentedRadixSort and the batched-row sort: many small sorts in one launch.

Every key is first mapped to *ordered bits* by ``tritoncub.thread.radix_traits.to_ordered_bits``: an
unsigned integer of the key's width whose unsigned order is the order torch sorts in (``-0.0 ==
+0.0``, every NaN equal and above ``+inf``). Descending sorts use the bits as they are, ascending
ones their complement, so every tile kernel sorts one way: largest first.

Strategies, by segment length (thresholds in the ``segmented_sort`` policy):

* **in-register tile sort** (segments of up to ``MAX_BLOCK`` items; where the block radix sort does not
  take them, rows of 64-bit keys on compiled NVIDIA kernels up to :data:`WIDE_KEYS_MAX_BLOCK`, see
  :func:`_one_program_limit`; there every program of
  64-bit keys whose ``BLOCK`` is 512 to 4096, rows or segments, takes :data:`WIDE_KEYS_WARPS` warps instead
  of the policy's ``num_warps``): a program loads ``ROWS``
  segments as a ``[ROWS, BLOCK]`` tile (``BLOCK`` = the next power of two of the segment length, the
  padding holds the smallest ordered key and sorts last), packs ``(ordered_key << idx_bits) |
  (BLOCK-1-index)`` into one 32- or 64-bit word where it fits (8/16/32-bit keys) and runs one
  bitonic sort of the words (our network, whose compare-exchange partner comes from a sum over a
  size-2 hypercube axis, or for 32-bit words along the innermost ``MINMAX_DIMS`` axes each pair's
  min and max; or ``tl.sort`` with ``NETWORK="tl"``); the inverted index in the low bits
  makes equal keys keep their input order, so the sort is **stable**. 64-bit keys are sorted as
  (key, index) pairs by the same network on two tiles. With ``TILE_SPLIT`` the rows are read as 2-8
  joined column slices, which keeps more of each row in one thread's registers (more of the network's
  compare-exchanges stay inside a thread, fewer go through lane shuffles). Sorted keys (and values)
  are gathered from the input by the recovered index, so the output holds the input's exact bits
  (``-0.0`` stays ``-0.0``, NaN payloads are kept); integer keys may be decoded from the sorted words
  instead (``DECODE_KEYS``).
  Tiny segments (a "logical warp" in CUB) are the same kernel with a small ``BLOCK`` and many
  ``ROWS`` per program.
* **block radix sort** (``TILE_SORT="radix"``: segments whose ``BLOCK`` is at least
  ``RADIX_MIN_BLOCK``, keys of at most 32 bits -- 64-bit keys too, as two words, in 8-bit digits, with
  :data:`WIDE_KEYS_BLOCK_RADIX` -- compiled NVIDIA kernels): one program per segment
  runs CUB's ``BlockRadixSort`` in shared memory (``tritoncub.block.radix_sort.block_radix_sort_smem``:
  LSD passes of ``RADIX_BITS``, warps ranking by ballots, counters scanned, keys and their columns
  exchanged through shared memory); stable. Keys and values are then gathered from the input by the
  sorted columns, as above. Elsewhere (the interpreter, other GPUs, 64-bit keys under other digit
  widths) the tile sort.
  Segments longer than ``MAX_BLOCK`` whose ``BLOCK`` is at most ``RADIX_MAX_BLOCK`` (8192: 16 warps
  of 16 keys, 128 KB of shared memory for 32- and 64-bit keys, 64 KB for narrower ones) go this way too
  where it applies and fits the device's shared memory, not to the long-segment paths (H200, fp32 rows of
  8192 keys, values + int64 indices: 512 rows 0.090 ms against 0.255 by the segmented onesweep sort
  and torch's 0.367; ``bench/results/logs/block_radix_8192_probe-h200-20261128b.log``).
  With ``RADIX_WARP_MIN_BLOCK`` set, shorter segments (from that ``BLOCK`` up to 512 keys) are sorted
  one per warp (CUB's WarpRadixSort: each warp scans its own counters), ``RADIX_WARP_ROWS`` per
  program; off on the H100, where the tile sort was faster for rows of 32-128 keys.
* **device radix sort** (longer segments, the default): keys of up to 32 bits in segments each at
  least a radix-sort tile long (4096 keys on the H100) go through one *segmented* onesweep sort
  (``tritoncub.device.radix_sort.sort_segments``: the long segments' keys laid one after another, a
  histogram per segment, per-segment digit offsets, key and position in one 8-byte word per pass),
  then keys, values and positions are put in place. Otherwise the long segments' keys become one
  array of composite keys ``segment << key_bits | ordered_key`` sorted by one stable onesweep radix
  sort with in-segment positions as values (more passes: the segment bits; 12 bytes per key and
  pass), used when key bits + segment-number bits fit 64.
* **merge path** (longer segments when key + segment bits exceed 64, when the radix sort cannot
  build, or with ``LONG_PATH="merge"``): the segment is cut into ``MERGE_TILE`` chunks sorted by the
  tile kernel, then runs are merged pairwise, ``log2(length / MERGE_TILE)`` passes, each item finding its
  place in the partner run by a binary search on (ordered key, index), which is a total order, so
  the merge is stable and deterministic.

Segments are binned by length on the GPU (``_segment_bins_kernel``: each segment's bin, the count
per bin, and whether any offsets are out of range or decrease), then read back in one device-to-host
copy; one launch per bin. The short segments are launched first, so that the GPU sorts them while the
host plans the long ones (H200, the ragged case below: 3.21-3.22 ms per call in do_bench against
3.78-3.99 binned on the host; ``bench/results/logs/host_paths_ab-short-first-h200-20261129.log``).
``sort_rows`` is the batched path the ``sort`` operator can dispatch rows to.

Guarantees: stable for every dtype, deterministic, torch's order (NaN last ascending / first
descending, ``-0.0 == +0.0`` in input order), int64-safe offsets.

Measured (H100, fp32 values + int64 indices, torch.sort(dim=-1) in the same run): 65536 rows x 128,
bitonic tile sort 0.114 ms (torch 0.449), block radix sort 0.153; 4096 x 1024, bitonic 0.251 ms,
block radix sort 0.070 (torch 0.169); 1024 x 4096, bitonic 0.514, block radix 0.097 (torch 0.165)
(bench/results/logs/block_radix_rows_tune-20261123.*); the tile sort with 4 column slices, row masks
and 2048 items per program, 0.091 ms for 65536 x 128 (torch 0.447; tile_split_probe-*-20261124.log);
1024 items on 2 warps about the same (89.5 us of GPU time), fp16 rows 43 us with MINMAX_DIMS; 512 items
on 1 warp (shipped) 86 us, 0.0880 ms vs torch 0.4461 in the bench (5.07x). The block radix sort with
one exchange word per key from its second pass (32-bit keys, 8-bit digits, rows of 512 to 2^16) and
alternating counter sets: 4096 x 1024 62 us of GPU time (was 64.5), 0.0655 ms vs torch 0.1683 in the
bench (bench/probes/RADIX_RANK_NOTES.md, round 9).
Long rows on the merge path: 16 x 2^20 in 14.7 ms vs torch 1.67 ms (H100, 2026-11-22; no log of that run
was kept), which is why long segments default to the device radix sort. 100k power-law segments, 2^26 fp32 keys (1850 segments over 4096 keys hold
55% of them; bench/results/logs/bench-segmented-*-20261125.log, three runs): keys 4.82-6.17 ms, pairs
4.69-5.21 ms (torch's two stable sorts 15.45-15.48 / 18.32-18.33) with the segmented sort, against 10.5-11.4 / 8.0-9.4 ms
with composite keys (six passes of 12 bytes a key instead of four of 8, and the segment histogram
0.29 ms); the op is host-bound there (about 3.2 ms of GPU time a call, keys only).
"""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Optional

import numpy as np
import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.runtime.errors import OutOfResources, PTXASError

from .. import policy
from .._library import custom_op
from .. import _launch as _launch_module
from .._launch import launch, record_launches, recording_launches, relocatable, replay, replays_ok
from .._utils import (INT_OF_SIZE, KEPT_FOR_GRAPHS, TL_DTYPE, InputTypeError, InputValueError, capturing, cdiv,
                      check_device, check_flag, check_tensor, check_same_device, compile_only, inline_ptx_ok,
                      interpreter_active, maxnreg_kwargs, next_power_of_2, refuse_capture, smem_per_block)
from ..block.histogram import block_histogram
from ..block.radix_sort import block_radix_sort_smem, block_radix_sort_smem_words, smem_exchange_words
from ..thread.radix_traits import from_ordered_bits, to_ordered_bits

# ----------------------------------------------------------------------------------------------
# Key transform (ordered bits) and the bitonic (key, index) network
# ----------------------------------------------------------------------------------------------


@triton.jit
def ordered_bits(bits, KEY_DTYPE: tl.constexpr, FLIP: tl.constexpr):
    """Raw key bits (an int tile of the key's width) -> uint64 ordered bits (``radix_traits``' order:
    torch's, ``-0.0 == +0.0``, NaN above ``+inf``). FLIP complements them (ascending sorts)."""
    return to_ordered_bits(bits.to(KEY_DTYPE, bitcast=True), FLIP).to(tl.uint64)


@triton.jit
def _indicator(N_DIMS: tl.constexpr, J: tl.constexpr):
    ar = tl.arange(0, 2)
    ar = tl.reshape(ar, [1] * (N_DIMS - J - 1) + [2] + [1] * J)
    return ar


@triton.jit
def _partner(x, AXIS: tl.constexpr):
    """The other item of each pair along a size-2 axis of a hypercube tile: (a + b) - self, in
    wrapping unsigned arithmetic (a plain sum reduction: as cheap as an xor-reduction on the GPU and
    vectorised under the interpreter)."""
    return tl.sum(x, AXIS, keep_dims=True) - x


@triton.jit
def _compare_swap(x, flip, I: tl.constexpr, N_DIMS: tl.constexpr, MINMAX: tl.constexpr = False):
    """Compare-swap of the pairs along hypercube dim ``I`` (0: the innermost). MINMAX: the pair's
    smaller and larger items as two size-2 reductions, then a select by position alone (one compare
    per pair where the dim lies in a thread's registers; the default finds each item's partner and
    compares on both sides)."""
    is_right = _indicator(N_DIMS, I)
    if MINMAX:
        lo = tl.min(x, N_DIMS - 1 - I, keep_dims=True)
        hi = tl.max(x, N_DIMS - 1 - I, keep_dims=True)
        out = tl.where((flip ^ is_right) != 0, hi, lo)
    else:
        y = _partner(x, N_DIMS - 1 - I)
        out = tl.where((x > y) != (flip ^ is_right), y, x)
    return out


@triton.jit
def _bitonic_merge(h, STAGE: tl.constexpr, ORDER: tl.constexpr, N_DIMS: tl.constexpr,
                   MINMAX_DIMS: tl.constexpr = 0):
    """STAGE rounds of compare-swap on a hypercube tile; ORDER 0 ascending, 1 descending, 2 alternating.
    The innermost ``MINMAX_DIMS`` dims compare-swap by min/max (see :func:`_compare_swap`)."""
    if ORDER == 2:
        flip = _indicator(N_DIMS, STAGE)
    else:
        flip = ORDER
    for i in tl.static_range(STAGE):
        h = _compare_swap(h, flip, STAGE - 1 - i, N_DIMS, STAGE - 1 - i < MINMAX_DIMS)
    return h


@triton.jit
def bitonic_sort_descending(x, ROWS: tl.constexpr, BLOCK: tl.constexpr, LOG_N: tl.constexpr,
                            N_DIMS: tl.constexpr, MINMAX_DIMS: tl.constexpr = 0):
    """Bitonic sort of a [ROWS, BLOCK] unsigned tile along axis 1, largest first (``MINMAX_DIMS``: see
    :func:`_bitonic_merge`)."""
    h = tl.reshape(x, [2] * N_DIMS)
    for stage in tl.static_range(1, LOG_N + 1):
        h = _bitonic_merge(h, stage, 2 if stage < LOG_N else 1, N_DIMS, MINMAX_DIMS)
    return tl.reshape(h, [ROWS, BLOCK])


@triton.jit
def bitonic_topk(x, ROWS: tl.constexpr, K_LOG: tl.constexpr, LOG_N: tl.constexpr, N_DIMS: tl.constexpr):
    """The 2**K_LOG largest items of each row of a [ROWS, 2**LOG_N] unsigned tile, largest first
    ([ROWS, 2**K_LOG]): sort runs of 2**K_LOG, then repeatedly keep the larger half of neighbouring
    runs (an element-wise max) and re-merge. (The top 1 is the row maximum: with one row the
    network would reduce to a scalar.)"""
    # (one return after a constexpr if/else: the compiler, unlike the interpreter, also builds the
    # statements after an early return in a constexpr branch)
    if K_LOG == 0:
        top = tl.max(tl.reshape(x, [ROWS, 1 << LOG_N]), axis=1, keep_dims=True)
    else:
        h = tl.reshape(x, [2] * N_DIMS)
        for stage in tl.static_range(1, K_LOG + 1):
            h = _bitonic_merge(h, stage, 2 if stage < LOG_N else 1, N_DIMS)
        for i in tl.static_range(K_LOG + 1, LOG_N + 1):
            h = tl.max(h, axis=N_DIMS - (i - K_LOG - 1) - 1 - K_LOG)
            h = _bitonic_merge(h, K_LOG, 2 if i < LOG_N else 1, N_DIMS - (i - K_LOG))
        top = tl.reshape(h, [ROWS, 1 << K_LOG])
    return top


@triton.jit
def _compare_swap_pairs(k, v, flip, I: tl.constexpr, N_DIMS: tl.constexpr):
    pk = _partner(k, N_DIMS - 1 - I)
    pv = _partner(v, N_DIMS - 1 - I)
    is_right = _indicator(N_DIMS, I)
    gt = (k > pk) | ((k == pk) & (v > pv))
    swap = gt != (flip ^ is_right)
    return tl.where(swap, pk, k), tl.where(swap, pv, v)


@triton.jit
def sort_pairs_descending(k, v, ROWS: tl.constexpr, BLOCK: tl.constexpr, LOG_N: tl.constexpr,
                          N_DIMS: tl.constexpr):
    """Bitonic sort of a [ROWS, BLOCK] tile along axis 1 (BLOCK = 2**LOG_N, ROWS * BLOCK =
    2**N_DIMS), largest (k, v) first in lexicographic order; k and v are uint64 tiles."""
    hk = tl.reshape(k, [2] * N_DIMS)
    hv = tl.reshape(v, [2] * N_DIMS)
    for stage in tl.static_range(1, LOG_N + 1):
        if stage < LOG_N:
            flip = _indicator(N_DIMS, stage)
        else:
            flip = 1
        for i in tl.static_range(stage):
            hk, hv = _compare_swap_pairs(hk, hv, flip, stage - 1 - i, N_DIMS)
    return tl.reshape(hk, [ROWS, BLOCK]), tl.reshape(hv, [ROWS, BLOCK])


@triton.jit
def sort_tile_descending(ordp, cols, ROWS: tl.constexpr, BLOCK: tl.constexpr, LOG_N: tl.constexpr,
                         N_DIMS: tl.constexpr, PACK: tl.constexpr, TL_SORT: tl.constexpr = False,
                         MINMAX_DIMS: tl.constexpr = 0):
    """Stable descending sort of the ordered keys ``ordp`` ([ROWS, BLOCK] uint64) along axis 1.

    Returns the input column of each sorted slot (int64). PACK 32/64 packs key and inverted column
    into one word (key bits + LOG_N must fit); PACK 0 runs the (key, index) pair network. TL_SORT
    uses ``tl.sort`` (xor-reduction partner) instead of our network for packed words."""
    inv = (BLOCK - 1 - cols).to(tl.uint64)
    inv = tl.broadcast_to(inv[None, :], ordp.shape)
    if PACK == 0:
        sk, si = sort_pairs_descending(ordp, inv, ROWS, BLOCK, LOG_N, N_DIMS)
        sel = si
    elif PACK == 32:
        p = ((ordp << LOG_N) | inv).to(tl.uint32)
        if TL_SORT:
            p = tl.sort(p, descending=True)
        else:
            p = bitonic_sort_descending(p, ROWS, BLOCK, LOG_N, N_DIMS, MINMAX_DIMS)
        sel = (p & (BLOCK - 1)).to(tl.uint64)
    else:
        p = (ordp << LOG_N) | inv
        if TL_SORT:
            p = tl.sort(p, descending=True)
        else:
            p = bitonic_sort_descending(p, ROWS, BLOCK, LOG_N, N_DIMS, MINMAX_DIMS)
        sel = p & (BLOCK - 1)
    return (BLOCK - 1) - sel.to(tl.int64)


@triton.jit
def _column_slice_words(keys_ptr, begin, length, rmask, Q: tl.constexpr, W: tl.constexpr, BLOCK: tl.constexpr,
                        LOG_N: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr,
                        FULL_ROWS: tl.constexpr):
    """Packed words (ordered key, inverted column) of columns ``[Q * W, (Q + 1) * W)`` of each row
    (``begin``/``length``/``rmask``: [ROWS]); columns past a row's length give 0 (sorted last).
    ``FULL_ROWS``: every row of a valid ``rmask`` is full (the other rows' words are never stored)."""
    c = Q * W + tl.arange(0, W)
    if FULL_ROWS:
        ordp = ordered_bits(tl.load(keys_ptr + begin[:, None] + c[None, :], mask=rmask[:, None], other=0), KEY_DTYPE,
                            ASCENDING)
    else:
        m = c[None, :] < length[:, None]
        bits = tl.load(keys_ptr + begin[:, None] + c[None, :], mask=m, other=0)
        ordp = tl.where(m, ordered_bits(bits, KEY_DTYPE, ASCENDING), 0)
    return (ordp << LOG_N) | (BLOCK - 1 - c)[None, :].to(tl.uint64)


@triton.jit
def _decoded_key_bits(ordered, KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr):
    """Raw bits (the signed int type of the key's width) of integer keys from their sorted ordered bits
    ``ordered`` (``ordered_bits(..., ASCENDING)``, in a wider unsigned tile). (Float keys are gathered
    from the input instead: their canonical ordered bits lost the signs of zeros and NaN payloads.)"""
    if KEY_BITS == 8:
        raw = from_ordered_bits(ordered.to(tl.uint8), KEY_DTYPE, ASCENDING).to(tl.int8, bitcast=True)
    elif KEY_BITS == 16:
        raw = from_ordered_bits(ordered.to(tl.uint16), KEY_DTYPE, ASCENDING).to(tl.int16, bitcast=True)
    elif KEY_BITS == 32:
        raw = from_ordered_bits(ordered.to(tl.uint32), KEY_DTYPE, ASCENDING).to(tl.int32, bitcast=True)
    else:
        raw = from_ordered_bits(ordered.to(tl.uint64), KEY_DTYPE, ASCENDING).to(tl.int64, bitcast=True)
    return raw


@triton.jit
def _joined_slice_words(keys_ptr, begin, length, rmask, Q: tl.constexpr, STEP: tl.constexpr, SPLIT: tl.constexpr,
                        BLOCK: tl.constexpr, LOG_N: tl.constexpr, KEY_DTYPE: tl.constexpr,
                        ASCENDING: tl.constexpr, FULL_ROWS: tl.constexpr):
    """The words of slices ``Q, Q + STEP, ...`` (of ``SPLIT`` slices of ``BLOCK // SPLIT`` columns),
    joined into one tile with a new minor dimension per halving (the words carry their columns: any
    arrangement of the slices sorts the same)."""
    if STEP == SPLIT:
        w = _column_slice_words(keys_ptr, begin, length, rmask, Q, BLOCK // SPLIT, BLOCK, LOG_N, KEY_DTYPE,
                                ASCENDING, FULL_ROWS)
    else:
        w = tl.join(_joined_slice_words(keys_ptr, begin, length, rmask, Q, 2 * STEP, SPLIT, BLOCK, LOG_N,
                                        KEY_DTYPE, ASCENDING, FULL_ROWS),
                    _joined_slice_words(keys_ptr, begin, length, rmask, Q + STEP, 2 * STEP, SPLIT, BLOCK, LOG_N,
                                        KEY_DTYPE, ASCENDING, FULL_ROWS))
    return w


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------


@triton.jit
def _segment_tile_sort_kernel(
        keys_ptr, vals_ptr, out_keys_ptr, out_vals_ptr, out_idx_ptr,
        seg_begin_ptr, seg_len_ptr, seg_list_ptr, idx_base_ptr,
        num_segs, row_len, row_stride,
        BLOCK: tl.constexpr, ROWS: tl.constexpr, LOG_N: tl.constexpr, N_DIMS: tl.constexpr,
        PACK: tl.constexpr, TL_SORT: tl.constexpr, UNIFORM: tl.constexpr, HAS_LIST: tl.constexpr,
        HAS_IDX_BASE: tl.constexpr,
        HAS_VALS: tl.constexpr, WRITE_KEYS: tl.constexpr, WRITE_IDX: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr, SPLIT: tl.constexpr = 1,
        DECODE_KEYS: tl.constexpr = False, FULL_ROWS: tl.constexpr = False, MINMAX_DIMS: tl.constexpr = 0):
    """One program sorts ROWS segments of at most BLOCK items each, in registers.

    ``SPLIT`` (2, 4 or 8; packed words only): each row is read as SPLIT column slices joined along new
    minor dimensions, which Triton keeps in each thread's registers: the network's shortest strides then
    pair items a thread holds instead of items of other lanes (fewer shuffles). The words carry their
    columns, so the arrangement of the input does not matter; the sorted tile is in rank order."""
    pid = tl.program_id(0)
    r = pid.to(tl.int64) * ROWS + tl.arange(0, ROWS)
    rmask = r < num_segs
    if UNIFORM:
        begin = r * row_stride
        length = tl.where(rmask, row_len, 0).to(tl.int64)
    else:
        if HAS_LIST:
            seg = tl.load(seg_list_ptr + r, mask=rmask, other=0).to(tl.int64)
        else:
            seg = r
        begin = tl.load(seg_begin_ptr + seg, mask=rmask, other=0).to(tl.int64)
        length = tl.load(seg_len_ptr + seg, mask=rmask, other=0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    if FULL_ROWS:
        mask = tl.broadcast_to(rmask[:, None], [ROWS, BLOCK])
    else:
        mask = cols[None, :] < length[:, None]
    if SPLIT > 1:
        p = _joined_slice_words(keys_ptr, begin, length, rmask, 0, 1, SPLIT, BLOCK, LOG_N, KEY_DTYPE, ASCENDING,
                                FULL_ROWS)
        if PACK == 32:
            p = p.to(tl.uint32)
        p = tl.reshape(bitonic_sort_descending(p, ROWS, BLOCK, LOG_N, N_DIMS, MINMAX_DIMS), [ROWS, BLOCK])
        idx = (BLOCK - 1) - (p & (BLOCK - 1)).to(tl.int64)
        if DECODE_KEYS:
            sorted_bits = _decoded_key_bits(p >> LOG_N, KEY_BITS, KEY_DTYPE, ASCENDING)
    else:
        bits = tl.load(keys_ptr + begin[:, None] + cols[None, :], mask=mask, other=0)
        ordp = ordered_bits(bits, KEY_DTYPE, ASCENDING)
        ordp = tl.where(mask, ordp, tl.zeros_like(ordp))
        idx = sort_tile_descending(ordp, cols, ROWS, BLOCK, LOG_N, N_DIMS, PACK, TL_SORT, MINMAX_DIMS)
    src = begin[:, None] + idx
    dst = begin[:, None] + cols[None, :]
    if WRITE_KEYS:
        if DECODE_KEYS and SPLIT > 1:
            tl.store(out_keys_ptr + dst, sorted_bits, mask=mask)
        else:
            tl.store(out_keys_ptr + dst, tl.load(keys_ptr + src, mask=mask), mask=mask)
    if HAS_VALS:
        tl.store(out_vals_ptr + dst, tl.load(vals_ptr + src, mask=mask), mask=mask)
    if WRITE_IDX:
        if HAS_IDX_BASE:
            idx += tl.load(idx_base_ptr + seg, mask=rmask, other=0).to(tl.int64)[:, None]
        tl.store(out_idx_ptr + dst, idx, mask=mask)


@gluon.jit
def _segment_block_radix_sort_kernel(
        keys_ptr, vals_ptr, out_keys_ptr, out_vals_ptr, out_idx_ptr,
        seg_begin_ptr, seg_len_ptr, seg_list_ptr, idx_base_ptr,
        num_segs, row_len, row_stride,
        UNIFORM: gl.constexpr, HAS_LIST: gl.constexpr, HAS_IDX_BASE: gl.constexpr,
        HAS_VALS: gl.constexpr, WRITE_KEYS: gl.constexpr, WRITE_IDX: gl.constexpr,
        KEY_BITS: gl.constexpr, KEY_DTYPE: gl.constexpr, ASCENDING: gl.constexpr,
        RADIX_BITS: gl.constexpr, WARPS: gl.constexpr, ITEMS: gl.constexpr, SMEM_ROWS: gl.constexpr,
        WARP_ROWS: gl.constexpr = False, OR_EVERY: gl.constexpr = 0, SMEM_GATHER: gl.constexpr = 0,
        TOP_K: gl.constexpr = False):
    """One program sorts one segment of at most WARPS*ITEMS*32 keys in shared memory
    (``block_radix_sort_smem``; keys of 64 bits as two words, where :data:`WIDE_KEYS_BLOCK_RADIX` lets
    them come here), or with ``WARP_ROWS`` one segment of at most ITEMS*32 keys per warp (WARPS segments
    per program); arguments as :func:`_segment_tile_sort_kernel`'s.
    ``SMEM_GATHER``: how the sorted keys are written: 0 gathered from the input by their source
    columns, 1 carried through shared memory by the sort (its payload), 2 read again in input order
    after the sort and exchanged through shared memory.
    ``TOP_K``: only the first ``row_len`` sorted items of each listed segment are written, keys to
    ``out_keys_ptr[seg * row_stride + i]`` and their positions in the input (``begin + column``) to
    ``out_idx_ptr[seg * row_stride + i]`` (a segmented top-k's ``[segments, k]`` outputs: ``row_len`` and
    ``row_stride`` are then k, the input's segments come from the lists; slots past a segment's length
    are left as they are)."""
    gl.static_assert((SMEM_GATHER >= 0) & (SMEM_GATHER <= 2), "SMEM_GATHER must be 0, 1 or 2")
    gl.static_assert((not TOP_K) or ((SMEM_GATHER == 0) and (not HAS_VALS) and (not HAS_IDX_BASE)
                                     and (not UNIFORM)),
                     "TOP_K writes listed segments' keys gathered by source column and absolute positions only")
    RADIX: gl.constexpr = 1 << RADIX_BITS
    L3: gl.constexpr = gl.BlockedLayout([1, ITEMS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    LW: gl.constexpr = gl.SliceLayout(1, gl.SliceLayout(2, L3))
    # the kernel's first and only explicit allocation: word i of it is word i of global_smem
    smem = gl.allocate_shared_memory(gl.int32, [SMEM_ROWS, RADIX], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    pid = gl.program_id(0)
    w = gl.arange(0, WARPS, layout=LW)
    s = gl.arange(0, ITEMS, layout=gl.SliceLayout(0, gl.SliceLayout(2, L3)))
    ln = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(1, L3)))
    warp = gl.expand_dims(gl.expand_dims(w, 1), 2)
    in_warp = gl.expand_dims(gl.expand_dims(s, 0), 2) * 32 + gl.expand_dims(gl.expand_dims(ln, 0), 1)
    local = warp * (32 * ITEMS) + in_warp
    if WARP_ROWS:   # the segment of each warp ([WARPS] here, [WARPS, 1, 1] below)
        slot = pid.to(gl.int64) * WARPS + w
        live = slot < num_segs
        if UNIFORM:
            seg = slot
            begin = seg * row_stride
            length = gl.where(live, row_len, 0)
        else:
            if HAS_LIST:
                seg = gl.load(seg_list_ptr + slot, mask=live, other=0).to(gl.int64)
            else:
                seg = slot
            begin = gl.load(seg_begin_ptr + seg, mask=live, other=0).to(gl.int64)
            length = gl.load(seg_len_ptr + seg, mask=live, other=0).to(gl.int64)
        if HAS_IDX_BASE:
            base_idx = gl.expand_dims(gl.expand_dims(
                gl.load(idx_base_ptr + seg, mask=live, other=0).to(gl.int64), 1), 2)
        begin = gl.expand_dims(gl.expand_dims(begin, 1), 2)
        length = gl.expand_dims(gl.expand_dims(length, 1), 2)
        pos = in_warp      # (an item's position in its segment)
    else:
        if UNIFORM:
            seg = pid.to(gl.int64)
            begin = seg * row_stride
            length = row_len
        else:
            if HAS_LIST:
                seg = gl.load(seg_list_ptr + pid).to(gl.int64)
            else:
                seg = pid.to(gl.int64)
            begin = gl.load(seg_begin_ptr + seg).to(gl.int64)
            length = gl.load(seg_len_ptr + seg).to(gl.int64)
        if HAS_IDX_BASE:
            base_idx = gl.load(idx_base_ptr + seg).to(gl.int64)
        pos = local
    valid = pos < length
    raw = gl.load(keys_ptr + begin + pos, mask=valid, other=0)
    if KEY_BITS > 32:
        # (64-bit keys: the ordered bits' two words; the sorted keys are gathered back by source column)
        gl.static_assert(SMEM_GATHER == 0, "keys wider than 32 bits are gathered back (SMEM_GATHER 0)")
        wide = to_ordered_bits(raw.to(KEY_DTYPE, bitcast=True), not ASCENDING)
        bits = (wide & 0xFFFFFFFF).to(gl.uint32).to(gl.int32, bitcast=True)
        col, moved = block_radix_sort_smem(bits, valid, local, warp, smem, KEY_BITS, RADIX_BITS, WARPS, WARP_ROWS,
                                           OR_EVERY, bits, False, (wide >> 32).to(gl.uint32).to(gl.int32, bitcast=True))
    else:
        bits = to_ordered_bits(raw.to(KEY_DTYPE, bitcast=True), not ASCENDING).to(gl.uint32).to(gl.int32, bitcast=True)
        col, moved = block_radix_sort_smem(bits, valid, local, warp, smem, KEY_BITS, RADIX_BITS, WARPS, WARP_ROWS,
                                           OR_EVERY, raw.to(gl.int32), (SMEM_GATHER == 1) and WRITE_KEYS)
    if (SMEM_GATHER == 2) and WRITE_KEYS:
        # the keys read again in input order (coalesced), through shared memory into sorted order
        moved = smem_exchange_words(gl.load(keys_ptr + begin + pos, mask=valid, other=0).to(gl.int32), local, col)
    if WARP_ROWS:
        col = col - warp * (32 * ITEMS)
    src = begin + col
    if TOP_K:
        # (the first row_len sorted items into the segment's row of a [segments, row_stride] output)
        first = valid & (pos < row_len)
        if WARP_ROWS:
            out_row = gl.expand_dims(gl.expand_dims(seg, 1), 2) * row_stride
        else:
            out_row = seg * row_stride
        if WRITE_KEYS:
            gl.store(out_keys_ptr + out_row + pos, gl.load(keys_ptr + src, mask=first), mask=first)
        if WRITE_IDX:
            gl.store(out_idx_ptr + out_row + pos, src, mask=first)
    else:
        dst = begin + pos
        if WRITE_KEYS:
            if SMEM_GATHER > 0:
                gl.store(out_keys_ptr + dst, moved.to(raw.dtype), mask=valid)
            else:
                gl.store(out_keys_ptr + dst, gl.load(keys_ptr + src, mask=valid), mask=valid)
        if HAS_VALS:
            gl.store(out_vals_ptr + dst, gl.load(vals_ptr + src, mask=valid), mask=valid)
        if WRITE_IDX:
            idx = col.to(gl.int64)
            if HAS_IDX_BASE:
                idx += base_idx
            gl.store(out_idx_ptr + dst, idx, mask=valid)


@triton.jit
def _segment_tile(tile_seg_ptr, tile_first_ptr):
    """This program's tile of :func:`_segment_tiles`: its segment and first position in it (int64)."""
    t = tl.program_id(0)
    return tl.load(tile_seg_ptr + t).to(tl.int64), tl.load(tile_first_ptr + t).to(tl.int64)


@triton.jit
def _merge_pass_kernel(
        src_keys_ptr, src_idx_ptr, dst_keys_ptr, dst_idx_ptr, vals_ptr, out_vals_ptr,
        seg_begin_ptr, seg_len_ptr, tile_seg_ptr, tile_first_ptr, run,
        SEARCH_STEPS: tl.constexpr, BLOCK: tl.constexpr, FINAL_VALS: tl.constexpr, WRITE_IDX: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr):
    """Merge neighbouring sorted runs of ``run`` items of each long segment (runs 2j and 2j+1); one
    program per tile of :func:`_segment_tiles`."""
    s, tile_start = _segment_tile(tile_seg_ptr, tile_first_ptr)
    begin = tl.load(seg_begin_ptr + s).to(tl.int64)
    length = tl.load(seg_len_ptr + s).to(tl.int64)
    pos = tile_start + tl.arange(0, BLOCK)
    mask = pos < length
    pair_start = (pos // (2 * run)) * (2 * run)
    in_b = (pos - pair_start) >= run
    own_start = tl.where(in_b, pair_start + run, pair_start)
    oth_start = tl.where(in_b, pair_start, pair_start + run)
    oth_len = tl.minimum(tl.maximum(length - oth_start, 0), run)
    my_bits = tl.load(src_keys_ptr + begin + pos, mask=mask, other=0)
    my_idx = tl.load(src_idx_ptr + begin + pos, mask=mask, other=0)
    my_key = ordered_bits(my_bits, KEY_DTYPE, ASCENDING)
    lo = tl.zeros([BLOCK], tl.int64)
    hi = tl.where(mask, oth_len, 0)
    for _ in tl.static_range(SEARCH_STEPS):
        active = lo < hi
        mid = (lo + hi) // 2
        o_bits = tl.load(src_keys_ptr + begin + oth_start + mid, mask=active, other=0)
        o_idx = tl.load(src_idx_ptr + begin + oth_start + mid, mask=active, other=0)
        o_key = ordered_bits(o_bits, KEY_DTYPE, ASCENDING)
        before = (o_key > my_key) | ((o_key == my_key) & (o_idx < my_idx))
        lo = tl.where(active & before, mid + 1, lo)
        hi = tl.where(active & (~before), mid, hi)
    dest = begin + pair_start + (pos - own_start) + lo
    tl.store(dst_keys_ptr + dest, my_bits, mask=mask)
    if WRITE_IDX:
        tl.store(dst_idx_ptr + dest, my_idx, mask=mask)
    if FINAL_VALS:
        tl.store(out_vals_ptr + dest, tl.load(vals_ptr + begin + my_idx, mask=mask), mask=mask)


@triton.jit
def _long_segment_tile(tile_seg_ptr, tile_first_ptr, seg_begin_ptr, seg_len_ptr, seg_cum_ptr, BLOCK: tl.constexpr):
    """This program's tile of a long segment (:func:`_segment_tiles`): ``(segment, its first position
    in the keys, its first position with the long segments laid one after another, the tile's
    positions within the segment, which of them are in it)``."""
    s, tile_start = _segment_tile(tile_seg_ptr, tile_first_ptr)
    begin = tl.load(seg_begin_ptr + s).to(tl.int64)
    length = tl.load(seg_len_ptr + s).to(tl.int64)
    cum = tl.load(seg_cum_ptr + s).to(tl.int64)
    pos = tile_start + tl.arange(0, BLOCK)
    return s, begin, cum, pos, pos < length


@triton.jit
def _pack_composite_kernel(
        keys_ptr, comp_ptr, idx_ptr, seg_begin_ptr, seg_len_ptr, seg_cum_ptr, tile_seg_ptr, tile_first_ptr,
        BLOCK: tl.constexpr, SEG_IN_KEY: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, DESCENDING: tl.constexpr):
    """Long segments -> one array of composite keys ``segment << KEY_BITS | ordered_key`` (ascending
    order = the wanted order) and in-segment positions, for one device radix sort; one program per
    tile of :func:`_segment_tiles`."""
    s, begin, cum, pos, mask = _long_segment_tile(tile_seg_ptr, tile_first_ptr, seg_begin_ptr, seg_len_ptr,
                                                  seg_cum_ptr, BLOCK)
    bits = tl.load(keys_ptr + begin + pos, mask=mask, other=0)
    o = ordered_bits(bits, KEY_DTYPE, DESCENDING)
    if SEG_IN_KEY:
        o = o | (s.to(tl.uint64) << KEY_BITS)
    tl.store(comp_ptr + cum + pos, o.to(tl.int64, bitcast=True), mask=mask)
    tl.store(idx_ptr + cum + pos, pos.to(idx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _gather_segments_kernel(keys_ptr, out_ptr, seg_begin_ptr, seg_len_ptr, seg_cum_ptr, tile_seg_ptr, tile_first_ptr,
                            BLOCK: tl.constexpr):
    """Long segments' keys, one after another (``out[cum[s] + i] = keys[begin[s] + i]``), for one
    segmented radix sort; one program per tile of :func:`_segment_tiles`."""
    _, begin, cum, pos, mask = _long_segment_tile(tile_seg_ptr, tile_first_ptr, seg_begin_ptr, seg_len_ptr,
                                                 seg_cum_ptr, BLOCK)
    tl.store(out_ptr + cum + pos, tl.load(keys_ptr + begin + pos, mask=mask), mask=mask)


@triton.jit
def _unpack_composite_kernel(
        keys_ptr, vals_ptr, idx_ptr, out_keys_ptr, out_vals_ptr, out_idx_ptr, seg_begin_ptr, seg_len_ptr,
        seg_cum_ptr, tile_seg_ptr, tile_first_ptr, sorted_keys_ptr, BLOCK: tl.constexpr, HAS_VALS: tl.constexpr,
        WRITE_KEYS: tl.constexpr, WRITE_IDX: tl.constexpr, FLAT: tl.constexpr = False):
    """Sorted in-segment positions -> sorted keys, values and indices at the segments' places; one
    program per tile of :func:`_segment_tiles`. ``FLAT`` (the segmented radix sort's output): the
    positions are into the segments laid one after another, and the sorted keys are at
    ``sorted_keys_ptr`` in that layout (copied, not gathered)."""
    _, begin, cum, pos, mask = _long_segment_tile(tile_seg_ptr, tile_first_ptr, seg_begin_ptr, seg_len_ptr,
                                                 seg_cum_ptr, BLOCK)
    idx = tl.load(idx_ptr + cum + pos, mask=mask, other=0).to(tl.int64)
    if FLAT:
        idx -= cum
    if WRITE_KEYS:
        if FLAT:
            tl.store(out_keys_ptr + begin + pos, tl.load(sorted_keys_ptr + cum + pos, mask=mask), mask=mask)
        else:
            tl.store(out_keys_ptr + begin + pos, tl.load(keys_ptr + begin + idx, mask=mask), mask=mask)
    if HAS_VALS:
        tl.store(out_vals_ptr + begin + pos, tl.load(vals_ptr + begin + idx, mask=mask), mask=mask)
    if WRITE_IDX:
        tl.store(out_idx_ptr + begin + pos, idx, mask=mask)


@triton.jit(do_not_specialize=["n_segs", "n", "max_block"])
def _segment_bins_kernel(begin_ptr, end_ptr, n_segs, n, spans_ptr, bins_ptr, max_block, MIN_LOG: tl.constexpr,
                         NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    """The segments' layout for the host's one read-back, binned on the GPU as :func:`_block_bins`
    bins them on the host. ``spans_ptr`` (int64, ``NUM_BINS + 2`` words zeroed; relaxed atomics): the
    count of segments per bin, the counts of segments outside ``[0, n]`` and of segments that end
    before they begin, then every segment's begin, then its length (``n_segs`` words each).
    ``bins_ptr`` (uint8): each segment's bin, ``max(ceil(log2(length)), MIN_LOG)`` for a segment of 2
    to ``max_block`` items, else :data:`_NOT_CHOSEN` (a segment of 0 or 1 item, a longer one, or
    invalid offsets: the host refuses those after the read-back, before anything sorts)."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = i < n_segs
    begin = tl.load(begin_ptr + i, mask=valid, other=0).to(tl.int64)
    end = tl.load(end_ptr + i, mask=valid, other=0).to(tl.int64)
    length = end - begin
    chosen = valid & (length > 1) & (length <= max_block)
    log_block = tl.full([BLOCK], MIN_LOG, tl.int32)
    for k in tl.static_range(MIN_LOG, 31):   # ceil(log2(length)): the powers of two below it (max_block < 2^31)
        log_block += (length > (1 << k)).to(tl.int32)
    bins = tl.where(chosen, log_block, 255)
    header: tl.constexpr = NUM_BINS + 2
    tl.store(spans_ptr + header + i, begin, mask=valid)
    tl.store(spans_ptr + header + n_segs + i, length, mask=valid)
    tl.store(bins_ptr + i, bins.to(tl.uint8), mask=valid)
    counts = block_histogram(bins, NUM_BINS, valid_items=n_segs - tl.program_id(0).to(tl.int64) * BLOCK)
    tl.atomic_add(spans_ptr + tl.arange(0, NUM_BINS), counts.to(tl.int64), sem="relaxed")
    outside = tl.sum((valid & ((begin < 0) | (end > n))).to(tl.int64), 0)
    decrease = tl.sum((valid & (length < 0)).to(tl.int64), 0)
    tl.atomic_add(spans_ptr + NUM_BINS, outside, sem="relaxed")
    tl.atomic_add(spans_ptr + NUM_BINS + 1, decrease, sem="relaxed")


# ----------------------------------------------------------------------------------------------
# Policy
# ----------------------------------------------------------------------------------------------

policy.register(
    "segmented_sort",
    space={"TILE_ITEMS": [1024, 2048, 4096, 8192], "MAX_BLOCK": [2048, 4096, 8192],
           "MERGE_TILE": [1024, 2048, 4096], "LONG_PATH": ["radix", "merge"],
           "NETWORK": ["own", "tl"], "TILE_SPLIT": [1, 2, 4, 8], "TILE_SORT": ["bitonic", "radix"],
           "RADIX_MIN_BLOCK": [128, 256, 512], "RADIX_ITEMS": [4, 8, 16], "RADIX_BITS": [6, 7, 8],
           "RADIX_MAXNREG": [0, 56, 64], "RADIX_OR_EVERY": [0, 1, 2, 3, 4, 8], "RADIX_SMEM_GATHER": [0, 1, 2],
           "RADIX_WARP_MIN_BLOCK": [0, 32, 64, 128], "RADIX_WARP_ROWS": [2, 4, 8],
           "RADIX_MAX_BLOCK": [4096, 8192], "num_warps": [4, 8, 16], "num_stages": [1]},
    fallback={"TILE_ITEMS": 2048, "MAX_BLOCK": 4096, "MERGE_TILE": 4096, "LONG_PATH": "radix", "NETWORK": "own",
              "TILE_SPLIT": 1, "DECODE_KEYS": 0, "MINMAX_DIMS": 0, "TILE_SORT": "radix", "RADIX_MIN_BLOCK": 256, "RADIX_ITEMS": 8,
              "RADIX_BITS": 8, "RADIX_MAXNREG": 0, "RADIX_OR_EVERY": 0, "RADIX_SMEM_GATHER": 0,
              "RADIX_WARP_MIN_BLOCK": 0, "RADIX_WARP_ROWS": 4, "RADIX_MAX_BLOCK": 8192, "num_warps": 4,
              "num_stages": 1},
    buckets=("small", "medium", "large"),
    bucket_fallbacks={"medium": {"TILE_ITEMS": 4096, "num_warps": 8},
                      "large": {"TILE_ITEMS": 4096, "num_warps": 16}},
    # (TILE_SPLIT only with our network; DECODE_KEYS and MINMAX_DIMS, settings by hand: the tuner's
    # problems are 32-bit float keys, which they leave alone)
    valid=lambda c: (c["MERGE_TILE"] <= c["MAX_BLOCK"] and 5 <= c["RADIX_BITS"] <= 8
                     and c["RADIX_ITEMS"] > 0 and c["RADIX_ITEMS"] & (c["RADIX_ITEMS"] - 1) == 0
                     and c["TILE_SPLIT"] in (1, 2, 4, 8) and (c["TILE_SPLIT"] == 1 or c["NETWORK"] == "own")
                     and c["DECODE_KEYS"] in (0, 1) and (c["DECODE_KEYS"] == 0 or c["TILE_SPLIT"] > 1)
                     and c["RADIX_MAX_BLOCK"] in (0,) + tuple(1 << k for k in range(8, 14))
                     and 0 <= c["MINMAX_DIMS"] <= 13 and (c["MINMAX_DIMS"] == 0 or c["NETWORK"] == "own")
                     and c["RADIX_SMEM_GATHER"] in (0, 1, 2)),
    doc="Segmented/batched sort. Buckets by BLOCK (next power of two of the segment length): small "
        "<= 256, medium <= 1024, large above. TILE_ITEMS: items per program of the in-register sort "
        "(ROWS = TILE_ITEMS // BLOCK segments per program); MAX_BLOCK: longest segment sorted in "
        "registers; longer segments: LONG_PATH 'radix' (one device radix sort of segment-tagged "
        "keys, when the key and segment bits fit 64) or 'merge' (MERGE_TILE chunks, then merge passes). "
        "NETWORK: our bitonic network or tl.sort for packed words (same results); TILE_SPLIT: our network's "
        "rows read as 1, 2, 4 or 8 joined column slices (more of each row in a thread's registers); "
        "DECODE_KEYS: with TILE_SPLIT > 1, sorted integer keys decoded from the packed words instead of "
        "gathered from the input. MINMAX_DIMS: for packed 32-bit words (key bits + log2(BLOCK) <= 32), "
        "our network's innermost (log2) dims whose compare-swaps take each pair's min and max instead "
        "of comparing each item with its partner (64-bit words measured slower). TILE_SORT 'radix': "
        "segments of keys of at most 32 bits (64-bit keys too with 8-bit digits, two words a key) whose "
        "BLOCK is at least RADIX_MIN_BLOCK sorted one per "
        "program by the shared-memory block radix sort (RADIX_ITEMS items per thread, so BLOCK / "
        "(32 * RADIX_ITEMS) warps, 1 to 16; RADIX_BITS per pass; RADIX_MAXNREG a register cap per "
        "thread, 0 none; RADIX_OR_EVERY k > 0: every k-th register slot finds its keys' peers through "
        "mask words in shared memory instead of ballots, 0 ballots only; RADIX_SMEM_GATHER: the sorted "
        "keys gathered from the input by their source columns (0), carried through shared memory by the sort "
        "(1), or read again in input order after it and exchanged through shared memory (2); compiled "
        "NVIDIA kernels only); shorter segments whose BLOCK is at least "
        "RADIX_WARP_MIN_BLOCK (0: none; BLOCK / 32 items per thread) one per warp, RADIX_WARP_ROWS warps "
        "per program; the rest by the in-register tile sort; 'bitonic': the tile sort for every segment. "
        "RADIX_MAX_BLOCK (with TILE_SORT 'radix', the 'large' bucket's value counts; 0 off): segments longer "
        "than MAX_BLOCK whose BLOCK is at most RADIX_MAX_BLOCK also go one per program to the block radix "
        "sort where it applies (else to the long-segment paths).")

MIN_BLOCK = 8
_RADIX_UNAVAILABLE: list = []   # set when the device radix sort failed to build here


def _bucket(block: int) -> str:
    return "small" if block <= 256 else "medium" if block <= 1024 else "large"


#: warps a program of the in-register tile sort of keys wider than 32 bits takes on compiled NVIDIA
#: kernels, by ``BLOCK`` (others: the policy's ``num_warps``). With the "large" policy's 4 warps the sort
#: of 64-bit keys spills past 1024 keys a program; 32 warps sorted one row of 2048 int64 keys in 33.0 us
#: (4 warps 73.5, 8 70.8, 16 46.8; torch 33.6), 64 rows of 2048 in 33.5 (74.5), one row of 4096 in 123.6
#: (191.4) and 1024 rows of 4096 in 992 (1270) on an H200
#: (bench/results/logs/sort64_tile_warps_probe-h200-20261202.log); 16 warps at 512 and 1024 keys: one row of
#: 1024 in 13.2 us (4 warps 25.0, 8 17.6, 32 12.8; torch 31.9), 1024 rows of 1024 in 88.3 (160.5, 118.5, 100.4;
#: torch 75.4), 4096 rows of 512 in 121.7 (241.8, 167.7, 160.1; torch 218.6)
#: (bench/results/logs/sort64_tile_warps_probe-short-h200-20261202d.log); segmented sorts of such rows 18-25%
#: faster (sort64_medium_rows_ab-h200-20261202d.log)
WIDE_KEYS_WARPS = {512: 16, 1024: 16, 2048: 32, 4096: 32}
#: where the block radix sort does not take them (:data:`WIDE_KEYS_BLOCK_RADIX`), rows of keys wider than 32
#: bits that the in-register tile sort takes on compiled NVIDIA kernels: one row of up to the first figure,
#: several rows of up to the second; longer rows sort faster by the device radix sort on an H200: one row of 3000 or 4096 int64 keys 54.3 and 57.3 us against the tile sort's
#: 210 and 191 with 4 warps (124 with 32), 1024 rows of 4096 659 against 1270 (992 with 32 warps), where
#: the tile sort with 32 warps beats it at 2048 keys (33.0 us against 52.7) (logs sort64_rows_probe-,
#: sort64_tile_warps_probe-, sort64_limit_ab-after-h200-20261202.log; with the radix sort's split histogram
#: one row of 3000 or 4096 takes 44.6 and 47.5 us, sort64_limit_ab-final-h200-20261202d.log)
WIDE_KEYS_MAX_BLOCK = (2048, 2048)
#: 64-bit keys take the shared-memory block radix sort (two words a key through its passes) where 32-bit
#: keys do, instead of the tile sort and ``WIDE_KEYS_MAX_BLOCK``: on an H200 one row of 1024, 2048, 4096 and
#: 8192 int64 keys (with positions) 7.9, 13.2, 19.6 and 39.7 us against 13.2, 33.0, 46.7 and 54.2 (torch 31.8,
#: 33.5, 42.8, 73.2), 1024 rows of 1024, 3000 and 4096 32.8, 112 and 135 against 88.6, 518 and 653 (torch 75.4,
#: 254, 287), 4096 rows of 512 60.2 against 122 (torch 219), a segmented sort of 64 segments of 3000 32.0
#: against 158; float64 alike (bench/results/logs/sort64_block_radix_probe-h200-20261202e.log). Where the
#: "large" bucket's policy is not a radix policy of 8-bit digits, :func:`_one_program_limit` keeps the wide keys'
#: rule below; where a kernel does not fit the device's shared memory or failed to run, its rows fall back
#: to the tile sort (rows of 2049 to ``MAX_BLOCK`` such keys: slower than the device radix sort)
WIDE_KEYS_BLOCK_RADIX = True


def _block_radix_key_bits_ok(key_bits: int, pol) -> bool:
    """Whether the block radix sort takes keys of ``key_bits`` bits under ``pol``: up to 32, or 64 with
    :data:`WIDE_KEYS_BLOCK_RADIX` and 8-bit digits (a digit never straddles the key's two words)."""
    return key_bits <= 32 or (WIDE_KEYS_BLOCK_RADIX and pol["RADIX_BITS"] == 8)


def _block_radix_applies(block: int, key_bits: int, pol, device: torch.device) -> bool:
    """Whether segments of ``block`` (a power of two) keys of ``key_bits`` bits go to the block radix sort
    under ``pol`` here: one per program from ``RADIX_MIN_BLOCK``, one per warp from ``RADIX_WARP_MIN_BLOCK``
    up to 512 (a launch that then does not fit or run falls back to the tile sort)."""
    warp_min = pol["RADIX_WARP_MIN_BLOCK"]
    return (pol["TILE_SORT"] == "radix" and (block >= pol["RADIX_MIN_BLOCK"] or 0 < warp_min <= block <= 512)
            and _block_radix_key_bits_ok(key_bits, pol) and block_radix_available(device))


def block_radix_sorts_rows(length: int, key_bits: int, device: torch.device) -> bool:
    """Whether :func:`sort_rows` gives rows of ``length`` (at most the one-program limit) keys of
    ``key_bits`` bits to the shared-memory block radix sort on ``device``: the policy of the rows' size
    bucket sends them there, and its kernel fits the device's shared memory and has not failed to run
    here. Top-k sorts 64-bit rows (and, with ``topk._WIDE_SEGMENTS_BY_SORT``, segments) this way rather than
    in its register tile."""
    block = max(MIN_BLOCK, next_power_of_2(length))
    pol = policy.select("segmented_sort", device, _bucket(block))
    return (_block_radix_applies(block, key_bits, pol, device)
            and _block_radix_runs(block, pol, key_bits, device, warp_rows=block < pol["RADIX_MIN_BLOCK"]))


def _one_program_limit(pol, key_bits: int, device: torch.device, rows: int | None) -> int:
    """The longest segment the one-program strategies take (``pol``: the "large" bucket's policy):
    ``MAX_BLOCK``, or the largest power of two up to ``RADIX_MAX_BLOCK`` above it whose block radix
    sort fits the device's shared memory, where that sort applies (keys of at most 32 bits, or 64 with
    :data:`WIDE_KEYS_BLOCK_RADIX`; compiled NVIDIA kernels). ``rows`` (the row sorts: how many rows of one
    length): keys of more than 32 bits that it does not take on compiled NVIDIA kernels then stop at
    :data:`WIDE_KEYS_MAX_BLOCK` (never below ``MERGE_TILE``), where
    the device radix sort takes over; None (segments, top-k's rows: their other paths were not measured
    against the tile sort) keeps ``MAX_BLOCK`` for them. :func:`_launch_tile_sort` still refuses a segment
    past ``MAX_BLOCK`` that it cannot take (a config that failed to run here), and the caller then takes a
    long-segment path."""
    limit = pol["MAX_BLOCK"]
    wide_radix = (pol["TILE_SORT"] == "radix" and _block_radix_key_bits_ok(key_bits, pol)
                  and block_radix_available(device))
    if key_bits > 32 and rows is not None and _compiled_nvidia(device) and not wide_radix:
        # (never below MERGE_TILE: the merge path, where longer rows may go, takes rows longer than it)
        return min(limit, max(WIDE_KEYS_MAX_BLOCK[rows > 1], pol["MERGE_TILE"]))
    if pol["TILE_SORT"] == "radix" and _block_radix_key_bits_ok(key_bits, pol) and block_radix_available(device):
        block = pol["RADIX_MAX_BLOCK"]
        while block > limit and not _block_radix_fits(block, pol, key_bits, device):
            block //= 2
        limit = max(limit, block)
    return limit


def _block_radix_shape(block: int, pol, key_bits: int, warp_rows: bool = False):
    """``(warps, items, smem_rows)`` of the block radix sort of segments of ``BLOCK`` keys under ``pol``:
    warps a program, keys a thread, rows of ``2**RADIX_BITS`` words of shared memory."""
    return _shape(block, pol["RADIX_WARP_ROWS"] if warp_rows else 0, pol["RADIX_ITEMS"], pol["RADIX_BITS"], key_bits)


@functools.lru_cache(maxsize=None)
def _shape(block: int, warp_rows_warps: int, radix_items: int, radix_bits: int, key_bits: int):
    # (cached: the row sorts ask for it on every call, where a replayed call costs ~40 us of host time)
    if warp_rows_warps:
        warps, items = warp_rows_warps, max(1, block // 32)
    else:
        warps = max(1, min(16, block // (32 * radix_items)))
        items = max(1, block // (32 * warps))
    words = block_radix_sort_smem_words(key_bits, radix_bits, warps, warps * items * 32)
    return warps, items, next_power_of_2(cdiv(words, 1 << radix_bits))


def _block_radix_fits(block: int, pol, key_bits: int, device: torch.device, warp_rows: bool = False) -> bool:
    """Whether the block radix sort of segments of ``BLOCK`` keys fits one program's shared memory."""
    smem_rows = _block_radix_shape(block, pol, key_bits, warp_rows)[2]
    return smem_rows * (1 << pol["RADIX_BITS"]) * 4 + 1024 <= smem_per_block(device)


# ----------------------------------------------------------------------------------------------
# Launchers
# ----------------------------------------------------------------------------------------------

_FLOAT_INF = {torch.float16: 0x7C00, torch.bfloat16: 0x7F80, torch.float32: 0x7F800000,
              torch.float64: 0x7FF0000000000000}
_SIGNED = (torch.int8, torch.int16, torch.int32, torch.int64)
_UNSIGNED = tuple(d for d in (torch.uint8, getattr(torch, "uint16", None), getattr(torch, "uint32", None),
                              getattr(torch, "uint64", None)) if d is not None)
SORT_DTYPES = _SIGNED + _UNSIGNED + tuple(_FLOAT_INF)
#: what :func:`sort_rows` and the segmented sorts take (bool keys sort as their bytes)
ROWS_DTYPES = SORT_DTYPES + (torch.bool,)
_TORCH_DTYPE = {t: d for d, t in TL_DTYPE.items()}


def key_meta(dtype: torch.dtype) -> dict:
    """The key constexprs of the kernels for a torch dtype: width in bits and Triton dtype."""
    if dtype not in SORT_DTYPES:
        raise InputTypeError(f"keys of dtype {str(dtype).replace('torch.', '')} are not supported; supported: "
                             + ", ".join(str(d).replace("torch.", "") for d in SORT_DTYPES))
    return dict(KEY_BITS=torch.empty((), dtype=dtype).element_size() * 8, KEY_DTYPE=TL_DTYPE[dtype])


def bits_view(x: torch.Tensor) -> torch.Tensor:
    """``x`` reinterpreted as signed ints of its width (what the kernels load)."""
    return x.view(INT_OF_SIZE[x.element_size()])


def pack_mode(key_bits: int, log_n: int) -> int:
    if key_bits + log_n <= 32:
        return 32
    if key_bits + log_n <= 64:
        return 64
    return 0


def _log2(n: int) -> int:
    return n.bit_length() - 1


_BLOCK_RADIX_UNAVAILABLE: list = []   # set when the block radix sort failed to compile here
_BLOCK_RADIX_FAILED: set = set()       # configs that built but cannot run here (registers, shared memory)


def _compiled_nvidia(device: torch.device) -> bool:
    """Compiled NVIDIA kernels with inline PTX (sm_80+), not the interpreter."""
    return not interpreter_active() and inline_ptx_ok(device)


def block_radix_available(device: torch.device) -> bool:
    """The shared-memory block radix sort needs a compiled NVIDIA kernel (warp ballots, Gluon), sm_80+
    as the onesweep sort's fast path."""
    return not _BLOCK_RADIX_UNAVAILABLE and _compiled_nvidia(device)


def _block_radix_config(block: int, pol, key_bits: int, warp_rows: bool) -> tuple:
    """What a block radix sort kernel of segments of ``block`` keys is built for (the key of
    ``_BLOCK_RADIX_FAILED``; its first-k variant's key has ``"first_k"`` appended); its last entry the
    kernel's ``SMEM_GATHER``."""
    warps, items, _ = _block_radix_shape(block, pol, key_bits, warp_rows)
    # (keys wider than 32 bits are gathered back from the input by their source columns)
    smem_gather = pol["RADIX_SMEM_GATHER"] if key_bits <= 32 else 0
    return (warps, items, pol["RADIX_BITS"], key_bits, pol["RADIX_MAXNREG"], warp_rows, pol["RADIX_OR_EVERY"],
            smem_gather)


def _block_radix_runs(block: int, pol, key_bits: int, device: torch.device, warp_rows: bool) -> bool:
    """Whether that kernel fits the device's shared memory and has not failed to run here."""
    return (_block_radix_fits(block, pol, key_bits, device, warp_rows)
            and _block_radix_config(block, pol, key_bits, warp_rows) not in _BLOCK_RADIX_FAILED)


def _launch_block_radix_sort(args, *, block, num_segs, descending, meta, pol, device, warp_rows=False,
                             **flags) -> bool:
    """One program per segment (``warp_rows``: one warp per segment, ``RADIX_WARP_ROWS`` per program)
    through the shared-memory block radix sort; False when it does not apply (its shared memory
    exceeds the device's, or this config failed to run here: this launch only) or does not compile
    here (then the tile sort from now on, and a warning says so once)."""
    warps, items, smem_rows = _block_radix_shape(block, pol, meta["KEY_BITS"], warp_rows)
    radix_bits = pol["RADIX_BITS"]
    config = _block_radix_config(block, pol, meta["KEY_BITS"], warp_rows)
    smem_gather = config[-1]
    # (the first-k variant fails on its own key: its failure leaves the config's sorts on)
    failed_key = config + ("first_k",) if flags.get("TOP_K") else config
    if not _block_radix_runs(block, pol, meta["KEY_BITS"], device, warp_rows) or failed_key in _BLOCK_RADIX_FAILED:
        return False
    try:
        launch(_segment_block_radix_sort_kernel, (cdiv(num_segs, warps) if warp_rows else num_segs,), *args,
               **flags, ASCENDING=not descending, **meta, RADIX_BITS=radix_bits, WARPS=warps, ITEMS=items,
               SMEM_ROWS=smem_rows, WARP_ROWS=warp_rows, OR_EVERY=pol["RADIX_OR_EVERY"],
               SMEM_GATHER=smem_gather, num_warps=warps,
               **maxnreg_kwargs(pol["RADIX_MAXNREG"]))
    except (triton.CompilationError, OutOfResources, PTXASError) as e:
        if compile_only():
            raise      # (the compile-check mode is there to see it)
        # (a wide-key kernel that does not build takes only its own config out: not the 32-bit sorts)
        if isinstance(e, triton.CompilationError) and meta["KEY_BITS"] <= 32:
            _BLOCK_RADIX_UNAVAILABLE.append(repr(e))
        else:
            _BLOCK_RADIX_FAILED.add(failed_key)
        warnings.warn(f"tritoncub.segmented_sort: block radix sort unavailable ({e!r}); segments use the "
                      f"in-register tile sort (those longer than its MAX_BLOCK a long-segment path; segmented "
                      f"top-k its tile path)", stacklevel=4)
        return False
    return True


def block_radix_first_k(kb, out_kb, out_idx, k: int, *, block, num_segs, seg_begin, seg_len, seg_list, descending,
                        meta, device) -> bool:
    """The first ``k`` items of each segment ``seg_list[i]`` (ids into ``seg_begin``/``seg_len``, at most
    ``block`` keys each) in the stable sorted order (``descending``: largest first; NaN the largest), by the
    block radix sort in one launch and no scratch: the keys to ``out_kb[seg, :k]`` and their positions
    in ``kb`` to ``out_idx[seg, :k]`` (``[segments, k]`` tensors; the slots past a shorter segment's
    length are not written). Keys wider than 32 bits only (those of 32 bits take top-k's packed tile
    path). False, launching nothing, where the block radix sort does not take ``block`` (see
    :func:`block_radix_sorts_rows`) or its kernel failed to build: the caller takes another path."""
    if num_segs == 0:
        return True
    pol = policy.select("segmented_sort", device, _bucket(block))
    if meta["KEY_BITS"] <= 32 or num_segs >= 2**31 or not _block_radix_applies(block, meta["KEY_BITS"], pol, device):
        return False
    args = (kb, kb, out_kb, kb, out_idx, seg_begin, seg_len, seg_list, kb, num_segs, k, k)
    return _launch_block_radix_sort(args, block=block, num_segs=num_segs, descending=descending, meta=meta, pol=pol,
                                    device=device, warp_rows=block < pol["RADIX_MIN_BLOCK"], UNIFORM=False,
                                    HAS_LIST=True, HAS_IDX_BASE=False, HAS_VALS=False, WRITE_KEYS=True, WRITE_IDX=True,
                                    TOP_K=True)


#: rows of exactly a tile's width are masked by row only in the tile sort (a switch for A/B probes)
ROW_MASKS_ONLY = True


def _launch_tile_sort(kb, vb, out_kb, out_vb, out_idx, *, block, num_segs, descending, meta, device,
                      uniform=False, row_len=0, row_stride=0, seg_begin=None, seg_len=None, seg_list=None,
                      idx_base=None, rows=None, pol=None) -> bool:
    """Sort ``num_segs`` segments of at most ``block`` items each in one launch: by the policy's
    ``TILE_SORT``, the shared-memory block radix sort (one segment per program) or the in-register
    tile sort (several segments per program). Returns False, launching nothing, for a ``block``
    past the policy's ``MAX_BLOCK`` (see :func:`_one_program_limit`) that the block radix sort does
    not take: the caller sorts those segments by a long-segment path."""
    if num_segs == 0:
        return True
    pol = pol or policy.select("segmented_sort", device, _bucket(block))
    dummy = kb
    args = (kb, vb if vb is not None else dummy, out_kb if out_kb is not None else dummy,
            out_vb if out_vb is not None else dummy, out_idx if out_idx is not None else dummy,
            seg_begin if seg_begin is not None else dummy, seg_len if seg_len is not None else dummy,
            seg_list if seg_list is not None else dummy, idx_base if idx_base is not None else dummy,
            num_segs, row_len, row_stride)
    flags = dict(UNIFORM=uniform, HAS_LIST=seg_list is not None, HAS_IDX_BASE=idx_base is not None,
                 HAS_VALS=vb is not None, WRITE_KEYS=out_kb is not None, WRITE_IDX=out_idx is not None)
    if rows is None and num_segs < 2**31 and _block_radix_applies(block, meta["KEY_BITS"], pol, device):
        if _launch_block_radix_sort(args, block=block, num_segs=num_segs, descending=descending, meta=meta,
                                    pol=pol, device=device, warp_rows=block < pol["RADIX_MIN_BLOCK"], **flags):
            return True
    if block > pol["MAX_BLOCK"]:
        return False
    if rows is None:
        rows = max(1, min(256, pol["TILE_ITEMS"] // block))
    log_n = _log2(block)
    pack = pack_mode(meta["KEY_BITS"], log_n)
    # (column slices: packed words through our network, at least one column per slice)
    split = min(pol.get("TILE_SPLIT", 1), block) if pack and pol["NETWORK"] == "own" else 1
    # (integer keys only: float keys would need their zeros and NaNs read back, a check that cost
    # more than the gather it saves on the H100)
    decode = bool(pol.get("DECODE_KEYS", 0)) and split > 1 and not meta["KEY_DTYPE"].is_floating()
    warps = pol.num_warps
    if meta["KEY_BITS"] > 32 and block in WIDE_KEYS_WARPS and _compiled_nvidia(device):
        warps = WIDE_KEYS_WARPS[block]
    launch(_segment_tile_sort_kernel, (cdiv(num_segs, rows),), *args,
           BLOCK=block, ROWS=rows, LOG_N=log_n, N_DIMS=log_n + _log2(rows),
           PACK=pack, TL_SORT=pol["NETWORK"] == "tl", **flags,
           ASCENDING=not descending, **meta, SPLIT=split, DECODE_KEYS=decode,
           FULL_ROWS=bool(ROW_MASKS_ONLY and uniform and row_len == block),
           MINMAX_DIMS=min(pol.get("MINMAX_DIMS", 0), log_n) if pack == 32 and pol["NETWORK"] == "own" else 0,
           num_warps=warps,
           num_stages=pol.num_stages)
    return True


def _host_arrays_to_device(arrays, device) -> list[torch.Tensor]:
    """Host int64 arrays as device tensors through one copy from pinned memory, queued without
    waiting (a copy from pageable memory waits for the stream to drain: the GPU would then idle while
    the host queues what follows)."""
    arrays = [np.asarray(a, dtype=np.int64) for a in arrays]   # (integer or bool arrays)
    sizes = [len(a) for a in arrays]
    host = torch.empty(sum(sizes), dtype=torch.int64, pin_memory=device.type == "cuda")
    if sizes:
        np.concatenate(arrays, out=host.numpy())
    dev = host.to(device, non_blocking=True) if device.type == "cuda" else host.to(device)
    if capturing(device):   # (a graph's copy reads the pinned buffer at every replay: it must stay)
        KEPT_FOR_GRAPHS.append(host)
    return list(torch.split(dev, sizes))


#: segments shorter than this are binned through :func:`_ceil_log2_table` (longer ones, e.g. top-k's
#: long rows, by frexp: the table would cost their length in host time and memory)
_TABLE_LIMIT = 1 << 16


@functools.lru_cache(maxsize=1)
def _ceil_log2_table(size: int) -> np.ndarray:
    """``ceil(log2(i))`` for ``i`` in ``[0, size)`` (0 for 0 and 1), as uint8."""
    mant, exp = np.frexp(np.maximum(np.arange(size), 1))
    return (exp - (mant == 0.5)).astype(np.uint8)


#: :func:`_block_bins`' byte for a segment not chosen (after every block's)
_NOT_CHOSEN = 255
#: bins of :func:`_segment_bins_kernel` (a power of two above :data:`_NOT_CHOSEN`), and its segments per program
_NUM_BINS = 256
_BINS_BLOCK = 1024


def _block_bins(length: np.ndarray, chosen: np.ndarray, min_block: int):
    """Every segment's bin, log2 of its block (the next power of two of its length, at least
    ``min_block``), as one byte (:data:`_NOT_CHOSEN` where ``chosen`` is false), and the bins of the
    chosen segments, ``(block, start, count)``: a stable sort of the bytes lists the chosen segments'
    ids by block, ``count`` of them from ``start`` in each (:func:`_segments_by_block`)."""
    length = np.asarray(length)
    if int(length.max(initial=0)) < _TABLE_LIMIT:
        # ceil(log2(length)) by a table lookup (a third of frexp's time at 100k segments)
        log_block = _ceil_log2_table(_TABLE_LIMIT)[length]
    elif not chosen.any() or int(length[chosen].max()) < _TABLE_LIMIT:   # (the others' bins are not used)
        log_block = _ceil_log2_table(_TABLE_LIMIT)[np.minimum(length, _TABLE_LIMIT - 1)]
    else:
        mant, exp = np.frexp(np.maximum(length, 1))
        log_block = exp - (mant == 0.5)
    bin_of = np.where(chosen, np.maximum(log_block, _log2(min_block)), _NOT_CHOSEN).astype(np.uint8)
    counts = np.bincount(bin_of, minlength=_NOT_CHOSEN + 1)[:_NOT_CHOSEN]
    starts = np.cumsum(counts) - counts
    return bin_of, [(1 << int(b), int(starts[b]), int(counts[b])) for b in np.flatnonzero(counts)]


def _segments_by_block(length: np.ndarray, chosen: np.ndarray, min_block: int):
    """The ``chosen`` segments grouped by block, the next power of two of their length (at least
    ``min_block``): ``(ids, bins)``, ``ids`` the segment ids in order of block (ascending within one)
    and ``bins`` the ``(block, start, count)`` runs of ``ids``. Linear time on the host (a stable
    argsort of one byte per segment is a radix sort)."""
    bin_of, bins = _block_bins(length, chosen, min_block)
    return np.argsort(bin_of, kind="stable")[:sum(c for _, _, c in bins)], bins


#: items per program of the long-segment radix path's pack and unpack kernels (a module constant so
#: that tests can make segments span several tiles at small sizes)
_COMPOSITE_TILE = 1024


def _segment_tiles(seg_len_np: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """The tiles of ``block`` items that cover each (non-empty) segment, one program each in the
    long-segment kernels: ``(segment, first position in it)`` per tile (a grid over segments and
    the longest one's tiles would start mostly empty programs for power-law lengths)."""
    counts = -(-seg_len_np // block)
    seg = np.repeat(np.arange(len(seg_len_np)), counts)
    first = (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)) * block
    return seg, first


def _sort_long_radix(kb, vb, out_kb, out_vb, out_idx, *, seg_begin_np, seg_len_np, descending, meta,
                     device) -> bool:
    """Long segments by one device radix sort (``tritoncub.device.radix_sort``): a segmented one
    (:func:`~tritoncub.device.radix_sort.sort_segments`, keys of up to 32 bits in segments at least
    a pass tile long) or one of composite keys ``segment << key_bits | ordered_key`` with in-segment
    positions as values (stable, so equal keys keep their order). Returns False when neither applies
    (the key and segment bits exceed 64)."""
    try:
        from .radix_sort import segments_fit, sort_pairs as radix_sort_pairs, sort_segments
    except ImportError:  # pragma: no cover - the radix sort module is part of the package
        return False
    nseg = len(seg_len_np)
    seg_bits = max(1, int(nseg - 1).bit_length()) if nseg > 1 else 0
    total = int(seg_len_np.sum())
    key_dtype = _TORCH_DTYPE[meta["KEY_DTYPE"]]
    segmented = segments_fit(int(seg_len_np.min()), total, kb.view(key_dtype))
    if not segmented and meta["KEY_BITS"] + seg_bits > 64:
        return False
    max_len = int(seg_len_np.max())
    block = _COMPOSITE_TILE
    tile_seg, tile_first = _segment_tiles(seg_len_np, block)
    cum_np = np.cumsum(seg_len_np) - seg_len_np
    s_begin, s_len, s_cum, t_seg, t_first = _host_arrays_to_device(
        [seg_begin_np, seg_len_np, cum_np, tile_seg, tile_first], device)
    d = kb
    if segmented:
        # one segmented radix sort (8 bytes moved per key and pass, no passes over segment bits) of
        # the segments' keys laid one after another (in place when they already are)
        if np.array_equal(seg_begin_np[1:], seg_begin_np[:-1] + seg_len_np[:-1]):
            laid = kb[int(seg_begin_np[0]):int(seg_begin_np[0]) + total]
        else:
            laid = torch.empty(total, dtype=kb.dtype, device=device)
            launch(_gather_segments_kernel, (len(tile_seg),), kb, laid, s_begin, s_len, s_cum, t_seg, t_first,
                   BLOCK=block)
        sorted_keys, pos_flat = sort_segments(laid.view(key_dtype), np.append(cum_np, total), descending)
        launch(_unpack_composite_kernel, (len(tile_seg),), kb, vb if vb is not None else d, pos_flat,
               out_kb if out_kb is not None else d, out_vb if out_vb is not None else d,
               out_idx if out_idx is not None else d, s_begin, s_len, s_cum, t_seg, t_first, sorted_keys.view(kb.dtype),
               BLOCK=block, HAS_VALS=vb is not None, WRITE_KEYS=out_kb is not None,
               WRITE_IDX=out_idx is not None, FLAT=True)
        return True
    comp = torch.empty(total, dtype=torch.int64, device=device)
    pos = torch.empty(total, dtype=torch.int32 if max_len < 2**31 else torch.int64, device=device)
    launch(_pack_composite_kernel, (len(tile_seg),), kb, comp, pos, s_begin, s_len, s_cum, t_seg, t_first,
           BLOCK=block, SEG_IN_KEY=seg_bits > 0, DESCENDING=bool(descending), **meta)
    _, pos_sorted = radix_sort_pairs(comp.view(torch.uint64), pos, begin_bit=0,
                                     end_bit=meta["KEY_BITS"] + seg_bits)
    launch(_unpack_composite_kernel, (len(tile_seg),), kb, vb if vb is not None else d, pos_sorted,
           out_kb if out_kb is not None else d, out_vb if out_vb is not None else d,
           out_idx if out_idx is not None else d, s_begin, s_len, s_cum, t_seg, t_first, d, BLOCK=block,
           HAS_VALS=vb is not None, WRITE_KEYS=out_kb is not None, WRITE_IDX=out_idx is not None)
    return True


def _sort_long(kb, vb, out_kb, out_vb, out_idx, *, seg_begin_np, seg_len_np, descending, meta, device,
               merge_tile=None):
    """Merge-path sort of long segments (begin/length given as host int64 arrays)."""
    nseg = len(seg_len_np)
    if nseg == 0:
        return
    pol = policy.select("segmented_sort", device, "large")
    if pol["LONG_PATH"] == "radix" and merge_tile is None and not _RADIX_UNAVAILABLE:
        try:
            done = _sort_long_radix(kb, vb, out_kb, out_vb, out_idx, seg_begin_np=seg_begin_np,
                                    seg_len_np=seg_len_np, descending=descending, meta=meta, device=device)
        except triton.CompilationError as e:
            # the device radix sort (a Gluon fast path) does not compile for this GPU: use the merge
            # path from now on, and say so once
            _RADIX_UNAVAILABLE.append(repr(e))
            warnings.warn(f"tritoncub.segmented_sort: device radix sort unavailable ({e!r}); long segments "
                          f"use the merge path", stacklevel=3)
            done = False
        if done:
            return
    tile = merge_tile or pol["MERGE_TILE"]
    max_len = int(seg_len_np.max())
    passes = 0
    while (tile << passes) < max_len:
        passes += 1
    n = kb.numel()
    tmp_k = torch.empty_like(kb)
    tmp_i = torch.empty(n, dtype=torch.int64, device=device)
    final_k = out_kb if out_kb is not None else torch.empty_like(kb)
    final_i = out_idx if out_idx is not None else torch.empty(n, dtype=torch.int64, device=device)
    # buffers so that the last pass lands in the final ones
    bufs = [(final_k, final_i), (tmp_k, tmp_i)]
    cur = 0 if passes % 2 == 0 else 1
    # chunk pre-sort: every chunk of `tile` items of a long segment is a segment of its own (the
    # merge passes then run one program per chunk too)
    chunk_seg, chunk_first = _segment_tiles(seg_len_np, tile)
    c_begin = seg_begin_np[chunk_seg] + chunk_first
    c_len = np.minimum(tile, seg_len_np[chunk_seg] - chunk_first)
    d_cbegin, d_clen, d_cbase, s_begin, s_len, d_cseg = _host_arrays_to_device(
        [c_begin, c_len, chunk_first, seg_begin_np, seg_len_np, chunk_seg], device)
    ck, ci = bufs[cur]
    presorted = _launch_tile_sort(kb, None, ck, None, ci, block=tile, num_segs=len(c_len), descending=descending,
                                  meta=meta, device=device, seg_begin=d_cbegin, seg_len=d_clen, idx_base=d_cbase,
                                  pol=pol)
    assert presorted, "merge path: MERGE_TILE exceeds MAX_BLOCK (the policy's valid() should refuse it)"
    run = tile
    for p in range(passes):
        src, dst = bufs[cur], bufs[1 - cur]
        final = p == passes - 1
        launch(_merge_pass_kernel, (len(chunk_seg),),
               src[0], src[1], dst[0], dst[1], vb if vb is not None else kb,
               out_vb if out_vb is not None else kb, s_begin, s_len, d_cseg, d_cbase, run,
               SEARCH_STEPS=max(1, run.bit_length()), BLOCK=tile, FINAL_VALS=final and vb is not None,
               WRITE_IDX=True, ASCENDING=not descending, **meta, num_warps=pol.num_warps,
               num_stages=pol.num_stages)
        cur = 1 - cur
        run *= 2
    assert passes > 0, "the merge path is for segments longer than MERGE_TILE"


#: replays of row sorts (see :func:`sort_rows`), per problem: (policies, relocatable launches)
_ROWS_REPLAYS: dict = {}
#: replays of segmented sorts' short-segment launches (see :func:`_segmented_sort_impl`), per problem
_SHORT_REPLAYS: dict = {}


def _replayable(x: torch.Tensor) -> bool:
    """Whether sorts of ``x`` may be remembered and replayed (:func:`tritoncub._launch.replays_ok`)."""
    return replays_ok(x, (launch, _launch_module.launch), (_launch_tile_sort, _LAUNCH_TILE_SORT),
                      (_launch_block_radix_sort, _LAUNCH_BLOCK_RADIX_SORT))


def sort_rows(x: torch.Tensor, descending: bool = False, stable: bool = True
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort ``x`` along its last dimension, every row independently: ``(values, indices)``.

    Contract (what ``torch.sort(x, dim=-1, descending=..., stable=True)`` returns): ``values`` has
    ``x``'s shape and dtype, ``indices`` int64 positions within the row. Always stable (``stable`` is
    accepted for signature compatibility). Any row length: rows of up to the policy's ``MAX_BLOCK``
    items are sorted by the tile strategies of the module doc (in registers, several rows per
    program, or one row per program by the block radix sort from ``RADIX_MIN_BLOCK`` items, keys of
    at most 32 bits, and 64-bit keys with 8-bit digits, compiled NVIDIA kernels; the block radix sort
    also takes rows of up to ``RADIX_MAX_BLOCK`` items that fit the device's shared memory; 64-bit keys
    it does not take, on compiled NVIDIA kernels, only up to :data:`WIDE_KEYS_MAX_BLOCK`); longer rows go
    to the device radix sort
    (:func:`tritoncub.device.radix_sort._sort_lastdim`): one row as it is, up to 256 rows (keys of at
    most 32 bits) as one sort whose last pass groups the rows, more rows of at least a radix sort tile as
    segments of one sort (:func:`tritoncub.device.radix_sort.sort_segments`), other rows of 64-bit keys by
    a second sort of the row ids; the long-segment path where the policy's ``LONG_PATH`` is "merge" or the
    device radix sort failed to build.
    NaN sorts above +inf; -0.0 and +0.0 are equal (input order kept); output values are the input's
    bits. Works on non-contiguous input (a contiguous copy is made). 0-d input is one row of one item.
    Bool rows sort as their bytes (False before True).

    Rows sorted one launch by the tile strategies (up to ``MAX_BLOCK`` items, or the block radix
    sort's longer limit): the launches of a problem (rows, length, dtype, direction,
    device, alignment, policies) are remembered; a later call replays them on its own buffers,
    skipping the host work of planning them (most of a small sort's time).
    """
    check_tensor(x, "x", ROWS_DTYPES)
    check_flag(descending, "descending")
    check_flag(stable, "stable")
    if x.dtype == torch.bool:
        v, i = sort_rows(x.view(torch.uint8), descending, stable)
        return v.view(torch.bool), i
    meta = key_meta(x.dtype)
    shape = x.shape
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    L = shape[-1]
    rows = x.numel() // L if L > 0 else int(np.prod(shape[:-1]))
    xc = x.contiguous().view(rows, L)
    pol = policy.select("segmented_sort", x.device, "large")
    limit = _one_program_limit(pol, meta["KEY_BITS"], x.device, rows)
    if L > limit and rows > 0:
        got = _sort_long_rows(xc, descending, pol)
        if got is not None:
            return got[0].view(shape), got[1].view(shape)
    replay_key = tile_pol = None
    # (not inside a caller's recording of launches: its record would miss a replay)
    if 0 < L <= limit and rows > 0 and _replayable(xc) and not recording_launches():
        block = max(MIN_BLOCK, next_power_of_2(L))
        tile_pol = policy.select("segmented_sort", x.device, _bucket(block))
        replay_key = (rows, L, x.dtype, descending, x.device, xc.data_ptr() & 15 == 0, block_radix_available(x.device),
                      ROW_MASKS_ONLY, WIDE_KEYS_BLOCK_RADIX)
        hit = _ROWS_REPLAYS.get(replay_key)
        if hit is not None and hit[0] is pol and hit[1] is tile_pol:
            values = torch.empty_like(xc)
            indices = torch.empty(xc.shape, dtype=torch.int64, device=x.device)
            replay(hit[2], (xc.data_ptr(), values.data_ptr(), indices.data_ptr()))
            return values.view(shape), indices.view(shape)
    values = torch.empty_like(xc)
    indices = torch.empty(xc.shape, dtype=torch.int64, device=x.device)
    if rows == 0 or L == 0:
        return values.view(shape), indices.view(shape)
    check_device(x, "x")
    kb, ob = bits_view(xc), bits_view(values)
    if L <= limit:
        block = max(MIN_BLOCK, next_power_of_2(L))
        with record_launches() if replay_key is not None else contextlib.nullcontext([]) as rec:
            done = _launch_tile_sort(kb, None, ob, None, indices, block=block, num_segs=rows,
                                     descending=descending, meta=meta, device=x.device, uniform=True, row_len=L,
                                     row_stride=L, pol=tile_pol)
        if done:
            launches = relocatable(rec, (xc, values, indices)) if replay_key is not None else None
            if launches is not None:
                if len(_ROWS_REPLAYS) >= 64:
                    _ROWS_REPLAYS.clear()
                _ROWS_REPLAYS[replay_key] = (pol, tile_pol, launches)
            return values.view(shape), indices.view(shape)
        # rows past MAX_BLOCK that the block radix sort did not take here: a long-row path
        got = _sort_long_rows(xc, descending, pol)
        if got is not None:
            return got[0].view(shape), got[1].view(shape)
    begins = np.arange(rows, dtype=np.int64) * L
    lens = np.full(rows, L, dtype=np.int64)
    _sort_long(kb.view(-1), None, ob.view(-1), None, indices.view(-1), seg_begin_np=begins,
               seg_len_np=lens, descending=descending, meta=meta, device=x.device)
    return values.view(shape), indices.view(shape)


def _sort_long_rows(xc: torch.Tensor, descending: bool, pol):
    """``sort_rows`` of rows longer than a tile by a device radix sort, ``(values, indices)``; None when
    none applies (the caller then takes the long-segment path)."""
    from .radix_sort import _sort_lastdim, rows_in_one_sort, segments_fit   # (that module imports this one)
    rows, L = xc.shape
    if rows_in_one_sort(xc):
        # a few long rows: one device radix sort whose last pass groups the rows
        check_device(xc, "x")
        return _sort_lastdim(xc, descending)
    if pol["LONG_PATH"] == "radix" and not _RADIX_UNAVAILABLE and (rows == 1 or xc.element_size() == 8 or
                                                                  segments_fit(L, rows * L, xc)):
        # one row: the device radix sort of it (the merge path before); rows of 64-bit keys shorter than a
        # radix sort tile (past the one-program limit: 8192 where the block radix sort takes them, else
        # WIDE_KEYS_MAX_BLOCK): sorted, then sorted by row, as radix_sort.sort does (1024 rows of 3000
        # int64 keys 537 us on an H200 when WIDE_KEYS_MAX_BLOCK sent them here, torch 255). More rows of a
        # radix sort tile or longer: one segmented radix sort (no gather of the keys,
        # no unpacking pass: 1024 x 16384 fp32 rows on the H100 1.06 ms this way, 1.68 through the
        # long-segment path; bench/results/logs/rows_as_segments_probe-20261125.log,
        # sort_rows_long_paths-20261125.log). A radix sort that does not build: the merge path
        check_device(xc, "x")
        try:
            return _sort_lastdim(xc, descending)
        except triton.CompilationError as e:
            _RADIX_UNAVAILABLE.append(repr(e))
            warnings.warn(f"tritoncub.segmented_sort: device radix sort unavailable ({e!r}); long segments "
                          f"use the merge path", stacklevel=3)
    return None


def _check_offsets(keys: torch.Tensor, offsets: torch.Tensor, end_offsets: torch.Tensor | None,
                   descending) -> None:
    """The checks of segment offsets that need no data (the operators' fakes run them too): dtype,
    rank, device and count."""
    check_tensor(offsets, "offsets", (torch.int32, torch.int64), ndim=1)
    check_same_device(("keys", keys), ("offsets", offsets))
    check_flag(descending, "descending")
    if end_offsets is None:
        if offsets.numel() == 0:
            raise InputValueError("offsets must hold num_segments + 1 items (at least one)")
    else:
        check_tensor(end_offsets, "end_offsets", (torch.int32, torch.int64), ndim=1)
        check_same_device(("keys", keys), ("end_offsets", end_offsets))
        if end_offsets.numel() != offsets.numel():
            raise InputValueError(f"begin_offsets has {offsets.numel()} items but end_offsets {end_offsets.numel()}")


def _segments(offsets: torch.Tensor, end_offsets: torch.Tensor | None, n: int, keys: torch.Tensor,
              max_block: int | None = None):
    """Validate CUB-style offsets (:func:`_check_offsets` done); return host int64 ``(begin, length,
    binned)`` arrays. With ``max_block`` (keys to sort, segments to bin) the segments are binned on the
    GPU first (:func:`_segment_bins_kernel`: no binning of every segment on the host, no copy of
    begin, length and bin back to the GPU) and ``binned`` is ``(d_begin, d_len, d_bin, bins)``: every
    segment's begin, length (int64) and bin (uint8) on the GPU, and the bins' ``(block, start,
    count)`` runs as :func:`_block_bins` lists them; else None. One device-to-host copy either way."""
    refuse_capture(keys.device, "segmented_sort", "sort rows of equal length with sort_rows")
    n_segs = offsets.numel() - (1 if end_offsets is None else 0)
    binned = None
    if max_block is not None and n_segs > 0 and n > 0:
        check_device(keys, "keys")
        head = _NUM_BINS + 2
        spans = torch.zeros(head + 2 * n_segs, dtype=torch.int64, device=keys.device)
        d_bin = torch.empty(n_segs, dtype=torch.uint8, device=keys.device)
        # (the kernel reads packed offsets: a strided or expanded view is copied first)
        o = offsets.contiguous()
        begins, ends = (o[:-1], o[1:]) if end_offsets is None else (o, end_offsets.contiguous())
        launch(_segment_bins_kernel, (cdiv(n_segs, _BINS_BLOCK),), begins, ends, n_segs, n, spans, d_bin, max_block,
               MIN_LOG=_log2(MIN_BLOCK), NUM_BINS=_NUM_BINS, BLOCK=_BINS_BLOCK)
        h = spans.cpu().numpy()
        counts = h[:_NOT_CHOSEN]
        begin, length = h[head:head + n_segs], h[head + n_segs:]
        starts = np.cumsum(counts) - counts
        binned = (spans[head:head + n_segs], spans[head + n_segs:], d_bin,
                  [(1 << int(b), int(starts[b]), int(counts[b])) for b in np.flatnonzero(counts)])
        if not h[_NUM_BINS:head].any() and end_offsets is None:
            return begin, length, binned   # (in range, none decreasing: checked on the GPU)
        end = begin + length
    elif end_offsets is None:
        o = np.asarray(offsets.detach().cpu().numpy(), dtype=np.int64)
        begin, end = o[:-1], o[1:]
    else:
        begin = np.asarray(offsets.detach().cpu().numpy(), dtype=np.int64)
        end = np.asarray(end_offsets.detach().cpu().numpy(), dtype=np.int64)
    if begin.size and (begin.min() < 0 or end.max() > n):
        raise InputValueError(f"offsets out of range: segments must lie within [0, {n}]")
    if begin.size and (end < begin).any():
        bad = int(np.flatnonzero(end < begin)[0])
        raise InputValueError(f"offsets decrease: segment {bad} ends at {end[bad]} before it begins at {begin[bad]}")
    if end_offsets is not None and begin.size > 1:
        # non-empty segments, by where they begin: each must end before the next one begins
        nz = np.flatnonzero(end > begin)
        order = nz[np.argsort(begin[nz], kind="stable")]
        clash = np.flatnonzero(begin[order[1:]] < end[order[:-1]])
        if clash.size:
            a, b = int(order[clash[0]]), int(order[clash[0] + 1])
            raise InputValueError(f"segments {a} [{begin[a]}, {end[a]}) and {b} [{begin[b]}, {end[b]}) overlap; "
                                  "segments must not share items")
    return begin, (end - begin if binned is None else length), binned


def _covers(begin_np: np.ndarray, len_np: np.ndarray, n: int, end_offsets) -> bool:
    """Whether CUB-style offsets (no ``end_offsets``) put every one of the ``n`` items in a segment
    of two items or more (one-item segments are left to the copy of the input)."""
    return (end_offsets is None and begin_np.size > 0 and begin_np[0] == 0 and begin_np[-1] + len_np[-1] == n
            and not (len_np == 1).any())


def _short_limit(keys: torch.Tensor) -> int:
    """The longest segment of ``keys`` (as :func:`_segmented_sort_impl` gets them) sorted by one program."""
    return _one_program_limit(policy.select("segmented_sort", keys.device, "large"), key_meta(keys.dtype)["KEY_BITS"],
                              keys.device, None)


def _sort_short_segments(kb, vb, okb, ovb, keys, values, out_k, out_v, begin_np, len_np, descending, meta, max_block,
                         binned):
    """The segments of 2 to ``max_block`` items of :func:`_segmented_sort_impl` (``kb``... its bits
    views of ``keys``, ``values`` and their outputs ``out_k``, ``out_v``; ``binned``: the segments
    binned on the GPU by :func:`_segments`): one launch per bin."""
    device = keys.device
    if binned[3]:
        # one launch per block size; the segment lists are a stable sort of the bins on the GPU (on
        # the host, ~0.7 ms for 100k segments on the H100's)
        d_begin, d_len, d_bin, bins = binned
        d_ids = torch.argsort(d_bin, stable=True)
        # the bins' launches are remembered per bins, dtypes, direction, device, alignments and
        # policies, and replayed on a later call's buffers (ten launches of ~0.1 ms of host time each)
        roots = (keys, out_k) + ((values, out_v) if values is not None else ()) + (d_begin, d_len, d_ids)
        replay_key = pols = None
        if _replayable(keys) and not recording_launches():   # (as in sort_rows)
            pols = tuple(policy.select("segmented_sort", device, _bucket(block)) for block, _, _ in bins)
            replay_key = (tuple(bins), len_np.size, keys.dtype, None if values is None else values.dtype, descending,
                          device, tuple(t.data_ptr() & 15 == 0 for t in roots), block_radix_available(device),
                          len(_BLOCK_RADIX_FAILED), WIDE_KEYS_BLOCK_RADIX,
                          values is not None and values.data_ptr() == keys.data_ptr())   # (values aliasing keys)
            hit = _SHORT_REPLAYS.get(replay_key)
            if hit is not None and len(hit[0]) == len(pols) and all(a is b for a, b in zip(hit[0], pols)):
                replay(hit[1], tuple(t.data_ptr() for t in roots))
                return
        refused = []
        with record_launches() if replay_key is not None else contextlib.nullcontext([]) as rec:
            for block, start, count in bins:
                if not _launch_tile_sort(kb, vb, okb, ovb, None, block=block, num_segs=count,
                                         descending=descending, meta=meta, device=device, seg_begin=d_begin,
                                         seg_len=d_len, seg_list=d_ids[start:start + count]):
                    refused.append(block)
        if refused:
            bin_of = _block_bins(len_np, (len_np > 1) & (len_np <= max_block), MIN_BLOCK)[0]
        for block in refused:
            # segments past MAX_BLOCK that the block radix sort did not take here: the long path
            sel = bin_of == _log2(block)
            _sort_long(kb, vb, okb, ovb, None, seg_begin_np=begin_np[sel], seg_len_np=len_np[sel],
                       descending=descending, meta=meta, device=device)
        launches = relocatable(rec, roots) if replay_key is not None and not refused else None
        if launches is not None:
            if len(_SHORT_REPLAYS) >= 64:
                _SHORT_REPLAYS.clear()
            _SHORT_REPLAYS[replay_key] = (pols, launches)


def _segmented_sort_impl(keys, values, begin_np, len_np, descending, covered, binned):
    """``covered`` (:func:`_covers`): every item is in a segment that is sorted, so the outputs need no
    copy of the input first. ``binned``: the segments binned on the GPU (:func:`_segments` with
    :func:`_short_limit` of ``keys``; None only when there are no keys or no segments)."""
    device = keys.device
    meta = key_meta(keys.dtype)
    # items outside every segment are passed through unchanged
    out_k = torch.empty_like(keys) if covered else keys.clone()
    out_v = (torch.empty_like(values) if covered else values.clone()) if values is not None else None
    if keys.numel() == 0 or len_np.size == 0:
        return out_k, out_v
    check_device(keys, "keys")
    kb, okb = bits_view(keys), bits_view(out_k)
    vb = bits_view(values) if values is not None else None
    ovb = bits_view(out_v) if values is not None else None
    max_block = _short_limit(keys)
    # short segments first: binned on the GPU, their launches take little host time, and the GPU sorts
    # them while the host plans the long ones (long ones first measured 3.78-3.99 ms a call against
    # 3.21-3.22 for the benchmark's ragged case on the H200; RADIX_RANK_NOTES.md, round 20)
    _sort_short_segments(kb, vb, okb, ovb, keys, values, out_k, out_v, begin_np, len_np, descending, meta, max_block,
                         binned)
    long_ = len_np > max_block
    if long_.any():
        _sort_long(kb, vb, okb, ovb, None, seg_begin_np=begin_np[long_], seg_len_np=len_np[long_],
                   descending=descending, meta=meta, device=device)
    return out_k, out_v


def segmented_sort(keys: torch.Tensor, offsets: torch.Tensor, end_offsets: torch.Tensor | None = None,
                   descending: bool = False) -> torch.Tensor:
    """DeviceSegmentedSort::SortKeys (stable): sort each segment of the 1-D ``keys``.

    Segments are ``[offsets[i], offsets[i+1])`` (``num_segments + 1`` offsets), or
    ``[offsets[i], end_offsets[i])`` when ``end_offsets`` is given (CUB's begin/end form; segments
    may be empty, must not overlap; a segment that ends before it begins is an error, where CUB takes
    it as empty). Items outside every segment are copied unchanged. One
    device-to-host copy of the offsets (binning by length). Stable, deterministic, torch's order.
    Bool keys sort as their bytes (False before True).
    """
    check_tensor(keys, "keys", ROWS_DTYPES, ndim=1)
    _check_offsets(keys, offsets, end_offsets, descending)
    kb = _as_bytes(keys.contiguous())
    begin, length, binned = _segments(offsets, end_offsets, keys.numel(), keys, _short_limit(kb))
    out = _segmented_sort_impl(kb, None, begin, length, descending, _covers(begin, length, keys.numel(), end_offsets),
                               binned)[0]
    return out.view(torch.bool) if keys.dtype == torch.bool else out


def _as_bytes(t: torch.Tensor) -> torch.Tensor:
    """A bool tensor as its bytes (uint8: False 0, True 1), anything else as it is."""
    return t.view(torch.uint8) if t.dtype == torch.bool else t


def _check_pairs(keys: torch.Tensor, values: torch.Tensor) -> None:
    """segmented_sort_pairs' checks of keys and values (the operator's fake runs them too)."""
    check_tensor(keys, "keys", ROWS_DTYPES, ndim=1)
    if not isinstance(values, torch.Tensor):
        raise InputTypeError(f"values must be a torch.Tensor, got {type(values).__name__}")
    if values.dim() != 1 or values.numel() != keys.numel():
        raise InputValueError(f"values must be 1-D with {keys.numel()} items like keys, "
                                   f"got shape {tuple(values.shape)}")
    if values.element_size() not in INT_OF_SIZE or values.dtype.is_complex:
        raise InputTypeError(f"values of dtype {values.dtype} are not supported (need a bool, or a 1, 2, 4 or "
                             f"8-byte integer or float dtype)")
    check_same_device(("keys", keys), ("values", values))


def segmented_sort_pairs(keys: torch.Tensor, values: torch.Tensor, offsets: torch.Tensor,
                         end_offsets: torch.Tensor | None = None, descending: bool = False):
    """DeviceSegmentedSort::SortPairs (stable): sort each segment's keys, carrying ``values`` along.

    ``values`` is 1-D with as many items as ``keys`` (bool, or an integer or float dtype of 1, 2, 4 or
    8 bytes; not complex: sort their ``int64`` positions and gather). Offsets and bool keys as in
    :func:`segmented_sort`. Returns ``(sorted_keys, sorted_values)``.
    """
    _check_pairs(keys, values)
    _check_offsets(keys, offsets, end_offsets, descending)
    kb = _as_bytes(keys.contiguous())
    begin, length, binned = _segments(offsets, end_offsets, keys.numel(), keys, _short_limit(kb))
    k, v = _segmented_sort_impl(kb, _as_bytes(values.contiguous()), begin, length, descending,
                                _covers(begin, length, keys.numel(), end_offsets), binned)
    return (k.view(torch.bool) if keys.dtype == torch.bool else k,
            v.view(torch.bool) if values.dtype == torch.bool else v)


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------


@custom_op("tritoncub::segmented_sort", mutates_args=(), cudagraph_unsafe=True)
def _segmented_sort_op(keys: torch.Tensor, offsets: torch.Tensor, descending: bool = False,
                       end_offsets: Optional[torch.Tensor] = None) -> torch.Tensor:
    return segmented_sort(keys, offsets, end_offsets, descending=descending)


@_segmented_sort_op.register_fake
def _(keys, offsets, descending=False, end_offsets=None):
    check_tensor(keys, "keys", ROWS_DTYPES, ndim=1)
    _check_offsets(keys, offsets, end_offsets, descending)
    return torch.empty(keys.shape, dtype=keys.dtype, device=keys.device)


@custom_op("tritoncub::segmented_sort_pairs", mutates_args=(), cudagraph_unsafe=True)
def _segmented_sort_pairs_op(keys: torch.Tensor, values: torch.Tensor, offsets: torch.Tensor,
                             descending: bool = False,
                             end_offsets: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:
    return segmented_sort_pairs(keys, values, offsets, end_offsets, descending=descending)


@_segmented_sort_pairs_op.register_fake
def _(keys, values, offsets, descending=False, end_offsets=None):
    _check_pairs(keys, values)
    _check_offsets(keys, offsets, end_offsets, descending)
    return (torch.empty(keys.shape, dtype=keys.dtype, device=keys.device),
            torch.empty(values.shape, dtype=values.dtype, device=values.device))


def _segmented_sort_setup(ctx, inputs, output):
    # the permutation is not an output: the backward sorts the positions again (only when a
    # gradient is asked for)
    keys, offsets, descending, end_offsets = inputs[0], inputs[-3], inputs[-2], inputs[-1]
    ctx.descending = descending
    ctx.save_for_backward(keys, offsets, end_offsets)


def _segment_permutation(ctx):
    """Where each output item came from (items outside every segment stay where they are)."""
    keys, offsets, end_offsets = ctx.saved_tensors
    pos = torch.arange(keys.numel(), device=keys.device, dtype=torch.int64)
    # (through the operator: a backward traced by torch.compile must not run the host-side offset
    # reads of the Python function on fake tensors)
    return torch.ops.tritoncub.segmented_sort_pairs(keys.detach(), pos, offsets, ctx.descending, end_offsets)[1]


def _scatter_back(grad, perm):
    return None if grad is None else torch.zeros_like(grad).scatter(0, perm, grad)


def _segmented_sort_backward(ctx, grad_keys):
    return _scatter_back(grad_keys, _segment_permutation(ctx)), None, None, None


def _segmented_sort_pairs_backward(ctx, grad_keys, grad_values):
    if grad_keys is None and grad_values is None:
        return None, None, None, None, None
    perm = _segment_permutation(ctx)
    return _scatter_back(grad_keys, perm), _scatter_back(grad_values, perm), None, None, None


_segmented_sort_op.register_autograd(_segmented_sort_backward, setup_context=_segmented_sort_setup)
_segmented_sort_pairs_op.register_autograd(_segmented_sort_pairs_backward, setup_context=_segmented_sort_setup)


@custom_op("tritoncub::sort_rows", mutates_args=())
def _sort_rows_op(x: torch.Tensor, descending: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return sort_rows(x, descending)


@_sort_rows_op.register_fake
def _(x, descending=False):
    check_tensor(x, "x", ROWS_DTYPES)
    return torch.empty_like(x, memory_format=torch.contiguous_format), \
        torch.empty(x.shape, dtype=torch.int64, device=x.device)


def _sort_rows_setup(ctx, inputs, output):
    x, _ = inputs
    ctx.shape = x.shape
    ctx.save_for_backward(output[1])


def _sort_rows_backward(ctx, grad_values, grad_indices):
    (idx,) = ctx.saved_tensors
    if grad_values is None:
        return None, None
    g = torch.zeros(ctx.shape, dtype=grad_values.dtype, device=grad_values.device)
    if len(ctx.shape) == 0:
        return grad_values.clone(), None
    return g.scatter(-1, idx, grad_values), None


_sort_rows_op.register_autograd(_sort_rows_backward, setup_context=_sort_rows_setup)


# the launch helpers as defined here (tests replace them to watch launches: no replays then)
_LAUNCH_TILE_SORT = _launch_tile_sort
_LAUNCH_BLOCK_RADIX_SORT = _launch_block_radix_sort
