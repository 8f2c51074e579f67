"""DeviceAdjacentDifference (tritoncub.device.adjacent_difference) and the diff operator."""
import math

import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, assert_equal, make_data
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import adjacent_difference as A

TILE = 128
SIZES = [0, 1, 2, TILE - 1, TILE, TILE + 1, 3 * TILE + 45] if interpreter_active() else [0, 1, 2, 4097, 1_000_003]
ops = torch.ops.tritoncub


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("adjacent_difference", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


@triton.jit
def _one_arg(a):
    return a


@triton.jit
def maximum(a, b):
    return tl.maximum(a, b)


def _left(x, op=torch.sub):
    return torch.cat([x[:1], op(x[1:], x[:-1])]) if x.numel() else x


def _right(x, op=torch.sub):
    return torch.cat([op(x[:-1], x[1:]), x[-1:]]) if x.numel() else x


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float16])
@pytest.mark.parametrize("in_place", [False, True])
def test_subtract_left_right(n, dtype, in_place):
    x = make_data("random", n, dtype)
    for fn, ref in ((A.subtract_left, _left), (A.subtract_right, _right)):
        y = x.clone()
        out = fn(y, in_place=in_place)
        if in_place:
            assert out.data_ptr() == y.data_ptr()
        assert_equal(out.cpu(), ref(x.cpu()))


def test_custom_op_and_out():
    x = make_data("random", 2 * TILE + 7, torch.float32)
    out = torch.empty_like(x)
    A.subtract_left(x, maximum, out=out)
    assert_equal(out.cpu(), _left(x.cpu(), torch.maximum))
    assert_equal(A.subtract_right(x, maximum).cpu(), _right(x.cpu(), torch.maximum))


def test_bad_input():
    x = torch.zeros(10, device=DEVICE)
    y = torch.arange(4.0, device=DEVICE) ** 2
    for flag in ("no", 1, torch.tensor(True)):   # (not a bool: refused, x left as it was)
        with pytest.raises(TypeError, match="in_place must be a bool"):
            A.subtract_left(y, in_place=flag)
    assert_equal(y.cpu(), torch.arange(4.0) ** 2)
    with pytest.raises(ValueError, match="overlap"):
        A.subtract_left(x, out=x)
    buf = torch.zeros(20, device=DEVICE)
    with pytest.raises(ValueError, match="overlap"):          # a partly overlapping out
        A.subtract_left(buf[:10], out=buf[5:15])
    with pytest.raises(TypeError, match="out"):                # another dtype
        A.subtract_left(x, out=torch.empty(10, dtype=torch.float64, device=DEVICE))
    with pytest.raises(ValueError, match="out must be contiguous with x's shape"):
        A.subtract_left(x, out=torch.empty(11, device=DEVICE))
    with pytest.raises(ValueError, match="out must be contiguous with x's shape"):
        A.subtract_left(x, out=torch.empty(20, device=DEVICE)[::2])
    with pytest.raises(ValueError, match="in_place=True needs a contiguous x"):
        A.subtract_left(buf[::2], in_place=True)
    with pytest.raises(ValueError, match="not both"):
        A.subtract_left(x, out=torch.empty_like(x), in_place=True)
    with pytest.raises(TypeError, match="triton.jit"):
        A.subtract_left(x, lambda a, b: a - b)
    with pytest.raises(TypeError, match=r"op must take 2 positional arguments \(the item, then its neighbour\)"):
        A.subtract_right(x, _one_arg)
    leaf = torch.zeros(10, device=DEVICE, requires_grad=True)   # autograd would not see the write
    with pytest.raises(ValueError, match="requires grad"):
        A.subtract_left(leaf, in_place=True)
    with pytest.raises(ValueError, match="out requires grad"):
        A.subtract_left(x, out=torch.zeros(10, device=DEVICE, requires_grad=True))
    with torch.no_grad():
        A.subtract_left(leaf, in_place=True)


