"""DeviceRunLengthEncode (tritoncub.device.run_length_encode) against torch.unique_consecutive."""
import math

import pytest
import torch

from helpers import DEVICE, assert_equal, make_data
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import run_length_encode as R

TILE = 128
SIZES = [0, 1, 2, TILE, TILE + 1, 3 * TILE + 45] if interpreter_active() else [0, 1, 2, 4097, 1_000_003]


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("select", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


def _runs(n, avg, dtype=torch.int32):
    """Random runs (lengths 1..2*avg) of values from a small alphabet, so neighbouring runs may also
    be equal (they then merge) and long runs cross tiles."""
    reps = torch.randint(1, 2 * avg + 1, (n,))
    vals = torch.randint(0, 4, (n,))
    return torch.repeat_interleave(vals, reps)[:n].to(dtype).to(DEVICE)


@pytest.mark.parametrize("two_pass", [True, False], ids=["two_pass", "single_pass"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("avg", [1, 5, 300])
@pytest.mark.parametrize("length_dtype", [torch.int32, torch.int64])
def test_encode(n, avg, length_dtype, two_pass, monkeypatch):
    """Both forms of encode (the bitmask two-pass form, the single pass of the 'runs' bucket)."""
    monkeypatch.setattr(R, "ENCODE_TWO_PASS", two_pass)
    x = _runs(n, avg)
    u, lengths, k = R.encode(x, length_dtype=length_dtype)
    rv, rc = torch.unique_consecutive(x.cpu(), return_counts=True)
    assert int(k) == rv.numel()
    assert_equal(u[: int(k)].cpu(), rv)
    assert lengths.dtype == length_dtype
    assert_equal(lengths[: int(k)].cpu().long(), rc)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("avg", [1, 3, 300])
def test_non_trivial_runs(n, avg):
    x = _runs(n, avg, torch.float32)
    offs, lengths, k = R.non_trivial_runs(x)
    _, rc = torch.unique_consecutive(x.cpu(), return_counts=True)
    starts = torch.cumsum(rc, 0) - rc
    m = rc > 1
    assert int(k) == int(m.sum())
    assert_equal(offs[: int(k)].cpu(), starts[m])
    assert_equal(lengths[: int(k)].cpu().long(), rc[m])


@pytest.mark.parametrize("two_pass", [True, False], ids=["two_pass", "single_pass"])
def test_encode_special_floats(two_pass, monkeypatch):
    monkeypatch.setattr(R, "ENCODE_TWO_PASS", two_pass)
    x = torch.tensor([math.nan, math.nan, -0.0, 0.0, math.inf, math.inf, 1.0], device=DEVICE)
    u, lengths, k = R.encode(x)
    assert int(k) == 5
    assert_equal(u[:5].cpu(), torch.tensor([math.nan, math.nan, -0.0, math.inf, 1.0]), signed_zero=True)
    assert lengths[:5].cpu().tolist() == [1, 1, 2, 2, 1]


@pytest.mark.parametrize("two_pass", [True, False], ids=["two_pass", "single_pass"])
@pytest.mark.parametrize("kind", ["random", "equal", "few_unique"])
def test_encode_dtypes(kind, two_pass, monkeypatch):
    monkeypatch.setattr(R, "ENCODE_TWO_PASS", two_pass)
    for dtype in (torch.int8, torch.uint8, torch.int64, torch.bfloat16, torch.bool):
        x = make_data(kind, 2 * TILE + 3, dtype) if dtype != torch.bool else torch.rand(300, device=DEVICE) > 0.8
        u, lengths, k = R.encode(x)
        rv, rc = torch.unique_consecutive(x.cpu(), return_counts=True)
        assert_equal(u[: int(k)].cpu(), rv)
        assert_equal(lengths[: int(k)].cpu().long(), rc)


def test_bad_input():
    with pytest.raises(TypeError, match="length_dtype"):
        R.encode(torch.zeros(3, device=DEVICE), length_dtype=torch.float32)
