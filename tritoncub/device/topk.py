"""Top-k per row (DeviceTopK / batched top-k): the k largest or smallest items with int64 indices.

Keys are turned into ordered bits (see :mod:`tritoncub.device.segmented_sort`; smallest-k complements
them), so every path selects the k *largest* ordered keys. Three strategies, chosen per call from the
row length, the key width and k (thresholds in the ``topk`` policy):

* **tile** (rows of up to ``ROW_MAX_BLOCK`` items): ``ROWS`` rows per program in registers; key and
  inverted column are packed into one word and a bitonic top-k (``bitonic_topk``: sort runs of
  ``next_pow2(k)``, keep the larger half of neighbouring runs, re-merge; or ``tl.topk`` with
  ``NETWORK="tl"``) keeps the best ``next_pow2(k)``; 64-bit keys sort the row tile as (key, index)
  pairs instead, or, where the shared-memory block radix sort takes their rows (compiled NVIDIA
  kernels, rows of 129 keys and more under the shipped policies; :data:`_WIDE_ROWS_BY_SORT`), are
  sorted by it (stable) and the first k kept, by a sort launch that writes only those
  (:data:`_WIDE_ROWS_FIRST_K`; else ``sort_rows`` and a copy): the same results (segments of
  ``segmented_topk``, :data:`_WIDE_SEGMENTS_BY_SORT`: the same kernel).
  Never a full sort of anything but the tile (or such a row or segment).
* **candidates** (long rows of at most ``CAND_MAX_LEN`` keys of at most 32 bits,
  ``next_pow2(k) <= CAND_K_MAX``): each program
  keeps a few candidates of a chunk of the row (packed ``ordered_key << 32 | ~column`` words), the
  candidate lists are reduced the same way until one ``CHUNK`` remains, whose top-k is the result: a
  running k-best merge. A round keeps either the chunk's bitonic top-k, or (policy ``FILTER``) the
  words at or above a threshold no larger than the chunk's k-th word, found from the maxima of
  strided groups of the chunk without sorting it (``_topk_filter_kernel``).
* **radix select** (everything else: large k, 64-bit keys on long rows, rows longer than
  ``CAND_MAX_LEN``): 8-bit digit histograms from
  the most significant digit narrow the k-th key (a one-program-per-row resolve step after each;
  the first histogram, over every key, counts with shared-memory atomics on NVIDIA sm_80+ and
  ``tl.histogram`` elsewhere); after the full passes the items above the k-th key's bucket go to the
  output and the items in it are compacted into a candidate buffer of ``_RS_FINISH_CAP`` items per
  row, and one program per row runs the remaining digits over them and the last compaction (the
  items above the k-th key and as many equal to it as needed). Nothing is read back to the host: a
  row whose bucket holds more candidates than the buffer (e.g. many equal keys) is finished from
  the keys instead — histogram and resolve launches for the remaining digits, then a compaction
  that writes the whole output again — in kernels that every other row leaves at once. Then, if ``sorted``, the k results are sorted by value with their
  indices carried (a tile sort, or the merge path beyond a tile). Never a full sort of the row.

Tie rule: the tile and candidate paths return, among equal values, the lowest indices first (a
stable order; NaN is the largest value, ``-0.0 == +0.0``). The radix-select path returns the right
values, but which of several items equal to the k-th value are picked, and the order of equal values,
is unspecified (atomic slot allocation): two calls may return different indices. Under
``torch.use_deterministic_algorithms(True)`` the rows and segments that would take it (long rows with k
above the running k-best's limit, long rows of 64-bit keys, rows over ``CAND_MAX_LEN``) are sorted
instead (a stable sort, the first k kept: the tile path's rule, lowest indices first among equal
values, and the same result every call; often slower, e.g. a top-1 of long fp64 rows sorts them).
Values always equal ``torch.topk``'s when ``sorted=True``; indices always point at items holding the
returned values.
"""
from __future__ import annotations

import contextlib

import numpy as np
import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .. import policy
from .._library import custom_op
from .. import _launch as _launch_module
from .. import _utils as _utils_module
from .._launch import LaunchPlan, launch, record_launches, recording_launches, relocatable, replay, replays_ok
from .._utils import (is_pow2, InputTypeError, InputValueError, as_int, cached_persistent, cdiv, check_device, check_flag,
                      check_tensor, check_same_device, grid_y_batches, maxnreg_kwargs, next_power_of_2, num_sms,
                      refuse_capture, smem_atomics_ok, wrap_dim)
from ..block.radix_rank import smem_count_words_if
from ..thread.radix_traits import to_ordered_bits
from ..thread.radix_traits import KEY_DTYPES as RADIX_KEY_DTYPES
from .radix_sort import _bucket as _radix_bucket
from .radix_sort import reads_back, replay_key_parts as radix_replay_key_parts, sort as radix_sort_rows
from .radix_sort import sort_pairs_recorded as radix_sort_pairs_recorded
from . import segmented_sort as _segmented_sort_module
from .segmented_sort import _bucket as _seg_bucket
from .segmented_sort import (MIN_BLOCK, SORT_DTYPES, bits_view, key_meta, ordered_bits, pack_mode,
                             sort_tile_descending, bitonic_topk, _host_arrays_to_device, _launch_tile_sort,
                             _log2, _one_program_limit, _segments_by_block, _sort_long, block_radix_first_k,
                             block_radix_sorts_rows)

_IDX32_INT = 0xFFFFFFFF   # the inverted-column field of a packed candidate (literal in the kernels)

# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------


@triton.jit
def _topk_tile_kernel(
        keys_ptr, out_vals_ptr, out_idx_ptr, seg_begin_ptr, seg_len_ptr, seg_list_ptr,
        num_rows, row_len, row_stride, k, out_stride,
        BLOCK: tl.constexpr, ROWS: tl.constexpr, K2: tl.constexpr, K_LOG: tl.constexpr, LOG_N: tl.constexpr,
        N_DIMS: tl.constexpr, PACK: tl.constexpr, TL_SORT: tl.constexpr, UNIFORM: tl.constexpr,
        HAS_LIST: tl.constexpr, IDX_ABS: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr):
    """Top-k of ROWS rows of at most BLOCK items each, in registers."""
    pid = tl.program_id(0)
    r = pid.to(tl.int64) * ROWS + tl.arange(0, ROWS)
    rmask = r < num_rows
    if UNIFORM:
        begin = r * row_stride
        length = tl.where(rmask, row_len, 0).to(tl.int64)
        out_row = r
    else:
        if HAS_LIST:
            seg = tl.load(seg_list_ptr + r, mask=rmask, other=0).to(tl.int64)
        else:
            seg = r
        begin = tl.load(seg_begin_ptr + seg, mask=rmask, other=0).to(tl.int64)
        length = tl.load(seg_len_ptr + seg, mask=rmask, other=0).to(tl.int64)
        out_row = seg
    cols = tl.arange(0, BLOCK)
    mask = cols[None, :] < length[:, None]
    bits = tl.load(keys_ptr + begin[:, None] + cols[None, :], mask=mask, other=0)
    ordp = ordered_bits(bits, KEY_DTYPE, ASCENDING)
    ordp = tl.where(mask, ordp, tl.zeros_like(ordp))
    if PACK == 0:
        idx = sort_tile_descending(ordp, cols, ROWS, BLOCK, LOG_N, N_DIMS, 0)
        ocols = cols
    else:
        inv = tl.broadcast_to((BLOCK - 1 - cols).to(tl.uint64)[None, :], ordp.shape)
        p = (ordp << LOG_N) | inv
        if PACK == 32:
            p = p.to(tl.uint32)
        if TL_SORT:
            top = tl.topk(p, K2)
        else:
            top = bitonic_topk(p, ROWS, K_LOG, LOG_N, N_DIMS)
        idx = (BLOCK - 1) - (top & (BLOCK - 1)).to(tl.int64)
        ocols = tl.arange(0, K2)
    lim = tl.minimum(length, k)
    omask = ocols[None, :] < lim[:, None]
    vals = tl.load(keys_ptr + begin[:, None] + idx, mask=omask)
    dst = out_row[:, None] * out_stride + ocols[None, :]
    tl.store(out_vals_ptr + dst, vals, mask=omask)
    if IDX_ABS:
        idx += begin[:, None]
    tl.store(out_idx_ptr + dst, idx, mask=omask)


@triton.jit
def _load_packed_chunk(keys_ptr, cand_in_ptr, row_begin_ptr, row_len_ptr, n_in, c, row, CHUNK: tl.constexpr,
                       FROM_KEYS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr):
    """Chunk ``c`` of row ``row`` as packed ``ordered_key << 32 | ~column`` words (``FROM_KEYS``), or of
    the row's ``n_in`` candidate words; 0 (below every real word) past the end."""
    offs = c.to(tl.int64) * CHUNK + tl.arange(0, CHUNK)
    if FROM_KEYS:
        begin = tl.load(row_begin_ptr + row).to(tl.int64)
        mask = offs < tl.load(row_len_ptr + row).to(tl.int64)
        bits = tl.load(keys_ptr + begin + offs, mask=mask, other=0)
        ordp = ordered_bits(bits, KEY_DTYPE, ASCENDING)
        p = (ordp << 32) | (0xFFFFFFFF - offs).to(tl.uint64)
        p = tl.where(mask, p, tl.zeros_like(p))
    else:
        p = tl.load(cand_in_ptr + row * n_in + offs, mask=offs < n_in, other=0).to(tl.uint64, bitcast=True)
    return p


@triton.jit
def _topk_chunk_kernel(
        keys_ptr, cand_in_ptr, cand_out_ptr, out_vals_ptr, out_idx_ptr, row_begin_ptr, row_len_ptr,
        n_in, k, out_stride,
        CHUNK: tl.constexpr, LOG_CHUNK: tl.constexpr, K2: tl.constexpr, K_LOG: tl.constexpr,
        TL_SORT: tl.constexpr, FROM_KEYS: tl.constexpr, FINAL: tl.constexpr,
        IDX_ABS: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr):
    """Running k-best: the top K2 packed (key << 32 | ~column) words of one CHUNK of one row."""
    c = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    begin = tl.load(row_begin_ptr + row).to(tl.int64)
    p = _load_packed_chunk(keys_ptr, cand_in_ptr, row_begin_ptr, row_len_ptr, n_in, c, row, CHUNK, FROM_KEYS,
                           KEY_DTYPE, ASCENDING)
    if TL_SORT:
        top = tl.topk(p, K2)
    else:
        top = tl.reshape(bitonic_topk(tl.reshape(p, [1, CHUNK]), 1, K_LOG, LOG_CHUNK, LOG_CHUNK), [K2])
    j = tl.arange(0, K2)
    if FINAL:
        idx = 0xFFFFFFFF - (top & 0xFFFFFFFF).to(tl.int64)
        om = j < k
        vals = tl.load(keys_ptr + begin + idx, mask=om)
        tl.store(out_vals_ptr + row * out_stride + j, vals, mask=om)
        if IDX_ABS:
            idx += begin
        tl.store(out_idx_ptr + row * out_stride + j, idx, mask=om)
    else:
        n_out = tl.num_programs(0).to(tl.int64) * K2
        tl.store(cand_out_ptr + row * n_out + c * K2 + j, top.to(tl.int64, bitcast=True))


@triton.jit
def _kth_group_max(v, GROUPS: tl.constexpr, LOG_GROUPS: tl.constexpr, K2: tl.constexpr, K_LOG: tl.constexpr):
    """The ``K2``-th largest of the column maxima of a ``[CHUNK // GROUPS, GROUPS]`` chunk tile (the
    groups are its columns): at most the chunk's ``K2``-th largest item, since the ``K2`` largest
    maxima are ``K2`` distinct items at or above it."""
    best = bitonic_topk(tl.reshape(tl.max(v, axis=0), [1, GROUPS]), 1, K_LOG, LOG_GROUPS, LOG_GROUPS)
    return tl.min(tl.reshape(best, [K2]), axis=0)


