"""Decoupled look-back (Merrill & Garland 2016): the single-pass prefix agent shared by DeviceScan,
select / partition / unique / run-length encode and the onesweep radix sort.

Every tile of a single-pass algorithm owns a *status* slot. A tile

1. takes its index from an atomic counter (:func:`tile_index`), so a tile only ever waits on tiles
   that have already started: forward progress on any scheduler (and the interpreter, which runs
   programs one after another, in order);
2. computes its local aggregate and publishes it (:func:`publish`, ``STATUS=LOOKBACK_AGGREGATE``);
3. looks back over its predecessors (:func:`look_back`) to obtain its exclusive prefix;
4. publishes its inclusive prefix (``STATUS=LOOKBACK_INCLUSIVE``) for its successors;
5. finishes its own work (scan, scatter, ...) with the prefix.

A tile that starts a *segment* (the first tile of a problem, or of a row of a batched problem:
``tile == first_tile``) has no prefix: it publishes its aggregate as ``LOOKBACK_INCLUSIVE`` directly
and skips step 3. Tiles never look at slots before their segment's ``first_tile``.

**Values.** A prefix value is one tensor scalar, or a pair of them (``NUM_VALUES=2``: e.g.
``(value, index)`` for a running argmax, ``(a, b)`` for a linear recurrence, ``(flag, value)`` for a
segmented scan). Each component is a 32- or 64-bit type (int32/int64/uint32/float32/float64; widen
8/16-bit types before the look-back). ``COMBINE`` is the associative operator: ``COMBINE(a, b)`` for
one value, ``COMBINE(a0, a1, b0, b1) -> (c0, c1)`` for pairs, ``a`` earlier than ``b``.

**Status words** (``int64``, zero-filled before the launch; :func:`allocate_status` makes the
buffer, :func:`status_planes` says how many planes of ``num_tiles`` words):

* *packed* layout (one 32-bit value, fast mode): one word per tile, ``flag << 32 | value bits``,
  flag ``0`` invalid, ``1`` aggregate, ``2`` inclusive. A 64-bit aligned load or store is
  single-copy atomic, so a reader always sees flag and value of the same write: one vector load
  reads a whole window of predecessors.
* *split* layout (64-bit values, pairs, or the deterministic mode): every 32-bit half of a value
  gets its own word ``tag << 32 | half``, in separate planes for the aggregate and the inclusive
  prefix: plane ``s * K + k`` (``s`` = 0 aggregate / 1 inclusive, ``k`` the half, ``K`` halves per
  value) at ``status_ptr + plane * plane_stride + tile``. Each slot is written once, so a value is
  read complete when all its words carry a nonzero tag, whatever order the words became visible
  in: free of torn reads without fences or 128-bit atomics.

**The look-back.** A window of ``WINDOW`` predecessors is read with one vector load per plane and
folded in slot order with one ``tl.associative_scan`` over ``(flag, value)`` pairs, whose last item is
the result (the ``LB_REDUCE`` function made by :func:`lookback_reduce`, under the operator of
:func:`lookback_combine`; not ``tl.reduce``, which on the GPU may combine out of order and needs a
commutative operator, which this one is not even for a sum): a flag ``!= 1`` (an inclusive prefix, or an invalid slot) restarts the
reduction, so the result is the inclusive prefix of the *latest* inclusive tile in the window
folded with the aggregates after it, flagged ``2``; ``1`` if the whole window holds aggregates only
(then the window moves back by ``WINDOW``); ``0`` if a slot after the last inclusive one is not
published yet (then the window is read again).

**Threads.** The spin loop's condition is a scalar, but each thread of the program holds its own
copy: every thread must reach the same decision, or the warp-shuffle and barrier instructions in
the loop mismatch (wrong values, or a hang). The window fold therefore uses only order-keeping or
commutative steps; a window wider than one warp is combined through shared memory (the same result
in every thread); a window of at most 32 slots is read by each warp on its own, and a warp may
then leave the loop an iteration before another (no barrier inside; the prefix is the same, up to
float rounding in the fast mode). :func:`look_back_bounded` gives up after a number of reads
(tests: a bug then fails instead of hanging the GPU).

**Determinism.** In the fast mode (``DETERMINISTIC=False``) where a tile meets the first inclusive
prefix depends on timing, so float prefixes may differ in the last bits between runs (integers are
exact). With ``DETERMINISTIC=True`` the association is fixed by the tile index: tile ``i`` waits
until tile ``a = max(i - WINDOW, first_tile)`` has published its inclusive prefix and tiles
``a+1 .. i-1`` their aggregates, and returns ``inclusive(a) ⊕ aggregate(a+1) ⊕ ... ⊕
aggregate(i-1)`` reduced by the same tree every run: bitwise reproducible results for a given
policy (``TILE``, ``WINDOW``) and GPU, at the cost of waiting for a tile ``WINDOW`` places back
(which in steady state finished long before, when ``WINDOW`` exceeds the tiles in flight).

**Usage** (one tile per program; see ``tritoncub/device/scan.py`` for the whole scan)::

    LB = lookback_reduce(my_combine, 1)             # host: once per operator
    counter, status, stride = allocate_status(num_tiles, [torch.float32], deterministic, device)
    PACKED = packed_layout([torch.float32], deterministic)

    tile = tile_index(counter_ptr)                   # device
    agg = ...                                        # the tile's aggregate
    if tile == first_tile:
        publish(status_ptr, stride, tile, agg, agg, LOOKBACK_INCLUSIVE, 1, PACKED)
    else:
        publish(status_ptr, stride, tile, agg, agg, LOOKBACK_AGGREGATE, 1, PACKED)
        prefix, _ = look_back(status_ptr, stride, tile, first_tile, agg, agg, my_combine, LB, 1,
                              WINDOW, DETERMINISTIC, PACKED)
        publish(status_ptr, stride, tile, my_combine(prefix, agg), agg, LOOKBACK_INCLUSIVE, 1, PACKED)

Why bound functions: in the scan kernel, a combine function received as a ``tl.constexpr`` and
handed on through helpers to ``tl.reduce`` failed to compile with Triton 3.6 ("'constexpr' object
has no attribute 'fn'"; small kernels doing the same compile, the trigger was not isolated).
Binding the operator into the reducing function as a global (:func:`bind_jit`) compiles, and runs
under the interpreter, where real closures do not (it re-executes a function's source with its
globals only).
"""
from __future__ import annotations

