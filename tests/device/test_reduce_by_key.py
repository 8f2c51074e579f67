"""ReduceByKey (tritoncub.device.reduce_by_key) against a sequential reference."""
import functools
import operator

import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, assert_close, assert_equal
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device.reduce_by_key import reduce_by_key

TILE = 64
N = 3 * TILE + 13 if interpreter_active() else 1_000_003


@pytest.fixture(autouse=True, params=[(0, True), (2, True), (32, True), (2, False), (32, False)],
                ids=["items", "mixed", "words", "mixed-scan", "words-scan"])
def store_form(request, monkeypatch):
    """Every test with pass 2 writing item by item (every tile that has something to write), word by
    word in every tile, and each tile choosing by its fullest word (at most 2 heads and ends); sums of
    the word-by-word tiles from word sums (the default) or from the tile's scan ('-scan')."""
    import tritoncub.device.reduce_by_key as R
    monkeypatch.setattr(R, "_SPARSE_ROUNDS", request.param[0])
    monkeypatch.setattr(R, "WORD_SUMS", request.param[1])


@pytest.fixture(autouse=True)
def small_policy():
    if interpreter_active():
        with policy.override("reduce_by_key", {"TILE": TILE, "num_warps": 4}):
            yield
    else:
        yield


@triton.jit
def _three_args(a, b, c):
    return a


@triton.jit
def keep_first(a, b):  # associative, not commutative
    return a


def _keys(n, avg):
    reps = torch.randint(1, 2 * avg + 1, (n,))
    return torch.repeat_interleave(torch.randint(0, 3, (n,)), reps)[:n].to(DEVICE)


@pytest.mark.parametrize("avg", [1, 150])
@pytest.mark.parametrize("combine", ["sum", "min", "max", "first"])
def test_reduce_by_key_int(avg, combine):
    keys = _keys(N, avg)
    vals = torch.randint(-50, 50, (N,), device=DEVICE, dtype=torch.int32)
    k, v, nr = reduce_by_key(keys, vals, keep_first if combine == "first" else combine)
    uk, cnt = torch.unique_consecutive(keys.cpu(), return_counts=True)
    segs = torch.split(vals.cpu(), cnt.tolist())
    fn = {"sum": lambda s: s.sum(), "min": lambda s: s.min(), "max": lambda s: s.max(), "first": lambda s: s[0]}[combine]
    ref = torch.stack([fn(s) for s in segs]).to(torch.int32)
    assert int(nr) == uk.numel()
    assert_equal(k[: int(nr)].cpu(), uk)
    assert_equal(v[: int(nr)].cpu(), ref)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_reduce_by_key_float_sum(dtype):
    keys = _keys(N, 50).float()
    vals = torch.randn(N, device=DEVICE).to(dtype)
    k, v, nr = reduce_by_key(keys, vals, "sum")
    uk, cnt = torch.unique_consecutive(keys.cpu(), return_counts=True)
    ref = torch.stack([s.double().sum() for s in torch.split(vals.cpu(), cnt.tolist())]).to(dtype)
    assert_equal(k[: int(nr)].cpu(), uk)
    tol = 1e-2 if dtype == torch.float16 else 1e-4
    assert_close(v[: int(nr)].cpu(), ref, rtol=tol, atol=tol)
    # deterministic: the same bits on a second run
    _, v2, _ = reduce_by_key(keys, vals, "sum")
    assert torch.equal(v[: int(nr)], v2[: int(nr)])


@pytest.mark.parametrize("block", [1, 2, 4])
@pytest.mark.parametrize("keys_kind", ["runs", "equal"])
@pytest.mark.parametrize("combine", ["sum", "max", "first"])
def test_fixup_carry_across_steps(monkeypatch, combine, keys_kind, block):
    """The fix-up works on blocks of BLOCK tiles: with 1- and 2-tile blocks the running run crosses
    blocks (long runs span several; all-equal keys make one run through every block, whose carry
    chains through all the block aggregates)."""
    import tritoncub.device.reduce_by_key as R
    monkeypatch.setattr(R, "_FIXUP_BLOCK", block)
    n = 9 * TILE + 13 if interpreter_active() else N    # (10 tiles: block 4 has a partly-valid chunk)
    keys = _keys(n, 80) if keys_kind == "runs" else torch.full((n,), 7, device=DEVICE)
    vals = torch.randint(-50, 50, (n,), device=DEVICE, dtype=torch.int32)
    k, v, nr = reduce_by_key(keys, vals, keep_first if combine == "first" else combine)
    uk, cnt = torch.unique_consecutive(keys.cpu(), return_counts=True)
    fn = {"sum": lambda s: s.sum(), "max": lambda s: s.max(), "first": lambda s: s[0]}[combine]
    ref = torch.stack([fn(s) for s in torch.split(vals.cpu(), cnt.tolist())]).to(torch.int32)
    assert int(nr) == uk.numel()
    assert_equal(k[: int(nr)].cpu(), uk)
    assert_equal(v[: int(nr)].cpu(), ref)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
