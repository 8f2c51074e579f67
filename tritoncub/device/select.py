"""DeviceSelect: stable compaction (CUB's ``DeviceSelect``), and the compaction engine that
``partition``, ``run_length_encode`` and ``unique`` build on.

* :func:`flagged` — items whose flag is nonzero; :func:`if_` — items for which a user
  ``@triton.jit`` predicate ``pred(x) -> int1 tile`` holds; :func:`unique` — the first item of each
  run of equal consecutive items; :func:`unique_by_key` — the same over keys, carrying values.
* torch operators ``torch.ops.tritoncub.masked_select(x, mask)`` and ``nonzero(x)``.

Guarantees: selected items keep their input order (stable). The device functions return a buffer
of ``n`` items whose first ``num_selected`` hold the result (the rest is unspecified) and the count
as a device tensor — nothing is read back to the host. The torch operators read the count back once
(one host sync) to size their result exactly. Equality for ``unique`` is ``==`` on the values: NaN
is never equal to NaN (each NaN is its own run, as in torch), ``-0.0 == 0.0`` (the first item of the
run is kept).

Algorithm (a deterministic two-pass reduce-then-scan, CUB's DeviceSelect without the look-back):
pass 1 counts the selected items of every tile (reading only what decides selection: the flags for
``flagged``/``masked_select``, the items otherwise); one program scans the tile counts into tile
offsets and the total; pass 2 reads the tile again, takes the exclusive in-tile scan of the flags
plus the tile offset as each selected item's output position, and scatters. Results do not depend on
timing. The extra cost over a single pass is a second read of the selection input.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import policy
from .._utils import ALL_NUMERIC_DTYPES, cdiv, check_same_device, check_tensor
from ..agent import lookback
from ..block.reduce import combine_add

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
    return inb & ((idx == 0) | (x != prev))


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
        sel = inb & PRED(x)
    elif MODE == SELECT_THREE_WAY:
        p1 = PRED(x)
        sel = inb & p1
        sel2 = inb & (~p1) & PRED2(x)
    elif MODE == SELECT_HEADS:
        heads = tile_heads(x_ptr, idx, inb, x)
        sel = heads
    else:  # SELECT_NONTRIVIAL
        heads = tile_heads(x_ptr, idx, inb, x)
        nxt = tl.load(x_ptr + idx + 1, mask=inb & (idx + 1 < n))
        sel = heads & (idx + 1 < n) & (nxt == x)
    return sel, sel2, heads, x


@triton.jit
def _count_kernel(x_ptr, flags_ptr, counts_ptr, counts2_ptr, first_head_ptr, n,
                  MODE: tl.constexpr, PRED: tl.constexpr, PRED2: tl.constexpr, LOAD_X: tl.constexpr,
                  FIRST_HEAD: tl.constexpr, TILE: tl.constexpr):
    """Pass 1: selected items per tile (and, for run lengths, the index of the tile's first head)."""
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    inb = idx < n
    sel, sel2, heads, x = tile_selection(x_ptr, flags_ptr, idx, inb, n, MODE, PRED, PRED2, LOAD_X)
    tl.store(counts_ptr + pid, tl.sum(sel.to(tl.int32), 0))
    if MODE == SELECT_THREE_WAY:
        tl.store(counts2_ptr + pid, tl.sum(sel2.to(tl.int32), 0))
    if FIRST_HEAD:
        tl.store(first_head_ptr + pid, tl.min(tl.where(heads, idx, n), 0))


@triton.jit
def _scan_tiles_kernel(counts_ptr, offsets_ptr, total_ptr, first_head_ptr, next_head_ptr, num_tiles, n,
                       BLOCK: tl.constexpr, SUFFIX_MIN: tl.constexpr):
    """One program: exclusive scan of the tile counts (int64 offsets) and their total; with
    ``SUFFIX_MIN``, ``next_head[t] = min(first_head[t+1:], n)`` (where the next run after tile ``t``
    begins)."""
    running = tl.full([], 0, tl.int64)
    start = 0
    while start < num_tiles:
        idx = start + tl.arange(0, BLOCK)
        m = idx < num_tiles
        c = tl.load(counts_ptr + idx, mask=m, other=0).to(tl.int64)
        inc = tl.cumsum(c, 0)
        tl.store(offsets_ptr + idx, running + inc - c, mask=m)
        running += tl.sum(c, 0)
        start += BLOCK
    tl.store(total_ptr, running)
    if SUFFIX_MIN:
        carry = tl.full([], 0, tl.int64) + n
        end = num_tiles
        while end > 0:
            idx = end - BLOCK + tl.arange(0, BLOCK)
            m = idx >= 0
            fh = tl.load(first_head_ptr + idx, mask=m, other=n)
            rmin = tl.associative_scan(fh, 0, _min_combine, reverse=True)
            nxt = tl.gather(rmin, tl.minimum(tl.arange(0, BLOCK) + 1, BLOCK - 1), 0)
            nxt = tl.where(tl.arange(0, BLOCK) == BLOCK - 1, carry, tl.minimum(nxt, carry))
            tl.store(next_head_ptr + idx, nxt, mask=m)
            carry = tl.minimum(carry, tl.min(fh, 0))
            end -= BLOCK


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b)


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
def _compact_kernel(x_ptr, flags_ptr, vals_ptr, offsets_ptr, offsets2_ptr, total_ptr, total2_ptr,
                    next_head_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                    out_len_ptr, out_inv_ptr, n, MODE: tl.constexpr, PRED: tl.constexpr,
                    PRED2: tl.constexpr, LOAD_X: tl.constexpr, WRITE_KEYS: tl.constexpr,
                    WITH_VALUES: tl.constexpr, WRITE_INDEX: tl.constexpr, NDIM: tl.constexpr,
                    ADD_BASE: tl.constexpr, WRITE_LENGTHS: tl.constexpr, WRITE_INVERSE: tl.constexpr,
                    PARTITION: tl.constexpr, TILE: tl.constexpr):
    """Pass 2: every selected item goes to ``tile offset + exclusive in-tile count``.

    ``PARTITION``: rejected items follow the selected ones, in input order (position ``total +
    rejected before it``); three-way partition writes category 2 after category 1, then the rest.
    ``WRITE_INDEX``: the item's index (``NDIM > 1``: its coordinates, row-major, ``[k, NDIM]``).
    ``WRITE_LENGTHS``: the length of the run the selected head starts (next head - index).
    ``WRITE_INVERSE``: every item's run number (inclusive head count - 1)."""
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
        total = tl.load(total_ptr)
        if MODE == SELECT_THREE_WAY:
            t32 = sel2.to(tl.int32)
            before2 = tl.load(offsets2_ptr + pid) + (tl.cumsum(t32, 0) - t32).to(tl.int64)
            total2 = tl.load(total2_ptr)
            dest = tl.where(sel, before, tl.where(sel2, total + before2, total + total2 + idx - before - before2))
        else:
            dest = tl.where(sel, before, total + idx - before)
        tl.store(out_ptr + dest, x, mask=inb)
        if WITH_VALUES:
            v = tl.load(vals_ptr + idx, mask=inb)
            tl.store(out_vals_ptr + dest, v, mask=inb)
    else:
        _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                          out_inv_ptr, idx, inb, sel, s32, x, before, LOAD_X, WRITE_KEYS, WITH_VALUES,
                          WRITE_INDEX, NDIM, ADD_BASE, WRITE_INVERSE)
        if WRITE_LENGTHS:
            big = tl.zeros(idx.shape, tl.int64) + n
            hidx = tl.where(heads, idx, big)
            rmin = tl.associative_scan(hidx, 0, _min_combine, reverse=True)
            lane = tl.arange(0, TILE)
            nxt = tl.gather(rmin, tl.minimum(lane + 1, TILE - 1), 0)
            after = tl.load(next_head_ptr + pid)
            nxt = tl.where(lane == TILE - 1, after, tl.minimum(nxt, after))
            tl.store(out_len_ptr + before, nxt - idx, mask=sel)


