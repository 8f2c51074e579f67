"""DeviceReduce: one value from all items of a tensor (CUB's ``DeviceReduce``).

Device API (CUB's names)::

    sum(x, dtype=None)                     min(x)            max(x)
    argmin(x) / argmax(x) -> (value, index)      first index of the extreme (CUB's KeyValuePair)
    reduce(x, combine_fn, init)            any associative, commutative ``@triton.jit`` combine_fn;
                                           ``x`` may be a tuple of tensors (combine_fn then takes 2k
                                           arguments and returns a k-tuple, like ``tl.reduce``)
    transform_reduce(x, transform_fn, combine_fn, init)

and the torch operators ``tritoncub::sum / amax / amin / argmax / argmin`` (registered at the end
of this file) with torch's signatures, dtypes and NaN rules, arbitrary ``dim`` lists, autograd for
``sum``/``amax``/``amin``.

Accumulators: fp16/bf16 accumulate in fp32, fp32 in fp32, fp64 in fp64; integer and bool sums in
int64 (as ``torch.sum``). min/max/arg compare fp16/bf16 in fp32 (exact) and return the item type. NaN propagates through sum/min/max (torch's
amin/amax); argmin/argmax return the index of the first NaN when there is one (as torch).

Algorithm (one launch for every size): the ``n // TILE`` full tiles are dealt to ``P`` programs by
the policy's grid mapping, as an even share (every program ``q`` tiles, the first ``r`` one more, so
every program runs the same loop bound; RAKE: contiguous runs, STRIP_MINE: every P-th tile).
A program loads its tiles unmasked (vectorised), combines them lane-wise into a register tile, then
reduces that tile to one *partial* stored at ``partials[pid]``. Each program then takes a ticket from
an int32 counter; the program that takes the last ticket reduces ``init``, the ``P`` partials *in
program order* and the ragged tail (``n % TILE`` items) and writes the result, then resets the
counter to zero for the next launch on the stream.

Determinism: the set of items each program reduces and the order in which partials are combined
depend only on ``n`` and the policy, never on scheduling (which program finishes last changes who
does the final step, not its order), and no float atomics are used: float results are bitwise
identical run to run on the same GPU with the same policy. (Different policies or GPUs may round
differently.) The DYNAMIC grid mapping is not offered: every tile costs the same here, so a work
queue buys nothing, and it would need one partial per tile to stay deterministic.

User combine functions: plain Triton 3.6 cannot hand a function received as a ``tl.constexpr``
argument to ``tl.reduce`` ("'constexpr' object has no attribute 'fn'"), so user combines are reduced
inside a tile by a pairwise tree (``_tree_reduce``: ``tl.split`` halves, ``combine_fn`` called
directly), which needs no patch of the compiler and keeps neighbouring items together.
``init`` is combined exactly once (no identity needed): full tiles are loaded unmasked, and the
partials and the ragged tail are reduced in power-of-two chunks that contain only real items.
The combine must be associative and commutative (lanes of a program are combined before tiles).
"""
from __future__ import annotations

import builtins as _bi
import math
from typing import Callable, Sequence

import torch
import triton
import triton.language as tl
from triton.runtime.jit import constexpr_function

from .. import policy
from .._library import Op
from .._launch import bind, direct_ok, launch, recording_launches
from .._utils import (COMPLEX_DTYPES, UINT_DTYPES, InputTypeError, InputValueError, capturing, check_device,
                      check_init_value, check_jit_function, check_same_device, interpreter_active, num_sms,
                      persistent, wrap_dim)
from ..agent.grid_mapping import GRID_MAPPINGS
from ..block.load import load_tile
from ..block.reduce import (combine_argmax, combine_argmin, combine_max_propagate_nan,
                            combine_min_propagate_nan)

# reduction kinds (constexpr OP of the kernels)
OP_SUM = tl.constexpr(0)
OP_MIN = tl.constexpr(1)
OP_MAX = tl.constexpr(2)
OP_ARGMIN = tl.constexpr(3)
OP_ARGMAX = tl.constexpr(4)
OP_USER = tl.constexpr(5)
OP_CODES = {"sum": 0, "min": 1, "max": 2, "argmin": 3, "argmax": 4, "user": 5}

#: item dtypes of the built-in reductions
SUPPORTED_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                    torch.float16, torch.bfloat16, torch.float32, torch.float64)
#: unsigned items wider than a byte: summed only (torch.sum and torch.cumsum take them, promoted to
#: int64, uint64 wrapping as in torch); torch's other CUDA reductions refuse them, and so do these
WIDE_UINT_DTYPES = tuple(d for d in UINT_DTYPES if d != torch.uint8)
#: item dtypes of the sum kernels, and of sums (complex ones as two float sums of the same order, of
#: the real and the imaginary parts)
SUM_KERNEL_DTYPES = SUPPORTED_DTYPES + WIDE_UINT_DTYPES
SUM_DTYPES = SUM_KERNEL_DTYPES + COMPLEX_DTYPES
_INT_LIKE = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64) + WIDE_UINT_DTYPES



# ----------------------------------------------------------------------------------------------
# jit helpers (also used by segmented_reduce.py)
# ----------------------------------------------------------------------------------------------

@constexpr_function
def _log2(n):
    return int(n).bit_length() - 1


@constexpr_function
def _shr(n, s):
    return int(n) >> int(s)


@constexpr_function
def _pow2(b):
    return 1 << int(b)


@triton.jit
def _call_combine(a, b, COMBINE: tl.constexpr, K: tl.constexpr):
    """``COMBINE(*a, *b)`` on k-tuples of tensors, always returned as a tuple."""
    if K == 1:
        r = (COMBINE(a[0], b[0]),)
    else:
        r = COMBINE(*a, *b)
    return r


@triton.jit
def _tree_reduce(vals, ROWS: tl.constexpr, N: tl.constexpr, COMBINE: tl.constexpr, K: tl.constexpr):
    """Reduce a k-tuple of ``[ROWS, N]`` tiles along axis 1 to ``[ROWS, 1]`` by a pairwise tree that
    calls ``COMBINE`` directly (items ``2i`` and ``2i+1`` first: the order of items is kept)."""
    for s in tl.static_range(_log2(N)):
        # (no assignment: a plain assignment would turn the constexpr half-size into a tensor)
        lo = ()
        hi = ()
        for j in tl.static_range(K):
            a, b = tl.split(tl.reshape(vals[j], (ROWS, _shr(N, s + 1), 2)))
            lo = lo + (a,)
            hi = hi + (b,)
        vals = _call_combine(lo, hi, COMBINE, K)
    return vals


@triton.jit
def _builtin_tile_reduce(v, vi, AXIS: tl.constexpr, OP: tl.constexpr):
    """Reduce a tile (with its index tile for arg ops) along ``AXIS`` with a built-in reduction."""
    if OP == OP_SUM:
        r = tl.sum(v, AXIS)
        ri = r
    elif OP == OP_MIN:
        r = tl.reduce(v, AXIS, combine_min_propagate_nan)
        ri = r
    elif OP == OP_MAX:
        r = tl.reduce(v, AXIS, combine_max_propagate_nan)
        ri = r
    elif OP == OP_ARGMIN:
        r, ri = tl.reduce((v, vi), AXIS, combine_argmin)
    else:
        r, ri = tl.reduce((v, vi), AXIS, combine_argmax)
    return r, ri


