"""DeviceHistogram: counts of samples per bin (CUB's ``DeviceHistogram``), plus ``histc``/``bincount``.

* :func:`histogram_even` — ``num_levels - 1`` equal-width bins over ``[lower, upper)``.
* :func:`histogram_range` — bins given by a sorted array of level boundaries
  (bin ``j`` holds ``levels[j] <= s < levels[j+1]``).
* :func:`multi_histogram_even` — 1..4 interleaved channels (e.g. RGBA pixels), each with its own
  levels, the first ``num_active_channels`` counted; one pass over the samples for all channels.
* torch operators ``torch.ops.tritoncub.histc(x, bins, min, max)`` (float and integer samples)
  and ``torch.ops.tritoncub.bincount(x, weights, minlength)`` with CUDA torch's results.

Samples may be of any integer or float dtype. Bin arithmetic: float samples are binned in fp32
(fp64 for fp64 samples) as ``(s - lower) * bins / (upper - lower)`` (CUDA torch's formula, so
``histc`` matches it bin for bin); integer samples with integer bounds exactly,
``floor((s - lower) * bins / (upper - lower))``, for every range: in int64 when
``(upper - lower) * bins < 2^63``, else through a float64 estimate corrected with exact 64-bit
bin edges (:func:`_wide_params`: int64/uint64 ranges near 2^63 and 2^64, bounds outside the samples'
type); integer samples with a float bound in fp64. NaN samples fall in no bin. Samples outside the
range are ignored.

How the counting works (CUB's privatised histograms). With at most ``GMEM_MAX_ITEMS_PER_BIN`` counted samples
per bin (a policy value; 0, never, in the fallback and in every shipped file: see the H200 file's log) every
sample is one relaxed global atomic straight into the result (CUB's global-memory preference, without
privatisation), in small tiles (``n / (4 x SMs)`` samples, at least 256 unless ``TILE`` is smaller): private
histograms would cost more to clear and flush than the samples, but a hot bin is then one address for the
whole GPU. Otherwise, on compiled NVIDIA GPUs (sm_80+) with the
policy's ``PRIVATE_ALGO=2`` (the tuned sm_90 choice), unweighted equal-width bins are counted with
shared-memory atomics (CUB's BLOCK_HISTO_ATOMIC, through Gluon and inline PTX): persistent programs,
``SMEM_COPIES`` histograms per program, one global atomic per non-empty bin per program at the end;
from ``SMEM_HALF_MIN_BINS`` bins on, where there are at least 512 samples per bin, the counters are 16
bits, two to a word (a counter that reaches 2^15 hands 2^15 to the output at once), so twice the bins fit; bin counts beyond shared memory are cut into
up to ``SMEM_MAX_CHUNKS`` chunks of bins, each a grid row that reads the samples again. Otherwise each program consumes a contiguous run of
tiles (RAKE mapping). When the total bin count is at most the policy's ``MAX_PRIVATE_BINS`` every
program keeps a private histogram in registers — ``PRIVATE_ALGO=0``: ``tl.histogram`` of each tile
(per warp, one ballot per bin bit and a popcount per owned bin, merged through shared memory);
``PRIVATE_ALGO=1``: the tile's bins split as ``h*BL + l`` and counted as the product of two one-hot
matrices on the tensor cores (``[BH, T] x [T, BL]``, fp32 accumulation, exact) — and merges it
into the output with one atomic add per non-empty bin per program. With more bins every sample is
one relaxed global atomic into one of ``ATOMIC_COPIES`` copies of the histogram (programs spread
over the copies, so a hot bin is not one address for the whole GPU), and the copies are summed in a
fixed order afterwards (CUB's global-memory privatisation). Integer counts are exact and so
deterministic; weighted ``bincount`` adds float weights with atomics, so the order of additions —
and the last bits of a float result — may vary run to run, except under
``torch.use_deterministic_algorithms(True)`` (where torch's CUDA ``bincount`` with weights raises):
then the weights are sorted by value (stable) and each value's run summed in a fixed order.

Float bins use IEEE division (``tl.math.div_rn``; Triton's plain fp32 ``/`` is approximate and
would move samples that sit on a bin edge).

Counters are int32 by default (CUB's) while a channel has fewer than 2^31 samples, int64 from there on
(so a count never wraps), or as ``counter_dtype`` asks. ``histc`` counts in its result's dtype where every
count is exact there (float32 up to 2^24 samples, float64, int32 below 2^31, int64: integer amounts, so the same bits in
any order of the atomics), else in those integers, converted after.
"""
from __future__ import annotations

import contextlib
import math
import numbers
import os
import struct
import sys

import numpy as np
import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .. import policy
from .._library import custom_op
from .. import _launch as _launch_module
from .._launch import launch, record_launches, recording_launches, relocatable, replay, replays_ok
from .._utils import (is_pow2, ALL_NUMERIC_DTYPES, FLOAT_DTYPES, INT_DTYPES, UINT_DTYPES, InputTypeError, InputValueError, cdiv,
                      as_int, capturing, check_flag, check_tensor, count_dtype, device_constant, drop_persistent, dtype_names, interpreter_active, next_power_of_2,
                      num_sms, refuse_capture, smem_atomics_ok, smem_per_block)
from ..agent.grid_mapping import grid_size
from ..block.histogram import HALF_COUNTER_SPILL, smem_count_halves_if
from ..block.radix_rank import smem_count_words_if
from ..thread.trunc_div import fast_ok, trunc_div_rn
from .radix_sort import sort_pairs as radix_sort_pairs
from .segmented_reduce import segmented_reduce

MAX_CHANNELS = 4


# ----------------------------------------------------------------------------------------------
# Kernel
# ----------------------------------------------------------------------------------------------

@triton.jit
def _channel_param(params_ptr, slot: tl.constexpr, ch, NUM_CHANNELS: tl.constexpr):
    """Per-sample value of a per-channel parameter: ``params[slot*4 + ch]`` (``ch`` = channel of
    each sample; four scalar loads and a select chain, no gather)."""
    v0 = tl.load(params_ptr + slot * 4)
    if NUM_CHANNELS == 1:
        r = v0
    else:
        r = tl.where(ch == 0, v0, tl.load(params_ptr + slot * 4 + 1))
        if NUM_CHANNELS > 2:
            r = tl.where(ch == 2, tl.load(params_ptr + slot * 4 + 2), r)
        if NUM_CHANNELS > 3:
            r = tl.where(ch == 3, tl.load(params_ptr + slot * 4 + 3), r)
    return r