@triton.jit
def _compact_single_pass_kernel(x_ptr, flags_ptr, vals_ptr, counter_ptr, status_ptr, total_ptr, shape_ptr,
                                index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr, out_inv_ptr, n,
                                num_tiles, MODE: tl.constexpr, PRED: tl.constexpr, LOAD_X: tl.constexpr,
                                WRITE_KEYS: tl.constexpr, WITH_VALUES: tl.constexpr,
                                WRITE_INDEX: tl.constexpr, NDIM: tl.constexpr, ADD_BASE: tl.constexpr,
                                WRITE_INVERSE: tl.constexpr, LB_REDUCE: tl.constexpr,
                                WINDOW: tl.constexpr, TILE: tl.constexpr):
    """Single pass (decoupled look-back, :mod:`tritoncub.agent.lookback`): a tile takes its index
    from the atomic counter, publishes its selected count, looks back for the count of all earlier
    tiles, publishes the running total and scatters. Counts are int32 (fewer than 2^31 items), so
    the result is exact and does not depend on timing."""
    tile = lookback.tile_index(counter_ptr)
    idx = tile.to(tl.int64) * TILE + tl.arange(0, TILE)
    inb = idx < n
    sel, sel2, heads, x = tile_selection(x_ptr, flags_ptr, idx, inb, n, MODE, PRED, _never, LOAD_X)
    s32 = sel.to(tl.int32)
    inc = tl.cumsum(s32, 0)
    count = tl.sum(s32, 0)
    if tile == 0:
        lookback.publish(status_ptr, 0, tile, count, count, STATUS=lookback.LOOKBACK_INCLUSIVE)
        prefix = count * 0
    else:
        lookback.publish(status_ptr, 0, tile, count, count, STATUS=lookback.LOOKBACK_AGGREGATE)
        prefix, _unused = lookback.look_back(status_ptr, 0, tile, 0, count, count, COMBINE=combine_add,
                                             LB_REDUCE=LB_REDUCE, NUM_VALUES=1, WINDOW=WINDOW)
        lookback.publish(status_ptr, 0, tile, prefix + count, prefix + count,
                         STATUS=lookback.LOOKBACK_INCLUSIVE)
    if tile == num_tiles - 1:
        tl.store(total_ptr, (prefix + count).to(tl.int64))
    before = prefix.to(tl.int64) + (inc - s32).to(tl.int64)
    _scatter_selected(x_ptr, vals_ptr, shape_ptr, index_base_ptr, out_ptr, out_vals_ptr, out_idx_ptr,
                      out_inv_ptr, idx, inb, sel, s32, x, before, LOAD_X, WRITE_KEYS, WITH_VALUES,
                      WRITE_INDEX, NDIM, ADD_BASE, WRITE_INVERSE)


