"""DevicePartition (tritoncub.device.partition) against torch: stable two- and three-way partitions."""
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, assert_equal, make_data
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import partition as P

TILE = 128
SIZES = [0, 1, TILE - 1, TILE, TILE + 1, 3 * TILE + 45] if interpreter_active() else [0, 1, 4097, 1_000_003]


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("select", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


@triton.jit
def _two_args(x, y):
    return x > y


@triton.jit
def positive(x):
    return x > 0


@triton.jit
def below_minus_one(x):
    return x < -1


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.float16])
@pytest.mark.parametrize("density", [0.6, 1.0, 0.0])
def test_flagged_stable(n, dtype, density):
    # (density 1 and 0: every item selected, none selected)
    x = make_data("random", n, dtype)
    flags = torch.rand(n, device=DEVICE) < density
    out, k = P.flagged(x, flags)
    xc, fc = x.cpu(), flags.cpu()
    assert int(k) == int(fc.sum())
    assert_equal(out.cpu(), torch.cat([xc[fc], xc[~fc]]))


@pytest.mark.parametrize("n", SIZES)
def test_if_with_values(n):
    x = make_data("special", n, torch.float32)
    vals = torch.arange(n, device=DEVICE, dtype=torch.int64)
    out, out_v, k = P.if_(x, positive, values=vals)
    xc = x.cpu()
    sel = xc > 0
    assert int(k) == int(sel.sum())
    assert_equal(out.cpu(), torch.cat([xc[sel], xc[~sel]]))
    assert_equal(out_v.cpu(), torch.cat([vals.cpu()[sel], vals.cpu()[~sel]]))  # input order kept


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["random", "special"])
def test_three_way(n, kind):
    # (special: NaN, ±inf, ±0 -- NaN satisfies neither predicate and goes to the third part)
    x = torch.randn(n, device=DEVICE) * 2 if kind == "random" else make_data("special", n, torch.float32)
    out, k = P.three_way(x, below_minus_one, positive)
    xc = x.cpu()
    a, b = xc < -1, (xc > 0)
    c = ~a & ~b
    assert k.cpu().tolist() == [int(a.sum()), int(b.sum())]
    assert_equal(out.cpu(), torch.cat([xc[a], xc[b], xc[c]]))
    # values travel with their items (each part in input order)
    vals = torch.arange(n, device=DEVICE) * 3 - 7
    out2, out_v, k2 = P.three_way(x, below_minus_one, positive, vals)
    vc = vals.cpu()
    assert_equal(out2.cpu(), out.cpu())
    assert_equal(out_v.cpu(), torch.cat([vc[a], vc[b], vc[c]]))
    assert k2.cpu().tolist() == k.cpu().tolist()


@triton.jit
def _bit1(x):   # numbers, not booleans: nonzero holds
    return x & 2


@triton.jit
def _bit0(x):
    return x & 1


def test_three_way_numeric_predicates():
    """Predicates that return numbers: nonzero holds (both categories; bitwise use of the number once
    put nothing in either)."""
    x = torch.tensor([1, 2, 3, 6, 7, 8, 0, -2, 5, 4], dtype=torch.int32, device=DEVICE)
    out, k = P.three_way(x, _bit1, _bit0)
    xc = x.cpu()
    a = (xc & 2) != 0
    b = ~a & ((xc & 1) != 0)
    c = ~a & ~b
    assert k.cpu().tolist() == [int(a.sum()), int(b.sum())]
    assert_equal(out.cpu(), torch.cat([xc[a], xc[b], xc[c]]))


def test_partition_bad_input():
    x = torch.randn(10, device=DEVICE)
    with pytest.raises(ValueError, match="flags has"):
        P.flagged(x, torch.ones(3, device=DEVICE))
    with pytest.raises(TypeError, match="pred2"):
        P.three_way(x, positive, "x > 0")
    with pytest.raises(TypeError, match="pred1 must take 1 positional argument"):
        P.three_way(x, _two_args, positive)
    with pytest.raises(ValueError, match="values has"):
        P.if_(x, positive, values=torch.ones(4, device=DEVICE))
    with pytest.raises(TypeError, match="supported dtypes"):               # an item dtype it cannot move
        P.flagged(torch.zeros(10, dtype=torch.complex64, device=DEVICE), torch.ones(10, dtype=torch.bool,
                                                                                    device=DEVICE))
    with pytest.raises(TypeError, match="flags"):                          # flags of a dtype it cannot read
        P.flagged(x, torch.ones(10, dtype=torch.complex64, device=DEVICE))
