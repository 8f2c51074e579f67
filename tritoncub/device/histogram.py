"""DeviceHistogram: counts of samples per bin (CUB's ``DeviceHistogram``), plus ``histc``/``bincount``.

* :func:`histogram_even` — ``num_levels - 1`` equal-width bins over ``[lower, upper)``.
* :func:`histogram_range` — bins given by a sorted array of level boundaries
  (bin ``j`` holds ``levels[j] <= s < levels[j+1]``).
* :func:`multi_histogram_even` — 1..4 interleaved channels (e.g. RGBA pixels), each with its own
  levels, the first ``num_active_channels`` counted; one pass over the samples for all channels.
* torch operators ``torch.ops.tritoncub.histc(x, bins, min, max)`` and
  ``torch.ops.tritoncub.bincount(x, weights, minlength)`` with torch's results.

Samples may be of any integer or float dtype. Bin arithmetic: float samples are binned in fp32
(fp64 for fp64 samples) as ``(s - lower) * bins / (upper - lower)`` (CUDA torch's formula, so
``histc`` matches it bin for bin); integer samples in exact int64 arithmetic
(``(s - lower) * bins // (upper - lower)``) when that cannot overflow, else in fp64. NaN samples fall in
no bin. Samples outside the range are ignored.

How the counting works (CUB's privatised histograms). On compiled NVIDIA GPUs (sm_80+) with the
policy's ``PRIVATE_ALGO=2`` (the tuned sm_90 choice), unweighted equal-width bins are counted with
shared-memory atomics (CUB's BLOCK_HISTO_ATOMIC, through Gluon and inline PTX): persistent programs,
``SMEM_COPIES`` histograms per program, one global atomic per non-empty bin per program at the end;
bin counts beyond shared memory are cut into up to 8 chunks of bins, each a grid row that reads the
samples again. Otherwise each program consumes a contiguous run of
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
and the last bits of a float result — may vary run to run.

Float bins use IEEE division (``tl.math.div_rn``; Triton's plain fp32 ``/`` is approximate and
would move samples that sit on a bin edge).

Counters are int32 by default (CUB's), int64 on request (``counter_dtype``).
"""
from __future__ import annotations

import math
import os

import numpy as np
import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .. import policy
from .._library import custom_op
from .._launch import launch
from .._utils import (ALL_NUMERIC_DTYPES, FLOAT_DTYPES, INT_DTYPES, cdiv, check_tensor,
                      interpreter_active, next_power_of_2, num_sms, smem_atomics_ok)
