"""DeviceScan (tritoncub.device.scan) and its torch operators, against torch.

Under the interpreter a small policy is forced (64-item tiles, a 4-tile look-back window, rows of
up to 32 items in the rows kernel) so that a few hundred items cover several tiles, ragged ends,
multi-window look-backs and both kernels. On the GPU the tuned policy runs, and the tests marked
``gpu`` stress the look-back with large sizes and repeated runs (tiles then finish out of order).
"""
import contextlib
import math
import warnings

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import (DEVICE, FLOAT_DTYPES, UINT_DTYPES, assert_close, assert_equal, count_calls, deterministic_algorithms,
                     interpreter_replays, launch_values, limit_grid_y, make_data)
from tritoncub import policy
from tritoncub._utils import inline_ptx_ok, interpreter_active
from tritoncub.device import scan as S

SMALL = {"TILE_ITEMS": 64, "LOOKBACK_WINDOW": 4, "num_warps": 1, "ROWS_MAX_LEN": 32, "ROWS_TILE": 64}
TILE = 64


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("scan", SMALL):
            yield
    else:
        yield


SIZES = [1, 7, 33, TILE, TILE + 1, 4 * TILE + 21] if interpreter_active() else \
    [1, 33, 1000, 4097, 65536 + 7, 1 << 20]


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _argmax(a, ai, b, bi):
    # first index of the maximum: not commutative
    take_b = b > a
    return tl.where(take_b, b, a), tl.where(take_b, bi, ai)


def _ref_linrec(a, b, reverse=False):
    a, b = a.double().cpu(), b.double().cpu()
    if reverse:
        a, b = a.flip(0), b.flip(0)
    outa, outb = torch.empty_like(a), torch.empty_like(b)
    pa, pb = 1.0, 0.0
    for i in range(a.numel()):
        pa, pb = pa * a[i].item(), a[i].item() * pb + b[i].item()
        outa[i], outb[i] = pa, pb
    if reverse:
        outa, outb = outa.flip(0), outb.flip(0)
    return outa, outb


# ----------------------------------------------------------------------------------------------
# sums
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool])
def test_inclusive_sum_int_exact(n, dtype):
    x = make_data("special" if dtype != torch.bool else "random", n, dtype)
    assert_equal(S.inclusive_sum(x), torch.cumsum(x, 0))
    assert_equal(S.inclusive_sum(x, deterministic=True), torch.cumsum(x, 0))


@pytest.mark.parametrize("n", SIZES)
def test_sums_int32_variants(n):
    x = make_data("random", n, torch.int32)
    ref = torch.cumsum(x, 0)
    assert_equal(S.exclusive_sum(x), ref - x.long())
    assert_equal(S.inclusive_sum(x, reverse=True), torch.cumsum(x.flip(0), 0).flip(0))
    assert_equal(S.inclusive_sum(x, dtype=torch.int32), torch.cumsum(x, 0, dtype=torch.int32))
    out, total = S.inclusive_sum(x, return_total=True)
    assert_equal(out, ref)
    assert int(total) == int(ref[-1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [SIZES[-1]])
def test_inclusive_sum_float(dtype, n):
    x = make_data("random", n, dtype) / 100
    ref = torch.cumsum(x.double(), 0).to(dtype)
    tol = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(dtype, 1e-4)
    assert_close(S.inclusive_sum(x), ref, rtol=tol, atol=tol * 10)
    assert_close(S.inclusive_sum(x, deterministic=True), ref, rtol=tol, atol=tol * 10)


def test_deterministic_mode_from_torch_flag():
    x = make_data("random", SIZES[-1], torch.float32)
    a = S.inclusive_sum(x, deterministic=True)
    old = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        b = S.inclusive_sum(x)
        c = torch.ops.tritoncub.cumsum(x, 0)
    finally:
        torch.use_deterministic_algorithms(old)
    assert_equal(b, a, signed_zero=True)
    assert_equal(c, a, signed_zero=True)


def test_float_specials():
    x = make_data("special", SIZES[-1], torch.float32)
    assert_close(S.inclusive_sum(x), torch.cumsum(x.double(), 0).float(), rtol=1e-4, atol=1e-2)


# ----------------------------------------------------------------------------------------------
# generic operators, init, totals, by key
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence(reverse):
    n = SIZES[-2] if interpreter_active() else 5000
    a = torch.rand(n, device=DEVICE) * 0.5 + 0.5
    b = torch.randn(n, device=DEVICE)
    (ra, rb), (ta, tb) = S.inclusive_scan((a, b), S.combine_linear_recurrence, reverse=reverse,
                                          return_total=True)
    ea, eb = _ref_linrec(a, b, reverse)
    assert_close(rb, eb.float().to(DEVICE), rtol=1e-4, atol=1e-4)
    assert_close(ra, ea.float().to(DEVICE), rtol=1e-4, atol=1e-30)
    end = 0 if reverse else -1
    assert abs(float(tb) - float(eb[end])) < 1e-3


@pytest.mark.parametrize("n", [SIZES[2], SIZES[-1]])
def test_noncommutative_pair_and_init(n):
    v = make_data("few_unique", n, torch.int32)
    i = torch.arange(n, device=DEVICE, dtype=torch.int32)
    mv, mi = S.inclusive_scan((v, i), _argmax)
    rv = torch.cummax(v, 0).values
    assert_equal(mv, rv)
    # first index of the running max: where the (nondecreasing) running max first took its value
    rvn = rv.cpu().numpy()
    first = torch.from_numpy(np.searchsorted(rvn, rvn, side="left").astype(np.int32))
    assert_equal(mi.cpu(), first)
    # inclusive with init and exclusive with init
    init = -5
    out = S.inclusive_scan(v, _max, init)
    assert_equal(out, torch.clamp(rv, min=init))
    ex = S.exclusive_scan(v, _max, init)
    exp = torch.cat([torch.tensor([init], device=DEVICE, dtype=torch.int32), torch.clamp(rv[:-1], min=init)])
    assert_equal(ex, exp)
    ex_r = S.exclusive_scan(v, _max, init, reverse=True)
    exp_r = torch.cat([torch.tensor([init], device=DEVICE, dtype=torch.int32),
                       torch.clamp(torch.cummax(v.flip(0), 0).values[:-1], min=init)]).flip(0)
    assert_equal(ex_r, exp_r)


def _segmented_refs(keys, v):
    """Reference scans by key (numpy, vectorised): inclusive sum, running max, reverse sum."""
    k = keys.cpu().numpy()
    x = v.cpu().numpy().astype(np.int64)
    n = len(x)
    head = np.ones(n, dtype=bool)
    head[1:] = k[1:] != k[:-1]
    seg = np.cumsum(head) - 1
    cs = np.cumsum(x)
    start = np.flatnonzero(head)
    base = cs[start] - x[start]
    inc = cs - base[seg]
    big = np.int64(1) << 24                       # > twice the value range: segments never mix
    mx = np.maximum.accumulate(x + seg * big) - seg * big
    tail = np.ones(n, dtype=bool)
    tail[:-1] = head[1:]
    rcs = np.cumsum(x[::-1])[::-1]                # sum of x[j:]
    end = np.flatnonzero(tail)
    after = rcs[end] - x[end]                     # sum of the items after each segment
    rev = rcs - after[seg]
    return torch.from_numpy(inc), torch.from_numpy(mx), torch.from_numpy(rev)


def test_sum_by_key_of_bool_values_counts():
    # (as torch's cumsum of bool: int64 counts, not a running or in bool)
    keys = torch.tensor([0, 0, 0, 1, 1, 2], device=DEVICE)
    b = torch.tensor([True, True, False, True, True, True], device=DEVICE)
    inc, exc = S.inclusive_sum_by_key(keys, b), S.exclusive_sum_by_key(keys, b)
    assert inc.dtype == exc.dtype == torch.int64
    assert inc.cpu().tolist() == [1, 2, 2, 1, 2, 1] and exc.cpu().tolist() == [0, 1, 2, 0, 1, 0]


@pytest.mark.parametrize("n", [SIZES[3], SIZES[-1]])
def test_by_key(n):
    keys = torch.randint(0, 3, (n,), device=DEVICE)
    keys = keys.cumsum(0) // 5  # runs of varied length (some across tile boundaries)
    keys[::7] = -1
    v = make_data("random", n, torch.int32) // 1000
    r, rm, rr = _segmented_refs(keys, v)
    assert_equal(S.inclusive_sum_by_key(keys, v).cpu().long(), r)
    assert_equal(S.exclusive_sum_by_key(keys, v).cpu().long(), r - v.cpu().long())
    assert_equal(S.inclusive_scan_by_key(keys, v, _max).cpu().long(), rm)
    assert_equal(S.inclusive_sum_by_key(keys, v, reverse=True).cpu().long(), rr)
    # a non-zero init is combined into every item of every run (a run's head gets init itself)
    ex = r - v.cpu().long()
    assert_equal(S.exclusive_scan_by_key(keys, v, _add, 10).cpu().long(), ex + 10)
    heads = torch.ones(n, dtype=torch.bool)
    heads[1:] = keys.cpu()[1:] != keys.cpu()[:-1]
    exm = torch.where(heads, torch.full_like(rm, -10**9), torch.cat([rm[:1], rm[:-1]]))
    assert_equal(S.exclusive_scan_by_key(keys, v, _max, 7).cpu().long(), torch.maximum(exm, torch.tensor(7)))


@pytest.mark.parametrize("kind", ["specials", "all_equal"])
@pytest.mark.parametrize("deterministic", [None, True])
def test_by_key_float_keys_and_values(kind, deterministic):
    # float keys compare with != (a NaN key starts a run at every item, -0.0 and +0.0 share one); float
    # values (small integers: every sum exact, whatever the order); all-equal keys make one run over
    # every tile
    n = 4 * TILE + 21 if interpreter_active() else SIZES[-1]
    g = torch.Generator().manual_seed(11)
    if kind == "specials":
        pool = torch.tensor([float("nan"), -0.0, 0.0, 1.5, float("inf"), -float("inf")])
        keys = pool[torch.randint(0, 6, (n,), generator=g)].repeat_interleave(3)[:n]
    else:
        keys = torch.full((n,), 2.5)
    v = torch.randint(-50, 50, (n,), generator=g).to(torch.float32)
    r, rm, rr = _segmented_refs(keys, v.long())
    kd, vd = keys.to(DEVICE), v.to(DEVICE)
    assert_equal(S.inclusive_sum_by_key(kd, vd, deterministic=deterministic).cpu(), r.float())
    assert_equal(S.exclusive_sum_by_key(kd, vd, deterministic=deterministic).cpu(), (r - v.long()).float())
    assert_equal(S.inclusive_scan_by_key(kd, vd, _max, deterministic=deterministic).cpu(), rm.float())
    assert_equal(S.inclusive_sum_by_key(kd, vd, reverse=True, deterministic=deterministic).cpu(), rr.float())


# ----------------------------------------------------------------------------------------------
# batched along any dim, both kernels
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 2, 70), (2, 1, 21), (4, 40), (300, 2), (3, 1100)] if interpreter_active()
                         else [(7, 9, 3000), (65536, 128), (16, 1 << 16), (3, 100000), (4, 1 << 20)])
