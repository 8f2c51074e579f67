"""DevicePartition: split items into selected and rejected (CUB's ``DevicePartition``).

* :func:`flagged` — items with a nonzero flag first, then the rest;
* :func:`if_` — items for which the ``@triton.jit`` predicate holds first, then the rest;
* :func:`three_way` — items of ``pred1`` first, then those of ``pred2`` (and not ``pred1``), then
  the rest.

Order: **every part keeps input order** — the rejected items too. (CUB writes the rejected items
in *reverse* order at the end of the output; here the partition is fully stable, which costs
nothing: the destination of a rejected item is ``num_selected + (its index - selected items before
it)``.) The output has ``x.numel()`` items; the count of the first part (three-way: a 2-item tensor, the
counts of the first and of the second part) is returned on the device, nothing is read back to
the host.

Built on the two-pass compaction engine of :mod:`tritoncub.device.select` (deterministic).
"""
from __future__ import annotations

import torch

from .select import (SELECT_FLAGGED, SELECT_IF, SELECT_THREE_WAY, SELECTABLE_DTYPES, Plan, _check_flags,
                     _check_pred, flat_input)
from .._utils import InputValueError, check_tensor


def flagged(x: torch.Tensor, flags: torch.Tensor, values: torch.Tensor | None = None):
    """Stable partition of ``x`` by ``flags`` (nonzero first). Returns ``(out, num_selected)``, or
    ``(out, out_values, num_selected)`` when ``values`` are carried along."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_flags(x, flags)
    xf, ff = flat_input(x), flat_input(flags)
    plan = Plan(xf, ff, SELECT_FLAGGED, load_x=False, two_pass=True)
    return _scatter(plan, xf, values)


def if_(x: torch.Tensor, pred, values: torch.Tensor | None = None):
    """Stable partition of ``x`` by a ``@triton.jit`` predicate (items where it holds first).
    Returns ``(out, num_selected)`` (or ``(out, out_values, num_selected)``)."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_pred(pred)
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_IF, pred, two_pass=True)
    return _scatter(plan, xf, values)


def three_way(x: torch.Tensor, pred1, pred2, values: torch.Tensor | None = None):
    """Stable three-way partition: ``[items of pred1 | items of pred2 and not pred1 | the rest]``.
    Returns ``(out, num_selected)`` with ``num_selected`` a device int64 tensor of the first two
    parts' sizes (or ``(out, out_values, num_selected)``)."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    _check_pred(pred1, "pred1")
    _check_pred(pred2, "pred2")
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_THREE_WAY, pred1, pred2, two_pass=True)
    return _scatter(plan, xf, values)


def _scatter(plan: Plan, xf: torch.Tensor, values):
    out = torch.empty_like(xf)
    if values is None:
        plan.scatter(out=out, partition=True)
        return out, plan.num_selected
    check_tensor(values, "values", SELECTABLE_DTYPES, device=xf.device)
    if values.numel() != xf.numel():
        raise InputValueError(f"values has {values.numel()} items but x has {xf.numel()}")
    vf = flat_input(values)
    out_v = torch.empty_like(vf)
    plan.scatter(out=out, values=vf, out_values=out_v, partition=True)
    return out, out_v, plan.num_selected
