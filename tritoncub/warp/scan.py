"""WarpScan: prefix scans within every logical warp of a ``[WARPS, LANES]`` tile (CUB's ``WarpScan``).

Row ``w`` of the tile is logical warp ``w``; lane ``t`` holds that warp thread's input (one item
per thread, as in CUB). ``LOGICAL_WARP_THREADS`` (1..32, ``0`` = the whole row) may be smaller than
``LANES`` (a power of two) and need not be a power of two: a forward scan's lane ``t`` depends only on
lanes ``0..t``, so the padding lanes ``t >= LOGICAL_WARP_THREADS`` never reach the real ones and hold
unspecified values in the results. ``COMBINE`` is any associative ``@triton.jit`` function of two
tiles (it need not be commutative, and no identity is needed). bfloat16 tiles are combined in
float32 and the results rounded back to bfloat16 (:func:`widen`).

Every scan returns ``(scan, aggregate)``: the ``[WARPS, LANES]`` results and the ``[WARPS]`` reduction
of each warp's ``LOGICAL_WARP_THREADS`` inputs (CUB's ``warp_aggregate``, which never includes the
initial value). The aggregate is the inclusive scan's last real lane, so it is bitwise consistent
with the scan.

CUB's shuffle-based and shared-memory WarpScan variants have no analogue: ``tl.associative_scan``
along axis 1 lowers to in-register and warp-shuffle steps chosen by Triton. The segmented scan
(:func:`warp_segmented_inclusive_scan`) is an explicit Hillis–Steele scan of ``log2(LANES)``
``tl.gather`` steps, CUB's shuffle-up algorithm with a segment bound.
"""
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@triton.constexpr_function
def _log2(n):
    return max(int(n) - 1, 0).bit_length()


@triton.jit
def widen(tile):
    """The tile in the type combines run in: bfloat16 is combined in float32 (and results rounded back
    to bfloat16), as torch reduces bfloat16; Triton's interpreter cannot run bfloat16 combine
    functions. Every other dtype is combined as is."""
    if tile.dtype == tl.bfloat16:
        out = tile.to(tl.float32)
    else:
        out = tile
    return out


@triton.jit
def fill_like(tile, value):
    """A tile of ``tile``'s shape and dtype filled with ``value`` (a Python number or a scalar of any
    dtype, converted like a cast). Built through :func:`widen`'s type, which also keeps the
    interpreter (no bfloat16 constants) happy."""
    return (tl.zeros_like(widen(tile)) + value).to(tile.dtype)


@triton.jit
def sum_operand(tile):
    """The tile in the type a sum accumulates in: ``tl.sum``'s rule (integers narrower than 32 bits in
    (u)int32) plus :func:`widen` (bfloat16 in float32)."""
    if tile.dtype.is_int_signed() and tile.dtype.primitive_bitwidth < 32:
        out = tile.to(tl.int32)
    elif tile.dtype.is_int_unsigned() and tile.dtype.primitive_bitwidth < 32:
        out = tile.to(tl.uint32)
    else:
        out = widen(tile)
    return out


@triton.jit
def _warp_max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _warp_add(a, b):
    return a + b


