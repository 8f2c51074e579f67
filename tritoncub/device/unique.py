"""torch's ``unique`` and ``unique_consecutive`` as tritoncub operators.

``torch.ops.tritoncub.unique_consecutive(x, return_inverse, return_counts, dim=None)`` — the first
item of every run of equal consecutive items (flattened input), with each item's run number and
each run's length; the select engine's head compaction (:mod:`tritoncub.device.select`), one host
sync for the result's size.

``torch.ops.tritoncub.unique(x, sorted=True, return_inverse, return_counts, dim=None)`` — the
distinct values in ascending order (``sorted=False`` gives the same sorted result, as torch's CUDA
implementation does). Two algorithms, chosen on the device without a host round trip:

* **dense integers** (integer and bool dtypes except uint64): when ``max - min < RANGE_CAP`` (a
  buffer of ``min(max(n, 4096), 2^22)`` counters), each item marks (or, for counts, atomically
  counts) its slot ``x - min``; the marked slots compacted in index order are the sorted distinct
  values, their counters the counts, and each item's inverse is the rank of its slot. No sort: one
  read of the input for min/max, one to mark, one more for the inverse. Counts are exact integers.
* **otherwise** (floats, wide integer ranges): sort with tritoncub's onesweep radix sort
  (:mod:`tritoncub.device.radix_sort`; keys only, or keys and the permutation when the inverse is
  wanted), then the head compaction of the sorted items; the inverse is scattered back through the
  permutation. The radix sort orders ``-0.0`` with ``+0.0`` and NaNs last, as torch does; it
  canonicalises ``-0.0`` to ``+0.0`` and NaN payloads in the values it returns.

Both paths queue all their GPU work first and then read exactly one value back to the host (the
number of distinct values, with the dense path's overflow flag in the same read), so the GPU never
waits for the host in the middle; results are written into worst-case-sized buffers and returned as
views (or compact copies when the view would waste more than half, see ``select.shrink``). When the
dense path overflows, the sort path runs and reads its own count (a second sync, only then). NaN: every NaN is its own value (NaN != NaN),
sorted last, as torch does; ``-0.0`` and ``0.0`` are one value.

``dim`` other than ``None`` is not supported by these operators (ValueError).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .._library import custom_op
from .._launch import launch
from .._utils import INT_DTYPES, cdiv, check_tensor
from . import radix_sort
from .select import SELECT_FLAGGED, SELECT_HEADS, SELECTABLE_DTYPES, Plan, flat_input, shrink

RANGE_CAP_MAX = 1 << 22
_DENSE_DTYPES = INT_DTYPES + (torch.uint8, torch.bool) + tuple(
    d for d in (getattr(torch, "uint16", None), getattr(torch, "uint32", None)) if d is not None)


@triton.jit
def _mark_kernel(x_ptr, n, minmax_ptr, slots_ptr, cap, overflow_ptr, COUNT: tl.constexpr,
                 TILE: tl.constexpr):
    """Mark (``COUNT``: count with relaxed atomics) slot ``x - min`` of every item, unless the value
    range does not fit in ``cap`` slots (then program 0 raises the overflow flag and nothing is
    written)."""
    pid = tl.program_id(0)
    mn = tl.load(minmax_ptr).to(tl.int64)
    mx = tl.load(minmax_ptr + 1).to(tl.int64)
    span = mx - mn  # negative when it overflows int64
    fits = (span >= 0) & (span < cap)
    if fits:
        idx = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
        inb = idx < n
        v = tl.load(x_ptr + idx, mask=inb, other=0).to(tl.int64)
        slot = v - mn
        if COUNT:
            tl.atomic_add(slots_ptr + slot, tl.full((TILE,), 1, tl.int32), mask=inb, sem="relaxed")
        else:
            tl.store(slots_ptr + slot, tl.full((TILE,), 1, tl.int8), mask=inb)
    else:
        if pid == 0:
            tl.store(overflow_ptr, 1)


@triton.jit
def _gather_rank_kernel(x_ptr, n, minmax_ptr, rank_ptr, inv_ptr, cap, TILE: tl.constexpr):
    """``inverse[i] = rank[x[i] - min]`` (nothing is read when the range overflowed ``cap``)."""
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    inb = idx < n
    mn = tl.load(minmax_ptr).to(tl.int64)
    v = tl.load(x_ptr + idx, mask=inb, other=0).to(tl.int64)
    slot = v - mn
    inb = inb & (slot >= 0) & (slot < cap)
    r = tl.load(rank_ptr + slot, mask=inb)
    tl.store(inv_ptr + idx, r, mask=inb)


_TILE = 4096


def _sort(x: torch.Tensor, with_indices: bool):
    """Ascending stable sort (NaN last) with tritoncub's onesweep radix sort: keys only, or values
    and the permutation when the inverse is wanted."""
    if with_indices:
        return radix_sort.sort(x)
    return radix_sort.sort_keys(x), None


def _sort_path(xf, return_inverse, return_counts):
    sv, perm = _sort(xf, return_inverse)
    return _heads(sv, return_inverse, return_counts, perm)


def _heads(xf, return_inverse, return_counts, perm=None):
    """Head compaction of ``xf`` (values, inverse in ``xf``'s order or through ``perm``, counts),
    all queued before the one host sync that sizes the results."""
    n = xf.numel()
    dev = xf.device
    plan = Plan(xf, None, SELECT_HEADS)
    vals = torch.empty(n, dtype=xf.dtype, device=dev)
    counts = torch.empty(n if return_counts else 0, dtype=torch.int64, device=dev)
    starts = torch.empty(n if return_counts else 0, dtype=torch.int64, device=dev)
    inv = torch.empty(n if return_inverse else 0, dtype=torch.int64, device=dev)
    plan.scatter(out=vals, out_index=starts if return_counts else None,
                 out_lengths=counts if return_counts else None, out_inverse=inv if return_inverse else None)
    if return_inverse and perm is not None:
        inv = torch.empty_like(inv).scatter_(0, perm, inv)
    k = int(plan.num_selected.item())  # the one host sync
    return shrink(vals, k), inv, shrink(counts, k) if return_counts else counts


def _dense_path(xf, return_inverse, return_counts):
    """Returns None when the value range does not fit (then the caller sorts)."""
    n = xf.numel()
    dev = xf.device
    cap = min(max(n, 4096), RANGE_CAP_MAX)
    xs = xf.view(torch.uint8) if xf.dtype == torch.bool else xf
    mn, mx = torch.aminmax(xs)
    minmax = torch.stack([mn.to(torch.int64), mx.to(torch.int64)])
    slots = torch.zeros(cap, dtype=torch.int32 if return_counts else torch.int8, device=dev)
    overflow = torch.zeros(1, dtype=torch.int64, device=dev)
    launch(_mark_kernel, (cdiv(n, _TILE),), xs, n, minmax, slots, cap, overflow, COUNT=return_counts, TILE=_TILE,
           num_warps=8)
    plan = Plan(slots, slots, SELECT_FLAGGED, load_x=False)
    vals = torch.empty(cap, dtype=xs.dtype, device=dev)
    counts = torch.empty(cap if return_counts else 0, dtype=torch.int64, device=dev)
    rank = torch.empty(cap if return_inverse else 0, dtype=torch.int64, device=dev)
    plan.scatter(out_index=vals, index_base=minmax, values=slots if return_counts else None,
                 out_values=counts if return_counts else None,
                 out_inverse=rank if return_inverse else None)
    inv = torch.empty(n if return_inverse else 0, dtype=torch.int64, device=dev)
    if return_inverse:
        launch(_gather_rank_kernel, (cdiv(n, _TILE),), xs, n, minmax, rank, inv, cap, TILE=_TILE, num_warps=8)
    k, ovf = torch.cat([plan.num_selected.view(1), overflow]).tolist()  # the one host sync
    if ovf:
        return None
    vals = shrink(vals, k)
    if xf.dtype == torch.bool:
        vals = vals.view(torch.bool)
    return vals, inv, shrink(counts, k) if return_counts else counts


def _check_dim(dim):
    if dim is not None:
        raise ValueError("tritoncub unique/unique_consecutive support dim=None only (flattened input)")


def _unique_impl(x, sorted_, return_inverse, return_counts, dim):
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_dim(dim)
    xf = flat_input(x)
    if xf.numel() == 0:
        res = (xf.new_empty(0), torch.empty(x.shape if return_inverse else (0,), dtype=torch.int64,
                                            device=x.device), torch.empty(0, dtype=torch.int64, device=x.device))
        return res
    res = None
    if xf.dtype in _DENSE_DTYPES:
        res = _dense_path(xf, return_inverse, return_counts)
    if res is None:
        res = _sort_path(xf, return_inverse, return_counts)
    vals, inv, counts = res
    if return_inverse:
        inv = inv.view(x.shape)
    return vals, inv, counts


@custom_op("tritoncub::unique", mutates_args=())
def unique(x: torch.Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torch.unique (flattened): ``(values, inverse, counts)``; ``inverse`` (shape of ``x``) and
    ``counts`` are empty unless requested. Values ascending; one host sync."""
    return _unique_impl(x, sorted, return_inverse, return_counts, dim)


@unique.register_fake
def _(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    _check_dim(dim)
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return (x.new_empty((k,)), x.new_empty(x.shape if return_inverse else (0,), dtype=torch.int64),
            x.new_empty((k,) if return_counts else (0,), dtype=torch.int64))


def _unique_consecutive_impl(x, return_inverse, return_counts, dim):
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_dim(dim)
    xf = flat_input(x)
    if xf.numel() == 0:
        return (xf.new_empty(0), torch.empty(x.shape if return_inverse else (0,), dtype=torch.int64,
                                             device=x.device), torch.empty(0, dtype=torch.int64, device=x.device))
    vals, inv, counts = _heads(xf, return_inverse, return_counts)
    if return_inverse:
        inv = inv.view(x.shape)
    return vals, inv, counts


@custom_op("tritoncub::unique_consecutive", mutates_args=())
def unique_consecutive(x: torch.Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torch.unique_consecutive (flattened): ``(values, inverse, counts)``, the last two empty unless
    requested. One host sync."""
    return _unique_consecutive_impl(x, return_inverse, return_counts, dim)


@unique_consecutive.register_fake
def _(x, return_inverse=False, return_counts=False, dim=None):
    _check_dim(dim)
    ctx = torch.library.get_ctx()
    k = ctx.new_dynamic_size()
    return (x.new_empty((k,)), x.new_empty(x.shape if return_inverse else (0,), dtype=torch.int64),
            x.new_empty((k,) if return_counts else (0,), dtype=torch.int64))