@triton.jit
def _builtin_combine(a, ai, b, bi, OP: tl.constexpr):
    """Element-wise combine of a built-in reduction (``ai``/``bi``: indices of arg ops)."""
    if OP == OP_SUM:
        r = a + b
        ri = ai
    elif OP == OP_MIN:
        r = combine_min_propagate_nan(a, b)
        ri = ai
    elif OP == OP_MAX:
        r = combine_max_propagate_nan(a, b)
        ri = ai
    elif OP == OP_ARGMIN:
        r, ri = combine_argmin(a, ai, b, bi)
    else:
        r, ri = combine_argmax(a, ai, b, bi)
    return r, ri


@triton.jit
def to_accumulator(v, ACC: tl.constexpr, IS_BOOL: tl.constexpr):
    """An operand as accumulator type ``ACC``; a bool accumulator (held as int64) takes ``v != 0``,
    as torch converts to bool, not a truncation."""
    if IS_BOOL:
        r = (v != 0).to(ACC)
    else:
        r = v.to(ACC)
    return r


@triton.jit
def user_operands(vals, outs, TRANSFORM: tl.constexpr, K: tl.constexpr, BOOL_MASK: tl.constexpr):
    """User ops: the k_in loaded input tiles ``vals`` -> ``TRANSFORM`` (if any) -> each of the k
    operands cast to its accumulator type (the element type of ``outs[j]``; bit ``j`` of
    ``BOOL_MASK``: a bool accumulator, see :func:`to_accumulator`). Returns a k-tuple."""
    if TRANSFORM is not None:
        if K == 1:
            vals = (TRANSFORM(*vals),)
        else:
            vals = TRANSFORM(*vals)
    res = ()
    for j in tl.static_range(K):
        res = res + (to_accumulator(vals[j], outs[j].dtype.element_ty, (BOOL_MASK >> j) & 1),)
    return res


@triton.jit
def _load_operands(xs, offs, outs, TRANSFORM: tl.constexpr, K_IN: tl.constexpr, K: tl.constexpr,
                   CACHE_MODIFIER: tl.constexpr, EVICTION: tl.constexpr, BOOL_MASK: tl.constexpr):
    """User ops: load the k_in inputs at ``offs`` (unmasked), then :func:`user_operands`."""
    vals = ()
    for j in tl.static_range(K_IN):
        vals = vals + (tl.load(xs[j] + offs, cache_modifier=CACHE_MODIFIER, eviction_policy=EVICTION),)
    return user_operands(vals, outs, TRANSFORM, K, BOOL_MASK)


@triton.jit
def _reduce_exact_chunks(xs, base, count, acc, outs, MAX_LOG2: tl.constexpr, TRANSFORM: tl.constexpr,
                         COMBINE: tl.constexpr, K_IN: tl.constexpr, K: tl.constexpr, BOOL_MASK: tl.constexpr):
    """``acc (+)`` items ``[base, base + count)`` of ``xs`` (``count < 2^(MAX_LOG2+1)``), reduced in
    power-of-two chunks that hold only real items: user combines need no identity. ``acc`` and the
    result are k-tuples of ``[1, 1]`` tiles."""
    for s in tl.static_range(MAX_LOG2 + 1):
        if ((count >> (MAX_LOG2 - s)) & 1) != 0:
            offs = base + tl.arange(0, _pow2(MAX_LOG2 - s))[None, :]
            vals = _load_operands(xs, offs, outs, TRANSFORM, K_IN, K, "", "", BOOL_MASK)
            acc = _call_combine(acc, _tree_reduce(vals, 1, _pow2(MAX_LOG2 - s), COMBINE, K), COMBINE, K)
            base += _pow2(MAX_LOG2 - s)
    return acc


@triton.jit
def _rows(vals, K: tl.constexpr):
    """A k-tuple of 1-D tiles as ``[1, N]`` tiles."""
    out = ()
    for j in tl.static_range(K):
        out = out + (tl.expand_dims(vals[j], 0),)
    return out


@triton.jit
def _even_share_tile(pid, step, num_programs, q, r, MAPPING: tl.constexpr):
    """The ``step``-th tile of program ``pid`` when ``q * P + r`` tiles are shared evenly by ``P``
    programs (programs ``< r`` take ``q + 1``): RAKE = contiguous runs, STRIP_MINE = every P-th."""
    if MAPPING == 0:
        tile = pid * q + tl.minimum(pid, r) + step
    else:
        tile = pid + step * num_programs
    return tile


@triton.jit
def _consume_tile(acc_v, acc_t, x_ptr, tile, n, OP: tl.constexpr, TILE: tl.constexpr,
                  VECTORIZE: tl.constexpr, CACHE_MODIFIER: tl.constexpr, EVICTION: tl.constexpr):
    """Combine one full tile lane-wise into the accumulator of a built-in reduction."""
    v = load_tile(x_ptr, tile.to(tl.int64) * TILE, n, TILE, VECTORIZE, CACHE_MODIFIER, EVICTION).to(acc_v.dtype)
    if OP == OP_SUM:
        acc_v = acc_v + v
    elif OP == OP_MIN:
        acc_v = combine_min_propagate_nan(acc_v, v)
    elif OP == OP_MAX:
        acc_v = combine_max_propagate_nan(acc_v, v)
    else:
        # a later tile holds larger indices in the same lane: ties keep the earlier item
        if OP == OP_ARGMIN:
            take = (v < acc_v) | ((v != v) & (acc_v == acc_v))
        else:
            take = (v > acc_v) | ((v != v) & (acc_v == acc_v))
        acc_v = tl.where(take, v, acc_v)
        acc_t = tl.where(take, tile, acc_t)
    return acc_v, acc_t


# ----------------------------------------------------------------------------------------------
# the kernel
# ----------------------------------------------------------------------------------------------

