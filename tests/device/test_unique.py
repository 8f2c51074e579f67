"""torch.ops.tritoncub.unique / unique_consecutive against torch (both unique paths: dense integer
range and sort)."""
import math

import pytest
import torch

from helpers import DEVICE, assert_equal, count_calls, interpreter_replays, make_data, plan_replays
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import radix_sort as RS
from tritoncub.device import segmented_sort as SS
from tritoncub.device import unique as U
from tritoncub.thread.radix_traits import KEY_DTYPES

TILE = 128
ops = torch.ops.tritoncub
LIMIT = U.UNIQUE_TILE_MAX   # (the one program's limit as shipped; the fixture below sets it to 0)
N = 3 * TILE + 45 if interpreter_active() else 1_000_003


@pytest.fixture(autouse=True)
def small_policy(monkeypatch):
    # (the tests of the other paths take small inputs too: the one-program path is tested on its own)
    monkeypatch.setattr(U, "UNIQUE_TILE_MAX", 0)
    if interpreter_active():
        # (the hash path's sample is sorted in one program: 4096 items take the interpreter ~40 s)
        monkeypatch.setattr(U, "_HASH_SAMPLE", 64)
        monkeypatch.setattr(U, "_HASH_SAMPLE_MAX_DISTINCT", 56)
        with policy.override("select", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


def _check_unique(x, ri, rc):
    vals, inv, counts = ops.unique(x, True, ri, rc)
    ref = torch.unique(x.cpu(), sorted=True, return_inverse=ri, return_counts=rc)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert_equal(vals.cpu(), ref[0])
    if ri:
        assert_equal(inv.cpu(), ref[1])
    else:
        assert inv.numel() == 0
    if rc:
        assert_equal(counts.cpu(), ref[-1])
    else:
        assert counts.numel() == 0


@pytest.mark.parametrize("ri,rc", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("case", ["dense_int32", "dense_uint8", "wide_int64", "float", "bool", "int16_2d"])
def test_unique(case, ri, rc):
    if case == "dense_int32":
        x = torch.randint(-1000, 1000, (N,), device=DEVICE, dtype=torch.int32)
    elif case == "dense_uint8":
        x = make_data("random", N, torch.uint8)
    elif case == "wide_int64":   # range far beyond the dense cap: the sort path
        x = make_data("special", N, torch.int64)
    elif case == "float":
        x = make_data("special", N, torch.float32)
        x = x[~torch.isnan(x)]  # NaN order in the inverse differs between torch versions
    elif case == "bool":
        x = torch.rand(N, device=DEVICE) > 0.5
    else:
        x = torch.randint(-5, 5, (7, N // 7), device=DEVICE, dtype=torch.int16)
    _check_unique(x, ri, rc)
    # sorted=False returns the same (sorted) result, as torch's CUDA unique does
    for got, want in zip(ops.unique(x, False, ri, rc), ops.unique(x, True, ri, rc)):
        assert_equal(got.cpu(), want.cpu())


@pytest.mark.parametrize("count", ["late", "early"])
@pytest.mark.parametrize("ri,rc", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("case", ["wide_int64", "float"])
def test_unique_sort_path_count(case, ri, rc, count, monkeypatch):
    """The sort path's run heads with their count seen late (outputs sized for the worst case, then cut
    to the count) or early (exact outputs; under the interpreter the count has always arrived, so both
    are forced); few distinct values among many items, so the worst-case buffers are mostly empty."""
    _count_at(monkeypatch, count)
    g = torch.Generator().manual_seed(7)
    pool = torch.tensor([-2**62, -3, 0, 5, 2**40 + 1, 2**62], dtype=torch.int64)
    x = pool[torch.randint(0, len(pool), (N,), generator=g)]
    x = x.to(DEVICE) if case == "wide_int64" else (x.to(torch.float32) / 2**40).to(DEVICE)
    _check_unique(x, ri, rc)


_WIDE_UNSIGNED_REF = tuple(d for d in (getattr(torch, "uint16", None), getattr(torch, "uint32", None)) if d is not None)
_SAME_SIZE_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _check_unique_nan_aware(x, vals, inv, counts):
    """``ops.unique`` results against torch's: values and counts exactly (NaNs last, each its own value),
    each value's bits those of the item of its run first met in the input (the sign of a zero, a NaN's
    payload); the inverse torch's where the item is a number, and each NaN a NaN slot of its own in input
    order (torch's CPU order among NaNs is its sort's). uint16/uint32 through int64 (older CPU torch
    lacks their sort)."""
    xc = x.cpu().reshape(-1)
    xr = xc.to(torch.int64) if xc.dtype in _WIDE_UNSIGNED_REF else xc
    rv, ri, rc = torch.unique(xr, sorted=True, return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), rv.to(xc.dtype))
    assert_equal(counts.cpu(), rc)
    sv, perm = torch.sort(xr, stable=True)   # (NaN last; -0.0 and 0.0 equal, kept in input order)
    head = torch.ones(xc.numel(), dtype=torch.bool)
    head[1:] = sv[1:] != sv[:-1]   # (NaN != NaN: each its own)
    size_int = _SAME_SIZE_INT[xc.element_size()]
    assert torch.equal(vals.cpu().view(size_int), xc[perm[head]].view(size_int)), "not the first-met items' bits"
    inv = inv.cpu().reshape(-1)
    nan = torch.isnan(xc) if xc.dtype.is_floating_point else torch.zeros_like(xc, dtype=torch.bool)
    assert_equal(inv[~nan], ri[~nan])
    if nan.any():
        assert torch.isnan(vals.cpu()[inv[nan]]).all() and bool((inv[nan].diff() > 0).all())


_TILE_KINDS = ["random", "special", "equal", "sorted", "reversed", "few_unique", "nan_payloads"]
#: NaNs other than the canonical +qNaN (a sign, a payload), per float dtype, as same-size integers
_ODD_NANS = {torch.float32: (-4194304, 0x7FC00001), torch.float16: (-511, 0x7E01), torch.bfloat16: (-63, 0x7FC1),
             torch.float64: (-(1 << 51), 0x7FF8000000000001)}


def _tile_data(kind, n, dtype):
    if kind != "nan_payloads":
        return make_data(kind, n, dtype, seed=n)
    x = make_data("special", n, dtype, seed=n)
    if dtype in _ODD_NANS:
        bits = x.view(_SAME_SIZE_INT[x.element_size()])
        bits[::3] = _ODD_NANS[dtype][0]
        bits[1::5] = _ODD_NANS[dtype][1]
    return x


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 32, 200] if interpreter_active()
                         else [1, 2, 31, 33, 1000, LIMIT - 1, LIMIT, LIMIT + 1])
def test_unique_one_program_path(dtype, n, monkeypatch):
    """Inputs of at most UNIQUE_TILE_MAX keys: one program sorts (key, position) packed into 32-bit words
    (8- and 16-bit keys), 64-bit words (32-bit keys) or as pairs (64-bit keys) and writes values, inverse
    and counts; every data kind (NaN, NaNs with a sign or a payload,
    +-0.0, +-inf, all equal, sorted, reversed, few values), every output combination, a 2-D
    non-contiguous input, against torch; the path is taken up to the limit and not past it (LIMIT + 1 items:
    the other paths). The program's own sort (the presort has its own test)."""
    monkeypatch.setattr(U, "UNIQUE_TILE_MAX", LIMIT)
    monkeypatch.setattr(U, "PRESORT_MIN_N", None)
    taken = count_calls(monkeypatch, U, "_tile_path")
    for kind in _TILE_KINDS:
        x = _tile_data(kind, n, dtype).to(DEVICE)
        full = ops.unique(x, True, True, True)
        _check_unique_nan_aware(x, *full)
        for ri, rc in ((False, False), (True, False), (False, True)):
            vals, inv, counts = ops.unique(x, True, ri, rc)
            assert_equal(vals.cpu(), full[0].cpu())
            assert_equal(inv.cpu(), full[1].cpu() if ri else torch.empty(0, dtype=torch.int64))
            assert_equal(counts.cpu(), full[2].cpu() if rc else torch.empty(0, dtype=torch.int64))
    xt = _tile_data("special", 2 * n, dtype).view(n, 2).t().to(DEVICE)   # (2 x n, not contiguous)
    vals, inv, counts = ops.unique(xt, False, True, True)
    assert inv.shape == xt.shape
    _check_unique_nan_aware(xt, vals, inv, counts)
    assert len(taken) == (0 if n > LIMIT else 4 * len(_TILE_KINDS) + (2 * n <= LIMIT))


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=str)
@pytest.mark.parametrize("n", [40, 130] if interpreter_active() else [33, 1000, LIMIT - 1, LIMIT])
def test_unique_one_program_presorted(dtype, n, monkeypatch):
    """From PRESORT_MIN_N keys (lowered here; the block radix sort's availability, which the rule keys on,
    faked on the interpreter) the one program takes its permutation from radix_sort.sort and flags the runs: every
    data kind and output combination against torch; below the threshold no sort is called."""
    monkeypatch.setattr(U, "UNIQUE_TILE_MAX", LIMIT)
    monkeypatch.setattr(U, "block_radix_available", lambda device: True)
    monkeypatch.setattr(U, "PRESORT_MIN_N", n)
    sorts = count_calls(monkeypatch, U.radix_sort, "sort")
    for kind in _TILE_KINDS:
        x = _tile_data(kind, n, dtype).to(DEVICE)
        full = ops.unique(x, True, True, True)
        _check_unique_nan_aware(x, *full)
        vals = ops.unique(x, True, False, False)[0]
        assert_equal(vals.cpu(), full[0].cpu())
    assert len(sorts) == 2 * len(_TILE_KINDS)
    del sorts[:]
    x = _tile_data("few_unique", n - 1, dtype).to(DEVICE)
    _check_unique_nan_aware(x, *ops.unique(x, True, True, True))
    assert not sorts


@pytest.mark.parametrize("minmax", [0, 2])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.float16])
def test_unique_one_program_minmax_dims(dtype, minmax, monkeypatch):
    """Keys packed with their positions into 32-bit words, sorted with other numbers of min/max dims
    than the shipped one (the network's other compare-swap form in the innermost dims)."""
    monkeypatch.setattr(U, "UNIQUE_TILE_MAX", LIMIT)
    monkeypatch.setattr(U, "_TILE_MINMAX_DIMS", minmax)
    for kind in ("special", "few_unique", "reversed"):
        x = _tile_data(kind, 150, dtype).to(DEVICE)
        _check_unique_nan_aware(x, *ops.unique(x, True, True, True))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("n", [LIMIT - 1, LIMIT])