def test_batched_dims(shape):
    # (a short leading dim: the strided scan's steps as long as it, its programs many columns wide)
    x = make_data("random", math.prod(shape), torch.int32).reshape(shape) // 1000
    for dim in range(-len(shape), len(shape)):
        assert_equal(S.inclusive_sum(x, dim), torch.cumsum(x, dim))
        assert_equal(S.inclusive_sum(x, dim, reverse=True), torch.cumsum(x.flip(dim), dim).flip(dim))
        v, i = S.cummax(x, dim)
        rv, ri = torch.cummax(x, dim)
        assert_equal(v, rv)
        assert_equal(i, ri)
    xt = x.transpose(0, -1)  # non-contiguous input
    assert_equal(S.inclusive_sum(xt, 0), torch.cumsum(xt, 0))
    out, tot = S.inclusive_sum(x, -1, return_total=True)
    assert_equal(tot, x.long().sum(-1))


# ----------------------------------------------------------------------------------------------
# torch operators
# ----------------------------------------------------------------------------------------------

OPS = torch.ops.tritoncub


@pytest.mark.parametrize("dtype,out_dtype", [(torch.int32, None), (torch.int8, torch.int8), (torch.bool, None),
                                             (torch.float32, torch.float64), (torch.int64, torch.float32),
                                             (torch.float16, None), (torch.uint8, None)])
