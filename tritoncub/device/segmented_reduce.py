"""DeviceSegmentedReduce: one reduction per segment (CUB's ``DeviceSegmentedReduce``).

Device API::

    segmented_reduce(x, begin_offsets, end_offsets, op)         CUB's form: segment i is
                                                                x[begin[i]:end[i]] (empty -> identity)
    reduce_rows(x2d, op)                                        every row of a 2-D tensor
    segmented_reduce(..., op="user", combine_fn=f, init=v)      a user ``@triton.jit`` combine
    segmented_reduce(..., op="user", ..., transform_fn=t)       the same of t(x) (transform_reduce)
    segmented_reduce((x1, x2), ..., op="user", combine_fn=f,    tuples: k_in inputs, k accumulators
                     init=(v1, v2))                             (as the device-wide ``reduce``)

``op`` is one of ``sum`` (fp16/bf16 accumulate in fp32, integers in int64; float results keep x's
dtype, integer ones are int64 as torch.sum's, unless ``dtype`` is given: items are then converted to
it first, as torch.sum(x, dtype=...) does), ``min``, ``max`` (NaN propagates, as torch), ``argmin``, ``argmax``
(value and *offset within the segment* of the first extreme, as CUB's KeyValuePair; a NaN wins),
``mean`` (sum / length; an empty segment gives NaN, as torch.segment_reduce). Empty segments give the
identity: 0 for sum, +inf / the largest integer for min, -inf / the smallest for max (as
``torch.segment_reduce``), index -1 for argmin/argmax (no item). For ``op="user"`` each segment gives
``init (+) x_b (+) ... (+) x_(e-1)`` with ``init`` combined exactly once, as the device-wide ``reduce``
(an empty segment gives ``init``); ``combine_fn`` must be associative and commutative. User reductions
take the device-wide ``reduce``'s tuple forms: ``x`` a tuple of k_in equally long tensors (rows: equally
shaped), ``init`` and ``dtype`` k-tuples, ``combine_fn`` of 2k arguments returning a k-tuple,
``transform_fn`` from k_in tiles to k tiles; the result is then a tuple of k tensors (e.g. an argmax
over ``(values, indices)``, or ``(sum, sum of squares)`` of one input through a transform). The
user path needs no identity: lanes that have not taken an item yet are tracked, and skipped by the
final tree. One kernel body serves both paths: the built-in ops launch it through plain pointer
arguments (the cheapest launch), user ops through tuples of pointers.

Strategy by segment length, through the ``segmented_reduce`` policy's buckets (one kernel, its
constexprs chosen by the bucket — CUB's small/medium/large segment agents):

* ``short``  many segments per program (``ROWS`` > 1), a narrow ``BLOCK`` per row: a "logical warp" per
  segment;
* ``medium`` one segment (or a few) per program, looping over it in ``BLOCK``-item tiles;
* ``segments`` the same kernel tuned for offsets of random lengths (mean length <= 16384);
* ``long``   a multi-program split: each segment is cut into ``SPLIT_CHUNK``-item pieces, each piece
  reduced by its own program into a partial, and a second launch (the columns kernel, over
  ``[segments, pieces, 1]``) reduces the partials of each segment in piece order (sum/min/max/mean/
  argmin/argmax: the arg ops' second pass picks the first winning piece and reads its partial's item
  offset in the segment; user ops stay one program per segment).

The bucket comes from the row length (rows) or from the *mean* segment length ``numel / segments``
(offsets), so no host synchronisation is needed; skewed lengths still give correct results.
Deterministic: each segment's reduction order depends only on its length, the policy and, for
vectorised loads, where the segment starts within a vector window (``start % VEC``; ``VEC`` comes
from the input's alignment): the same input gives bitwise the same result run to run, but two equal
segments at different offsets may differ in the last bits of a float sum.

Offsets are the caller's contract (monotone is not needed, but ``0 <= begin``, ``end <= numel``;
``end < begin`` counts as empty): ``validate=True`` (or ``TRITONCUB_DEBUG=1``) checks them, at
the price of a device-to-host synchronisation.
"""
from __future__ import annotations

import builtins as _bi
import math
import os

import torch
import triton
import triton.language as tl

from .. import policy
from .._launch import bind, direct_ok, launch, recording_launches
from .._utils import (TL_DTYPE, InputTypeError, InputValueError, capturing, cdiv, check_flag, check_same_device,
                      check_tensor, interpreter_active, next_power_of_2, no_host_data, num_sms, persistent)
from .reduce import (OP_ARGMAX, OP_ARGMIN, OP_MAX, OP_MIN, OP_SUM, OP_USER, SUM_KERNEL_DTYPES, SUPPORTED_DTYPES, UserAccumulators,
                     _as_tuple, _builtin_combine, _builtin_tile_reduce, _call_combine, _define_op, _log2, _shr, _storage_view,
                     acc_dtype, identity, sum_dtype, user_operands)

OPS = ("sum", "min", "max", "argmin", "argmax", "mean", "user")
_OP_CODE = {"sum": 0, "mean": 0, "min": 1, "max": 2, "argmin": 3, "argmax": 4, "user": 5}