@triton.jit
def _store_selected(hi, lo, sel, out, CAP: tl.constexpr):
    """Compact the selected words of a chunk tile, in input (row-major) order, into ``out`` when at
    most ``CAP`` are, 0 (below every real word) in the other slots; returns whether they fitted. The
    words are ``hi << 32 | lo`` of two uint32 tiles (formed only here, just before the store: fewer
    live registers), or ``hi`` itself when ``lo`` is None. The positions come from scans along the
    tile's own axes (per-row counts, then within rows)."""
    row_count = tl.sum(sel.to(tl.int32), axis=1)
    count = tl.sum(row_count, axis=0)
    if count <= CAP:
        pos = (tl.cumsum(row_count, axis=0) - row_count)[:, None] + tl.cumsum(sel.to(tl.int32), axis=1) - 1
        if lo is None:
            p = hi
        else:
            p = (hi.to(tl.uint64) << 32) | lo.to(tl.uint64)
        # (stored as 1-D tiles: the row-major reshape keeps every item in its thread, while a scattered
        # 2-D store got a layout of its own, and a conversion through shared memory, from the compiler)
        n: tl.constexpr = p.shape[0] * p.shape[1]
        tl.store(out + tl.reshape(pos, [n]), tl.reshape(p, [n]).to(tl.int64, bitcast=True), mask=tl.reshape(sel, [n]))
        j = tl.arange(0, CAP)
        tl.store(out + j, tl.zeros([CAP], tl.int64), mask=j >= count)
    return count <= CAP


@triton.jit
def _filter_words(p, out, CHUNK: tl.constexpr, LOG_CHUNK: tl.constexpr, GROUPS: tl.constexpr,
                  LOG_GROUPS: tl.constexpr, CAP: tl.constexpr, K2: tl.constexpr, K_LOG: tl.constexpr):
    """Candidates of a chunk tile of distinct packed words (0 = no item): the words at or above the
    ``K2``-th group maximum when at most ``CAP`` are, else the chunk's bitonic top ``K2``."""
    t = _kth_group_max(p, GROUPS, LOG_GROUPS, K2, K_LOG)
    if not _store_selected(p, None, (p >= t) & (p != 0), out, CAP):
        top = tl.reshape(bitonic_topk(tl.reshape(p, [1, CHUNK]), 1, K_LOG, LOG_CHUNK, LOG_CHUNK), [K2])
        tl.store(out + tl.arange(0, K2), top.to(tl.int64, bitcast=True))
        j = tl.arange(0, CAP)
        tl.store(out + j, tl.zeros([CAP], tl.int64), mask=j >= K2)


@triton.jit
def _topk_filter_kernel(
        keys_ptr, cand_in_ptr, cand_out_ptr, row_begin_ptr, row_len_ptr, n_in,
        CHUNK: tl.constexpr, LOG_CHUNK: tl.constexpr, GROUPS: tl.constexpr, LOG_GROUPS: tl.constexpr,
        CAP: tl.constexpr, K2: tl.constexpr, K_LOG: tl.constexpr, FROM_KEYS: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr,
        KEY_THRESHOLD: tl.constexpr = True):
    """A round of the running k-best without sorting the chunk: ``CAP`` candidate words (packed
    ``key << 32 | ~column``, all distinct) per ``CHUNK`` of one row, a superset of the chunk's top
    ``K2``.

    The chunk is loaded as a ``[CHUNK // GROUPS, GROUPS]`` tile (item ``i`` at ``(i // GROUPS,
    i % GROUPS)``), whose columns are ``GROUPS`` strided groups: every reduction and scan then runs
    along an axis of the loaded tile's own layout (a 1-D chunk reshaped into groups was moved
    through shared memory). The ``K2``-th largest group maximum ``t`` is at most the chunk's
    ``K2``-th largest word, so the chunk's top ``K2`` are among its words ``>= t``. When at most
    ``CAP`` words are (random data with ``GROUPS = 4 K2``: about ``1.1 K2`` on average; sorted,
    reversed and all-equal chunks: exactly ``K2``), they are written in input order and the other
    slots get 0, which is below every real word; otherwise (data periodic in the group stride) the
    chunk's top ``K2`` come from the bitonic top-k, as in :func:`_topk_chunk_kernel`.

    ``KEY_THRESHOLD`` (rounds over the keys): the threshold is first taken on the 32-bit ordered
    keys alone (the same argument holds for keys; half the work of 64-bit words), selecting the
    items whose key is ``>=`` it; only when more than ``CAP`` are (ties at the threshold, e.g.
    all-equal keys) does the round fall back to the packed words, which are distinct."""
    c = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    out = cand_out_ptr + row * (tl.num_programs(0).to(tl.int64) * CAP) + c.to(tl.int64) * CAP
    R: tl.constexpr = CHUNK // GROUPS
    local = tl.arange(0, R)[:, None] * GROUPS + tl.arange(0, GROUPS)[None, :]   # (int32 per item)
    base = c.to(tl.int64) * CHUNK
    if FROM_KEYS:
        begin = tl.load(row_begin_ptr + row).to(tl.int64)
        mask = local < tl.maximum(tl.minimum(tl.load(row_len_ptr + row).to(tl.int64) - base, CHUNK), 0).to(tl.int32)
        bits = tl.load(keys_ptr + (begin + base) + local, mask=mask, other=0)
        key = tl.where(mask, to_ordered_bits(bits.to(KEY_DTYPE, bitcast=True), ASCENDING).to(tl.uint32), 0)
        inv = (0xFFFFFFFF - base).to(tl.uint32) - local.to(tl.uint32)   # ~column (columns < 2^32 - 1)
        if KEY_THRESHOLD:
            t = _kth_group_max(key, GROUPS, LOG_GROUPS, K2, K_LOG)
            if not _store_selected(key, inv, mask & (key >= t), out, CAP):
                p = tl.where(mask, (key.to(tl.uint64) << 32) | inv.to(tl.uint64), 0)
                _filter_words(p, out, CHUNK, LOG_CHUNK, GROUPS, LOG_GROUPS, CAP, K2, K_LOG)
        else:
            p = tl.where(mask, (key.to(tl.uint64) << 32) | inv.to(tl.uint64), 0)
            _filter_words(p, out, CHUNK, LOG_CHUNK, GROUPS, LOG_GROUPS, CAP, K2, K_LOG)
    else:
        mask = local < tl.maximum(tl.minimum(n_in - base, CHUNK), 0).to(tl.int32)
        p = tl.load(cand_in_ptr + (row * n_in + base) + local, mask=mask, other=0).to(tl.uint64, bitcast=True)
        _filter_words(p, out, CHUNK, LOG_CHUNK, GROUPS, LOG_GROUPS, CAP, K2, K_LOG)


@triton.jit
def _rs_hist_kernel(
        keys_ptr, cand_key_ptr, row_begin_ptr, row_len_ptr, cand_cnt_ptr, prefix_ptr, hist_ptr, cap,
        BLOCK: tl.constexpr, TILES: tl.constexpr, SHIFT: tl.constexpr, FROM_KEYS: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr,
        ONLY_OVERFLOW: tl.constexpr = False):
    """Histogram of the 8-bit digit at SHIFT of the keys that match the row's prefix above it.
    ``ONLY_OVERFLOW``: only rows whose candidates overflowed their buffer (``cand_cnt > cap``)."""
    c = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    if FROM_KEYS:
        n = tl.load(row_len_ptr + row).to(tl.int64)
    else:
        n = tl.load(cand_cnt_ptr + row).to(tl.int64)
    if ONLY_OVERFLOW:
        n = tl.where(tl.load(cand_cnt_ptr + row) > cap, n, 0)
    start = c.to(tl.int64) * (BLOCK * TILES)
    if start < n:
        begin = tl.load(row_begin_ptr + row).to(tl.int64)
        prefix = tl.load(prefix_ptr + row).to(tl.uint64, bitcast=True)
        hist = tl.zeros([256], tl.int32)
        for t in tl.static_range(TILES):
            offs = start + t * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            if FROM_KEYS:
                bits = tl.load(keys_ptr + begin + offs, mask=mask, other=0)
                ordp = ordered_bits(bits, KEY_DTYPE, ASCENDING)
            else:
                ordp = tl.load(cand_key_ptr + row * cap + offs, mask=mask, other=0).to(tl.uint64, bitcast=True)
            if SHIFT + 8 < KEY_BITS:
                mask = mask & (((ordp ^ prefix) >> (SHIFT + 8)) == 0)
            digit = ((ordp >> SHIFT) & 255).to(tl.int32)
            hist += tl.histogram(digit, 256, mask=mask)
        d = tl.arange(0, 256)
        tl.atomic_add(hist_ptr + row * 256 + d, hist.to(tl.int64), mask=hist > 0, sem="relaxed")