def test_unique_one_program_largest_block(dtype, n, monkeypatch):
    """The one program's largest block (``UNIQUE_TILE_MAX`` keys) in each sort form: 32-bit words with
    min/max dims (8-bit keys), 64-bit words (32-bit keys), pairs (64-bit keys); with and without padding.
    The program's own sort (the presort has its own test)."""
    monkeypatch.setattr(U, "UNIQUE_TILE_MAX", LIMIT)
    monkeypatch.setattr(U, "PRESORT_MIN_N", None)
    taken = count_calls(monkeypatch, U, "_tile_path")
    for kind in ("special", "few_unique", "nan_payloads"):
        x = _tile_data(kind, n, dtype).to(DEVICE)
        _check_unique_nan_aware(x, *ops.unique(x, True, True, True))
    assert len(taken) == 3


@pytest.mark.parametrize("span", [0, 200, 255, 256, 511, 512, 700])
def test_unique_counts_by_tile_histograms(span, monkeypatch):
    """The dense path's counts over at most 256 values, or ``_MARK_HIST_BINS``, come from each
    program's block histogram of 256 or ``_MARK_HIST_BINS`` bins (one atomic per value a program
    holds), over more from an atomic per item: both sides of each edge, over several programs and a
    ragged last one, with an offset minimum."""
    monkeypatch.setattr(U, "_MARK_HIST_BINS", 512)
    monkeypatch.setattr(U, "COUNT_SMEM_BINS", 0)   # (on a GPU: not the shared-memory counting)
    n = 2 * U._TILE + 77
    x = torch.randint(-50, -50 + span + 1, (n,), device=DEVICE, dtype=torch.int32)
    x[0], x[-1] = -50, -50 + span
    _check_unique(x, False, True)
    _check_unique(x, True, True)