def test_cumsum_op_promotion(dtype, out_dtype):
    x = make_data("random", SIZES[-2], dtype)
    if dtype == torch.int64 and out_dtype is not None and out_dtype.is_floating_point:
        x = x % 1000  # full-range int64 sums cancel: float results would differ only by association
    got = OPS.cumsum(x, 0, out_dtype)
    ref = torch.cumsum(x, 0, dtype=out_dtype)
    assert got.dtype == ref.dtype
    if ref.dtype in (torch.float16, torch.bfloat16):
        # half results: compare with the exact (float64) prefix rounded once, not with torch's own
        # half cumsum, whose rounding differs by device (on the H100 it was off by up to 12 near a
        # zero crossing of a 2^16-item prefix, where ours accumulates in float32). Allowed: one ulp
        # of the result's magnitude plus a small float32-accumulation slack.
        exact = torch.cumsum(x.double().cpu(), 0).to(ref.dtype)
        assert_close(got.cpu(), exact, rtol=2.0 ** -9 if ref.dtype == torch.float16 else 2.0 ** -6, atol=5e-2)
    elif ref.dtype.is_floating_point:
        assert_close(got, ref, rtol=1e-5, atol=1e-1)
    else:
        assert_equal(got, ref)
    got_p = OPS.cumprod(x, 0, out_dtype)
    assert got_p.dtype == torch.cumprod(x, 0, dtype=out_dtype).dtype


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize("shape,dim", [((3, TILE + 5), -1), ((4 * TILE + 21,), 0), ((TILE + 1, 3), 0)])
def test_cumsum_cumprod_complex(dtype, shape, dim):
    # torch.cumsum of complex tensors: the real and imaginary parts as two float prefix sums;
    # torch.cumprod: one scan of (real, imaginary) pairs under the complex product
    p = torch.polar(1.0 + 0.01 * torch.randn(shape, dtype=dtype.to_real()), torch.randn(shape, dtype=dtype.to_real()))
    got = OPS.cumprod(p.to(DEVICE), dim)
    ref = torch.cumprod(p, dim)
    assert got.dtype == ref.dtype
    assert_close(torch.view_as_real(got).cpu(), torch.view_as_real(ref), rtol=1e-4, atol=1e-4)
    pg = p.to(DEVICE).detach().clone().requires_grad_(True)
    OPS.cumprod(pg, dim).abs().sum().backward()
    pr = p.detach().clone().requires_grad_(True)
    torch.cumprod(pr, dim).abs().sum().backward()
    assert_close(torch.view_as_real(pg.grad).cpu(), torch.view_as_real(pr.grad), rtol=1e-3, atol=1e-3)
    x = torch.randn(shape, dtype=dtype)
    x.view(-1)[3] = complex(1.0, math.nan)
    got = OPS.cumsum(x.to(DEVICE), dim)
    ref = torch.cumsum(x, dim)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert_close(torch.view_as_real(got).cpu(), torch.view_as_real(ref), rtol=1e-5, atol=1e-4)
    total_got = S.inclusive_sum(x.to(DEVICE), dim, return_total=True)[1]
    assert_close(torch.view_as_real(total_got).cpu(), torch.view_as_real(ref.select(dim, -1)), rtol=1e-5, atol=1e-4)
    xg = torch.randn(shape, dtype=dtype, device=DEVICE, requires_grad=True)   # (opcheck's comparisons take no NaN)
    torch.library.opcheck(OPS.cumsum.default, (xg, dim))
    # a conjugate view is resolved first; a real dtype scans the real parts (torch casts x to it first)
    assert_close(torch.view_as_real(OPS.cumsum(x.to(DEVICE).conj(), dim)).cpu(),
                 torch.view_as_real(torch.cumsum(x.conj(), dim)), rtol=1e-5, atol=1e-4)
    with warnings.catch_warnings():   # (torch's cast warns, once per process)
        warnings.simplefilter("ignore")
        got = OPS.cumsum(x.to(DEVICE), dim, dtype.to_real())
    assert_close(got.cpu(), torch.cumsum(x.real, dim), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_complex_scans_of_one_item(dtype):
    # a 0-d complex tensor is one item: the scan never runs across its (real, imaginary) pair
    z = torch.tensor(1 + 2j, dtype=dtype, device=DEVICE)
    for got, ref in ((OPS.cumsum(z, 0), z), (OPS.cumprod(z, -1), z), (S.inclusive_sum(z, 0, reverse=True), z),
                     (S.exclusive_sum(z, 0), torch.zeros((), dtype=dtype)),
                     (OPS._reverse_cumsum(z, 0), z)):
        assert got.shape == () and got.dtype == dtype
        assert_equal(torch.view_as_real(got).cpu(), torch.view_as_real(ref).cpu())


@pytest.mark.parametrize("dtype", [d for d in UINT_DTYPES if d != torch.uint8], ids=str)
@pytest.mark.parametrize("shape,dim", [((3, TILE + 5), -1), ((4 * TILE + 21,), 0), ((TILE + 1, 3), 0)])
def test_cumsum_cumprod_unsigned(dtype, shape, dim):
    # torch.cumsum / cumprod take uint16/32/64 and return int64 (uint64 items wrap): items past the
    # signed range must not sign-extend
    x = make_data("special", math.prod(shape), dtype).reshape(shape)
    wide = x.cpu().view(torch.int64) if dtype == getattr(torch, "uint64", None) else x.cpu().to(torch.int64)
    got = OPS.cumsum(x, dim)
    assert got.dtype == torch.int64
    assert_equal(got.cpu(), torch.cumsum(wide, dim))
    small = (x.cpu().view(torch.int64) if dtype == getattr(torch, "uint64", None) else x.cpu().to(torch.int64)) % 3
    xs = small.to(dtype).to(DEVICE) if dtype != getattr(torch, "uint64", None) else small.view(dtype).to(DEVICE)
    got = OPS.cumprod(xs, dim)
    assert got.dtype == torch.int64
    assert_equal(got.cpu(), torch.cumprod(small, dim))
    with pytest.raises(TypeError, match="supported dtypes"):   # (torch's CUDA cummax refuses them too)
        OPS.cummax(x, dim)


@pytest.mark.parametrize("kind", ["special", "equal", "few_unique", "sorted", "reversed"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.float16])
def test_cummax_cummin_ties_nan(kind, dtype):
    x = make_data(kind, SIZES[-1], dtype)
    for op, ref in ((OPS.cummax, torch.cummax), (OPS.cummin, torch.cummin)):
        v, i = op(x, 0)
        rv, ri = ref(x, 0)
        assert_equal(v, rv, signed_zero=False)
        assert_equal(i, ri)


def test_cumprod_logcumsumexp():
    n = SIZES[-1]
    x = (torch.rand(n, device=DEVICE, dtype=torch.float64) * 0.4 + 0.8)
    assert_close(OPS.cumprod(x, 0), torch.cumprod(x, 0), rtol=1e-10)
    y = make_data("random", n, torch.float32) / 10
    assert_close(OPS.logcumsumexp(y, 0), torch.logcumsumexp(y, 0), rtol=1e-5, atol=1e-5)
    s = torch.tensor([-math.inf, -math.inf, 0.0, math.inf, 1.0, math.inf, math.nan, 2.0], device=DEVICE)
    assert_equal(OPS.logcumsumexp(s, 0), torch.logcumsumexp(s, 0))
    s2 = torch.tensor([-math.inf, -math.inf, 3.0], device=DEVICE)
    assert_equal(OPS.logcumsumexp(s2, 0), torch.logcumsumexp(s2, 0))
    # a tiny second term keeps its bits (log1p, not log(1 + e))
    for dtype, t in ((torch.float32, -17.0), (torch.float64, -40.0)):
        s3 = torch.tensor([0.0, t], device=DEVICE, dtype=dtype)
        assert_close(OPS.logcumsumexp(s3, 0), torch.logcumsumexp(s3.cpu(), 0), rtol=1e-6, atol=0)
    with pytest.raises(TypeError):
        OPS.logcumsumexp(torch.arange(4, device=DEVICE), 0)


@pytest.mark.parametrize("shape", [(0,), (1,), (), (3, 0), (0, 4)])
def test_empty_and_one(shape):
    x = torch.ones(shape, device=DEVICE, dtype=torch.int32)
    for dim in ([0] if len(shape) <= 1 else [0, 1]):
        assert_equal(OPS.cumsum(x, dim), torch.cumsum(x, dim))
        assert_equal(OPS.cumprod(x, dim), torch.cumprod(x, dim))
        v, i = OPS.cummax(x, dim)
        rv, ri = torch.cummax(x, dim)
        assert_equal(v, rv)
        assert_equal(i, ri)
        xf = x.float()
        assert_equal(OPS.logcumsumexp(xf, dim), torch.logcumsumexp(xf, dim))


def test_bad_input():
    x = torch.ones(4, device=DEVICE)
    with pytest.raises(TypeError):
        S.inclusive_sum(torch.ones(4, device=DEVICE, dtype=torch.complex32))
    with pytest.raises(TypeError, match="supported dtypes"):
        OPS.logcumsumexp(torch.ones(4, device=DEVICE, dtype=torch.complex64), 0)
    with pytest.raises(TypeError, match="must be a @triton.jit function"):
        S.inclusive_scan(x, lambda a, b: a + b)
    with pytest.raises(TypeError, match="combine_fn must take 4 positional arguments"):
        S.inclusive_scan((x, x), _max)
    with pytest.raises(TypeError, match="combine_fn must take 2 positional arguments"):
        S.inclusive_scan(x, S.combine_linear_recurrence)
    with pytest.raises(TypeError, match="combine_fn must take 2 positional arguments"):
        S.inclusive_scan_by_key(torch.zeros(4, dtype=torch.int32, device=DEVICE), x, S.combine_linear_recurrence)
    # keys of a dtype the kernels cannot compare (fp8), a complex init, flags that are not bools
    with pytest.raises(TypeError, match="keys has dtype float8_e4m3fn"):
        S.inclusive_sum_by_key(torch.zeros(4, device=DEVICE).to(torch.float8_e4m3fn), x)
    with pytest.raises(TypeError, match="init 1j is complex"):
        S.inclusive_scan(x, S.combine_add, 1j)
    for kw in ({"reverse": 1}, {"return_total": 1}, {"deterministic": "yes"}):
        with pytest.raises(TypeError, match=f"{next(iter(kw))} must be a bool"):
            S.inclusive_sum(x, **kw)
    with pytest.raises(TypeError, match="reverse must be a bool"):
        S.inclusive_scan(x, S.combine_add, reverse=1)
    with pytest.raises(TypeError, match="deterministic must be a bool"):
        S.inclusive_sum_by_key(torch.zeros(4, dtype=torch.int32, device=DEVICE), x, deterministic=1)
    with pytest.raises(TypeError, match="reverse must be a bool"):   # (logcumsumexp's flags too)
        S.logcumsumexp(x, 0, reverse=1)
    with pytest.raises(IndexError):
        OPS.cumsum(x, 1)
    with pytest.raises(ValueError):
        S.exclusive_scan(x, _max, None)
    with pytest.raises(ValueError):
        S.inclusive_scan((x, torch.ones(5, device=DEVICE)), S.combine_linear_recurrence)
    with pytest.raises(ValueError):
        S.inclusive_scan((x, x, x), S.combine_linear_recurrence)
    with pytest.raises(TypeError):
        S.inclusive_sum("not a tensor")
    with pytest.raises(IndexError, match="Dimension out of range"):
        S.inclusive_sum(torch.tensor(1.0, device=DEVICE), dim=5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        S.inclusive_sum(x.view(2, 2), dim=2)
    with pytest.raises(TypeError, match="dim must be an int"):
        S.inclusive_sum(x.view(2, 2), dim=1.0)
    with pytest.raises(ValueError, match="needs an init"):
        S.exclusive_scan_by_key(torch.tensor([0, 1], device=DEVICE), x[:2], _add, None)
    with pytest.raises(ValueError, match="must be scalars"):
        S.exclusive_scan(x, _add, torch.tensor([1.0, 2.0], device=DEVICE))
    with pytest.raises(ValueError, match="overflow"):   # an init the (int32) accumulator cannot hold
        S.exclusive_scan(torch.ones(3, dtype=torch.int8, device=DEVICE), _add, 2**40)
    for op in (torch.ops.tritoncub.cumsum, torch.ops.tritoncub.cumprod):   # (torch refuses a bool result too)
        with pytest.raises(TypeError, match="bool is not supported"):
            op(torch.tensor([1, 0, 2], device=DEVICE), 0, torch.bool)
    # an init the int8 output cannot hold (the accumulator, int32, could: it once wrapped), or a fraction
    with pytest.raises(ValueError, match="does not fit int8"):
        S.inclusive_scan(torch.tensor([1, 2], dtype=torch.int8, device=DEVICE), _add, 300)
    with pytest.raises(ValueError, match="not an integer"):
        S.exclusive_scan(torch.tensor([1, 2], device=DEVICE), _add, 0.7)
    for bad in (5, -3):   # (torch's IndexError, before the shape is indexed)
        with pytest.raises(IndexError, match="Dimension out of range"):
            S.cummax(torch.ones(3, 2, device=DEVICE), bad)
    with pytest.raises(ValueError, match="lazily negated view"):   # (its memory holds the other sign)
        S.inclusive_sum(torch.tensor([1 + 2j, 3 - 1j], device=DEVICE).conj().imag)
    if interpreter_active():
        return
    with pytest.raises(ValueError):
        S.inclusive_sum(torch.ones(4))  # a CPU tensor without the interpreter


def test_autograd():
    x = torch.rand(2, 40, device=DEVICE, dtype=torch.float64) + 0.5
    for op, ref in ((OPS.cumsum, torch.cumsum), (OPS.cumprod, torch.cumprod),
                    (OPS.logcumsumexp, torch.logcumsumexp)):
        a = x.clone().requires_grad_(True)
        b = x.clone().requires_grad_(True)
        g = torch.randn_like(x)
        op(a, 1).backward(g)
        ref(b, 1).backward(g)
        assert_close(a.grad, b.grad, rtol=1e-8, atol=1e-8)
    z = x.clone()
    z[0, 5] = 0.0
    a = z.clone().requires_grad_(True)
    b = z.clone().requires_grad_(True)
    g = torch.randn_like(z)
    OPS.cumprod(a, 1).backward(g)
    torch.cumprod(b, 1).backward(g)
    assert_close(a.grad, b.grad, rtol=1e-8, atol=1e-8)
    for op, ref in ((OPS.cummax, torch.cummax), (OPS.cummin, torch.cummin)):
        a = x.clone().requires_grad_(True)
        b = x.clone().requires_grad_(True)
        g = torch.randn_like(x)
        op(a, 1)[0].backward(g)
        ref(b, 1)[0].backward(g)
        # both backwards scatter-add the gradient at the running extreme's index; on a GPU the adds to
        # one index land in any order (atomics), so the last bit may differ (seen on the H100)
        assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-14)


def test_higher_order_gradients():
    """Second derivatives as torch's: cumprod over zeros (once recomputed detached: the cumprod term of a
    second derivative was dropped) and logcumsumexp (its reverse scan had no gradient); a size-1 dim
    passes an inf item's gradient on (the quotient form gave NaN)."""
    z = torch.tensor([[2.0, 0.0, 3.0, 0.5, 1.5], [0.0, 1.0, 0.0, 2.0, 3.0]], device=DEVICE, dtype=torch.float64)
    a = z.clone().requires_grad_(True)
    b = z.clone().requires_grad_(True)
    seconds = []
    for t, op in ((a, OPS.cumprod), (b, torch.cumprod)):
        (g1,) = torch.autograd.grad(op(t, 1).sum() + (t ** 3).sum(), t, create_graph=True)
        seconds.append(torch.autograd.grad((g1 * torch.arange(5, device=DEVICE)).sum(), t)[0])
    assert_close(seconds[0], seconds[1], rtol=1e-10, atol=1e-10)
    assert torch.autograd.gradgradcheck(lambda t: OPS.cumprod(t, 1), (z.clone().requires_grad_(True),))
    # (rows longer than the scan's ROWS_MAX_LEN take its general path, shorter ones its rows path; under the
    # interpreter both with few items: gradgradcheck's cost grows with the items, ~7 s each there)
    for rows_max_len, shape in ((4, (1, 6)), (32, (1, 4))) if interpreter_active() else ((None, (2, 37)),):
        x = torch.randn(shape, device=DEVICE, dtype=torch.float64)
        with policy.override("scan", dict(SMALL, ROWS_MAX_LEN=rows_max_len)) if rows_max_len else \
                contextlib.nullcontext():
            assert torch.autograd.gradgradcheck(lambda t: OPS.logcumsumexp(t, 1), (x.requires_grad_(True),))
    for v in (float("inf"), float("nan"), 2.0):
        a = torch.tensor([[v]], device=DEVICE, requires_grad=True)
        b = torch.tensor([[v]], device=DEVICE, requires_grad=True)
        OPS.cumprod(a, 1).backward(torch.full_like(a, 3.0))
        torch.cumprod(b, 1).backward(torch.full_like(b, 3.0))
        assert_equal(a.grad, b.grad)


@triton.jit
def _nan_max(a, b):
    # the running maximum with NaN propagating (a later NaN wins): comparisons combined with | and &
    take_b = (b != b) | ((a == a) & (b > a))
    return tl.where(take_b, b, a)


@pytest.mark.parametrize("shape,dim", [((20,), 0), ((3, 20), 1), ((20, 3), 0), ((4 * TILE + 21,), 0)])
@pytest.mark.parametrize("exclusive", [False, True])
def test_init_with_boolean_combine(shape, dim, exclusive):
    """An init value with an operator that combines comparisons with | and & in every kernel (the rows
    and strided kernels combined a scalar init with a tile, which Triton's interpreter mis-typed)."""
    x = make_data("special", math.prod(shape), torch.float32).reshape(shape)
    ref = torch.cummax(x.cpu(), dim).values
    if exclusive:
        got = S.exclusive_scan(x, _nan_max, -math.inf, dim=dim)
        first = torch.full_like(ref.narrow(dim, 0, 1), -math.inf)
        ref = torch.cat([first, ref.narrow(dim, 0, shape[dim] - 1)], dim)
    else:
        got = S.inclusive_scan(x, _nan_max, -math.inf, dim=dim)
    assert_equal(got.cpu(), ref)


_SMALL = interpreter_active()
#: name: (shape, dim, reverse, deterministic, the kernel it runs): several tiles, programs or chunks of the
#: scan dim each (the interpreter's small test tiles, or the GPU's policy)
_LSE_LAYOUTS = {
    "1-D": ((4 * TILE + 21,) if _SMALL else (50_000,), 0, False, False, "_scan_single_pass_kernel"),
    "1-D reverse": ((4 * TILE + 21,) if _SMALL else (50_000,), 0, True, False, "_scan_single_pass_kernel"),
    "1-D reproducible": ((4 * TILE + 21,) if _SMALL else (50_000,), 0, False, True, "_scan_single_pass_kernel"),
    "rows": ((5, 20), 1, False, False, "_scan_rows_kernel"),
    "long rows": ((2, 2 * TILE + 9) if _SMALL else (2, 5000), 1, False, False, "_scan_single_pass_kernel"),
    # (an outer dim: enough columns that the strided kernel runs, a scan dim of several of its chunks)
    "strided": ((TILE // 2 - 2, 3, 2) if _SMALL else (300, 20_000), 0, False, False, "_scan_strided_kernel")}


def _lse_data(kind, shape, dtype):
    n = math.prod(shape)
    if kind == "tiny":   # one item of 0 then far smaller ones: log1p of a growing tiny sum, kept to its bits
        x = torch.full((n,), -30.0, dtype=torch.float64)
        x[0] = 0.0
    elif kind == "wide":   # maxima that jump by thousands, within and across tiles
        x = make_data("random", n, torch.float64).cpu() * 3000
    elif kind == "masked":   # -inf runs (a leading one across tiles, a third of the rest) and a late +inf, no NaN
        x = make_data("random", n, torch.float64).cpu() * 5
        x[torch.rand(n, dtype=torch.float64) < 1 / 3] = -math.inf
        x[:n // 3] = -math.inf   # (whole tiles of every kernel at the sizes the tests take)
        x[n - max(1, n // 50)] = math.inf
    elif kind == "patterned":   # per TILE items: ramps from -60 to 0, levels drifting by +-30, and steps
        i = torch.arange(n, dtype=torch.float64)
        ramp = (i % TILE) * (60.0 / TILE) - 60.0
        drift = (torch.rand(n // TILE + 1, dtype=torch.float64) * 60 - 30).cumsum(0)[(i // TILE).long()]
        step = torch.where((i // 97) % 2 == 0, 0.0, -40.0)
        pick = torch.randint(0, 3, (n,))
        x = torch.where(pick == 0, ramp + drift, torch.where(pick == 1, drift, step + drift))
        x = x + torch.rand(n, dtype=torch.float64)
    else:
        x = make_data(kind, n, torch.float32).cpu().double()
    return x.reshape(shape).to(dtype)


def _lse_reference(xr, dim, reverse):
    """torch's float64 logcumsumexp of ``xr`` along ``dim``, its finite non-zero items replaced by numpy's
    long-double scan rounded to float64: torch's own float64 result drifts by tens of units of rounding on
    data whose maxima change (ramps, drifting levels), more than the op under test may."""
    xs = xr.flip(dim) if reverse else xr
    ref = torch.logcumsumexp(xs, dim)
    with np.errstate(invalid="ignore"):   # (NaN and inf - inf: torch's items are kept there)
        long = np.logaddexp.accumulate(xs.numpy().astype(np.longdouble), axis=dim % max(xs.dim(), 1))
    long = torch.from_numpy(long.astype(np.float64))
    use = torch.isfinite(ref) & (ref != 0)
    ref = torch.where(use, long, ref)
    return ref.flip(dim) if reverse else ref


def _assert_lse(got, x, dim, reverse, row_sum=False):
    """``got`` is logcumsumexp of ``x`` (on any device) along ``dim``: NaN and infinities exactly where
    torch has them, zeros with torch's sign, finite items within a few units of the output's rounding
    (of the value, or of log(n) for sums of near-equal terms) of the long-double scan. ``row_sum``:
    the data is a tiny tail after one large item, a sum of n positive terms summed to its bits (within
    n - 1 units of rounding, plus the exp's and log1p's)."""
    dtype = x.dtype
    ref = _lse_reference(x.cpu().double(), dim, reverse).to(dtype).double()   # (the result in x's dtype)
    assert got.dtype == dtype and got.shape == x.shape
    g = got.cpu().double()
    assert torch.equal(g.isnan(), ref.isnan()), "NaN where torch has none, or none where it has"
    inf = ref.isinf()
    assert torch.equal(g[inf], ref[inf])
    fin = torch.isfinite(ref)
    g, r = g[fin], ref[fin]
    assert torch.isfinite(g).all()
    zero = (r == 0) & (g == 0)
    assert torch.equal(g[zero].signbit(), r[zero].signbit())
    eps = torch.finfo(dtype).eps
    n = x.shape[dim] if x.dim() else 1
    if row_sum:
        tol = (n + 4) * eps * r.abs()
    else:
        tol = 4 * eps * (r.abs() + math.log2(n) + 1)
    bad = (g - r).abs() > tol
    assert not bad.any(), f"{int(bad.sum())} items off; first got {g[bad][0].item()} expected {r[bad][0].item()}"


def _lse_kernel(kernel, dtype):
    """The kernel a layout of :data:`_LSE_LAYOUTS` runs for ``dtype``: on NVIDIA GPUs, the single pass is
    the warp-synchronous one."""
    if kernel == "_scan_single_pass_kernel" and inline_ptx_ok(torch.device(DEVICE)):
        return "_logcumsumexp_warp_sync_kernel"
    return kernel


@pytest.mark.parametrize("layout", list(_LSE_LAYOUTS))
@pytest.mark.parametrize("kind,dtype", [("special", torch.float32), ("masked", torch.float32), ("wide", torch.float32),
                                        ("tiny", torch.float32), ("sorted", torch.float32),
                                        ("reversed", torch.float32), ("equal", torch.float32),
                                        ("special", torch.float64), ("masked", torch.float64),
                                        ("tiny", torch.float64), ("patterned", torch.float64),
                                        ("patterned", torch.float32), ("special", torch.float16),
                                        ("wide", torch.bfloat16)], ids=str)
def test_logcumsumexp_pairs(layout, kind, dtype, monkeypatch):
    """logcumsumexp through the (m, t) pairs against a long-double scan, over several tiles, programs or
    chunks of each kernel (see :func:`_assert_lse`); a tiny tail is summed to its bits (log1p of the
    scaled sum, where 1 + t would round it away)."""
    shape, dim, reverse, det, kernel = _LSE_LAYOUTS[layout]
    x = _lse_data(kind, shape, dtype).to(DEVICE)
    launches = count_calls(monkeypatch, S, "launch")   # (a stand-in launch also turns replays off)
    got = S.logcumsumexp(x, dim, reverse=reverse, deterministic=det)
    names = [c[0].fn.__name__ if hasattr(c[0], "fn") else c[0].__name__ for c in launches]
    assert names == [_lse_kernel(kernel, dtype)]
    _assert_lse(got, x, dim, reverse, row_sum=kind == "tiny")


# logcumsumexp's single-pass engines: the portable kernel, and on NVIDIA GPUs the warp-synchronous one
# at several tile shapes, vector widths and look-back windows (a window narrower than the tiles of a
# row: tiles anchor on a predecessor's inclusive prefix, not only on the row's first), for float32 and
# float64 accumulators
LSE_ENGINES = [("f32-portable", {"WARP_SYNC": 0, "TILE_ITEMS": 2048, "LOOKBACK_WINDOW": 32, "num_warps": 4}),
               ("f64-portable", {"WARP_SYNC": 0, "TILE_ITEMS": 1024, "LOOKBACK_WINDOW": 32, "num_warps": 4})]
if not interpreter_active():
    LSE_ENGINES += [(f"f32-warp-sync-T{t}-w{w}-vec{v}-win{win}-sleep{sl}",
                     {"WARP_SYNC": 1, "TILE_ITEMS": t, "num_warps": w, "VEC": v, "LOOKBACK_WINDOW": win,
                      "LOOKBACK_SLEEP": sl})
                    for t, w, v, win, sl in ((2048, 4, 4, 128, 1), (2048, 4, 16, 32, 0), (1024, 4, 8, 32, 1),
                                             (4096, 8, 16, 512, 1), (4096, 4, 1, 64, 0), (256, 2, 4, 32, 1))]
    LSE_ENGINES += [(f"f64-warp-sync-T{t}-w{w}-vec{v}-win{win}-sleep{sl}",
                     {"WARP_SYNC": 1, "TILE_ITEMS": t, "num_warps": w, "VEC": v, "LOOKBACK_WINDOW": win,
                      "LOOKBACK_SLEEP": sl})
                    for t, w, v, win, sl in ((1024, 4, 4, 256, 0), (512, 2, 2, 32, 1), (2048, 8, 8, 64, 0))]


@pytest.mark.parametrize("name,cfg", LSE_ENGINES, ids=[e[0] for e in LSE_ENGINES])
@pytest.mark.parametrize("deterministic", [False, True])
def test_logcumsumexp_engines(name, cfg, deterministic, monkeypatch):
    """Every single-pass logcumsumexp engine on float32, float16 and bfloat16 items (float32 accumulators)
    or float64 ones: forward and reverse, batches of long rows (three rows of three tiles; two rows of
    more tiles than the window, so tiles anchor inside a later row), an input one item past an aligned
    address, specials (NaN, infinities, -inf runs over whole tiles), sizes with a ragged last tile, one
    tile, one item; bitwise repeatable where the engine promises it (the warp-synchronous one in both
    modes; two runs in a row, so a weak check). Every call launches the engine under test."""
    tile = cfg["TILE_ITEMS"] if not interpreter_active() else TILE
    f64 = name.startswith("f64")
    dtype = torch.float64 if f64 else torch.float32
    bucket = None
    if "portable" in name or not inline_ptx_ok(torch.device(DEVICE)):
        kernel = "_scan_single_pass_kernel"
    else:
        kernel = "_logcumsumexp_warp_sync_kernel"
    launches = count_calls(monkeypatch, S, "launch")   # (a stand-in launch also turns replays off)
    with contextlib.ExitStack() as stack:
        if not interpreter_active():   # (the interpreter keeps its small tiles)
            if inline_ptx_ok(torch.device(DEVICE)):
                bucket = "lse64" if f64 else "lse32"
            else:
                bucket = ("16B_costly" if f64 else "8B_costly") + ("_det" if deterministic else "")
            stack.enter_context(policy.override("scan", {**cfg, "ROWS_MAX_LEN": 8, "ROWS_TILE": 64, "MIN_TILES": 0},
                                                bucket=bucket))
        # (ROWS_MAX_LEN 8: x[1:] of the 17-item input stays on the single-pass engine)
        for n in ((37 * tile + 45, tile, 17) if not interpreter_active() else (5 * TILE + 3,)):
            for kind in ("random", "special", "masked"):
                x = (_lse_data(kind, (n,), dtype) if kind == "masked"
                     else make_data(kind, n, torch.float32).to(dtype) * 8).to(DEVICE)
                for reverse in (False, True):
                    got = S.logcumsumexp(x, 0, reverse=reverse, deterministic=deterministic)
                    _assert_lse(got, x, 0, reverse)
                    if deterministic or "portable" not in name:
                        again = S.logcumsumexp(x, 0, reverse=reverse, deterministic=deterministic)
                        assert_equal(again, got, signed_zero=True)
            if n > 1:   # one item past an aligned address (no vector loads)
                for reverse in (False, True):
                    _assert_lse(S.logcumsumexp(x[1:], 0, reverse=reverse, deterministic=deterministic), x[1:], 0,
                                reverse)
            for half in (() if f64 else (torch.float16, torch.bfloat16)):
                h = (make_data("random", n, torch.float32) * 4).to(half).to(DEVICE)
                for reverse in (False, True):
                    _assert_lse(S.logcumsumexp(h, 0, reverse=reverse, deterministic=deterministic), h, 0, reverse)
        window = cfg["LOOKBACK_WINDOW"] if not interpreter_active() else SMALL["LOOKBACK_WINDOW"]
        anchor = max(window, 32) if not interpreter_active() else window   # (the windows the kernels read)
        for r, length in ((3, 2 * tile + 5), (2, (anchor + 3) * tile + 45)):
            rows = (make_data("random", r * length, torch.float32).to(dtype) * 8).reshape(r, -1).to(DEVICE)
            for reverse in (False, True):
                _assert_lse(S.logcumsumexp(rows, 1, reverse=reverse, deterministic=deterministic), rows, 1, reverse)
        if bucket is not None:
            assert policy.override_hits("scan", bucket) > 0
    names = {c[0].fn.__name__ if hasattr(c[0], "fn") else c[0].__name__ for c in launches}
    assert names == {kernel}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", [((), 0), ((1,), 0), ((7,), -1), ((TILE + 1,), 0), ((3, 20), 1), ((20, 3), 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_logcumsumexp_first_item_signed_zero(dtype, shape, dim, reverse):
    """logcumsumexp's first item is log(exp(x[0])) as in torch: -0.0 gives +0.0 (it was copied through);
    a 0-d x is copied, as torch does."""
    x = torch.full(shape, -math.inf, dtype=dtype)
    if x.dim():
        x.select(dim, -1 if reverse else 0).fill_(-0.0)
    else:
        x.fill_(-0.0)
    x = x.to(DEVICE)
    got = S.logcumsumexp(x, dim, reverse=reverse)
    ref = torch.logcumsumexp(x.cpu().flip(dim) if reverse else x.cpu(), dim)
    assert_equal(got.cpu(), ref.flip(dim) if reverse else ref, signed_zero=True)
    if not reverse:
        assert_equal(OPS.logcumsumexp(x, dim).cpu(), ref, signed_zero=True)


@pytest.mark.parametrize("dtype,sum_dtype,total_dtype", [(torch.int8, torch.int8, torch.int32),
                                                         (torch.float16, None, torch.float32),
                                                         (torch.bool, None, torch.int64)], ids=str)
def test_total_dtype(dtype, sum_dtype, total_dtype):
    """Totals come in the carried dtype, as the docstrings say: not wrapped or rounded to x's dtype."""
    x = torch.full((TILE + 5,), 100 if dtype == torch.int8 else 1, dtype=dtype, device=DEVICE)
    exact = x.double().sum()
    out, total = S.inclusive_sum(x, dtype=sum_dtype, return_total=True)
    assert total.dtype == total_dtype and float(total) == float(exact)
    _, total = S.inclusive_scan(x, _add, return_total=True)
    assert total.dtype == S._widen(dtype) and float(total) == float(exact)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"])
def test_autograd_0d(name):
    """A 0-d input's gradient as torch's (cumprod's backward indexed the shape of a 0-d tensor)."""
    a = torch.tensor(1.5, device=DEVICE, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(1.5, device=DEVICE, dtype=torch.float64, requires_grad=True)
    out, ref = getattr(OPS, name)(a, 0), getattr(torch, name)(b, 0)
    out, ref = (out[0], ref[0]) if isinstance(ref, tuple) else (out, ref)
    (ga,) = torch.autograd.grad(out, a, torch.tensor(3.0, dtype=torch.float64, device=DEVICE))
    (gb,) = torch.autograd.grad(ref, b, torch.tensor(3.0, dtype=torch.float64))
    assert_close(ga, gb.to(ga.device), rtol=1e-12, atol=0)


def test_cumprod_backward_on_meta_tensors():
    """cumprod's backward on meta tensors gives a meta gradient of x's shape (it looked for zeros on the
    host, which a meta tensor cannot answer)."""
    x = torch.randn(3, 4, device="meta", dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(OPS.cumprod(x, 1).sum(), x)
    assert g.device.type == "meta" and g.shape == x.shape and g.dtype == x.dtype


def _cumprod_rows_with_zeros(dtype):
    """Rows with and without zeros, an inf or NaN next to a 0 (CPU), and an upstream gradient."""
    x = torch.tensor([[0.0, 2.0, 3.0, 0.0, 5.0], [1.0, 0.0, 0.0, 2.0, 3.0], [2.0, 3.0, 4.0, 5.0, 0.5],
                      [1.0, 2.0, 3.0, 4.0, 0.0], [math.inf, 0.0, 2.0, 3.0, 1.0], [2.0, 0.0, math.nan, 3.0, 1.0]],
                     dtype=torch.float64).to(dtype)
    if dtype.is_complex:
        x = x * (1 + 0.5j)
    g = torch.randn(x.shape, dtype=dtype)
    return x, g


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_cumprod_backward_compiled(dtype):
    """cumprod's backward traced by torch.compile (fullgraph, fake tensors: no looking for zeros on the
    host) gives torch's gradient, rows with and without zeros, an inf or NaN next to a 0 included."""
    x, g = _cumprod_rows_with_zeros(dtype)
    torch._dynamo.reset()
    step = torch.compile(lambda t, dim: OPS.cumprod(t, dim), fullgraph=True, backend="aot_eager")
    for dim, xx, gg in ((1, x, g), (0, x.t().contiguous(), g.t().contiguous())):
        a = xx.to(DEVICE).requires_grad_(True)
        b = xx.clone().requires_grad_(True)
        (got,) = torch.autograd.grad(step(a, dim), a, gg.to(DEVICE))
        (ref,) = torch.autograd.grad(torch.cumprod(b, dim), b, gg)
        got, ref = (torch.view_as_real(got), torch.view_as_real(ref)) if dtype.is_complex else (got, ref)
        assert_close(got.cpu(), ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_cumprod_backward_deterministic_mode(dtype, monkeypatch):
    """cumprod's backward of rows with zeros under torch.use_deterministic_algorithms(True): this
    module's scans (torch's formula runs torch.cumsum, which refuses that mode for CUDA floats), torch's
    gradient, rows with and without zeros, an inf or NaN next to a 0 included; a recorded backward
    (create_graph) keeps torch's formula."""
    x, g = _cumprod_rows_with_zeros(dtype)
    ours = count_calls(monkeypatch, S, "_cumprod_grad_with_zeros")
    for dim, xx, gg in ((1, x, g), (0, x.t().contiguous(), g.t().contiguous())):
        a = xx.to(DEVICE).requires_grad_(True)
        b = xx.clone().requires_grad_(True)
        with deterministic_algorithms():
            (got,) = torch.autograd.grad(OPS.cumprod(a, dim), a, gg.to(DEVICE))
        (ref,) = torch.autograd.grad(torch.cumprod(b, dim), b, gg)
        got, ref = (torch.view_as_real(got), torch.view_as_real(ref)) if dtype.is_complex else (got, ref)
        assert_close(got.cpu(), ref, rtol=1e-10, atol=1e-10)
    assert len(ours) == 2


def test_opcheck():
    x = torch.randn(2, 36, device=DEVICE, dtype=torch.float64)
    xi = torch.randint(-5, 5, (2, 36), device=DEVICE, dtype=torch.int32)
    cases = [(OPS.cumsum.default, (x, 1)), (OPS.cumsum.default, (xi, 0, torch.int64)),
             (OPS.cumprod.default, (x, 1)), (OPS.cummax.default, (x, 1)), (OPS.cummin.default, (xi, 0)),
             (OPS.logcumsumexp.default, (x, -1))]
    if len(UINT_DTYPES) > 1:
        cases += [(OPS.cumsum.default, (xi.abs().to(UINT_DTYPES[-1]), 1)), (OPS.cumprod.default, (xi.abs().to(UINT_DTYPES[-1]), 0))]
    xt = torch.randn(36, 2, device=DEVICE, dtype=torch.float64).t()   # non-contiguous: contiguous results
    cases += [(OPS.cumsum.default, (xt, 0)), (OPS.cummax.default, (xt, 1)), (OPS.logcumsumexp.default, (xt, 0))]
    for op, args in cases:
        torch.library.opcheck(op, args)
    with torch._subclasses.fake_tensor.FakeTensorMode():   # the fakes refuse what the ops refuse
        with pytest.raises(TypeError, match="supported dtypes"):
            OPS.logcumsumexp(torch.empty(4, dtype=torch.complex64), 0)
        with pytest.raises(TypeError, match="supported dtypes"):
            OPS.cumsum(torch.empty(4, dtype=torch.complex32), 0)


def test_logcumsumexp_refusal_names_float_dtypes():
    """logcumsumexp takes floating dtypes only: its refusal of complex, integer and bool inputs names
    those, in the operator, the device function and the fake (it listed bool and the integers, which
    it refuses too, as supported)."""
    floats = "supported dtypes are float16, bfloat16, float32, float64$"
    for dtype in (torch.complex64, torch.int32, torch.bool):
        x = torch.zeros(4, device=DEVICE, dtype=dtype)
        with pytest.raises(TypeError, match=floats):
            OPS.logcumsumexp(x, 0)
        with pytest.raises(TypeError, match=floats):
            S.logcumsumexp(x, 0)
        with torch._subclasses.fake_tensor.FakeTensorMode():
            with pytest.raises(TypeError, match=floats):
                OPS.logcumsumexp(torch.empty(4, dtype=dtype), 0)
            with pytest.raises(TypeError, match=floats):   # (the reverse operator, logcumsumexp's gradient)
                OPS._reverse_logcumsumexp(torch.empty(4, dtype=dtype), 0)


def test_strided_scan_outer_batches(monkeypatch):
    """Scans along a middle dim launch the strided kernel with the outer index on grid axis 1, in
    batches (CUDA takes at most 65535 there): forced to 2 per launch here."""
    grids = limit_grid_y(monkeypatch, S, 2)
    x = make_data("random", 5 * 70 * 3, torch.float32).view(5, 70, 3)
    # (against a float64 reference: fp32 sums of up to 70 terms in any order differ from it by at
    # most 70 * 2^-24 of the sum of the terms' magnitudes; a fixed atol failed on unlucky draws)
    bound = 70 * 2.0 ** -24 * float(x.abs().sum(1).max())
    assert_close(OPS.cumsum(x, 1), torch.cumsum(x.cpu().double(), 1).float(), rtol=0, atol=bound)
    ci, ri = OPS.cummax(x, 1)[1], torch.cummax(x.cpu(), 1)[1]
    assert_equal(ci, ri)
    assert any(len(g) == 2 and g[1] == 1 for g in grids)   # (the 5 outer indices went out as 2 + 2 + 1)


# the single-pass sum engines: the portable kernel, and on NVIDIA GPUs the warp-synchronous one at
# several tile shapes (2 .. 64 items per thread), vector widths and look-back windows
SUM_ENGINES = [("portable", {"WARP_SYNC": 0, "TILE_ITEMS": 2048, "LOOKBACK_WINDOW": 32, "num_warps": 4})]
if not interpreter_active():
    SUM_ENGINES += [(f"warp-sync-T{t}-w{w}-vec{v}-win{win}-sleep{sl}-anchored{a}",
                     {"WARP_SYNC": 1, "TILE_ITEMS": t, "num_warps": w, "VEC": v, "LOOKBACK_WINDOW": win,
                      "LOOKBACK_SLEEP": sl, "ANCHORED": a})
                    for t, w, v, win, sl, a in ((2048, 4, 4, 32, 1, 0), (1024, 16, 1, 64, 0, 0),
                                                (4096, 8, 4, 128, 1, 1), (8192, 4, 4, 256, 1, 0),
                                                (8192, 4, 1, 32, 0, 1), (4096, 2, 4, 512, 1, 1),
                                                (4096, 4, 4, 64, 1, 1))]


@pytest.mark.parametrize("name,cfg", SUM_ENGINES, ids=[e[0] for e in SUM_ENGINES])
@pytest.mark.parametrize("deterministic", [False, True])
def test_sum_engines(name, cfg, deterministic):
    """Every single-pass sum engine on every form of sum it runs: float32 (against a float64 cumsum,
    and bitwise repeatable when reproducible), float16, exact int32 and int64 accumulation, float64,
    exclusive sums, totals, a batch of long rows; sizes with a ragged last tile, one tile, one item."""
    tile = cfg["TILE_ITEMS"] if not interpreter_active() else TILE
    with policy.override("scan", {**cfg, "ROWS_MAX_LEN": 16, "ROWS_TILE": 64, "MIN_TILES": 0}
                         if not interpreter_active() else {}):
        for n in ((37 * tile + 45, tile, 1) if not interpreter_active() else (5 * TILE + 3,)):
            x = make_data("random", n, torch.float32) / 64
            ref = torch.cumsum(x.double(), 0)
            out, total = S.inclusive_sum(x, deterministic=deterministic, return_total=True)
            assert_close(out, ref.float(), rtol=1e-4, atol=1e-3)
            assert_close(total, ref[-1].float(), rtol=1e-4, atol=1e-3)
            assert_close(S.exclusive_sum(x, deterministic=deterministic), (ref - x.double()).float(),
                         rtol=1e-4, atol=1e-3)
            if deterministic:
                assert_equal(S.inclusive_sum(x, deterministic=True), out, signed_zero=True)
            if n > 1:   # an input one item past an aligned address (no vector loads)
                assert_close(S.inclusive_sum(x[1:], deterministic=deterministic),
                             torch.cumsum(x[1:].double(), 0).float(), rtol=1e-4, atol=1e-3)
            h = (make_data("random", n, torch.float32) / 64).half()   # (sums far from the float16 range)
            assert_close(S.inclusive_sum(h, deterministic=deterministic), torch.cumsum(h.double(), 0).half(),
                         rtol=2e-2, atol=0.5)
            xi = make_data("random", n, torch.int32) // 4
            assert_equal(S.inclusive_sum(xi, dtype=torch.int32, deterministic=deterministic),
                         torch.cumsum(xi, 0, dtype=torch.int32))
            assert_equal(S.exclusive_sum(xi, dtype=torch.int32, deterministic=deterministic),
                         torch.cumsum(xi, 0, dtype=torch.int32) - xi)
            # 64-bit accumulators: torch's int32 -> int64 promotion, float64
            wide = make_data("random", n, torch.int32)
            assert_equal(S.inclusive_sum(wide, deterministic=deterministic), torch.cumsum(wide, 0))
            assert_equal(S.exclusive_sum(wide, deterministic=deterministic), torch.cumsum(wide, 0) - wide.long())
            d = x.double()
            assert_close(S.inclusive_sum(d, deterministic=deterministic), torch.cumsum(d, 0), rtol=1e-9, atol=1e-9)
        rows = make_data("random", 3 * (2 * tile + 5), torch.float32).reshape(3, -1) / 64
        assert_close(S.inclusive_sum(rows, deterministic=deterministic), torch.cumsum(rows.double(), 1).float(),
                     rtol=1e-4, atol=1e-3)


def test_short_rows_repeated_calls():
    """Repeated sums of short rows of one shape (on the GPU the second call on takes the remembered
    launch of the rows kernel): fresh data every call, inclusive and exclusive, an input one item
    past an aligned address, and a policy override in between (a different config: no stale launch)."""
    rows, cols = (5, 33) if interpreter_active() else (300, 128)
    for rep in range(3):
        x = make_data("random", rows * cols, torch.int32).reshape(rows, cols)
        assert_equal(S.inclusive_sum(x), torch.cumsum(x, 1))
        assert_equal(S.exclusive_sum(x), torch.cumsum(x, 1) - x.long())
        assert_equal(torch.ops.tritoncub.cumsum(x, -1), torch.cumsum(x, -1))
        f = make_data("random", rows * cols + 1, torch.float32)[1:].reshape(rows, cols)
        assert_close(S.inclusive_sum(f), torch.cumsum(f.double(), 1).float(), rtol=1e-4, atol=1e-3)
        if rep == 1:
            with policy.override("scan", {"ROWS_TILE": 256, "ROWS_MAX_LEN": 256, "ROWS_WARPS": 1}):
                assert_equal(S.inclusive_sum(x), torch.cumsum(x, 1))


def test_sum_signed_zero_and_specials():
    """Sums of -0.0 are -0.0, as IEEE addition gives (the single pass pads and seeds with -0.0, the
    exact identity; torch's CPU cumsum starts from +0.0 and gives +0.0), and NaN and infinities
    propagate as in torch."""
    n = SIZES[-1]
    z = torch.full((n,), -0.0, device=DEVICE)
    assert_equal(S.inclusive_sum(z), z, signed_zero=True)
    assert_equal(S.inclusive_sum(z, deterministic=True), z, signed_zero=True)
    assert_equal(OPS.cumsum(z, 0), z, signed_zero=True)   # (the operator too, as the README notes)
    x = torch.ones(n, device=DEVICE)
    x[n // 3] = math.inf
    x[2 * n // 3] = -math.inf
    ref = torch.cumsum(x, 0)
    assert_equal(S.inclusive_sum(x), ref)
    assert_equal(S.exclusive_sum(x), torch.cat([torch.zeros(1, device=DEVICE), ref[:-1]]))


@pytest.mark.parametrize("cfg", [{"TILE_ITEMS": 128, "LOOKBACK_WINDOW": 16, "num_warps": 4},
                                 {"TILE_ITEMS": 256, "LOOKBACK_WINDOW": 32, "num_warps": 8}]
                         if interpreter_active() else
                         [dict(TILE_ITEMS=t, LOOKBACK_WINDOW=w, num_warps=nw)
                          for t, w, nw in ((2048, 16, 4), (8192, 64, 16), (16384, 128, 8))])
def test_policy_configs(cfg):
    """Every config of the space (a sample under the interpreter) gives exact integer sums and
    correct pair scans."""
    n = 5 * cfg["TILE_ITEMS"] + 17
    x = make_data("random", n, torch.int32)
    with policy.override("scan", {**cfg, "ROWS_MAX_LEN": 16, "ROWS_TILE": 64, "MIN_TILES": 0}):
        assert_equal(S.inclusive_sum(x), torch.cumsum(x, 0))
        assert_equal(S.inclusive_sum(x, deterministic=True), torch.cumsum(x, 0))
        v, i = S.cummax(x, 0)
        rv, ri = torch.cummax(x, 0)
        assert_equal(v, rv)
        assert_equal(i, ri)


@pytest.mark.parametrize("deterministic", [False, True])
def test_min_tiles_rule(deterministic, monkeypatch):
    """The single-pass tile is the smallest power of two, at least 512 items, that splits the input (every
    row of a batch) into at most MIN_TILES tiles, never more than TILE_ITEMS: products (the single-pass kernel),
    sums and logcumsumexp (on NVIDIA GPUs their warp-synchronous kernels) of ragged sizes and a batch of two
    rows against torch, with the tile every launch used (the floor, the cap, rounding up); MIN_TILES 0 keeps
    TILE_ITEMS."""
    tiles = launch_values(monkeypatch, S, "_scan_single_pass_kernel", "TILE_ITEMS")
    items = launch_values(monkeypatch, S, "_scan_warp_sync_kernel", "ITEMS")
    lse_items = launch_values(monkeypatch, S, "_logcumsumexp_warp_sync_kernel", "ITEMS")
    warps = 4
    for min_tiles, shape, tile in ((2, (600,), 512), (4, (600,), 512), (2, (1500,), 1024), (2, (5000,), 4096),
                                   (2, (10000,), 4096), (0, (1500,), 4096), (3, (3000,), 1024),
                                   (3, (2, 3000), 2048)):
        x = 1 + (make_data("random", math.prod(shape), torch.float32).view(shape) - 0.5) / 512
        xi = make_data("random", math.prod(shape), torch.int32).view(shape)
        del tiles[:], items[:], lse_items[:]
        with policy.override("scan", {"TILE_ITEMS": 4096, "MIN_TILES": min_tiles, "ROWS_MAX_LEN": 16, "ROWS_TILE": 64,
                                      "LOOKBACK_WINDOW": 8, "num_warps": warps}):
            assert_close(S.cumprod(x, -1, deterministic=deterministic), torch.cumprod(x.double(), -1).float(),
                         rtol=1e-4, atol=1e-5)
            assert_equal(S.inclusive_sum(xi, dim=-1, deterministic=deterministic), torch.cumsum(xi, -1))
            _assert_lse(S.logcumsumexp(x, -1, deterministic=deterministic), x, -1, False)
        used = tiles + [i * 32 * warps for i in items + lse_items]
        assert len(used) == 3 and all(t == tile for t in used), (min_tiles, shape, tile, tiles, items, lse_items)


@pytest.mark.parametrize("dtype,det,bucket", [(torch.float32, False, "8B_costly"), (torch.bfloat16, False, "8B_costly"),
                                              (torch.float64, False, "16B_costly"), (torch.float32, True, "8B_costly_det"),
                                              (torch.float64, True, "16B_costly_det")], ids=str)
def test_logcumsumexp_costly_bucket(dtype, det, bucket):
    """logcumsumexp scans (m, t) pairs and asks for the costly operators' tiles (in either mode; on NVIDIA
    GPUs for their warp-synchronous kernel's, lse32 / lse64, in both), and gives torch's results through
    them; the other scans keep the plain buckets."""
    x = make_data("random", 3 * 64 + 5, dtype)
    if inline_ptx_ok(torch.device(DEVICE)):
        bucket = "lse64" if dtype == torch.float64 else "lse32"
    with policy.trace() as calls:
        got = S.logcumsumexp(x, 0, deterministic=det)
    assert {b for op, b in calls if op == "scan"} == {bucket}
    assert_close(got, torch.logcumsumexp(x.double(), 0).to(dtype), rtol=1e-2 if dtype == torch.bfloat16 else 1e-5,
                 atol=1e-5)
    with policy.trace() as calls:
        S.cumprod(x, 0, deterministic=det)
    assert calls and not any("_costly" in b for _, b in calls)


_REPLAY_CASES = {
    "cumsum": (lambda x: S.inclusive_sum(x, -1), lambda x: torch.cumsum(x.double(), -1)),
    "cumprod": (lambda x: S.cumprod(x, -1), lambda x: torch.cumprod(x.double(), -1)),
    "logcumsumexp": (lambda x: S.logcumsumexp(x, -1), lambda x: torch.logcumsumexp(x.double(), -1)),
    "cummax": (lambda x: S.cummax(x, -1), lambda x: torch.cummax(x, -1)),
    "user max": (lambda x: S.inclusive_scan(x, _max, dim=-1), lambda x: torch.cummax(x, -1)[0]),
}


def _replay_data(name, n):
    x = make_data("random", n, torch.float32)
    return torch.sigmoid(x) + 0.5 if name == "cumprod" else x   # (products of factors in (0.5, 1.5): finite)


def _check_replay_case(name, got, x):
    ref = _REPLAY_CASES[name][1](x)
    if name == "cummax":
        assert_equal(got[0], ref[0])
        assert_equal(got[1], ref[1])
    elif name == "cumsum":   # (float32 sums of 2^16 items of size ~100: errors scale with the sum of |x|)
        scale = torch.cumsum(x.double().abs(), -1)
        assert bool(((got.double() - ref).abs() <= 1e-5 * scale + 1e-3).all())
    elif name in ("cumprod", "logcumsumexp"):
        assert_close(got.double(), ref, rtol=1e-4, atol=1e-5)
    else:
        assert_equal(got, ref)


@pytest.mark.parametrize("name", list(_REPLAY_CASES))
@pytest.mark.parametrize("shape", [(3 * TILE + 5,), (5, 21)] if interpreter_active() else [(65536 + 7,), (300, 1000)],
                         ids=str)
def test_replayed_scans(monkeypatch, name, shape):
    """A repeated scan replays its remembered launches (single pass with its zeroed scratch, or the rows
    kernel) on new outputs: fresh data each call, an unaligned input (another key), every result
    checked, earlier results intact; a policy change plans afresh; inside a caller's recording of
    launches nothing is replayed (the caller's record would miss the launches)."""
    from tritoncub import _launch
    if name == "cumsum" and len(shape) == 2 and DEVICE == "cuda":
        pytest.skip("sums of short rows on a GPU repeat through _sum's own remembered launch")
    if DEVICE == "cuda":
        S._SCAN_REPLAYS.clear()
        replays = count_calls(monkeypatch, S, "replay")
    else:
        replays = interpreter_replays(monkeypatch, S, ("_SCAN_REPLAYS",))
    ours = _REPLAY_CASES[name][0]
    n = math.prod(shape)
    results = []
    for rep in range(4):
        base = _replay_data(name, n + 1)
        x = (base[1:] if rep == 1 else base[:-1]).view(shape)   # rep 1: not 16-byte aligned
        results.append((x, ours(x)))
    for x, got in results:
        _check_replay_case(name, got, x)
    assert len(replays) == 2, replays   # (reps 2 and 3 replay rep 0's launches)
    # another policy: recorded again, then replayed under it
    cfg = {**SMALL, "TILE_ITEMS": 128, "ROWS_MAX_LEN": 16} if interpreter_active() else {"TILE_ITEMS": 2048}
    with policy.override("scan", cfg):
        for _ in range(2):
            x = _replay_data(name, n).view(shape)
            _check_replay_case(name, ours(x), x)
    assert len(replays) == 3
    # under a caller's recording: launched (and so recorded by the caller), never replayed
    with _launch.record_launches() as rec:
        x = _replay_data(name, n).view(shape)
        got = ours(x)
    _check_replay_case(name, got, x)
    assert len(replays) == 3 and len(rec) >= 1