@gluon.jit
def _rs_hist_smem_kernel(keys_ptr, row_begin_ptr, row_len_ptr, cand_cnt_ptr, prefix_ptr, hist_ptr, cap,
                         SHIFT: gl.constexpr, KEY_BITS: gl.constexpr, KEY_DTYPE: gl.constexpr,
                         ASCENDING: gl.constexpr, WARPS: gl.constexpr, ITEMS: gl.constexpr,
                         ONLY_OVERFLOW: gl.constexpr = False):
    """A radix-select pass over every key of row ``program_id(1)``: the histogram of the 8-bit digit
    at ``SHIFT`` of the keys whose higher digits equal the row's prefix, counted with shared-memory
    atomics, one 256-counter histogram per warp (CUB's BLOCK_HISTO_ATOMIC; ``tl.histogram`` made
    such a pass 10x the read time). The row's programs take its tiles ``pid, pid + programs, ...``;
    each adds its counts to ``hist[row]`` at the end. ``ONLY_OVERFLOW``: only rows whose candidates
    overflowed their buffer (``cand_cnt > cap``), as :func:`_rs_hist_kernel`."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    LH: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [WARPS, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [WARPS, 256], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    row = gl.program_id(1).to(gl.int64)
    n = gl.load(row_len_ptr + row).to(gl.int64)
    if ONLY_OVERFLOW:
        n = n * (gl.load(cand_cnt_ptr + row) > cap).to(gl.int64)
    n_tiles = (n + TILE - 1) // TILE
    # (a program with no tile, e.g. every program of a row that did not overflow, stops here: zeroing
    # and summing the histograms of ~1000 such programs took ~20 us a launch on the H200)
    if gl.program_id(0) < n_tiles:
        smem.store(gl.zeros([WARPS, 256], gl.int32, LH))
        gl.thread_barrier()
        begin = gl.load(row_begin_ptr + row).to(gl.int64)
        prefix = gl.load(prefix_ptr + row).to(gl.uint64, bitcast=True)
        i = gl.arange(0, TILE, layout=LB)
        warp_base = (i // (32 * ITEMS)) * 256
        for t in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
            offs = t * TILE + i
            m = offs < n
            bits = gl.load(keys_ptr + begin + offs, mask=m, other=0)
            ordp = ordered_bits(bits, KEY_DTYPE, ASCENDING)
            if SHIFT + 8 < KEY_BITS:
                m = m & (((ordp ^ prefix) >> (SHIFT + 8)) == 0)
            d = ((ordp >> SHIFT) & 255).to(gl.int32)
            smem_count_words_if(warp_base + d, m.to(gl.int32))
        gl.thread_barrier()
        c = gl.sum(smem.load(LH), 0)
        dig = gl.arange(0, 256, layout=gl.SliceLayout(0, LH))
        gl.atomic_add(hist_ptr + row * 256 + dig, c.to(gl.int64), mask=c > 0, sem="relaxed")


@triton.jit
def _rs_resolve_kernel(hist_ptr, prefix_ptr, krem_ptr, bucket_ptr, k, cand_cnt_ptr, cap, out_cnt_ptr, tie_cnt_ptr,
                       SHIFT: tl.constexpr, FIRST: tl.constexpr, ONLY_OVERFLOW: tl.constexpr = False,
                       RESET_OUT: tl.constexpr = False):
    """Pick the digit holding the k-th largest key of the row; narrow prefix and k (``FIRST``: the
    remaining k is ``k``, not read); clear the histogram. ``ONLY_OVERFLOW``: only rows whose
    candidates overflowed their buffer (``cand_cnt > cap``); ``RESET_OUT``: those rows' output
    counts restart at 0 (their select is redone from the keys, writing all k slots again)."""
    row = tl.program_id(0).to(tl.int64)
    active = True
    if ONLY_OVERFLOW:
        active = tl.load(cand_cnt_ptr + row) > cap
    if active:
        d = tl.arange(0, 256)
        h = tl.load(hist_ptr + row * 256 + d)
        if FIRST:
            krem = tl.full((), k, tl.int64)
        else:
            krem = tl.load(krem_ptr + row)
        total = tl.sum(h, axis=0)
        above_incl = total - tl.cumsum(h, axis=0) + h
        ds = tl.sum((above_incl >= krem).to(tl.int32), axis=0) - 1
        sel = d == ds
        above = tl.sum(tl.where(sel, above_incl - h, 0), axis=0)
        bucket = tl.sum(tl.where(sel, h, 0), axis=0)
        prefix = tl.load(prefix_ptr + row)
        tl.store(prefix_ptr + row, prefix | (ds.to(tl.int64) << SHIFT))
        tl.store(krem_ptr + row, krem - above)
        tl.store(bucket_ptr + row, bucket)
        tl.store(hist_ptr + row * 256 + d, tl.zeros([256], tl.int64))
        if RESET_OUT:
            tl.store(out_cnt_ptr + row, 0)
            tl.store(tie_cnt_ptr + row, 0)


@triton.jit
def _rs_load_raw(keys_ptr, cand_key_ptr, row, cap, n, begin, start, BLOCK: tl.constexpr, FROM_KEYS: tl.constexpr):
    """The raw words of the tile at ``start``: key bits, or the candidates' ordered keys (0 past ``n``)."""
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    if FROM_KEYS:
        raw = tl.load(keys_ptr + begin + offs, mask=mask, other=0)
    else:
        raw = tl.load(cand_key_ptr + row * cap + offs, mask=mask, other=0)
    return raw


@triton.jit
def _rs_compact_tile(
        keys_ptr, cand_key_ptr, cand_idx_ptr, cand_key_out_ptr, cand_idx_out_ptr, cand_cnt_out_ptr, krem_ptr,
        out_cnt_ptr, tie_cnt_ptr, out_vals_ptr, out_idx_ptr, cap, cap_out, k, out_stride, row, n, begin, prefix,
        start, ordp, eq_done, BLOCK: tl.constexpr, SHIFT: tl.constexpr, FROM_KEYS: tl.constexpr,
        FINAL: tl.constexpr, IDX_ABS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr,
        SKIP_DONE: tl.constexpr = False):
    """One tile of :func:`_rs_compact_kernel` (``ordp``: its ordered keys, loaded by the caller);
    returns ``eq_done`` (see below), updated. ``SKIP_DONE``: once ``eq_done``, a tile with no key
    above the prefix is left at once."""
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    hi_me = ordp >> SHIFT
    hi_p = prefix >> SHIFT
    lowest = hi_p
    if SKIP_DONE:
        # (past the largest prefix the sum wraps to 0: such a tile takes the full path, as before)
        lowest = hi_p + (eq_done != 0).to(tl.uint64)
    # most tiles hold no key at or above the prefix (above it, once eq_done): one reduction decides
    if tl.max((mask & (hi_me >= lowest)).to(tl.int32), axis=0) > 0:
        if FROM_KEYS:
            idx = offs
        else:
            idx = tl.load(cand_idx_ptr + row * cap + offs, mask=mask, other=0)
        gt = mask & (hi_me > hi_p)
        eq = mask & (hi_me == hi_p)
        n_gt = tl.sum(gt.to(tl.int32), axis=0)
        out_idx = idx
        if IDX_ABS:
            out_idx = idx + begin
        if n_gt > 0:
            base = tl.atomic_add(out_cnt_ptr + row, n_gt, sem="relaxed").to(tl.int64)
            pos = base + tl.cumsum(gt.to(tl.int32), axis=0).to(tl.int64) - 1
            vals = tl.load(keys_ptr + begin + idx, mask=gt)
            tl.store(out_vals_ptr + row * out_stride + pos, vals, mask=gt)
            tl.store(out_idx_ptr + row * out_stride + pos, out_idx, mask=gt)
        n_eq = tl.sum(eq.to(tl.int32), axis=0)
        # ``eq_done``: this program has seen the row's tie slots all taken (FINAL) or its candidate
        # buffer overflow, after which equal keys change nothing: its later tiles skip the atomic
        # (~131k tiles adding to one row's counter took ~200 us a pass over 2^26 keys
        # in [0, 1); each program now adds at most once after the row is done)
        if (n_eq > 0) & (eq_done == 0):
            if FINAL:
                krem = tl.load(krem_ptr + row)
                base = tl.atomic_add(tie_cnt_ptr + row, n_eq, sem="relaxed").to(tl.int64)
                rank = base + tl.cumsum(eq.to(tl.int32), axis=0).to(tl.int64) - 1
                take = eq & (rank < krem)
                slot = k - krem + rank
                vals = tl.load(keys_ptr + begin + idx, mask=take)
                tl.store(out_vals_ptr + row * out_stride + slot, vals, mask=take)
                tl.store(out_idx_ptr + row * out_stride + slot, out_idx, mask=take)
                eq_done = (base + n_eq >= krem).to(tl.int32)
            else:
                base = tl.atomic_add(cand_cnt_out_ptr + row, n_eq, sem="relaxed").to(tl.int64)
                pos = base + tl.cumsum(eq.to(tl.int32), axis=0).to(tl.int64) - 1
                keep = eq & (pos < cap_out)
                tl.store(cand_key_out_ptr + row * cap_out + pos, ordp.to(tl.int64, bitcast=True), mask=keep)
                tl.store(cand_idx_out_ptr + row * cap_out + pos, idx, mask=keep)
                # (past a full buffer the count goes on, but only "more than cap_out" is read from it)
                eq_done = (base + n_eq > cap_out).to(tl.int32)
    return eq_done


@triton.jit
def _rs_compact_kernel(
        keys_ptr, cand_key_ptr, cand_idx_ptr, cand_key_out_ptr, cand_idx_out_ptr,
        row_begin_ptr, row_len_ptr, cand_cnt_ptr, cand_cnt_out_ptr, prefix_ptr, krem_ptr,
        out_cnt_ptr, tie_cnt_ptr, out_vals_ptr, out_idx_ptr, cap, cap_out, k, out_stride,
        BLOCK: tl.constexpr, SHIFT: tl.constexpr, FROM_KEYS: tl.constexpr, FINAL: tl.constexpr,
        IDX_ABS: tl.constexpr,
        KEY_BITS: tl.constexpr, KEY_DTYPE: tl.constexpr, ASCENDING: tl.constexpr,
        ONLY_OVERFLOW: tl.constexpr = False, SKIP_DONE: tl.constexpr = False):
    """Items whose key is above the prefix go to the output; those in its bucket become candidates
    (at most ``cap_out`` stored per row; the count goes on) or, on the last digit, fill the remaining
    output slots. The row's programs take its tiles ``pid, pid + programs, ...`` (the per-row values
    are read once per program). ``ONLY_OVERFLOW`` (with ``FROM_KEYS``): only rows whose candidates
    overflowed (``cand_cnt > cap``). ``SKIP_DONE``: a program whose row's equal keys are done (see
    :func:`_rs_compact_tile`) reads on only for keys above the prefix, and (not ``FINAL``) one that sees
    its row's candidates overflow stops (the caller redoes such rows from the keys, so their outputs
    are left partial)."""
    c = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    if FROM_KEYS:
        n = tl.load(row_len_ptr + row).to(tl.int64)
    else:
        n = tl.load(cand_cnt_ptr + row).to(tl.int64)
    if ONLY_OVERFLOW:
        n = tl.where(tl.load(cand_cnt_ptr + row) > cap, n, 0)
    begin = tl.load(row_begin_ptr + row).to(tl.int64)
    prefix = tl.load(prefix_ptr + row).to(tl.uint64, bitcast=True)
    start = c.to(tl.int64) * BLOCK
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    # the next tile's keys are loaded before this tile is processed (its reductions synchronise the
    # program's warps; without the prefetch every tile waits for its own load)
    raw_next = _rs_load_raw(keys_ptr, cand_key_ptr, row, cap, n, begin, start, BLOCK, FROM_KEYS)
    eq_done = tl.zeros((), tl.int32)
    while start < n:
        raw = raw_next
        raw_next = _rs_load_raw(keys_ptr, cand_key_ptr, row, cap, n, begin, start + step, BLOCK, FROM_KEYS)
        if FROM_KEYS:
            ordp = ordered_bits(raw, KEY_DTYPE, ASCENDING)
        else:
            ordp = raw.to(tl.uint64, bitcast=True)
        eq_done = _rs_compact_tile(keys_ptr, cand_key_ptr, cand_idx_ptr, cand_key_out_ptr, cand_idx_out_ptr,
                                   cand_cnt_out_ptr, krem_ptr, out_cnt_ptr, tie_cnt_ptr, out_vals_ptr, out_idx_ptr, cap,
                                   cap_out, k, out_stride, row, n, begin, prefix, start, ordp, eq_done, BLOCK, SHIFT,
                                   FROM_KEYS, FINAL, IDX_ABS, KEY_DTYPE, ASCENDING, SKIP_DONE)
        start += step
        if SKIP_DONE and not FINAL:
            # the row's candidates overflowed their buffer: its select is redone from the keys (the
            # ONLY_OVERFLOW passes write all k outputs anew), so the rest of this pass is wasted
            start = tl.where(eq_done != 0, n, start)


