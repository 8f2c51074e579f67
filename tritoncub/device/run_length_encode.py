"""DeviceRunLengthEncode (CUB's): runs of equal consecutive items.

* :func:`encode` — the first item of every run and the run's length;
* :func:`non_trivial_runs` — offset and length of every run longer than one item.

Equality is ``==`` (NaN never equals NaN: each NaN is a run of one; ``-0.0 == 0.0``). Outputs have
``x.numel()`` slots of which the first ``num_runs`` (a device int64 scalar) hold the result; nothing
is read back to the host.

Built on the compaction engine of :mod:`tritoncub.device.select`. :func:`encode` takes its bitmask
two-pass form (policy bucket ``heads``): pass 1 stores one bit per run head, counts the heads of
each tile and notes its last head (scanned into output offsets and the last head before each tile);
pass 2 writes each head's item at its run's slot and the length of the run before it (the distance
from the previous head). :func:`non_trivial_runs`
takes the bucket ``runs``, whose ``PASSES`` picks its form: the single pass (the H100's policy), or the
bitmask two-pass form (the H200's): pass 1 stores the bits of each such run's first item and, in a second
bitmask, of its last; pass 2 writes the offsets from the first and each run's end from the last (the
count of first items up to it gives its slot); a last kernel subtracts.
"""
from __future__ import annotations

import torch

from .. import policy
from .._utils import InputTypeError, InputValueError, check_tensor, count_dtype
from .select import SELECT_HEADS, SELECT_NONTRIVIAL, SELECTABLE_DTYPES, Plan, bitmask_plan, flat_input

_LENGTH_DTYPES = (torch.int32, torch.int64)
#: :func:`encode` takes the bitmask two-pass form (policy bucket ``heads``, as unique_consecutive's run
#: heads) rather than the single pass of the ``runs`` bucket. H100, 2^26 sorted int32 in 2^20 runs:
#: kernels 152-160 us (count 103, scatter 36-44 with 8 tiles per scatter program, lengths 7), while a
#: call of the single pass took 197 us (op time, host included; bench/results/logs/
#: select_scatter_groups_probe-20261124.log); with the
#: lengths written by the scatter and the publishing count scan, 135 us (count 94, scatter 37, scan 4;
#: bench/results/logs/heads_config_probe-around-tuned-20261124p.log); its three kernels form a launch
#: chain (op 148 -> 146 us, bench/results/logs/launch_chain_probe-20261124q.log). Tests run both forms.
ENCODE_TWO_PASS = True


def encode(x: torch.Tensor, *, length_dtype: torch.dtype | None = None):
    """Run-length encoding of ``x`` (flattened). Returns ``(unique_out, lengths_out, num_runs)``.
    Lengths are ``length_dtype``: by default int32 (CUB's) below 2^31 items, else int64."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    length_dtype = count_dtype(x.numel(), length_dtype, "length_dtype")
    xf = flat_input(x)
    if ENCODE_TWO_PASS:
        # (the scatter writes the lengths: no run starts, no lengths kernel)
        plan = bitmask_plan(xf, None, SELECT_HEADS, count_to_host=False, run_lengths=True,
                            pol=policy.select("select", xf.device, "heads"))
        starts = None
    else:
        plan = Plan(xf, None, SELECT_HEADS, pol=policy.select("select", xf.device, "runs"))
        starts = torch.empty(xf.numel(), dtype=torch.int64, device=xf.device)
    uniq = torch.empty_like(xf)
    lengths = torch.empty(xf.numel(), dtype=length_dtype, device=xf.device)
    plan.scatter(out=uniq, out_index=starts, out_lengths=lengths)
    return uniq, lengths, plan.num_selected


def non_trivial_runs(x: torch.Tensor, *, offset_dtype: torch.dtype = torch.int64,
                     length_dtype: torch.dtype | None = None):
    """Offsets and lengths of the runs of ``x`` longer than one item, in input order. Returns
    ``(offsets_out, lengths_out, num_runs)``. Lengths are ``length_dtype``: by default int32 (CUB's)
    below 2^31 items, else int64."""
    check_tensor(x, "x", SELECTABLE_DTYPES)
    length_dtype = count_dtype(x.numel(), length_dtype, "length_dtype")
    if offset_dtype not in _LENGTH_DTYPES:
        raise InputTypeError(f"offset_dtype must be int32 or int64, got {offset_dtype}")
    if offset_dtype == torch.int32 and x.numel() > 2 ** 31:
        raise InputValueError(f"offset_dtype int32 cannot hold the offsets of {x.numel()} items (2^31 or more); "
                              f"use int64")
    xf = flat_input(x)
    plan = Plan(xf, None, SELECT_NONTRIVIAL, pol=policy.select("select", xf.device, "runs"))
    offsets = torch.empty(xf.numel(), dtype=offset_dtype, device=xf.device)
    lengths = torch.empty(xf.numel(), dtype=length_dtype, device=xf.device)
    plan.scatter(out_index=offsets, out_lengths=lengths)
    return offsets, lengths, plan.num_selected
