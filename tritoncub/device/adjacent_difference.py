"""DeviceAdjacentDifference (CUB's): differences of neighbouring items, and torch's ``diff``.

* :func:`subtract_left` — ``out[0] = x[0]``, ``out[i] = op(x[i], x[i-1])``;
* :func:`subtract_right` — ``out[i] = op(x[i], x[i+1])``, ``out[n-1] = x[n-1]``.

``op`` defaults to subtraction (logical xor for bool, as torch's ``diff``); any ``@triton.jit``
function ``op(current, neighbour)`` may be given. ``out=None`` writes a new tensor (CUB's
``*Copy``); ``in_place=True`` overwrites ``x``: the items on tile boundaries are saved by a first,
tiny kernel before any tile is overwritten, so the result equals the copy's (CUB does the same).

``torch.ops.tritoncub.diff(x, n=1, dim=-1, prepend=None, append=None)`` — torch.diff.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import policy
from .._library import custom_op
from .._launch import launch
from .._utils import (is_pow2, ALL_NUMERIC_DTYPES, COMPLEX_DTYPES, InputValueError, cdiv, check_flag, check_jit_function,
                      check_no_overlap, check_tensor, wrap_dim)

_DTYPES = ALL_NUMERIC_DTYPES + (torch.bool,)
#: torch.diff also takes complex tensors (their real and imaginary parts differenced apart)
_DIFF_DTYPES = _DTYPES + COMPLEX_DTYPES


@triton.jit
def difference(a, b):
    """``a - b``; for int1 (bool) tiles, ``a != b`` (torch's diff of bools); 16-bit floats subtract in
    fp32 and round once, as torch computes them (the same correctly rounded result)."""
    if a.dtype == tl.int1:
        r = a != b
    elif (a.dtype == tl.float16) or (a.dtype == tl.bfloat16):
        r = (a.to(tl.float32) - b.to(tl.float32)).to(a.dtype, fp_downcast_rounding="rtne")
    else:
        r = a - b
    return r


@triton.jit
def _save_boundaries_kernel(x_ptr, saved_ptr, n, num_tiles, RIGHT: tl.constexpr, TILE: tl.constexpr,
                            BLOCK: tl.constexpr):
    """``saved[t]`` = the neighbour of tile ``t`` outside it (left: item ``t*TILE - 1``; right: item
    ``(t+1)*TILE``)."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if RIGHT:
        src = (t + 1) * TILE
        m = (t < num_tiles) & (src < n)
    else:
        src = t * TILE - 1
        m = (t < num_tiles) & (src >= 0)
    tl.store(saved_ptr + t, tl.load(x_ptr + src, mask=m), mask=m)


@triton.jit
def _adjacent_difference_kernel(x_ptr, saved_ptr, out_ptr, n, OP: tl.constexpr, RIGHT: tl.constexpr,
                                IN_PLACE: tl.constexpr, TILE: tl.constexpr):
    pid = tl.program_id(0)
    lane = tl.arange(0, TILE)
    idx = pid.to(tl.int64) * TILE + lane
    inb = idx < n
    x = tl.load(x_ptr + idx, mask=inb)
    if RIGHT:
        nb_idx = idx + 1
        has_nb = inb & (nb_idx < n)
        if IN_PLACE:
            inner = has_nb & (lane < TILE - 1)
            nb = tl.load(x_ptr + nb_idx, mask=inner)
            nb = tl.where(lane == TILE - 1, tl.load(saved_ptr + pid), nb)  # garbage where unused
        else:
            nb = tl.load(x_ptr + nb_idx, mask=has_nb)
    else:
        nb_idx = idx - 1
        has_nb = inb & (idx > 0)
        if IN_PLACE:
            inner = has_nb & (lane > 0)
            nb = tl.load(x_ptr + nb_idx, mask=inner)
            nb = tl.where(lane == 0, tl.load(saved_ptr + pid), nb)  # garbage where unused
        else:
            nb = tl.load(x_ptr + nb_idx, mask=has_nb)
    y = tl.where(has_nb, OP(x, nb), x)
    if IN_PLACE:
        tl.debug_barrier()  # every read of the tile happens before the first write
    tl.store(out_ptr + idx, y, mask=inb)


@triton.jit
def _diff_rows_kernel(x_ptr, out_ptr, rows, length, OP: tl.constexpr, ROW_TILES: tl.constexpr, WIDE: tl.constexpr,
                      TILE: tl.constexpr):
    """``out[r, j] = OP(x[r, j+1], x[r, j])`` over a contiguous ``[rows, length]`` input.

    ``ROW_TILES``: each program takes ``TILE`` items of one row (rows at least a tile long: one
    scalar division per program). Otherwise ``TILE`` items of the flattened output, each split into
    (row, column) by a division, in 32 bits unless ``WIDE`` (an index into ``x``, ``rows * length``
    items, may pass 2^31: the source index ``i + r`` exceeds the output index ``i`` by the row)."""
    pid = tl.program_id(0)
    lane = tl.arange(0, TILE)
    out_len = length - 1
    if ROW_TILES:
        tiles_per_row = (out_len - 1) // TILE + 1   # (not tl.cdiv: an int32 length near 2^31 would wrap)
        r = (pid // tiles_per_row).to(tl.int64)
        j = (pid % tiles_per_row).to(tl.int64) * TILE + lane
        m = j < out_len
        src = r * length + j
        dst = r * out_len + j
    else:
        if WIDE:
            # (int64: rows and length are 32-bit arguments; tl.cast, not .to: an argument equal to 1 is
            # a constexpr)
            i = pid.to(tl.int64) * TILE + lane
            m = i < tl.cast(rows, tl.int64) * out_len
        else:
            i = pid * TILE + lane
            m = i < rows * out_len
        r = i // out_len
        src = i + r   # (r * length + (i - r * out_len))
        dst = i
    a = tl.load(x_ptr + src + 1, mask=m)
    b = tl.load(x_ptr + src, mask=m)
    tl.store(out_ptr + dst, OP(a, b), mask=m)


_POLICY = policy.register(
    "adjacent_difference",
    space={"TILE": [1024, 2048, 4096, 8192], "num_warps": [4, 8], "num_stages": [1, 2]},
    fallback={"TILE": 4096, "num_warps": 8, "num_stages": 1},
    # (a hand-edited file's TILE must still be a tile: a power of two, as the kernel's arange needs)
    valid=lambda c: is_pow2(c["TILE"]) and 16 <= c["TILE"] <= 1 << 16,
    doc="TILE items per program (a power of two).")


def _run(x: torch.Tensor, op, right: bool, out: torch.Tensor | None, in_place: bool) -> torch.Tensor:
    check_tensor(x, "x", _DTYPES)
    check_flag(in_place, "in_place")   # (a truthy non-bool would overwrite x)
    if op is None:
        op = difference
    else:
        check_jit_function(op, "op", 2, "the item, then its neighbour")
    if in_place:
        if out is not None:
            raise InputValueError("pass either out or in_place=True, not both")
        if not x.is_contiguous():
            raise InputValueError("in_place=True needs a contiguous x")
        if x.requires_grad and torch.is_grad_enabled():   # (autograd would not see the kernel's write)
            raise InputValueError("in_place=True on a tensor that requires grad; use out= or torch.no_grad()")
        out = x
    elif out is None:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    else:
        check_tensor(out, "out", (x.dtype,), device=x.device)
        if out.requires_grad and torch.is_grad_enabled():
            raise InputValueError("out requires grad; autograd cannot see a write into out= (as torch's out= ops)")
        if out.shape != x.shape or not out.is_contiguous():
            raise InputValueError(f"out must be contiguous with x's shape {tuple(x.shape)}")
        check_no_overlap(x, out, "x", "out")
    xf = x if x.is_contiguous() else x.contiguous()
    n = xf.numel()
    if n == 0:
        return out
    if not in_place:
        # a pure kernel: with TRITONCUB_AUTOTUNE=1 it runs under triton.autotune over the policy space
        policy.launch("adjacent_difference", _adjacent_difference_kernel, lambda m: (cdiv(n, m["TILE"]),),
                      xf, xf, out, n, device=x.device, autotune_key=("n",), OP=op, RIGHT=right, IN_PLACE=False)
        return out
    pol = policy.select("adjacent_difference", x.device)
    tile = pol["TILE"]
    nt = cdiv(n, tile)
    saved = torch.empty(nt, dtype=x.dtype, device=x.device)
    launch(_save_boundaries_kernel, (cdiv(nt, 1024),), xf, saved, n, nt, RIGHT=right, TILE=tile, BLOCK=1024)
    launch(_adjacent_difference_kernel, (nt,), xf, saved, out, n, OP=op, RIGHT=right, IN_PLACE=True,
           **pol.launch_kwargs())
    return out


def subtract_left(x: torch.Tensor, op=None, *, out: torch.Tensor | None = None, in_place: bool = False):
    """``out[0] = x[0]``, ``out[i] = op(x[i], x[i-1])`` over the flattened ``x``; returns ``out``."""
    return _run(x, op, False, out, in_place)


def subtract_right(x: torch.Tensor, op=None, *, out: torch.Tensor | None = None, in_place: bool = False):
    """``out[i] = op(x[i], x[i+1])``, ``out[n-1] = x[n-1]`` over the flattened ``x``; returns ``out``."""
    return _run(x, op, True, out, in_place)


# ----------------------------------------------------------------------------------------------
# torch.diff
# ----------------------------------------------------------------------------------------------

def _diff_once(x: torch.Tensor) -> torch.Tensor:
    """One difference along the last dimension of a contiguous tensor."""
    length = x.shape[-1]
    out = torch.empty((*x.shape[:-1], max(length - 1, 0)), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    rows = x.numel() // length
    total = out.numel()
    # whole tiles of one row where rows are at least as long as the largest tile (no per-item division)
    row_tiles = rows == 1 or length - 1 >= max(_POLICY.space["TILE"])
    if row_tiles:
        grid = lambda m: (rows * cdiv(length - 1, m["TILE"]),)   # noqa: E731
    else:
        grid = lambda m: (cdiv(total, m["TILE"]),)   # noqa: E731
    # 32-bit index math only while every index, into x too (total + rows items), stays below 2^31
    # (a tile past the end included)
    wide = x.numel() >= 2**31 - 2**16
    policy.launch("adjacent_difference", _diff_rows_kernel, grid, x, out, rows, length, device=x.device,
                  autotune_key=("rows", "length"), OP=difference, ROW_TILES=row_tiles, WIDE=wide)
    return out


def _diff_dim(x, n, dim, prepend=None, append=None) -> int:
    """The checks of ``diff``'s arguments (shared by the operator and its fake); returns ``dim`` >= 0."""
    if x.dim() == 0:
        raise InputValueError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise InputValueError(f"diff: order n must be non-negative but got {n}")
    d = wrap_dim(dim, x.dim())
    for t, nm in ((prepend, "prepend"), (append, "append")):
        if t is not None and (t.dim() != x.dim() or any(t.shape[i] != x.shape[i] for i in range(x.dim()) if i != d)):
            raise InputValueError(f"diff: {nm} of shape {tuple(t.shape)} does not match x of shape {tuple(x.shape)} "
                                  f"outside dim {d}")
        if t is not None and n > 0 and t.device != x.device:   # (n = 0: unused, as torch)
            raise InputValueError(f"diff: {nm} is on {t.device} but x is on {x.device}")
    return d


def _diff_impl(x, n, dim, prepend, append):
    check_tensor(x, "x", _DIFF_DTYPES)
    d = _diff_dim(x, n, dim, prepend, append)
    if n == 0:   # torch: the input itself (a copy); prepend and append are not used
        return x.clone()
    parts = []
    for t, nm in ((prepend, "prepend"), (x, "x"), (append, "append")):
        if t is None:
            continue
        check_tensor(t, nm, _DIFF_DTYPES, device=x.device)
        parts.append(t)
    if len(parts) > 1:
        x = torch.cat(parts, dim=d)
    y = x.movedim(d, -1).contiguous()
    complex_dtype = y.dtype if y.dtype.is_complex else None
    if complex_dtype is not None:   # rows of real parts and rows of imaginary parts, differenced alike
        # (clone: strides made standard also for empty tensors, which contiguous() leaves as they are)
        y = torch.view_as_real(y.resolve_conj().clone(memory_format=torch.contiguous_format)).transpose(-1, -2)
        y = y.clone(memory_format=torch.contiguous_format)
    applied = False
    for _ in range(n):
        if y.shape[-1] == 0:
            break
        y = _diff_once(y)
        applied = True
    if complex_dtype is not None:
        y = torch.view_as_complex(y.transpose(-1, -2).clone(memory_format=torch.contiguous_format))
    out = y.movedim(-1, d).contiguous()
    return out if applied or len(parts) > 1 else out.clone()  # never alias the input


@custom_op("tritoncub::diff", mutates_args=())
def diff(x: torch.Tensor, n: int = 1, dim: int = -1, prepend: torch.Tensor | None = None,
         append: torch.Tensor | None = None) -> torch.Tensor:
    """torch.diff: the ``n``-th forward difference along ``dim`` (``x[..., 1:] - x[..., :-1]``; xor for
    bool), after concatenating ``prepend``/``append`` along ``dim``; ``n = 0`` returns a copy of ``x``
    (prepend and append unused, as torch). Complex items: the real and imaginary parts are differenced
    apart (torch's result for finite items; an infinite or NaN part stays in its own part, where
    torch's complex subtraction, ``a - b * (1+0j)``, makes the other part NaN as well). Autograd to
    ``x``, ``prepend`` and ``append``."""
    return _diff_impl(x, n, dim, prepend, append)


@diff.register_fake
def _(x, n=1, dim=-1, prepend=None, append=None):
    d = _diff_dim(x, n, dim, prepend, append)
    for t, nm in ((prepend, "prepend"), (append, "append")):
        # (n = 0 too: a meta prepend next to a real x sends the call here, whose empty result would
        # come back as if it were x's copy; only a meta one: with n = 0 the real op takes a prepend on
        # another real device, as torch, so a compiled call must too)
        if t is not None and t.device != x.device and t.device.type == "meta":
            raise InputValueError(f"diff: {nm} is on {t.device} but x is on {x.device}")
    if n == 0:
        return torch.empty_like(x)   # (x.clone()'s strides)
    parts = [t for t in (prepend, x, append) if t is not None]
    length = sum(t.shape[d] for t in parts)
    shape = list(x.shape)
    shape[d] = max(length - n, 0)
    dtype = x.dtype
    for t in parts:
        dtype = torch.promote_types(dtype, t.dtype)   # (the concatenation's type, as torch.cat)
    return x.new_empty(shape, dtype=dtype)


def _diff_setup(ctx, inputs, output):
    x, n, dim, prepend, append = inputs
    ctx.n, ctx.dim = n, wrap_dim(dim, x.dim())
    # (length along dim, dtype) of each concatenated part, in order: prepend, x, append
    ctx.parts = [None if t is None else (t.shape[ctx.dim], t.dtype) for t in (prepend, x, append)]


def _diff_backward(ctx, grad):
    """The adjoint of each forward difference ``y = z[1:] - z[:-1]`` is ``[0, g] - [g, 0]`` along
    ``dim``; applied as many times as the forward differenced (it stops at length 0), then split into
    the gradients of ``prepend``, ``x`` and ``append``."""
    d, n = ctx.dim, ctx.n
    pre, xs, app = ctx.parts
    if n == 0:   # (a copy of x; prepend and append unused)
        return grad.to(xs[1]), None, None, None, None
    g = grad
    for _ in range(min(n, sum(p[0] for p in ctx.parts if p is not None))):
        shape = list(g.shape)
        shape[d] = 1
        zero = g.new_zeros(shape)
        g = torch.cat([zero, g], d) - torch.cat([g, zero], d)
    grads, start = [], 0
    for p, needed in zip(ctx.parts, (ctx.needs_input_grad[3], ctx.needs_input_grad[0], ctx.needs_input_grad[4])):
        if p is not None:
            grads.append(g.narrow(d, start, p[0]).to(p[1]) if needed else None)
            start += p[0]
        else:
            grads.append(None)
    g_pre, g_x, g_app = grads
    return g_x, None, None, g_pre, g_app


diff.register_autograd(_diff_backward, setup_context=_diff_setup)