@triton.jit
def _reduce_program(xs, n, outs, parts, inits, counter_ptr, ident, num_full_tiles, q, r, num_partials,
                    OP: tl.constexpr, COMBINE: tl.constexpr, TRANSFORM: tl.constexpr,
                    K_IN: tl.constexpr, K: tl.constexpr,
                    TILE: tl.constexpr, MAPPING: tl.constexpr, VECTORIZE: tl.constexpr,
                    CACHE_MODIFIER: tl.constexpr, EVICTION: tl.constexpr,
                    PART_LOG2: tl.constexpr, TAIL_LOG2: tl.constexpr, FOR_LOOP: tl.constexpr,
                    BOOL_MASK: tl.constexpr):
    """DeviceReduce in one launch: per-program partials of the full tiles; the last program to
    finish combines (init,) the partials in program order and the ragged tail."""
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    lane = tl.arange(0, TILE)
    IS_ARG: tl.constexpr = (OP == OP_ARGMIN) or (OP == OP_ARGMAX)
    # ---- phase 1: this program's full tiles -> one partial (programs >= num_partials have none).
    # Even share (CUB's GridEvenShare): every program takes ``q`` tiles, programs < ``r`` one more,
    # so the loop bound is the same for all programs.
    if pid < num_partials:
        tile = _even_share_tile(pid, 0, num_programs, q, r, MAPPING)
        if OP == OP_USER:
            acc = _load_operands(xs, tile.to(tl.int64) * TILE + lane, outs, TRANSFORM, K_IN, K,
                                 CACHE_MODIFIER, EVICTION, BOOL_MASK)
            if FOR_LOOP:   # (compiled: Triton 3.6's coalescing pass fails on this body in a while loop)
                for step in range(1, q):
                    tile = _even_share_tile(pid, step, num_programs, q, r, MAPPING)
                    acc = _call_combine(acc, _load_operands(xs, tile.to(tl.int64) * TILE + lane, outs, TRANSFORM,
                                                            K_IN, K, CACHE_MODIFIER, EVICTION, BOOL_MASK), COMBINE, K)
            else:   # the interpreter cannot take a runtime bound in range()
                step = 1
                while step < q:
                    tile = _even_share_tile(pid, step, num_programs, q, r, MAPPING)
                    acc = _call_combine(acc, _load_operands(xs, tile.to(tl.int64) * TILE + lane, outs, TRANSFORM,
                                                            K_IN, K, CACHE_MODIFIER, EVICTION, BOOL_MASK), COMBINE, K)
                    step += 1
            if pid < r:
                tile = _even_share_tile(pid, q, num_programs, q, r, MAPPING)
                acc = _call_combine(acc, _load_operands(xs, tile.to(tl.int64) * TILE + lane, outs, TRANSFORM,
                                                        K_IN, K, CACHE_MODIFIER, EVICTION, BOOL_MASK), COMBINE, K)
            res = _tree_reduce(_rows(acc, K), 1, TILE, COMBINE, K)
            for j in tl.static_range(K):
                tl.store(parts[j] + pid + tl.arange(0, 1)[None, :], res[j])
        else:
            ACC: tl.constexpr = outs[0].dtype.element_ty
            acc_v = load_tile(xs[0], tile.to(tl.int64) * TILE, n, TILE, VECTORIZE, CACHE_MODIFIER,
                              EVICTION).to(ACC)
            acc_t = tl.zeros([TILE], tl.int32) + tile  # tile number per lane (arg ops)
            if FOR_LOOP:  # compiled: a counted loop Triton can software-pipeline (num_stages)
                for step in range(1, q):
                    tile = _even_share_tile(pid, step, num_programs, q, r, MAPPING)
                    acc_v, acc_t = _consume_tile(acc_v, acc_t, xs[0], tile, n, OP, TILE, VECTORIZE,
                                                 CACHE_MODIFIER, EVICTION)
            else:  # the interpreter cannot take a runtime bound in range()
                step = 1
                while step < q:
                    tile = _even_share_tile(pid, step, num_programs, q, r, MAPPING)
                    acc_v, acc_t = _consume_tile(acc_v, acc_t, xs[0], tile, n, OP, TILE, VECTORIZE,
                                                 CACHE_MODIFIER, EVICTION)
                    step += 1
            if pid < r:
                tile = _even_share_tile(pid, q, num_programs, q, r, MAPPING)
                acc_v, acc_t = _consume_tile(acc_v, acc_t, xs[0], tile, n, OP, TILE, VECTORIZE,
                                             CACHE_MODIFIER, EVICTION)
            pv, pi = _builtin_tile_reduce(acc_v, acc_t.to(tl.int64) * TILE + lane, 0, OP)
            tl.store(parts[0] + pid, pv)
            if IS_ARG:
                tl.store(parts[1] + pid, pi)
    # ---- phase 2: the program that takes the last ticket finishes
    last = num_programs == 1
    if num_programs > 1:
        tl.debug_barrier()  # every thread's partial store precedes the (release) ticket
        ticket = tl.atomic_add(counter_ptr, 1, sem="acq_rel", scope="gpu")
        last = ticket == num_programs - 1
    if last:
        # (tl.cast, not .to: the compiler specializes an int argument equal to 1 to a constexpr)
        tail_base = tl.cast(num_full_tiles, tl.int64) * TILE
        if OP == OP_USER:
            res = ()
            for j in tl.static_range(K):
                res = res + (tl.load(inits[j] + tl.arange(0, 1)[None, :]),)
            res = _reduce_exact_chunks(parts, tail_base * 0, num_partials, res, outs, PART_LOG2, None, COMBINE, K, K,
                                       0)
            res = _reduce_exact_chunks(xs, tail_base, n - tail_base, res, outs, TAIL_LOG2, TRANSFORM,
                                       COMBINE, K_IN, K, BOOL_MASK)
            for j in tl.static_range(K):
                tl.store(outs[j] + tl.arange(0, 1)[None, :], res[j])
        else:
            ACC2: tl.constexpr = outs[0].dtype.element_ty
            poffs = tl.arange(0, 1 << PART_LOG2)
            pmask = poffs < num_partials
            pv = tl.load(parts[0] + poffs, mask=pmask, other=0, cache_modifier=".cg")
            pv = tl.where(pmask, pv, ident).to(ACC2)
            toffs = tail_base + lane
            tv = tl.load(xs[0] + toffs, mask=toffs < n, other=0).to(ACC2)
            tv = tl.where(toffs < n, tv, ident).to(ACC2)
            if IS_ARG:
                pi = tl.load(parts[1] + poffs, mask=pmask, other=4611686018427387904, cache_modifier=".cg")
            else:
                pi = poffs.to(tl.int64)
            rv, ri = _builtin_tile_reduce(pv, pi, 0, OP)
            tv2, ti2 = _builtin_tile_reduce(tv, toffs, 0, OP)
            rv, ri = _builtin_combine(rv, ri, tv2, ti2, OP)
            tl.store(outs[0], rv)
            if IS_ARG:
                tl.store(outs[1], ri)
        if num_programs > 1:
            tl.atomic_xchg(counter_ptr, 0)


@triton.jit
def _reduce_kernel(xs, n, outs, parts, inits, counter_ptr, num_full_tiles, q, r, num_partials,
                   COMBINE: tl.constexpr, TRANSFORM: tl.constexpr, K_IN: tl.constexpr, K: tl.constexpr,
                   TILE: tl.constexpr, MAPPING: tl.constexpr, VECTORIZE: tl.constexpr,
                   CACHE_MODIFIER: tl.constexpr, EVICTION: tl.constexpr,
                   PART_LOG2: tl.constexpr, TAIL_LOG2: tl.constexpr, FOR_LOOP: tl.constexpr,
                   BOOL_MASK: tl.constexpr = 0):
    """DeviceReduce with a user combine over k_in inputs and k accumulators (tuples of pointers;
    ``BOOL_MASK``: which accumulators are bool, see :func:`to_accumulator`)."""
    _reduce_program(xs, n, outs, parts, inits, counter_ptr, 0, num_full_tiles, q, r, num_partials, OP_USER,
                    COMBINE, TRANSFORM, K_IN, K, TILE, MAPPING, VECTORIZE, CACHE_MODIFIER, EVICTION,
                    PART_LOG2, TAIL_LOG2, FOR_LOOP, BOOL_MASK)


@triton.jit
def _reduce_builtin_kernel(x_ptr, n, out_ptr, out_idx_ptr, part_ptr, part_idx_ptr, counter_ptr, ident,
                           num_full_tiles, q, r, num_partials, OP: tl.constexpr,
                           TILE: tl.constexpr, MAPPING: tl.constexpr, VECTORIZE: tl.constexpr,
                           CACHE_MODIFIER: tl.constexpr, EVICTION: tl.constexpr,
                           PART_LOG2: tl.constexpr, FOR_LOOP: tl.constexpr):
    """DeviceReduce with a built-in reduction (plain pointer arguments: the cheapest launch)."""
    _reduce_program((x_ptr,), n, (out_ptr, out_idx_ptr), (part_ptr, part_idx_ptr), (out_ptr,), counter_ptr,
                    ident, num_full_tiles, q, r, num_partials, OP, None, None, 1, 2, TILE, MAPPING, VECTORIZE,
                    CACHE_MODIFIER, EVICTION, PART_LOG2, 0, FOR_LOOP, 0)


