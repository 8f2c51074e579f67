"""Differential fuzzing of the torch operators (and the device functions that are not operators:
run-length encoding, partitions, reduce-by-key, unique-by-key, adjacent differences) against CPU
torch: random operator, dtype, shape, layout
(contiguous, transposed, strided) and data kind (``helpers.make_data``: NaN, +-0.0, +-inf, all-equal,
sorted, reversed, few-unique), sizes drawn near tile edges. Each case's result is compared as the
operator's docstring promises (exact where torch's result is exact, within a float tolerance for
accumulations; where the README documents a difference from torch, the check follows the README).

    python tests/fuzz.py [--cases N] [--seconds S] [--max-n N] [--seed S] [--repeat] [--only C1,C2] [--verbose]   # (GPU, or the interpreter)

``--repeat`` runs every case a second time on other data of the same operator, dtype, shape, layout and
data kind (the first run's inputs still allocated, so the second's lie elsewhere; outputs are new
allocations, which the caching allocator may place where the first run's were): the second call takes
the launches the first one remembered (replays), which must give the right answer for the new data
and buffers. A failure in a second run says so; its seed replays with ``--repeat``.

``tests/test_fuzz.py`` runs a few seeded cases in the suite; on a GPU this script runs thousands.
A failing case prints its seed, which replays it alone: ``--seed S --cases 1``.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
import traceback

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helpers import DATA_KINDS, DEVICE, FLOAT_DTYPES, INT_DTYPES, assert_equal, make_data  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402,F401  (the interpreter asserts it is in a jit function's globals)

import tritoncub  # noqa: E402,F401  (registers the operators)
from tritoncub._utils import interpreter_active  # noqa: E402
from tritoncub.device import adjacent_difference, partition, reduce_by_key, run_length_encode, select  # noqa: E402

OPS = torch.ops.tritoncub
SORTABLE = INT_DTYPES + [torch.uint8] + FLOAT_DTYPES
#: added to every data seed (``--repeat``'s second run of a case: the same draws, other data)
_DATA_SALT = [0]
#: during the first run of a ``--repeat`` pair: ``[the inputs made so far]`` (see ``_data``), else ``[None]``
_KEPT: list = [None]
EDGE = [1, 2, 31, 32, 33, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049,
        4095, 4096, 4097, 8191, 8192, 8193]


def _length(rng: random.Random, max_n: int) -> int:
    """A length: 0, a tile edge, or log-uniform up to ``max_n``."""
    r = rng.random()
    if r < 0.05:
        return 0
    if r < 0.55:
        return min(rng.choice(EDGE), max_n)
    return max(1, int(math.exp(rng.uniform(0, math.log(max_n)))))


def _shape(rng: random.Random, max_n: int) -> tuple:
    ndim = rng.choice([1, 1, 2, 2, 3])
    if ndim == 1:
        return (_length(rng, max_n),)
    last = _length(rng, max(1, max_n // 2))
    rest = max(1, max_n // max(last, 1))
    lead = [max(1, min(rest, _length(rng, 64)))]
    if ndim == 3:
        lead = [max(1, min(rest, rng.choice([1, 2, 3, 5]))), max(1, min(rest, _length(rng, 16)))]
    return tuple(lead) + (last,)


def _data_seed(rng: random.Random) -> int:
    return rng.randrange(2**31) + _DATA_SALT[0]


def _data(kind: str, n: int, dtype: torch.dtype, rng: random.Random) -> torch.Tensor:
    """``make_data`` from the case's next data seed; the first run of a ``--repeat`` pair keeps its
    inputs allocated (``_KEPT``) through the second, whose inputs so lie at other addresses."""
    t = make_data(kind, n, dtype, seed=_data_seed(rng))
    if _KEPT[0] is not None:
        _KEPT[0].append(t)
    return t


def _tensor(rng: random.Random, shape: tuple, dtype: torch.dtype, kind: str | None = None) -> torch.Tensor:
    """Data of ``shape`` in a random layout: contiguous, a transposed view, or every other column."""
    kind = kind or rng.choice(DATA_KINDS)
    n = math.prod(shape)
    layout = rng.choice(["contiguous", "contiguous", "transposed", "strided"]) if len(shape) > 1 else \
        rng.choice(["contiguous", "contiguous", "strided"])
    if layout == "transposed":
        return _data(kind, n, dtype, rng).reshape(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    if layout == "strided":
        return _data(kind, 2 * n, dtype, rng).reshape(shape[:-1] + (2 * shape[-1],))[..., ::2]
    return _data(kind, n, dtype, rng).reshape(shape)


def _cpu(t):
    return t.detach().cpu()


def _close(got, ref64, scale, eps, what):
    """Float results against a float64 reference: equal non-finite pattern (NaN where NaN, the same
    infinity), elsewhere within ``eps * scale`` (``scale``: the sum of magnitudes that went in)."""
    g = _cpu(got).to(torch.float64)
    r = ref64.to(torch.float64)
    assert g.shape == r.shape, f"{what}: shape {tuple(g.shape)} != {tuple(r.shape)}"
    fin = torch.isfinite(r)
    assert torch.equal(torch.isnan(g), torch.isnan(r)), f"{what}: NaN pattern differs"
    assert torch.equal(g[~fin & ~torch.isnan(r)], r[~fin & ~torch.isnan(r)]), f"{what}: infinities differ"
    err = (g[fin] - r[fin]).abs()
    tol = eps * scale.to(torch.float64)[fin] + 1e-30
    assert bool((err <= tol).all()), f"{what}: max error {float((err / tol).max()):.3g} x tolerance"


def _eps(dtype):
    return {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 2e-6, torch.float64: 1e-14}[dtype]


def _cumsum_wide(x: torch.Tensor, dim: int) -> torch.Tensor:
    """A running sum more precise than ``x``'s type: float64 for narrower floats, numpy's long double
    (64-bit mantissa on x86) for float64, whose own float64 cumsum errs as much as the one tested."""
    if x.dtype != torch.float64:
        return torch.cumsum(x.to(torch.float64), dim)
    return torch.from_numpy(np.cumsum(x.numpy().astype(np.longdouble), axis=dim).astype(np.float64))


def _gathered_equal(x, dim, idx, values, what):
    """``idx`` points at ``values`` along ``dim`` of ``x`` (NaN at NaN)."""
    got = torch.gather(_cpu(x), dim, _cpu(idx))
    assert_equal(got, _cpu(values), msg=f"{what}: indices do not point at the values")


# -- the operators' checks ----------------------------------------------------------------------------

def check_sort(rng, max_n):
    dtype = rng.choice(SORTABLE)
    x = _tensor(rng, _shape(rng, max_n), dtype)
    dim = rng.randrange(-x.dim(), x.dim())
    desc = rng.random() < 0.5
    rv, ri = torch.sort(_cpu(x), dim=dim, descending=desc, stable=True)
    if rng.random() < 0.25:
        assert_equal(_cpu(OPS.argsort(x, dim, desc)), ri, msg="argsort")
        return f"argsort {dtype} {tuple(x.shape)} dim={dim} desc={desc}"
    v, i = OPS.sort(x, dim, desc)
    assert_equal(_cpu(v), rv, signed_zero=True, msg="sort values")
    assert_equal(_cpu(i), ri, msg="sort indices")
    return f"sort {dtype} {tuple(x.shape)} dim={dim} desc={desc}"


def check_topk(rng, max_n):
    dtype = rng.choice([torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64,
                        torch.int16, torch.uint8])
    x = _tensor(rng, _shape(rng, max_n), dtype)
    dim = rng.randrange(-x.dim(), x.dim())
    size = x.shape[dim]
    k = rng.choice([0, 1, min(size, 8), min(size, rng.randint(0, 200)), size])
    k = min(k, size)
    largest = rng.random() < 0.7
    v, i = OPS.topk(x, k, dim, largest, True)
    rv, _ = torch.topk(_cpu(x), k, dim=dim, largest=largest, sorted=True)
    assert_equal(_cpu(v), rv, msg="topk values")
    _gathered_equal(x, dim, i, v, "topk")
    if k:   # (each index once: ties may pick other equal items than torch, never the same one twice)
        s = torch.sort(_cpu(i), dim=dim).values
        assert bool((torch.diff(s, dim=dim) > 0).all()), "topk: an index repeats"
    if torch.are_deterministic_algorithms_enabled() and x.dim():
        # (deterministic mode: every path keeps the lowest indices among equal values, a stable sort's)
        ri = torch.sort(_cpu(x), dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
        assert_equal(_cpu(i), ri, msg="topk indices in deterministic mode")
    return f"topk {dtype} {tuple(x.shape)} k={k} dim={dim} largest={largest}"


def _dims(rng, x):
    if x.dim() == 0 or rng.random() < 0.3:
        return None
    k = rng.randint(1, x.dim())
    return sorted(rng.sample(range(x.dim()), k))


def check_reduce(rng, max_n):
    op = rng.choice(["sum", "amax", "amin", "argmax", "argmin"])
    dtype = rng.choice(FLOAT_DTYPES + INT_DTYPES + [torch.uint8])
    x = _tensor(rng, _shape(rng, max_n), dtype)
    keepdim = rng.random() < 0.3
    if op in ("argmax", "argmin"):
        if x.numel() == 0:
            return "skip"
        dim = None if rng.random() < 0.3 else rng.randrange(x.dim())
        if dim is not None and x.shape[dim] == 0:
            return "skip"
        got = getattr(OPS, op)(x, dim, keepdim)
        ref = getattr(torch, op)(_cpu(x), dim=dim, keepdim=keepdim)
        assert_equal(_cpu(got), ref, msg=op)
        return f"{op} {dtype} {tuple(x.shape)} dim={dim}"
    dims = _dims(rng, x)
    if op in ("amax", "amin"):
        if x.numel() == 0 or (dims is not None and any(x.shape[d] == 0 for d in dims)):
            return "skip"
        got = getattr(OPS, op)(x, dims, keepdim)
        ref = getattr(torch, op)(_cpu(x), dim=dims if dims is not None else (), keepdim=keepdim)
        assert_equal(_cpu(got), ref, msg=op)
        return f"{op} {dtype} {tuple(x.shape)} dims={dims}"
    kw = dict(dim=dims, keepdim=keepdim)
    if rng.random() < 0.2:   # (a result dtype: the accumulation and the result in it, as torch)
        want = torch.float64 if dtype.is_floating_point else torch.int32
        got = OPS.sum(x, dims, keepdim, want)
        if want == torch.float64:
            ref = torch.from_numpy(np.asarray(_cpu(x).to(torch.float64).numpy().astype(np.longdouble).sum(
                axis=tuple(dims) if dims is not None else None, keepdims=keepdim)).astype(np.float64))
            scale = torch.sum(_cpu(x).to(torch.float64).abs().nan_to_num(0, 0, 0), **kw)
            _close(got, ref.reshape(got.shape), scale * 8 + ref.abs().nan_to_num(0, 0, 0).reshape(got.shape),
                   _eps(torch.float64), "sum dtype=float64")
        else:
            assert_equal(_cpu(got), torch.sum(_cpu(x), dtype=want, **kw), msg="sum dtype=int32")
        return f"sum {dtype} -> {want} {tuple(x.shape)} dims={dims}"
    got = OPS.sum(x, dims, keepdim)
    if not dtype.is_floating_point:
        assert_equal(_cpu(got), torch.sum(_cpu(x), **kw), msg="sum")
    else:
        assert got.dtype == dtype, f"sum dtype {got.dtype}"
        ref64 = torch.sum(_cpu(x).to(torch.float64), **kw)
        # (an fp16/bf16 result rounds once: the sum of magnitudes bounds the float32 accumulation's error
        # and the output's rounding is relative to the result; overflow of the output type is infinity)
        scale = torch.sum(_cpu(x).to(torch.float64).abs().nan_to_num(0, 0, 0), **kw)
        ref_out = ref64.to(dtype).to(torch.float64)
        acc = _eps(torch.float32) if dtype != torch.float64 else _eps(dtype)
        _close(got, ref_out, scale * acc * 4 / _eps(dtype) + ref64.abs().nan_to_num(0, 0, 0), _eps(dtype),
               "sum")
    return f"sum {dtype} {tuple(x.shape)} dims={dims}"


def check_scan(rng, max_n):
    op = rng.choice(["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
    dtypes = FLOAT_DTYPES + ([] if op == "logcumsumexp" else INT_DTYPES + [torch.uint8])
    dtype = rng.choice(dtypes)
    shape = _shape(rng, max_n)
    if op == "cumprod" and dtype.is_floating_point:
        # (factors near 1 keep long products finite; a few specials and zeros)
        x = _tensor(rng, shape, torch.float64, "random") / 2000 + 1
        x = x.to(dtype)
        if x.numel() and rng.random() < 0.5:
            x[tuple(rng.randrange(m) for m in x.shape)] = rng.choice([0.0, -0.0, math.nan, math.inf, -1.0])
    else:
        x = _tensor(rng, shape, dtype)
    dim = rng.randrange(-x.dim(), x.dim())
    desc = f"{op} {dtype} {tuple(x.shape)} dim={dim}"
    xc = _cpu(x)
    if op in ("cummax", "cummin"):
        v, i = getattr(OPS, op)(x, dim)
        rv, ri = getattr(torch, op)(xc, dim)
        assert_equal(_cpu(v), rv, msg=op)
        _gathered_equal(x, dim, i, v, op)
        if dtype.is_floating_point:   # (ties: the later index, as torch; NaN: the NaN's index)
            assert_equal(_cpu(i), ri, msg=f"{op} indices")
        return desc
    got = getattr(OPS, op)(x, dim)
    if not dtype.is_floating_point:
        assert_equal(_cpu(got), getattr(torch, op)(xc, dim), msg=op)
        return desc
    x64 = xc.to(torch.float64)
    if op == "cumsum":
        ref = _cumsum_wide(xc, dim).to(dtype).to(torch.float64)
        scale = torch.cumsum(x64.abs().nan_to_num(0, 0, 0), dim)
        _close(got, ref, scale * 8 + ref.abs().nan_to_num(0, 0, 0), _eps(dtype), op)
    elif op == "cumprod":
        ref = torch.cumprod(x64, dim).to(dtype).to(torch.float64)
        steps = torch.arange(1, x.shape[dim] + 1, dtype=torch.float64).reshape(
            [-1 if d == dim % x.dim() else 1 for d in range(x.dim())])
        # (once a slice's running product nears the end of the accumulator's range (float32 for the
        # narrower floats) it underflows to 0 or overflows to inf, in float32 as in torch's CUDA cumprod,
        # where the float64 reference does not: a later inf, NaN or 0 factor then gives NaN (0 * inf)
        # against the reference's inf or 0. Items of a slice from its first such factor after that
        # point on are not compared.)
        acc = torch.float64 if dtype == torch.float64 else torch.float32
        plain = torch.isfinite(x64) & (x64 != 0)
        lg = torch.cumsum(torch.where(plain, x64, 1.0).abs().log(), dim)
        edge = 24 * math.log(2)
        ill = (lg < math.log(torch.finfo(acc).tiny) + edge) | (lg > math.log(torch.finfo(acc).max) - edge)
        ill = torch.cummax(ill.to(torch.int8), dim).values.bool() & ~plain
        if ill.any():
            ill = torch.cummax(ill.to(torch.int8), dim).values.bool()
            got, ref = _cpu(got).to(torch.float64).masked_fill(ill, 0.0), ref.masked_fill(ill, 0.0)
        _close(got, ref, ref.abs().nan_to_num(0, 0, 0) * (steps + 1) * 2, _eps(dtype), op)
    else:
        ref = torch.logcumsumexp(x64, dim).to(dtype).to(torch.float64)
        # (absolute error ~ eps * log-magnitude; relative to the result for large ones)
        _close(got, ref, ref.abs().nan_to_num(0, 0, 0) * 4 + 16, _eps(dtype), op)
    return desc


def check_unique(rng, max_n):
    dtype = rng.choice(SORTABLE)
    x = _tensor(rng, _shape(rng, max_n), dtype, rng.choice(["few_unique", "random", "special", "equal", "sorted"]))
    consecutive = rng.random() < 0.5
    ri, rc = rng.random() < 0.5, rng.random() < 0.5
    xc = _cpu(x)
    if x.dim() > 1 and not dtype.is_floating_point and rng.random() < 0.3:
        # slices along a dim (integer keys: with NaN, CPU torch's row merging is its own; see the README)
        x = _tensor(rng, (x.shape[0], min(x.shape[-1], 6)) if x.dim() == 2 else x.shape[:2] + (2,), dtype,
                    "few_unique")
        d = rng.randrange(x.dim())
        name = "unique_consecutive" if consecutive else "unique"
        try:
            ref = getattr(torch, name)(_cpu(x), return_inverse=True, return_counts=True, dim=d)
        except RuntimeError as e:   # (e.g. an empty tensor whose dim d is not the empty one): ours refuses too
            want = str(e).splitlines()[0]
            try:
                getattr(OPS, name)(x, ri, rc, d) if consecutive else OPS.unique(x, True, ri, rc, d)
            except RuntimeError as ours:
                assert str(ours).splitlines()[0] == want, f"{name} dim: refused with {ours!r}, torch: {want!r}"
            else:
                raise AssertionError(f"{name} dim: torch refuses ({want!r}), ours did not")
            return f"{name} {dtype} {tuple(x.shape)} dim={d}: refused as torch refuses"
        got = getattr(OPS, name)(x, ri, rc, d) if consecutive else OPS.unique(x, True, ri, rc, d)
        assert_equal(_cpu(got[0]), ref[0], msg=f"{name} dim values")
        if ri:
            assert_equal(_cpu(got[1]), ref[1], msg=f"{name} dim inverse")
        if rc:
            assert_equal(_cpu(got[2]), ref[2], msg=f"{name} dim counts")
        return f"{name} {dtype} {tuple(x.shape)} dim={d} inverse={ri} counts={rc}"
    if consecutive:
        v, i, c = OPS.unique_consecutive(x, ri, rc)
        rv, rinv, rcnt = torch.unique_consecutive(xc.reshape(-1), return_inverse=True, return_counts=True)
        assert_equal(_cpu(v), rv, msg="unique_consecutive values")
        if ri:
            assert_equal(_cpu(i).reshape(-1), rinv, msg="unique_consecutive inverse")
        if rc:
            assert_equal(_cpu(c), rcnt, msg="unique_consecutive counts")
        return f"unique_consecutive {dtype} {tuple(x.shape)} inverse={ri} counts={rc}"
    v, i, c = OPS.unique(x, True, ri, rc)
    rv, rinv, rcnt = torch.unique(xc, sorted=True, return_inverse=True, return_counts=True)
    assert_equal(_cpu(v), rv, msg="unique values")   # (every NaN its own value, last)
    if ri:
        assert tuple(i.shape) == tuple(x.shape), "unique inverse shape"
        assert_equal(_cpu(v)[_cpu(i)], xc, msg="unique: values[inverse] != x")
    if rc:
        assert_equal(_cpu(c), rcnt, msg="unique counts")
    return f"unique {dtype} {tuple(x.shape)} inverse={ri} counts={rc}"


def check_select(rng, max_n):
    op = rng.choice(["masked_select", "nonzero", "diff"])
    dtype = rng.choice(SORTABLE + [torch.bool, torch.complex64])
    if dtype == torch.complex64:   # (pairs of float32 data: NaN, infinities, signed zeros in either part)
        pairs = _tensor(rng, _shape(rng, max_n // 2) + (2,), torch.float32)
        # (into fresh standard strides: contiguous() keeps a layout's strides where a dim is empty, which
        # view_as_complex refuses)
        x = torch.view_as_complex(torch.empty(pairs.shape, dtype=pairs.dtype, device=pairs.device).copy_(pairs))
        if x.dim() > 1 and rng.random() < 0.5:
            x = x.transpose(0, -1)
    else:
        x = _tensor(rng, _shape(rng, max_n), dtype)
    xc = _cpu(x)
    if op == "masked_select":
        density = rng.choice([0.0, 0.01, 0.5, 0.99, 1.0])
        mask = (torch.rand(x.shape) < density)
        if rng.random() < 0.2 and x.dim() > 1:   # (a mask that broadcasts)
            mask = mask[:1]
        got = OPS.masked_select(x, mask.to(x.device))
        assert_equal(_cpu(got), torch.masked_select(xc, mask), msg="masked_select")
        return f"masked_select {dtype} {tuple(x.shape)} mask {tuple(mask.shape)} density={density}"
    if op == "nonzero":
        assert_equal(_cpu(OPS.nonzero(x)), torch.nonzero(xc), msg="nonzero")
        return f"nonzero {dtype} {tuple(x.shape)}"
    if dtype == torch.bool or x.dim() == 0:
        return "skip"
    if dtype == torch.bfloat16 and interpreter_active():
        return "skip"   # (Triton 3.6's interpreter rounds fp32 -> bf16 toward zero; test_adjacent_difference
        # bounds that, the compiled kernels are checked exactly here)
    dim = rng.randrange(-x.dim(), x.dim())
    n = rng.choice([1, 1, 2, 3])
    got = OPS.diff(x, n, dim)
    if dtype.is_complex:   # (the README: parts differenced apart, where torch's complex subtraction
        # spreads an infinite or NaN part into the other part)
        ref = torch.complex(torch.diff(xc.real, n=n, dim=dim), torch.diff(xc.imag, n=n, dim=dim))
    else:
        ref = torch.diff(xc, n=n, dim=dim)
    assert_equal(_cpu(got), ref, msg="diff")
    return f"diff {dtype} {tuple(x.shape)} n={n} dim={dim}"


def check_histogram(rng, max_n):
    op = rng.choice(["histc", "bincount"])
    n = _length(rng, max_n)
    if op == "bincount":
        dtype = rng.choice([torch.int32, torch.int64, torch.uint8, torch.int16])
        hi = rng.choice([1, 7, 256, 5000])
        x = torch.randint(0, min(hi, torch.iinfo(dtype).max + 1), (n,), dtype=dtype)
        w = None
        if rng.random() < 0.4:
            w = torch.randn(n, dtype=rng.choice([torch.float32, torch.float64]))
        minlength = rng.choice([0, 0, 10, 300])
        got = OPS.bincount(x.to(DEVICE), None if w is None else w.to(DEVICE), minlength)
        ref = torch.bincount(x, w, minlength)
        if w is None or not ref.dtype.is_floating_point:
            assert_equal(_cpu(got), ref, msg="bincount")
        else:
            scale = torch.bincount(x, w.abs(), minlength).to(torch.float64)
            _close(got, ref.to(torch.float64), scale * 8 + 1e-300, _eps(ref.dtype), "bincount weights")
        return f"bincount {dtype} n={n} weights={w is not None} minlength={minlength}"
    dtype = rng.choice([torch.float32, torch.float64])
    # (samples on a grid of exact binary fractions and bounds that are powers of two: every bin edge is
    # exact, so no sample's bin depends on rounding order, and CPU torch is the reference)
    bins = rng.choice([1, 4, 16, 256, 1000, 4096])
    lo, hi = rng.choice([(0.0, 1.0), (-4.0, 4.0), (-1024.0, 1024.0)])
    x = (torch.randint(-64, 1088, (n,)).to(torch.float64) / 1024 * (hi - lo) + lo).to(dtype)
    if n and rng.random() < 0.3:
        x[torch.randint(0, n, (max(1, n // 10),))] = rng.choice([math.inf, -math.inf, lo, hi])
    got = OPS.histc(x.to(DEVICE), bins, lo, hi)
    ref = torch.histc(x.to(torch.float64), bins, lo, hi).to(dtype)
    assert_equal(_cpu(got), ref, msg="histc")
    return f"histc {dtype} n={n} bins={bins} range=({lo}, {hi})"


def check_segments(rng, max_n):
    op = rng.choice(["segment_reduce", "segmented_sort", "segmented_topk"])
    segs = rng.choice([1, 2, 7, 100, 1000])
    lengths = [rng.choice([0, 1, 2, 5, 31, 33, 128, 300, 1025, 5000]) if rng.random() < 0.5 else rng.randint(0, 64)
               for _ in range(segs)]
    while sum(lengths) > max_n:
        lengths = [m // 2 for m in lengths]
    offs = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()), dtype=torch.int64)
    n = int(offs[-1])
    if op == "segment_reduce":
        dtype = rng.choice([torch.float32, torch.float64, torch.float16, torch.bfloat16])
        red = rng.choice(["sum", "mean", "max", "min", "prod"])
        x = _data(rng.choice(["random", "special", "equal"]), n, dtype, rng)
        if red == "prod":
            x = (x.to(torch.float64).clamp(-3, 3).nan_to_num(1.0) / 20 + 1).to(dtype)
        got = OPS.segment_reduce(x, offs.to(DEVICE), red)
        ref = torch.segment_reduce(_cpu(x).to(torch.float64), red, offsets=offs)
        if red in ("max", "min"):
            assert_equal(_cpu(got), ref.to(dtype), msg="segment_reduce")
        else:
            mags = torch.segment_reduce(_cpu(x).to(torch.float64).abs().nan_to_num(0, 0, 0), "sum" if red != "prod"
                                        else "prod", offsets=offs)
            lens = (offs[1:] - offs[:-1]).clamp(min=1).to(torch.float64)
            scale = (mags / lens if red == "mean" else mags) * 8 * (lens if red == "prod" else 1)
            _close(got, ref.to(dtype).to(torch.float64), scale + ref.abs().nan_to_num(0, 0, 0), _eps(dtype),
                   "segment_reduce")
        return f"segment_reduce {red} {dtype} {segs} segments n={n}"
    dtype = rng.choice(SORTABLE)
    x = _data(rng.choice(DATA_KINDS), n, dtype, rng)
    xc = _cpu(x)
    if op == "segmented_sort":
        desc = rng.random() < 0.5
        got = _cpu(OPS.segmented_sort(x, offs.to(DEVICE), desc))
        for a, b in zip(offs[:-1].tolist(), offs[1:].tolist()):
            assert_equal(got[a:b], torch.sort(xc[a:b], descending=desc, stable=True).values, signed_zero=True,
                         msg=f"segmented_sort segment [{a}, {b})")
        return f"segmented_sort {dtype} {segs} segments n={n} desc={desc}"
    k = rng.choice([1, 4, 8, 100])
    largest = rng.random() < 0.7
    v, i = OPS.segmented_topk(x, offs.to(DEVICE), k, largest)
    v, i = _cpu(v), _cpu(i)
    for s, (a, b) in enumerate(zip(offs[:-1].tolist(), offs[1:].tolist())):
        kk = min(k, b - a)
        rv = torch.topk(xc[a:b], kk, largest=largest, sorted=True).values
        assert_equal(v[s, :kk], rv, msg=f"segmented_topk values, segment {s}")
        assert_equal(xc[i[s, :kk]], rv, msg=f"segmented_topk indices, segment {s}")
    return f"segmented_topk {dtype} {segs} segments n={n} k={k} largest={largest}"


def _ordered_bits(x: torch.Tensor) -> np.ndarray:
    """The radix sort's ordered bits (``tritoncub.thread.radix_traits``), written again on the host as
    uint64: unsigned keys as they are, signed ones with the sign bit flipped, floats with -0.0 as +0.0
    and every NaN as +qNaN, then negative ones inverted and the others with the sign bit set."""
    width = x.element_size() * 8
    raw = x.view({8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[width]).numpy()
    b = raw.astype(np.int64).view(np.uint64) & np.uint64((1 << width) - 1 if width < 64 else (1 << 64) - 1)
    sign = np.uint64(1 << (width - 1))
    ones = np.uint64((1 << width) - 1 if width < 64 else (1 << 64) - 1)
    if x.dtype.is_floating_point:
        b = np.where(b == sign, np.uint64(0), b)
        nan = _cpu(torch.isnan(x)).numpy()
        b = np.where(nan, np.uint64({16: 0x7E00, 32: 0x7FC00000, 64: 0x7FF8000000000000}[width]
                                    if x.dtype != torch.bfloat16 else 0x7FC0), b)
        return np.where(b & sign, ~b & ones, b | sign)
    if x.dtype == torch.uint8:
        return b
    return b ^ sign


def check_bit_range(rng, max_n):
    dtype = rng.choice([torch.uint8, torch.int16, torch.int32, torch.int64, torch.float32])
    n = _length(rng, max_n)
    x = _data(rng.choice(DATA_KINDS), n, dtype, rng)
    bits = dtype.itemsize * 8
    begin = rng.randrange(bits)
    end = rng.randint(begin + 1, bits)
    desc = rng.random() < 0.5
    pairs = rng.random() < 0.5
    vals = torch.randperm(n, dtype=torch.int64).to(DEVICE) if pairs else None
    if pairs:
        k, v = OPS.sort_pairs(x, vals, desc, begin, end)
    else:
        k = OPS.sort_keys(x, desc, begin, end)
    # reference: the stable order of the digit [begin, end) of the ordered bits, descending by the
    # complemented digit
    digit = (_ordered_bits(_cpu(x)) >> np.uint64(begin)) & np.uint64((1 << (end - begin)) - 1)
    order = torch.from_numpy(np.argsort(~digit if desc else digit, kind="stable"))
    assert_equal(_cpu(k), _cpu(x)[order], signed_zero=True, msg="sort keys by bit range")
    if pairs:
        assert_equal(_cpu(v), _cpu(vals)[order], msg="sort pairs values")
    return f"sort_{'pairs' if pairs else 'keys'} {dtype} n={n} bits [{begin}, {end}) desc={desc}"


@triton.jit
def _positive(x):
    return x > 0


@triton.jit
def _below_minus_one(x):
    return x < -1


@triton.jit
def _below_one(x):
    return x < 1


#: the predicates of the partition checks and their torch forms (x < -1 not for unsigned x: Triton
#: compares in a wider signed type, torch casts -1 to x's type)
_PREDICATES = [(_positive, lambda t: t > 0), (_below_minus_one, lambda t: t < -1), (_below_one, lambda t: t < 1)]
#: dtypes torch's CPU subtraction and comparisons take (the device functions take every numeric dtype)
_ARITH = INT_DTYPES + [torch.uint8] + FLOAT_DTYPES


def _runs_of(flat: torch.Tensor):
    """Run starts and lengths of equal consecutive items (``==``: every NaN its own run), as torch's."""
    _, counts = torch.unique_consecutive(flat, return_counts=True)
    return torch.cumsum(counts, 0) - counts, counts