@triton.jit
def _wide_edge(k, q, r, rb, g, nb):
    """First offset ``d`` (from the clamped lower bound) of bin ``first + k`` of the wide exact path,
    ``k*q + ceil((rb + k*r) / nb) - g`` in wrapping uint64 arithmetic (exact: see :func:`_wide_params`)."""
    c = ((rb + k * r + nb - 1) // nb).to(tl.uint64, bitcast=True)
    return k.to(tl.uint64, bitcast=True) * q + c - g


@triton.jit
def _wide_bins(s, ch, params_ptr, NUM_CHANNELS: tl.constexpr):
    """(bin within the channel, valid) of integer samples for any integer range, exactly:
    ``floor((s - lower) * bins / (upper - lower))`` with no int64 overflow (see :func:`_wide_params`
    for the parameters and the argument). A float64 estimate of the bin is off by at most one; the
    exact first offsets of the estimated bin and of the next one move it to the right bin."""
    lo = _channel_param(params_ptr, 0, ch, NUM_CHANNELS)
    top = _channel_param(params_ptr, 1, ch, NUM_CHANNELS)
    if s.dtype == tl.uint64:  # bounds are uint64 bit patterns: unsigned compares
        lo_u = lo.to(tl.uint64, bitcast=True)
        valid = (s >= lo_u) & (s <= top.to(tl.uint64, bitcast=True))
        d = s - lo_u
    else:
        v = s.to(tl.int64)
        valid = (v >= lo) & (v <= top)
        d = v.to(tl.uint64, bitcast=True) - lo.to(tl.uint64, bitcast=True)   # v - lo, < 2^64
    nb = _channel_param(params_ptr, 2, ch, NUM_CHANNELS)
    first = _channel_param(params_ptr, 4, ch, NUM_CHANNELS)
    last = _channel_param(params_ptr, 5, ch, NUM_CHANNELS)
    q = _channel_param(params_ptr, 6, ch, NUM_CHANNELS).to(tl.uint64, bitcast=True)
    r = _channel_param(params_ptr, 7, ch, NUM_CHANNELS)
    rb = _channel_param(params_ptr, 8, ch, NUM_CHANNELS)
    g = _channel_param(params_ptr, 9, ch, NUM_CHANNELS).to(tl.uint64, bitcast=True)
    scale = _channel_param(params_ptr, 10, ch, NUM_CHANNELS).to(tl.float64, bitcast=True)
    base = _channel_param(params_ptr, 11, ch, NUM_CHANNELS).to(tl.float64, bitcast=True)
    est = tl.minimum(d.to(tl.float64) * scale + base, nb.to(tl.float64))  # (bounded for invalid samples)
    b = tl.minimum(tl.maximum(est.to(tl.int64), first), last)
    k = b - first
    down = (b > first) & (d < _wide_edge(k, q, r, rb, g, nb))
    up = (b < last) & (d >= _wide_edge(k + 1, q, r, rb, g, nb))
    b = tl.where(down, b - 1, tl.where(up, b + 1, b))
    return b.to(tl.int32), valid


@triton.jit
def _even_bins(s, ch, params_ptr, NUM_CHANNELS: tl.constexpr, NUM_ACTIVE: tl.constexpr,
               INT_MATH: tl.constexpr, COMPUTE: tl.constexpr, TOP_INCLUSIVE: tl.constexpr,
               FAST_DIV: tl.constexpr = False):
    """(global bin index, valid) of each sample for equal-width bins. ``params``: lower[4], upper[4],
    bins[4], offset[4] (int64 when ``INT_MATH``, else float64), then for ``INT_MATH=3`` the further
    slots of :func:`_wide_params`. ``INT_MATH``: 0 float arithmetic, 1 exact int64 arithmetic
    (``(upper - lower) * bins < 2^63``), 2 integer bins one value wide (every channel's
    ``upper - lower == bins``: the bin is ``s - lower``, no division), 3 exact integer arithmetic for
    any range (:func:`_wide_bins`; the range test is folded into its clamped bounds, so
    ``TOP_INCLUSIVE`` does not apply). ``FAST_DIV`` (one channel, fp32
    arithmetic, compiled for NVIDIA, a divisor :func:`~tritoncub.thread.trunc_div.fast_ok` accepts):
    the bin division through :func:`~tritoncub.thread.trunc_div.trunc_div_rn`'s fast path."""
    off = _channel_param(params_ptr, 3, ch, NUM_CHANNELS).to(tl.int32)
    if INT_MATH == 3:
        b, valid = _wide_bins(s, ch, params_ptr, NUM_CHANNELS)
    else:
        lo = _channel_param(params_ptr, 0, ch, NUM_CHANNELS)
        hi = _channel_param(params_ptr, 1, ch, NUM_CHANNELS)
        nb = _channel_param(params_ptr, 2, ch, NUM_CHANNELS).to(tl.int32)
        if INT_MATH:
            v = s.to(tl.int64)
            if TOP_INCLUSIVE:
                valid = (v >= lo) & (v <= hi)
            else:
                valid = (v >= lo) & (v < hi)
            if INT_MATH == 2:
                b = v - lo
            else:
                b = ((v - lo) * nb.to(tl.int64)) // (hi - lo)
            b = tl.minimum(b, nb.to(tl.int64) - 1).to(tl.int32)
        else:
            v = s.to(COMPUTE)
            lo_c = lo.to(COMPUTE)
            hi_c = hi.to(COMPUTE)
            if TOP_INCLUSIVE:
                valid = (v >= lo_c) & (v <= hi_c)
            else:
                valid = (v >= lo_c) & (v < hi_c)
            if COMPUTE == tl.float32:  # IEEE division, as torch (Triton's fp32 '/' is approximate)
                d = hi_c - lo_c
                if FAST_DIV:  # one channel: d is a scalar, so is its reciprocal
                    b = trunc_div_rn((v - lo_c) * nb.to(COMPUTE), d, tl.math.div_rn(1.0, d), True)
                else:
                    b = trunc_div_rn((v - lo_c) * nb.to(COMPUTE), d, d, False)
            else:  # fp64 '/' is IEEE already
                b = ((v - lo_c) * nb.to(COMPUTE) / (hi_c - lo_c)).to(tl.int32)
            b = tl.maximum(tl.minimum(b, nb - 1), 0)
    if NUM_ACTIVE < NUM_CHANNELS:
        valid = valid & (ch < NUM_ACTIVE)
    b = tl.where(valid, b + off, 0)
    return b, valid


@triton.jit
def _sample_slots(idx, num_items, NUM_CHANNELS: tl.constexpr):
    """(in bounds, channel) of the samples at flat positions ``idx``."""
    if NUM_CHANNELS == 1:
        ch = 0
    else:
        ch = (idx % NUM_CHANNELS).to(tl.int32)
    return idx < num_items, ch


@triton.jit
def _load_samples(x_ptr, idx, num_items, NUM_CHANNELS: tl.constexpr):
    """(samples, in bounds, channel of each sample) at flat positions ``idx``."""
    inb, ch = _sample_slots(idx, num_items, NUM_CHANNELS)
    s = tl.load(x_ptr + idx, mask=inb, other=0)
    return s, inb, ch


@triton.jit
def _range_bins(s, levels_ptr, num_levels, STEPS: tl.constexpr, INT_MATH: tl.constexpr):
    """(bin index, valid) of each sample for sorted level boundaries: a branch-free binary search
    for the number of levels ``<= s`` (``STEPS`` = bit length of ``num_levels``)."""
    if INT_MATH:
        v = s.to(tl.int64)
    else:
        v = s.to(tl.float64)
    pos = tl.zeros(s.shape, tl.int32)
    for k in tl.static_range(STEPS - 1, -1, -1):
        cand = pos + (1 << k)
        in_range = cand <= num_levels
        lvl = tl.load(levels_ptr + tl.where(in_range, cand - 1, 0), mask=in_range)
        pos = tl.where(in_range & (lvl <= v), cand, pos)
    valid = (pos >= 1) & (pos <= num_levels - 1)
    if not INT_MATH:
        valid = valid & (v == v)
    b = tl.where(valid, pos - 1, 0)
    return b, valid


@triton.jit
def _histogram_kernel(x_ptr, w_ptr, hist_ptr, levels_ptr, params_ptr, num_items, num_tiles,
                      tiles_per_program, num_levels, total_bins, num_copies,
                      NUM_CHANNELS: tl.constexpr, NUM_ACTIVE: tl.constexpr, RANGE_MODE: tl.constexpr,
                      STEPS: tl.constexpr, INT_MATH: tl.constexpr, COMPUTE: tl.constexpr,
                      TOP_INCLUSIVE: tl.constexpr, WEIGHTED: tl.constexpr, PRIVATE: tl.constexpr,
                      PRIVATE_ALGO: tl.constexpr, PRIVATE_BINS: tl.constexpr, BH: tl.constexpr,
                      BL: tl.constexpr, TILE: tl.constexpr, FAST_DIV: tl.constexpr = False):
    """Count (or weigh) the samples of a contiguous run of tiles.

    ``PRIVATE``: a register histogram per program — ``PRIVATE_ALGO=0`` ``tl.histogram`` per tile,
    ``1`` a one-hot product on the tensor cores (bin = ``h*BL + l``; counts[h, l] = onehot_h^T ·
    onehot_l, accumulated in fp32, exact below 2^24 samples per program) — merged with one atomic
    per bin. Otherwise one relaxed atomic per sample into this program's copy of the histogram
    (``hist_ptr`` holds ``num_copies`` copies; program ``p`` uses copy ``p % num_copies``)."""
    pid = tl.program_id(0)
    first = pid.to(tl.int64) * tiles_per_program
    offs = tl.arange(0, TILE)
    if PRIVATE:
        if PRIVATE_ALGO == 1:
            acc = tl.zeros((BH, BL), tl.float32)
        else:
            acc = tl.zeros((PRIVATE_BINS,), tl.int32)
    copy_ptr = hist_ptr + (pid % num_copies).to(tl.int64) * total_bins
    i = 0
    while i < tiles_per_program:  # tiles past num_tiles (last program's tail) are all masked
        base = (first + i) * TILE
        i += 1
        idx = base + offs
        s, inb, ch = _load_samples(x_ptr, idx, num_items, NUM_CHANNELS)
        if RANGE_MODE:
            b, valid = _range_bins(s, levels_ptr, num_levels, STEPS, INT_MATH)
        else:
            b, valid = _even_bins(s, ch, params_ptr, NUM_CHANNELS, NUM_ACTIVE, INT_MATH, COMPUTE,
                                  TOP_INCLUSIVE, FAST_DIV)
        valid = valid & inb
        if PRIVATE:
            if PRIVATE_ALGO == 1:
                bb = tl.where(valid, b, BH * BL)  # row BH: matches no row of the one-hot
                oh_h = (tl.arange(0, BH)[:, None] == (bb // BL)[None, :]).to(tl.float16)  # [BH, TILE]
                oh_l = ((bb % BL)[:, None] == tl.arange(0, BL)[None, :]).to(tl.float16)   # [TILE, BL]
                acc = tl.dot(oh_h, oh_l, acc)
            else:
                acc += tl.histogram(tl.where(valid, b, 0), PRIVATE_BINS, mask=valid)
        elif WEIGHTED:
            w = tl.load(w_ptr + idx, mask=inb, other=0)
            tl.atomic_add(copy_ptr + b, w.to(hist_ptr.dtype.element_ty), mask=valid, sem="relaxed")
        else:
            one = tl.full((TILE,), 1, hist_ptr.dtype.element_ty)
            tl.atomic_add(copy_ptr + b, one, mask=valid, sem="relaxed")
    if PRIVATE:
        if PRIVATE_ALGO == 1:
            bins2 = tl.arange(0, BH)[:, None] * BL + tl.arange(0, BL)[None, :]
            cnt = acc.to(tl.int32)
            tl.atomic_add(hist_ptr + bins2, cnt.to(hist_ptr.dtype.element_ty),
                          mask=(bins2 < total_bins) & (cnt != 0), sem="relaxed")
        else:
            bins = tl.arange(0, PRIVATE_BINS)
            tl.atomic_add(hist_ptr + bins, acc.to(hist_ptr.dtype.element_ty),
                          mask=(bins < total_bins) & (acc != 0), sem="relaxed")


@gluon.jit
def _histogram_smem_kernel(x_ptr, hist_ptr, params_ptr, num_items, num_tiles, total_bins,
                           NUM_CHANNELS: gl.constexpr, NUM_ACTIVE: gl.constexpr, INT_MATH: gl.constexpr,
                           COMPUTE: gl.constexpr, TOP_INCLUSIVE: gl.constexpr, WARPS: gl.constexpr,
                           ITEMS: gl.constexpr, SMEM_BINS: gl.constexpr, COPIES: gl.constexpr,
                           CHUNKED: gl.constexpr = True, FAST_DIV: gl.constexpr = False,
                           PREFETCH: gl.constexpr = False, HALF: gl.constexpr = False):
    """Equal-width bins counted with shared-memory atomics (CUB's BLOCK_HISTO_ATOMIC): each program
    keeps ``COPIES`` histograms of ``SMEM_BINS`` counters in shared memory (warp ``w`` counts into copy
    ``w % COPIES``), loops over tiles ``pid, pid + programs, ...`` of ``WARPS * 32 * ITEMS`` samples,
    and finally adds its counts to ``hist`` with one global atomic per non-empty bin. Samples outside
    every bin are not counted (a predicated atomic). More bins than shared memory holds: the bins are
    cut into chunks of ``SMEM_BINS``, ``program_id(1)`` is the chunk, and each chunk's programs read
    every sample (one read of the input per chunk); ``CHUNKED=False`` (all bins in one chunk) skips the
    per-sample chunk test; ``PREFETCH`` loads tile ``t + programs`` before counting tile ``t``.
    ``HALF``: 16-bit counters, two to a word (``block.histogram.smem_count_halves_if``: twice the bins
    in the same shared memory; a counter reaching 2^15 hands 2^15 to ``hist`` at once)."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    WORDS: gl.constexpr = SMEM_BINS // 2 if HALF else SMEM_BINS   # counter words per copy
    CH: gl.constexpr = WORDS if WORDS < 1024 else 1024    # words zeroed / flushed per step
    # (a step's words spread over all the warps, each thread holding its words of every copy: one
    # thread per word, not one warp per copy with every warp doing every word)
    SPT: gl.constexpr = CH // (32 * WARPS) if CH > 32 * WARPS else 1
    LH: gl.constexpr = gl.BlockedLayout([COPIES, SPT], [1, 32], [1, WARPS], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [COPIES, WORDS], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    for c0 in gl.static_range(0, WORDS, CH):
        smem.slice(c0, CH, 1).store(gl.zeros([COPIES, CH], gl.int32, LH))
    gl.thread_barrier()
    i = gl.arange(0, TILE, layout=LB)
    copy_base = ((i // (32 * ITEMS)) % COPIES) * SMEM_BINS
    bin_base = gl.program_id(1) * SMEM_BINS
    nprog = gl.num_programs(0)
    if PREFETCH:
        s_next = _load_samples(x_ptr, gl.program_id(0).to(gl.int64) * TILE + i, num_items, NUM_CHANNELS)[0]
    for t in range(gl.program_id(0), num_tiles, nprog):
        if PREFETCH:  # the next tile's loads are in flight while this tile is counted
            inb, ch = _sample_slots(t.to(gl.int64) * TILE + i, num_items, NUM_CHANNELS)
            s = s_next
            s_next = _load_samples(x_ptr, (t + nprog).to(gl.int64) * TILE + i, num_items, NUM_CHANNELS)[0]
        else:
            s, inb, ch = _load_samples(x_ptr, t.to(gl.int64) * TILE + i, num_items, NUM_CHANNELS)
        b, valid = _even_bins(s, ch, params_ptr, NUM_CHANNELS, NUM_ACTIVE, INT_MATH, COMPUTE, TOP_INCLUSIVE,
                              FAST_DIV)
        if CHUNKED:
            rel = b - bin_base
            counted = valid & inb & (rel >= 0) & (rel < SMEM_BINS)
        else:
            rel = b
            counted = valid & inb
        if HALF:
            spilled = smem_count_halves_if(copy_base + rel, counted.to(gl.int32))
            gl.atomic_add(hist_ptr + (bin_base + rel), (spilled * HALF_COUNTER_SPILL).to(hist_ptr.dtype.element_ty),
                          mask=spilled != 0, sem="relaxed")
        else:
            smem_count_words_if(copy_base + rel, counted.to(gl.int32))
    gl.thread_barrier()
    for c0 in gl.static_range(0, WORDS, CH):
        w = smem.slice(c0, CH, 1).load(LH)
        words = c0 + gl.arange(0, CH, layout=gl.SliceLayout(0, LH))
        for h in gl.static_range(2 if HALF else 1):
            if HALF:   # (every half is below 2^15 now: the words are non-negative)
                c = gl.sum((w >> (16 * h)) & 0xFFFF, 0)
                bins = bin_base + 2 * words + h
            else:
                c = gl.sum(w, 0)
                bins = bin_base + words
            gl.atomic_add(hist_ptr + bins, c.to(hist_ptr.dtype.element_ty), mask=(bins < total_bins) & (c != 0),
                          sem="relaxed")


@triton.jit
def _sum_copies_kernel(copies_ptr, hist_ptr, total_bins, COPIES: tl.constexpr, BLOCK: tl.constexpr):
    """``hist[b] = sum over copies c of copies[c, b]`` (a fixed order: deterministic)."""
    pid = tl.program_id(0)
    b = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    c = tl.arange(0, COPIES)
    m = (b < total_bins)[None, :]
    v = tl.load(copies_ptr + c[:, None].to(tl.int64) * total_bins + b[None, :], mask=m, other=0)
    tl.store(hist_ptr + b, tl.sum(v, 0).to(hist_ptr.dtype.element_ty), mask=b < total_bins)


# ----------------------------------------------------------------------------------------------
# Policy
# ----------------------------------------------------------------------------------------------

_POLICY = policy.register(
    "histogram",
    space={"TILE": [512, 1024, 2048, 4096, 8192], "PROGRAMS_PER_SM": [2, 4, 8, 16],
           "MAX_PRIVATE_BINS": [128, 256, 512, 1024, 2048], "PRIVATE_ALGO": [0, 1, 2],
           "ATOMIC_COPIES": [1, 8, 64], "SMEM_COPIES": [1, 2, 4, 8], "PREFETCH": [0, 1],
           "SMEM_HALF_MIN_BINS": [0, 16384, 32768, 65536, 131072], "SMEM_MAX_CHUNKS": [1, 2, 4, 8],
           "GMEM_MAX_ITEMS_PER_BIN": [0, 1, 4, 16, 64], "num_warps": [4, 8, 16], "num_stages": [1, 2, 3]},
    fallback={"TILE": 2048, "PROGRAMS_PER_SM": 8, "MAX_PRIVATE_BINS": 1024, "PRIVATE_ALGO": 0,
              "ATOMIC_COPIES": 8, "SMEM_COPIES": 4, "PREFETCH": 0, "SMEM_HALF_MIN_BINS": 0, "SMEM_MAX_CHUNKS": 8,
              "GMEM_MAX_ITEMS_PER_BIN": 0, "num_warps": 4,
              "num_stages": 2},
    # (values a file may hold beyond the space, within what the kernels take)
    valid=lambda c: (is_pow2(c["TILE"]) and 16 <= c["TILE"] <= 1 << 16 and c["PROGRAMS_PER_SM"] >= 1
                     and c["MAX_PRIVATE_BINS"] >= 1 and c["PRIVATE_ALGO"] in (0, 1, 2) and c["ATOMIC_COPIES"] >= 1
                     and is_pow2(c["SMEM_COPIES"]) and c["PREFETCH"] in (0, 1) and c["SMEM_HALF_MIN_BINS"] >= 0
                     and is_pow2(c["SMEM_MAX_CHUNKS"]) and c["GMEM_MAX_ITEMS_PER_BIN"] >= 0),
    doc="TILE samples per loop step; PROGRAMS_PER_SM programs per multiprocessor (each takes a "
        "contiguous run of tiles); MAX_PRIVATE_BINS: the largest total bin count counted in a private "
        "register histogram (above it, one global atomic per sample); PRIVATE_ALGO 0 = tl.histogram, "
        "1 = one-hot product on the tensor cores, 2 = shared-memory atomics (compiled NVIDIA sm_80+, "
        "unweighted equal-width bins that fit in shared memory; any bin count up to that, "
        "MAX_PRIVATE_BINS does not apply; SMEM_COPIES histogram copies per program, the warps spread "
        "over them; PREFETCH 1 loads the next tile before counting this one; SMEM_HALF_MIN_BINS: from this "
        "many bins on (0: never) the counters are 16 bits, two to a word, so twice the bins fit in one read "
        "of the samples, where there are at least 512 samples per bin; SMEM_MAX_CHUNKS (a power of two): the "
        "most chunks of "
        "bins (each a read of the samples) a histogram too large for shared memory is cut into; more bins "
        "than that take the global-atomic path); ATOMIC_COPIES: copies of the histogram the atomic "
        "path spreads its programs over (summed afterwards; at most 16 MB of copies); GMEM_MAX_ITEMS_PER_BIN: "
        "at most this many counted samples per bin (0: never) take one global atomic per sample straight into "
        "the result, whatever the bin count (no private histograms to clear and flush, no copies to sum; a hot "
        "bin is one address for every program).")


# ----------------------------------------------------------------------------------------------
# Launchers
# ----------------------------------------------------------------------------------------------

_CHECK_DTYPES = ALL_NUMERIC_DTYPES


def _is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def _compute_dtype(dtype: torch.dtype):
    """fp32 for 16/32-bit float samples, fp64 for fp64 and for integer samples binned in floats."""
    return tl.float32 if dtype in (torch.float16, torch.bfloat16, torch.float32) else tl.float64


def _even_compute(x_dtype: torch.dtype, channels, int_math: int):
    """The float type of equal-width bins for the CUB-style histograms: :func:`_compute_dtype`, but
    float64 for 16/32-bit float samples where ``(upper - lower) * bins`` exceeds the float32 range (the
    fp32 product ``(s - lower) * bins`` would overflow before the division: finite samples in the wrong
    bin) or where the bounds round to one fp32 value (a range of zero width). Bounds that are one value
    even in float64 (ints beyond 2^53 apart by little) are refused. ``histc`` takes it too (its bounds are
    distinct float32 values: only the overflow applies there), and so keeps torch's fp32 arithmetic
    wherever that does not overflow."""
    compute = _compute_dtype(x_dtype)
    if not int_math:
        if any(float(hi) <= float(lo) for lo, hi, *_ in channels):
            raise InputValueError("lower and upper round to one float64 value: float bins need distinct bounds "
                                  "in float64")
        if compute == tl.float32:
            f32_max = float(np.finfo(np.float32).max)
            # (also float64 where the bounds round to one fp32 value: an fp32 range of zero width)
            if any(abs(float(np.float32(hi)) - float(np.float32(lo))) * b > f32_max or np.float32(hi) <= np.float32(lo)
                   for lo, hi, b, *_ in channels):
                return tl.float64
    return compute


def _launch(x: torch.Tensor, hist: torch.Tensor, *, channels: list[tuple], num_channels: int,
            num_active: int, int_math: int, top_inclusive: bool, weights: torch.Tensor | None = None,
            levels: torch.Tensor | None = None, pol: policy.Policy | None = None, compute=None,
            made: dict | None = None) -> None:
    """Run the kernel. ``channels``: per active channel (lower, upper, bins, offset into ``hist``);
    ``int_math``: 0 float bins, 1 int64 bins, 3 wide exact integer bins (see :func:`_even_bins`);
    ``compute``: the float type of float bins (default :func:`_compute_dtype` of the samples).
    ``made`` (a replay being recorded): gets the policy, the parameter block and the zeroed scratch."""
    n = x.numel()
    if n == 0:
        return
    compute = compute if compute is not None else _compute_dtype(x.dtype)
    int_math = int(int_math)
    params = _params(channels, int_math, x.device, x.dtype, top_inclusive)
    if int_math == 1 and levels is None and all(int(c[1]) - int(c[0]) == int(c[2]) for c in channels):
        int_math = 2   # unit-width integer bins (bincount, 8-bit pixels): no division per sample
    pol = pol or policy.select("histogram", x.device)
    if made is not None:
        made.update(pol=pol, params=params, scratch=[])
    tile = pol["TILE"]
    # the fast exact bin division (thread/trunc_div.py): one fp32 channel, compiled for NVIDIA
    fast_div = (num_channels == 1 and not int_math and levels is None and compute == tl.float32
                and x.device.type == "cuda" and torch.version.hip is None and not interpreter_active()
                and fast_ok(float(np.float32(channels[0][1]) - np.float32(channels[0][0]))))
    total_bins = hist.numel()
    # few counted samples per bin: one global atomic per sample into hist itself (the private histograms'
    # clearing and flushing, or the copies' zeroing and summing, cost more than the samples)
    gmem = n // num_channels * num_active <= pol["GMEM_MAX_ITEMS_PER_BIN"] * total_bins
    if pol["PRIVATE_ALGO"] == 2 and not gmem and weights is None and levels is None and smem_atomics_ok(x.device):
        warps = pol.num_warps
        # 16-bit counters from SMEM_HALF_MIN_BINS bins on (0: never), for enough samples per bin
        half = 0 < pol["SMEM_HALF_MIN_BINS"] <= total_bins and n >= _HALF_MIN_ITEMS_PER_BIN * total_bins
        unit = 2 if half else 4   # bytes per counter
        smem_bins = max(64 if half else 32, next_power_of_2(total_bins))
        copies = min(pol["SMEM_COPIES"], warps)
        limit = _smem_limit(x.device)
        chunks = 1   # bin chunks, each counted in shared memory over its own read of the samples
        while smem_bins * unit > limit and chunks < pol["SMEM_MAX_CHUNKS"]:
            smem_bins //= 2
            chunks *= 2
        while copies > 1 and copies * smem_bins * unit > limit:
            copies //= 2
        if copies * smem_bins * unit <= limit:
            items = max(1, tile // (32 * warps))
            num_tiles = cdiv(n, 32 * warps * items)
            # persistent programs: no more per SM than can be resident at once (warps, shared memory)
            per_sm = max(1, min(pol["PROGRAMS_PER_SM"], 64 // warps,
                                (limit + (4 << 10)) // (copies * smem_bins * unit)))
            programs = max(1, min(num_tiles, cdiv(num_sms(x.device) * per_sm, chunks)))
            launch(_histogram_smem_kernel, (programs, chunks),
                   x, hist, params, n, num_tiles, total_bins,
                   NUM_CHANNELS=num_channels, NUM_ACTIVE=num_active, INT_MATH=int_math,
                   COMPUTE=compute, TOP_INCLUSIVE=top_inclusive, WARPS=warps, ITEMS=items,
                   SMEM_BINS=smem_bins, COPIES=copies, CHUNKED=chunks > 1, FAST_DIV=fast_div and items % 4 == 0,
                   PREFETCH=bool(pol["PREFETCH"]), HALF=half, num_warps=warps)
            return
    private = weights is None and total_bins <= pol["MAX_PRIVATE_BINS"] and not gmem
    algo = pol["PRIVATE_ALGO"] if private else 0
    private_bins = max(32, next_power_of_2(total_bins))
    bl = max(16, 1 << ((private_bins.bit_length() - 1) // 2))
    bh = max(16, private_bins // bl)
    if algo == 1:  # keep the one-hot operands of a tile within 64 KB of shared memory
        tile = min(tile, 16384 // max(bh, bl))
    if gmem:   # (small tiles, at least 256 samples unless TILE is smaller: every SM busy with the atomics' latency)
        tile = min(tile, max(256, next_power_of_2(cdiv(n, 4 * num_sms(x.device)))))
    num_tiles = cdiv(n, tile)
    max_programs = num_sms(x.device) * pol["PROGRAMS_PER_SM"]
    if algo == 1:  # fp32 counts stay exact: at most 2^24 samples per program
        max_programs = max(max_programs, cdiv(n, 1 << 24))
    programs, tpp = grid_size(num_tiles, max_programs, 0)
    range_mode = levels is not None
    num_levels = levels.numel() if range_mode else 0
    copies = 1
    target = hist
    if not private and not gmem:
        copies = max(1, min(pol["ATOMIC_COPIES"], next_power_of_2(programs),
                            (16 << 20) // (total_bins * hist.element_size())))
        copies = 1 << (copies.bit_length() - 1)  # a power of two
        if copies > 1:
            target = torch.zeros(copies * total_bins, dtype=hist.dtype, device=hist.device)
            if made is not None:
                made["scratch"].append(target)
    launch(_histogram_kernel, (programs,),
           x, weights if weights is not None else x, target, levels if range_mode else x, params, n,
           num_tiles, tpp, num_levels, total_bins, copies,
           NUM_CHANNELS=num_channels, NUM_ACTIVE=num_active, RANGE_MODE=range_mode,
           STEPS=max(1, int(num_levels).bit_length()), INT_MATH=int_math, COMPUTE=compute,
           TOP_INCLUSIVE=top_inclusive, WEIGHTED=weights is not None, PRIVATE=private, PRIVATE_ALGO=algo,
           PRIVATE_BINS=private_bins if private else 32, BH=bh, BL=bl, TILE=tile,
           FAST_DIV=fast_div and tile % (128 * pol.num_warps) == 0, num_warps=pol.num_warps,
           num_stages=pol.num_stages)
    if copies > 1:
        block = max(16, 4096 // copies)
        launch(_sum_copies_kernel, (cdiv(total_bins, block),), target, hist, total_bins, COPIES=copies, BLOCK=block,
               num_warps=4)


#: 16-bit counters (policy SMEM_HALF_MIN_BINS) count more slowly than 32-bit ones (an atomic that returns
#: its old value, to find a counter reaching 2^15) and every program flushes all the bins, where 32-bit
#: counters split into chunks flush one chunk each; they pay where they save whole reads of the samples,
#: i.e. for many samples per bin (H200, 2^26 fp32 samples, GPU time, 32-bit against 16-bit counters:
#: 65536 bins 254 against 238 us, 131072 486 / 425, 262144 1835 / 776; 2^20 samples over 65536 bins
#: 19.5 against 63.6; bench/results/logs/histogram_layout_probe-h200-20261201.log; 2^24 samples over 65536
#: bins, 256 a bin: 80.8 against 113.3; 2^26 over 131072, 512 a bin: 485 against 430,
#: bench/results/logs/histogram_half_probe-h200-20261201.log)
_HALF_MIN_ITEMS_PER_BIN = 512


def _smem_limit(device: torch.device) -> int:
    """Bytes of shared memory one program may use for its histograms."""
    return smem_per_block(device) - (4 << 10)


_PARAMS_CACHE: dict = {}
_U64 = getattr(torch, "uint64", None)


def _int_limits(dtype: torch.dtype) -> tuple[int, int]:
    """(smallest, largest) value of an integer dtype."""
    bits = dtype.itemsize * 8
    if dtype.is_signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _s64(v: int) -> int:
    """``v`` modulo 2^64 as a signed int64 value (the bit pattern the kernel reinterprets)."""
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _f64_bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", v))[0]


def _wide_params(lower: int, upper: int, bins: int, offset: int, dtype: torch.dtype,
                 top_inclusive: bool) -> tuple:
    """The 12 per-channel parameters of the wide exact path (``INT_MATH=3``, :func:`_wide_bins`):
    ``bin(s) = floor((s - lower) * bins / w)``, ``w = upper - lower``, for any Python-int range and
    integer samples of ``dtype``, with no product wider than 64 bits in the kernel.

    * The range is clamped to the samples' type: samples lie in ``[lo, top]`` (``lo = max(lower,
      dtype min)``, ``top = min(upper or upper - 1, dtype max)``), so ``d = s - lo`` fits uint64.
      With ``c = lo - lower``, the bin is ``floor((d + c) * bins / w)``; only bins ``first`` (that of
      ``lo``) to ``last`` (that of ``top``, at most ``bins - 1``) can be hit.
    * Bin ``b`` starts at ``E(b) = ceil(b * w / bins)`` (``d + c >= E(b)`` exactly when the bin is at
      least ``b``). With ``w = q*bins + r`` and ``first*w = A*bins + rb`` (``r, rb < bins``),
      ``E(first + k) - c = k*q + ceil((rb + k*r) / bins) - g``, ``g = c - A``. For ``1 <= k <=
      last - first`` that value lies in ``[1, 2^64)``, so computing it modulo 2^64 (wrapping uint64
      products, ``q`` and ``g`` reduced mod 2^64) is exact; ``k*r < bins^2 < 2^62``.
    * The kernel estimates the bin as ``floor(fl(d) * fl(bins / w) + fl(c * bins / w))`` in float64
      (an error of a few ulps of ``bins``, far below one bin for ``bins < 2^31``), clamps it to
      ``[first, last]`` and moves it by one where the exact start of the estimated or the next bin
      says so.

    No sample in range (``lo > top``): bounds that no value passes and a single bin."""
    dmin, dmax = _int_limits(dtype)
    w = upper - lower
    lo = max(lower, dmin)
    top = min(upper if top_inclusive else upper - 1, dmax)
    if lo > top:
        return (_s64(dmax), _s64(dmin), bins, offset) + (0,) * 6 + (_f64_bits(0.0),) * 2
    c = lo - lower
    first = min(c * bins // w, bins - 1)
    last = min((top - lower) * bins // w, bins - 1)
    q, r = divmod(w, bins)
    a, rb = divmod(first * w, bins)
    return (_s64(lo), _s64(top), bins, offset, first, last, _s64(q), r, rb, _s64(c - a),
            _f64_bits(bins / w), _f64_bits(c * bins / w))


def _params(channels, int_math: int, device, dtype: torch.dtype | None = None,
            top_inclusive: bool = False) -> torch.Tensor:
    """The kernel's per-channel parameter block on ``device`` (cached: repeated calls with the same
    levels copy nothing to the device): slot ``k`` of channel ``c`` at ``4*k + c``."""
    ch = list(channels) + [channels[-1]] * (MAX_CHANNELS - len(channels))
    if int_math == 3:
        rows = [_wide_params(int(c[0]), int(c[1]), int(c[2]), int(c[3]), dtype, top_inclusive) for c in ch]
        vals = tuple(row[k] for k in range(len(rows[0])) for row in rows)
    else:
        conv = int if int_math else float
        vals = tuple(conv(c[k]) for k in range(4) for c in ch)
    return device_constant(list(vals), torch.int64 if int_math else torch.float64, device, _PARAMS_CACHE,
                           (vals, bool(int_math), str(device)))


def _integral_bound(v, dtype: torch.dtype):
    """A bound of integer samples given as a whole float (``0.0``, ``255.0``) as the int it is: such
    ranges are binned exactly, like int bounds (the bins are the same numbers)."""
    if not _is_float(dtype) and isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return int(v)
    return v


def _int_math(dtype: torch.dtype, ranges) -> int:
    """How equal-width bins of ``dtype`` samples over ``ranges`` ((lower, upper, bins) per channel)
    are computed: 0 in floats (float samples, or a float bound), 1 in int64 when no channel's
    ``(s - lower) * bins`` can overflow int64 (and no uint64 sample above 2^63 could pass the range
    test as a negative int64), else 3 (exact for any integer range, :func:`_wide_params`)."""
    if _is_float(dtype) or any(isinstance(v, float) for r in ranges for v in r[:2]):
        return 0
    for lo, hi, bins in ranges:
        if not (-2 ** 63 <= lo and hi < 2 ** 63 and (hi - lo) * bins < 2 ** 63) or (dtype == _U64 and lo < 0):
            return 3
    return 1


def _check_levels_args(x, num_levels, lower, upper, name="num_levels"):
    """``(num_levels, lower, upper)`` checked, as Python ints and floats (numpy scalars taken as their
    values; bools and anything else refused)."""
    num_levels = as_int(num_levels, name)
    if num_levels < 2:
        raise InputValueError(f"{name} must be >= 2 (bins = {name} - 1), got {num_levels}")
    if num_levels > 2 ** 31:
        raise InputValueError(f"{name} must be at most 2^31 (bin indices are int32), got {num_levels}")
    bounds = []
    for v, nm in ((lower, "lower"), (upper, "upper")):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, numbers.Real)):
            raise InputTypeError(f"{nm} must be a Python or numpy int or float, got {type(v).__name__}")
        v = int(v) if isinstance(v, numbers.Integral) else float(v)
        if isinstance(v, float) and not math.isfinite(v):
            raise InputValueError(f"{nm} must be finite, got {v}")
        if isinstance(v, int) and _is_float(x.dtype) and abs(v) > sys.float_info.max:
            raise InputValueError(f"{nm} ({'-' if v < 0 else ''}~2^{abs(v).bit_length() - 1}) is beyond the float range "
                                  "(float samples are binned in floats)")
        bounds.append(v)
    lower, upper = bounds
    if not lower < upper:
        raise InputValueError(f"lower ({lower}) must be smaller than upper ({upper})")
    return num_levels, lower, upper


def _flat(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)


def histogram_even(x: torch.Tensor, num_levels: int, lower, upper, *, counter_dtype=None
                   ) -> torch.Tensor:
    """Counts of ``x``'s samples in ``num_levels - 1`` equal-width bins over ``[lower, upper)``.

    Float samples go to bin ``floor((s - lower) * bins / (upper - lower))``, computed in fp32 (fp64
    for fp64 samples, or where the fp32 product would overflow or the bounds round to one fp32 value) with ``lower`` and ``upper`` rounded
    to that type (CUDA torch's histc formula and CUB's ``[lower, upper)`` range: a sample equal to
    ``upper`` is not counted); so a sample on or next to a bin edge ``lower + j*(upper - lower)/bins``
    may fall in the bin beside the one exact arithmetic gives (e.g. 0.7 in 10 bins over [0, 1): bin
    7). NaN and out-of-range samples are not counted. Returns
    ``counter_dtype`` (int32 or int64; by default int32 below 2^31 samples, else int64) counts of shape
    ``(num_levels - 1,)``; exact and deterministic.
    Integer samples with int bounds are binned exactly, ``floor((s - lower) * bins / (upper - lower))``
    for any Python-int range (int64 arithmetic when ``(upper - lower) * bins < 2^63``, else the wide
    exact path: ranges near or beyond 2^63, uint64 samples up to 2^64 - 1, bounds outside the
    samples' type); a whole-number float bound (``255.0``) counts as an int. Integer samples with a
    fractional float bound are binned in float64 (samples beyond 2^53 in magnitude rounded first).
    """
    check_tensor(x, "x", _CHECK_DTYPES)
    num_levels, lower, upper = _check_levels_args(x, num_levels, lower, upper)
    lower, upper = _integral_bound(lower, x.dtype), _integral_bound(upper, x.dtype)
    counter_dtype = count_dtype(x.numel(), counter_dtype)
    bins = num_levels - 1
    hist = torch.zeros(bins, dtype=counter_dtype, device=x.device)
    int_math = _int_math(x.dtype, [(lower, upper, bins)])
    _launch(_flat(x), hist, channels=[(lower, upper, bins, 0)], num_channels=1, num_active=1, int_math=int_math,
            top_inclusive=False, compute=_even_compute(x.dtype, [(lower, upper, bins)], int_math))
    return hist


def multi_histogram_even(x: torch.Tensor, num_channels: int, num_active_channels: int, num_levels,
                         lower, upper, *, counter_dtype=None) -> list[torch.Tensor]:
    """Histograms of interleaved multi-channel samples (``x`` flat: pixel ``p`` channel ``c`` at
    ``x[p*num_channels + c]``), one per active channel (the first ``num_active_channels``).

    ``num_levels``, ``lower``, ``upper`` are sequences with one entry per active channel. The length of
    ``x`` must be a multiple of ``num_channels``. All channels are counted in one pass, with one bin
    arithmetic: integer samples are binned exactly (see :func:`histogram_even`) unless some channel
    has a fractional float bound, which puts every channel in float64."""
    check_tensor(x, "x", _CHECK_DTYPES)
    num_channels = as_int(num_channels, "num_channels")
    num_active_channels = as_int(num_active_channels, "num_active_channels")
    if not (1 <= num_channels <= MAX_CHANNELS):
        raise InputValueError(f"num_channels must be in 1..{MAX_CHANNELS}, got {num_channels}")
    if not (1 <= num_active_channels <= num_channels):
        raise InputValueError(f"num_active_channels must be in 1..num_channels ({num_channels}), "
                              f"got {num_active_channels}")
    for nm, seq in (("num_levels", num_levels), ("lower", lower), ("upper", upper)):
        if not isinstance(seq, (list, tuple)):
            raise InputTypeError(f"{nm} must be a list or tuple with one entry per active channel, got "
                                 f"{type(seq).__name__}")
        if len(seq) != num_active_channels:
            raise InputValueError(f"{nm} must have one entry per active channel ({num_active_channels}), "
                                  f"got {len(seq)}")
    if x.numel() % num_channels:
        raise InputValueError(f"x has {x.numel()} items, not a multiple of num_channels={num_channels}")
    counter_dtype = count_dtype(x.numel() // num_channels, counter_dtype)
    chans = []
    offset = 0
    for c in range(num_active_channels):
        levels_c, lower_c, upper_c = _check_levels_args(x, num_levels[c], lower[c], upper[c], f"num_levels[{c}]")
        bins = levels_c - 1
        chans.append((_integral_bound(lower_c, x.dtype), _integral_bound(upper_c, x.dtype), bins, offset))
        offset += bins
    if offset > 2 ** 31:
        raise InputValueError(f"the channels' bins number {offset} together; at most 2^31 are supported (bin "
                              "indices, offset by channel, are int32)")
    hist = torch.zeros(offset, dtype=counter_dtype, device=x.device)
    int_math = _int_math(x.dtype, [c[:3] for c in chans])
    _launch(_flat(x), hist, channels=chans, num_channels=num_channels, num_active=num_active_channels,
            int_math=int_math, top_inclusive=False, compute=_even_compute(x.dtype, chans, int_math))
    return [hist[c[3]: c[3] + c[2]] for c in chans]


def histogram_range(x: torch.Tensor, levels: torch.Tensor, *, counter_dtype=None,
                    validate: bool = False) -> torch.Tensor:
    """Counts of ``x``'s samples in the bins ``[levels[j], levels[j+1])`` (``levels`` ascending, a
    1-D tensor on ``x``'s device with at least 2 entries). NaN and out-of-range samples are not
    counted. Each sample's bin is found by a binary search over ``levels``.

    Ascending levels (no NaN) are the caller's contract, as in CUB: ``validate=True`` (or
    ``TRITONCUB_DEBUG=1``) checks them, at the price of a device-to-host synchronisation."""
    check_tensor(x, "x", _CHECK_DTYPES)
    check_tensor(levels, "levels", _CHECK_DTYPES, ndim=1, device=x.device)
    if levels.numel() < 2:
        raise InputValueError(f"levels must hold at least 2 boundaries, got {levels.numel()}")
    check_flag(validate, "validate")
    if validate or os.environ.get("TRITONCUB_DEBUG", "0") not in ("", "0"):
        if not bool((levels[1:] >= levels[:-1]).all()):
            raise InputValueError("levels must be ascending (each boundary at least the one before it, no NaN)")
    counter_dtype = count_dtype(x.numel(), counter_dtype)
    int_math = not _is_float(x.dtype) and not _is_float(levels.dtype)
    u64 = getattr(torch, "uint64", None)
    samples = _flat(x)
    if int_math and u64 in (x.dtype, levels.dtype):
        # uint64 samples or levels: both compared exactly as int64 in the sign-flipped order (an
        # unsigned u becomes u - 2^63); negative levels lie below every unsigned sample (the flipped
        # 0), negative samples above every unsigned level (the flipped 2^64 - 1: counted in no bin)
        samples = _sign_flipped(samples, negative_to=torch.iinfo(torch.int64).max)
        lv = _sign_flipped(levels, negative_to=torch.iinfo(torch.int64).min).contiguous()
    else:
        lv = levels.to(torch.int64 if int_math else torch.float64).contiguous()
    hist = torch.zeros(levels.numel() - 1, dtype=counter_dtype, device=x.device)
    _launch(samples, hist, channels=[(0, 1, hist.numel(), 0)], num_channels=1, num_active=1,
            int_math=int_math, top_inclusive=False, levels=lv)
    return hist


def _sign_flipped(t: torch.Tensor, negative_to: int) -> torch.Tensor:
    """Integers as int64 in the order of unsigned 64-bit values (``u ^ 2^63``); negative values (of a
    signed dtype) become ``negative_to``."""
    if t.dtype == getattr(torch, "uint64", None):
        return t.view(torch.int64) ^ torch.iinfo(torch.int64).min
    w = t.to(torch.int64)
    return torch.where(w < 0, negative_to, w ^ torch.iinfo(torch.int64).min)


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------

#: sample dtypes of torch's CUDA histc (its dispatch takes the float and the signed/unsigned byte to
#: long types; not bool, not uint16/32/64)
_HISTC_INT_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _histc_bound(v, name: str, dtype: torch.dtype):
    """A histc bound as torch's CUDA kernel takes it (``Scalar.to<acc_type>``): float32 for 16/32-bit
    float samples, float64 for float64, int64 for integer samples (a float truncated toward zero;
    a value that int64 or float32 cannot hold is an error; a bool is 0 or 1, as torch's Scalar)."""
    if isinstance(v, bool):
        v = int(v)
    if not isinstance(v, (int, float)):
        raise InputTypeError(f"histc: {name} must be a real number, got {type(v).__name__}")
    if dtype.is_floating_point:
        v = float(v)
        if dtype != torch.float64 and math.isfinite(v):
            v32 = float(np.float32(v)) if abs(v) <= float(np.finfo(np.float32).max) else math.inf
            if not math.isfinite(v32):
                raise InputValueError(f"histc: {name} ({v}) cannot be converted to float32 without overflow")
            v = v32
        return v
    if isinstance(v, float):
        if not (math.isfinite(v) and -2.0 ** 63 <= v < 2.0 ** 63):
            raise InputValueError(f"histc: {name} ({v}) cannot be converted to int64 (the bounds of integer "
                                  f"samples are int64)")
        return math.trunc(v)
    if not -2 ** 63 <= v < 2 ** 63:
        raise InputValueError(f"histc: {name} ({v}) cannot be converted to int64 (the bounds of integer "
                              f"samples are int64)")
    return v


def _check_histc_args(x, bins: int) -> None:
    """The checks of histc's arguments that need no data (the real op and its fake implementation)."""
    if bins <= 0:
        raise InputValueError(f"histc: bins must be > 0, got {bins}")
    if bins >= 2 ** 31:
        raise InputValueError(f"histc: bins must be below 2^31 (bin indices are int32), got {bins}")
    if isinstance(x, torch.Tensor) and x.dtype in (torch.bool,) + UINT_DTYPES[1:]:
        raise InputTypeError(f"histc: x has dtype {str(x.dtype).replace('torch.', '')}, which torch's CUDA "
                             f"histc does not take either; supported dtypes are "
                             f"{dtype_names(FLOAT_DTYPES + _HISTC_INT_DTYPES)}")


#: histc and bincount launches remembered per problem (see :func:`_replayed` and :func:`_launch_remembered`)
_HIST_REPLAYS: dict = {}


def _replayable(x: torch.Tensor) -> bool:
    """Whether histograms of ``x`` may be remembered and replayed (:func:`tritoncub._launch.replays_ok`)."""
    return replays_ok(x, (launch, _launch_module.launch))


def _replay_key(x: torch.Tensor, *problem):
    """The key a histogram of ``x`` is remembered under (``problem``: everything else the launches depend
    on that ``x``'s size, dtype, 16-byte alignment and device do not say), or None where nothing is
    remembered (no items, not replayable here, inside a caller's recording of launches, whose record
    would miss launches replayed here, or during a CUDA graph capture: a captured replay would keep the
    entry's parameter block's address, which the cache may free, and a recording would keep a block
    whose contents are only written when the graph runs)."""
    if not x.numel() or not _replayable(x) or recording_launches() or capturing(x.device):
        return None
    return (x.numel(), x.dtype, x.data_ptr() & 15 == 0, x.device, *problem)


def _replayed(key, x: torch.Tensor, hist: torch.Tensor, weights: torch.Tensor | None = None) -> bool:
    """Replay the launches remembered under ``key`` on ``x`` into the zeroed ``hist`` (fresh zeroed
    scratch copies); False when none are (then the caller plans them: :func:`_launch_remembered`)."""
    hit = None if key is None else _HIST_REPLAYS.get(key)
    if hit is None or policy.select("histogram", x.device) is not hit[0]:
        return False
    _, launches, params, scratch = hit
    bufs = [torch.zeros(numel, dtype=hist.dtype, device=hist.device) for numel in scratch]
    ptrs = (x.data_ptr(), hist.data_ptr(), *(() if weights is None else (weights.data_ptr(),)), params.data_ptr())
    replay(launches, ptrs + tuple(b.data_ptr() for b in bufs))
    return True


def _launch_remembered(key, x: torch.Tensor, hist: torch.Tensor, weights: torch.Tensor | None = None, **kw) -> None:
    """:func:`_launch`, its launches remembered under ``key`` (None: not remembered) on the roots ``x``,
    ``hist``, ``weights``, the parameter block (a cached device constant, kept alive by the entry) and
    the zeroed scratch copies."""
    made: dict = {}
    with record_launches() if key is not None else contextlib.nullcontext([]) as rec:
        _launch(x, hist, weights=weights, made=made, **kw)
    if key is None or "pol" not in made:
        return
    roots = (x, hist, *(() if weights is None else (weights,)), made["params"], *made["scratch"])
    launches = relocatable(rec, roots)
    if launches is not None:
        if len(_HIST_REPLAYS) >= 64:
            drop_persistent(_HIST_REPLAYS)   # (waits for the GPU: a queued replay may still read a block)
        _HIST_REPLAYS[key] = (made["pol"], launches, made["params"], tuple(b.numel() for b in made["scratch"]))


def _histc_counts_dtype(dtype: torch.dtype, n: int) -> torch.dtype:
    """The dtype histc counts in: the result's own where every count of ``n`` samples (and every partial
    sum an atomic makes of it) is exact there (float32 up to 2^24 samples, float64, int32 below 2^31, int64),
    so no conversion follows; else :func:`count_dtype`'s integers, converted after. Integer amounts added to
    a float counter below its exact limit give the same bits in any order: still deterministic."""
    if ((dtype == torch.float32 and n <= 1 << 24) or dtype in (torch.float64, torch.int64)
            or (dtype == torch.int32 and n < 2 ** 31)):
        return dtype
    return count_dtype(n)


def _histc_impl(x: torch.Tensor, bins: int, lo, hi) -> torch.Tensor:
    """:func:`histc`. A call with a range of its own (``min < max`` once converted) on a GPU is
    remembered per problem (size, dtype, 16-byte alignment, bins, the bounds as given, device): a later
    call of the same problem under the same policy replays its launches on a fresh zeroed histogram,
    skipping the bounds' conversion and the launch planning (host time per call on an H200 host, 1024
    fp32 samples, 256 bins: see bench/probes/histc_host_probe.py)."""
    _check_histc_args(x, bins)
    check_tensor(x, "x", FLOAT_DTYPES + _HISTC_INT_DTYPES)
    xf = _flat(x)
    # (the bounds by type and repr: -0.0 and 0.0, or True and 1, are other keys)
    replay_key = _replay_key(xf, "histc", bins, type(lo), repr(lo), type(hi), repr(hi))
    if replay_key is not None and replay_key in _HIST_REPLAYS:
        counts = torch.zeros(bins, dtype=_histc_counts_dtype(x.dtype, xf.numel()), device=x.device)
        if _replayed(replay_key, xf, counts):
            return counts.to(x.dtype)
    lo, hi = _histc_bound(lo, "min", x.dtype), _histc_bound(hi, "max", x.dtype)
    if lo > hi:
        raise InputValueError(f"histc: max ({hi}) must be larger than min ({lo})")
    if lo == hi:
        replay_key = None   # (the range comes from the data: not remembered)
        if xf.numel():  # torch's rule: the data's own range (one host sync, as torch does)
            refuse_capture(x.device, "histc with min == max (the data's own range)", "pass the range")
            mn, mx = torch.aminmax(xf)
            if _is_float(x.dtype):
                lo, hi = (float(v) for v in torch.stack([mn, mx]).double().tolist())
            else:
                lo, hi = (int(v) for v in torch.stack([mn, mx]).long().tolist())
        if _is_float(x.dtype) and not (math.isfinite(lo) and math.isfinite(hi)):
            raise InputValueError(f"histc: range of [{lo}, {hi}] is not finite")
        if lo == hi:  # in the bound type, as torch (float32 for 16/32-bit floats)
            if x.dtype in (torch.float16, torch.bfloat16, torch.float32):
                lo, hi = float(np.float32(lo) - np.float32(1)), float(np.float32(hi) + np.float32(1))
            else:
                lo, hi = lo - 1, hi + 1
            if not (_is_float(x.dtype) or -2 ** 63 <= lo < hi < 2 ** 63):
                raise InputValueError(f"histc: the range [{lo}, {hi}] widened around the single value {lo + 1} "
                                      f"overflows int64 (the bound type of torch's CUDA histc for integers)")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InputValueError(f"histc: range of [{lo}, {hi}] is not finite")
    if not lo < hi:
        raise InputValueError(f"histc: max ({hi}) must be larger than min ({lo})")
    counts = torch.zeros(bins, dtype=_histc_counts_dtype(x.dtype, xf.numel()), device=x.device)
    int_math = _int_math(x.dtype, [(lo, hi, bins)])
    # (torch's fp32 arithmetic, except where (max - min) * bins overflows float32, where torch's CUDA formula
    # gives inf / inf or x / inf and piles samples into one bin: then float64, as histogram_even)
    _launch_remembered(replay_key, xf, counts, channels=[(lo, hi, bins, 0)], num_channels=1, num_active=1,
                       int_math=int_math, top_inclusive=True,
                       compute=_even_compute(x.dtype, [(lo, hi, bins)], int_math))
    return counts.to(x.dtype)


@custom_op("tritoncub::histc", mutates_args=(), cudagraph_unsafe=True, differentiable=False,
           schema="(Tensor x, int bins=100, Scalar min=0, Scalar max=0) -> Tensor")
def histc(x: torch.Tensor, bins: int = 100, min: float = 0, max: float = 0) -> torch.Tensor:
    """torch.histc with the results of torch's CUDA kernel: ``bins`` equal bins over ``[min, max]``
    (top edge inclusive); NaN and out-of-range samples are ignored; the result has ``x``'s dtype.

    The bounds are first converted as torch's CUDA kernel converts them: float32 for 16/32-bit float
    samples, float64 for float64 samples, int64 for integer samples (a float bound truncated toward
    zero: ``min=-0.5, max=4.9`` is ``[0, 4]``; one beyond int64 is an error). If the converted bounds
    are equal, the data's min and max are used instead (one host sync), and if those are equal too
    the range is widened by 1 on each side; then ``min < max`` is required.

    Float samples (fp16/bf16/fp32 binned in fp32, fp64 in fp64): bin ``(s - min) * bins / (max - min)``
    truncated, as CUDA torch computes it (CPU torch's ``(s - min) / (max - min) * bins`` may differ for
    a sample on a bin edge). Where ``(max - min) * bins`` exceeds the float32 range, the fp32 formula
    overflows (torch's kernels then put samples in one bin, or none), and fp16/bf16/fp32 samples are
    binned in fp64 instead.

    Integer samples (int8/16/32/64, uint8, as CUDA torch; bool and uint16/32/64 raise, as there): a
    sample counts when ``min <= s <= max`` and falls in bin ``(s - min) * bins // (max - min)``
    (integer division), bin ``bins`` (``s == max``) folded into the last. Counts are returned in ``x``'s
    dtype, so they wrap as CUDA torch's do (``int8`` counts modulo 256). Where CUDA torch's int64
    arithmetic overflows — ``(s - min) * bins >= 2^63``, possible only for int64 samples over ranges
    near 2^63 wide or with huge ``bins`` — its bins wrap around and its kernel writes outside its
    histogram; this operator bins such samples exactly (the wide exact path of
    :func:`histogram_even`), which agrees with torch wherever torch does not overflow.

    These are the rules of torch 2.11's CUDA histc, which the GPU tests compare with; earlier torch
    releases narrowed the int64 bounds to the sample dtype first (e.g. int8 samples with
    ``max=255`` were refused there)."""
    return _histc_impl(x, bins, min, max)


@histc.register_fake
def _(x, bins=100, min=0, max=0):
    _check_histc_args(x, bins)
    if x.dtype not in FLOAT_DTYPES + _HISTC_INT_DTYPES:
        raise InputTypeError(f"histc: x has dtype {x.dtype}; supported dtypes are "
                             f"{dtype_names(FLOAT_DTYPES + _HISTC_INT_DTYPES)}")
    lo, hi = _histc_bound(min, "min", x.dtype), _histc_bound(max, "max", x.dtype)
    if lo > hi:   # (as the op: the bounds are not data)
        raise InputValueError(f"histc: max ({hi}) must be larger than min ({lo})")
    if lo != hi and not (math.isfinite(lo) and math.isfinite(hi)):   # (unequal bounds are the range used)
        raise InputValueError(f"histc: range of [{lo}, {hi}] is not finite")
    n = x.numel()
    if lo == hi and isinstance(n, int) and n == 0 and not math.isfinite(lo):
        # (equal bounds take the data's range; an empty x has none, so they are the range, as in the op)
        raise InputValueError(f"histc: range of [{lo}, {hi}] is not finite")
    return x.new_empty((bins,))


def _check_bincount_args(x, weights, minlength: int) -> None:
    """The checks of bincount's arguments that need no data (the real op and its fake implementation)."""
    check_tensor(x, "x", INT_DTYPES + (torch.uint8,), ndim=1)
    if minlength < 0:
        raise InputValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if weights is not None:
        check_tensor(weights, "weights", ALL_NUMERIC_DTYPES + (torch.bool,), ndim=1, device=x.device)
        if weights.numel() != x.numel():
            raise InputValueError(f"bincount: weights has {weights.numel()} items but x has {x.numel()}")


def _bincount_impl(x: torch.Tensor, weights: torch.Tensor | None, minlength: int) -> torch.Tensor:
    _check_bincount_args(x, weights, minlength)
    if weights is None:
        out_dtype = torch.int64
    else:  # torch's rule: float32 weights sum in float32, every other dtype in float64
        out_dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64
    n = x.numel()
    if n == 0:  # torch's rule: an empty input gives int64 zeros, weights or not
        return torch.zeros(minlength, dtype=torch.int64, device=x.device)
    refuse_capture(x.device, "bincount", "use histogram_even with a known number of bins")
    mn, mx = torch.aminmax(x)
    mn_v, mx_v = torch.stack((mn, mx)).tolist()   # (Python ints, whatever the integer dtype)
    if mn_v < 0:
        raise InputValueError("bincount only supports 1-d non-negative integral inputs (found a negative value)")
    size = max(minlength, mx_v + 1)
    if size >= 2 ** 31:
        raise InputValueError(f"bincount: the result would have {size} bins (max(x) + 1 or minlength); at most "
                              f"2^31 - 1 are supported (bin indices are int32)")
    xc = x.contiguous()
    w = None
    if weights is not None:
        w = weights.contiguous()
        if w.dtype != out_dtype:
            w = w.to(out_dtype)
        if torch.are_deterministic_algorithms_enabled():
            return _bincount_sorted(xc, w, _bincount_counts(xc, None, size, torch.int64), mx_v)
    return _bincount_counts(xc, w, size, out_dtype)


def _bincount_counts(xc: torch.Tensor, w: torch.Tensor | None, size: int, out_dtype: torch.dtype) -> torch.Tensor:
    """The histogram kernel's bincount of ``xc`` into ``size`` bins (``w``: weights, added by atomics)."""
    hist = torch.zeros(size, dtype=out_dtype, device=xc.device)
    # (remembered per size of the result too, and the weights' dtype and alignment: see _replay_key)
    replay_key = _replay_key(xc, "bincount", size, None if w is None else (w.dtype, w.data_ptr() & 15 == 0))
    if not _replayed(replay_key, xc, hist, w):
        _launch_remembered(replay_key, xc, hist, w, channels=[(0, size, size, 0)], num_channels=1, num_active=1,
                           int_math=True, top_inclusive=False)
    return hist



def _bincount_sorted(xc: torch.Tensor, w: torch.Tensor, counts: torch.Tensor, mx: int) -> torch.Tensor:
    """Weighted bincount in a fixed order of additions (deterministic mode), from the exact ``counts``:
    the weights stably sorted by value (only the bits below ``mx``'s top bit: the values are
    non-negative), then each value's run summed as one segment (an empty bin sums to 0)."""
    size = counts.numel()
    _, ws = radix_sort_pairs(xc, w, end_bit=max(1, mx.bit_length()))
    offsets = torch.zeros(size + 1, dtype=torch.int64, device=xc.device)
    torch.cumsum(counts, 0, out=offsets[1:])
    return segmented_reduce(ws, offsets, op="sum", dtype=w.dtype)


@custom_op("tritoncub::bincount", mutates_args=(), cudagraph_unsafe=True)
def bincount(x: torch.Tensor, weights: torch.Tensor | None = None, minlength: int = 0) -> torch.Tensor:
    """torch.bincount: counts (int64) or sums of ``weights`` (float32 for float32 weights, else
    float64) per value of a 1-D non-negative integer tensor; length ``max(x) + 1`` or ``minlength``.
    Sizing the result reads ``max(x)`` back to the host (one sync). Counts are exact; float sums of
    weights may differ in their last bits from call to call (atomic adds), except under
    ``torch.use_deterministic_algorithms(True)``, where they are summed in a fixed order (slower)."""
    return _bincount_impl(x, weights, minlength)


@bincount.register_fake
def _(x, weights=None, minlength=0):
    _check_bincount_args(x, weights, minlength)
    ctx = torch.library.get_ctx()
    size = ctx.new_dynamic_size(min=minlength)
    if weights is None or x.numel() == 0:
        dt = torch.int64
    else:
        dt = torch.float32 if weights.dtype == torch.float32 else torch.float64
    return x.new_empty((size,), dtype=dt)