import functools
import types

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

LOOKBACK_INVALID = tl.constexpr(0)
LOOKBACK_AGGREGATE = tl.constexpr(1)
LOOKBACK_INCLUSIVE = tl.constexpr(2)


# ----------------------------------------------------------------------------------------------
# Host side: how much status storage a launch needs
# ----------------------------------------------------------------------------------------------

def value_halves(dtypes) -> int:
    """Number of 32-bit halves of a prefix value made of components of ``dtypes`` (torch dtypes)."""
    k = 0
    for d in dtypes:
        size = d.itemsize if hasattr(d, "itemsize") else d.primitive_bitwidth // 8
        if size not in (4, 8):
            raise TypeError(f"look-back values must be 32- or 64-bit, got {d}")
        k += size // 4
    return k


def packed_layout(dtypes, deterministic: bool) -> bool:
    """True when the packed one-word-per-tile layout is used (one 32-bit value, fast mode)."""
    return value_halves(dtypes) == 1 and not deterministic


def status_planes(dtypes, deterministic: bool) -> int:
    """Planes of ``num_tiles`` int64 words a launch needs (see the module docstring)."""
    return 1 if packed_layout(dtypes, deterministic) else 2 * value_halves(dtypes)


#: words before the status planes in a buffer made by :func:`allocate_status`; word 0 is the tile
#: counter, words 8-15 are zeroed scratch for the caller (:func:`status_scratch`: e.g. a total the
#: last tile writes), the rest keeps the planes 128-byte aligned.
STATUS_HEADER_WORDS = 16