def test_unique_nan_each_distinct_and_last():
    x = torch.tensor([1.0, math.nan, 0.0, -0.0, math.nan, 2.0], device=DEVICE)
    vals, _, counts = ops.unique(x, True, False, True)
    assert_equal(vals.cpu(), torch.tensor([0.0, 1.0, 2.0, math.nan, math.nan]))
    assert counts.cpu().tolist() == [2, 1, 1, 1, 1]


def test_unique_empty_and_single():
    for x in (torch.empty(0, device=DEVICE, dtype=torch.int32), torch.tensor([5], device=DEVICE)):
        _check_unique(x, True, True)


def test_unique_counts_in_int64_slots(monkeypatch):
    """Inputs of 2^31 items or more count in int64 slots (int32 ones could wrap): the same results
    (forced here for small inputs). The dense path's remembered launches are told apart by the slots'
    dtype: a call with int32 slots first, then one of the same size with int64 slots, must not replay
    the int32 launches on the int64 buffer (under the interpreter through helpers.interpreter_replays)."""
    monkeypatch.setattr(U, "_DENSE_PLANS", {})
    if interpreter_active():
        interpreter_replays(monkeypatch, plans=True)
    x = torch.randint(-50, 50, (N,), device=DEVICE, dtype=torch.int32)
    _check_unique(x, True, True)
    _check_unique(x, False, True)
    monkeypatch.setattr(U, "_COUNT64_MIN_N", 0)
    replayed = plan_replays(monkeypatch)
    _check_unique(x, True, True)
    _check_unique(x, False, True)
    assert len(U._DENSE_PLANS) == 4 and not any(replayed)   # (four problems, none replayed another's launches)
    replayed.clear()
    _check_unique(x, False, True)
    assert replayed and all(replayed)   # (its own launches, replayed)


@pytest.mark.parametrize("name", ["uint16", "uint32"])
def test_unique_unsigned_16_32(name):
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"no torch.{name} in this torch")   # (added in torch 2.3)
    x = torch.tensor([3, 1, 1, 70000 % (1 << 16), 0, 3], dtype=torch.int64).to(dtype).to(DEVICE)
    vals, inv, counts = ops.unique(x, True, True, True)
    ref_v, ref_i, ref_c = torch.unique(x.cpu().to(torch.int64), sorted=True, return_inverse=True, return_counts=True)
    assert vals.dtype == dtype
    assert_equal(vals.cpu().to(torch.int64), ref_v)
    assert_equal(inv.cpu(), ref_i)
    assert_equal(counts.cpu(), ref_c)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool"])