from ..agent.grid_mapping import grid_size
from ..block.radix_rank import smem_count_words_if
from ..thread.trunc_div import fast_ok, trunc_div_rn

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
def _even_bins(s, ch, params_ptr, NUM_CHANNELS: tl.constexpr, NUM_ACTIVE: tl.constexpr,
               INT_MATH: tl.constexpr, COMPUTE: tl.constexpr, TOP_INCLUSIVE: tl.constexpr,
               FAST_DIV: tl.constexpr = False):
    """(global bin index, valid) of each sample for equal-width bins. ``params``: 16 values,
    lower[4], upper[4], bins[4], offset[4] (int64 when ``INT_MATH``, else float64). ``INT_MATH``:
    0 float arithmetic, 1 exact integer arithmetic, 2 integer bins one value wide (every channel's
    ``upper - lower == bins``: the bin is ``s - lower``, no division). ``FAST_DIV`` (one channel, fp32
    arithmetic, compiled for NVIDIA, a divisor :func:`~tritoncub.thread.trunc_div.fast_ok` accepts):
    the bin division through :func:`~tritoncub.thread.trunc_div.trunc_div_rn`'s fast path."""
    lo = _channel_param(params_ptr, 0, ch, NUM_CHANNELS)
    hi = _channel_param(params_ptr, 1, ch, NUM_CHANNELS)
    nb = _channel_param(params_ptr, 2, ch, NUM_CHANNELS).to(tl.int32)
    off = _channel_param(params_ptr, 3, ch, NUM_CHANNELS).to(tl.int32)
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
                           PREFETCH: gl.constexpr = False):
    """Equal-width bins counted with shared-memory atomics (CUB's BLOCK_HISTO_ATOMIC): each program
    keeps ``COPIES`` histograms of ``SMEM_BINS`` counters in shared memory (warp ``w`` counts into copy
    ``w % COPIES``), loops over tiles ``pid, pid + programs, ...`` of ``WARPS * 32 * ITEMS`` samples,
    and finally adds its counts to ``hist`` with one global atomic per non-empty bin. Samples outside
    every bin are not counted (a predicated atomic). More bins than shared memory holds: the bins are
    cut into chunks of ``SMEM_BINS``, ``program_id(1)`` is the chunk, and each chunk's programs read
    every sample (one read of the input per chunk); ``CHUNKED=False`` (all bins in one chunk) skips the
    per-sample chunk test; ``PREFETCH`` loads tile ``t + programs`` before counting tile ``t``."""
    TILE: gl.constexpr = WARPS * ITEMS * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    CH: gl.constexpr = SMEM_BINS if SMEM_BINS < 1024 else 1024    # bins zeroed / flushed per step
    LH: gl.constexpr = gl.BlockedLayout([1, CH // 32], [1, 32], [WARPS, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [COPIES, SMEM_BINS], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    for c0 in gl.static_range(0, SMEM_BINS, CH):
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
        smem_count_words_if(copy_base + rel, counted.to(gl.int32))
    gl.thread_barrier()
    for c0 in gl.static_range(0, SMEM_BINS, CH):
        c = gl.sum(smem.slice(c0, CH, 1).load(LH), 0)
        bins = bin_base + c0 + gl.arange(0, CH, layout=gl.SliceLayout(0, LH))
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
           "ATOMIC_COPIES": [1, 8, 64], "SMEM_COPIES": [1, 2, 4, 8], "PREFETCH": [0, 1], "num_warps": [4, 8, 16],
           "num_stages": [1, 2, 3]},
    fallback={"TILE": 2048, "PROGRAMS_PER_SM": 8, "MAX_PRIVATE_BINS": 1024, "PRIVATE_ALGO": 0,
              "ATOMIC_COPIES": 8, "SMEM_COPIES": 4, "PREFETCH": 0, "num_warps": 4, "num_stages": 2},
    doc="TILE samples per loop step; PROGRAMS_PER_SM programs per multiprocessor (each takes a "
        "contiguous run of tiles); MAX_PRIVATE_BINS: the largest total bin count counted in a private "
        "register histogram (above it, one global atomic per sample); PRIVATE_ALGO 0 = tl.histogram, "
        "1 = one-hot product on the tensor cores, 2 = shared-memory atomics (compiled NVIDIA sm_80+, "
        "unweighted equal-width bins that fit in shared memory; any bin count up to that, "
        "MAX_PRIVATE_BINS does not apply; SMEM_COPIES histogram copies per program, the warps spread "
        "over them; PREFETCH 1 loads the next tile before counting this one); ATOMIC_COPIES: copies of the histogram the atomic "
        "path spreads its programs over (summed afterwards; at most 16 MB of copies).")


# ----------------------------------------------------------------------------------------------
# Launchers
# ----------------------------------------------------------------------------------------------

_CHECK_DTYPES = ALL_NUMERIC_DTYPES


def _is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def _compute_dtype(dtype: torch.dtype):
    """fp32 for 16/32-bit float samples, fp64 for fp64 and for integer samples binned in floats."""
    return tl.float32 if dtype in (torch.float16, torch.bfloat16, torch.float32) else tl.float64


