"""trunc_div_rn: trunc(a / d) with IEEE (round-to-nearest) division, against numpy's float32 division.

On a GPU the fast path (``a * (1/d)`` checked against the nearest integer, exact division only
where it could differ) is compiled and tested; the interpreter runs the plain ``div_rn`` path."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, assert_equal
from tritoncub._utils import compile_only
from tritoncub.thread.trunc_div import fast_ok, trunc_div_rn

FAST = DEVICE == "cuda" or compile_only()   # (the compile-check mode builds the fast path for the GPU target)
BLOCK = 1024


@triton.jit
def _trunc_div_kernel(a_ptr, d_ptr, out_ptr, n, FAST: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    a = tl.load(a_ptr + o, mask=m, other=0.0)
    d = tl.load(d_ptr)
    tl.store(out_ptr + o, trunc_div_rn(a, d, tl.math.div_rn(1.0, d), FAST), mask=m)


def _adversarial(d: np.float32, rng) -> np.ndarray:
    """Dividends at, just below and just above exact multiples of ``d`` (the quotients that round
    onto an integer), random ones, zero, and tiny ones; every quotient below 2^30."""
    k = np.concatenate([np.arange(0, 300), rng.integers(0, 1 << 24, 400), 2.0 ** np.arange(0, 30)]).astype(np.float32)
    at = (k * d).astype(np.float32)
    near = np.concatenate([at, np.nextafter(at, np.float32(np.inf)), np.nextafter(at, np.float32(0)),
                           np.nextafter(np.nextafter(at, np.float32(np.inf)), np.float32(np.inf))])
    rand = (rng.random(2000) * 1000 * d).astype(np.float32)
    tiny = np.array([0.0, 1e-45, 1e-38, d * 1e-7, d * (1 - 2 ** -24)], dtype=np.float32)
    a = np.concatenate([near, rand, tiny]).astype(np.float32)
    return a[np.abs(a.astype(np.float64) / np.float64(d)) < 2.0 ** 30]


@pytest.mark.parametrize("d", [1.0, 0.37, 1 / 3, 7.0, 1e-3, 3e5, 2.0 ** -99, 2.0 ** 99, 0.1 + 0.2, 65535.0])
def test_trunc_div_rn_matches_ieee_division(d):
    d = np.float32(d)
    assert fast_ok(float(d))
    rng = np.random.default_rng(0)
    a = _adversarial(d, rng)
    n = a.size
    a_t = torch.from_numpy(a).to(DEVICE)
    out = torch.full((n,), -7, dtype=torch.int32, device=DEVICE)   # poisoned
    _trunc_div_kernel[(triton.cdiv(n, BLOCK),)](a_t, torch.tensor([d], device=DEVICE), out, n, FAST=FAST,
                                                BLOCK=BLOCK, num_warps=4)
    with np.errstate(all="ignore"):
        ref = np.trunc(a / d).astype(np.int64)
    assert_equal(out.cpu().to(torch.int64), torch.from_numpy(ref))


def test_fast_ok_range():
    assert fast_ok(1.0) and fast_ok(-3.5) and fast_ok(2.0 ** 100)
    assert not fast_ok(0.0) and not fast_ok(2.0 ** 101) and not fast_ok(1e-38) and not fast_ok(float("inf"))
    assert not fast_ok(float("nan"))


@pytest.mark.parametrize("d", [0.37, -0.37, 1 / 3, -7.0, 3e5, -65535.0])
def test_trunc_div_rn_negative_quotients(d):
    """Negative dividends or divisors (quotients below 0): the fast path's closeness test takes |q| (it
    compared with a negative threshold, never divided exactly, and was one off near integers)."""
    d = np.float32(d)
    a = _adversarial(np.float32(abs(d)), np.random.default_rng(1))
    a = np.concatenate([-a, a]) if d > 0 else np.concatenate([a, -a])
    n = a.size
    out = torch.full((n,), -7, dtype=torch.int32, device=DEVICE)   # poisoned
    _trunc_div_kernel[(triton.cdiv(n, BLOCK),)](torch.from_numpy(a).to(DEVICE), torch.tensor([d], device=DEVICE),
                                                out, n, FAST=FAST, BLOCK=BLOCK, num_warps=4)
    with np.errstate(all="ignore"):
        ref = np.trunc(a / d).astype(np.int64)
    assert_equal(out.cpu().to(torch.int64), torch.from_numpy(ref))