@pytest.mark.parametrize("flags", [(False, False), (True, True)])
@pytest.mark.parametrize("small", [True, False])
def test_unique_dense_minmax_pass(name, flags, small, monkeypatch):
    """The dense path's min/max pass in one program (small inputs) and over several programs, each
    looping over a strided share of small tiles, then a program reducing their pairs (and zeroing the
    dense path's buffers in several steps, the last one ragged): values at the top of the unsigned ranges
    (loaded without sign extension), negative ones; the minimum alone in a tile of the last program, the
    maximum alone in a tile of another; a span of exactly the slots (``cap - 1``) where the dtype has one.
    The dense path must give the result (no overflow to another path), and a second call of the same
    problem replays its remembered launches (under the interpreter through helpers.interpreter_replays)."""
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"no torch.{name} in this torch")   # (uint16/uint32: added in torch 2.3)
    monkeypatch.setattr(U, "_DENSE_SMALL_N", 1 << 16 if small else 0)
    monkeypatch.setattr(U, "_MINMAX_TILE", 32)
    monkeypatch.setattr(U, "_MINMAX_PROGRAMS", 3)
    monkeypatch.setattr(U, "_ZERO_BLOCK", 32)
    monkeypatch.setattr(U, "_DENSE_PLANS", {})
    if interpreter_active():
        interpreter_replays(monkeypatch, plans=True)
    results = []
    real_dense = U._dense_path
    monkeypatch.setattr(U, "_dense_path", lambda *a: results.append(real_dense(*a)) or results[-1])
    replayed = plan_replays(monkeypatch)
    n = 1000   # (32 tiles of 32: program p takes tiles p, p + 3, ...; tile 29 is the last program's)
    if dtype == torch.bool:
        x = torch.rand(n) < 0.5
    else:
        bits = torch.iinfo(dtype).bits if dtype.is_signed else 8 * torch.empty(0, dtype=dtype).element_size()
        span = min((1 << bits) - 1, 4095)   # (4095: the slots' cap - 1 for n <= 4096 items)
        if dtype.is_signed:
            lo = -(1 << (bits - 1)) if span == (1 << bits) - 1 else -(span // 2)
        else:
            lo = (1 << bits) - span - 1
        x = torch.randint(lo + 1, lo + span, (n,), dtype=torch.int64)   # (min and max placed below)
        x[29 * 32 + 5], x[16 * 32 + 7] = lo, lo + span
    xd = x.to(dtype).to(DEVICE)
    ref = torch.unique(x.to(torch.int64), sorted=True, return_inverse=True, return_counts=True)
    for call in range(2):
        vals, inv, counts = ops.unique(xd, True, *flags)
        assert vals.dtype == dtype
        assert_equal(vals.cpu().to(torch.int64), ref[0])
        if flags[0]:
            assert_equal(inv.cpu(), ref[1])
            assert_equal(counts.cpu(), ref[2])
        assert len(results) == call + 1 and results[-1] is not None, "the dense path did not give the result"
        if call == 0:
            replayed.clear()
    assert replayed and all(replayed)


def test_fake_checks_dtype_and_broadcast():
    """The fake implementations refuse what the operators refuse."""
    with torch._subclasses.fake_tensor.FakeTensorMode():
        with pytest.raises(TypeError, match="supported dtypes"):
            ops.unique(torch.empty(4, dtype=torch.complex64), True, False, False)
        with pytest.raises(TypeError, match="supported dtypes"):
            ops.unique_consecutive(torch.empty(4, dtype=torch.complex64), False, False)
        with pytest.raises(ValueError, match="does not broadcast"):
            ops.masked_select(torch.empty(3), torch.empty(4, dtype=torch.bool))


def test_unique_dense_overflow_falls_back_to_sort():
    x = torch.tensor([-2**63, 2**63 - 1, 0, 0], device=DEVICE, dtype=torch.int64)
    _check_unique(x, True, True)


@pytest.fixture
def paths(monkeypatch):
    """Which unique path produced each result ('hash' or 'sort' after the dense path overflowed); small
    inputs may take the hash path here (``HASH_MIN_N`` 0: test_unique_small_wide_input_sorts checks
    the size rule)."""
    monkeypatch.setattr(U, "HASH_MIN_N", 0)
    taken = []
    for name in ("_hash_path", "_sort_path"):
        real = getattr(U, name)

        def spy(*a, _real=real, _name=name, **kw):
            res = _real(*a, **kw)
            taken.append((_name[1:-5], res is not None))
            return res
        monkeypatch.setattr(U, name, spy)
    return taken


@pytest.mark.parametrize("ri,rc", [(False, False), (True, True), (True, False), (False, True)])
@pytest.mark.parametrize("case", ["few_wide_int32", "distinct_int32", "uint32", "int16", "extremes"])
def test_unique_hash_path(case, ri, rc, paths):
    """Integers of at most 32 bits whose range is too wide for the dense path: the hash table
    (Fibonacci-hashed slots, linear probing, compare-and-swap claims), then a sort of the distinct
    values; duplicates, all-distinct input, unsigned keys, the dtype's extreme values."""
    g = torch.Generator().manual_seed(len(case))
    if case == "few_wide_int32":
        x = (torch.randint(-40, 40, (N,), generator=g) * 50_331_653).to(torch.int32)
    elif case == "distinct_int32":
        x = torch.randperm(N, generator=g).to(torch.int32) * 4099 - 2**30
    elif case == "uint32":
        if getattr(torch, "uint32", None) is None:
            pytest.skip("no torch.uint32 in this torch")
        x = (torch.randint(0, 60, (N,), generator=g) * 71_582_788).to(torch.int64).to(torch.uint32)
    elif case == "int16":   # (a range wider than the dense path's 4096 slots for a small input)
        x = (torch.randint(-30, 30, (3000,), generator=g) * 1000).to(torch.int16)
    else:
        x = torch.tensor([2**31 - 1, -2**31, 0, -1, 2**31 - 1, -2**31] * (N // 6), dtype=torch.int32)
    x = x.to(DEVICE)
    if x.dtype == getattr(torch, "uint32", None):
        vals, inv, counts = ops.unique(x, True, ri, rc)
        ref = torch.unique(x.cpu().to(torch.int64), sorted=True, return_inverse=True, return_counts=True)
        assert vals.dtype == x.dtype
        assert_equal(vals.cpu().to(torch.int64), ref[0])
        assert (not ri and inv.numel() == 0) or torch.equal(inv.cpu(), ref[1])
        assert (not rc and counts.numel() == 0) or torch.equal(counts.cpu(), ref[2])
    else:
        _check_unique(x, ri, rc)
    assert paths == [("hash", True)]


@pytest.mark.parametrize("ri,rc", [(False, False), (True, True), (False, True)])
def test_hash_path_called_directly(ri, rc):
    """The hash path on its own (every build of its kernels, also where the dense path would take the
    input): distinct values, inverse and counts as torch's."""
    x = (torch.randint(-50, 50, (700,)) * 40_000_003).to(torch.int32).to(DEVICE)
    vals, inv, counts = U._hash_path(x, ri, rc)
    ref = torch.unique(x.cpu(), sorted=True, return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), ref[0])
    assert (not ri and inv.numel() == 0) or torch.equal(inv.cpu(), ref[1])
    assert (not rc and counts.numel() == 0) or torch.equal(counts.cpu(), ref[2])


@pytest.mark.parametrize("ri,rc", [(False, False), (True, True), (False, True)])
def test_hash_path_sort_past_one_program_limit(ri, rc, monkeypatch):
    """The distinct values past the one-program sort's limit (lowered to 64 here) go through the
    onesweep radix sort: keys alone, or with their positions for the inverse and counts."""
    monkeypatch.setattr(SS, "_one_program_limit", lambda *a: 64)
    onesweep = count_calls(monkeypatch, RS, "_sort_into")
    rows = count_calls(monkeypatch, SS, "sort_rows")
    g = torch.Generator().manual_seed(3)
    pool = torch.randperm(1 << 16, generator=g)[:300].to(torch.int32) * 30_011 - 2**30
    x = pool[torch.randint(0, 300, (900,), generator=g)].to(DEVICE)
    vals, inv, counts = U._hash_path(x, ri, rc)
    ref = torch.unique(x.cpu(), sorted=True, return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), ref[0])
    assert (not ri and inv.numel() == 0) or torch.equal(inv.cpu(), ref[1])
    assert (not rc and counts.numel() == 0) or torch.equal(counts.cpu(), ref[2])
    assert len(onesweep) == 1 and not rows   # (the 300 distinct values, past the lowered limit)


def test_rank_slots_kernel():
    """The relabelling after the sort, over several programs and a ragged last one: ``slot_of[r] =
    where[perm[r]]``, that slot's word becomes ``key bits << 32 | r``, other slots keep theirs, and the
    ranks' range lands in ``minmax``."""
    g = torch.Generator().manual_seed(11)
    k, slots = 2 * U._RANK_SLOTS_BLOCK + 5, 1 << 13
    where = torch.randperm(slots, generator=g)[:k]
    perm = torch.randperm(k, generator=g)
    table = torch.randint(-2**40, 2**40, (slots,), generator=g)
    slot_of = torch.full((k,), -7, dtype=torch.int64)
    minmax = torch.full((2,), -7, dtype=torch.int64)
    t, s, mm = table.clone().to(DEVICE), slot_of.to(DEVICE), minmax.to(DEVICE)
    U._rank_slots_kernel[(3,)](t, where.to(DEVICE), perm.to(DEVICE), s, mm, k, BLOCK=U._RANK_SLOTS_BLOCK)
    expect = table.clone()
    expect[where[perm]] = ((table[where[perm]] & 0xFFFFFFFF) << 32) | torch.arange(k)
    assert torch.equal(s.cpu(), where[perm])
    assert torch.equal(t.cpu(), expect)
    assert mm.tolist() == [0, k - 1]


@pytest.mark.parametrize("when", ["insert", "after"])
@pytest.mark.parametrize("ri,rc", [(False, True), (True, True)])
@pytest.mark.parametrize("k", [1, 2, 300, "limit", "limit+1"])
def test_hash_path_counts(k, ri, rc, when, monkeypatch):
    """The hash path's counts of k distinct values, counted during the insert (the sample saw many
    distinct values; forced here) or after it: from the ranks in shared memory up to the shared-memory
    counting's limit (compiled NVIDIA kernels), past it (and elsewhere) in the slots' counters as the
    ranks are found; one value taking most items, over several programs and a ragged tile."""
    monkeypatch.setattr(U, "_HASH_SAMPLE_MAX_DISTINCT", 0 if when == "insert" else U._HASH_SAMPLE)
    n = 2 * U._HASH_TILE + 77 if interpreter_active() else 1_000_003
    if isinstance(k, str):
        dev = torch.device(DEVICE)
        fits = [j for j in range(1, 1 << 15) if j <= U._count_smem_shape(dev, max(j, 4096), n)[1]]
        if not fits:
            pytest.skip("no shared-memory counting here")
        k = max(fits) + (k == "limit+1")
    g = torch.Generator().manual_seed(k)
    pool = torch.randperm(1 << 16, generator=g)[:k].to(torch.int32) * 30_011 - 2**30
    x = pool[torch.randint(0, k, (n,), generator=g)]
    x[torch.rand(n, generator=g) < 0.5] = pool[k // 2]
    x[-1] = pool[-1]
    vals, inv, counts = U._hash_path(x.to(DEVICE), ri, rc)
    ref = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), ref[0])
    assert (not ri and inv.numel() == 0) or torch.equal(inv.cpu(), ref[1])
    assert counts.dtype == torch.int64 and torch.equal(counts.cpu(), ref[2])


