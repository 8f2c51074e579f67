"""DeviceReduce::ReduceByKey: one aggregate per run of equal consecutive keys (CUB's).

``reduce_by_key(keys, values, combine="sum")`` returns ``(unique_keys, aggregates, num_runs)``:
``unique_keys[r]`` is the first key of run ``r``, ``aggregates[r]`` the values of the run combined in
input order, ``num_runs`` a device int64 scalar; outputs have ``n`` slots, the first ``num_runs``
valid. ``combine`` is ``"sum"``, ``"min"``, ``"max"`` or any associative ``@triton.jit`` function
``f(a, b)`` (``a`` the earlier value; it need not be commutative). Keys compare with ``==`` (NaN
keys never match). Aggregates have the values' dtype (fp16/bf16 are combined in fp32 and rounded
once at the end; integer sums wrap like CUB's).

Algorithm (deterministic, two passes plus a fix-up):

1. pass 1 counts the run heads of every tile and the tile scan turns them into output offsets
   (the select engine, :mod:`tritoncub.device.select`, reading the keys only);
2. pass 2 reads keys and values, runs a segmented inclusive scan of the values over the tile (a
   ``(head flag, value)`` pair scan: a head restarts the running value), writes each run's first key
   at its head and the scan value at the run's last item, and records for the tile its trailing
   partial (the scan value at its last item), whether it holds a head, and — when its first run
   began in an earlier tile and ends in this one — that run's output slot;
3. one program scans the tiles' trailing partials (segmented by "holds a head") into the carry
   each tile receives from runs that began before it, and combines the carry into those slots.

Every association is fixed by the tile size, so float results are reproducible run to run.
"""
from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from .. import policy
from .._launch import launch
from .._utils import ALL_NUMERIC_DTYPES, check_tensor
from ..agent import lookback
from ..block.reduce import combine_add, combine_max, combine_min
from .select import SELECT_HEADS, SELECTABLE_DTYPES, Plan, _check_pred, flat_input

_NAMED = {"sum": combine_add, "min": combine_min, "max": combine_max}


def _segmented_scan_template(f, v):
    return tl.associative_scan((f, v), 0, seg_combine)  # noqa: F821  (bound by bind_jit)


@functools.lru_cache(maxsize=None)
def segmented_scan(combine):
    """``SEG_SCAN(flags, values) -> (flags, scan)``: the inclusive scan of ``values`` restarted at every
    set flag, for ``combine``. The operator is bound into the scanning function (compiled Triton
    cannot pass an operator received as a ``tl.constexpr`` on to ``tl.associative_scan``)."""
    return lookback.bind_jit(_segmented_scan_template, seg_combine=lookback.segmented_combine(combine, 1))


@triton.jit
def _take_last(fa, va, fb, vb):
    """Reduce to the last flagged value (associative)."""
    return fa | fb, tl.where(fb != 0, vb, va)


@triton.jit
def _rbk_kernel(keys_ptr, vals_ptr, offsets_ptr, out_keys_ptr, out_vals_ptr, partial_ptr, has_head_ptr,
                fix_ptr, n, SEG_SCAN: tl.constexpr, ACC: tl.constexpr, TILE: tl.constexpr):
    pid = tl.program_id(0)
    lane = tl.arange(0, TILE)
    idx = pid.to(tl.int64) * TILE + lane
    inb = idx < n
    k = tl.load(keys_ptr + idx, mask=inb)
    prev = tl.load(keys_ptr + idx - 1, mask=inb & (idx > 0))
    nxt = tl.load(keys_ptr + idx + 1, mask=inb & (idx + 1 < n))
    heads = inb & ((idx == 0) | (k != prev))
    tails = inb & ((idx == n - 1) | (nxt != k))
    v = tl.load(vals_ptr + idx, mask=inb, other=0).to(ACC)
    h32 = heads.to(tl.int32)
    f = h32 | (lane == 0).to(tl.int32)
    _, s = SEG_SCAN(f, v)
    run = tl.load(offsets_ptr + pid) + (tl.cumsum(h32, 0) - 1).to(tl.int64)
    tl.store(out_keys_ptr + run, k, mask=heads)
    tl.store(out_vals_ptr + run, s, mask=tails)
    # tile summary for the fix-up
    _, part = tl.reduce((inb.to(tl.int32), s), 0, _take_last)
    tl.store(partial_ptr + pid, part)
    tl.store(has_head_ptr + pid, tl.max(h32, 0))
    first_head = tl.min(tl.where(heads, lane, TILE), 0)
    first_tail = tl.min(tl.where(tails, lane, TILE), 0)
    fix = tl.where((first_head != 0) & (first_tail < TILE), tl.load(offsets_ptr + pid) - 1, -1)
    tl.store(fix_ptr + pid, fix)


