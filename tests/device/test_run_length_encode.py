"""DeviceRunLengthEncode (tritoncub.device.run_length_encode) against torch.unique_consecutive."""
import contextlib
import math

import pytest
import torch

from helpers import DEVICE, assert_equal, make_data
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import run_length_encode as R
from tritoncub.device import select as S

TILE = 128
SIZES = [0, 1, 2, TILE, TILE + 1, 3 * TILE + 45] if interpreter_active() else [0, 1, 2, 4097, 1_000_003]


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("select", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


#: the two forms of non_trivial_runs (the select policy's ``runs`` bucket): the single pass, and the
#: bitmask two-pass form (bits of the runs' first and last items; scatter groups of 2 tiles)
RUNS_FORMS = {"single_pass": {"PASSES": 1}, "bitmask": {"PASSES": 2, "COUNT_TILES": 2, "SCATTER_TILES": 2}}


@contextlib.contextmanager
def runs_form(form):
    tile = TILE if interpreter_active() else 2048
    with policy.override("select", {"TILE": tile, "num_warps": 4, **RUNS_FORMS[form]}, bucket="runs"):
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
@pytest.mark.parametrize("length_dtype", [torch.int32, torch.int64, None])
def test_encode(n, avg, length_dtype, two_pass, monkeypatch):
    """Both forms of encode (the bitmask two-pass form, the single pass of the 'runs' bucket); lengths
    int32 by default below 2^31 items."""
    monkeypatch.setattr(R, "ENCODE_TWO_PASS", two_pass)
    x = _runs(n, avg)
    u, lengths, k = R.encode(x, length_dtype=length_dtype)
    rv, rc = torch.unique_consecutive(x.cpu(), return_counts=True)
    assert int(k) == rv.numel()
    assert_equal(u[: int(k)].cpu(), rv)
    assert lengths.dtype == (length_dtype or torch.int32)
    assert_equal(lengths[: int(k)].cpu().long(), rc)


# the two-pass scatter's forms, each writing the run lengths itself: (name, policy values, select module
# constant and value): tiles word by word or item by item, and groups of 4 tiles per program
SCATTER_FORMS = [("default", {}, None), ("words", {}, ("_SPARSE_DIV", 0)), ("items", {}, ("_SPARSE_DIV", 1 << 20)),
                 ("group4", {"SCATTER_TILES": 4}, None), ("group4-words", {"SCATTER_TILES": 4}, ("_SPARSE_DIV", 0)),
                 ("group2-items", {"SCATTER_TILES": 2}, ("_SPARSE_DIV", 1 << 20)),
                 # the count scan over several programs (the last tile with a head found across them)
                 ("scan-programs", {"SCATTER_TILES": 4}, [("_SCAN_MIN_BLOCK", 2), ("_SCAN_PROGRAMS", 4)])]


@pytest.mark.parametrize("form", SCATTER_FORMS, ids=[f[0] for f in SCATTER_FORMS])
@pytest.mark.parametrize("n", [1, TILE - 1, TILE + 1, 7 * TILE + 3] if interpreter_active() else [1, 2047, 2049, 1_000_003])
@pytest.mark.parametrize("avg", [1, 5, 2 * TILE])
@pytest.mark.parametrize("length_dtype", [torch.int32, torch.int64])
def test_encode_lengths_in_scatter(n, avg, form, length_dtype, monkeypatch):
    """Run lengths written by the bitmask scatter (from the head before each head: in its word, an
    earlier word, or an earlier tile through the scan) in every scatter form, with runs of one item,
    short runs and runs longer than a tile (tiles without a head); poisoned outputs, nothing written
    past the runs."""
    name, values, const = form
    for c in (const if isinstance(const, list) else [const] if const else []):
        monkeypatch.setattr(S, *c)
    x = _runs(n, avg)
    with policy.override("select", {"TILE": TILE if interpreter_active() else 2048, **values}, bucket="heads"):
        plan = S.Plan(x, None, S.SELECT_HEADS, two_pass=True, run_lengths=True,
                      pol=policy.select("select", x.device, "heads"))
        uniq = torch.full_like(x, -9)
        lengths = torch.full((n,), -9, dtype=length_dtype, device=DEVICE)
        plan.scatter(out=uniq, out_lengths=lengths)
    rv, rc = torch.unique_consecutive(x.cpu(), return_counts=True)
    k = rv.numel()
    assert int(plan.num_selected) == k
    assert_equal(uniq[:k].cpu(), rv)
    assert_equal(lengths[:k].cpu().long(), rc)
    assert bool((lengths[k:] == -9).all()) and bool((uniq[k:] == -9).all())


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("avg", [1, 3, 300])
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("offset_dtype,length_dtype", [(torch.int64, None), (torch.int32, torch.int64)])
@pytest.mark.parametrize("form", list(RUNS_FORMS))
def test_non_trivial_runs(n, avg, specials, offset_dtype, length_dtype, form):
    # (specials: runs of NaN -- each NaN its own run, as != says --, -0.0 next to +0.0 -- one run --, ±inf)
    x = _runs(n, avg, torch.float32)
    if specials:
        x = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf")], device=DEVICE)[x.long() % 5]
        x[1::2] = torch.where(x[1::2] == 0, -x[1::2], x[1::2])   # (alternate signs of zero inside runs)
    with runs_form(form):
        offs, lengths, k = R.non_trivial_runs(x, offset_dtype=offset_dtype, length_dtype=length_dtype)
    xc = x.cpu()
    heads = torch.ones(n, dtype=torch.bool)
    heads[1:] = xc[1:] != xc[:-1]
    starts = torch.nonzero(heads).flatten()
    rc = torch.diff(torch.cat([starts, torch.tensor([n])]))
    m = rc > 1
    assert int(k) == int(m.sum())
    assert offs.dtype == offset_dtype and lengths.dtype == (length_dtype or torch.int32)
    assert_equal(offs[: int(k)].cpu().long(), starts[m])
    assert_equal(lengths[: int(k)].cpu().long(), rc[m])


@pytest.mark.parametrize("heads_shift", [0, 1])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("avg", [1, 3, 300])
def test_non_trivial_runs_bitmask_groups(avg, dtype, heads_shift):
    """The bitmask form with 4 tiles per count program and per scatter group over 6 tiles: the second
    program and group hold tiles past the end (predecessors from registers, ``HEADS_SHIFT`` 1, or by
    shifted loads), runs crossing tiles, programs and groups."""
    tile = TILE if interpreter_active() else 2048
    n = 5 * tile + 45
    x = _runs(n, avg, dtype)
    with policy.override("select", {"TILE": tile, "num_warps": 4, "PASSES": 2, "COUNT_TILES": 4, "SCATTER_TILES": 4,
                                    "HEADS_SHIFT": heads_shift}, bucket="runs"):
        offs, lengths, k = R.non_trivial_runs(x)
    _, counts = torch.unique_consecutive(x.cpu(), return_counts=True)
    starts = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)[:-1]])
    assert int(k) == int((counts > 1).sum())
    assert_equal(offs[: int(k)].cpu(), starts[counts > 1])
    assert_equal(lengths[: int(k)].cpu().long(), counts[counts > 1])