@pytest.mark.parametrize("n,distinct", [(1, 1), (40, 30), (100, 40), (4096, 4096), (5000, 3000), (1 << 16, 1 << 16)])
def test_hash_sample_counts_distinct(n, distinct):
    """The sample before a counting insert: ``SAMPLE`` items at an even stride (every item of a shorter
    input) and whether more than ``MAX_DISTINCT`` of them are distinct, at both sides of the bound."""
    g = torch.Generator().manual_seed(n)
    x = (torch.randperm(1 << 20, generator=g)[:distinct].to(torch.int32) * 1999)[torch.arange(n) % distinct]
    sample = x[torch.arange(U._HASH_SAMPLE) * max(n // U._HASH_SAMPLE, 1) % n] if n >= U._HASH_SAMPLE else x
    seen = torch.unique(sample).numel()
    for bound in (seen - 1, seen):
        state = torch.zeros(2, dtype=torch.int64, device=DEVICE)
        U._hash_sample_kernel[(1,)](x.to(DEVICE), n, state, MAX_DISTINCT=bound, SAMPLE=U._HASH_SAMPLE, num_warps=8)
        assert state.tolist() == [0, int(seen > bound)]


@pytest.mark.parametrize("n", [511, 512])
def test_unique_small_wide_input_sorts(n, monkeypatch, paths):
    """Inputs too wide for the dense path take the hash path from ``HASH_MIN_N`` items on, the sort
    path below it; the same results either way."""
    monkeypatch.setattr(U, "HASH_MIN_N", 512)
    x = (torch.randint(-30, 30, (n,), generator=torch.Generator().manual_seed(n)) * 50_331_653).to(torch.int32)
    _check_unique(x.to(DEVICE), True, True)
    assert paths == [("hash" if n >= 512 else "sort", True)]


def test_unique_hash_overflow_falls_back_to_sort(monkeypatch, paths):
    """More distinct values than the table takes (or probes run out): the sort path, same results."""
    monkeypatch.setattr(U, "HASH_SLOTS_MAX", 1 << 12)   # (the smallest table: 4096 slots)
    x = (torch.randperm(5000) * 3 - 2**20).to(torch.int32).to(DEVICE)
    _check_unique(x, True, True)
    assert paths == [("hash", False), ("sort", True)]
    del paths[:]
    monkeypatch.setattr(U, "_HASH_MAX_PROBES", 1)   # (a key whose bucket is full overflows)
    pool = torch.randint(-2**31, 2**31 - 1, (3000,), dtype=torch.int64)   # (random keys: many share a bucket)
    x = pool[torch.randint(0, 3000, (N,))].to(torch.int32).to(DEVICE)
    _check_unique(x, False, True)
    assert paths == [("hash", False), ("sort", True)]


def _count_at(monkeypatch, when):
    """As test_select's: the host count seen 'late' (worst-case buffers) or 'early' (exact outputs)."""
    if when == "late":
        monkeypatch.setattr(U.Plan, "host_count_if_ready", lambda self: None)
    elif when == "early":
        monkeypatch.setattr(U.Plan, "host_count_if_ready", lambda self: self.host_count())


@pytest.mark.parametrize("form", ["two_pass", "two_pass_count_late", "two_pass_count_early", "single_pass"])
@pytest.mark.parametrize("ri,rc", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("kind", ["few_unique", "sorted", "special", "equal"])
def test_unique_consecutive(kind, ri, rc, form, monkeypatch):
    """Every form of the run-head compaction: the bitmask two-pass form (its count stored to the
    host by pass 1: exact outputs when it has arrived before pass 2 is launched, else worst-case
    buffers, which the interpreter never takes unless forced), the single pass."""
    monkeypatch.setattr(U, "HEADS_TWO_PASS", form != "single_pass")
    _count_at(monkeypatch, form.rpartition("_")[2])
    x = make_data(kind, N, torch.float32 if kind == "special" else torch.int32)
    vals, inv, counts = ops.unique_consecutive(x, ri, rc)
    ref = torch.unique_consecutive(x.cpu(), return_inverse=ri, return_counts=rc)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert_equal(vals.cpu(), ref[0])
    if ri:
        assert_equal(inv.cpu(), ref[1])
    if rc:
        assert_equal(counts.cpu(), ref[-1])


@pytest.mark.parametrize("n", [TILE - 1, TILE, TILE + 1, 2 * TILE])
def test_unique_and_consecutive_at_tile_edges(n):
    # sizes around the select tile (the fixture's TILE under the interpreter): the last tile full,
    # one short, one item into the next; runs that end exactly at a tile boundary
    x = torch.arange(n, device=DEVICE, dtype=torch.int32) // 8
    x[-1] = 10**6 if n % 2 else x[-1]
    for ri, rc in ((True, True), (False, False)):
        got = ops.unique_consecutive(x, ri, rc)
        ref = torch.unique_consecutive(x.cpu(), return_inverse=ri, return_counts=rc)
        ref = ref if isinstance(ref, tuple) else (ref,)
        assert_equal(got[0].cpu(), ref[0])
        if ri:
            assert_equal(got[1].cpu(), ref[1])
            assert_equal(got[2].cpu(), ref[2])
        _check_unique(x.flip(0).contiguous(), ri, rc)


def test_unique_consecutive_2d_inverse_shape():
    x = torch.randint(0, 2, (5, 30), device=DEVICE)
    vals, inv, counts = ops.unique_consecutive(x, True, True)
    rv, ri, rc = torch.unique_consecutive(x.cpu(), return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), rv)
    assert_equal(inv.cpu(), ri)
    assert_equal(counts.cpu(), rc)


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.bool, torch.int8], ids=str)
@pytest.mark.parametrize("dim", [0, -1])
def test_unique_dim(dtype, dim):
    """unique / unique_consecutive over slices along ``dim``, against torch (values, inverse of
    ``x.shape[dim]`` items, counts); special floats compare as ``!=`` does."""
    x = torch.randint(0, 3, (9, 2, 2), device=DEVICE).to(dtype)
    if dtype == torch.float32:
        x[4, 1, 0] = -0.0
        x[2, 1, 1] = float("inf")
    def check(got, ref):
        for g, r in zip(got, ref):
            assert_equal(g.cpu(), r)
    check(ops.unique(x, True, True, True, dim),
          torch.unique(x.cpu(), dim=dim, return_inverse=True, return_counts=True))
    xs = x.repeat_interleave(2, dim=dim)
    check(ops.unique_consecutive(xs, True, True, dim),
          torch.unique_consecutive(xs.cpu(), dim=dim, return_inverse=True, return_counts=True))
    e = torch.empty(0, 3, device=DEVICE, dtype=dtype)
    check(ops.unique(e, True, True, True, 0), torch.unique(e.cpu(), dim=0, return_inverse=True, return_counts=True))