# ----------------------------------------------------------------------------------------------
# policy
# ----------------------------------------------------------------------------------------------

def _valid(c: dict) -> bool:
    items_per_thread = c["BLOCK_ITEMS"] // (32 * c["num_warps"])
    # ptxas (sm_90, Triton 3.6) refuses a load with both a cache modifier and an eviction policy
    return 1 <= items_per_thread <= 64 and not (c.get("CACHE_MODIFIER") and c.get("EVICTION"))


REDUCE_BUCKETS = tuple(f"{k}_{c}{b}{sz}" for k in ("sum", "minmax", "arg", "user") for c in "fi"
                       for b in (1, 2, 4, 8) for sz in ("", "_small"))
#: at most this many items count as "small" (launch-bound sizes get their own tuning)
SMALL_ITEMS = 1 << 22

policy.register(
    "reduce",
    space={
        "BLOCK_ITEMS": [1024, 2048, 4096, 8192, 16384],   # items per tile = block_threads * items_per_thread
        "PROGRAMS_PER_SM": [1, 2, 4, 8],                  # grid = min(full tiles, SMs * this)
        "GRID_MAPPING": ["rake", "strip_mine"],
        "LOAD": ["vectorize", "direct"],
        "CACHE_MODIFIER": ["", ".cg"],
        "EVICTION": ["", "evict_first"],
        "num_warps": [4, 8, 16],
        "num_stages": [1, 2, 3],
    },
    fallback={"BLOCK_ITEMS": 4096, "PROGRAMS_PER_SM": 4, "GRID_MAPPING": "rake", "LOAD": "vectorize",
              "CACHE_MODIFIER": "", "EVICTION": "", "num_warps": 8, "num_stages": 2},
    valid=_valid,
    buckets=REDUCE_BUCKETS + ("default",),
    # fewer lanes for the heavier (value, index) accumulators and the tree of user combines
    bucket_fallbacks={**{b: {"BLOCK_ITEMS": 2048} for b in REDUCE_BUCKETS if b.startswith("arg")},
                      **{b: {"BLOCK_ITEMS": 1024, "num_warps": 4} for b in REDUCE_BUCKETS if b.startswith("user")}},
    doc="DeviceReduce: tile size, grid size, grid mapping, load algorithm and cache modifiers; "
        "bucket = <kind>_<f|i><item bytes>[_small]: reduction kind (sum, minmax, arg, user), float or "
        "integer items, item size, and _small for n <= 2^22 (launch-bound sizes)",
)


def reduce_bucket(kind: str, dtype: torch.dtype, n: int) -> str:
    """The policy bucket of a reduction: kind, float/int, item bytes, small (launch-bound) or not."""
    size = dtype.itemsize if dtype.itemsize in (1, 2, 4, 8) else 8
    return f"{kind}_{'f' if dtype.is_floating_point else 'i'}{size}{'_small' if n <= SMALL_ITEMS else ''}"


# ----------------------------------------------------------------------------------------------
# launcher
# ----------------------------------------------------------------------------------------------

_COUNTERS: dict = {}
_SMS: dict = {}


def _num_sms(device: torch.device) -> int:
    key = str(device)
    v = _SMS.get(key)
    if v is None:
        v = _SMS[key] = num_sms(device)
    return v

#: tile size used under the interpreter when no policy is passed (CPU tests stay fast)
INTERPRETER_TILE = 128


def _counter(device: torch.device, capture: bool) -> torch.Tensor:
    """The zeroed int32 ticket counter of the last-program-finishes step, one per (device, stream).

    Kernels on one stream run one after another and the last program resets the counter to zero,
    so a counter is reused without a memset launch (made by :func:`persistent`). A CUDA graph capture
    gets a fresh one (``capture``: its memory is the graph's, and its zeroing part of the graph)."""
    if capture:
        return torch.zeros(1, dtype=torch.int32, device=device)
    key = _stream_key(device)
    c = _COUNTERS.get(key)
    if c is None:
        c = _COUNTERS[key] = persistent(device, lambda: torch.zeros(1, dtype=torch.int32, device=device))
    return c


_WORKSPACES: dict = {}


def _workspace(device: torch.device, dtype: torch.dtype, size: int, slot: int, capture: bool) -> torch.Tensor:
    """The partials buffer of one (device, stream, dtype): written and read within one launch, so
    launches on the same stream (which run one after another) can share it; saves allocations on
    the launch-bound small sizes. ``slot``: the operand (each operand of a tuple has its own). Made by
    :func:`persistent`; a CUDA graph capture (``capture``) gets a fresh one (kept by the graph, not by
    this cache)."""
    if capture:
        return torch.empty(size, dtype=dtype, device=device)
    key = (_stream_key(device), dtype, slot)
    buf = _WORKSPACES.get(key)
    if buf is None or buf.numel() < size:
        if buf is not None:   # (a larger one replaces it: a plan may still use it, so it stays)
            _OUTGROWN.append(buf)
        buf = _WORKSPACES[key] = persistent(device, lambda: torch.empty(size, dtype=dtype, device=device))
    return buf


#: workspaces replaced by larger ones (a remembered plan keeps using its own; the sizes are a few
#: thousand items per policy bucket, so few are ever outgrown)
_OUTGROWN: list = []


def _stream_key(device: torch.device):
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return (index, torch._C._cuda_getCurrentRawStream(index))  # the raw handle: far cheaper than current_stream()
    return (str(device), 0)