@triton.jit
def _rs_finish_kernel(keys_ptr, cand_key_ptr, cand_idx_ptr, row_begin_ptr, cand_cnt_ptr, prefix_ptr, krem_ptr,
                      out_cnt_ptr, out_vals_ptr, out_idx_ptr, cap, k, out_stride,
                      SHIFT: tl.constexpr, BLOCK: tl.constexpr, IDX_ABS: tl.constexpr):
    """The rest of a row's radix select in one program, over its few candidates (the keys in the
    k-th key's bucket of the digits at and above ``SHIFT``): the histogram and resolve steps of the
    digits below ``SHIFT``, then the last compaction — candidates above the k-th key go after the
    ``out_cnt`` items already written, the first ``krem`` equal to it fill the last slots. One launch
    instead of two per digit plus one (for few candidates the launches, not the work, cost)."""
    row = tl.program_id(0).to(tl.int64)
    n = tl.load(cand_cnt_ptr + row).to(tl.int64)
    n = tl.where(n > cap, 0, n)   # candidates overflowed the buffer: the row is finished from the keys
    prefix = tl.load(prefix_ptr + row).to(tl.uint64, bitcast=True)
    krem = tl.load(krem_ptr + row)
    base = row * cap
    lane = tl.arange(0, BLOCK)
    d = tl.arange(0, 256)
    for s in tl.static_range(SHIFT // 8):
        shift = SHIFT - 8 * (s + 1)
        hist = tl.zeros([256], tl.int32)
        start = 0
        while start < n:
            offs = start + lane
            m = offs < n
            ordp = tl.load(cand_key_ptr + base + offs, mask=m, other=0).to(tl.uint64, bitcast=True)
            m = m & (((ordp ^ prefix) >> (shift + 8)) == 0)
            hist += tl.histogram(((ordp >> shift) & 255).to(tl.int32), 256, mask=m)
            start += BLOCK
        h = hist.to(tl.int64)
        above_incl = tl.sum(h, axis=0) - tl.cumsum(h, axis=0) + h
        ds = tl.sum((above_incl >= krem).to(tl.int32), axis=0) - 1
        krem -= tl.sum(tl.where(d == ds, above_incl - h, 0), axis=0)
        prefix = prefix | (ds.to(tl.uint64) << shift)
    begin = tl.load(row_begin_ptr + row).to(tl.int64)
    out0 = tl.load(out_cnt_ptr + row).to(tl.int64)
    n_gt = tl.zeros((), tl.int64)
    n_eq = tl.zeros((), tl.int64)
    start = 0
    while start < n:
        offs = start + lane
        m = offs < n
        ordp = tl.load(cand_key_ptr + base + offs, mask=m, other=0).to(tl.uint64, bitcast=True)
        idx = tl.load(cand_idx_ptr + base + offs, mask=m, other=0)
        g32 = (m & (ordp > prefix)).to(tl.int32)
        e32 = (m & (ordp == prefix)).to(tl.int32)
        rank = n_eq + (tl.cumsum(e32, axis=0) - 1).to(tl.int64)
        take = (e32 != 0) & (rank < krem)
        dest = tl.where(g32 != 0, out0 + n_gt + (tl.cumsum(g32, axis=0) - 1).to(tl.int64), k - krem + rank)
        w = (g32 != 0) | take
        vals = tl.load(keys_ptr + begin + idx, mask=w)
        out_idx = idx
        if IDX_ABS:
            out_idx = idx + begin
        tl.store(out_vals_ptr + row * out_stride + dest, vals, mask=w)
        tl.store(out_idx_ptr + row * out_stride + dest, out_idx, mask=w)
        n_gt += tl.sum(g32, axis=0).to(tl.int64)
        n_eq += tl.sum(e32, axis=0).to(tl.int64)
        start += BLOCK


# ----------------------------------------------------------------------------------------------
# Policy
# ----------------------------------------------------------------------------------------------

policy.register(
    "topk",
    space={"TILE_ITEMS": [1024, 2048, 4096], "ROW_MAX_BLOCK": [1024, 2048, 4096],
           "CHUNK": [2048, 4096, 8192], "CAND_K_MAX": [0, 8, 16, 32, 64, 128, 256], "RS_BLOCK": [2048, 4096],
           "RS_TILES": [1, 4, 8], "NETWORK": ["own", "tl"], "FILTER": [0, 1], "FILTER_CHUNK": [2048, 4096, 8192, 16384],
           "FILTER_MAXNREG": [0, 64, 80], "CAND_MAX_LEN": [1 << 22, 1 << 31], "num_warps": [4, 8, 16],
           "num_stages": [1]},
    fallback={"TILE_ITEMS": 2048, "ROW_MAX_BLOCK": 4096, "CHUNK": 4096, "CAND_K_MAX": 32,
              "RS_BLOCK": 4096, "RS_TILES": 4, "NETWORK": "own", "FILTER": 0, "FILTER_CHUNK": 8192,
              "FILTER_MAXNREG": 0, "CAND_MAX_LEN": 1 << 31, "num_warps": 4, "num_stages": 1},
    buckets=("rows", "long"),
    bucket_fallbacks={"long": {"num_warps": 8}},
    # (values a file may hold beyond the space, within what the kernels take: tiles are powers of two)
    valid=lambda c: (all(is_pow2(c[k]) and 16 <= c[k] <= 1 << 16
                         for k in ("TILE_ITEMS", "ROW_MAX_BLOCK", "CHUNK", "RS_BLOCK", "FILTER_CHUNK"))
                     and (c["CAND_K_MAX"] == 0 or is_pow2(c["CAND_K_MAX"])) and c["RS_TILES"] >= 1
                     and c["FILTER"] in (0, 1) and c["FILTER_MAXNREG"] in (0,) + tuple(range(24, 256, 8))
                     and c["CAND_MAX_LEN"] >= 1),
    doc="Top-k. 'rows': rows of at most ROW_MAX_BLOCK items, TILE_ITEMS per program (ROWS = "
        "TILE_ITEMS // BLOCK rows). 'long': CHUNK items per program of the running k-best for "
        "next_pow2(k) <= CAND_K_MAX, rows of at most CAND_MAX_LEN items and keys of <= 32 bits (FILTER 1: its rounds keep the words above a "
        "threshold from group maxima, FILTER_CHUNK items per program, FILTER_MAXNREG registers per thread at "
        "most (0: no cap); a chunk is raised to 8 items per group, 32 next_pow2(k), where FILTER_CHUNK is less; FILTER 0, "
        "or 2 next_pow2(k) >= CHUNK: the bitonic top-k of CHUNK items, which also takes the last round); otherwise radix select "
        "with RS_BLOCK * RS_TILES items per program of the histogram passes.")


# ----------------------------------------------------------------------------------------------
# Launchers
# ----------------------------------------------------------------------------------------------

def _tl_sort(pol, k2: int) -> bool:
    """Whether a top-k network is ``tl.topk`` (policy ``NETWORK="tl"``); never for the top 1, which
    ``tl.topk`` of a single row reduces to a scalar it cannot reshape (``bitonic_topk`` takes the row
    maximum instead)."""
    return pol["NETWORK"] == "tl" and k2 > 1


def _tile_topk(kb, out_vb, out_idx, k, *, block, num_rows, meta, ascending, device, uniform=False,
               row_len=0, row_stride=0, seg_begin=None, seg_len=None, seg_list=None, idx_abs=False, pol=None):
    if num_rows == 0:
        return
    pol = pol or policy.select("topk", device, "rows")
    # (a row shorter than k gives all its items: the tile keeps at most its own BLOCK, however large k is)
    k2 = next_power_of_2(min(k, block))
    rows = max(1, min(256, pol["TILE_ITEMS"] // block))
    log_n = _log2(block)
    d = kb
    launch(_topk_tile_kernel, (cdiv(num_rows, rows),),
           kb, out_vb, out_idx, seg_begin if seg_begin is not None else d, seg_len if seg_len is not None else d,
           seg_list if seg_list is not None else d, num_rows, row_len, row_stride, k, k,
           BLOCK=block, ROWS=rows, K2=k2, K_LOG=_log2(k2), LOG_N=log_n, N_DIMS=log_n + _log2(rows),
           PACK=pack_mode(meta["KEY_BITS"], log_n), TL_SORT=_tl_sort(pol, k2),
           UNIFORM=uniform, HAS_LIST=seg_list is not None,
           IDX_ABS=idx_abs, ASCENDING=ascending, **meta, num_warps=pol.num_warps, num_stages=pol.num_stages)


_TILE_TOPK = _tile_topk   # (see _replayable)


def _ck(chunk):
    return dict(CHUNK=chunk, LOG_CHUNK=_log2(chunk))


#: the filter round (_topk_filter_kernel) of the running k-best: strided groups per chunk and kept candidate
#: slots per chunk, in units of next_pow2(k) (module constants so tests can force the bitonic fallback).
#: A simulation over uniform random chunks of 4096-16384 items gave 1.07 K2 words >= the threshold on
#: average and at most 1.6 K2 (K2 = 8, 32, 128), so 2 K2 slots almost never fall back
_FILTER_GROUPS_PER_K, _FILTER_CAP_PER_K = 4, 2
#: items per warp of the filter round (its warps: its chunk // this, at most 16; 16 packed words per thread:
#: sm_90 builds of 8192 items then take 123 registers and no local memory, 1024 per warp took 192 and 256 spilled;
#: 16384 items on 32 warps are capped at 64 registers and spill heavily, on 16 warps only a few bytes)
_FILTER_ITEMS_PER_WARP, _FILTER_MAX_WARPS = 512, 16
#: filter rounds over the keys take their threshold on the 32-bit ordered keys first (``KEY_THRESHOLD``)
_FILTER_KEY_THRESHOLD = True
#: the fewest items per group of a filter round (a power of two): its chunk is at least this many times its
#: groups (FILTER_CHUNK is raised to it for large k). The maxima of fewer items set a threshold that admits
#: more words, and the rounds then shrink the candidates less. H200, top-100 of 64 x 128256 fp32: chunks of
#: 2048 (4 items per group) 92.6 us, 4096 (8) 70.3 us; top-50 of 64 x 128256 bf16 (256 groups): 2048 (8)
#: 52.4 us against 4096 (16) 56.7 (bench/results/logs/topk_filter_k_probe-*-h200-20261130.log; one case
#: went the other way: 256 x 32000 top-128, 79.5 us at 4 items against 84.9 at 8). Tests lower it to 2 to
#: cover several programs and rounds per row at small sizes
_FILTER_MIN_GROUP_ITEMS = 8
#: the largest filter chunk (the policy's limit): a raised chunk past it takes the bitonic rounds
_FILTER_MAX_CHUNK = 1 << 16


#: remembered launch sequences of the long-row paths (see _plan_key)
_PLANS: dict = {}


def _plan_key(kb, out_vb, out_idx, k, row_begin, row_len, max_len, meta, ascending, idx_abs, device) -> tuple:
    """What fixes the launches of a long-row path (with its module constants and policy): sizes, key
    type (``KEY_DTYPE``: the bits views of float32, int32 and uint32 keys are all int32), direction,
    the 16-byte alignment of every tensor passed in, and the most rows one launch takes (the rows'
    batches: how many launches, their grids and the sizes of their scratch)."""
    return (device, kb.dtype, meta["KEY_BITS"], str(meta["KEY_DTYPE"]), k, max_len, row_begin.numel(), ascending,
            idx_abs, _utils_module.MAX_GRID_Y,
            tuple(t.data_ptr() & 15 for t in (kb, row_begin, row_len, out_vb, out_idx)))


def _candidates_ok(meta, k, max_len, lpol) -> bool:
    """Whether the running k-best takes rows of up to ``max_len`` keys: keys of at most 32 bits, columns
    that fit the packed word, ``next_pow2(k) <= CAND_K_MAX``, rows of at most ``CAND_MAX_LEN`` keys
    (the radix select gains on very long rows), and at most half a ``CHUNK`` kept per chunk (every
    round must shrink the candidates)."""
    k2 = next_power_of_2(k)
    return (meta["KEY_BITS"] <= 32 and max_len < _IDX32_INT and k2 <= lpol["CAND_K_MAX"]
            and max_len <= lpol["CAND_MAX_LEN"] and 2 * k2 <= lpol["CHUNK"])


def _chunk_topk(kb, out_vb, out_idx, k, *, row_begin, row_len, max_len, meta, ascending, device,
                idx_abs=False, scratch: list | None = None):
    """Running k-best over chunks (keys of <= 32 bits, rows longer than a tile): rounds that each keep
    a few candidate words per chunk of the row (or of the previous round's candidates) until one
    ``CHUNK`` of them remains, whose top k are the result. A round is the filter
    (:func:`_topk_filter_kernel`, ``FILTER_CHUNK`` items per program) when the policy's ``FILTER`` is
    on (its chunk raised to ``_FILTER_MIN_GROUP_ITEMS`` items per group where ``FILTER_CHUNK`` is less) and its
    kept candidates (2 next_pow2(k) a chunk) are fewer than ``CHUNK`` and than its chunk (so every round
    shrinks them) and the chunk is at most ``_FILTER_MAX_CHUNK``; else the bitonic top-k of ``CHUNK`` items
    (:func:`_topk_chunk_kernel`). ``scratch``: a list that gets ``(buffer, zeroed)`` for every
    buffer allocated here, in order, while the launches go through :func:`launch` (for a caller
    recording them)."""
    pol = policy.select("topk", device, "long")
    chunk, k2 = pol["CHUNK"], next_power_of_2(k)
    groups, cap = _FILTER_GROUPS_PER_K * k2, _FILTER_CAP_PER_K * k2
    fchunk = max(pol["FILTER_CHUNK"], max(2, _FILTER_MIN_GROUP_ITEMS) * groups)
    use_filter = bool(pol["FILTER"]) and cap < chunk and cap < fchunk <= _FILTER_MAX_CHUNK
    nrows = row_begin.numel()
    common = dict(K2=k2, K_LOG=_log2(k2), KEY_BITS=meta["KEY_BITS"], KEY_DTYPE=meta["KEY_DTYPE"],
                  ASCENDING=ascending)
    bitonic = dict(TL_SORT=_tl_sort(pol, k2), IDX_ABS=idx_abs, **common, num_warps=pol.num_warps,
                   num_stages=pol.num_stages)
    run = LaunchPlan(_PLANS, None if scratch is not None else (
        "running k-best", _plan_key(kb, out_vb, out_idx, k, row_begin, row_len, max_len, meta, ascending, idx_abs,
                                    device),
        _FILTER_GROUPS_PER_K, _FILTER_CAP_PER_K, _FILTER_ITEMS_PER_WARP, _FILTER_MAX_WARPS, _FILTER_KEY_THRESHOLD,
        _FILTER_MIN_GROUP_ITEMS, _FILTER_MAX_CHUNK),
        tag=pol)
    for r0, r1 in grid_y_batches(nrows):
        rb, rl = row_begin[r0:r1], row_len[r0:r1]
        ov, oi = out_vb[r0:r1], out_idx[r0:r1]
        src, n_in, from_keys = kb, max_len, True
        while n_in > chunk:
            if use_filter:
                nchunks, per_chunk = cdiv(n_in, fchunk), cap
                nxt = torch.empty((r1 - r0, nchunks * per_chunk), dtype=torch.int64, device=device)
                if scratch is not None:
                    scratch.append((nxt, False))
                run(_topk_filter_kernel, (nchunks, r1 - r0), kb, src, nxt, rb, rl, n_in, **_ck(fchunk),
                    GROUPS=groups, LOG_GROUPS=_log2(groups), CAP=cap, FROM_KEYS=from_keys,
                    KEY_THRESHOLD=_FILTER_KEY_THRESHOLD, **common,
                    num_warps=min(_FILTER_MAX_WARPS, max(1, fchunk // _FILTER_ITEMS_PER_WARP)), num_stages=1,
                    **maxnreg_kwargs(pol["FILTER_MAXNREG"]))
            else:
                nchunks, per_chunk = cdiv(n_in, chunk), k2
                nxt = torch.empty((r1 - r0, nchunks * per_chunk), dtype=torch.int64, device=device)
                if scratch is not None:
                    scratch.append((nxt, False))
                run(_topk_chunk_kernel, (nchunks, r1 - r0), kb, src, nxt, ov, oi, rb, rl, n_in, k, k,
                    **_ck(chunk), FROM_KEYS=from_keys, FINAL=False, **bitonic)
            src, n_in, from_keys = nxt, nchunks * per_chunk, False
        final = chunk if from_keys else next_power_of_2(n_in)
        run(_topk_chunk_kernel, (1, r1 - r0), kb, src, src, ov, oi, rb, rl, n_in, k, k, **_ck(final),
            FROM_KEYS=from_keys, FINAL=True, **bitonic)
    run.done()


_CHUNK_TOPK = _chunk_topk   # (see _replayable)


_RS_SMEM_WARPS = 8   # warps per program of the shared-memory histogram passes
#: candidates per row kept for the one-program finish (_rs_finish_kernel; a module constant so tests can
#: lower it and cover the overflow path), and its tile
_RS_FINISH_CAP, _RS_FINISH_BLOCK = 1 << 16, 2048
#: tile, warps and programs per SM of the compaction over every key: one-warp programs, whose per-tile
#: reductions need no block barrier (H100, topk 2^26 fp32 k=10000: 286 -> 146 us against 2048 items on
#: 8 warps, 8 programs per SM; bench/probes/topk_compact_probe.py)
_RS_COMPACT_BLOCK, _RS_COMPACT_WARPS, _RS_COMPACT_PER_SM = 512, 1, 32


def _rs_programs(length: int, block: int, rows: int, device, per_sm: int = 8) -> int:
    """Programs per row of a compaction pass: one per tile, at most about ``per_sm`` per SM over all
    rows (each loops over its row's tiles)."""
    return max(1, min(cdiv(length, block), cdiv(num_sms(device) * per_sm, rows)))


#: count the overflowed rows' remaining digits with the shared-memory histogram where the first
#: passes use it (True), not ``tl.histogram`` (kept for GPUs without the shared-memory atomics; False
#: here takes it everywhere, which is how test_gpu_topk_overflow_smem_histogram checks both on one GPU).
#: Measured on the H200, topk(1 x 2^26 fp32, k=10000): keys in [0, 1) 3.20 -> 0.97 ms, integer keys
#: 0..999 3.33 -> 1.10 ms (torch.topk 1.37-1.43 ms; bench/results/logs/topk_overflow_smem_hist-h200-20261130.log)
_RS_OVERFLOW_SMEM_HIST = True

#: compaction programs skip ahead once their row's equal keys are done (``SKIP_DONE``): the first
#: compaction's programs stop when they see the row's candidates overflow (the row is redone from the
#: keys), and later tiles exit unless they hold keys above the prefix. In an overflowed row nearly
#: every tile holds keys at the prefix (keys in [0, 1): ~2 of 512, ~13 % of tiles none), so each of its
#: two compactions took ~175 us over 2^26 keys on the H200. Measured there (GPU time, off -> on),
#: topk(1 x 2^26 fp32, k=10000): integer keys 0..999 0.864 -> 0.699 ms, keys in [0, 1) 0.844 -> 0.714 ms;
#: 16 x 2^20, k=1000: keys in [0, 1) 0.213 -> 0.200 ms, normal keys 0.187 -> 0.173 ms
#: (bench/results/logs/topk_skip_when_done-h200-20261130.log). False: every tile walked (the tests
#: check both)
_RS_SKIP_WHEN_DONE = True


def _radix_select(kb, out_vb, out_idx, k, *, row_begin, row_len, max_len, meta, ascending, device,
                  idx_abs=False, scratch: list | None = None):
    """Radix select of the k largest ordered keys of each row (unsorted output). ``scratch``: a list
    that gets ``(buffer, zeroed)`` for every buffer allocated here, in order, while the launches go
    through :func:`launch` (for a caller recording them)."""
    pol = policy.select("topk", device, "long")
    block, tiles = pol["RS_BLOCK"], pol["RS_TILES"]
    nbits = meta["KEY_BITS"]
    common = dict(KEY_BITS=nbits, KEY_DTYPE=meta["KEY_DTYPE"], ASCENDING=ascending,
                  num_warps=pol.num_warps, num_stages=pol.num_stages)
    # every launch below is fixed by these (sizes, key type, direction, argument alignments): a
    # repeated call re-launches the remembered kernels (it is host-bound otherwise: about a dozen
    # launches around a few hundred microseconds of GPU work)
    run = LaunchPlan(_PLANS, None if scratch is not None else (
        "radix select", _plan_key(kb, out_vb, out_idx, k, row_begin, row_len, max_len, meta, ascending, idx_abs,
                                  device),
        _RS_FINISH_CAP, _RS_FINISH_BLOCK, _RS_SMEM_WARPS, _RS_COMPACT_BLOCK, _RS_COMPACT_WARPS, _RS_COMPACT_PER_SM,
        _RS_OVERFLOW_SMEM_HIST, _RS_SKIP_WHEN_DONE),
        tag=pol)
    for r0, r1 in grid_y_batches(row_begin.numel()):
        nr = r1 - r0
        rb, rl = row_begin[r0:r1], row_len[r0:r1]
        ov, oi = out_vb[r0:r1], out_idx[r0:r1]
        # the rows' state and histograms in one zeroed buffer (one allocation and fill, not seven);
        # the remaining k is set by the first resolve step
        state = torch.zeros(262 * nr, dtype=torch.int64, device=device)
        if scratch is not None:
            scratch.append((state, True))
        prefix, bucket, out_cnt, tie_cnt, cand_cnt, krem = (state[i * nr:(i + 1) * nr] for i in range(6))
        hist = state[6 * nr:].view(nr, 256)   # (int64 counts: a row may hold 2^31 keys of one digit)
        shift = nbits - 8
        smem = smem_atomics_ok(device)
        # the compaction over every key: small one-warp programs, many resident (it is latency-bound),
        # where the policy's histogram block is large
        fblock = min(block, _RS_COMPACT_BLOCK) if smem else block
        fcommon = {**common, "num_warps": _RS_COMPACT_WARPS} if smem else common
        fper_sm = _RS_COMPACT_PER_SM if smem else 8
        # digits counted over every key before the candidates are compacted: with the shared-memory
        # histogram a second full pass costs one read of the keys and leaves few candidates
        full_passes = 2 if smem else 1
        items = max(1, 16 // kb.element_size())
        per_row = max(1, min(cdiv(max_len, _RS_SMEM_WARPS * 32 * items), cdiv(num_sms(device) * 8, nr)))
        smem_hist = dict(KEY_BITS=nbits, KEY_DTYPE=meta["KEY_DTYPE"], ASCENDING=ascending, WARPS=_RS_SMEM_WARPS,
                         ITEMS=items, num_warps=_RS_SMEM_WARPS)
        for p in range(full_passes):
            if smem:
                run(_rs_hist_smem_kernel, (per_row, nr), kb, rb, rl, rl, prefix, hist, 0, SHIFT=shift, **smem_hist)
            else:
                run(_rs_hist_kernel, (cdiv(max_len, block * tiles), nr),
                    kb, kb, rb, rl, rl, prefix, hist, 0, BLOCK=block, TILES=tiles, SHIFT=shift, FROM_KEYS=True,
                    **common)
            run(_rs_resolve_kernel, (nr,), hist, prefix, krem, bucket, k, bucket, 0, bucket, bucket, SHIFT=shift,
                FIRST=p == 0)
            if shift == 0 or p == full_passes - 1:
                break
            shift -= 8
        if shift == 0:
            run(_rs_compact_kernel, (_rs_programs(max_len, fblock, nr, device, fper_sm), nr),
                kb, kb, kb, kb, kb, rb, rl, rl, rl, prefix, krem, out_cnt, tie_cnt, ov, oi, 0, 0, k, k,
                BLOCK=fblock, SHIFT=0, FROM_KEYS=True, FINAL=True, IDX_ABS=idx_abs, SKIP_DONE=_RS_SKIP_WHEN_DONE,
                **fcommon)
            continue
        # no host read-back: the candidate buffers hold up to _RS_FINISH_CAP keys per row, the usual
        # case (the keys in the k-th key's bucket of the digits so far); a row with more finishes
        # from the keys below, in kernels every other row leaves at once
        cap = max(1, min(max_len, _RS_FINISH_CAP))
        ckey = torch.empty((nr, cap), dtype=torch.int64, device=device)
        cidx = torch.empty((nr, cap), dtype=torch.int64, device=device)
        if scratch is not None:
            scratch += [(ckey, False), (cidx, False)]
        run(_rs_compact_kernel, (_rs_programs(max_len, fblock, nr, device, fper_sm), nr),
            kb, kb, kb, ckey, cidx, rb, rl, rl, cand_cnt, prefix, krem, out_cnt, tie_cnt, ov, oi, 0, cap, k, k,
            BLOCK=fblock, SHIFT=shift, FROM_KEYS=True, FINAL=False, IDX_ABS=idx_abs, SKIP_DONE=_RS_SKIP_WHEN_DONE,
            **fcommon)
        # the remaining digits and the last compaction over the candidates, in one launch
        run(_rs_finish_kernel, (nr,), kb, ckey, cidx, rb, cand_cnt, prefix, krem, out_cnt, ov, oi, cap, k, k,
            SHIFT=shift, BLOCK=min(_RS_FINISH_BLOCK, max(256, next_power_of_2(cap))), IDX_ABS=idx_abs,
            num_warps=8)
        if max_len <= cap:   # no row can have more candidates than keys
            continue
        # overflowed rows: the remaining digits counted over the keys, then the whole output again
        first = True
        while shift > 0:
            shift -= 8
            # (tl.histogram took 1.2 ms a pass over 2^26 fp32 keys on the H200, 11x the shared-memory
            # pass; a row of keys in [0, 1) overflows: see _RS_OVERFLOW_SMEM_HIST)
            if smem and _RS_OVERFLOW_SMEM_HIST:
                run(_rs_hist_smem_kernel, (per_row, nr), kb, rb, rl, cand_cnt, prefix, hist, cap, SHIFT=shift,
                    ONLY_OVERFLOW=True, **smem_hist)
            else:
                run(_rs_hist_kernel, (cdiv(max_len, block * tiles), nr),
                    kb, kb, rb, rl, cand_cnt, prefix, hist, cap, BLOCK=block, TILES=tiles, SHIFT=shift,
                    FROM_KEYS=True, ONLY_OVERFLOW=True, **common)
            run(_rs_resolve_kernel, (nr,), hist, prefix, krem, bucket, k, cand_cnt, cap, out_cnt, tie_cnt,
                SHIFT=shift, FIRST=False, ONLY_OVERFLOW=True, RESET_OUT=first)
            first = False
        run(_rs_compact_kernel, (_rs_programs(max_len, fblock, nr, device, fper_sm), nr),
            kb, kb, kb, kb, kb, rb, rl, cand_cnt, rl, prefix, krem, out_cnt, tie_cnt, ov, oi, cap, 0, k, k,
            BLOCK=fblock, SHIFT=0, FROM_KEYS=True, FINAL=True, IDX_ABS=idx_abs, ONLY_OVERFLOW=True,
            SKIP_DONE=_RS_SKIP_WHEN_DONE, **fcommon)
    run.done()


#: begin offsets and lengths of uniform rows, per (rows, length, device, stream); read-only once made
_ROW_TABLES: dict = {}


def _uniform_rows(rows: int, length: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Begin offsets and lengths (int64 device tensors, never written by the kernels) of ``rows`` rows
    of ``length`` items: kept per size (:func:`cached_persistent`), so a repeated call queues no
    kernels to make them."""
    def make():
        return (torch.arange(rows, device=device, dtype=torch.int64) * length,
                torch.full((rows,), length, device=device, dtype=torch.int64))

    if device.type != "cuda":
        return make()
    return cached_persistent(_ROW_TABLES, (rows, length, device), device, make, limit=64)


#: replays of the tile path's launch and of the long-row paths' launches, per problem (see
#: :func:`_topk_rows`)
_TILE_REPLAYS: dict = {}
_LONG_REPLAYS: dict = {}
#: long-row problems whose launches could not be recorded (e.g. a sort by the merge path, outside the
#: recording's view), with the policies that chose the path (see :func:`_path_tags`)
_LONG_UNRECORDED: dict = {}


def _replayable(x: torch.Tensor) -> bool:
    """Whether top-ks of ``x`` may be remembered and replayed (:func:`tritoncub._launch.replays_ok`)."""
    return replays_ok(x, (launch, _launch_module.launch), (_tile_topk, _TILE_TOPK), (_chunk_topk, _CHUNK_TOPK),
                      (_radix_select, _RADIX_SELECT), (_sort_selected, _SORT_SELECTED),
                      (radix_sort_pairs_recorded, _RADIX_SORT_PAIRS_RECORDED))


def _remember(cache: dict, key, value) -> None:
    """``cache[key] = value``, the cache emptied first when it holds 64 problems."""
    if len(cache) >= 64:
        cache.clear()
    cache[key] = value


def _check_k(k, size):
    if isinstance(k, bool) or not isinstance(k, int):   # (the Python entry points pass as_int(k))
        raise InputTypeError(f"k must be an int, got {type(k).__name__}")
    if k < 0:
        raise InputValueError(f"k must be non-negative, got {k}")
    if k > size:
        raise InputValueError(f"selected index k={k} out of range: the dimension has {size} items")


def _path_tags(k: int, device) -> tuple:
    """The policies a long-row top-k's choice of path consults: the 'long' bucket's (running k-best
    or radix select), the segmented sort's 'large' bucket and the device radix sort's for k keys
    (how the result is sorted: :func:`_sort_selected`)."""
    return (policy.select("topk", device, "long"), policy.select("segmented_sort", device, "large"),
            policy.select("radix_sort", device, _radix_bucket(k)))


def _long_tags(lpol, k: int, device, sort_path: str | None) -> tuple:
    """The policies a long-row top-k's launches were made under: the 'long' bucket's and, when the
    result is sorted, the two its sort consults (see :func:`_sort_selected`): the segmented sort's
    'large' bucket (which picks the path), then the tile sort's bucket or the device radix sort's."""
    if sort_path is None:
        return (lpol,)
    large = policy.select("segmented_sort", device, "large")
    if sort_path == "radix":
        return (lpol, large, policy.select("radix_sort", device, _radix_bucket(k)))
    return (lpol, large, policy.select("segmented_sort", device, _seg_bucket(max(MIN_BLOCK, next_power_of_2(k)))))


def _topk_rows(xc: torch.Tensor, k: int, largest: bool, sorted: bool):
    """Top-k of every row of a contiguous 2-D tensor; returns (values [rows, k], indices [rows, k])."""
    rows, L = xc.shape
    device = xc.device
    values = torch.empty((rows, k), dtype=xc.dtype, device=device)
    indices = torch.empty((rows, k), dtype=torch.int64, device=device)
    if rows == 0 or k == 0:
        return values, indices
    pol = policy.select("topk", device, "rows")
    if (L <= pol["ROW_MAX_BLOCK"] and xc.dtype.itemsize == 8 and _WIDE_ROWS_BY_SORT
            and block_radix_sorts_rows(L, 64, device)):
        # (the tile path sorts 64-bit rows whole in registers, as (key, index) pairs: the block radix sort
        # of the rows, then the first k, is faster)
        if _WIDE_ROWS_FIRST_K and _first_k_rows(xc, k, largest, values, indices):
            return values, indices
        return _stable_topk_rows(xc, k, largest, max_keys=_BY_SORT_MAX_KEYS)
    if (L > pol["ROW_MAX_BLOCK"] and torch.are_deterministic_algorithms_enabled()
            and not _candidates_ok(key_meta(xc.dtype), k, L, policy.select("topk", device, "long"))):
        return _stable_topk_rows(xc, k, largest)
    replay_key = None
    if _replayable(xc) and not recording_launches():   # (a caller's recording would miss a replay)
        replay_key = (rows, L, k, xc.dtype, largest, sorted, device, xc.data_ptr() & 15 == 0)
        if L > pol["ROW_MAX_BLOCK"]:   # (the module constants the long-row launches are planned with)
            replay_key += (_FILTER_GROUPS_PER_K, _FILTER_CAP_PER_K, _FILTER_ITEMS_PER_WARP, _FILTER_MAX_WARPS,
                           _FILTER_KEY_THRESHOLD, _FILTER_MIN_GROUP_ITEMS, _FILTER_MAX_CHUNK,
                           _RS_FINISH_CAP, _RS_FINISH_BLOCK, _RS_SMEM_WARPS,
                           _RS_COMPACT_BLOCK, _RS_COMPACT_WARPS, _RS_COMPACT_PER_SM, _RS_OVERFLOW_SMEM_HIST,
                           _RS_SKIP_WHEN_DONE,
                           _RADIX_SORT_SELECTED,
                           _segmented_sort_module.ROW_MASKS_ONLY, _segmented_sort_module.WIDE_KEYS_BLOCK_RADIX,
                           radix_replay_key_parts())
            # (not remembered: more rows than one launch's grid takes, whose batches' scratch would all
            # stay allocated at once, and problems whose launches could not be recorded before: they
            # keep the radix select's own remembered plan)
            if rows > _utils_module.MAX_GRID_Y:
                replay_key = None
            else:
                tags = _LONG_UNRECORDED.get(replay_key)
                if tags is not None and all(a is b for a, b in zip(tags, _path_tags(k, device))):
                    replay_key = None
    if L <= pol["ROW_MAX_BLOCK"] and replay_key is not None:
        # rows of one tile: one launch, remembered per problem and replayed on this call's buffers
        # (most of such a call's time is host work otherwise)
        hit = _TILE_REPLAYS.get(replay_key)
        if hit is not None and hit[0] is pol:
            replay(hit[1], (xc.data_ptr(), values.data_ptr(), indices.data_ptr()))
            return values, indices
    elif replay_key is not None:
        # longer rows: the launches of the running k-best, or of the radix select and the sort of its
        # result (the tile sort, or the device radix sort of one row), remembered per problem with the
        # shapes and dtypes of their scratch buffers (and whether each starts zeroed), replayed on this
        # call's buffers and fresh scratch (the host work of planning them took longer than the GPU
        # work of rows of 2^20 keys). ``hit``: (policies, launches, scratch, sort path, where the
        # result is: None for values and indices, else the scratch buffers that hold it, or
        # ``(-1, -1)``: two fresh buffers after the scratch)
        hit = _LONG_REPLAYS.get(replay_key)
        if hit is not None:
            tags = _long_tags(policy.select("topk", device, "long"), k, device, hit[3])
            if len(tags) == len(hit[0]) and all(a is b for a, b in zip(tags, hit[0])):
                row_begin, row_len = _uniform_rows(rows, L, device)
                bufs = [(torch.zeros if zeroed else torch.empty)(shape, dtype=dtype, device=device)
                        for shape, dtype, zeroed in hit[2]]
                outs = (torch.empty_like(values), torch.empty_like(indices)) if hit[4] == (-1, -1) else ()
                replay(hit[1], (xc.data_ptr(), values.data_ptr(), indices.data_ptr(), row_begin.data_ptr(),
                                row_len.data_ptr(), *(b.data_ptr() for b in bufs), *(t.data_ptr() for t in outs)))
                if hit[4] is None:
                    return values, indices
                return outs or (bufs[hit[4][0]].view(rows, k), bufs[hit[4][1]].view(rows, k))
    check_device(xc, "x")
    meta = key_meta(xc.dtype)
    kb, ovb = bits_view(xc), bits_view(values)
    asc = not largest
    if L <= pol["ROW_MAX_BLOCK"]:
        with record_launches() if replay_key is not None else contextlib.nullcontext([]) as rec:
            _tile_topk(kb, ovb, indices, k, block=next_power_of_2(max(L, 2)), num_rows=rows, meta=meta,
                       ascending=asc, device=device, uniform=True, row_len=L, row_stride=L, pol=pol)
        launches = relocatable(rec, (xc, values, indices)) if replay_key is not None else None
        if launches is not None:
            _remember(_TILE_REPLAYS, replay_key, (pol, launches))
        return values, indices
    row_begin, row_len = _uniform_rows(rows, L, device)
    lpol = policy.select("topk", device, "long")
    # (recorded for a later call of the same problem: see the replay above; while recording, every
    # launch goes through launch(), which the recording sees, and every round's scratch stays
    # allocated until the call returns, on a replay too: a little more memory at the peak than
    # freeing each round's input as the next is made)
    scratch = [] if replay_key is not None else None
    sort_path: list = []
    sort_scratch: list = []
    out = (values, indices)
    with record_launches() if replay_key is not None else contextlib.nullcontext([]) as rec:
        if _candidates_ok(meta, k, L, lpol):
            _chunk_topk(kb.view(-1), ovb, indices, k, row_begin=row_begin, row_len=row_len, max_len=L, meta=meta,
                        ascending=asc, device=device, scratch=scratch)
            sorted_after = False
        else:
            _radix_select(kb.view(-1), ovb, indices, k, row_begin=row_begin, row_len=row_len, max_len=L, meta=meta,
                          ascending=asc, device=device, scratch=scratch)
            sorted_after = sorted
            if sorted:
                out = _sort_selected(values, indices, largest, path=sort_path, scratch=sort_scratch)
    if replay_key is not None:
        # (the merge path's launches are not all recorded: not remembered)
        launches = where = None
        path = sort_path[0] if sorted_after else None
        if path in (None, "tile"):
            where = None if path is None else (-1, -1)
            launches = relocatable(rec, (xc, values, indices, row_begin, row_len, *(b for b, _ in scratch),
                                         *(out if sorted_after else ())))
        elif path == "radix":
            # (the result lies in two of the sort's buffers, which are roots already)
            scratch += sort_scratch
            ptrs = [b.data_ptr() for b, _ in scratch]
            if out[0].data_ptr() in ptrs and out[1].data_ptr() in ptrs:
                where = (ptrs.index(out[0].data_ptr()), ptrs.index(out[1].data_ptr()))
                launches = relocatable(rec, (xc, values, indices, row_begin, row_len, *(b for b, _ in scratch)))
        if launches is None:
            _remember(_LONG_UNRECORDED, replay_key, _path_tags(k, device))
        else:
            _remember(_LONG_REPLAYS, replay_key, (_long_tags(lpol, k, device, path), launches,
                                                  tuple((tuple(b.shape), b.dtype, zeroed) for b, zeroed in scratch),
                                                  path, where))
    return out


_RADIX_SELECT = _radix_select   # (see _replayable)


def _stable_topk_rows(xc: torch.Tensor, k: int, largest: bool, max_keys: int | None = None):
    """A stable sort of the rows (NaN first when largest, last when smallest, as topk counts it), the
    first ``k`` kept — the same values, and among equal values the lowest indices, every call: the radix
    select's rows under ``torch.use_deterministic_algorithms(True)``, and the 64-bit rows of
    :data:`_WIDE_ROWS_BY_SORT` where :func:`_first_k_rows` does not take them. ``max_keys``: sort at most
    that many keys at once (whole rows, at least one), so the sorted copy and its int64 positions stay a
    bounded scratch."""
    check_device(xc, "x")
    rows, L = xc.shape
    step = rows if max_keys is None else max(1, max_keys // max(L, 1))
    if rows <= step:
        v, i = radix_sort_rows(xc, -1, descending=largest)
        return v[:, :k].contiguous(), i[:, :k].contiguous()
    values = torch.empty((rows, k), dtype=xc.dtype, device=xc.device)
    indices = torch.empty((rows, k), dtype=torch.int64, device=xc.device)
    for r in range(0, rows, step):
        v, i = radix_sort_rows(xc[r:r + step], -1, descending=largest)
        values[r:r + step] = v[:, :k]
        indices[r:r + step] = i[:, :k]
    return values, indices


def _first_k_rows(xc: torch.Tensor, k: int, largest: bool, values: torch.Tensor, indices: torch.Tensor) -> bool:
    """:func:`_stable_topk_rows`' results, into ``values`` and ``indices`` (``[rows, k]``), for rows that the
    block radix sort takes, from its first-k variant (``segmented_sort.block_radix_first_k``, the rows listed
    as segments: begin offsets, lengths and the identity list from the cached tables of :func:`_uniform_rows`):
    one sort launch that writes only the first k of each row, no scratch, then a subtraction that turns its
    positions into columns. False, having launched nothing, where that kernel does not take the rows (the
    caller sorts them whole)."""
    check_device(xc, "x")
    rows, L = xc.shape
    device = xc.device
    begin, length = _uniform_rows(rows, L, device)
    if not block_radix_first_k(bits_view(xc).view(-1), bits_view(values), indices, k,
                               block=max(MIN_BLOCK, next_power_of_2(L)), num_segs=rows, seg_begin=begin,
                               seg_len=length, seg_list=_uniform_rows(rows, 1, device)[0], descending=largest,
                               meta=key_meta(xc.dtype), device=device):
        return False
    indices -= begin[:, None]   # (positions in the flat input: columns)
    return True


#: sort one long row of selected items by the device radix sort (False: the merge path; a module
#: constant so tests and probes can compare the two)
_RADIX_SORT_SELECTED = True

#: rows of 64-bit keys of at most the "rows" policy's ``ROW_MAX_BLOCK`` that the shared-memory block radix
#: sort takes (``segmented_sort.block_radix_sorts_rows``: compiled NVIDIA kernels, rows of 129 keys and more
#: under the shipped policies, whose ``RADIX_MIN_BLOCK`` is 256) are sorted by it and the first k kept
#: (:data:`_WIDE_ROWS_FIRST_K`; else, or where that kernel refuses, sorted whole at most :data:`_BY_SORT_MAX_KEYS`
#: keys at once), instead of the tile path, whose register sort of (key, index) pairs spills in its 4 warps.
#: On an H200, int64, GPU time of the whole-row sort: (4096, 1000) k=16 126 us
#: against the tile path's 622 (torch 239), (1024, 4096) k=512 145 against 1158 (torch 194), k=8 141 against
#: 1167 (torch 134), (16384, 300) k=8 194 against 1207 (torch 206), (65536, 200) k=50 489 against 1774 (torch
#: 1345) (bench/results/logs/topk64_rows_probe-cut-h200-20261202e.log). A module constant so probes can
#: compare the two
_WIDE_ROWS_BY_SORT = True
#: keys that one whole-row sort of :data:`_WIDE_ROWS_BY_SORT` takes: its sorted copy of the rows and their int64
#: positions, 16 bytes a key, stay a scratch of at most 256 MB however large the input
_BY_SORT_MAX_KEYS = 1 << 24
#: those rows through the block radix sort's first-k variant (:func:`_first_k_rows`: one sort launch writing
#: only the first k of each row, no scratch, then a subtraction) rather than a sort of the whole rows and a copy
#: of their first k. On an H200, int64, do_bench interleaved (us): (4096, 1000) k=16 325 -> 197, (1024, 4096)
#: k=512 380 -> 337, k=8 225 -> 165, (16384, 300) k=8 216 -> 196, (65536, 200) k=50 494 -> 466, (1, 1000) k=1
#: 165 -> 121; GPU time -6..+5% (+39% on (1, 1000), 8.0 -> 11.1 us: that form made its three index tables on
#: every call, now cached) (bench/results/logs/topk64_rows_probe-rows-ab-h200-20261202g.log). A module
#: constant so probes can compare the two
_WIDE_ROWS_FIRST_K = True


def _sort_selected(values: torch.Tensor, indices: torch.Tensor, largest: bool, path: list | None = None,
                   scratch: list | None = None):
    """Sort the rows of a radix select's result by value (stable), the indices carried along: one
    tile sort launch (segmented_sort's tile strategies) when the rows fit a tile; one longer row by
    the device radix sort when it queues without reading back (``_RADIX_SORT_SELECTED``); else the
    merge path (tile-sorted chunks, then merge passes). One program sorting 16384 items took 0.5-1 ms
    (bench/results/logs/topk_sort_selected-*.log). ``path``: a list that gets the path taken
    (``"radix"``, ``"tile"`` or ``"merge"``); ``scratch``: a list that gets ``(buffer, zeroed)`` for
    every buffer the device radix sort allocates, its result's among them (for a caller recording
    the launches: :func:`tritoncub.device.radix_sort.sort_pairs_recorded`)."""
    rows, k = values.shape
    pol = policy.select("segmented_sort", values.device, "large")
    if (_RADIX_SORT_SELECTED and rows == 1 and k > pol["MAX_BLOCK"] and values.dtype in RADIX_KEY_DTYPES
            and not reads_back(k, values.device)):
        # one long row: the device radix sort (its launches remembered per size, so its host work
        # is small), stable, NaN first when largest
        if path is not None:
            path.append("radix")
        v, i = radix_sort_pairs_recorded(values.view(-1), indices.view(-1), largest,
                                         scratch if scratch is not None else [])
        return v.view(1, k), i.view(1, k)
    out_v, out_i = torch.empty_like(values), torch.empty_like(indices)
    meta = key_meta(values.dtype)
    tiled = (k <= _one_program_limit(pol, meta["KEY_BITS"], values.device, None)
             and _launch_tile_sort(bits_view(values), indices, bits_view(out_v), out_i, None,
                                   block=max(MIN_BLOCK, next_power_of_2(k)), num_segs=rows, descending=largest,
                                   meta=meta, device=values.device, uniform=True, row_len=k, row_stride=k))
    if path is not None:
        path.append("tile" if tiled else "merge")
    if not tiled:
        _sort_long(bits_view(values).view(-1), indices.view(-1), bits_view(out_v).view(-1), out_i.view(-1), None,
                   seg_begin_np=np.arange(rows, dtype=np.int64) * k, seg_len_np=np.full(rows, k, dtype=np.int64),
                   descending=largest, meta=meta, device=values.device, merge_tile=pol["MERGE_TILE"])
    return out_v, out_i


_SORT_SELECTED = _sort_selected   # (see _replayable)
_RADIX_SORT_PAIRS_RECORDED = radix_sort_pairs_recorded   # (see _replayable)


def _topk_args(x: torch.Tensor, k: int, dim: int) -> int:
    """topk's argument checks (the operator's fake runs them too); returns ``dim`` wrapped (0 for 0-d)."""
    check_tensor(x, "x", SORT_DTYPES)
    dim = wrap_dim(dim, x.dim())
    if x.dim() == 0:
        _check_k(k, 1)
        return 0
    dim = dim % x.dim()
    _check_k(k, x.shape[dim])
    return dim


def _segmented_topk_args(x: torch.Tensor, offsets: torch.Tensor, k: int) -> None:
    """segmented_topk's checks that need no data (the operator's fake runs them too)."""
    check_tensor(x, "x", SORT_DTYPES, ndim=1)
    check_tensor(offsets, "offsets", (torch.int32, torch.int64), ndim=1)
    check_same_device(("x", x), ("offsets", offsets))
    if isinstance(k, bool) or not isinstance(k, int):
        raise InputTypeError(f"k must be an int, got {type(k).__name__}")
    if k < 0:
        raise InputValueError(f"k must be non-negative, got {k}")
    if offsets.numel() == 0:
        raise InputValueError("offsets must hold num_segments + 1 items (at least one)")


def topk(x: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """``torch.topk``: the ``k`` largest (or smallest) items of ``x`` along ``dim``: ``(values, indices)``.

    Values equal ``torch.topk``'s when ``sorted=True`` (NaN counts as the largest value, as in torch);
    with ``sorted=False`` the same set of values is returned in an unspecified order. Indices (int64)
    point at items holding the returned values; tie rule in the module docstring. ``k`` in
    ``[0, size]``, else ``ValueError``.

    On a GPU, the launches of a problem (rows, length, k, dtype, direction, sorted, device, input
    alignment, policies) are remembered and a later call replays them on its own buffers and fresh
    scratch, skipping the host work of planning them; not replayed whole: a sorted result that the
    device radix sort sorts (one long row, large k), and more than 65535 long rows.
    """
    k = as_int(k, "k")
    dim = _topk_args(x, k, dim)
    check_flag(largest, "largest")
    check_flag(sorted, "sorted")
    if x.dim() == 0:
        # (torch returns the item and index 0 for k = 0 as well as for k = 1)
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    if dim == x.dim() - 1 and x.is_contiguous():
        # (the usual call: rows already in place, so no moved views or copies on the way in or out)
        L, lead = x.shape[-1], x.shape[:-1]
        v, i = _topk_rows(x.view(lead.numel(), L), k, largest, sorted)
        return (v, i) if x.dim() == 2 else (v.view(*lead, k), i.view(*lead, k))
    xm = x.movedim(dim, -1)
    L = xm.shape[-1]
    lead = xm.shape[:-1]
    xc = xm.contiguous().reshape(lead.numel(), L)   # (not -1: L may be 0)
    v, i = _topk_rows(xc, k, largest, sorted)
    v = v.reshape(*lead, k).movedim(-1, dim)
    i = i.reshape(*lead, k).movedim(-1, dim)
    return v.contiguous(), i.contiguous()


def _all_of_segments(x, begin, length, ids, k, largest, values, indices):
    """Rows ``ids`` of ``values``/``indices`` get the first ``min(k, length)`` items of their segment,
    best first with the tie rule of the tile path (a stable segmented sort carrying positions); the
    other slots value 0 and index -1."""
    from .segmented_sort import segmented_sort_pairs
    device = x.device
    t = lambda a: torch.as_tensor(np.ascontiguousarray(a, dtype=np.int64), device=device)  # noqa: E731
    d_begin, d_len = t(begin), t(length)
    pos = torch.arange(x.numel(), device=device, dtype=torch.int64)
    sk, sp = segmented_sort_pairs(x, pos, d_begin, d_begin + d_len, descending=largest)
    j = torch.arange(k, device=device)
    m = j[None, :] < d_len[:, None]
    src = (d_begin[:, None] + j[None, :]).clamp(max=max(x.numel() - 1, 0))
    sel = t(ids)
    # (through signed views of the same width: torch's index_put has no CPU kernel for uint16/32/64)
    bits_view(values)[sel] = torch.where(m, bits_view(sk)[src], 0)
    indices[sel] = torch.where(m, sp[src], -1)


#: segmented_topk's segments of 64-bit keys that the block radix sort takes (as
#: :data:`_WIDE_ROWS_BY_SORT` for rows: ``segmented_sort.block_radix_sorts_rows`` of their ``BLOCK``): one
#: launch per bin sorts each segment in shared memory and writes its first k
#: (``segmented_sort.block_radix_first_k``) instead of the tile path, which sorts such segments in registers
#: as (key, index) pairs and spills. On an H200, int64 k=16, the two routes interleaved (do_bench, us): one bin
#: of 4096 segments of 129-256 keys 378 -> 357, 257-512 534 -> 381, 2048 x 513-1024 566 -> 327, 1024 x
#: 1025-2048 658 -> 315, 512 x 2049-4096 1142 -> 473; 4096 x 129-1024 822 -> 505, 1024 x 1000-4096 1519 -> 482
#: (GPU time 2-8x lower, least on the shortest bins; a call is host-bound: it reads the offsets back first).
#: Its first form (the whole segmented sort, then a gather) halved the GPU time but tripled the host's
#: (``topk64_rows_probe.py segments-ab`` and ``segments-host``; bench/probes/RADIX_RANK_NOTES.md)
_WIDE_SEGMENTS_BY_SORT = True

#: long segments of segmented_topk grouped by length: lengths within a factor 2 ** LONG_CLASS_BITS
#: share launches (0: every long segment in one group). 100k power-law segments over 2^26 fp32 keys
#: on the H100, GPU time for k = 8 / 100: one group 16.7 / 6.8 ms, factor 2 1.04 / 3.03, factor 4
#: 1.24 / 2.89, factor 8 2.40 / 3.23; factor 4 the fewest launches of the fast ones
#: (bench/probes/topk_segmented_probe.py)
LONG_CLASS_BITS = 2


def segmented_topk(x: torch.Tensor, offsets: torch.Tensor, k: int, largest: bool = True):
    """Top-k of every segment ``[offsets[s], offsets[s+1])`` of the 1-D ``x``, sorted best first.

    Returns ``(values [S, k], indices [S, k])`` where indices are positions in ``x``. A segment with
    fewer than ``k`` items fills its first ``length`` slots; the other slots hold value 0 and index -1.
    One device-to-host read of the offsets (binning by length). Tie rule (and deterministic mode) as
    :func:`topk`'s, in the module docstring.
    """
    k = as_int(k, "k")
    _segmented_topk_args(x, offsets, k)
    check_flag(largest, "largest")
    refuse_capture(x.device, "segmented_topk", "take the top-k of rows of equal length with topk")
    o = offsets.detach().cpu().numpy().astype(np.int64)
    if o.min() < 0 or o.max() > x.numel():
        raise InputValueError(f"offsets out of range: segments must lie within [0, {x.numel()}]")
    if (np.diff(o) < 0).any():
        raise InputValueError("offsets must be non-decreasing")
    S = o.size - 1
    device = x.device
    values = torch.zeros((S, k), dtype=x.dtype, device=device)
    indices = torch.full((S, k), -1, dtype=torch.int64, device=device)
    if S == 0 or k == 0 or x.numel() == 0:
        return values, indices
    check_device(x, "x")
    x = x.contiguous()
    meta = key_meta(x.dtype)
    kb, ovb = bits_view(x), bits_view(values)
    begin, length = o[:-1], np.diff(o)
    asc = not largest
    pol = policy.select("topk", device, "rows")
    short = (length > 0) & (length <= pol["ROW_MAX_BLOCK"])
    ids, bins = _segments_by_block(length, short, 2)
    d_begin, d_len, d_ids = _host_arrays_to_device([begin, length, ids], device)
    for block, start, count in bins:
        # (64-bit keys: the bins the block radix sort takes are sorted there, their first k written)
        if (_WIDE_SEGMENTS_BY_SORT and meta["KEY_BITS"] > 32
                and block_radix_sorts_rows(block, meta["KEY_BITS"], device)
                and block_radix_first_k(kb, ovb, indices, k, block=block, num_segs=count, seg_begin=d_begin,
                                        seg_len=d_len, seg_list=d_ids[start:start + count], descending=largest,
                                        meta=meta, device=device)):
            continue
        _tile_topk(kb, ovb, indices, k, block=block, num_rows=count, meta=meta, ascending=asc, device=device,
                   seg_begin=d_begin, seg_len=d_len, seg_list=d_ids[start:start + count], idx_abs=True, pol=pol)
    long_ = length > pol["ROW_MAX_BLOCK"]
    fewer = long_ & (length < k)
    if fewer.any():
        # long segments shorter than k: all their items, sorted (a segmented sort with positions)
        _all_of_segments(x, begin[fewer], length[fewer], np.flatnonzero(fewer), k, largest, values, indices)
        long_ = long_ & ~fewer
    if long_.any():
        # the long segments' kernels run a grid of (chunks of the longest row, rows): segments are
        # grouped by length class (a factor 2 ** LONG_CLASS_BITS of lengths per group; 0: one group)
        # so that short rows do not start the empty programs of a long one's chunks
        lids, lbins = _segments_by_block(length, long_, 1)
        groups = {}
        for block, start, count in lbins:
            groups.setdefault(_log2(block) >> LONG_CLASS_BITS if LONG_CLASS_BITS else 0, []).append(
                lids[start:start + count])
        lpol = policy.select("topk", device, "long")
        stable_ids = []   # (deterministic mode: the groups the radix select would take, sorted at once)
        for parts in groups.values():
            ids = np.sort(np.concatenate(parts))
            if (torch.are_deterministic_algorithms_enabled()
                    and not _candidates_ok(meta, k, int(length[ids].max()), lpol)):
                stable_ids.append(ids)
                continue
            lv = torch.empty((len(ids), k), dtype=x.dtype, device=device)
            li = torch.empty((len(ids), k), dtype=torch.int64, device=device)
            lb, ll, sel = _host_arrays_to_device([begin[ids], length[ids], ids], device)
            ml = int(length[ids].max())
            if _candidates_ok(meta, k, ml, lpol):
                _chunk_topk(kb, bits_view(lv), li, k, row_begin=lb, row_len=ll, max_len=ml, meta=meta,
                            ascending=asc, device=device, idx_abs=True)
            else:
                _radix_select(kb, bits_view(lv), li, k, row_begin=lb, row_len=ll, max_len=ml, meta=meta,
                              ascending=asc, device=device, idx_abs=True)
                lv, li = _sort_selected(lv, li, largest)
            bits_view(values)[sel] = bits_view(lv)
            indices[sel] = li
        if stable_ids:
            ids = np.sort(np.concatenate(stable_ids))
            _all_of_segments(x, begin[ids], length[ids], ids, k, largest, values, indices)
    return values, indices


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------


@custom_op("tritoncub::topk", mutates_args=())
def _topk_op(x: torch.Tensor, k: int, dim: int = -1, largest: bool = True,
             sorted: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    return topk(x, k, dim, largest, sorted)


@_topk_op.register_fake
def _(x, k, dim=-1, largest=True, sorted=True):
    dim = _topk_args(x, k, dim)
    shape = list(x.shape)
    if shape:
        shape[dim] = k
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)


def _topk_setup(ctx, inputs, output):
    x, k, dim, largest, sorted_ = inputs
    ctx.shape, ctx.dim = x.shape, dim
    ctx.save_for_backward(output[1])


def _topk_backward(ctx, grad_values, grad_indices):
    (idx,) = ctx.saved_tensors
    g = torch.zeros(ctx.shape, dtype=grad_values.dtype, device=grad_values.device)
    if len(ctx.shape) == 0:
        return (grad_values.reshape(()).clone() if grad_values.numel() else g), None, None, None, None
    return g.scatter(ctx.dim, idx, grad_values), None, None, None, None


_topk_op.register_autograd(_topk_backward, setup_context=_topk_setup)


@custom_op("tritoncub::segmented_topk", mutates_args=(), cudagraph_unsafe=True)
def _segmented_topk_op(x: torch.Tensor, offsets: torch.Tensor, k: int,
                       largest: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    return segmented_topk(x, offsets, k, largest)


@_segmented_topk_op.register_fake
def _(x, offsets, k, largest=True):
    _segmented_topk_args(x, offsets, k)
    s = offsets.shape[0] - 1
    return x.new_empty((s, k)), x.new_empty((s, k), dtype=torch.int64)


def _segtopk_setup(ctx, inputs, output):
    x = inputs[0]
    ctx.n = x.shape[0]
    ctx.save_for_backward(output[1])


def _segtopk_backward(ctx, grad_values, grad_indices):
    (idx,) = ctx.saved_tensors
    g = torch.zeros(ctx.n + 1, dtype=grad_values.dtype, device=grad_values.device)
    flat = torch.where(idx >= 0, idx, ctx.n).reshape(-1)
    g = g.index_add(0, flat, grad_values.reshape(-1))
    return g[:ctx.n], None, None, None


_segmented_topk_op.register_autograd(_segtopk_backward, setup_context=_segtopk_setup)