def test_bad_input():
    with pytest.raises(IndexError, match="Dimension out of range"):
        ops.unique(torch.zeros(3, device=DEVICE), True, False, False, 1)
    with pytest.raises(ValueError, match="0 sized"):
        ops.unique_consecutive(torch.zeros(3, 0, device=DEVICE), False, False, 0)
    # more than one zero-sized dimension: torch refuses a zero-sized dim taken (and any other, as above)
    for dim in (0, 1, -1):
        with pytest.raises(ValueError, match="zero sized dimensions is more than one"):
            ops.unique(torch.zeros(0, 0, device=DEVICE), True, True, True, dim)
    for dim, match in ((0, "zero sized dimensions is more than one"), (1, "aren't selected"),
                       (-1, "zero sized dimensions is more than one")):
        with pytest.raises(ValueError, match=match):
            ops.unique_consecutive(torch.zeros(0, 2, 0, device=DEVICE), True, True, dim)
    with pytest.raises(TypeError, match="dtype"):
        ops.unique_consecutive(torch.zeros(3, dtype=torch.complex64, device=DEVICE))
    # a 0-d tensor has no dim to take, not even 0 or -1: torch's IndexError (it was a ValueError)
    for dim in (0, -1, 1):
        with pytest.raises(IndexError, match="no dimensions"):
            ops.unique(torch.tensor(5.0, device=DEVICE), True, False, False, dim)
        with pytest.raises(IndexError, match="no dimensions"):
            ops.unique_consecutive(torch.tensor(5, device=DEVICE), True, True, dim)
        with torch._subclasses.fake_tensor.FakeTensorMode(), pytest.raises(IndexError, match="no dimensions"):
            ops.unique(torch.empty(()), True, False, False, dim)