@pytest.mark.parametrize("shape,dim", [((50,), 0), ((3 * 1024 + 5,), 0), ((1, 2049), 1), ((5, 7, 9), 0), ((5, 7, 9), 1),
                                       ((5, 7, 9), -1), ((3, 1), 1), ((2, 8195), 1), ((8195, 2), 0)])
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_diff(shape, dim, n):
    x = torch.randn(shape, device=DEVICE)
    assert_equal(ops.diff(x, n, dim).cpu(), torch.diff(x.cpu(), n, dim))


def test_diff_bool_int_prepend_append():
    b = torch.rand(40, device=DEVICE) > 0.5
    assert_equal(ops.diff(b).cpu(), torch.diff(b.cpu()))
    x = torch.randint(-9, 9, (4, 6), device=DEVICE)
    p, a = torch.randint(-9, 9, (4, 2), device=DEVICE), torch.randint(-9, 9, (4, 1), device=DEVICE)
    assert_equal(ops.diff(x, 2, 1, p, a).cpu(), torch.diff(x.cpu(), 2, 1, p.cpu(), a.cpu()))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_diff_complex(dtype):
    # torch.diff of complex tensors: equal to torch's on finite items; the real and imaginary parts are
    # differenced apart, so an infinite or NaN part stays in its own part (torch subtracts b * (1+0j),
    # which makes the other part NaN too)
    x = torch.randn(4, 37, dtype=dtype)
    p = torch.randn(4, 2)   # (a real prepend: the concatenation is complex)
    for args in ((1, -1, None, None), (2, 0, None, None), (3, 1, p, x[:, :1])):
        n, dim, pre, app = args
        out = ops.diff(x.to(DEVICE), n, dim, None if pre is None else pre.to(DEVICE),
                       None if app is None else app.to(DEVICE))
        ref = torch.diff(x, n, dim, pre, app)
        assert out.dtype == ref.dtype and out.shape == ref.shape
        assert_equal(torch.view_as_real(out).cpu(), torch.view_as_real(ref))
    x[1, 2] = complex(math.inf, 1.0)
    x[2, 5] = complex(0.5, math.nan)
    out = ops.diff(x.to(DEVICE), 2, 1)
    parts = torch.diff(torch.view_as_real(x), 2, 1)   # (each part on its own)
    assert_equal(torch.view_as_real(out).cpu(), parts)
    # empty results (a row of one item, n >= the length, no rows) and a conjugate view
    for t, n, dim in ((torch.randn(3, 1, dtype=dtype), 1, 1), (torch.randn(3, 4, dtype=dtype), 4, 1),
                      (torch.zeros(0, 3, dtype=dtype), 1, 1), (torch.randn(5, 6, dtype=dtype).conj(), 1, 0)):
        out = ops.diff(t.to(DEVICE), n, dim)
        ref = torch.diff(t, n, dim)
        assert out.shape == ref.shape and out.dtype == ref.dtype
        assert_equal(torch.view_as_real(out).cpu(), torch.view_as_real(ref.resolve_conj()))
    torch.library.opcheck(ops.diff, (torch.randn(4, 37, dtype=dtype, device=DEVICE), 1, 0, None, None))


def test_diff_n0_ignores_prepend_append_and_bf16():
    """``n = 0`` is a copy of x (torch uses neither prepend nor append then, nor their dtype); bf16 and
    fp16 differences equal torch's (subtracted in fp32, rounded once)."""
    x = torch.randn(4, 5, 6, device=DEVICE).half()
    p = torch.randn(1, 5, 6, device=DEVICE)
    out = ops.diff(x, 0, 0, p, p)
    ref = torch.diff(x.cpu(), 0, 0, p.cpu(), p.cpu())
    assert out.data_ptr() != x.data_ptr()
    assert_equal(out.cpu(), ref)
    with torch._subclasses.fake_tensor.FakeTensorMode():
        fx, fp = torch.empty(4, 5, 6, dtype=torch.float16), torch.empty(1, 5, 6)
        f = ops.diff(fx, 0, 0, fp, fp)
        assert f.shape == ref.shape and f.dtype == ref.dtype
    for dtype in (torch.float16, torch.bfloat16):
        xb = (torch.randn(300, device=DEVICE) * 100).to(dtype)
        for out, ref in ((ops.diff(xb).cpu(), torch.diff(xb.cpu())), (A.subtract_left(xb).cpu(), _left(xb.cpu()))):
            if dtype == torch.bfloat16 and interpreter_active():
                # Triton 3.6's interpreter rounds fp32 -> bf16 toward zero (compiled kernels round to
                # nearest, as torch): at most one bf16 step apart there
                step = torch.ldexp(torch.ones(()), torch.frexp(ref.float())[1] - 8)
                assert ((out.float() - ref.float()).abs() <= step).all()
            else:
                assert_equal(out, ref)