_POLICY = policy.register(
    "select",
    space={"TILE": [1024, 2048, 4096, 8192, 16384], "SINGLE_PASS": [0, 1], "WINDOW": [16, 32, 64],
           "num_warps": [4, 8, 16], "num_stages": [1, 2]},
    fallback={"TILE": 4096, "SINGLE_PASS": 0, "WINDOW": 32, "num_warps": 8, "num_stages": 1},
    doc="TILE items per program; SINGLE_PASS=1: the decoupled look-back kernel where the mode allows "
        "it (flagged/if/unique, no partition, no run lengths), else the two-pass reduce-then-scan; "
        "WINDOW: look-back window (tiles read per step).")


# ----------------------------------------------------------------------------------------------
# The compaction engine (launchers)
# ----------------------------------------------------------------------------------------------

class Plan:
    """One compaction: the selection rule, then :meth:`scatter` of what it produces.

    Two-pass (the default): the constructor runs pass 1 and the tile scan, so :attr:`num_selected`
    is known on the device before :meth:`scatter` (callers may read it to size their outputs).
    Single-pass (policy ``SINGLE_PASS=1``, when the caller passes ``allow_single_pass`` and the mode
    is flagged/if/heads with fewer than 2^31 items): nothing runs before :meth:`scatter`, which
    counts, looks back and scatters in one kernel; :attr:`num_selected` is valid only after it, so
    such callers scatter into buffers of ``n`` items first and read the count afterwards."""

    def __init__(self, x, flags, mode, pred=None, pred2=None, *, load_x=True, first_head=False,
                 pol=None, allow_single_pass=False):
        self.x, self.flags, self.mode, self.pred, self.pred2, self.load_x = x, flags, mode, pred, pred2, load_x
        self.n = n = x.numel()
        self.pol = pol or policy.select("select", x.device)
        self.tile = tile = self.pol["TILE"]
        self.num_tiles = nt = max(1, cdiv(n, tile))
        dev = x.device
        self.totals = torch.zeros(2, dtype=torch.int64, device=dev)
        self.single_pass = bool(allow_single_pass and self.pol.get("SINGLE_PASS", 0) and not first_head
                                and mode in (SELECT_FLAGGED, SELECT_IF, SELECT_HEADS) and n < 2 ** 31)
        self.first_head = first_head
        if self.single_pass:
            self.offsets = self.totals
            return
        counts = torch.empty(nt, dtype=torch.int32, device=dev)
        three = mode == SELECT_THREE_WAY
        counts2 = torch.empty(nt, dtype=torch.int32, device=dev) if three else counts
        fh = torch.empty(nt, dtype=torch.int64, device=dev) if first_head else counts
        self.offsets = torch.empty(nt, dtype=torch.int64, device=dev)
        self.offsets2 = torch.empty(nt, dtype=torch.int64, device=dev) if three else self.offsets
        self.next_head = torch.empty(nt, dtype=torch.int64, device=dev) if first_head else self.offsets
        kw = self.pol.launch_kwargs()
        kw = {k: kw[k] for k in ("TILE", "num_warps", "num_stages")}
        if n > 0:
            _count_kernel[(nt,)](x, flags if flags is not None else x, counts, counts2, fh, n,
                                 MODE=mode, PRED=pred or _never, PRED2=pred2 or _never, LOAD_X=load_x,
                                 FIRST_HEAD=first_head, **kw)
            _scan_tiles_kernel[(1,)](counts, self.offsets, self.totals, fh, self.next_head, nt, n,
                                     BLOCK=4096, SUFFIX_MIN=first_head, num_warps=16)
            if three:
                _scan_tiles_kernel[(1,)](counts2, self.offsets2, self.totals[1:], fh, self.next_head, nt,
                                         n, BLOCK=4096, SUFFIX_MIN=False, num_warps=16)

    @property
    def num_selected(self) -> torch.Tensor:
        """The number selected (device int64 scalar; for three-way, a pair)."""
        return self.totals if self.mode == SELECT_THREE_WAY else self.totals[0]

    def scatter(self, *, out=None, values=None, out_values=None, out_index=None, shape=None,
                index_base=None, out_lengths=None, out_inverse=None, partition=False):
        n = self.n
        if n == 0:
            return
        dummy = self.offsets
        ndim = 1 if shape is None else len(shape)
        shape_t = _shape_tensor(shape, self.x.device) if ndim > 1 else dummy
        common = dict(MODE=self.mode, PRED=self.pred or _never, LOAD_X=self.load_x, WRITE_KEYS=out is not None,
                      WITH_VALUES=values is not None, WRITE_INDEX=out_index is not None, NDIM=ndim,
                      ADD_BASE=index_base is not None, WRITE_INVERSE=out_inverse is not None,
                      TILE=self.tile, num_warps=self.pol.num_warps, num_stages=self.pol.num_stages)
        if self.single_pass:
            if partition or out_lengths is not None:
                raise RuntimeError("internal: a single-pass plan cannot partition or write run lengths")
            counter, status, _stride = lookback.allocate_status(self.num_tiles, [torch.int32], False, self.x.device)
            _compact_single_pass_kernel[(self.num_tiles,)](
                self.x, self.flags if self.flags is not None else self.x,
                values if values is not None else self.x, counter, status, self.totals, shape_t,
                index_base if index_base is not None else dummy,
                out if out is not None else dummy, out_values if out_values is not None else dummy,
                out_index if out_index is not None else dummy, out_inverse if out_inverse is not None else dummy,
                n, self.num_tiles, LB_REDUCE=lookback.lookback_reduce(combine_add, 1),
                WINDOW=self.pol.get("WINDOW", 32), **common)
            return
        _compact_kernel[(self.num_tiles,)](
            self.x, self.flags if self.flags is not None else self.x,
            values if values is not None else self.x, self.offsets, self.offsets2, self.totals,
            self.totals[1:], self.next_head, shape_t, index_base if index_base is not None else dummy,
            out if out is not None else dummy, out_values if out_values is not None else dummy,
            out_index if out_index is not None else dummy, out_lengths if out_lengths is not None else dummy,
            out_inverse if out_inverse is not None else dummy, n, PRED2=self.pred2 or _never,
            WRITE_LENGTHS=out_lengths is not None, PARTITION=partition, **common)