def allocate_status(num_tiles: int, dtypes, deterministic: bool, device):
    """A zeroed int64 buffer holding the tile counter (word 0) and the status planes.

    Returns ``(counter, status, plane_stride)``: views to pass as ``counter_ptr`` and
    ``status_ptr``, and the plane stride (``num_tiles`` rounded up to 16 words)."""
    import torch
    stride = max(16, -(-num_tiles // 16) * 16)
    planes = status_planes(dtypes, deterministic)
    buf = torch.zeros(STATUS_HEADER_WORDS + planes * stride, dtype=torch.int64, device=device)
    return buf[:1], buf[STATUS_HEADER_WORDS:], stride


def status_scratch(counter):
    """The 8 zeroed int64 scratch words of the buffer whose counter :func:`allocate_status` returned
    (allocated with it: no extra allocation or fill)."""
    return counter.as_strided((8,), (1,), counter.storage_offset() + 8)


# ----------------------------------------------------------------------------------------------
# Combine operators built from the user's
# ----------------------------------------------------------------------------------------------

def bind_jit(template, **names):
    """``triton.jit`` of a copy of the plain function ``template`` whose global ``names`` are bound
    to the given values (a closure that both the compiler and the interpreter can see: the
    interpreter re-executes a function's source with its globals only, so real closures fail
    there)."""
    g = dict(template.__globals__)
    g.update(names)
    fn = types.FunctionType(template.__code__, g, template.__name__, template.__defaults__)
    fn.__qualname__ = template.__qualname__
    fn.__module__ = template.__module__
    fn.__doc__ = template.__doc__
    jf = triton.jit(fn)
    # (the functions it calls, so that a launch failing to compile can name the user's among them)
    jf.bound_functions = tuple(names.values())
    return jf


# Templates for bind_jit: ``combine_fn`` is bound per operator (it is not a module global).
def _lb_combine1(fa, a, fb, b):
    ext = fb == 1
    return tl.where(ext, fa, fb), tl.where(ext, combine_fn(a, b), b)  # noqa: F821


def _lb_combine2(fa, a0, a1, fb, b0, b1):
    ext = fb == 1
    c0, c1 = combine_fn(a0, a1, b0, b1)  # noqa: F821
    return tl.where(ext, fa, fb), tl.where(ext, c0, b0), tl.where(ext, c1, b1)


# The window is folded with an inclusive ``tl.associative_scan`` and its last item is taken: the
# look-back operator is not commutative (the flags alone are not), and ``tl.reduce`` may combine
# out of order on the GPU (warp butterflies: lane ``i`` with lane ``i ^ m``), giving a wrong
# result that even differs between the threads of one program; a scan keeps the item order. The
# last item is then selected by a commutative reduction (distinct keys), so every thread gets it.
@triton.jit
def _pick_last2(ka, fa, a, kb, fb, b):
    take_b = kb > ka
    return tl.maximum(ka, kb), tl.where(take_b, fb, fa), tl.where(take_b, b, a)


@triton.jit
def _pick_last3(ka, fa, a0, a1, kb, fb, b0, b1):
    take_b = kb > ka
    return tl.maximum(ka, kb), tl.where(take_b, fb, fa), tl.where(take_b, b0, a0), tl.where(take_b, b1, a1)


def _lb_reduce1(flag, v0, v1):
    f, s0 = tl.associative_scan((flag, v0), 0, lb_combine)  # noqa: F821
    last = (tl.arange(0, flag.shape[0]) == flag.shape[0] - 1).to(tl.int32)
    _, rf, r0 = tl.reduce((last, f, s0), 0, _pick_last2)
    return rf, r0, r0


def _lb_reduce2(flag, v0, v1):
    f, s0, s1 = tl.associative_scan((flag, v0, v1), 0, lb_combine)  # noqa: F821
    last = (tl.arange(0, flag.shape[0]) == flag.shape[0] - 1).to(tl.int32)
    _, rf, r0, r1 = tl.reduce((last, f, s0, s1), 0, _pick_last3)
    return rf, r0, r1


def _seg_combine1(ha, a, hb, b):
    return ha | hb, tl.where(hb != 0, b, combine_fn(a, b))  # noqa: F821


def _seg_combine2(ha, a0, a1, hb, b0, b1):
    c0, c1 = combine_fn(a0, a1, b0, b1)  # noqa: F821
    return ha | hb, tl.where(hb != 0, b0, c0), tl.where(hb != 0, b1, c1)


@functools.lru_cache(maxsize=None)
def lookback_combine(combine_fn, num_values: int = 1):
    """The look-back operator over ``(flag, value...)`` for the associative ``combine_fn``.

    ``(fa, a) ⊕ (fb, b) = (fa, combine(a, b))`` when ``fb == 1`` (an aggregate extends the
    running value), else ``(fb, b)`` (an inclusive prefix or an invalid slot restarts it). This is
    the segmented-scan operator, associative whenever ``combine_fn`` is (never commutative: it is
    folded with ``tl.associative_scan``, which keeps the slot order). Cached per ``(combine_fn, num_values)``."""
    if num_values not in (1, 2):
        raise ValueError(f"num_values must be 1 or 2, got {num_values}")
    return bind_jit(_lb_combine1 if num_values == 1 else _lb_combine2, combine_fn=combine_fn)


@functools.lru_cache(maxsize=None)
def lookback_reduce(combine_fn, num_values: int = 1):
    """``LB_REDUCE(flag, v0, v1) -> (flag, r0, r1)``: a window of ``(flag, value)`` slots folded in
    slot order with :func:`lookback_combine` (an inclusive scan's last item; the same value in every
    thread of the program, so loops on it do not diverge). This is what :func:`look_back` takes as ``LB_REDUCE``: the
    operator is bound into the reducing function as a global rather than handed down as a
    ``tl.constexpr`` argument (``v1`` is ignored for one value)."""
    lbc = lookback_combine(combine_fn, num_values)
    return bind_jit(_lb_reduce1 if num_values == 1 else _lb_reduce2, lb_combine=lbc)


@functools.lru_cache(maxsize=None)
def segmented_combine(combine_fn, num_values: int = 1):
    """``(head, value)`` operator for scans by key: ``(ha, a) ⊕ (hb, b) = (ha | hb, b if hb else
    combine(a, b))`` with ``head`` an int32 0/1 that marks the first item of a segment."""
    if num_values not in (1, 2):
        raise ValueError(f"num_values must be 1 or 2, got {num_values}")
    return bind_jit(_seg_combine1 if num_values == 1 else _seg_combine2, combine_fn=combine_fn)


# ----------------------------------------------------------------------------------------------
# Device side
# ----------------------------------------------------------------------------------------------

@triton.jit
def tile_index(counter_ptr):
    """This program's tile: the next value of the int64 counter (zero before the launch)."""
    return tl.atomic_add(counter_ptr, 1, sem="relaxed")   # only atomicity is needed: no fence


@triton.jit
def _zext32(v):
    """The low 32 bits of an integer scalar/tensor, zero-extended to int64."""
    return v.to(tl.int32).to(tl.uint32, bitcast=True).to(tl.int64)


@triton.jit
def _lo_word(v):
    """The low 32 bits of a 32- or 64-bit value, zero-extended to int64."""
    if v.dtype.primitive_bitwidth == 64:
        return _zext32(v.to(tl.int64, bitcast=True))
    else:
        return _zext32(v.to(tl.int32, bitcast=True))


@triton.jit
def _hi_word(v):
    """The high 32 bits of a 64-bit value, zero-extended to int64."""
    return _zext32(v.to(tl.int64, bitcast=True) >> 32)


@triton.jit
def _from_words(lo, hi, like):
    """Rebuild a value of ``like``'s dtype from the status words holding its 32-bit halves
    (the tag bits above bit 31 are dropped; ``hi`` is unused for 32-bit types)."""
    if like.dtype.primitive_bitwidth == 64:
        u = (hi << 32) | _zext32(lo)
        return u.to(like.dtype, bitcast=True)
    else:
        return lo.to(tl.int32).to(like.dtype, bitcast=True)


@triton.jit
def _store_word(ptr, word):
    tl.atomic_xchg(ptr, word, sem="relaxed")


@triton.jit
def publish(status_ptr, plane_stride, tile, v0, v1, STATUS: tl.constexpr, NUM_VALUES: tl.constexpr = 1,
            PACKED: tl.constexpr = True):
    """Publish tile ``tile``'s aggregate (``STATUS=LOOKBACK_AGGREGATE``) or inclusive prefix
    (``LOOKBACK_INCLUSIVE``) ``v0`` (and ``v1`` when ``NUM_VALUES == 2``; pass anything otherwise).
    ``PACKED`` must match the host's :func:`packed_layout`."""
    tag = tl.full((), STATUS, tl.int64) << 32
    if PACKED:
        _store_word(status_ptr + tile, tag | _lo_word(v0))
    else:
        H0: tl.constexpr = v0.dtype.primitive_bitwidth // 32
        if NUM_VALUES == 2:
            H1: tl.constexpr = v1.dtype.primitive_bitwidth // 32
        else:
            H1: tl.constexpr = 0
        K: tl.constexpr = H0 + H1
        base = status_ptr + (STATUS - 1) * K * plane_stride + tile
        _store_word(base, tag | _lo_word(v0))
        if H0 == 2:
            _store_word(base + plane_stride, tag | _hi_word(v0))
        if NUM_VALUES == 2:
            _store_word(base + H0 * plane_stride, tag | _lo_word(v1))
            if H1 == 2:
                _store_word(base + (H0 + 1) * plane_stride, tag | _hi_word(v1))


@triton.jit
def _read_plane(ptrs, mask):
    return tl.load(ptrs, mask=mask, other=0, volatile=True)


@triton.jit
def _read_slot(status_ptr, plane_stride, offs, mask, like0, like1, STATUS: tl.constexpr,
               NUM_VALUES: tl.constexpr):
    """Read the aggregate (``STATUS=1``) or inclusive (``2``) slots of tiles ``offs`` in the split
    layout: ``(ok, v0, v1)`` with ``ok`` true where every half is published."""
    H0: tl.constexpr = like0.dtype.primitive_bitwidth // 32
    if NUM_VALUES == 2:
        H1: tl.constexpr = like1.dtype.primitive_bitwidth // 32
    else:
        H1: tl.constexpr = 0
    K: tl.constexpr = H0 + H1
    base = status_ptr + (STATUS - 1) * K * plane_stride + offs
    w = _read_plane(base, mask)
    ok = (w >> 32) != 0
    if H0 == 2:
        wh = _read_plane(base + plane_stride, mask)
        ok = ok & ((wh >> 32) != 0)
        v0 = _from_words(w, wh, like0)
    else:
        v0 = _from_words(w, w, like0)
    if NUM_VALUES == 2:
        w1 = _read_plane(base + H0 * plane_stride, mask)
        ok = ok & ((w1 >> 32) != 0)
        if H1 == 2:
            w1h = _read_plane(base + (H0 + 1) * plane_stride, mask)
            ok = ok & ((w1h >> 32) != 0)
            v1 = _from_words(w1, w1h, like1)
        else:
            v1 = _from_words(w1, w1, like1)
    else:
        v1 = v0
    return ok, v0, v1


@triton.jit
def read_window(status_ptr, plane_stride, hi, first_tile, like0, like1, LB_REDUCE: tl.constexpr,
                NUM_VALUES: tl.constexpr, WINDOW: tl.constexpr, PACKED: tl.constexpr):
    """Fast-mode window: tiles ``[hi - WINDOW, hi)`` (those ``>= first_tile``) reduced to
    ``(flag, v0, v1)``: flag 2 = inclusive prefix of tile ``hi - 1`` found, 1 = only aggregates
    (the window's combined aggregate), 0 = not ready."""
    offs = hi - WINDOW + tl.arange(0, WINDOW)
    inside = offs >= first_tile
    if PACKED:
        # slots before the segment read as 'inclusive' garbage: the segment's first tile (always
        # published inclusive) or an invalid slot after them overrides them in the reduction
        w = tl.load(status_ptr + offs, mask=inside, other=0x200000000, volatile=True)
        flag = (w >> 32).to(tl.int32)
        v0 = _from_words(w, w, like0)
        v1 = v0
    else:
        inc_ok, i0, i1 = _read_slot(status_ptr, plane_stride, offs, inside, like0, like1, 2, NUM_VALUES)
        agg_ok, a0, a1 = _read_slot(status_ptr, plane_stride, offs, inside, like0, like1, 1, NUM_VALUES)
        flag = tl.where(inc_ok | ~inside, 2, tl.where(agg_ok, 1, 0))
        v0 = tl.where(inc_ok, i0, a0)
        v1 = tl.where(inc_ok, i1, a1)
    return LB_REDUCE(flag, v0, v1)


@triton.jit
def read_anchored_window(status_ptr, plane_stride, tile, first_tile, like0, like1, LB_REDUCE: tl.constexpr,
                         NUM_VALUES: tl.constexpr, WINDOW: tl.constexpr):
    """Deterministic-mode window of tile ``tile`` (split layout): ``inclusive(a) ⊕ aggregate(a+1)
    ⊕ ... ⊕ aggregate(tile-1)`` with ``a = max(tile - WINDOW, first_tile)``, flagged 2 when every
    slot it needs is published (0 otherwise)."""
    offs = tile - WINDOW + tl.arange(0, WINDOW)
    anchor = tl.maximum(tile - WINDOW, first_tile)
    is_anchor = offs == anchor
    after = offs > anchor
    inc_ok, i0, i1 = _read_slot(status_ptr, plane_stride, offs, is_anchor, like0, like1, 2, NUM_VALUES)
    agg_ok, a0, a1 = _read_slot(status_ptr, plane_stride, offs, after, like0, like1, 1, NUM_VALUES)
    flag = tl.where(is_anchor, tl.where(inc_ok, 2, 0), tl.where(after, tl.where(agg_ok, 1, 0), 2))
    v0 = tl.where(is_anchor, i0, a0)
    v1 = tl.where(is_anchor, i1, a1)
    return LB_REDUCE(flag, v0, v1)


@triton.jit
def _look_back(status_ptr, plane_stride, tile, first_tile, agg0, agg1, COMBINE: tl.constexpr,
               LB_REDUCE: tl.constexpr, NUM_VALUES: tl.constexpr, WINDOW: tl.constexpr,
               DETERMINISTIC: tl.constexpr, PACKED: tl.constexpr, MAX_SPINS: tl.constexpr):
    ok = 1
    spins = 0
    if DETERMINISTIC:
        f, p0, p1 = read_anchored_window(status_ptr, plane_stride, tile, first_tile, agg0, agg1, LB_REDUCE,
                                         NUM_VALUES, WINDOW)
        go = (f != 2).to(tl.int32)
        while go != 0:
            f, p0, p1 = read_anchored_window(status_ptr, plane_stride, tile, first_tile, agg0, agg1, LB_REDUCE,
                                             NUM_VALUES, WINDOW)
            go = (f != 2).to(tl.int32)
            if MAX_SPINS > 0:
                spins += 1
                if go != 0:
                    if spins >= MAX_SPINS:
                        go = 0
                        ok = 0
    else:
        p0 = agg0
        p1 = agg1
        have = 0
        hi = tile
        go = 1
        while go != 0:
            f, r0, r1 = read_window(status_ptr, plane_stride, hi, first_tile, agg0, agg1, LB_REDUCE, NUM_VALUES,
                                    WINDOW, PACKED)
            if f != 0:
                if have != 0:
                    if NUM_VALUES == 1:
                        p0 = COMBINE(r0, p0)
                    else:
                        p0, p1 = COMBINE(r0, r1, p0, p1)
                else:
                    p0 = r0
                    p1 = r1
                have = 1
                if f == 2:
                    go = 0
                else:
                    hi = hi - WINDOW
            if MAX_SPINS > 0:
                spins += 1
                if go != 0:
                    if spins >= MAX_SPINS:
                        go = 0
                        ok = 0
    return p0, p1, ok


@triton.jit
def look_back(status_ptr, plane_stride, tile, first_tile, agg0, agg1, COMBINE: tl.constexpr,
              LB_REDUCE: tl.constexpr, NUM_VALUES: tl.constexpr = 1, WINDOW: tl.constexpr = 32,
              DETERMINISTIC: tl.constexpr = False, PACKED: tl.constexpr = True):
    """The exclusive prefix ``(p0, p1)`` of tile ``tile > first_tile``: the combination of every
    tile in ``[first_tile, tile)``. Spins until the predecessors it needs have published.

    ``agg0``/``agg1`` only give the value dtypes (pass the tile's own aggregate). ``LB_REDUCE`` is
    ``lookback_reduce(COMBINE, NUM_VALUES)``. ``PACKED`` must be False when ``DETERMINISTIC``."""
    p0, p1, _ = _look_back(status_ptr, plane_stride, tile, first_tile, agg0, agg1, COMBINE, LB_REDUCE, NUM_VALUES,
                           WINDOW, DETERMINISTIC, PACKED, 0)
    return p0, p1


@triton.jit
def look_back_bounded(status_ptr, plane_stride, tile, first_tile, agg0, agg1, COMBINE: tl.constexpr,
                      LB_REDUCE: tl.constexpr, NUM_VALUES: tl.constexpr, WINDOW: tl.constexpr,
                      DETERMINISTIC: tl.constexpr, PACKED: tl.constexpr, MAX_SPINS: tl.constexpr):
    """:func:`look_back` that gives up after ``MAX_SPINS`` window reads: ``(p0, p1, ok)`` with
    ``ok == 0`` (and ``p`` meaningless) when it gave up. For tests and debugging: a missing
    predecessor then fails a check instead of hanging the GPU."""
    return _look_back(status_ptr, plane_stride, tile, first_tile, agg0, agg1, COMBINE, LB_REDUCE, NUM_VALUES,
                      WINDOW, DETERMINISTIC, PACKED, MAX_SPINS)


# ----------------------------------------------------------------------------------------------
# Warp-window look-back of one count (compiled NVIDIA kernels only, through Gluon)
# ----------------------------------------------------------------------------------------------
# Status words of :func:`count_publish` / :func:`count_look_back`: int64, ``flag << 61 | count``
# (flag 1 aggregate, 2 inclusive; 0 not yet published), one per tile, zeroed before the launch.
COUNT_FLAG_SHIFT = gl.constexpr(61)


@triton.constexpr_function
def _spin_read_asm(sleep):
    """PTX: $1 is the address of a status word, or 0 for a slot before tile 0 (read as $2, "inclusive,
    0"); spins with relaxed loads until the word is published and returns it. ``sleep``: a short
    nanosleep between reads (fewer polling requests competing with the loads of the tiles in flight)."""
    lines = ["{", ".reg .pred p;", ".reg .b64 a;", "mov.b64 a, $1;", "mov.b64 $0, $2;", "setp.eq.u64 p, a, 0;",
             "@p bra DONE${:uid};", "bra READ${:uid};", "LOOP${:uid}:"]
    if sleep:
        lines.append("nanosleep.u32 64;")
    lines += ["READ${:uid}:", "ld.relaxed.gpu.global.b64 $0, [a];", "setp.eq.u64 p, $0, 0;", "@p bra LOOP${:uid};",
              "DONE${:uid}:", "}"]
    return "\n".join(lines)


@gluon.jit
def count_publish(status_ptr, tile, count, STATUS: gl.constexpr):
    """Publish tile ``tile``'s count (a nonnegative integer scalar below 2**61) as its aggregate
    (``STATUS=1``) or inclusive prefix (``STATUS=2``): one relaxed 64-bit exchange (flag and count
    in one word, so a reader never sees half of it)."""
    gl.atomic_xchg(status_ptr + tile, count.to(gl.int64) | (STATUS << COUNT_FLAG_SHIFT), sem="relaxed")


@gluon.jit
def count_look_back(status_ptr, tile, WARPS: gl.constexpr, WIN: gl.constexpr = 32, SLEEP: gl.constexpr = True,
                    num_tiles=0, ANCHORED: gl.constexpr = False):
    """The exclusive prefix (int64 scalar) of tile ``tile >= 1``: the sum of the counts of tiles
    ``0 .. tile-1``, by decoupled look-back over a window of ``WIN`` (a power of two >= 32)
    predecessors: each thread reads one or more of them (spinning in registers while a slot is not
    published; ``SLEEP``: with a short ``nanosleep`` between reads), the program adds the counts up to
    the nearest inclusive prefix and stops there, or adds them all and moves the window back.
    ``WIN = 32``: every warp reads the same window on its own (warp shuffles only, no barrier in the
    loop, so warps may leave it an iteration apart); wider windows are spread over the warps and
    reduced through shared memory (every thread takes the same decisions). Integer sums do not
    depend on where the inclusive prefix was met: the result is exact.

    ``ANCHORED`` (two planes of status words: aggregates at ``status_ptr + t``, inclusive prefixes at
    ``status_ptr + num_tiles + t``, see :func:`value_look_back`): one read of the window, the inclusive
    prefix of tile ``max(tile - WIN, 0)`` and the aggregates after it."""
    L: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    j = gl.arange(0, WIN, layout=L)
    inclusive_zero = gl.full([WIN], 2 << COUNT_FLAG_SHIFT, gl.int64, L)
    mask = (1 << COUNT_FLAG_SHIFT) - 1
    prefix = tile.to(gl.int64) * 0
    end = tile
    if ANCHORED:
        a = gl.maximum(tile - WIN, 0)
        t = tile - 1 - j
        slot = gl.where(t == a, status_ptr + num_tiles + t, status_ptr + t)
        addr = gl.where(t >= a, slot.to(gl.int64, bitcast=True), 0)
        w = gl.inline_asm_elementwise(_spin_read_asm(SLEEP), "=l,l,l", [addr, inclusive_zero], dtype=gl.int64,
                                      is_pure=False, pack=1)
        prefix += gl.sum(w & mask, 0)
        end = 0
    while end > 0:
        t = end - 1 - j
        addr = gl.where(t >= 0, (status_ptr + t).to(gl.int64, bitcast=True), 0)
        w = gl.inline_asm_elementwise(_spin_read_asm(SLEEP), "=l,l,l", [addr, inclusive_zero], dtype=gl.int64,
                                      is_pure=False, pack=1)
        nearest = gl.min(gl.where((w >> COUNT_FLAG_SHIFT) == 2, j, WIN), 0)
        prefix += gl.sum(gl.where(j <= nearest, w & mask, 0), 0)
        if nearest < WIN:
            end = 0
        else:
            end -= WIN
    return prefix


# ----------------------------------------------------------------------------------------------
# Warp-window look-back of one 32- or 64-bit sum (compiled NVIDIA kernels only, through Gluon)
# ----------------------------------------------------------------------------------------------
# Status words of :func:`value_publish` / :func:`value_look_back`: int64, ``flag << 32 | 32 value bits``
# (flag 1 aggregate, 2 inclusive; 0 not yet published), zeroed before the launch; a 64-bit value takes
# two words (low half, high half, each flagged: a value is read complete when both carry a flag,
# whatever order they became visible in). The fast mode keeps one plane of ``num_tiles`` slots (a
# tile's inclusive prefix overwrites its aggregate; 32-bit values only); the reproducible mode two:
# aggregates at slot ``tile``, inclusive prefixes at slot ``num_tiles + tile`` (a tile needs the
# aggregates of tiles that may have published their inclusive prefix already).

@gluon.jit
def _half_word(half32, STATUS: gl.constexpr):
    return half32.to(gl.uint32, bitcast=True).to(gl.int64) | (STATUS << 32)


@gluon.jit
def _value_word(value, STATUS: gl.constexpr, HALF: gl.constexpr = 0):
    """The status word of ``value`` (its half ``HALF`` when 64-bit)."""
    if value.dtype.primitive_bitwidth == 64:
        bits = value.to(gl.int64, bitcast=True)
        if HALF == 0:
            w = _half_word(bits.to(gl.int32), STATUS)
        else:
            w = _half_word((bits >> 32).to(gl.int32), STATUS)
    else:
        w = _half_word(value.to(gl.int32, bitcast=True), STATUS)
    return w


@gluon.jit
def value_publish(status_ptr, slot, value, STATUS: gl.constexpr):
    """Publish a tile's ``value`` (float32, int32, float64 or int64 scalar) as its aggregate
    (``STATUS=1``) or inclusive prefix (``STATUS=2``) in status slot ``slot``: relaxed 64-bit exchanges
    (flag and 32 value bits in one word, so a reader never sees half of a word)."""
    if value.dtype.primitive_bitwidth == 64:
        gl.atomic_xchg(status_ptr + 2 * slot, _value_word(value, STATUS, 0), sem="relaxed")
        gl.atomic_xchg(status_ptr + 2 * slot + 1, _value_word(value, STATUS, 1), sem="relaxed")
    else:
        gl.atomic_xchg(status_ptr + slot, _value_word(value, STATUS), sem="relaxed")


@gluon.jit
def _spin_read(addr, default, SLEEP: gl.constexpr):
    return gl.inline_asm_elementwise(_spin_read_asm(SLEEP), "=l,l,l", [addr, default], dtype=gl.int64,
                                     is_pure=False, pack=1)


@gluon.jit
def _read_values(status_ptr, slot, valid, ident, SLEEP: gl.constexpr):
    """The values of status slots ``slot`` where ``valid`` (``ident`` elsewhere), each read once its
    words are published."""
    if ident.dtype.primitive_bitwidth == 64:
        lo = _spin_read(gl.where(valid, (status_ptr + 2 * slot).to(gl.int64, bitcast=True), 0),
                        _value_word(ident, 2, 0), SLEEP)
        hi = _spin_read(gl.where(valid, (status_ptr + 2 * slot + 1).to(gl.int64, bitcast=True), 0),
                        _value_word(ident, 2, 1), SLEEP)
        v = ((hi << 32) | lo.to(gl.int32).to(gl.uint32, bitcast=True).to(gl.int64)).to(ident.dtype, bitcast=True)
        flags = lo >> 32
    else:
        w = _spin_read(gl.where(valid, (status_ptr + slot).to(gl.int64, bitcast=True), 0), _value_word(ident, 2),
                       SLEEP)
        v = w.to(gl.int32).to(ident.dtype, bitcast=True)
        flags = w >> 32
    return v, flags


@gluon.jit
def value_look_back(status_ptr, tile, first_tile, num_tiles, identity, WARPS: gl.constexpr, WIN: gl.constexpr = 32,
                    SLEEP: gl.constexpr = True, DETERMINISTIC: gl.constexpr = False):
    """The exclusive prefix of tile ``tile > first_tile`` under ``+``: the sum of the values of tiles
    ``first_tile .. tile-1`` (``identity``: a scalar of the value type, ``-0.0`` for floats so that
    adding it is exact for every value, ``0`` for integers; 64-bit values: ``DETERMINISTIC`` only).

    Fast mode: a window of ``WIN`` (a power of two >= 32) predecessors is read at once (each thread
    spinning on its slots until published), summed up to the nearest inclusive prefix, or all of it
    and the window moves back. Floats: the association depends on where the inclusive prefix was met
    (timing). ``DETERMINISTIC``: the association is fixed by the tile index. Tile ``i`` waits for
    the inclusive prefix of tile ``a = max(i - WIN, first_tile)`` and the aggregates of ``a+1 ..
    i-1`` and sums them in a fixed tree (one read of the window; the same tree every run)."""
    L: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    j = gl.arange(0, WIN, layout=L)
    ident = gl.full([WIN], identity, identity.dtype, L)
    if DETERMINISTIC:
        a = gl.maximum(tile - WIN, first_tile)
        t = tile - 1 - j
        v, _ = _read_values(status_ptr, gl.where(t == a, num_tiles + t, t), t >= a, ident, SLEEP)
        prefix = gl.sum(v, 0)
    else:
        gl.static_assert(identity.dtype.primitive_bitwidth == 32, "the fast look-back takes 32-bit values")
        prefix = identity
        end = tile
        while end > first_tile:
            t = end - 1 - j
            v, flags = _read_values(status_ptr, t, t >= first_tile, ident, SLEEP)
            nearest = gl.min(gl.where(flags == 2, j, WIN), 0)
            prefix = gl.sum(gl.where(j <= nearest, v, ident), 0) + prefix
            if nearest < WIN:
                end = first_tile
            else:
                end -= WIN
    return prefix


# ----------------------------------------------------------------------------------------------
# Anchored look-back of a pair of 32- or 64-bit values (compiled NVIDIA kernels only, through Gluon)
# ----------------------------------------------------------------------------------------------
# Status words: four planes of ``num_tiles`` slots after the header, one :func:`value_publish` slot
# per value (one word, two for a 64-bit value): aggregates' first values (plane 0) and second values
# (plane 1), inclusive prefixes' first values (plane 2) and second values (plane 3). Each word is
# written once, so a pair is read complete when all of its words are published, whatever order they
# became visible in.

@gluon.jit
def pair_publish(status_ptr, num_tiles, tile, v0, v1, STATUS: gl.constexpr):
    """Publish tile ``tile``'s pair ``(v0, v1)`` (32- or 64-bit scalars of one width) as its aggregate
    (``STATUS=1``) or inclusive prefix (``STATUS=2``), in the planes of :func:`pair_look_back`."""
    if STATUS == 1:
        slot = tile
    else:
        slot = 2 * num_tiles + tile
    value_publish(status_ptr, slot, v0, STATUS)
    value_publish(status_ptr, slot + num_tiles, v1, STATUS)


@gluon.jit
def pair_look_back(status_ptr, tile, first_tile, num_tiles, ident0, ident1, COMBINE: gl.constexpr,
                   WARPS: gl.constexpr, WIN: gl.constexpr = 32, SLEEP: gl.constexpr = True):
    """The exclusive prefix ``(p0, p1)`` of tile ``tile > first_tile`` under ``COMBINE(a0, a1, b0, b1)``
    (associative, ``a`` earlier; pairs of 32- or 64-bit scalars published by :func:`pair_publish`), by
    the anchored look-back: tile ``tile`` waits for the inclusive prefix of tile ``a = max(tile - WIN,
    first_tile)`` and the aggregates of ``a+1 .. tile-1`` (one read of the window, ``WIN`` a power of
    two >= 32), and folds them oldest first with one scan along the window: the same association
    every run (bitwise reproducible). ``(ident0, ident1)``: the operator's identity, scalars of the
    values' types (it fills the window's slots before ``a``). The fold's last item is read
    with a sum of it and zeros, exact except that a ``-0.0`` comes back as ``+0.0``."""
    L: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    j = gl.arange(0, WIN, layout=L)
    a = gl.maximum(tile - WIN, first_tile)
    s = tile - WIN + j   # (oldest first)
    slot = gl.where(s == a, 2 * num_tiles + s, s)
    v0, _ = _read_values(status_ptr, slot, s >= a, gl.full([WIN], ident0, ident0.dtype, L), SLEEP)
    v1, _ = _read_values(status_ptr, slot + num_tiles, s >= a, gl.full([WIN], ident1, ident1.dtype, L), SLEEP)
    c0, c1 = gl.associative_scan((v0, v1), 0, COMBINE)
    last = j == WIN - 1
    return gl.sum(gl.where(last, c0, 0), 0), gl.sum(gl.where(last, c1, 0), 0)