def test_diff_rows_kernel_mask_is_64_bit():
    """The rows kernel's bound ``rows * (length - 1)`` is formed in int64: 65536 rows of 65537 items
    (2^32 outputs) still write program 0's tile (an int32 product wrapped to 0 and wrote nothing)."""
    x = torch.arange(300, dtype=torch.float32, device=DEVICE)
    out = torch.full((TILE,), -7.0, device=DEVICE)
    A._diff_rows_kernel[(1,)](x, out, 65536, 65537, OP=A.difference, ROW_TILES=False, WIDE=True, TILE=TILE)
    assert_equal(out.cpu(), torch.ones(TILE))


@pytest.mark.parametrize("row_tiles,wide", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("rows,length", [(1, 2 * TILE + 3), (3, TILE + 1), (4, 2 * TILE + 38), (5, 7), (2, 2)])
def test_diff_rows_kernel_modes(row_tiles, wide, rows, length):
    """Each way of the rows kernel (whole tiles of one row; flattened with a 32- or 64-bit division)
    launched directly, on rows shorter and longer than a tile and a ragged last tile per row."""
    x = torch.randn(rows, length, device=DEVICE)
    out = torch.full((rows, length - 1), float("nan"), device=DEVICE)
    grid = rows * triton.cdiv(length - 1, TILE) if row_tiles else triton.cdiv(rows * (length - 1), TILE)
    A._diff_rows_kernel[(grid,)](x, out, rows, length, OP=A.difference, ROW_TILES=row_tiles, WIDE=wide, TILE=TILE)
    assert_equal(out.cpu(), torch.diff(x.cpu()))


@pytest.mark.parametrize("rows,length", [(1_610_612_736, 2), (2_098_000, 1024), (2**20, 2049), (3, 5)])
def test_diff_rows_launch_is_wide_when_x_passes_int32(monkeypatch, rows, length):
    """The flattened way reads x at ``i + row``: 64-bit index math once x (not only the output, one item
    shorter per row) may pass 2^31 items (int8 (2^30 * 1.5, 2): output 1.6e9 items, x 3.2e9)."""
    seen = {}
    monkeypatch.setattr(policy, "launch", lambda op, kernel, grid, *args, **kw: seen.update(kw))
    A._diff_once(torch.empty((rows, length), dtype=torch.int8, device="meta"))
    assert seen["WIDE"] == (rows * length >= 2**31 - 2**16)


def test_diff_bad_input():
    with pytest.raises(ValueError, match="one-dimensional"):
        ops.diff(torch.tensor(1.0, device=DEVICE))
    with pytest.raises(IndexError):
        ops.diff(torch.zeros(3, device=DEVICE), 1, 2)
    with pytest.raises(ValueError, match="non-negative"):
        ops.diff(torch.zeros(3, device=DEVICE), -1)
    with pytest.raises(ValueError, match="prepend of shape"):
        ops.diff(torch.zeros(4, 5, device=DEVICE), 1, 0, torch.zeros(5, device=DEVICE))
    # prepend/append on another device (a meta one sends the call to the fake, which checks it too)
    with pytest.raises(ValueError, match="append is on meta"):
        ops.diff(torch.zeros(4, 5, device=DEVICE), 1, 1, None, torch.zeros(4, 1, device="meta"))
    with pytest.raises(ValueError, match="prepend is on meta"):   # n = 0 too (the fake's result was returned)
        ops.diff(torch.zeros(4, 5, device=DEVICE), 0, 1, torch.zeros(4, 1, device="meta"))
    with torch._subclasses.fake_tensor.FakeTensorMode():   # the fake checks the same
        with pytest.raises(ValueError, match="one-dimensional"):
            ops.diff(torch.empty(()), 1)
        with pytest.raises(ValueError, match="append of shape"):
            ops.diff(torch.empty(4, 5), 1, 0, None, torch.empty(1, 6))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 30])