def shrink(buf: torch.Tensor, k: int) -> torch.Tensor:
    """The first ``k`` items of a result buffer sized for the worst case: a view when that wastes at
    most half the buffer, else a compact copy (so a sparse result does not pin a large buffer)."""
    if 2 * k >= buf.shape[0]:
        return buf[:k]
    return buf[:k].clone()


_SHAPES: dict = {}


def _shape_tensor(shape, device) -> torch.Tensor:
    key = (tuple(int(s) for s in shape), str(device))
    t = _SHAPES.get(key)
    if t is None:
        if len(_SHAPES) > 256:
            _SHAPES.clear()
        t = torch.tensor(key[0], dtype=torch.int64, device=device)
        _SHAPES[key] = t
    return t


def flat_input(x: torch.Tensor, name: str = "x") -> torch.Tensor:
    """``x`` as a contiguous 1-D tensor (a copy only when it is not contiguous)."""
    return x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)


def _check_pred(pred, name="pred"):
    if not (isinstance(pred, triton.runtime.JITFunction) or type(pred).__name__ == "InterpretedFunction"):
        raise TypeError(f"{name} must be a @triton.jit function of one tile returning an int1 tile, "
                        f"got {type(pred).__name__}")


def _check_flags(x: torch.Tensor, flags: torch.Tensor):
    check_tensor(flags, "flags", SELECTABLE_DTYPES)
    check_same_device(("x", x), ("flags", flags))
    if flags.numel() != x.numel():
        raise ValueError(f"flags has {flags.numel()} items but x has {x.numel()}; they must match")