@triton.jit
def _rbk_fixup_kernel(partial_ptr, has_head_ptr, fix_ptr, out_vals_ptr, num_tiles, COMBINE: tl.constexpr,
                      SEG_SCAN: tl.constexpr, BLOCK: tl.constexpr):
    """One program: carry of every tile (segmented exclusive scan of the trailing partials) combined
    into the slot of the run that crosses into it."""
    lane = tl.arange(0, BLOCK)
    carry = tl.load(partial_ptr)
    start = 0
    while start < num_tiles:
        t = start + lane
        m = t < num_tiles
        p = tl.load(partial_ptr + t, mask=m, other=0)
        f = tl.load(has_head_ptr + t, mask=m, other=1)
        _, s = SEG_SCAN(f, p)
        seen = tl.cumsum(f, 0) > 0
        s = tl.where(seen, s, COMBINE(carry, s))
        cin = tl.gather(s, tl.maximum(lane - 1, 0), 0)
        cin = tl.where(lane == 0, carry, cin)
        fx = tl.load(fix_ptr + t, mask=m, other=-1)
        need = m & (fx >= 0)
        o = tl.load(out_vals_ptr + fx, mask=need, other=0)
        tl.store(out_vals_ptr + fx, COMBINE(cin, o.to(s.dtype)), mask=need)
        _, carry = tl.reduce((m.to(tl.int32), s), 0, _take_last)
        start += BLOCK


_POLICY = policy.register(
    "reduce_by_key",
    space={"TILE": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16], "num_stages": [1, 2]},
    fallback={"TILE": 2048, "num_warps": 8, "num_stages": 1},
    doc="TILE items per program in pass 2 (pass 1 uses the select policy).")

_VALUE_DTYPES = ALL_NUMERIC_DTYPES


def _acc_dtype(dtype: torch.dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return dtype


_TL = {torch.float32: tl.float32, torch.float64: tl.float64, torch.int8: tl.int8, torch.int16: tl.int16,
       torch.int32: tl.int32, torch.int64: tl.int64, torch.uint8: tl.uint8}
for _name, _tl in (("uint16", tl.uint16), ("uint32", tl.uint32), ("uint64", tl.uint64)):
    if getattr(torch, _name, None) is not None:
        _TL[getattr(torch, _name)] = _tl


#: tiles per step of the one-program fix-up (a module constant so tests can make the carry cross steps)
_FIXUP_BLOCK = 1024


def reduce_by_key(keys: torch.Tensor, values: torch.Tensor, combine="sum"):
    """Aggregate of every run of equal consecutive keys. Returns ``(unique_keys, aggregates,
    num_runs)`` (outputs of ``n`` slots, the first ``num_runs`` valid; ``num_runs`` on the device)."""
    check_tensor(keys, "keys", SELECTABLE_DTYPES)
    check_tensor(values, "values", _VALUE_DTYPES, device=keys.device)
    if values.numel() != keys.numel():
        raise ValueError(f"values has {values.numel()} items but keys has {keys.numel()}")
    if isinstance(combine, str):
        if combine not in _NAMED:
            raise ValueError(f"combine must be one of {sorted(_NAMED)} or a @triton.jit function, got {combine!r}")
        combine = _NAMED[combine]
    else:
        _check_pred(combine, "combine")
    kf, vf = flat_input(keys), flat_input(values)
    n = kf.numel()
    dev = kf.device
    acc = _acc_dtype(vf.dtype)
    pol = policy.select("reduce_by_key", dev)
    sel_pol = policy.Policy("select", {**policy.select("select", dev).values, "TILE": pol["TILE"]}, pol.num_warps,
                            pol.num_stages, pol.source)
    plan = Plan(kf, None, SELECT_HEADS, pol=sel_pol, two_pass=True)
    out_k = torch.empty_like(kf)
    out_v = torch.empty(n, dtype=vf.dtype, device=dev)
    if n == 0:
        return out_k, out_v, plan.num_selected
    nt = plan.num_tiles
    partial = torch.empty(nt, dtype=acc, device=dev)
    has_head = torch.empty(nt, dtype=torch.int32, device=dev)
    fix = torch.empty(nt, dtype=torch.int64, device=dev)
    seg = segmented_scan(combine)
    # aggregates are scanned in the accumulator type; a separate buffer when it differs
    out_acc = out_v if acc == vf.dtype else torch.empty(n, dtype=acc, device=dev)
    launch(_rbk_kernel, (nt,), kf, vf, plan.offsets, out_k, out_acc, partial, has_head, fix, n, SEG_SCAN=seg,
           ACC=_TL[acc], TILE=pol["TILE"], num_warps=pol.num_warps, num_stages=pol.num_stages)
    if nt > 1:
        launch(_rbk_fixup_kernel, (1,), partial, has_head, fix, out_acc, nt, COMBINE=combine, SEG_SCAN=seg,
               BLOCK=_FIXUP_BLOCK, num_warps=8)
    if out_acc is not out_v:
        out_v.copy_(out_acc)
    return out_k, out_v, plan.num_selected