@pytest.mark.parametrize("combine", ["min", "max"])
def test_reduce_by_key_float_min_max(dtype, combine):
    # float min/max per run, with ±inf and NaN among the values: a run holding a NaN gives NaN, as
    # torch's amin/amax (signed zeros are left out: which of -0.0 and +0.0 a min returns is not part
    # of the contract)
    keys = _keys(N, 20)
    vals = torch.randn(N, device=DEVICE).to(dtype)
    vals[::11] = float("inf")
    vals[5::13] = -float("inf")
    vals[7::97] = float("nan")
    k, v, nr = reduce_by_key(keys, vals, combine)
    uk, cnt = torch.unique_consecutive(keys.cpu(), return_counts=True)
    segs = torch.split(vals.cpu(), cnt.tolist())
    ref = torch.stack([s.min() if combine == "min" else s.max() for s in segs])
    assert int(nr) == uk.numel()
    assert_equal(k[: int(nr)].cpu(), uk)
    assert_equal(v[: int(nr)].cpu(), ref)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float64, torch.int8, torch.uint8, torch.int16])
@pytest.mark.parametrize("n", [TILE + 32, 2 * TILE - 1])
def test_reduce_by_key_nan_keys_and_value_dtypes(n, dtype):
    """NaN keys (each its own run), -0.0 == 0.0, a ragged tail ending on a word boundary short of
    the tile (TILE + 32), bf16 and fp64 values, narrow integer sums that wrap."""
    keys = torch.tensor([0.0, -0.0, float("nan"), float("nan"), 1.0, 1.0, float("inf")], device=DEVICE)
    keys = keys[torch.randint(0, 7, (n,), device=DEVICE)].sort().values   # (sort puts NaNs last, together)
    keys[: n // 3] = torch.where(torch.rand(n // 3, device=DEVICE) < 0.5, 0.0, -0.0)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        vals = torch.randint(info.min, info.max + 1, (n,), device=DEVICE, dtype=torch.int64).to(dtype)
    else:
        vals = torch.randn(n, device=DEVICE).to(dtype)
    k, v, nr = reduce_by_key(keys, vals, "sum")
    kc = keys.cpu()
    heads = torch.ones(n, dtype=torch.bool)
    heads[1:] = kc[1:] != kc[:-1]          # (NaN != NaN: every NaN starts a run)
    starts = torch.nonzero(heads).flatten()
    lengths = torch.diff(torch.cat([starts, torch.tensor([n])]))
    segs = torch.split(vals.cpu(), lengths.tolist())
    if not dtype.is_floating_point:
        ref = torch.stack([s.to(torch.int64).sum() for s in segs]).to(dtype)    # wraps like CUB
    else:
        ref = torch.stack([s.double().sum() for s in segs]).to(dtype)
    assert int(nr) == starts.numel()
    assert_equal(k[: int(nr)].cpu(), kc[starts], signed_zero=True)
    if not dtype.is_floating_point:
        assert_equal(v[: int(nr)].cpu(), ref)
    else:
        tol = 2e-2 if dtype == torch.bfloat16 else 1e-9
        assert_close(v[: int(nr)].cpu(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [0, 1, 2, TILE, TILE + 1])
def test_reduce_by_key_small(n):
    keys = torch.zeros(n, device=DEVICE, dtype=torch.int64)
    vals = torch.ones(n, device=DEVICE, dtype=torch.int64)
    k, v, nr = reduce_by_key(keys, vals)
    assert int(nr) == (1 if n else 0)
    if n:
        assert int(v[0]) == n and int(k[0]) == 0


def test_bad_input():
    x = torch.zeros(4, device=DEVICE)
    with pytest.raises(ValueError, match="combine"):
        reduce_by_key(x, x, "prod")
    with pytest.raises(ValueError, match="one shape"):
        reduce_by_key(x, torch.zeros(3, device=DEVICE))
    with pytest.raises(ValueError, match="one shape"):   # (as many items, paired how?)
        reduce_by_key(torch.zeros(2, 2, device=DEVICE), x)
    with pytest.raises(TypeError, match="combine must take 2 positional arguments"):
        reduce_by_key(x, x, _three_args)


@pytest.mark.gpu
@pytest.mark.parametrize("block,kind,combine", [(64, "runs", "sum"), (1024, "runs", "sum"), (64, "long", "sum"),
                                                (64, "long", "first")])
def test_fixup_many_blocks_gpu(monkeypatch, block, kind, combine):
    """Tens of fix-up blocks, each carry reduced over the earlier blocks' aggregates with part of the
    lanes valid: an order-dependent 'last value' reduction gave wrong run sums here on the GPU (but
    not under the interpreter). 'long': runs of about 2^18 items, so blocks hold no head and the
    carry chains through several of them (with a non-commutative operator too)."""
    import tritoncub.device.reduce_by_key as R
    monkeypatch.setattr(R, "_FIXUP_BLOCK", block)
    n = (1 << 22) if block == 64 else (1 << 26)
    keys = torch.sort(torch.randint(0, (n >> 6) if kind == "runs" else 16, (n,), device=DEVICE)).values
    vals = torch.randint(-50, 50, (n,), device=DEVICE, dtype=torch.int32)
    k, v, nr = reduce_by_key(keys, vals, keep_first if combine == "first" else combine)
    uk, cnt = torch.unique_consecutive(keys, return_counts=True)
    if combine == "first":
        ref = vals[torch.cumsum(cnt, 0) - cnt]
    else:
        ref = torch.segment_reduce(vals.double(), "sum", lengths=cnt).to(torch.int32)
    assert int(nr) == uk.numel()
    assert_equal(k[: int(nr)], uk)
    assert_equal(v[: int(nr)], ref)


def test_word_sums_across_words():
    """Tiles of 8 words: runs that carry through head-less words within a tile and across tiles, runs
    of -0.0 (their sum is -0.0, as combining in input order gives), against a sequential reference."""
    ctx = policy.override("reduce_by_key", {"TILE": 256, "num_warps": 4}) if interpreter_active() else None
    n = 3 * 256 + 77 if interpreter_active() else 100_003
    reps = torch.randint(1, 120, (n,))
    keys = torch.repeat_interleave(torch.arange(n), reps)[:n].to(DEVICE)
    vals = torch.randn(n, device=DEVICE, dtype=torch.float64)
    run_id = torch.cumsum(torch.cat([torch.ones(1, dtype=torch.int64), (keys[1:] != keys[:-1]).long().cpu()]), 0) - 1
    vals[(run_id % 3 == 0).to(DEVICE)] = -0.0
    if ctx is not None:
        with ctx:
            k, v, nr = reduce_by_key(keys, vals, "sum")
    else:
        k, v, nr = reduce_by_key(keys, vals, "sum")
    uk, cnt = torch.unique_consecutive(keys.cpu(), return_counts=True)
    ref = []
    for seg in torch.split(vals.cpu(), cnt.tolist()):
        acc = seg[0]
        for item in seg[1:]:
            acc = acc + item
        ref.append(acc)
    ref = torch.stack(ref)
    assert int(nr) == uk.numel()
    assert_equal(k[: int(nr)].cpu(), uk)
    assert_close(v[: int(nr)].cpu(), ref, rtol=1e-9, atol=1e-9)
    assert torch.equal(torch.signbit(v[: int(nr)].cpu()), torch.signbit(ref))   # (-0.0 runs stay -0.0)


@pytest.mark.parametrize("word_keys", [0, 1])
@pytest.mark.parametrize("key_dtype", [torch.int32, torch.float32])
@pytest.mark.parametrize("avg", [1, 3, 150])
def test_reduce_by_key_first_keys(avg, key_dtype, word_keys):
    """32-bit keys with pass 1 storing each word's first head key (``WORD_KEYS`` 1; pass 2's first round
    of key writes takes it) and without: keys (float ones with -0.0 beside +0.0 and NaNs, each NaN its
    own run) and sums against torch, in every store form."""
    keys = _keys(N, avg).to(key_dtype)
    if key_dtype.is_floating_point:
        keys[keys == 0] = -0.0
        keys[(torch.arange(N, device=DEVICE) % 7 == 0) & (keys == 0)] = 0.0   # (equal to -0.0: same run)
        keys[torch.arange(N, device=DEVICE) % 29 == 5] = float("nan")
    vals = torch.randint(-50, 50, (N,), device=DEVICE, dtype=torch.int32)
    tile = {"TILE": TILE, "num_warps": 4} if interpreter_active() else {}
    with policy.override("reduce_by_key", {**tile, "WORD_KEYS": word_keys}):
        k, v, nr = reduce_by_key(keys, vals, "sum")
    heads = torch.ones(N, dtype=torch.bool)
    kc = keys.cpu()
    heads[1:] = kc[1:] != kc[:-1]
    run = torch.cumsum(heads.long(), 0) - 1
    ref = torch.zeros(int(heads.sum()), dtype=torch.int64).index_add_(0, run, vals.cpu().long()).to(torch.int32)
    assert int(nr) == ref.numel()
    assert_equal(k[: int(nr)].cpu().view(torch.int32), kc[heads].view(torch.int32))   # (the heads' bits)
    assert_equal(v[: int(nr)].cpu(), ref)


@pytest.mark.parametrize("persist", [4, 24])
@pytest.mark.parametrize("combine", ["sum", "max", "first"])
@pytest.mark.parametrize("key_dtype,word_keys", [(torch.int64, 0), (torch.int32, 1)], ids=["int64", "int32-word-keys"])
def test_reduce_by_key_persistent(monkeypatch, persist, combine, key_dtype, word_keys):
    """Pass 2 on a persistent grid (``PERSIST``: each program takes every grid-th tile and loads the next
    before it works on the current one), in every store form, with one SM patched in so the programs
    loop: 4 programs over 10 tiles under the interpreter (24: a program per tile, each prefetching past
    the end), 4 or 24 over ~490 on a GPU; 32-bit keys with pass 1's kept first keys too (``WORD_KEYS``).
    Float values with runs of -0.0 and runs crossing tiles and programs, against a sequential reference
    (sums within float32 rounding, max and the first value exact)."""
    import tritoncub.device.reduce_by_key as R
    n = 9 * TILE + 13 if interpreter_active() else N
    monkeypatch.setattr(R, "num_sms", lambda device: 1)
    keys = torch.repeat_interleave(torch.arange(n), torch.randint(1, 41, (n,)))[:n].to(key_dtype).to(DEVICE)
    vals = torch.randn(n, device=DEVICE)
    vals[(torch.arange(n, device=DEVICE) // 96) % 3 == 1] = -0.0    # (runs of -0.0 sum to -0.0)
    tile = {"TILE": TILE, "num_warps": 4} if interpreter_active() else {}
    with policy.override("reduce_by_key", {**tile, "PERSIST": persist, "WORD_KEYS": word_keys}):
        k, v, nr = reduce_by_key(keys, vals, keep_first if combine == "first" else combine)
        assert policy.override_hits("reduce_by_key") > 0
    uk, cnt = torch.unique_consecutive(keys.cpu(), return_counts=True)
    segs = torch.split(vals.cpu().double(), cnt.tolist())
    # (sums from the first item, as the op's: torch.sum and cumsum start from +0.0, so their sum of a run
    # of -0.0 is +0.0)
    fn = {"sum": lambda s: torch.tensor(functools.reduce(operator.add, s.tolist())), "max": lambda s: s.max(),
          "first": lambda s: s[0]}[combine]
    ref = torch.stack([fn(s) for s in segs]).float()
    assert int(nr) == uk.numel()
    assert_equal(k[: int(nr)].cpu(), uk)
    got = v[: int(nr)].cpu()
    if combine == "sum":
        assert_close(got, ref, rtol=1e-4, atol=1e-4)
    else:
        assert_equal(got, ref)
    zero = ref == 0                                   # (the all -0.0 runs, and +-0.0 maxima)
    assert zero.any() and torch.equal(torch.signbit(got[zero]), torch.signbit(ref[zero]))