def check_device_api(rng, max_n):
    """The device functions that are not torch operators (CUB's DeviceRunLengthEncode, DevicePartition,
    ReduceByKey, DeviceSelect::UniqueByKey, DeviceAdjacentDifference): outputs of ``n`` slots whose
    first ``num`` are valid, against references built from torch on the flattened input."""
    op = rng.choice(["encode", "non_trivial_runs", "partition", "reduce_by_key", "unique_by_key", "subtract"])
    dtype = rng.choice(_ARITH if op in ("partition", "subtract") else SORTABLE + [torch.bool])
    kinds = ["few_unique", "equal", "sorted", "special", "random"]
    x = _tensor(rng, _shape(rng, max_n), dtype, rng.choice(kinds))
    flat = _cpu(x).reshape(-1)
    n = flat.numel()
    what = f"{op} {dtype} {tuple(x.shape)}"
    if op in ("encode", "non_trivial_runs"):
        length_dtype = rng.choice([None, torch.int32, torch.int64])
        starts, counts = _runs_of(flat)
        if op == "encode":
            u, lengths, k = run_length_encode.encode(x, length_dtype=length_dtype)
            k = int(k)
            assert k == counts.numel(), f"encode: {k} runs, torch {counts.numel()}"
            assert_equal(_cpu(u)[:k], flat[starts], signed_zero=True, msg="encode values")
        else:
            offset_dtype = rng.choice([torch.int32, torch.int64])
            offsets, lengths, k = run_length_encode.non_trivial_runs(x, offset_dtype=offset_dtype,
                                                                     length_dtype=length_dtype)
            k = int(k)
            long_ = counts > 1
            starts, counts = starts[long_], counts[long_]
            assert k == counts.numel(), f"non_trivial_runs: {k} runs, torch {counts.numel()}"
            assert offsets.dtype == offset_dtype, "non_trivial_runs offset dtype"
            assert_equal(_cpu(offsets)[:k].long(), starts, msg="non_trivial_runs offsets")
        assert lengths.dtype == (length_dtype or torch.int32), f"{op} length dtype {lengths.dtype}"
        assert_equal(_cpu(lengths)[:k].long(), counts, msg=f"{op} lengths")
        return f"{what} length_dtype={length_dtype}"
    if op == "partition":
        values = None
        if rng.random() < 0.5:
            values = torch.randperm(n, dtype=torch.int64).to(rng.choice([torch.int64, torch.float32, torch.int16]))
        vc = values
        form = rng.choice(["flagged", "if", "three_way"])
        preds = _PREDICATES if dtype != torch.uint8 else [_PREDICATES[0], _PREDICATES[2]]
        if form == "flagged":
            flags = torch.rand(x.shape) < rng.choice([0.0, 0.3, 1.0])
            if rng.random() < 0.5:   # (numeric flags: nonzero selects)
                flags = flags.to(rng.choice([torch.int32, torch.uint8])) * rng.choice([1, 3])
            got = partition.flagged(x, flags.to(x.device), None if values is None else values.to(x.device))
            parts = [flags.reshape(-1) != 0]
        elif form == "if":
            pred, ref_pred = rng.choice(preds)
            got = partition.if_(x, pred, None if values is None else values.to(x.device))
            parts = [ref_pred(flat)]
        else:
            (p1, r1), (p2, r2) = rng.sample(preds, 2)
            got = partition.three_way(x, p1, p2, None if values is None else values.to(x.device))
            first = r1(flat)
            parts = [first, r2(flat) & ~first]
        rest = ~torch.stack(parts).any(0)
        order = torch.cat([torch.nonzero(m).reshape(-1) for m in parts + [rest]])
        num = _cpu(got[-1]).reshape(-1).tolist()
        assert num == [int(m.sum()) for m in parts], f"partition {form}: sizes {num}"
        assert_equal(_cpu(got[0]), flat[order], msg=f"partition {form}")
        if values is not None:
            assert_equal(_cpu(got[1]), vc[order], msg=f"partition {form} values")
        return f"{what} {form} values={values is not None}"
    if op == "subtract":
        if dtype == torch.bfloat16 and interpreter_active():
            return "skip"   # (the interpreter rounds fp32 -> bf16 toward zero; see check_select's diff)
        right = rng.random() < 0.5
        how = rng.choice(["new", "out", "in_place"])
        ref = flat.clone()
        if n > 1:
            if right:
                ref[:-1] = flat[:-1] - flat[1:]
            else:
                ref[1:] = flat[1:] - flat[:-1]
        fn = adjacent_difference.subtract_right if right else adjacent_difference.subtract_left
        if how == "in_place":
            x = x.contiguous()
            got = fn(x, in_place=True)
            assert got.data_ptr() == x.data_ptr() or n == 0, "in_place: not written into x"
        elif how == "out":
            out = torch.full((n,), 7, dtype=dtype, device=x.device).reshape(x.shape)
            got = fn(x, out=out)
            assert got.data_ptr() == out.data_ptr() or n == 0, "out: not written into out"
        else:
            got = fn(x)
        assert_equal(_cpu(got).reshape(-1), ref, msg=f"subtract_{'right' if right else 'left'} ({how})")
        return f"{what} right={right} {how}"
    vdtype = rng.choice([torch.float32, torch.float64, torch.float16, torch.int32, torch.int64, torch.uint8])
    vals = _tensor(rng, tuple(x.shape), vdtype, rng.choice(["random", "special"]))
    vflat = _cpu(vals).reshape(-1)
    starts, counts = _runs_of(flat)
    if op == "unique_by_key":
        ko, vo, k = select.unique_by_key(x, vals)
        k = int(k)
        assert k == counts.numel(), f"unique_by_key: {k} runs, torch {counts.numel()}"
        assert_equal(_cpu(ko)[:k], flat[starts], signed_zero=True, msg="unique_by_key keys")
        assert_equal(_cpu(vo)[:k], vflat[starts], signed_zero=True, msg="unique_by_key values")
        return f"{what} values {vdtype}"
    combine = rng.choice(["sum", "min", "max"])
    ko, vo, k = reduce_by_key.reduce_by_key(x, vals, combine)
    k = int(k)
    assert k == counts.numel(), f"reduce_by_key: {k} runs, torch {counts.numel()}"
    assert_equal(_cpu(ko)[:k], flat[starts], signed_zero=True, msg="reduce_by_key keys")
    run_of = torch.repeat_interleave(torch.arange(k), counts)
    got = _cpu(vo)[:k]
    if combine == "sum" and not vdtype.is_floating_point:   # (integer sums wrap, as CUB's)
        ref = torch.zeros(k, dtype=torch.int64).index_add_(0, run_of, vflat.to(torch.int64)).to(vdtype)
        assert_equal(got, ref, msg="reduce_by_key sum")
    elif combine == "sum":
        wide = vflat.to(torch.float64)
        ref = torch.zeros(k, dtype=torch.float64).index_add_(0, run_of, wide)
        mags = torch.zeros(k, dtype=torch.float64).index_add_(0, run_of, wide.abs().nan_to_num(0, 0, 0))
        # (the ±inf of a run; NaN where the run holds a NaN or both infinities)
        _close(got, ref.to(vdtype).to(torch.float64), mags * 4 + ref.abs().nan_to_num(0, 0, 0), _eps(vdtype),
               "reduce_by_key sum")
    else:
        red = np.minimum if combine == "min" else np.maximum   # (NaN propagates, as torch's amin/amax)
        ref = torch.from_numpy(red.reduceat(vflat.numpy(), starts.numpy())) if k else vflat[:0]
        assert_equal(got, ref, msg=f"reduce_by_key {combine}")
    return f"{what} values {vdtype} {combine}"