def test_opcheck():
    x = torch.randint(0, 9, (200,), device=DEVICE)
    torch.library.opcheck(ops.unique, (x, True, True, True))
    torch.library.opcheck(ops.unique, (x.float(), True, False, True))
    torch.library.opcheck(ops.unique_consecutive, (torch.sort(x).values, True, True))
    torch.library.opcheck(ops.unique, (x[:24].view(4, 6).float(), True, True, True, 1))
    torch.library.opcheck(ops.unique_consecutive, (x.view(40, 5) % 2, True, True, 0))


def _check_large_gpu(x):
    """ops.unique without and with inverse and counts, equal to torch.unique (on the GPU)."""
    for ri, rc in ((False, False), (True, True)):
        vals, inv, counts = ops.unique(x, True, ri, rc)
        ref = torch.unique(x, return_inverse=True, return_counts=True)
        assert torch.equal(vals, ref[0])
        if ri:
            assert torch.equal(inv, ref[1]) and torch.equal(counts, ref[2])


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["two_pass", "two_pass_count_late", "two_pass_count_early", "single_pass"])
def test_unique_large_gpu(form, monkeypatch):
    monkeypatch.setattr(U, "HEADS_TWO_PASS", form != "single_pass")
    _count_at(monkeypatch, form.rpartition("_")[2])
    x = torch.randint(0, 1 << 20, (1 << 24,), device="cuda", dtype=torch.int32)
    _check_large_gpu(x)
    xs = torch.sort(x).values
    for ri, rc in ((False, False), (True, True)):
        vals, inv, counts = ops.unique_consecutive(xs, ri, rc)
        ref = torch.unique_consecutive(xs, return_inverse=True, return_counts=True)
        assert torch.equal(vals, ref[0])
        assert (not ri or torch.equal(inv, ref[1])) and (not rc or torch.equal(counts, ref[2]))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [5, 4096, 4097, (1 << 16) + 1, 1 << 21])