def _launch(x: torch.Tensor, hist: torch.Tensor, *, channels: list[tuple], num_channels: int,
            num_active: int, int_math: bool, top_inclusive: bool, weights: torch.Tensor | None = None,
            levels: torch.Tensor | None = None, pol: policy.Policy | None = None) -> None:
    """Run the kernel. ``channels``: per active channel (lower, upper, bins, offset into ``hist``)."""
    n = x.numel()
    if n == 0:
        return
    params = _params(channels, int_math, x.device)
    if int_math and levels is None and all(int(c[1]) - int(c[0]) == int(c[2]) for c in channels):
        int_math = 2   # unit-width integer bins (bincount, 8-bit pixels): no division per sample
    pol = pol or policy.select("histogram", x.device)
    tile = pol["TILE"]
    # the fast exact bin division (thread/trunc_div.py): one fp32 channel, compiled for NVIDIA
    fast_div = (num_channels == 1 and not int_math and levels is None and _compute_dtype(x.dtype) == tl.float32
                and x.device.type == "cuda" and torch.version.hip is None and not interpreter_active()
                and fast_ok(float(np.float32(channels[0][1]) - np.float32(channels[0][0]))))
    total_bins = hist.numel()
    if pol["PRIVATE_ALGO"] == 2 and weights is None and levels is None and smem_atomics_ok(x.device):
        warps = pol.num_warps
        smem_bins = max(32, next_power_of_2(total_bins))
        copies = min(pol["SMEM_COPIES"], warps)
        limit = _smem_limit(x.device)
        chunks = 1   # bin chunks, each counted in shared memory over its own read of the samples
        while smem_bins * 4 > limit and chunks < _MAX_BIN_CHUNKS:
            smem_bins //= 2
            chunks *= 2
        while copies > 1 and copies * smem_bins * 4 > limit:
            copies //= 2
        if copies * smem_bins * 4 <= limit:
            items = max(1, tile // (32 * warps))
            num_tiles = cdiv(n, 32 * warps * items)
            # persistent programs: no more per SM than can be resident at once (warps, shared memory)
            per_sm = max(1, min(pol["PROGRAMS_PER_SM"], 64 // warps, (limit + (4 << 10)) // (copies * smem_bins * 4)))
            programs = max(1, min(num_tiles, cdiv(num_sms(x.device) * per_sm, chunks)))
            launch(_histogram_smem_kernel, (programs, chunks),
                   x, hist, params, n, num_tiles, total_bins,
                   NUM_CHANNELS=num_channels, NUM_ACTIVE=num_active, INT_MATH=int_math,
                   COMPUTE=_compute_dtype(x.dtype), TOP_INCLUSIVE=top_inclusive, WARPS=warps, ITEMS=items,
                   SMEM_BINS=smem_bins, COPIES=copies, CHUNKED=chunks > 1, FAST_DIV=fast_div and items % 4 == 0,
                   PREFETCH=bool(pol["PREFETCH"]), num_warps=warps)
            return
    private = (weights is None and total_bins <= pol["MAX_PRIVATE_BINS"])
    algo = pol["PRIVATE_ALGO"] if private else 0
    private_bins = max(32, next_power_of_2(total_bins))
    bl = max(16, 1 << ((private_bins.bit_length() - 1) // 2))
    bh = max(16, private_bins // bl)
    if algo == 1:  # keep the one-hot operands of a tile within 64 KB of shared memory
        tile = min(tile, 16384 // max(bh, bl))
    num_tiles = cdiv(n, tile)
    max_programs = num_sms(x.device) * pol["PROGRAMS_PER_SM"]
    if algo == 1:  # fp32 counts stay exact: at most 2^24 samples per program
        max_programs = max(max_programs, cdiv(n, 1 << 24))
    programs, tpp = grid_size(num_tiles, max_programs, 0)
    range_mode = levels is not None
    num_levels = levels.numel() if range_mode else 0
    copies = 1
    target = hist
    if not private:
        copies = max(1, min(pol["ATOMIC_COPIES"], next_power_of_2(programs),
                            (16 << 20) // (total_bins * hist.element_size())))
        copies = 1 << (copies.bit_length() - 1)  # a power of two
        if copies > 1:
            target = torch.zeros(copies * total_bins, dtype=hist.dtype, device=hist.device)
    launch(_histogram_kernel, (programs,),
           x, weights if weights is not None else x, target, levels if range_mode else x, params, n,
           num_tiles, tpp, num_levels, total_bins, copies,
           NUM_CHANNELS=num_channels, NUM_ACTIVE=num_active, RANGE_MODE=range_mode,
           STEPS=max(1, int(num_levels).bit_length()), INT_MATH=int_math, COMPUTE=_compute_dtype(x.dtype),
           TOP_INCLUSIVE=top_inclusive, WEIGHTED=weights is not None, PRIVATE=private, PRIVATE_ALGO=algo,
           PRIVATE_BINS=private_bins if private else 32, BH=bh, BL=bl, TILE=tile,
           FAST_DIV=fast_div and tile % (128 * pol.num_warps) == 0, num_warps=pol.num_warps,
           num_stages=pol.num_stages)
    if copies > 1:
        block = max(16, 4096 // copies)
        launch(_sum_copies_kernel, (cdiv(total_bins, block),), target, hist, total_bins, COPIES=copies, BLOCK=block,
               num_warps=4)


#: at most this many bin chunks (reads of the samples) on the shared-memory path; more bins than
#: that use the global-atomic path
_MAX_BIN_CHUNKS = 8


def _smem_limit(device: torch.device) -> int:
    """Bytes of shared memory one program may use for its histograms."""
    props = torch.cuda.get_device_properties(device)
    return int(getattr(props, "shared_memory_per_block_optin", 48 << 10)) - (4 << 10)


_PARAMS_CACHE: dict = {}


def _params(channels, int_math: bool, device) -> torch.Tensor:
    """The kernel's per-channel parameter block on ``device`` (cached: repeated calls with the same
    levels copy nothing to the device)."""
    ch = list(channels) + [channels[-1]] * (MAX_CHANNELS - len(channels))
    conv = int if int_math else float
    vals = tuple(conv(c[0]) for c in ch) + tuple(conv(c[1]) for c in ch) + tuple(
        conv(c[2]) for c in ch) + tuple(conv(c[3]) for c in ch)
    key = (vals, int_math, str(device))
    t = _PARAMS_CACHE.get(key)
    if t is None:
        if len(_PARAMS_CACHE) > 256:
            _PARAMS_CACHE.clear()
        t = torch.tensor(vals, dtype=torch.int64 if int_math else torch.float64, device=device)
        _PARAMS_CACHE[key] = t
    return t


def _int_math_ok(dtype: torch.dtype, lower, upper, bins: int) -> bool:
    """Exact int64 binning is safe when ``(s - lower) * bins`` cannot overflow int64 for in-range
    samples (uint64 samples above 2^63 do not convert to int64: they use fp64)."""
    if _is_float(dtype) or dtype == getattr(torch, "uint64", None):
        return False
    if isinstance(lower, float) or isinstance(upper, float):
        return False
    return (int(upper) - int(lower)) * bins < 2 ** 63


def _check_levels_args(x, num_levels, lower, upper, name="num_levels"):
    if isinstance(num_levels, bool) or not isinstance(num_levels, int):
        raise TypeError(f"{name} must be an int, got {type(num_levels).__name__}")
    if num_levels < 2:
        raise ValueError(f"{name} must be >= 2 (bins = {name} - 1), got {num_levels}")
    for v, nm in ((lower, "lower"), (upper, "upper")):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{nm} must be a Python int or float, got {type(v).__name__}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{nm} must be finite, got {v}")
    if not lower < upper:
        raise ValueError(f"lower ({lower}) must be smaller than upper ({upper})")


def _flat(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)


def histogram_even(x: torch.Tensor, num_levels: int, lower, upper, *, counter_dtype=torch.int32
                   ) -> torch.Tensor:
    """Counts of ``x``'s samples in ``num_levels - 1`` equal-width bins over ``[lower, upper)``.

    Bin ``j`` holds ``lower + j*w <= s < lower + (j+1)*w`` with ``w = (upper - lower) / bins``
    (CUB's rule: upper bound exclusive). NaN and out-of-range samples are not counted. Returns
    ``counter_dtype`` (int32 or int64) counts of shape ``(num_levels - 1,)``; exact and deterministic.
    Integer samples are binned in exact integer arithmetic unless ``(upper - lower) * bins`` overflows
    int64; then range test and bin are computed in float64, and samples beyond 2^53 in magnitude are
    rounded first (e.g. ``2**62`` against an upper bound of ``2**62 + 1``: not counted).
    """
    check_tensor(x, "x", _CHECK_DTYPES)
    _check_levels_args(x, num_levels, lower, upper)
    if counter_dtype not in (torch.int32, torch.int64):
        raise TypeError(f"counter_dtype must be int32 or int64, got {counter_dtype}")
    bins = num_levels - 1
    hist = torch.zeros(bins, dtype=counter_dtype, device=x.device)
    im = _int_math_ok(x.dtype, lower, upper, bins)
    if not _is_float(x.dtype) and not im:
        lower, upper = float(lower), float(upper)
    _launch(_flat(x), hist, channels=[(lower, upper, bins, 0)], num_channels=1, num_active=1,
            int_math=im, top_inclusive=False)
    return hist


def multi_histogram_even(x: torch.Tensor, num_channels: int, num_active_channels: int, num_levels,
                         lower, upper, *, counter_dtype=torch.int32) -> list[torch.Tensor]:
    """Histograms of interleaved multi-channel samples (``x`` flat: pixel ``p`` channel ``c`` at
    ``x[p*num_channels + c]``), one per active channel (the first ``num_active_channels``).

    ``num_levels``, ``lower``, ``upper`` are sequences with one entry per active channel. The length of
    ``x`` must be a multiple of ``num_channels``. All channels are counted in one pass."""
    check_tensor(x, "x", _CHECK_DTYPES)
    if not (1 <= num_channels <= MAX_CHANNELS):
        raise ValueError(f"num_channels must be in 1..{MAX_CHANNELS}, got {num_channels}")
    if not (1 <= num_active_channels <= num_channels):
        raise ValueError(f"num_active_channels must be in 1..num_channels ({num_channels}), "
                         f"got {num_active_channels}")
    for nm, seq in (("num_levels", num_levels), ("lower", lower), ("upper", upper)):
        if len(seq) != num_active_channels:
            raise ValueError(f"{nm} must have one entry per active channel ({num_active_channels}), "
                             f"got {len(seq)}")
    if x.numel() % num_channels:
        raise ValueError(f"x has {x.numel()} items, not a multiple of num_channels={num_channels}")
    if counter_dtype not in (torch.int32, torch.int64):
        raise TypeError(f"counter_dtype must be int32 or int64, got {counter_dtype}")
    chans = []
    offset = 0
    im = True
    for c in range(num_active_channels):
        _check_levels_args(x, num_levels[c], lower[c], upper[c], f"num_levels[{c}]")
        bins = num_levels[c] - 1
        im = im and _int_math_ok(x.dtype, lower[c], upper[c], bins)
        chans.append((lower[c], upper[c], bins, offset))
        offset += bins
    hist = torch.zeros(offset, dtype=counter_dtype, device=x.device)
    _launch(_flat(x), hist, channels=chans, num_channels=num_channels,
            num_active=num_active_channels, int_math=im, top_inclusive=False)
    return [hist[c[3]: c[3] + c[2]] for c in chans]


def histogram_range(x: torch.Tensor, levels: torch.Tensor, *, counter_dtype=torch.int32,
                    validate: bool = False) -> torch.Tensor:
    """Counts of ``x``'s samples in the bins ``[levels[j], levels[j+1])`` (``levels`` ascending, a
    1-D tensor on ``x``'s device with at least 2 entries). NaN and out-of-range samples are not
    counted. Each sample's bin is found by a binary search over ``levels``.

    Ascending levels (no NaN) are the caller's contract, as in CUB: ``validate=True`` (or
    ``TRITONCUB_DEBUG=1``) checks them, at the price of a device-to-host synchronisation."""
    check_tensor(x, "x", _CHECK_DTYPES)
    check_tensor(levels, "levels", _CHECK_DTYPES, ndim=1, device=x.device)
    if levels.numel() < 2:
        raise ValueError(f"levels must hold at least 2 boundaries, got {levels.numel()}")
    if validate or os.environ.get("TRITONCUB_DEBUG", "0") not in ("", "0"):
        if not bool((levels[1:] >= levels[:-1]).all()):
            raise ValueError("levels must be ascending (each boundary at least the one before it, no NaN)")
    if counter_dtype not in (torch.int32, torch.int64):
        raise TypeError(f"counter_dtype must be int32 or int64, got {counter_dtype}")
    int_math = not _is_float(x.dtype) and not _is_float(levels.dtype) and x.dtype != getattr(
        torch, "uint64", None)
    lv = levels.to(torch.int64 if int_math else torch.float64).contiguous()
    hist = torch.zeros(levels.numel() - 1, dtype=counter_dtype, device=x.device)
    _launch(_flat(x), hist, channels=[(0, 1, hist.numel(), 0)], num_channels=1, num_active=1,
            int_math=int_math, top_inclusive=False, levels=lv)
    return hist


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------

def _histc_impl(x: torch.Tensor, bins: int, lo: float, hi: float) -> torch.Tensor:
    if bins <= 0:
        raise ValueError(f"histc: bins must be > 0, got {bins}")
    check_tensor(x, "x", FLOAT_DTYPES)
    if lo > hi:
        raise ValueError(f"histc: max ({hi}) must be larger than min ({lo})")
    xf = _flat(x)
    if lo == hi:
        if xf.numel() == 0:
            lo, hi = 0.0, 0.0
        else:  # torch's rule: the data's own range (one host sync, as torch does)
            mn, mx = torch.aminmax(xf)
            lo, hi = (float(v) for v in torch.stack([mn, mx]).double().tolist())
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"histc: range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histc: range of [{lo}, {hi}] is not finite")
    counts = torch.zeros(bins, dtype=torch.int64 if xf.numel() >= 2 ** 31 else torch.int32, device=x.device)
    _launch(xf, counts, channels=[(lo, hi, bins, 0)], num_channels=1, num_active=1, int_math=False,
            top_inclusive=True)
    return counts.to(x.dtype)


@custom_op("tritoncub::histc", mutates_args=())
def histc(x: torch.Tensor, bins: int = 100, min: float = 0.0, max: float = 0.0) -> torch.Tensor:
    """torch.histc: ``bins`` equal bins over ``[min, max]`` (top edge inclusive); ``min == max`` uses
    the data's min and max (then widened by 1 each side if they are equal); NaN and out-of-range
    samples are ignored; the result has ``x``'s dtype. Floating samples only (torch's CPU histc; its
    CUDA kernel also takes integers, with integer arithmetic that this operator does not reproduce:
    use ``bincount`` or ``histogram_even`` for integer samples)."""
    return _histc_impl(x, bins, float(min), float(max))


@histc.register_fake
def _(x, bins=100, min=0.0, max=0.0):
    if bins <= 0:
        raise ValueError(f"histc: bins must be > 0, got {bins}")
    return x.new_empty((bins,))


def _bincount_impl(x: torch.Tensor, weights: torch.Tensor | None, minlength: int) -> torch.Tensor:
    check_tensor(x, "x", INT_DTYPES + (torch.uint8,), ndim=1)
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if weights is not None:
        check_tensor(weights, "weights", ALL_NUMERIC_DTYPES + (torch.bool,), ndim=1, device=x.device)
        if weights.numel() != x.numel():
            raise ValueError(f"bincount: weights has {weights.numel()} items but x has {x.numel()}")
    if weights is None:
        out_dtype = torch.int64
    else:  # torch's rule: float32 weights sum in float32, every other dtype in float64
        out_dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64
    n = x.numel()
    if n == 0:  # torch's rule: an empty input gives int64 zeros, weights or not
        return torch.zeros(minlength, dtype=torch.int64, device=x.device)
    mn, mx = torch.aminmax(x)
    mn_v, mx_v = (int(v) for v in torch.stack([mn.to(torch.int64), mx.to(torch.int64)]).tolist())
    if mn_v < 0:
        raise ValueError("bincount only supports 1-d non-negative integral inputs (found a negative value)")
    size = max(minlength, mx_v + 1)
    if weights is None:
        hist = torch.zeros(size, dtype=torch.int64, device=x.device)
        _launch(x.contiguous(), hist, channels=[(0, size, size, 0)], num_channels=1, num_active=1,
                int_math=True, top_inclusive=False)
        return hist
    hist = torch.zeros(size, dtype=out_dtype, device=x.device)
    w = weights.contiguous()
    if w.dtype != out_dtype:
        w = w.to(out_dtype)
    _launch(x.contiguous(), hist, channels=[(0, size, size, 0)], num_channels=1, num_active=1,
            int_math=True, top_inclusive=False, weights=w)
    return hist



@custom_op("tritoncub::bincount", mutates_args=())
def bincount(x: torch.Tensor, weights: torch.Tensor | None = None, minlength: int = 0) -> torch.Tensor:
    """torch.bincount: counts (int64) or sums of ``weights`` (float32 for float32 weights, else
    float64) per value of a 1-D non-negative integer tensor; length ``max(x) + 1`` or ``minlength``.
    Sizing the result reads ``max(x)`` back to the host (one sync)."""
    return _bincount_impl(x, weights, minlength)


@bincount.register_fake
def _(x, weights=None, minlength=0):
    ctx = torch.library.get_ctx()
    size = ctx.new_dynamic_size(min=minlength)
    if weights is None or x.numel() == 0:
        dt = torch.int64
    else:
        dt = torch.float32 if weights.dtype == torch.float32 else torch.float64
    return x.new_empty((size,), dtype=dt)