# ----------------------------------------------------------------------------------------------
# DeviceSelect
# ----------------------------------------------------------------------------------------------

def flagged(x: torch.Tensor, flags: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Items of ``x`` whose flag is nonzero, in input order. Returns ``(out, num_selected)``: ``out``
    has ``x.numel()`` slots of which the first ``num_selected`` (device int64 scalar) are the result."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_flags(x, flags)
    xf, ff = flat_input(x), flat_input(flags)
    plan = Plan(xf, ff, SELECT_FLAGGED, load_x=False, allow_single_pass=True)
    out = torch.empty_like(xf)
    plan.scatter(out=out)
    return out, plan.num_selected


def if_(x: torch.Tensor, pred) -> tuple[torch.Tensor, torch.Tensor]:
    """Items of ``x`` for which ``pred`` (a ``@triton.jit`` function: tile -> int1 tile) holds, in
    input order. Returns ``(out, num_selected)`` as :func:`flagged`."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_pred(pred)
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_IF, pred, allow_single_pass=True)
    out = torch.empty_like(xf)
    plan.scatter(out=out)
    return out, plan.num_selected


def unique(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The first item of every run of equal consecutive items (CUB's ``DeviceSelect::Unique``).
    Returns ``(out, num_selected)`` as :func:`flagged`."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_HEADS, allow_single_pass=True)
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
        raise ValueError(f"values has {values.numel()} items but keys has {keys.numel()}")
    kf, vf = flat_input(keys), flat_input(values)
    plan = Plan(kf, None, SELECT_HEADS, allow_single_pass=True)
    ko, vo = torch.empty_like(kf), torch.empty_like(vf)
    plan.scatter(out=ko, values=vf, out_values=vo)
    return ko, vo, plan.num_selected


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------

def _masked_select_impl(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    check_tensor(x, "x", SELECTABLE_DTYPES)
    check_tensor(mask, "mask", (torch.bool,))
    check_same_device(("x", x), ("mask", mask))
    if x.shape != mask.shape:
        try:
            x, mask = torch.broadcast_tensors(x, mask)
        except RuntimeError:
            raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast with x of shape "
                             f"{tuple(x.shape)}") from None
    xf, mf = flat_input(x), flat_input(mask)
    plan = Plan(xf, mf, SELECT_FLAGGED, load_x=False, allow_single_pass=True)
    buf = torch.empty(xf.numel(), dtype=x.dtype, device=x.device)
    plan.scatter(out=buf)  # queued before the sync: the GPU never waits for the host
    k = int(plan.num_selected.item())  # the one host sync: the result's size
    return shrink(buf, k)


@torch.library.custom_op("tritoncub::masked_select", mutates_args=())
def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """torch.masked_select: the items of ``x`` where the (broadcast) bool ``mask`` is True, as a 1-D
    tensor in row-major order. One host sync (the count)."""
    return _masked_select_impl(x, mask)


@masked_select.register_fake
def _(x, mask):
    if mask.dtype != torch.bool:
        raise TypeError(f"mask has dtype {mask.dtype}; supported dtypes are bool")
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return x.new_empty((k,))


def _nonzero_impl(x: torch.Tensor) -> torch.Tensor:
    check_tensor(x, "x", SELECTABLE_DTYPES)
    xf = flat_input(x)
    plan = Plan(xf, xf, SELECT_FLAGGED, load_x=False)
    k = int(plan.num_selected.item())  # the one host sync
    ndim = x.dim()
    if ndim == 0:
        return torch.empty((k, 0), dtype=torch.int64, device=x.device)
    out = torch.empty((k, ndim), dtype=torch.int64, device=x.device)
    plan.scatter(out_index=out, shape=tuple(x.shape) if ndim > 1 else None)
    return out


@torch.library.custom_op("tritoncub::nonzero", mutates_args=())
def nonzero(x: torch.Tensor) -> torch.Tensor:
    """torch.nonzero: the coordinates (int64, ``[count, x.dim()]``, row-major order) of the nonzero
    items (NaN counts as nonzero, ``-0.0`` does not). One host sync (the count)."""
    return _nonzero_impl(x)


@nonzero.register_fake
def _(x):
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return x.new_empty((k, x.dim()), dtype=torch.int64)