def sum_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype ``torch.sum`` returns for items of ``dtype`` (integers and bool -> int64)."""
    return dtype if dtype.is_floating_point or dtype.is_complex else torch.int64


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """Accumulator of a sum: fp16/bf16 -> fp32, integers -> int64, fp32/fp64 unchanged."""
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return sum_dtype(dtype)


def identity(op: str, dtype: torch.dtype):
    """The padding value of a built-in reduction for items of ``dtype`` (the accumulator's dtype)."""
    if op == "sum":
        return 0
    low = op in ("min", "argmin")
    if dtype.is_floating_point:
        return math.inf if low else -math.inf
    info = torch.iinfo(dtype)
    return info.max if low else info.min


def _storage_view(x: torch.Tensor) -> torch.Tensor:
    """bool items are read as uint8 (Triton's int1 cannot be loaded from torch bool storage)."""
    return x.view(torch.uint8) if x.dtype == torch.bool else x


def _flat(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)


class _BuiltinPlan:
    """A recorded launch of the built-in reduction kernel for one (op, dtype, size, alignment,
    stream, policy): a repeated call only allocates the results and calls the compiled kernel (the
    host work of a launch-bound reduction is most of its time). It keeps its own partials buffer
    and ticket counter (the stream's), so it stays valid when the shared workspace grows."""
    __slots__ = ("pol", "run", "ints", "out_dtypes", "parts", "counter", "ident")

    def __call__(self, x):
        device = x.device
        outs = [torch.empty(1, dtype=d, device=device) for d in self.out_dtypes]
        n, num_full, q, r, num_partials = self.ints
        self.run(x, n, outs[0], outs[-1], self.parts[0], self.parts[-1], self.counter, self.ident, num_full, q, r,
                 num_partials)
        return outs


_BUILTIN_PLANS: dict = {}


def _launch(kind: str, op_code: int, xs: Sequence[torch.Tensor], out_dtypes: Sequence[torch.dtype], *,
            combine=None, transform=None, inits: Sequence[torch.Tensor] | None = None, ident=0,
            bucket_dtype: torch.dtype | None = None, pol: policy.Policy | None = None,
            bool_mask: int = 0) -> list[torch.Tensor]:
    """Run the reduce kernel over 1-D contiguous ``xs`` (n >= 1 items); returns 1-element tensors."""
    x0 = xs[0]
    n = x0.numel()
    device = x0.device
    plan_key = None
    capture = capturing(device)
    # (nor inside a caller's recording of launches, whose record would miss a plan's launches)
    if (pol is None and op_code != 5 and device.type == "cuda" and direct_ok() and not capture
            and not recording_launches()):
        pol = policy.select("reduce", device, reduce_bucket(kind, bucket_dtype or x0.dtype, n))
        plan_key = (op_code, x0.dtype, tuple(out_dtypes), n, x0.data_ptr() & 15 == 0, ident, _stream_key(device))
        plan = _BUILTIN_PLANS.get(plan_key)
        if plan is not None and plan.pol is pol:
            return plan(_storage_view(x0))
    if pol is None:
        pol = policy.select("reduce", device, reduce_bucket(kind, bucket_dtype or x0.dtype, n))
        if interpreter_active():  # the CPU interpreter runs tl.reduce item by item: keep tiles small
            pol = policy.Policy(pol.op, {**pol.values, "BLOCK_ITEMS": INTERPRETER_TILE}, 4, 1, pol.source)
    tile = int(pol["BLOCK_ITEMS"])
    mapping = GRID_MAPPINGS[pol["GRID_MAPPING"]]
    max_programs = _bi.max(1, _num_sms(device) * int(pol["PROGRAMS_PER_SM"]))
    num_full = n // tile
    if num_full == 0:
        programs, q, r, num_partials = 1, 0, 0, 0
    else:
        programs = _bi.min(num_full, max_programs)
        q, r = divmod(num_full, programs)
        num_partials = programs
    outs = tuple(torch.empty(1, dtype=d, device=device) for d in out_dtypes)
    parts = tuple(_workspace(device, d, _bi.max(max_programs, 1), j, capture) for j, d in enumerate(out_dtypes))
    if inits is None:
        inits = outs  # unused by built-in ops
    part_log2 = _bi.max(0, (max_programs - 1).bit_length())
    tail_log2 = _bi.max(0, tile.bit_length() - 2)  # tail < tile
    common = dict(TILE=tile, MAPPING=mapping, VECTORIZE=pol["LOAD"] == "vectorize",
                  CACHE_MODIFIER=pol["CACHE_MODIFIER"], EVICTION=pol["EVICTION"], PART_LOG2=part_log2,
                  FOR_LOOP=not interpreter_active(), num_warps=pol.num_warps, num_stages=pol.num_stages)
    if op_code == 5:
        launch(_reduce_kernel, (programs,),
               tuple(_storage_view(x) for x in xs), n, outs, parts, tuple(inits), _counter(device, capture),
               num_full, q, r, num_partials, COMBINE=combine, TRANSFORM=transform, K_IN=len(xs),
               K=len(out_dtypes), TAIL_LOG2=tail_log2, BOOL_MASK=bool_mask, **common)
    else:
        counter = _counter(device, capture)
        args = (_storage_view(x0), n, outs[0], outs[-1], parts[0], parts[-1], counter, ident, num_full, q, r,
                num_partials)
        if plan_key is None:
            launch(_reduce_builtin_kernel, (programs,), *args, OP=op_code, **common)
        else:
            run = bind(_reduce_builtin_kernel, (programs,), *args, OP=op_code, **common)
            if run is not None:
                plan = _BuiltinPlan()
                plan.pol, plan.run, plan.out_dtypes, plan.parts, plan.counter = pol, run, tuple(out_dtypes), parts, counter
                plan.ints, plan.ident = (n, num_full, q, r, num_partials), ident
                if len(_BUILTIN_PLANS) >= 256:
                    _BUILTIN_PLANS.clear()
                _BUILTIN_PLANS[plan_key] = plan
    return list(outs)


def _check_input(x, name="x", dtypes=SUPPORTED_DTYPES) -> torch.Tensor:
    from .._utils import check_tensor
    check_tensor(x, name, dtypes)
    return x


# ----------------------------------------------------------------------------------------------
# device API
# ----------------------------------------------------------------------------------------------

def sum(x: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:  # noqa: A001
    """Sum of all items, a 0-d tensor of ``torch.sum``'s dtype (or ``dtype``).

    Accumulates fp16/bf16 in fp32, integers and bool in int64 (``dtype=int32`` wraps as torch
    does; ``dtype=torch.bool`` is refused here, the ``sum`` operator takes it). As ``torch.sum``, a ``dtype`` that cannot hold every item exactly (narrowing, int ->
    float) is applied to the items before summing. Deterministic: bitwise identical results run to
    run on the same GPU."""
    _check_input(x, dtypes=SUM_DTYPES)
    out_dtype = dtype if dtype is not None else sum_dtype(x.dtype)
    if not isinstance(out_dtype, torch.dtype) or out_dtype not in SUPPORTED_DTYPES + COMPLEX_DTYPES \
            or out_dtype == torch.bool:
        raise InputTypeError(f"sum: unsupported result dtype {out_dtype!r}")
    if out_dtype.is_complex:
        return _complex_sum(x, None, False, out_dtype)
    if dtype is not None and dtype != x.dtype and not _sum_cast_preserves(x.dtype, dtype):
        x = x.to(dtype)   # (as the tritoncub::sum operator)
    acc = acc_dtype(out_dtype) if out_dtype.is_floating_point else torch.int64
    if x.dtype.is_floating_point and not out_dtype.is_floating_point:
        acc = out_dtype if out_dtype == torch.int64 else torch.int64
    if x.numel() == 0:
        return torch.zeros((), dtype=out_dtype, device=x.device)
    (r,) = _launch("sum", 0, [_flat(x)], [acc], ident=0)
    return r.reshape(()).to(out_dtype)


def _minmax(x: torch.Tensor, op: str) -> torch.Tensor:
    _check_input(x)
    if x.numel() == 0:
        raise InputValueError(f"{op}: the input is empty (a min/max of no items is undefined)")
    xs = _storage_view(_flat(x))
    acc = _cmp_dtype(xs.dtype)
    (r,) = _launch("minmax", OP_CODES[op], [xs], [acc], ident=identity(op, acc), bucket_dtype=xs.dtype)
    r = r.reshape(())
    return r.view(torch.bool) if x.dtype == torch.bool else r.to(x.dtype)


def _cmp_dtype(dtype: torch.dtype) -> torch.dtype:
    """min/max/arg compare fp16/bf16 in fp32 (exact: the result is one of the items)."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def min(x: torch.Tensor) -> torch.Tensor:  # noqa: A001
    """Smallest item (NaN if any item is NaN, as ``torch.amin``), a 0-d tensor of x's dtype."""
    return _minmax(x, "min")


def max(x: torch.Tensor) -> torch.Tensor:  # noqa: A001
    """Largest item (NaN if any item is NaN, as ``torch.amax``), a 0-d tensor of x's dtype."""
    return _minmax(x, "max")


def _arg(x: torch.Tensor, op: str) -> tuple[torch.Tensor, torch.Tensor]:
    _check_input(x)
    if x.numel() == 0:
        raise InputValueError(f"{op}: the input is empty")
    xs = _storage_view(_flat(x))
    acc = _cmp_dtype(xs.dtype)
    v, i = _launch("arg", OP_CODES[op], [xs], [acc, torch.int64], ident=identity(op, acc), bucket_dtype=xs.dtype)
    v = v.reshape(())
    return (v.view(torch.bool) if x.dtype == torch.bool else v.to(x.dtype)), i.reshape(())


def argmin(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(value, index) of the smallest item, index into the flattened input, the first one on ties;
    a NaN counts as the smallest (torch's argmin returns the first NaN's index)."""
    return _arg(x, "argmin")


def argmax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(value, index) of the largest item, the first on ties; the first NaN wins (as torch.argmax)."""
    return _arg(x, "argmax")


def _as_tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class UserAccumulators:
    """The accumulators of a user reduction, checked (shared by the device-wide and the segmented
    reduce): ``dtypes`` (k result dtypes), ``storage`` (the same with bool held as int64: a combine
    such as ``a + b`` over many True operands cannot wrap back to 0, as it did in uint8 at 256),
    ``bool_mask`` (bit j: accumulator j is bool: operands converted by ``!= 0``, results returned as
    bool) and :meth:`init_tensors`."""

    def __init__(self, xs, init, dtype, combine_fn, transform_fn, name: str):
        self.inits = _as_tuple(init)
        k, k_in = len(self.inits), len(xs)
        if k == 0:
            raise InputValueError(f"{name}: init is an empty tuple")
        if transform_fn is None and k != k_in:
            raise InputValueError(f"{name}: init has {k} operand(s) but x has {k_in} (without transform_fn every "
                                  "input is one accumulator)")
        check_jit_function(combine_fn, f"{name}: combine_fn", 2 * k,
                           "a, b" if k == 1 else f"the {k} earlier accumulators, then the {k} later ones")
        if transform_fn is not None:
            check_jit_function(transform_fn, f"{name}: transform_fn", k_in,
                               "the item" if k_in == 1 else f"one item of each of the {k_in} inputs")
        if dtype is None:
            if k != k_in:
                raise InputValueError(f"{name}: transform_fn gives {k} accumulator(s) (init) from {k_in} input(s): "
                                      f"pass dtype= (a {k}-tuple of accumulator dtypes)")
            # fp16/bf16 accumulate in fp32; other dtypes are kept
            dtypes = tuple(acc_dtype(t.dtype) if t.dtype.is_floating_point else t.dtype for t in xs)
        else:
            dtypes = _as_tuple(dtype)
            if len(dtypes) != k:
                raise InputValueError(f"{name}: init has {k} operand(s) but dtype gives {len(dtypes)} accumulator "
                                      "dtype(s)")
            for j, d in enumerate(dtypes):
                if not isinstance(d, torch.dtype):
                    raise InputTypeError(f"{name}: dtype{f'[{j}]' if k > 1 else ''} must be a torch.dtype, got "
                                         f"{type(d).__name__}")
                if d not in SUPPORTED_DTYPES:
                    raise InputTypeError(f"{name}: accumulator dtype{f'[{j}]' if k > 1 else ''} "
                                         f"{str(d).replace('torch.', '')} is not supported; supported: "
                                         + ", ".join(str(t).replace("torch.", "") for t in SUPPORTED_DTYPES))
        self.dtypes = dtypes
        self.storage = tuple(torch.int64 if d == torch.bool else d for d in dtypes)
        self.bool_mask = _bi.sum(1 << j for j, d in enumerate(dtypes) if d == torch.bool)

    def init_tensors(self, device) -> tuple:
        """One-item tensors of the inits in the storage dtypes (a bool init is ``v != 0``); an init the
        accumulator cannot hold is refused (:func:`check_init_value`: numbers and one-item tensors)."""
        out = []
        for j, (v, d, a) in enumerate(zip(self.inits, self.dtypes, self.storage)):
            check_init_value(v, d, f"init[{j}]" if len(self.inits) > 1 else "init")
            if isinstance(v, torch.Tensor):
                v = v.reshape(1).to(device)
                out.append((v != 0).to(a) if d == torch.bool else v.to(a))
            else:
                out.append(torch.full((1,), bool(v) if d == torch.bool else v, dtype=a, device=device))   # (capturable)
        return tuple(out)

    def results(self, res):
        """Results in the storage dtypes -> the result dtypes (int64 storage of bool: ``!= 0``, which also
        normalises a combine that left a value other than 0/1, e.g. ``a + b``)."""
        return tuple(r != 0 if d == torch.bool else r for r, d in zip(res, self.dtypes))


def transform_reduce(x, transform_fn, combine_fn, init, dtype=None):
    """``init (+) transform_fn(x_0) (+) transform_fn(x_1) ...`` with a user ``@triton.jit`` combine.

    ``x``: a tensor or a tuple of k_in equally long tensors (flattened). ``transform_fn``: a
    ``@triton.jit`` function of k_in tiles returning a tile (or a k-tuple of tiles), or ``None``.
    ``combine_fn``: ``@triton.jit``, associative and commutative, of 2k arguments returning a k-tuple
    (or one tile when k = 1). ``init``: a number (or one-item tensor) or a k-tuple, combined exactly
    once (it need not be an identity); one the accumulator cannot hold is refused. ``dtype``: accumulator dtype(s); by default fp16/bf16 -> fp32, others unchanged,
    which needs k == k_in. A bool accumulator takes each operand as ``operand != 0`` (as torch
    converts to bool) and is combined as int64 0/1 values (a combine that counts, ``a + b``, gives True
    for any True operand, as torch's bool sum). Returns a 0-d tensor (k = 1) or a tuple
    of 0-d tensors. Deterministic.
    """
    xs = _as_tuple(x)
    if not xs:
        raise InputValueError("reduce: no input tensors")
    for j, t in enumerate(xs):
        _check_input(t, f"x[{j}]" if len(xs) > 1 else "x")
    check_same_device(*((f"x[{j}]", t) for j, t in enumerate(xs)))
    if any(t.numel() != xs[0].numel() for t in xs):
        raise InputValueError(f"reduce: the input tensors differ in size: {[t.numel() for t in xs]}")
    accs = UserAccumulators(xs, init, dtype, combine_fn, transform_fn, "reduce")
    k = len(accs.inits)
    init_t = accs.init_tensors(xs[0].device)
    if xs[0].numel() == 0:
        res = [t.reshape(()) for t in init_t]
    else:
        flat = [_storage_view(_flat(t)) for t in xs]
        res = [r.reshape(()) for r in _launch("user", OP_CODES["user"], flat, accs.storage, combine=combine_fn,
                                              transform=transform_fn, inits=init_t,
                                              bucket_dtype=accs.storage[0], bool_mask=accs.bool_mask)]
    res = accs.results(res)
    return res[0] if k == 1 else tuple(res)


def reduce(x, combine_fn, init, dtype=None):
    """``init (+) x_0 (+) x_1 (+) ...`` with a user ``@triton.jit`` combine (see transform_reduce)."""
    return transform_reduce(x, None, combine_fn, init, dtype=dtype)



# ----------------------------------------------------------------------------------------------
# torch operators: tritoncub::sum / amax / amin / argmax / argmin
# ----------------------------------------------------------------------------------------------

def _norm_dims(x: torch.Tensor, dim) -> list[int]:
    """Sorted, wrapped, de-duplicated reduced dims (None or [] = all, as torch.sum)."""
    nd = x.dim()
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(nd))
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        d = wrap_dim(d, nd)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return sorted(d for d in out if d < nd) if nd else []


def _out_shape(x: torch.Tensor, dims: list[int], keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if i in dims else s for i, s in enumerate(x.shape)]
    return [s for i, s in enumerate(x.shape) if i not in dims]


def _rows_view(x: torch.Tensor, dims: list[int]) -> tuple[torch.Tensor, int, int, bool]:
    """``x`` with the reduced dims moved last, as a contiguous ``(M, K)`` matrix, and whether that is a
    view of ``x`` (the reduced dims trailing in a contiguous ``x``) rather than a copy."""
    nd = x.dim()
    kept = [i for i in range(nd) if i not in dims]
    m = 1
    for i in kept:
        m *= x.shape[i]
    k = 1
    for i in dims:
        k *= x.shape[i]
    if kept == list(range(len(kept))) and x.is_contiguous():  # trailing dims already: a view
        return x.view(m, k), m, k, True
    xp = x.permute(*kept, *dims) if nd else x
    return xp.contiguous().reshape(m, k), m, k, False


#: reductions over some dims of a GPU tensor, by call signature (op, shape, strides, dtype, device, dim,
#: keepdim, result dtype): the route the first call took (rows of a contiguous view, or columns of one)
#: -- a repeated call skips the argument handling and the dims' arithmetic (host time is most of a small
#: reduction's time) and takes the same route, so its results are the same
_DIMS_CALLS: dict = {}


def _dims_call(name: str, x: torch.Tensor, dim, keepdim: bool, dtype=None):
    """The :data:`_DIMS_CALLS` key of a call (None for tensors not on a GPU)."""
    if not (x.is_cuda or interpreter_active()):
        return None
    # (is_neg: a lazily negated view, which the full path's checks refuse, never matches a plain call's key)
    return (name, x.shape, x.stride(), x.dtype, x.device, dim if dim is None or isinstance(dim, int) else tuple(dim),
            keepdim, dtype, x.is_neg())


def _replay_dims(x: torch.Tensor, call):
    """The result of a call whose route :data:`_DIMS_CALLS` holds (None if it holds none, or the route no
    longer applies)."""
    route = _DIMS_CALLS.get(call)
    if route is None:
        return None
    from . import segmented_reduce as seg
    kind, op, p, q, r, shape, out_dtype = route
    if kind == "rows":
        res = seg._run(x.view(-1), None, None, q, p, op, uniform=True, mean_len=q, dtype=out_dtype)
    else:
        res = seg.reduce_columns(x.view(p, q, r), op, dtype=out_dtype)
        if res is None:
            _DIMS_CALLS.pop(call, None)
            return None
    return (res[1] if op in ("argmin", "argmax") else res).view(shape)


def _remember_dims(memo, route) -> None:
    if memo is None:
        return
    call, shape = memo
    if len(_DIMS_CALLS) >= 256:
        _DIMS_CALLS.clear()
    _DIMS_CALLS[call] = route[:5] + (tuple(shape),) + route[5:]


def _reduce_dims(x: torch.Tensor, dims: list[int], op: str, out_dtype=None, memo=None):
    """values (and for arg ops indices into the reduced extent) over ``dims``, shape = kept dims.
    ``memo``: ``(call, result shape)`` to remember the route under in :data:`_DIMS_CALLS`."""
    from . import segmented_reduce as seg
    kept_shape = [s for i, s in enumerate(x.shape) if i not in dims]
    if len(dims) == x.dim():  # a full reduction: the device-wide kernel
        if op == "sum":
            return sum(x, dtype=out_dtype).reshape(kept_shape)
        if op in ("min", "max"):
            return _minmax(x, op).reshape(kept_shape)
        v, i = _arg(x, op)
        return v.reshape(kept_shape), i.reshape(kept_shape)
    if x.is_contiguous() and dims == list(range(dims[0], dims[-1] + 1)) and dims[-1] < x.dim() - 1:
        # a run of dims that are not the last: reduce the columns of [before, run, after] in place
        a = r = b = 1
        for i, s in enumerate(x.shape):
            if i < dims[0]:
                a *= s
            elif i <= dims[-1]:
                r *= s
            else:
                b *= s
        if b > 1:
            col_dtype = (out_dtype if out_dtype is not None else sum_dtype(x.dtype)) if op == "sum" else None
            res = seg.reduce_columns(x.view(a, r, b), op, dtype=col_dtype)
            if res is not None:
                _remember_dims(memo, ("columns", op, a, r, b, col_dtype))
                if op in ("argmin", "argmax"):
                    return res[0].reshape(kept_shape), res[1].reshape(kept_shape)
                return res.reshape(kept_shape)
    x2, m, k, in_place = _rows_view(x, dims)
    row_dtype = (out_dtype if out_dtype is not None else sum_dtype(x.dtype)) if op == "sum" else None
    r = seg.reduce_rows(x2, op, dtype=row_dtype)
    if in_place:   # (a repeated call takes the same rows of x; a copy's route is not remembered)
        _remember_dims(memo, ("rows", op, m, k, 0, row_dtype))
    if op == "sum":
        return r.reshape(kept_shape)
    if op in ("argmin", "argmax"):
        return r[0].reshape(kept_shape), r[1].reshape(kept_shape)
    return r.reshape(kept_shape)


def _sum_cast_preserves(src: torch.dtype, dst: torch.dtype) -> bool:
    """Whether every ``src`` value is exactly a ``dst`` value (then accumulating ``src`` items in the
    wider accumulator equals summing them cast to ``dst``, without the copy)."""
    if dst == torch.int64:
        return src in _INT_LIKE
    if dst == torch.float32:
        return src in (torch.float16, torch.bfloat16)
    if dst == torch.float64:
        return src in (torch.float16, torch.bfloat16, torch.float32)
    return False


def _sum_result_dtype(x: torch.Tensor, dtype) -> torch.dtype:
    return dtype if dtype is not None else sum_dtype(x.dtype)


def _check_op_input(x: torch.Tensor, name: str, dtypes=SUPPORTED_DTYPES) -> None:
    if not isinstance(x, torch.Tensor):
        raise InputTypeError(f"{name}: x must be a torch.Tensor")
    if x.dtype not in dtypes:
        raise InputTypeError(f"{name}: x has dtype {str(x.dtype).replace('torch.', '')}; supported dtypes are "
                             + ", ".join(str(d).replace("torch.", "") for d in dtypes))
    check_device(x, "x")


# Registration through ``tritoncub._library`` (``torch.library.Library``, not ``custom_op``: see
# that module for the per-call cost this saves).

def _define_op(name: str, schema: str, impl: Callable, fake: Callable, backward: Callable | None = None,
               setup: Callable | None = None) -> Op:
    op = Op(name, impl, schema)
    op.register_fake(fake)
    if backward is not None:
        op.register_autograd(backward, setup_context=setup)
    return op


def _sum_impl(x: torch.Tensor, dim=None, keepdim: bool = False, dtype=None) -> torch.Tensor:
    """torch.sum(x, dim, keepdim, dtype=dtype): deterministic, fp16/bf16 accumulate in fp32."""
    call = _dims_call("sum", x, dim, keepdim, dtype)
    if call is not None:
        r = _replay_dims(x, call)
        if r is not None:
            return r
    _check_sum_args(x, dtype)
    if (dtype if dtype is not None else x.dtype).is_complex:
        return _complex_sum(x, dim, keepdim, dtype if dtype is not None else x.dtype)
    if dtype == torch.bool:   # a bool sum is a logical or (of x != 0), whatever x's dtype
        return _sum_impl(x != 0, dim, keepdim, torch.int64) != 0
    if dtype is not None and dtype != x.dtype and not _sum_cast_preserves(x.dtype, dtype):
        # torch.sum(x, dtype=d) sums x.to(d): a cast that can change values (narrowing, int -> float)
        # happens first
        return _sum_impl(x.to(dtype), dim, keepdim, dtype)   # (the repeat-call memo is keyed on the cast x)
    dims = _norm_dims(x, dim)
    out_dtype = _sum_result_dtype(x, dtype)
    shape = _out_shape(x, dims, keepdim)
    if x.numel() == 0 or any(x.shape[d] == 0 for d in dims):
        return torch.zeros(shape, dtype=out_dtype, device=x.device)
    r = _reduce_dims(x, dims, "sum", out_dtype, memo=None if call is None else (call, shape))
    if r.dtype != out_dtype:
        r = r.to(out_dtype)
    return r.view(shape) if keepdim else r


def _check_sum_args(x, dtype) -> None:
    """The argument checks of the sum operator (shared with its fake implementation)."""
    _check_op_input(x, "sum", SUM_DTYPES)
    results = SUPPORTED_DTYPES + COMPLEX_DTYPES
    if dtype is not None and dtype != torch.bool and dtype not in results:
        raise InputTypeError(f"sum: dtype {str(dtype).replace('torch.', '')} is not supported; supported dtypes "
                             "are " + ", ".join(str(d).replace("torch.", "") for d in results))


def _complex_sum(x: torch.Tensor, dim, keepdim: bool, out_dtype: torch.dtype) -> torch.Tensor:
    """A sum of complex items (``x`` cast to the complex ``out_dtype`` first): the real and imaginary
    parts summed as two float sums over the same dims, in the same order (deterministic as those).
    (A complex ``x`` summed to a real dtype is cast first, as torch does: the real parts.)"""
    x = x.to(out_dtype).resolve_conj()
    dims = _norm_dims(x, dim)
    if not dims:   # (a 0-d x: nothing to add)
        return x.clone()
    parts = _sum_impl(torch.view_as_real(x), dims, keepdim)   # [kept dims..., 2]
    return torch.view_as_complex(parts.contiguous())


def _sum_fake(x, dim=None, keepdim=False, dtype=None):
    _check_sum_args(x, dtype)
    dims = _norm_dims(x, dim)
    return x.new_empty(_out_shape(x, dims, keepdim), dtype=_sum_result_dtype(x, dtype))


def _sum_setup(ctx, inputs, output):
    x, dim, keepdim, dtype = (tuple(inputs) + (None, False, None))[:4]
    ctx.shape = x.shape
    ctx.dims = _norm_dims(x, dim)
    ctx.keepdim = keepdim
    ctx.in_dtype = x.dtype


def _restore_dims(g: torch.Tensor, dims: list[int], keepdim: bool) -> torch.Tensor:
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g


def _sum_backward(ctx, grad):
    g = _restore_dims(grad, ctx.dims, ctx.keepdim)
    return g.expand(ctx.shape).to(ctx.in_dtype), None, None, None


_define_op("sum", "(Tensor x, int[1]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor",
           _sum_impl, _sum_fake, _sum_backward, _sum_setup)


def _make_minmax_op(name: str, op: str):
    def check(x, dim):
        """The argument checks (shared with the fake implementation); returns the reduced dims."""
        _check_op_input(x, name)
        dims = _norm_dims(x, dim)
        if x.numel() == 0 and (dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0)):
            # (torch's error types and texts)
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               f"Specify the reduction dim with the 'dim' argument.")
        empty = [d for d in sorted(dims) if x.shape[d] == 0]
        if empty:
            raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have non-zero size.")
        return dims

    def impl(x: torch.Tensor, dim=None, keepdim: bool = False) -> torch.Tensor:
        call = _dims_call(name, x, dim, keepdim)
        if call is not None:
            r = _replay_dims(x, call)
            if r is not None:
                return r
        dims = check(x, dim)
        shape = _out_shape(x, dims, keepdim)
        if x.numel() == 0:
            return x.new_empty(shape)
        return _reduce_dims(x, dims, op, memo=None if call is None else (call, shape)).reshape(shape)

    def fake(x, dim=None, keepdim=False):
        return x.new_empty(_out_shape(x, check(x, dim), keepdim))

    def setup(ctx, inputs, output):
        x, dim, keepdim = (tuple(inputs) + (None, False))[:3]
        ctx.dims = _norm_dims(x, dim)
        ctx.keepdim = keepdim
        ctx.save_for_backward(x, output)

    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        # torch's rule: the gradient is shared evenly among the items equal to the extreme
        mask = (x == _restore_dims(out, ctx.dims, ctx.keepdim)).to(grad.dtype)
        count = mask.sum(dim=ctx.dims, keepdim=True) if ctx.dims else mask
        return _restore_dims(grad, ctx.dims, ctx.keepdim) * mask / count, None, None

    _define_op(name, "(Tensor x, int[1]? dim=None, bool keepdim=False) -> Tensor", impl, fake, backward, setup)
    return impl


