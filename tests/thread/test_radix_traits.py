"""Radix key traits: ordered bits sort like torch.sort, invert exactly, and digits are extracted."""
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, DEVICE, make_data
from tritoncub.thread.radix_traits import (KEY_DTYPES, extract_digit, from_ordered_bits, is_special_float,
                                           key_bits, to_ordered_bits, to_ordered_bits_noting_changes)

DTYPES = [torch.bool] + ALL_DTYPES
_UBITS = {8: torch.uint8, 16: getattr(torch, "uint16", None), 32: getattr(torch, "uint32", None),
          64: getattr(torch, "uint64", None)}


@triton.jit
def _traits_kernel(x_ptr, b_ptr, y_ptr, d_ptr, n, shift, DESC: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    b = to_ordered_bits(x, DESC)
    tl.store(b_ptr + o, b, mask=m)
    tl.store(y_ptr + o, from_ordered_bits(b, x.dtype, DESC), mask=m)
    tl.store(d_ptr + o, extract_digit(b, shift, 3), mask=m)


def _as_int(b: torch.Tensor) -> list[int]:
    """Unsigned bit patterns as Python ints (exact for 64 bits)."""
    if b.dtype == _UBITS[64]:
        return [v & (2**64 - 1) for v in b.view(torch.int64).tolist()]
    return [int(v) for v in b.to(torch.int64).tolist()]


def _torch_order(x: torch.Tensor, desc: bool) -> torch.Tensor:
    # a proxy torch can sort on the CPU for the unsigned types it lacks kernels for
    if x.dtype in (_UBITS[16], _UBITS[32]):
        x = x.to(torch.int64)
    elif x.dtype == _UBITS[64]:
        x = x.view(torch.int64) ^ (-2**63)
    return torch.sort(x, descending=desc, stable=True).indices


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("desc", [False, True])
def test_order_matches_torch_and_roundtrip(dtype, desc):
    if dtype not in KEY_DTYPES:
        pytest.skip("dtype missing in this torch")
    kinds = ["random", "special", "few_unique"]
    x = torch.cat([make_data(k, 40, dtype, device="cpu") for k in kinds]).to(DEVICE)
    n = x.numel()
    width = key_bits(dtype)
    b = torch.empty(n, dtype=_UBITS[width], device=DEVICE)
    y = torch.empty_like(x)
    d = torch.empty(n, dtype=torch.int32, device=DEVICE)
    _traits_kernel[(1,)](x, b, y, d, n, 2, DESC=desc, BLOCK=128)
    ints = _as_int(b.cpu())
    order = sorted(range(n), key=lambda i: ints[i])  # Python's sort is stable
    assert order == _torch_order(x.cpu(), desc).tolist()
    assert [(v >> 2) & 7 for v in ints] == d.cpu().tolist()
    xc, yc = x.cpu(), y.cpu()
    if dtype.is_floating_point:
        nan = torch.isnan(xc)
        assert torch.isnan(yc[nan]).all()
        # -0.0 comes back as +0.0 (canonicalised): compare values, then signs of the rest
        assert torch.equal(yc[~nan], xc[~nan])
        nz = (~nan) & (xc != 0)
        assert torch.equal(torch.signbit(yc[nz]), torch.signbit(xc[nz]))
        assert not torch.signbit(yc[(~nan) & (xc == 0)]).any()
    else:
        assert torch.equal(yc, xc)


def test_float_specials_order():
    x = torch.tensor([float("nan"), 1.0, -float("inf"), -0.0, float("inf"), 0.0, -1.0, -float("nan")],
                     dtype=torch.float32, device=DEVICE)
    b = torch.empty(8, dtype=_UBITS[32], device=DEVICE)
    y = torch.empty_like(x)
    d = torch.empty(8, dtype=torch.int32, device=DEVICE)
    _traits_kernel[(1,)](x, b, y, d, 8, 0, DESC=False, BLOCK=8)
    ints = _as_int(b.cpu())
    assert ints[3] == ints[5]                       # -0.0 == +0.0
    assert ints[0] == ints[7] and ints[0] > ints[4]  # every NaN equal, after +inf
    assert ints[2] < ints[6] < ints[3] < ints[1] < ints[4]


@triton.jit
def _special_kernel(x_ptr, s_ptr, b_ptr, c_ptr, cb_ptr, n, DESC: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    tl.store(s_ptr + o, is_special_float(x).to(tl.int8), mask=m)
    tl.store(b_ptr + o, to_ordered_bits(x, DESC, CANONICAL=False), mask=m)
    bits, changed = to_ordered_bits_noting_changes(x, DESC)
    tl.store(c_ptr + o, changed.to(tl.int8), mask=m)
    tl.store(cb_ptr + o, bits, mask=m)


#: per float dtype: its width, the bits of a NaN with a payload (the quiet bit clear) and of the
#: canonical quiet NaN with the sign bit set (built from bits: torch's CPU negation of a bf16 NaN
#: leaves its sign clear)
_NAN_BITS = {torch.float16: (16, 0x7C01, 0xFE00), torch.bfloat16: (16, 0x7F81, 0xFFC0),
             torch.float32: (32, 0x7F800001, 0xFFC00000), torch.float64: (64, 0x7FF0000000000001, 0xFFF8 << 48)}


def _from_bits(bits: list[int], dtype: torch.dtype) -> torch.Tensor:
    width = _NAN_BITS[dtype][0]
    signed = [b - (1 << width) if b >> (width - 1) else b for b in bits]
    return torch.tensor(signed, dtype={16: torch.int16, 32: torch.int32, 64: torch.int64}[width]).view(dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32,
                                   torch.uint8], ids=str)
@pytest.mark.parametrize("desc", [False, True])
def test_special_floats_and_plain_flip(dtype, desc):
    # is_special_float flags exactly -0.0 and NaNs (any sign or payload); to_ordered_bits_noting_changes
    # gives the canonical bits and flags -0.0 and every NaN but the canonical +qNaN; keys it does not
    # flag (the canonical NaN included) are ordered by the plain flip (CANONICAL=False) as torch orders them
    if dtype.is_floating_point:
        nan = torch.tensor([float("nan")], dtype=dtype)
        _, payload_nan, neg_nan = _NAN_BITS[dtype]
        specials = torch.cat([torch.tensor([-0.0], dtype=dtype), nan, _from_bits([neg_nan, payload_nan], dtype)])
        changed_ref = [1, 0, 1, 1]
        plain = torch.tensor([0.0, 1.0, -1.0, float("inf"), -float("inf"), 3.5, -2.25], dtype=dtype)
    else:
        specials = torch.empty(0, dtype=dtype)
        changed_ref = []
        plain = make_data("random", 12, dtype, device="cpu")
    x = torch.cat([plain, specials, make_data("random", 40, dtype, device="cpu")]).to(DEVICE)
    if dtype.is_floating_point:
        x = torch.where(torch.isnan(x) | (x == 0), torch.ones_like(x), x)   # the random part: no specials
        x[: plain.numel() + specials.numel()] = torch.cat([plain, specials]).to(DEVICE)
    n = x.numel()
    s = torch.full((n,), -1, dtype=torch.int8, device=DEVICE)
    c = torch.full((n,), -1, dtype=torch.int8, device=DEVICE)
    b = torch.empty(n, dtype=_UBITS[key_bits(dtype)], device=DEVICE)
    cb = torch.empty(n, dtype=_UBITS[key_bits(dtype)], device=DEVICE)
    _special_kernel[(1,)](x, s, b, c, cb, n, DESC=desc, BLOCK=128)
    expect = [0] * n
    expect_changed = [0] * n
    for j, i in enumerate(range(plain.numel(), plain.numel() + specials.numel())):
        expect[i] = 1
        expect_changed[i] = changed_ref[j]
    assert s.cpu().tolist() == expect
    assert c.cpu().tolist() == expect_changed
    canonical = torch.empty_like(cb)
    _traits_kernel[(1,)](x, canonical, torch.empty_like(x), torch.empty(n, dtype=canonical.dtype, device=DEVICE),
                         n, 0, DESC=desc, BLOCK=128)
    assert _as_int(cb.cpu()) == _as_int(canonical.cpu())
    ints = _as_int(b.cpu())
    for flags in (expect, expect_changed):
        keep = [i for i in range(n) if not flags[i]]
        order = sorted(keep, key=lambda i: ints[i])
        ref = _torch_order(x.cpu()[keep], desc).tolist()
        assert order == [keep[j] for j in ref]