@triton.jit
def warp_lane(tile, lane):
    """``tile[w, lane[w]]`` for every warp ``w`` as a ``[WARPS]`` tensor; ``lane`` is a scalar or a
    ``[WARPS]`` tensor (clamped to ``[0, LANES)``). A gather, so values (NaN, -0.0) move bit-exactly."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    idx = tl.zeros([WARPS], dtype=tl.int32) + lane
    idx = tl.minimum(tl.maximum(idx, 0), LANES - 1)
    return tl.reshape(tl.gather(tile, idx[:, None], 1), (WARPS,))


@triton.jit
def warp_shift_up(tile, fill):
    """``out[w, t] = tile[w, t-1]``, ``out[w, 0] = fill`` (CUB's ``ShuffleUp`` by one lane)."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    t = tl.arange(0, LANES)[None, :]
    src = tl.broadcast_to(tl.maximum(t - 1, 0), (WARPS, LANES))
    return tl.where(t == 0, fill, tl.gather(tile, src, 1))


@triton.jit
def warp_inclusive_scan(tile, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Inclusive scan of each warp: ``out[w, t] = x[w, 0] ⊕ ... ⊕ x[w, t]``. Returns ``(scan, aggregate)``."""
    L: tl.constexpr = tile.shape[1] if LOGICAL_WARP_THREADS == 0 else LOGICAL_WARP_THREADS
    inc = tl.associative_scan(widen(tile), 1, COMBINE)
    return inc.to(tile.dtype), warp_lane(inc, L - 1).to(tile.dtype)


@triton.jit
def warp_inclusive_scan_init(tile, init, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Inclusive scan seeded with ``init``: ``out[w, t] = init ⊕ x[w, 0] ⊕ ... ⊕ x[w, t]``.
    Returns ``(scan, aggregate)``; the aggregate excludes ``init``."""
    L: tl.constexpr = tile.shape[1] if LOGICAL_WARP_THREADS == 0 else LOGICAL_WARP_THREADS
    x = widen(tile)
    inc = tl.associative_scan(x, 1, COMBINE)
    seeded = COMBINE(tl.full(tile.shape, init, x.dtype), inc)
    return seeded.to(tile.dtype), warp_lane(inc, L - 1).to(tile.dtype)


@triton.jit
def warp_exclusive_scan(tile, init, COMBINE: tl.constexpr, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Exclusive scan seeded with ``init``: ``out[w, 0] = init``, ``out[w, t] = init ⊕ x[w, 0] ⊕ ... ⊕
    x[w, t-1]``. Returns ``(scan, aggregate)``; the aggregate excludes ``init`` (as in CUB)."""
    L: tl.constexpr = tile.shape[1] if LOGICAL_WARP_THREADS == 0 else LOGICAL_WARP_THREADS
    x = widen(tile)
    inc = tl.associative_scan(x, 1, COMBINE)
    init_tile = tl.full(tile.shape, init, x.dtype)
    prev = warp_shift_up(inc, init_tile)
    t = tl.arange(0, tile.shape[1])[None, :]
    out = tl.where(t == 0, init_tile, COMBINE(init_tile, prev))
    return out.to(tile.dtype), warp_lane(inc, L - 1).to(tile.dtype)


@triton.jit
def warp_inclusive_sum(tile, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Inclusive prefix sum of each warp, in the tile's dtype (integers wrap). Returns ``(scan, aggregate)``."""
    tl.static_assert(tile.dtype != tl.int1, "warp_inclusive_sum: no sum of a bool tile (an or under the "
                     "interpreter, a parity compiled): convert it to an integer dtype")
    return warp_inclusive_scan(tile, _warp_add, LOGICAL_WARP_THREADS)


@triton.jit
def warp_exclusive_sum(tile, LOGICAL_WARP_THREADS: tl.constexpr = 0):
    """Exclusive prefix sum (lane 0 gets 0). Integers: ``inclusive - x``, exact under wrap-around.
    Floats: the inclusive sum shifted up one lane, so infinities and NaNs never meet a subtraction
    and each output is exactly the inclusive result of the lane before. Returns ``(scan, aggregate)``."""
    tl.static_assert(tile.dtype != tl.int1, "warp_exclusive_sum: no sum of a bool tile (an or under the "
                     "interpreter, a parity compiled): convert it to an integer dtype")
    inc, agg = warp_inclusive_scan(tile, _warp_add, LOGICAL_WARP_THREADS)
    if tile.dtype.is_floating():
        out = warp_shift_up(inc, tl.zeros(tile.shape, tile.dtype))
    else:
        out = inc - tile
    return out, agg


@triton.jit
def warp_segment_starts(head_flags):
    """Lane index of the first lane of each lane's segment (lane 0 always starts one)."""
    LANES: tl.constexpr = head_flags.shape[1]
    t = tl.arange(0, LANES)[None, :]
    starts = tl.where((head_flags != 0) | (t == 0), t, 0)
    return tl.associative_scan(tl.broadcast_to(starts, head_flags.shape), 1, _warp_max)


@triton.jit
def warp_segmented_inclusive_scan(tile, head_flags, COMBINE: tl.constexpr):
    """Inclusive scan restarted at every lane whose head flag is set (lane 0 always starts a segment):
    ``out[w, t] = x[w, s] ⊕ ... ⊕ x[w, t]`` with ``s`` the start of ``t``'s segment. Any associative
    ``COMBINE``; items are combined in lane order."""
    WARPS: tl.constexpr = tile.shape[0]
    LANES: tl.constexpr = tile.shape[1]
    LOG2: tl.constexpr = _log2(LANES)
    start = warp_segment_starts(head_flags)
    t = tl.broadcast_to(tl.arange(0, LANES)[None, :], (WARPS, LANES))
    acc = widen(tile)
    for k in tl.static_range(LOG2):
        partner = t - (1 << k)
        pulled = tl.gather(acc, tl.maximum(partner, 0), 1)
        acc = tl.where(partner >= start, COMBINE(pulled, acc), acc)
    return acc.to(tile.dtype)


# ----------------------------------------------------------------------------------------------
# Warp-synchronous flag counting (compiled NVIDIA kernels only, through Gluon)
# ----------------------------------------------------------------------------------------------
# CUB's BlockScan of small counts over a warp-striped tile reduces, per register slot, to a few
# ballots: one per bit of the count, each weighted by its bit (lanes below: popc(ballot & lanemask_lt);
# the slot: popc(ballot)). $2: the count (0 .. 2**bits - 1); $0: the counts of the lower lanes
# summed, $1: the slot's total.
@triton.constexpr_function
def _ballot_sum_asm(bits):
    bits = int(bits)
    lines = ["{", ".reg .pred p;", ".reg .b32 b, m, t, lo, tot;", "mov.u32 m, %lanemask_lt;", "mov.u32 lo, 0;",
             "mov.u32 tot, 0;"]
    for i in range(bits):
        lines += [f"and.b32 t, $2, {1 << i};", "setp.ne.u32 p, t, 0;", "vote.sync.ballot.b32 b, p, -1;",
                  "and.b32 t, b, m;", "popc.b32 t, t;", f"shl.b32 t, t, {i};", "add.u32 lo, lo, t;",
                  "popc.b32 t, b;", f"shl.b32 t, t, {i};", "add.u32 tot, tot, t;"]
    lines += ["mov.u32 $0, lo;", "mov.u32 $1, tot;", "}"]
    return "\n".join(lines)


@gluon.jit
def warp_ballot_sum(counts, BITS: gl.constexpr):
    """For every item of a warp-striped tile (lane ``l`` of a warp holds the item of lane ``l`` in each
    register slot; whole warps converged) holding a count in ``[0, 2**BITS)``: ``(lower, slot_total)``
    — the sum of the counts of the lower lanes of the same slot, and of the whole slot of the warp
    (int32; the same in every lane). ``BITS = 1`` counts 0/1 flags: one ``vote.ballot`` and two
    ``popc`` per item."""
    return gl.inline_asm_elementwise(_ballot_sum_asm(BITS), "=r,=r,r", [counts.to(gl.int32)],
                                     dtype=(gl.int32, gl.int32), is_pure=False, pack=1)


# shuffles of 32-bit words within a warp (whole warps converged): $1 the lane's word, $2 what the end
# lane gets (lane 0 from the shuffle up, lane 31 from the shuffle down)
_SHUFFLE_UP_ASM = gl.constexpr("{ .reg .pred p; shfl.sync.up.b32 $0|p, $1, 1, 0, -1; @!p mov.b32 $0, $2; }")
_SHUFFLE_DOWN_ASM = gl.constexpr("{ .reg .pred p; shfl.sync.down.b32 $0|p, $1, 1, 31, -1; @!p mov.b32 $0, $2; }")
_SHUFFLE_LAST_ASM = gl.constexpr("shfl.sync.idx.b32 $0, $1, 31, 31, -1;")
_SHUFFLE_FIRST_ASM = gl.constexpr("shfl.sync.idx.b32 $0, $1, 0, 31, -1;")


@gluon.jit
def _shuffle_up32(bits, first_bits, REVERSE: gl.constexpr = False):
    if REVERSE:
        out = gl.inline_asm_elementwise(_SHUFFLE_DOWN_ASM, "=r,r,r", [bits, first_bits], dtype=gl.int32,
                                        is_pure=False, pack=1)
    else:
        out = gl.inline_asm_elementwise(_SHUFFLE_UP_ASM, "=r,r,r", [bits, first_bits], dtype=gl.int32,
                                        is_pure=False, pack=1)
    return out


@gluon.jit
def _shuffle_last32(bits, REVERSE: gl.constexpr = False):
    if REVERSE:
        out = gl.inline_asm_elementwise(_SHUFFLE_FIRST_ASM, "=r,r", [bits], dtype=gl.int32, is_pure=False, pack=1)
    else:
        out = gl.inline_asm_elementwise(_SHUFFLE_LAST_ASM, "=r,r", [bits], dtype=gl.int32, is_pure=False, pack=1)
    return out


@gluon.jit
def _halves(values):
    """A 64-bit tile's bits as (low, high) 32-bit words."""
    bits = values.to(gl.int64, bitcast=True)
    return bits.to(gl.int32), (bits >> 32).to(gl.int32)


@gluon.jit
def _from_halves(lo, hi, dtype: gl.constexpr):
    return ((hi.to(gl.int64) << 32) | lo.to(gl.uint32, bitcast=True).to(gl.int64)).to(dtype, bitcast=True)


@gluon.jit
def striped_shift_up(values, first, REVERSE: gl.constexpr = False):
    """For every item of a warp-striped tile of 32- or 64-bit values: the value of the next lower lane of
    the same register slot (lane 0: its item of ``first``, a tile like ``values``). An inclusive warp
    scan shifted this way is the exclusive one, with no inverse operator needed. ``REVERSE`` (a scan
    running from lane 31 down to lane 0): the next higher lane's value, lane 31 gets ``first``."""
    if values.dtype.primitive_bitwidth == 64:
        lo, hi = _halves(values)
        first_lo, first_hi = _halves(first)
        out = _from_halves(_shuffle_up32(lo, first_lo, REVERSE), _shuffle_up32(hi, first_hi, REVERSE), values.dtype)
    else:
        bits = _shuffle_up32(values.to(gl.int32, bitcast=True), first.to(gl.int32, bitcast=True), REVERSE)
        out = bits.to(values.dtype, bitcast=True)
    return out


@gluon.jit
def striped_last_lane(values, REVERSE: gl.constexpr = False):
    """For every item of a warp-striped tile of 32- or 64-bit values: lane 31's value of the same
    register slot (an inclusive warp scan's warp total, bitwise); ``REVERSE``: lane 0's (the last lane
    of a scan from lane 31 down)."""
    if values.dtype.primitive_bitwidth == 64:
        lo, hi = _halves(values)
        out = _from_halves(_shuffle_last32(lo, REVERSE), _shuffle_last32(hi, REVERSE), values.dtype)
    else:
        out = _shuffle_last32(values.to(gl.int32, bitcast=True), REVERSE).to(values.dtype, bitcast=True)
    return out