def check_grad(rng, max_n):
    """Gradients (float64 data, a random upstream gradient) against torch's autograd on the CPU."""
    op = rng.choice(["sum", "amax", "amin", "cumsum", "cumprod", "cummax", "logcumsumexp", "sort", "topk",
                     "masked_select", "diff", "segment_reduce"])
    kind = "few_unique" if op in ("amax", "amin", "cummax", "sort", "topk") and rng.random() < 0.5 else "random"
    x = _tensor(rng, _shape(rng, min(max_n, 1 << 16)), torch.float64, kind)
    if x.numel() == 0 or x.dim() == 0:
        return "skip"
    dim = rng.randrange(x.dim())
    mask = torch.rand(x.shape) < 0.5
    offs = torch.tensor(sorted([0, x.numel()] + [rng.randrange(x.numel() + 1) for _ in range(rng.randint(0, 6))]))
    red = rng.choice(["sum", "mean", "max", "min"])
    k = rng.randint(0, x.shape[dim])
    ours = {}   # (the indices of our topk call: another call may pick other items among ties)

    def apply(f, t):
        if op in ("sum", "amax", "amin"):
            return getattr(f, op)(t, [dim], False)
        if op in ("cumsum", "cumprod", "logcumsumexp"):
            return getattr(f, op)(t, dim)
        if op == "cummax":
            return f.cummax(t, dim)[0]
        if op == "sort":
            return f.sort(t, dim, True)[0] if f is OPS else torch.sort(t, dim=dim, descending=True, stable=True)[0]
        if op == "topk":
            v, i = f.topk(t, k, dim, True, True)
            if f is OPS:
                ours["topk"] = i
            return v
        if op == "masked_select":
            return f.masked_select(t, mask.to(t.device))
        if op == "diff":
            return f.diff(t, 1, dim)
        return (f.segment_reduce(t.reshape(-1), offs.to(t.device), red) if f is OPS
                else torch.segment_reduce(t.reshape(-1), red, offsets=offs))
    xa = x.detach().clone().requires_grad_(True)
    xr = _cpu(x).clone().requires_grad_(True)
    ya, yr = apply(OPS, xa), apply(torch, xr)
    up = torch.randn(yr.shape, dtype=torch.float64)
    (ga,) = torch.autograd.grad(ya, xa, up.to(xa.device), allow_unused=True)
    (gr,) = torch.autograd.grad(yr, xr, up, allow_unused=True)
    ga = torch.zeros_like(xr) if ga is None else _cpu(ga)
    gr = torch.zeros_like(xr) if gr is None else gr
    if op == "topk":   # (ties may select other equal items than torch's: the gradient goes to ours)
        gr = torch.zeros_like(xr).scatter_add(dim, _cpu(ours["topk"]).detach(), up)
    # (absolute for the sums and selections; relative to the gradient for products, whose long chains
    # reach 1e200 and round once per factor)
    scale = up.abs().sum() * (xr.detach().abs().max() + 1) ** 2 + 1
    scale = torch.full(gr.shape, float(scale), dtype=torch.float64) + gr.abs().nan_to_num(0, 0, 0) * 100 * x.shape[dim]
    _close(ga, gr, scale, 1e-12, f"{op} gradient")
    return f"grad of {op} float64 {tuple(x.shape)} dim={dim}"