_amax_impl = _make_minmax_op("amax", "max")
_amin_impl = _make_minmax_op("amin", "min")


def _make_arg_op(name: str):
    def check(x, dim):
        """The argument checks (shared with the fake implementation); the reduced dims (None: all)."""
        _check_op_input(x, name)
        if x.dtype == torch.bool:
            raise RuntimeError(f"{name}(): does not support bool input (as torch)")
        if dim is None:
            if x.numel() == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return None
        dims = _norm_dims(x, [dim])
        if any(x.shape[d] == 0 for d in dims):
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        return dims

    def impl(x: torch.Tensor, dim=None, keepdim: bool = False) -> torch.Tensor:
        call = _dims_call(name, x, dim, keepdim)
        if call is not None:
            r = _replay_dims(x, call)
            if r is not None:
                return r
        dims = check(x, dim)
        if dims is None:
            _, i = _arg(x, name)
            return i.reshape([1] * x.dim() if keepdim else [])
        shape = _out_shape(x, dims, keepdim)
        if x.numel() == 0:
            return torch.empty(shape, dtype=torch.int64, device=x.device)
        if x.dim() == 0:
            return torch.zeros(shape, dtype=torch.int64, device=x.device)
        _, i = _reduce_dims(x, dims, name, memo=None if call is None else (call, shape))
        return i.reshape(shape)

    def fake(x, dim=None, keepdim=False):
        dims = check(x, dim)
        if dims is None:
            return x.new_empty([1] * x.dim() if keepdim else [], dtype=torch.int64)
        return x.new_empty(_out_shape(x, dims, keepdim), dtype=torch.int64)

    _define_op(name, "(Tensor x, int? dim=None, bool keepdim=False) -> Tensor", impl, fake)
    return impl


_argmax_impl = _make_arg_op("argmax")
_argmin_impl = _make_arg_op("argmin")