@pytest.mark.parametrize("form", list(RUNS_FORMS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_non_trivial_runs_special_half_floats(dtype, form):
    """-0.0 next to +0.0 is one run and NaNs are runs of one in every float dtype (bfloat16 once
    compared its next item by raw bits under the interpreter: a run counted with no head, a negative
    length and a write out of bounds)."""
    nan, inf = float("nan"), float("inf")
    cases = [([-0.0, 0.0, 1.0], [0], [2]), ([nan, nan, 1.0], [], []),
             ([1.0, nan, nan, -0.0, 0.0, -0.0, inf, inf, nan], [3, 6], [3, 2])]
    for values, want_offs, want_lengths in cases:
        x = torch.tensor(values, device=DEVICE, dtype=dtype)
        with runs_form(form):
            offs, lengths, k = R.non_trivial_runs(x)
        assert int(k) == len(want_offs), values
        assert offs[: int(k)].cpu().tolist() == want_offs and lengths[: int(k)].cpu().tolist() == want_lengths


def test_non_trivial_runs_refuses_other_offset_dtypes():
    with pytest.raises(TypeError, match="offset_dtype must be int32 or int64"):
        R.non_trivial_runs(torch.zeros(4, device=DEVICE), offset_dtype=torch.int16)
    # (int32 offsets of 2^31 or more items would wrap; an expanded view: no memory, refused before any copy)
    with pytest.raises(ValueError, match="offset_dtype int32 cannot hold the offsets"):
        R.non_trivial_runs(torch.zeros(1, device=DEVICE).expand(2 ** 31 + 1), offset_dtype=torch.int32)


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