CHECKS = [check_sort, check_topk, check_reduce, check_scan, check_unique, check_select, check_histogram,
          check_segments, check_bit_range, check_grad, check_device_api]


def run(cases: int, seconds: float, max_n: int, seed: int, out=print, verbose: bool = False,
        repeat: bool = False, only: list[str] | None = None) -> list[tuple[int, str, str]]:
    """Run ``cases`` cases (or until ``seconds`` pass) from ``seed`` on; returns the failures as
    ``(case seed, check, error)``. ``verbose``: each passing case's description too; ``repeat``: each
    case twice, the second time on other data (see the module's docstring); ``only``: the checks to
    run (names without ``check_``; a case seed whose check is another is passed over)."""
    failures = []
    t0 = time.time()
    done = skipped = 0
    for c in range(cases):
        if time.time() - t0 > seconds:
            break
        case_seed = seed + c
        check = CHECKS[case_seed % len(CHECKS)]
        if only and check.__name__[len("check_"):] not in only:
            continue
        # (one case in four of each check runs under torch.use_deterministic_algorithms(True): the ops'
        # deterministic paths, and no torch op inside ours that refuses that mode)
        deterministic = (case_seed // len(CHECKS)) % 4 == 3
        mode = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
        torch.use_deterministic_algorithms(deterministic)
        try:
            for salt in ((0, 1 << 31) if repeat else (0,)):
                _DATA_SALT[0] = salt
                if repeat and salt == 0:
                    _KEPT[0] = []
                rng = random.Random(case_seed)
                torch.manual_seed(case_seed + salt)
                what = check(rng, max_n)
        except Exception as e:   # noqa: BLE001 (every failure is reported with its seed)
            err = "".join(traceback.format_exception_only(type(e), e)).strip()
            failures.append((case_seed, check.__name__, err))
            second = " (the second run: replay with --repeat)" if _DATA_SALT[0] else ""
            second += " (deterministic mode)" if deterministic else ""
            out(f"FAIL seed={case_seed}{second} {check.__name__}: {err[:2000]}")
            continue
        finally:
            _DATA_SALT[0], _KEPT[0] = 0, None
            torch.use_deterministic_algorithms(mode[0], warn_only=mode[1])
        done += 1
        skipped += what == "skip"
        if verbose:
            out(f"ok seed={case_seed} {what}{' (deterministic mode)' if deterministic else ''}")
    out(f"{done + len(failures)} cases, {len(failures)} failed ({skipped} skipped: nothing to check), "
        f"{time.time() - t0:.0f} s")
    return failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10**9)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--max-n", type=int, default=1 << 20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", action="store_true", help="each case twice, on other data the second time")
    ap.add_argument("--only", default="", help="comma-separated checks to run, e.g. device_api,unique "
                    "(of: " + ", ".join(c.__name__[len("check_"):] for c in CHECKS) + ")")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    a = ap.parse_args(argv)
    only = [c for c in a.only.split(",") if c]
    unknown = set(only) - {c.__name__[len("check_"):] for c in CHECKS}
    if unknown:
        ap.error(f"unknown checks: {sorted(unknown)}")
    return 1 if run(a.cases, a.seconds, a.max_n, a.seed, verbose=a.verbose, repeat=a.repeat, only=only) else 0


if __name__ == "__main__":
    sys.exit(main())