@pytest.mark.parametrize("dim,ends", [(-1, "none"), (0, "none"), (-1, "both"), (0, "prepend"), (1, "append")])
def test_diff_autograd(n, dim, ends):
    """Gradients of x, prepend and append equal torch's (n past the concatenated length included:
    the forward stops at length 0)."""
    x = torch.randn(4, 9, dtype=torch.float64)
    side = list(x.shape)
    side[dim] = 2
    pre = torch.randn(side, dtype=torch.float64) if ends in ("prepend", "both") else None
    app = torch.randn(side, dtype=torch.float64) if ends in ("append", "both") else None
    ours = [t.to(DEVICE, copy=True).requires_grad_() if t is not None else None for t in (x, pre, app)]
    ref = [t.clone().requires_grad_() if t is not None else None for t in (x, pre, app)]
    out = ops.diff(ours[0], n, dim, ours[1], ours[2])
    want = torch.diff(ref[0], n, dim, ref[1], ref[2])
    assert out.shape == want.shape
    g = torch.randn(want.shape, dtype=torch.float64)
    out.backward(g.to(out.device))
    want.backward(g)
    for a, b in zip(ours, ref):
        if a is not None:   # (n = 0: prepend and append unused, no gradient, as torch)
            assert (a.grad is None) == (b.grad is None)
            if b.grad is not None:
                assert_equal(a.grad.cpu(), b.grad)
    # an integer x with a float prepend: only the prepend gets a gradient
    xi = torch.arange(6, device=DEVICE)
    p = torch.tensor([0.5], device=DEVICE, dtype=torch.float64, requires_grad=True)
    ops.diff(xi, 1, -1, p, None).sum().backward()
    assert_equal(p.grad.cpu(), torch.tensor([-1.0], dtype=torch.float64))


def test_opcheck():
    x = torch.randn(6, 20, device=DEVICE)
    torch.library.opcheck(ops.diff, (x, 1, -1, None, None))
    # n = 0: a copy with x's strides (as torch's), the fake's too
    torch.library.opcheck(ops.diff, (x.t(), 0, 0, None, None))
    assert ops.diff(x.t(), 0, 0).stride() == torch.diff(x.t().cpu(), 0, 0).stride()
    torch.library.opcheck(ops.diff, (x, 2, 0, x[:1], None))
    # prepend/append of another dtype: the result takes the concatenation's type (fake included)
    xi = torch.tensor([1, 2, 4], device=DEVICE)
    torch.library.opcheck(ops.diff, (xi, 1, -1, torch.tensor([0.5], device=DEVICE), None))
    assert_equal(ops.diff(xi, 1, -1, torch.tensor([0.5], device=DEVICE), None).cpu(),
                 torch.diff(xi.cpu(), prepend=torch.tensor([0.5])))


@pytest.mark.gpu
def test_runtime_autotune(monkeypatch):
    """TRITONCUB_AUTOTUNE=1: the launch runs triton.autotune over the policy's candidates; the
    results must not change."""
    monkeypatch.setenv("TRITONCUB_AUTOTUNE", "1")
    assert policy.autotune_enabled()
    x = make_data("random", 100_003, torch.float32)
    out = A.subtract_left(x)
    assert_equal(out, torch.cat([x[:1], x[1:] - x[:-1]]))
    y = make_data("random", 37 * 1001, torch.int32).reshape(37, 1001)
    assert_equal(torch.ops.tritoncub.diff(y), torch.diff(y))