@triton.jit
def _segment_bounds(work, begins, ends, row_len, chunk, split, UNIFORM: tl.constexpr):
    """[begin, end) of work items ``work`` (segment ``work // split``, piece ``work % split``). Pieces
    are ``chunk`` items, or ``ceil(length / split)`` for a segment longer than ``split * chunk`` (the
    split is sized from the mean length: the pieces must still cover every segment)."""
    seg = work // split
    part = work - seg * split
    if UNIFORM:
        b = seg.to(tl.int64) * row_len
        e = b + row_len
    else:
        b = tl.load(begins + seg).to(tl.int64)
        e = tl.load(ends + seg).to(tl.int64)
    piece = tl.maximum((e - b + split - 1) // split, chunk)
    b2 = b + part.to(tl.int64) * piece
    e2 = tl.minimum(e, b2 + piece)
    return b, b2, tl.maximum(e2 - b2, 0)


@triton.jit
def _segment_step(accs, acc_i, xs, outs, win_start, k, win_len, lead, length, ident, OP: tl.constexpr,
                  COMBINE: tl.constexpr, TRANSFORM: tl.constexpr, K_IN: tl.constexpr, K: tl.constexpr,
                  BLOCK: tl.constexpr, CACHE_MODIFIER: tl.constexpr, EVICTION: tl.constexpr,
                  BOOL_MASK: tl.constexpr, WHOLE_ROWS: tl.constexpr):
    """Fold items ``[k, k + BLOCK)`` of each row's load window into the ``[ROWS, BLOCK]`` accumulators
    (a k-tuple: one tile for the built-in ops; user ops: ``K`` tiles from ``K_IN`` inputs; bit ``j`` of
    ``BOOL_MASK``: accumulator ``j`` is bool, see :func:`~tritoncub.device.reduce.to_accumulator`).

    The window starts ``lead`` items before the row and is padded to whole vectors, so the load's
    mask (``col < win_len``) is constant over a vector and the loads are vectorised; the row's own
    items are then picked by ``0 <= col - lead < length``. ``WHOLE_ROWS``: the window is the row itself
    (``lead`` 0, ``length`` = ``win_len``), so every item the load's mask lets through is the row's."""
    col = k + tl.arange(0, BLOCK)[None, :]
    vm = col < win_len[:, None]
    offs = win_start[:, None] + col
    vals = ()
    for j in tl.static_range(K_IN):
        vals = vals + (tl.load(xs[j] + offs, mask=vm, other=0, cache_modifier=CACHE_MODIFIER,
                               eviction_policy=EVICTION),)
    if WHOLE_ROWS:
        rel = col
        m = vm
    else:
        rel = col - lead[:, None]
        m = vm & (rel >= 0) & (rel < length[:, None])
    if OP == OP_USER:
        vs = user_operands(vals, outs, TRANSFORM, K, BOOL_MASK)   # (transform_fn, then accumulator types)
        both = _call_combine(accs, vs, COMBINE, K)
        # acc_i >= 0: the lane holds an item (its first item is taken as it is: no identity needed)
        res = ()
        for j in tl.static_range(K):
            res = res + (tl.where(m, tl.where(acc_i >= 0, both[j].to(accs[j].dtype), vs[j]), accs[j]),)
        accs = res
        acc_i = tl.where(m, 0, acc_i)
    else:
        acc = accs[0]
        v = tl.where(m, vals[0].to(acc.dtype), ident).to(acc.dtype)
        # (later columns hold larger offsets in the same lane)
        acc, acc_i = _fold_items(acc, acc_i, v, m, rel.to(acc_i.dtype), OP)
        accs = (acc,)
    return accs, acc_i


@triton.jit
def _fold_items(acc, acc_i, v, m, pos, OP: tl.constexpr):
    """Fold the item tile ``v`` (lanes off ``m`` hold the identity) into the accumulators of a built-in
    op; arg ops note ``pos`` where they take an item. The items must come in order within a lane: ties
    keep the earlier item, a NaN wins over a number (so the first NaN stays), and a lane's first item is
    always taken (it may equal the identity, e.g. -inf for argmax)."""
    if (OP == OP_SUM) or (OP == OP_MIN) or (OP == OP_MAX):
        acc, _ = _builtin_combine(acc, acc_i, v, acc_i, OP)
    else:
        if OP == OP_ARGMIN:
            take = m & ((acc_i < 0) | (v < acc) | ((v != v) & (acc == acc)))
        else:
            take = m & ((acc_i < 0) | (v > acc) | ((v != v) & (acc == acc)))
        acc = tl.where(take, v, acc)
        acc_i = tl.where(take, pos, acc_i)
    return acc, acc_i


@triton.jit
def _tree_reduce_present(accs, present, ROWS: tl.constexpr, N: tl.constexpr, COMBINE: tl.constexpr,
                         K: tl.constexpr):
    """Reduce a k-tuple of ``[ROWS, N]`` tiles along axis 1 by a pairwise tree, skipping lanes that hold
    no item (``present`` false): ``(k-tuple of [ROWS, 1] results, [ROWS, 1] whether any lane held an
    item)``."""
    for s in tl.static_range(_log2(N)):
        lo = ()
        hi = ()
        for j in tl.static_range(K):
            a, b = tl.split(tl.reshape(accs[j], (ROWS, _shr(N, s + 1), 2)))
            lo = lo + (a,)
            hi = hi + (b,)
        pa, pb = tl.split(tl.reshape(present, (ROWS, _shr(N, s + 1), 2)))
        both = _call_combine(lo, hi, COMBINE, K)
        res = ()
        for j in tl.static_range(K):
            res = res + (tl.where(pa & pb, both[j].to(lo[j].dtype), tl.where(pa, lo[j], hi[j])),)
        accs = res
        present = pa | pb
    return accs, present


@triton.jit
def _segmented_reduce_program(xs, begins, ends, row_len, num_work, chunk, split, outs, out_idx_ptr, ident, inits,
                              OP: tl.constexpr, COMBINE: tl.constexpr, TRANSFORM: tl.constexpr,
                              K_IN: tl.constexpr, K: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                              UNIFORM: tl.constexpr, CACHE_MODIFIER: tl.constexpr, FOR_LOOP: tl.constexpr,
                              VEC: tl.constexpr, WHOLE_ROWS: tl.constexpr, EVICTION: tl.constexpr,
                              BOOL_MASK: tl.constexpr, ONE_STEP: tl.constexpr, ACC: tl.constexpr,
                              NARROW_POS: tl.constexpr):
    """Each program reduces ``ROWS`` work items (segments or pieces of segments), ``BLOCK`` items of
    each per step, into ``outs[j][work]`` (and ``out_idx[work]``: offset in the segment, arg ops);
    built-in ops accumulate in ``ACC`` and store in ``outs[0]``'s dtype.

    ``xs``/``outs``/``inits``: tuples of pointers; built-in ops read ``xs[0]`` into ``outs[0]``, user
    ops read ``K_IN`` inputs into ``K`` accumulators (``inits[j]``: the j-th init, one item).
    ``VEC`` > 1 (a 16-byte aligned ``x``): each row is read through a window widened to whole
    ``VEC``-item vectors (at most ``VEC - 1`` extra items on each side, inside the same 16-byte
    granules as the row's first and last items), so every load is a full vector load.
    ``WHOLE_ROWS`` (equal rows of ``row_len`` items, not split): rows are read in place instead;
    ``ONE_STEP`` (only with ``WHOLE_ROWS``, and ``row_len <= BLOCK``): one step covers every row, no loop.
    ``NARROW_POS``: the lanes note positions within a work item (arg ops) in int32, else int64."""
    pid = tl.program_id(0)
    work = pid.to(tl.int64) * ROWS + tl.arange(0, ROWS)   # (int64: more than 2^31 rows)
    valid = work < num_work
    seg_begin, starts, length = _segment_bounds(tl.where(valid, work, 0), begins, ends, row_len, chunk,
                                                split, UNIFORM)
    length = tl.where(valid, length, 0)
    if OP == OP_USER:
        accs = ()
        for j in tl.static_range(K):
            accs = accs + (tl.zeros([ROWS, BLOCK], outs[j].dtype.element_ty),)
    else:
        accs = ((tl.zeros([ROWS, BLOCK], ACC) + ident).to(ACC),)
    acc_i = tl.zeros([ROWS, BLOCK], tl.int32 if NARROW_POS else tl.int64) - 1
    none: tl.constexpr = 2147483647 if NARROW_POS else 9223372036854775807   # (past every position)
    if WHOLE_ROWS:
        # equal rows, one program per row: the row itself is the window (vector loads whenever
        # row_len is a multiple of the vector width, which Triton sees from its specialisation)
        win_start = starts
        win_len = tl.where(valid, row_len, 0)
        lead = tl.zeros([ROWS], tl.int64)
    else:
        win_start = (starts // VEC) * VEC
        win_len = tl.where(length > 0, ((starts + length + VEC - 1) // VEC) * VEC - win_start, 0)
        lead = starts - win_start
    if ONE_STEP:
        tl.static_assert(WHOLE_ROWS, "ONE_STEP reads equal rows in place")
        accs, acc_i = _segment_step(accs, acc_i, xs, outs, win_start, 0, win_len, lead, length, ident, OP, COMBINE,
                                    TRANSFORM, K_IN, K, BLOCK, CACHE_MODIFIER, EVICTION, BOOL_MASK, WHOLE_ROWS)
    elif FOR_LOOP:
        longest = tl.max(win_len, 0)
        for k in range(0, longest, BLOCK):
            accs, acc_i = _segment_step(accs, acc_i, xs, outs, win_start, k, win_len, lead, length, ident, OP, COMBINE,
                                        TRANSFORM, K_IN, K, BLOCK, CACHE_MODIFIER, EVICTION, BOOL_MASK, WHOLE_ROWS)
    else:  # the interpreter cannot take a runtime bound in range()
        longest = tl.max(win_len, 0)
        k = longest * 0
        while k < longest:
            accs, acc_i = _segment_step(accs, acc_i, xs, outs, win_start, k, win_len, lead, length, ident, OP, COMBINE,
                                        TRANSFORM, K_IN, K, BLOCK, CACHE_MODIFIER, EVICTION, BOOL_MASK, WHOLE_ROWS)
            k += BLOCK
    if OP == OP_USER:
        r, present = _tree_reduce_present(accs, acc_i >= 0, ROWS, BLOCK, COMBINE, K)
        init = ()
        for j in tl.static_range(K):
            init = init + (tl.zeros([ROWS, 1], outs[j].dtype.element_ty)
                           + tl.load(inits[j]).to(outs[j].dtype.element_ty),)
        r = _call_combine(init, r, COMBINE, K)   # init combined once, before the segment's items
        for j in tl.static_range(K):
            tl.store(outs[j] + work[:, None], tl.where(present, r[j].to(init[j].dtype), init[j]),
                     mask=valid[:, None])
    else:
        # arg ops: lanes that never took an item keep index -1 and the identity value; they must
        # lose ties against real items, so give them an index past every real one
        idx = tl.where(acc_i < 0, none, acc_i)
        r, ri = _builtin_tile_reduce(accs[0], idx, 1, OP)
        tl.store(outs[0] + work, r.to(outs[0].dtype.element_ty), mask=valid)
        if (OP == OP_ARGMIN) or (OP == OP_ARGMAX):
            ri = tl.where(ri == none, -1, ri.to(tl.int64) + (starts - seg_begin))
            tl.store(out_idx_ptr + work, ri, mask=valid)


@triton.jit
def _segmented_reduce_kernel(x_ptr, begins, ends, row_len, num_work, chunk, split, out_ptr, out_idx_ptr, ident,
                             OP: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                             UNIFORM: tl.constexpr, CACHE_MODIFIER: tl.constexpr, FOR_LOOP: tl.constexpr,
                             VEC: tl.constexpr, ACC: tl.constexpr, WHOLE_ROWS: tl.constexpr = False,
                             EVICTION: tl.constexpr = tl.constexpr(""), ONE_STEP: tl.constexpr = False,
                             NARROW_POS: tl.constexpr = False):
    """A built-in reduction (sum/min/max/argmin/argmax) of each work item, accumulated in ``ACC`` and
    stored in ``out``'s dtype (plain pointer arguments: the cheapest launch, and the one the rows plan
    records); ``NARROW_POS``: positions within a work item in int32 (every item shorter than 2^31)."""
    _segmented_reduce_program((x_ptr,), begins, ends, row_len, num_work, chunk, split, (out_ptr,), out_idx_ptr,
                              ident, (out_ptr,), OP, None, None, 1, 1, ROWS, BLOCK, UNIFORM, CACHE_MODIFIER,
                              FOR_LOOP, VEC, WHOLE_ROWS, EVICTION, 0, ONE_STEP, ACC, NARROW_POS)


@triton.jit
def _segmented_reduce_user_kernel(xs, begins, ends, row_len, num_segments, outs, inits,
                                  COMBINE: tl.constexpr, TRANSFORM: tl.constexpr, K_IN: tl.constexpr,
                                  K: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                                  UNIFORM: tl.constexpr, CACHE_MODIFIER: tl.constexpr, FOR_LOOP: tl.constexpr,
                                  VEC: tl.constexpr, WHOLE_ROWS: tl.constexpr, EVICTION: tl.constexpr,
                                  BOOL_MASK: tl.constexpr = 0, ONE_STEP: tl.constexpr = False):
    """A user reduction of each segment over ``K_IN`` inputs into ``K`` accumulators (tuples of
    pointers ``xs``, ``outs``, ``inits``; ``BOOL_MASK``: which accumulators are bool); one program per
    ``ROWS`` segments (no split)."""
    _segmented_reduce_program(xs, begins, ends, row_len, num_segments, 1 << 62, 1, outs, outs[0], 0, inits,
                              OP_USER, COMBINE, TRANSFORM, K_IN, K, ROWS, BLOCK, UNIFORM, CACHE_MODIFIER,
                              FOR_LOOP, VEC, WHOLE_ROWS, EVICTION, BOOL_MASK, ONE_STEP, None, False)


@triton.jit
def _columns_step(acc, acc_i, base, r, r0, r1, cols, cm, B, ident, OP: tl.constexpr, BLOCK_R: tl.constexpr):
    """Fold rows ``[r, r + BLOCK_R)`` (below ``r1``) of the columns ``cols`` into the ``[BLOCK_R, BLOCK_B]``
    accumulators (arg ops: ``acc_i`` the row of each lane's extreme counted from ``r0``, in ``acc_i``'s
    dtype; -1 before its first item)."""
    rr = r + tl.arange(0, BLOCK_R)
    m = (rr < r1)[:, None] & cm[None, :]
    v = tl.load(base + rr[:, None] * B + cols[None, :], mask=m, other=0)
    v = tl.where(m, v.to(acc.dtype), ident).to(acc.dtype)
    # (later rows in the same lane)
    return _fold_items(acc, acc_i, v, m, (rr - r0).to(acc_i.dtype)[:, None] + tl.zeros_like(acc_i), OP)


@triton.jit
def _reduce_columns_kernel(x_ptr, out_ptr, out_idx_ptr, rows_in_ptr, R, B, r_chunk, ident, OP: tl.constexpr,
                           ACC: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_B: tl.constexpr,
                           WIDE_POS: tl.constexpr, ROWS_IN: tl.constexpr, FOR_LOOP: tl.constexpr):
    """A built-in reduction over the middle dim of a contiguous ``[A, R, B]`` tensor:
    ``out[s, a, b]`` = the reduction of ``x[a, r, b]`` over rows ``r`` of chunk ``s`` (``[s * r_chunk,
    (s + 1) * r_chunk)``), accumulated in ``ACC`` and stored in ``out``'s dtype; arg ops: ``out_idx[s, a,
    b]`` = that extreme's ``r`` (the first on ties, the first NaN), or with ``ROWS_IN`` the row that
    ``rows_in[a, r, b]`` names (a pass over earlier chunks' partials: their rows come in chunk order, so
    the first partial on ties holds the first row). Positions within a chunk are int32 unless
    ``WIDE_POS``. Program ``(a * column blocks + i, s)`` takes ``BLOCK_B`` columns ``b`` (block ``i``) and
    loops over the chunk's rows, ``BLOCK_R`` at a time: every load reads whole rows of columns,
    coalesced, with no transpose."""
    col_blocks = tl.cdiv(B, BLOCK_B)
    a = tl.program_id(0) // col_blocks
    s = tl.program_id(1)
    cols = (tl.program_id(0) % col_blocks).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    cm = cols < B
    r0 = s.to(tl.int64) * r_chunk
    r1 = tl.minimum(r0 + r_chunk, R)
    acc = (tl.zeros([BLOCK_R, BLOCK_B], ACC) + ident).to(ACC)
    acc_i = tl.zeros([BLOCK_R, BLOCK_B], tl.int64 if WIDE_POS else tl.int32) - 1
    none: tl.constexpr = 9223372036854775807 if WIDE_POS else 2147483647   # (past every position)
    base = x_ptr + a.to(tl.int64) * R * B
    if FOR_LOOP:
        for r in range(r0, r1, BLOCK_R):
            acc, acc_i = _columns_step(acc, acc_i, base, r, r0, r1, cols, cm, B, ident, OP, BLOCK_R)
    else:  # the interpreter cannot take a runtime bound in range()
        r = r0
        while r < r1:
            acc, acc_i = _columns_step(acc, acc_i, base, r, r0, r1, cols, cm, B, ident, OP, BLOCK_R)
            r += BLOCK_R
    res, ri = _builtin_tile_reduce(acc, tl.where(acc_i < 0, none, acc_i), 0, OP)
    o = (s.to(tl.int64) * (tl.num_programs(0) // col_blocks) + a) * B + cols
    tl.store(out_ptr + o, res.to(out_ptr.dtype.element_ty), mask=cm)
    if (OP == OP_ARGMIN) or (OP == OP_ARGMAX):
        found = ri != none
        row = r0 + ri.to(tl.int64)
        if ROWS_IN:
            row = tl.load(rows_in_ptr + a.to(tl.int64) * R * B + row * B + cols, mask=cm & found, other=-1)
        tl.store(out_idx_ptr + o, tl.where(found, row, -1), mask=cm)


def _valid(c: dict) -> bool:
    if c.get("CACHE_MODIFIER", "") and c.get("EVICTION", ""):
        return False   # ptxas rejects a cache modifier with an eviction policy
    return c["ROWS"] * c["BLOCK"] <= 16384 and c["ROWS"] * c["BLOCK"] >= 32 * c["num_warps"] // 4


SEG_BUCKETS = ("short", "medium", "long", "segments")
policy.register(
    "segmented_reduce",
    space={
        "ROWS": [1, 2, 4, 8, 16, 32, 64, 128],      # segments per program
        "BLOCK": [16, 32, 64, 128, 256, 512, 1024, 2048, 4096],   # items of a segment per step
        "SPLIT_CHUNK": [0, 16384, 65536, 262144],   # items per program of the multi-program split (0: off)
        "CACHE_MODIFIER": ["", ".cg"],
        "EVICTION": ["", "evict_first"],             # L2 hint of the loads (a single-use stream)
        "num_warps": [1, 2, 4, 8, 16],
        "num_stages": [1, 2, 3],
    },
    fallback={"ROWS": 1, "BLOCK": 1024, "SPLIT_CHUNK": 0, "CACHE_MODIFIER": "", "EVICTION": "",
              "num_warps": 4, "num_stages": 2},
    valid=_valid,
    buckets=SEG_BUCKETS + ("default",),
    bucket_fallbacks={"short": {"ROWS": 32, "BLOCK": 64, "num_warps": 4},
                      "medium": {"ROWS": 1, "BLOCK": 1024, "num_warps": 4},
                      "long": {"ROWS": 1, "BLOCK": 4096, "SPLIT_CHUNK": 65536, "num_warps": 8},
                      "segments": {"ROWS": 1, "BLOCK": 512, "num_warps": 4}},
    doc="DeviceSegmentedReduce: bucket = row length class (short <= 128 < medium <= 16384 < long) for rows, "
        "'segments' for offsets of mean length <= 16384 (else long); "
        "ROWS segments per program, BLOCK items per step, SPLIT_CHUNK > 0 splits long segments",
)

#: interpreter tiles (when no policy is passed): small, so CPU tests stay fast
_INTERPRETER_OVERRIDE = {"short": {"ROWS": 4, "BLOCK": 16}, "medium": {"ROWS": 1, "BLOCK": 64},
                         "long": {"ROWS": 1, "BLOCK": 64, "SPLIT_CHUNK": 256}, "segments": {"ROWS": 1, "BLOCK": 32}}


def length_bucket(mean_len: float) -> str:
    if mean_len <= 128:
        return "short"
    if mean_len <= 16384:
        return "medium"
    return "long"


def _select(device, mean_len: float, pol, uniform: bool):
    if pol is not None:
        return pol
    bucket = length_bucket(mean_len)
    if not uniform and bucket != "long":
        bucket = "segments"   # random lengths: tuned apart from equal-length rows
    pol = policy.select("segmented_reduce", device, bucket)
    if interpreter_active():
        pol = policy.Policy(pol.op, {**pol.values, **_INTERPRETER_OVERRIDE[bucket]}, 4, 1, pol.source)
    return pol


def _debug() -> bool:
    return os.environ.get("TRITONCUB_DEBUG", "0") not in ("", "0")


def _out_dtype(op: str, dtype: torch.dtype, out_dtype) -> tuple[torch.dtype, torch.dtype]:
    """(result dtype, accumulator dtype) of a built-in op."""
    if op in ("sum", "mean"):
        res = out_dtype if out_dtype is not None else dtype if dtype.is_floating_point else sum_dtype(dtype)
        if op == "mean" and not res.is_floating_point:
            # (an integer mean would be truncated; torch.mean refuses it too)
            raise InputTypeError(f"mean of {str(dtype).replace('torch.', '')} items needs a floating result: pass "
                                 "dtype=torch.float32 (or another float dtype)")
        return res, acc_dtype(res)
    # min/max of fp16/bf16 compare in fp32 (exact: the result is one of the items)
    st = torch.uint8 if dtype == torch.bool else torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    return dtype, st


def _vector_width(x: torch.Tensor) -> int:
    """Items per 16-byte vector when ``x`` may be read through vector-widened windows: a 16-byte
    aligned GPU tensor (a widened window never leaves the 16-byte granules of the row's first and
    last items). The interpreter reads host memory item by item, so it gets 1 (no widening)."""
    if x.device.type != "cuda" or x.data_ptr() % 16:
        return 1
    return _bi.max(1, 16 // x.element_size())


class _RowsPlan:
    """A recorded launch of equal rows (sum/min/max, one pass): later calls with the same key only
    allocate the result and call the compiled kernel (host time is most of a small reduction's)."""
    __slots__ = ("pol", "run", "num_work", "ints", "out_dtype", "res_dtype", "scratch", "ident")

    def __call__(self, x_flat):
        out = torch.empty(self.num_work, dtype=self.out_dtype, device=x_flat.device)
        s = self.scratch
        self.run(x_flat, s, s, *self.ints, out, s, self.ident)
        return out if out.dtype == self.res_dtype else out.to(self.res_dtype)


_PLANS: dict = {}
_PLAN_OPS = ("sum", "min", "max")
#: items a program of equal short rows takes at least (see :func:`_run`)
_ROWS_TILE_MIN = 4096
#: arg ops over inputs of fewer items than this note positions within a work item in int32 (half the
#: registers of int64, as the columns kernel does); a module value so that tests can force int64
_NARROW_POS_ITEMS = 2 ** 31 - 64
#: measurement switch (bench/probes only): False keeps int64 positions everywhere (the A/B of the change)
ROWS_NARROW_POS = True
_SCRATCH: dict = {}


def _scratch(device: torch.device) -> torch.Tensor:
    """One int64 per device that plans pass for pointers their kernel never touches (made by
    :func:`persistent`, not in a CUDA graph's pool)."""
    s = _SCRATCH.get(device)
    if s is None:
        s = _SCRATCH[device] = persistent(device, lambda: torch.zeros(1, dtype=torch.int64, device=device))
    return s


def _run(x_flat, begins, ends, row_len, num_segments, op, *, uniform, mean_len, combine_fn=None, init=None,
         dtype=None, pol=None, vec=None, transform_fn=None):
    """Reduce the segments of the flat ``x_flat`` (``op="user"``: a tensor or a tuple of equally long
    flat tensors). ``begins``/``ends`` None: ``num_segments`` rows of ``row_len`` items."""
    if op == "user":
        return _run_user(_as_tuple(x_flat), begins, ends, row_len, num_segments, uniform=uniform,
                         mean_len=mean_len, combine_fn=combine_fn, init=init, dtype=dtype, pol=pol, vec=vec,
                         transform_fn=transform_fn)
    for name, v in (("transform_fn", transform_fn), ("combine_fn", combine_fn), ("init", init)):
        if v is not None:
            raise InputValueError(f"segmented_reduce: {name} goes with op='user' (a user combine_fn and init), "
                                  f"not op={op!r}")
    if dtype is not None and op not in ("sum", "mean"):
        raise InputValueError(f"segmented_reduce: dtype goes with op 'sum', 'mean' or 'user'; op={op!r} returns the "
                              "items' dtype")
    if op == "sum" and dtype is not None and dtype != x_flat.dtype and dtype != acc_dtype(dtype):
        # torch.sum with a dtype converts each item to it first (rounding or wrapping it there), then
        # accumulates (fp16/bf16 in fp32); (torch.mean does not: a mean is taken of the items as they are)
        x_flat = x_flat.to(dtype)
    device = x_flat.device
    plan_key = None
    if (uniform and pol is None and vec is None and op in _PLAN_OPS
            and x_flat.dtype != torch.bool and device.type == "cuda" and direct_ok() and not capturing(device)
            and not recording_launches()):   # (a caller's recording would miss a plan's launches)
        plan_key = (op, x_flat.dtype, dtype, row_len, num_segments, x_flat.data_ptr() & 15 == 0, device)
        plan = _PLANS.get(plan_key)
        if plan is not None and plan.pol is _select(device, mean_len, None, True):
            return plan(x_flat)
    res_dtype, acc = _out_dtype(op, x_flat.dtype, dtype)
    code = _OP_CODE[op]
    is_arg = op in ("argmin", "argmax")
    pol = _select(device, mean_len, pol, uniform)
    rows, block = int(pol["ROWS"]), int(pol["BLOCK"])
    chunk_items = int(pol["SPLIT_CHUNK"])
    xv = _storage_view(x_flat)
    ident = identity(op if op != "mean" else "sum", acc)
    split = 1
    if chunk_items and op in ("sum", "mean", "min", "max", "argmin", "argmax") and mean_len > chunk_items:
        split = -(-int(mean_len) // chunk_items) if uniform else _bi.max(2, -(-int(2 * mean_len) // chunk_items))
    chunk = chunk_items if split > 1 else (1 << 62)
    num_work = num_segments * split
    # the results in their dtype from the kernel where they are final there (not a mean, divided later; not
    # bool, stored as its uint8 bytes; not bf16 under the interpreter, which truncates fp32 -> bf16)
    final = acc if (op == "mean" or x_flat.dtype == torch.bool or res_dtype == torch.bool
                    or (res_dtype == torch.bfloat16 and interpreter_active())) else res_dtype
    out = torch.empty(num_work, dtype=final if split == 1 else acc, device=device)
    out_idx = torch.empty(num_work if is_arg else 1, dtype=torch.int64, device=device)
    dummy = out_idx if begins is None else begins
    vec = _vector_width(xv) if vec is None else vec
    if uniform and split == 1 and 0 < row_len < block:
        # equal rows shorter than the policy's step: a step as wide as the row (no idle lanes) and more
        # rows a program, so that a program still takes at least ROWS * BLOCK items (and at least
        # _ROWS_TILE_MIN on a GPU: 2^20 rows of 4 items took 110 us on an H200 in 8-row programs of
        # 64-item steps, torch 27; bench/results/logs/torch_sweep_probe-h200-20261201.log)
        narrow = _bi.max(vec, next_power_of_2(row_len))
        floor = 0 if interpreter_active() else _ROWS_TILE_MIN
        rows = _bi.max(rows, _bi.min(_bi.max(rows * block, floor), 16384) // narrow)
        block = narrow
    meta = dict(OP=code, ROWS=rows, BLOCK=_bi.max(block, vec), VEC=vec, ACC=TL_DTYPE[acc],
                CACHE_MODIFIER=pol["CACHE_MODIFIER"], EVICTION=pol.get("EVICTION", ""),
                FOR_LOOP=not interpreter_active(),
                num_warps=pol.num_warps, num_stages=pol.num_stages)
    if num_work:
        args = (xv, dummy if begins is None else begins, dummy if ends is None else ends, row_len, num_work, chunk,
                split, out, out_idx, ident)
        grid = (cdiv(num_work, rows),)
        whole = uniform and split == 1
        kw = dict(UNIFORM=uniform, WHOLE_ROWS=whole, ONE_STEP=whole and row_len <= meta["BLOCK"],
                  NARROW_POS=is_arg and ROWS_NARROW_POS and xv.numel() < _NARROW_POS_ITEMS, **meta)
        run = None
        if plan_key is not None and split == 1:
            run = bind(_segmented_reduce_kernel, grid, *args, **kw)
        else:
            launch(_segmented_reduce_kernel, grid, *args, **kw)
        if run is not None:
            plan = _RowsPlan()
            plan.pol, plan.run, plan.num_work, plan.out_dtype, plan.res_dtype = pol, run, num_work, final, res_dtype
            plan.ints = (row_len, num_work, chunk, split)
            # (a pointer the kernel never reads or writes for these ops: one kept per device, not this
            # call's, which may come from a CUDA graph's pool)
            plan.scratch, plan.ident = _scratch(device), ident
            if len(_PLANS) >= 256:
                _PLANS.clear()
            _PLANS[plan_key] = plan
    if split > 1:
        # second pass: each segment's partials, in piece order, as the rows of one column of [segments,
        # pieces, 1] (arg ops: the pass looks up its winning piece's offset in the segment)
        out, out_idx = _columns_pass(out.view(num_segments, split, 1), "sum" if op == "mean" else op, acc, final,
                                     out_idx.view(num_segments, split, 1) if is_arg else None, False)
    if op == "mean":
        if uniform:
            out = out / row_len
        else:
            out = out / (ends.to(torch.int64) - begins.to(torch.int64)).clamp_min(0).to(out.dtype)
    if x_flat.dtype == torch.bool and op in ("min", "max", "argmin", "argmax"):
        out = out != 0   # (an empty segment's min holds the uint8 identity 255: True)
    if out.dtype != res_dtype:
        out = out.to(res_dtype)
    return (out, out_idx) if is_arg else out


def _run_user(xs, begins, ends, row_len, num_segments, *, uniform, mean_len, combine_fn, init, dtype, pol, vec,
              transform_fn):
    """A user reduction of each segment over the k_in flat inputs ``xs`` into k accumulators: one tensor
    of ``num_segments`` results (k = 1) or a tuple of k."""
    if combine_fn is None or init is None:
        raise InputValueError("segmented_reduce: op='user' needs combine_fn and init")
    accs = UserAccumulators(xs, init, dtype, combine_fn, transform_fn, "segmented_reduce")
    k = len(accs.inits)
    device = xs[0].device
    init_t = accs.init_tensors(device)
    outs = tuple(torch.empty(num_segments, dtype=a, device=device) for a in accs.storage)
    if num_segments:
        pol = _select(device, mean_len, pol, uniform)
        xv = tuple(_storage_view(t) for t in xs)
        vec = _bi.min(_vector_width(t) for t in xv) if vec is None else vec   # (one window for every input)
        block = _bi.max(int(pol["BLOCK"]), vec)
        dummy = outs[0]
        launch(_segmented_reduce_user_kernel, (cdiv(num_segments, int(pol["ROWS"])),),
               xv, dummy if begins is None else begins, dummy if ends is None else ends, row_len, num_segments,
               outs, init_t, COMBINE=combine_fn, TRANSFORM=transform_fn, K_IN=len(xs), K=k,
               ROWS=int(pol["ROWS"]), BLOCK=block, UNIFORM=uniform,
               CACHE_MODIFIER=pol["CACHE_MODIFIER"], FOR_LOOP=not interpreter_active(), VEC=vec,
               WHOLE_ROWS=uniform, EVICTION=pol.get("EVICTION", ""), BOOL_MASK=accs.bool_mask,
               ONE_STEP=uniform and row_len <= block,
               num_warps=pol.num_warps, num_stages=pol.num_stages)
    res = accs.results(outs)
    return res[0] if k == 1 else res


def _check_op(op: str):
    if op not in OPS:
        raise InputValueError(f"segmented_reduce: unknown op {op!r}; supported: {', '.join(OPS)}")


def _inputs(x, op: str, init, dtype, ndim=None) -> tuple:
    """``x`` as a tuple of checked tensors. Tuples (of inputs, inits or dtypes) go with ``op="user"``;
    tuple members must share the device and the shape (``ndim`` 2: rows) or the length (flattened)."""
    if op != "user":
        for name, v in (("x", x), ("init", init), ("dtype", dtype)):
            if isinstance(v, (tuple, list)):
                raise InputValueError(f"segmented_reduce: a tuple {name} goes with op='user' (a user combine_fn "
                                      f"of tuples), not op={op!r}")
    if not isinstance(x, (tuple, list)):
        check_tensor(x, "x", SUM_KERNEL_DTYPES if op == "sum" else SUPPORTED_DTYPES, ndim=ndim)
        return (x,)
    xs = tuple(x)
    if not xs:
        raise InputValueError("segmented_reduce: x is an empty tuple (no input tensors)")
    for j, t in enumerate(xs):
        check_tensor(t, f"x[{j}]", SUPPORTED_DTYPES, ndim=ndim)
    check_same_device(*((f"x[{j}]", t) for j, t in enumerate(xs)))
    if ndim is not None and any(t.shape != xs[0].shape for t in xs):
        raise InputValueError(f"reduce_rows: the input tensors differ in shape: {[tuple(t.shape) for t in xs]}")
    if any(t.numel() != xs[0].numel() for t in xs):
        raise InputValueError(f"segmented_reduce: the input tensors differ in length: {[t.numel() for t in xs]}")
    return xs


def reduce_rows(x, op: str = "sum", *, combine_fn=None, init=None, dtype=None, pol=None, transform_fn=None):
    """Reduce every row of a 2-D tensor (any strides: non-contiguous rows are copied first).

    ``op="user"``: ``init (+) t(x[r, 0]) (+) t(x[r, 1]) (+) ...`` per row with a ``@triton.jit``
    ``combine_fn``; ``x`` may be a tuple of k_in equally shaped 2-D tensors, ``init`` a k-tuple and
    ``dtype`` a k-tuple (see :func:`segmented_reduce`). ``transform_fn``: a ``@triton.jit`` function
    applied to the items (k_in tiles -> k tiles) before the combine.

    Returns a tensor of ``x.shape[0]`` results (arg ops: ``(values, offsets within the row)``; a user
    reduction with k > 1 accumulators: a tuple of k tensors)."""
    _check_op(op)
    xs = _inputs(x, op, init, dtype, ndim=2)
    m, k = xs[0].shape
    flat = tuple((t if t.stride(-1) == 1 and (m <= 1 or t.stride(0) == k) else t.contiguous()).reshape(-1)
                 for t in xs)
    return _run(flat if isinstance(x, (tuple, list)) else flat[0], None, None, k, m, op, uniform=True, mean_len=k,
                combine_fn=combine_fn, init=init, dtype=dtype, pol=pol, transform_fn=transform_fn)


#: the columns' reduction: items a program holds per step (rows x columns) with a 4-byte accumulator (an
#: 8-byte one half as many; arg ops, which also hold a position per item, a quarter), columns a program
#: takes at least, programs per SM the rows are split for, and the kernel's warps and pipeline stages
#: (measured on an H200: ``bench/probes/columns_geometry_probe.py``)
_COLUMNS_TILE, _COLUMNS_MIN_BLOCK, _COLUMNS_PER_SM, _COLUMNS_WARPS, _COLUMNS_STAGES = 16384, 128, 4, 4, 3
#: the interpreter's: items per step, columns per program at least and at most (small tiles, several
#: programs and steps in the tests)
_COLUMNS_INTERPRETER = (64, 4, 16)
#: programs along grid dim 0 (the outer extent times the column blocks) and dim 1 (the row chunks) at most
_GRID_X_MAX, _GRID_Y_MAX = 2 ** 31 - 1, 65535
#: chunks of rows shorter than this note the arg ops' positions in int32 (half the registers of int64)
_NARROW_POS_ROWS = 2 ** 31 - 1


def _columns_geometry(R: int, B: int, itemsize: int, acc_size: int, is_arg: bool,
                      interp: bool) -> tuple[int, int]:
    """``(block_r, block_b)``: rows and columns of a program's step over ``R`` rows of ``B`` columns of
    ``itemsize``-byte items (accumulated in ``acc_size`` bytes). Few rows get wide steps, as many columns
    as the warps cover side by side with 16-byte loads (narrower steps ran up to 8x slower at 4 rows,
    fp16/bf16 most); many rows get steps of ``_COLUMNS_MIN_BLOCK`` columns and more rows."""
    tile, lo, hi = _COLUMNS_INTERPRETER if interp else (_COLUMNS_TILE, _COLUMNS_MIN_BLOCK,
                                                        _COLUMNS_WARPS * 32 * _bi.max(1, 16 // itemsize))
    if not interp:   # (the accumulators' registers)
        tile = tile * 4 // _bi.max(4, acc_size) // (4 if is_arg else 1)
    rows = next_power_of_2(R)
    block_b = _bi.min(next_power_of_2(B), _bi.max(lo, _bi.min(hi, tile // rows)))
    return _bi.max(1, _bi.min(tile // block_b, rows)), block_b


def reduce_columns(x, op: str = "sum", *, dtype=None):
    """Reduce the middle dim of a contiguous 3-D ``[A, R, B]`` tensor (a reduction over dims that are not
    the last ones, e.g. ``x.sum(0)`` of a matrix: ``A`` = 1): ``[A, B]`` results (arg ops: ``(values,
    rows of the first extremes)``) with the built-in ``op`` (not mean or user), the dtypes and NaN rules
    of :func:`reduce_rows`. Reads the columns in place, rows of them at a time (no transpose copy); more
    programs than columns split the rows into chunks, whose partials a second launch reduces in chunk
    order (deterministic). None where ``A`` times the column blocks is beyond the grid (the caller
    transposes)."""
    _check_op(op)
    if op in ("mean", "user"):
        raise InputValueError(f"reduce_columns takes the built-in ops sum/min/max/argmin/argmax, not {op!r}")
    if dtype is not None and op != "sum":
        raise InputValueError(f"reduce_columns: dtype goes with op 'sum'; op={op!r} returns the items' dtype")
    check_tensor(x, "x", SUM_KERNEL_DTYPES if op == "sum" else SUPPORTED_DTYPES)
    if x.dim() != 3 or not x.is_contiguous():
        raise InputValueError(f"reduce_columns: x must be a contiguous 3-D tensor, got shape {tuple(x.shape)}")
    A, R, B = x.shape
    if A * cdiv(B, _COLUMNS_INTERPRETER[1] if interpreter_active() else _COLUMNS_MIN_BLOCK) > _GRID_X_MAX:
        return None
    res_dtype, acc = _out_dtype(op, x.dtype, dtype)
    is_arg = op in ("argmin", "argmax")
    if A * B == 0 or R == 0:   # (nothing to read: empty results, or the identity of empty columns)
        fill = identity(op, acc) if R == 0 else 0
        out = torch.full((A, B), fill, dtype=acc, device=x.device)
        if x.dtype == torch.bool and op in ("min", "max", "argmin", "argmax"):
            out = out != 0
        out = out.to(res_dtype)
        return (out, torch.full((A, B), -1, dtype=torch.int64, device=x.device)) if is_arg else out
    if op == "sum" and dtype is not None and dtype != x.dtype and dtype != acc_dtype(dtype):
        x = x.to(dtype)   # (torch.sum with a dtype converts each item first, as _run)
    # the kernel stores the results in their dtype, except bool (min/max/arg ops: stored as its uint8
    # bytes; a sum to bool: the count, != 0 after) and, under the interpreter, bf16 (Triton's interpreter
    # truncates fp32 -> bf16 where a GPU rounds to nearest even)
    store = res_dtype
    if res_dtype == torch.bool:
        store = acc if op == "sum" else torch.uint8
    elif res_dtype == torch.bfloat16 and interpreter_active():
        store = acc
    out, out_idx = _columns_pass(_storage_view(x), op, acc, store, None, True)
    out = out.view(A, B)
    if out.dtype != res_dtype:
        out = out != 0 if res_dtype == torch.bool else out.to(res_dtype)
    return (out, out_idx.view(A, B)) if is_arg else out


def _columns_pass(x, op: str, acc: torch.dtype, out_dtype: torch.dtype, rows_in, split: bool):
    """One launch of the columns kernel over ``x`` = ``[A, R, B]`` (``rows_in``: the rows the items of
    ``x`` stand for, for arg ops over partials), and where ``split`` cut the rows into chunks, the pass
    over their partials (``[1, chunks, A * B]``, in chunk order): ``(out, out_idx)``, flat."""
    A, R, B = x.shape
    is_arg = op in ("argmin", "argmax")
    interp = interpreter_active()
    block_r, block_b = _columns_geometry(R, B, x.element_size(), acc.itemsize, is_arg, interp)
    col_blocks = cdiv(B, block_b)
    programs = 3 if interp else _COLUMNS_PER_SM * num_sms(x.device)
    splits = _bi.max(1, _bi.min(cdiv(programs, A * col_blocks), cdiv(R, block_r), _GRID_Y_MAX)) if split else 1
    r_chunk = cdiv(cdiv(R, splits), block_r) * block_r
    splits = cdiv(R, r_chunk)
    out = torch.empty(splits * A * B, dtype=acc if splits > 1 else out_dtype, device=x.device)
    out_idx = torch.empty(splits * A * B if is_arg else 1, dtype=torch.int64, device=x.device)
    launch(_reduce_columns_kernel, (A * col_blocks, splits), x.reshape(-1), out, out_idx,
           out_idx if rows_in is None else rows_in, R, B, r_chunk, identity(op, acc), OP=_OP_CODE[op],
           ACC=TL_DTYPE[acc], BLOCK_R=block_r, BLOCK_B=block_b, WIDE_POS=r_chunk >= _NARROW_POS_ROWS,
           ROWS_IN=rows_in is not None, FOR_LOOP=not interp, num_warps=_COLUMNS_WARPS, num_stages=_COLUMNS_STAGES)
    if splits > 1:
        return _columns_pass(out.view(1, splits, A * B), op, acc, out_dtype, out_idx if is_arg else None, False)
    return out, out_idx


def segmented_reduce(x, begin_offsets: torch.Tensor, end_offsets: torch.Tensor | None = None,
                     op: str = "sum", *, combine_fn=None, init=None, dtype=None, validate: bool = False,
                     pol=None, transform_fn=None):
    """Reduce ``x[begin[i]:end[i]]`` for every segment ``i`` (CUB's DeviceSegmentedReduce).

    ``end_offsets=None`` takes ``begin_offsets`` as ``num_segments + 1`` monotone offsets (segment
    ``i`` = ``[off[i], off[i+1])``). Returns one result per segment (arg ops: ``(values, offsets)``).
    ``op="mean"`` of integer items needs a float ``dtype`` (an integer mean would be truncated;
    torch.mean refuses it too). The offsets are trusted unless ``validate=True`` (or
    ``TRITONCUB_DEBUG=1``): offsets out of range or decreasing read outside ``x``.

    ``op="user"``: each segment gives ``init (+) t(x_b) (+) ... (+) t(x_(e-1))`` (``init`` combined
    once; an empty segment gives ``init``), with

    * ``x``: a tensor, or a tuple of k_in equally long tensors (flattened) read at the same offsets;
    * ``combine_fn``: ``@triton.jit``, associative and commutative, of 2k arguments (the k
      accumulators of one side, then of the other) returning a k-tuple, or one tile when k = 1;
    * ``init``: a number (or one-item tensor) or a k-tuple of them;
    * ``transform_fn`` (optional, the segmented ``transform_reduce``): ``@triton.jit``, k_in tiles
      -> k tiles (one tile when k = 1); without it k = k_in;
    * ``dtype``: the accumulator and result dtype, or a k-tuple of them; by default fp16/bf16 -> fp32
      and other dtypes unchanged, per input (needs k = k_in).

    A user reduction returns one tensor (k = 1) or a tuple of k tensors of ``num_segments`` results."""
    _check_op(op)
    check_flag(validate, "validate")
    xs = _inputs(x, op, init, dtype)
    idx_types = (torch.int32, torch.int64)
    check_tensor(begin_offsets, "begin_offsets", idx_types, ndim=1)
    if end_offsets is None:
        if begin_offsets.numel() < 1:
            raise InputValueError("offsets must hold num_segments + 1 >= 1 values")
        begins, ends = begin_offsets[:-1], begin_offsets[1:]
    else:
        check_tensor(end_offsets, "end_offsets", idx_types, ndim=1)
        if end_offsets.shape != begin_offsets.shape:
            raise InputValueError(f"begin_offsets and end_offsets differ in shape: {tuple(begin_offsets.shape)} vs "
                                  f"{tuple(end_offsets.shape)}")
        begins, ends = begin_offsets, end_offsets
        check_same_device(("begin_offsets", begin_offsets), ("end_offsets", end_offsets))
    check_same_device(("x" if len(xs) == 1 else "x[0]", xs[0]), ("begin_offsets", begin_offsets))
    flat = tuple(t.reshape(-1) if t.is_contiguous() else t.contiguous().reshape(-1) for t in xs)
    begins, ends = begins.contiguous(), ends.contiguous()
    num_segments = begins.numel()
    n = flat[0].numel()
    if validate or _debug():
        if num_segments and (bool((begins < 0).any()) or bool((ends > n).any())):
            raise InputValueError(f"segment offsets out of range [0, {n}]")
        if end_offsets is None and num_segments and bool((ends < begins).any()):
            raise InputValueError("offsets are not monotone (non-decreasing)")
    mean_len = n / _bi.max(num_segments, 1)
    return _run(flat if isinstance(x, (tuple, list)) else flat[0], begins, ends, 0, num_segments, op, uniform=False,
                mean_len=mean_len, combine_fn=combine_fn, init=init, dtype=dtype, pol=pol,
                transform_fn=transform_fn)


# ----------------------------------------------------------------------------------------------
# torch operator
# ----------------------------------------------------------------------------------------------

_SEGMENT_REDUCES = ("sum", "max", "min", "mean", "prod", "amax", "amin")   # (torch takes both spellings)


@triton.jit
def _mul(a, b):
    return a * b


def _segment_prod(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Products of the segments (a user combine: init 1 combined once, so an empty segment gives 1,
    as torch), in ``x``'s dtype."""
    return segmented_reduce(x, offsets, None, "user", combine_fn=_mul, init=1.0).to(x.dtype)


def _check_segment_args(x, offsets, reduce):
    check_tensor(x, "x")
    check_tensor(offsets, "offsets", (torch.int32, torch.int64))
    check_same_device(("x", x), ("offsets", offsets))
    if reduce not in _SEGMENT_REDUCES:
        raise InputValueError(f"segment_reduce: reduce must be one of {', '.join(_SEGMENT_REDUCES)}, got {reduce!r}")
    if x.dim() != 1:
        raise InputValueError(f"segment_reduce: x must be 1-D, got shape {tuple(x.shape)}")
    if not x.dtype.is_floating_point:
        raise InputTypeError(f"segment_reduce: x has dtype {x.dtype}; supported: float16, bfloat16, float32, float64")
    if offsets.dim() != 1 or offsets.shape[0] < 1:
        raise InputValueError("segment_reduce: offsets must be 1-D with num_segments + 1 values")



def _segment_reduce_impl(x: torch.Tensor, offsets: torch.Tensor, reduce: str) -> torch.Tensor:
    """``torch.segment_reduce(x, reduce, offsets=offsets)`` for 1-D floating-point ``x``."""
    _check_segment_args(x, offsets, reduce)
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    # torch refuses offsets that decrease or leave the data: checked as torch does, with one read of
    # the result (segmented_reduce itself leaves that to its validate flag); inside a CUDA graph capture,
    # which cannot read back, by a device-side assert instead
    n = x.shape[0]
    if offsets.numel() > 1:
        bad = (offsets[1:] < offsets[:-1]).any() | (offsets[0] < 0) | (offsets[-1] > n)
        msg = f"segment_reduce: offsets must be non-decreasing and within [0, {n}]"
        if capturing(x.device):
            torch._assert_async(~bad, msg)
        elif bool(bad):
            raise InputValueError(msg)
    if reduce == "prod":
        return _segment_prod(x, offsets)
    return segmented_reduce(x, offsets, None, reduce)


def _segment_reduce_fake(x, offsets, reduce):
    _check_segment_args(x, offsets, reduce)
    return x.new_empty((offsets.shape[0] - 1,))


def _segment_reduce_setup(ctx, inputs, output):
    x, offsets, reduce = inputs
    ctx.reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    ctx.save_for_backward(x, offsets, output)


def _segment_reduce_backward(ctx, grad):
    """``torch.segment_reduce``'s gradient: ``sum`` passes each segment's gradient to its items,
    ``mean`` divides it by the length; ``max``/``min`` share it evenly among the items equal to the
    result (the NaN items when it is NaN; torch's kernel divides only positive gradients among ties
    and gives a negative one whole to each, so the two differ there); ``prod`` gives
    ``grad * out / x``, and to an item that is 0 or NaN ``grad`` times the product of its segment's
    other items (here from one product of the items that are neither and counts of those that are:
    torch multiplies the others in order, which may round differently). Items in no segment get 0.
    Made of torch ops and this module's reductions (a backward pass, not a hot path); per-segment
    counts are exact int64 sums."""
    x, offsets, out = ctx.saved_tensors
    n, s = x.shape[0], out.shape[0]
    if n == 0 or s == 0:
        return torch.zeros_like(x), None, None
    offsets = offsets.to(torch.int64)
    seg = torch.searchsorted(offsets, torch.arange(n, device=x.device), right=True) - 1
    inside = (seg >= 0) & (seg < s)
    seg = seg.clamp(0, s - 1)

    def segment_count(flags):   # (items of each segment with the flag set: exact)
        counts = torch.zeros(s, dtype=torch.int64, device=x.device)
        return counts.index_add_(0, seg, (flags & inside).to(torch.int64))

    g = grad[seg]
    if ctx.reduce == "sum":
        gx = g
    elif ctx.reduce == "mean":
        gx = g / offsets.diff().to(x.dtype)[seg]
    elif ctx.reduce in ("max", "min"):
        o = out[seg]
        tie = (x == o) | (x.isnan() & o.isnan())
        gx = torch.where(tie, g / segment_count(tie).to(x.dtype)[seg], 0)
    else:   # prod
        zero, nan = x == 0, x.isnan()
        special = zero | nan
        zeros_else = segment_count(zero)[seg] - zero.to(torch.int64)   # (among the segment's other items)
        nans_else = segment_count(nan)[seg] - nan.to(torch.int64)
        # (of the items neither 0 nor NaN. Recorded (create_graph), traced by torch.compile (its fake, not the
        # kernel launch on fake tensors) or on meta tensors: through the operator. Otherwise directly: the
        # operator would check the offsets, which the forward checked, again, with a read-back: a host sync)
        kept = torch.where(special, 1, x)
        if torch.is_grad_enabled() or no_host_data(kept, offsets):
            rest = torch.ops.tritoncub.segment_reduce(kept, offsets, "prod")[seg]
        else:
            rest = _segment_prod(kept, offsets)[seg]
        other_zero = 0
        if torch.is_grad_enabled():
            # (create_graph: with exactly one other 0, the product of the others is rest times that 0,
            # whose derivative is rest; kept as the 0 item itself, so the second derivative has it)
            zero_x = torch.where(zero, x, 0)
            other_zero = torch.where(zeros_else == 1, torch.ops.tritoncub.segment_reduce(zero_x, offsets, "sum")[seg]
                                     - zero_x, 0)
        others = torch.where(nans_else > 0, math.nan, torch.where(zeros_else > 0, rest * other_zero, rest))
        # (x's 0 and NaN items divided by 1: the branch not taken must not put NaN in a second derivative)
        gx = torch.where(special, g * others, g * out[seg] / torch.where(special, 1, x))
    return torch.where(inside, gx, 0).to(x.dtype), None, None


# registered like reduce.py's ops (torch.library.Library: a custom_op costs ~70 us per call)
_define_op("segment_reduce", "(Tensor x, Tensor offsets, str reduce) -> Tensor", _segment_reduce_impl,
           _segment_reduce_fake, _segment_reduce_backward, _segment_reduce_setup)


def segment_reduce(x: torch.Tensor, offsets: torch.Tensor, reduce: str = "sum") -> torch.Tensor:
    """``torch.ops.tritoncub.segment_reduce``: validates, then runs the op."""
    _check_segment_args(x, offsets, reduce)
    return torch.ops.tritoncub.segment_reduce(x, offsets, reduce)