@pytest.mark.parametrize("edge", ["zero", "small", "below", "at"])
@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64])
def test_unique_counts_smem_edges_gpu(n, edge, dtype):
    """Counts over ranges of fewer values than the shared-memory counting's limit (``COUNT_SMEM_BINS``,
    the slot buffer, the items of a program) come from shared-memory counters; from the limit on, from
    the atomics per item (or, where the limit is the slot buffer's size, n <= 4096, the hash or sort
    path): both sides of the limit, one program or several, a ragged last tile, with an offset minimum,
    the extremes present, and one value taking most items (contended counters). Inputs of at most
    ``_DENSE_SMALL_N`` items count per tile whatever the range (the same spans, the other kernel)."""
    bins, limit, _ = U._count_smem_shape(torch.device("cuda"), min(max(n, 4096), U.RANGE_CAP_MAX), n)
    if bins == 0:
        pytest.skip("no shared-memory counting on this GPU")
    span = {"zero": 0, "small": 100, "below": limit - 1, "at": limit}[edge]
    lo = -1000
    x = torch.randint(lo, lo + span + 1, (n,), device="cuda", dtype=torch.int64)
    if n > 8:
        x[torch.rand(n, device="cuda") < 0.6] = lo + span // 3
    x[0], x[-1] = lo, lo + span
    x = x.to(dtype)
    for ri in (False, True):
        vals, inv, counts = ops.unique(x, True, ri, True)
        ref = torch.unique(x, return_inverse=True, return_counts=True)
        assert torch.equal(vals, ref[0]) and torch.equal(counts, ref[2])
        if ri:
            assert torch.equal(inv, ref[1])


@pytest.mark.gpu
@pytest.mark.parametrize("n", [5, 4096, (1 << 16) + 1, 1 << 21])
@pytest.mark.parametrize("span", [0, 31, 32, 4095, (1 << 20) - 1, 1 << 20, (1 << 22) - 1, 1 << 22])
def test_unique_bitmap_edges_gpu(n, span):
    """The dense path's range edges: within the shared-memory bitmap (up to BITMAP_BITS values, or
    the slot buffer when it is smaller), just past it (global marking), and past the slot buffer
    (the sort path), with an offset minimum, negative values and the extremes present (inputs of at
    most ``_DENSE_SMALL_N`` items mark per tile: the same edges of the slot buffer)."""
    lo = -123_457
    x = torch.randint(lo, lo + span + 1, (n,), device="cuda", dtype=torch.int64)
    x[0], x[-1] = lo, lo + span
    for dtype in (torch.int64, torch.int32):
        xd = x.to(dtype)
        for ri in (False, True):
            vals, inv, _ = ops.unique(xd, True, ri, False)
            ref = torch.unique(xd, return_inverse=True)
            assert torch.equal(vals, ref[0])
            if ri:
                assert torch.equal(inv, ref[1])


@pytest.mark.gpu
@pytest.mark.parametrize("count", ["as_timed", "late", "early"])
@pytest.mark.parametrize("distinct", [2, 1 << 10, 1 << 20, 5 << 20])
def test_unique_hash_path_large_gpu(distinct, count, paths, monkeypatch):
    """Wide int32 keys at 2^24 items: the hash path with 2, 2^10 and 2^20 distinct values; with more
    distinct values than the table's 2^22 slots, the overflow to the sort path (whose run heads see
    their host count as timed, late or early)."""
    _count_at(monkeypatch, count)
    g = torch.Generator(device="cuda").manual_seed(distinct)
    pool = torch.randint(-2**31, 2**31 - 1, (distinct,), device="cuda", dtype=torch.int64, generator=g)
    x = pool[torch.randint(0, distinct, (1 << 24,), device="cuda", generator=g)].to(torch.int32)
    _check_large_gpu(x)
    vals, _, counts = ops.unique(x, True, False, True)   # (counts alone: int32 ranks only the counting reads)
    ref = torch.unique(x, return_counts=True)
    assert torch.equal(vals, ref[0]) and torch.equal(counts, ref[1])
    assert paths == ([("hash", True)] * 3 if distinct <= U.HASH_SLOTS_MAX // 2 else
                     [("hash", False), ("sort", True)] * 3)


@pytest.mark.parametrize("form", ["two_pass", "single_pass"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64], ids=str)
def test_unique_half_and_double_signed_zeros_and_nans(dtype, form, monkeypatch):
    """Runs of -0.0 and +0.0 are one run (equal), every NaN its own (unequal to everything), in
    every float width (bfloat16 compared as float32: the interpreter compares its raw bits)."""
    monkeypatch.setattr(U, "HEADS_TWO_PASS", form == "two_pass")
    g = torch.Generator().manual_seed(5)
    pool = torch.tensor([-0.0, 0.0, math.nan, 1.0, -1.0, math.inf], dtype=torch.float64)
    x = pool[torch.randint(0, len(pool), (TILE + 37,), generator=g)].to(dtype).to(DEVICE)
    vals, inv, counts = ops.unique_consecutive(x, True, True)
    rv, ri, rc = torch.unique_consecutive(x.cpu(), return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), rv)
    assert_equal(inv.cpu(), ri)
    assert_equal(counts.cpu(), rc)
    vals, inv, counts = ops.unique(x, True, True, True)
    rv, ri, rc = torch.unique(x.cpu(), sorted=True, return_inverse=True, return_counts=True)
    assert_equal(vals.cpu(), rv)
    assert_equal(counts.cpu(), rc)
    # (the inverse: torch's where the item is a number; each NaN gets a NaN slot of its own, in input
    # order, where torch's CPU order among NaNs is its sort's)
    inv, nan = inv.cpu(), torch.isnan(x.cpu())
    assert_equal(inv[~nan], ri[~nan])
    assert torch.isnan(vals.cpu()[inv[nan]]).all() and bool((inv[nan].diff() > 0).all())
