"""Top-k against torch: values equal torch.topk's; indices follow the documented tie rule."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

from helpers import (ALL_DTYPES, DEVICE, assert_equal, count_calls, deterministic_algorithms, interpreter_replays,
                     make_data)
from tritoncub import policy
from tritoncub._utils import interpreter_active
from tritoncub.device import topk as tk

def _np_take(x, a, i):
    """x's items at positions i along the last axis (numpy; torch lacks gather for uint16/32/64 on CPU)."""
    v = np.take_along_axis(a, i, -1)
    if x.dtype == getattr(torch, "uint64", None):
        return torch.from_numpy(np.ascontiguousarray(v).view(np.int64)).view(torch.uint64)
    return torch.from_numpy(np.ascontiguousarray(v)).to(x.dtype)


KINDS = ["special", "equal", "few_unique", "random", "sorted", "reversed"]

# small thresholds so that the long-row paths run on tiny rows
CAND = dict(ROW_MAX_BLOCK=16, CHUNK=32, CAND_K_MAX=8, RS_BLOCK=32, RS_TILES=2)
RADIX = dict(ROW_MAX_BLOCK=16, CHUNK=32, CAND_K_MAX=1, RS_BLOCK=32, RS_TILES=2)


def adversarial_rows(rows, L, dtype, seed=0):
    return torch.stack([make_data(KINDS[r % len(KINDS)], L, dtype, seed=seed + r) for r in range(rows)])


def stable_ref(x, k, largest):
    """The tie rule of the tile and candidate paths: a stable sort, first k."""
    if x.dtype in (getattr(torch, "uint16", None), getattr(torch, "uint32", None), getattr(torch, "uint64", None)):
        from helpers import _np
        a = _np(x)
        if largest:
            j = np.argsort(a[..., ::-1], axis=-1, kind="stable")
            i = (a.shape[-1] - 1 - j)[..., ::-1].copy()
        else:
            i = np.argsort(a, axis=-1, kind="stable")
        v = _np_take(x, a, i)
        i = torch.from_numpy(i.astype(np.int64))
    else:
        v, i = torch.sort(x.cpu(), dim=-1, descending=largest, stable=True)
    return v[..., :k], i[..., :k]


def torch_topk_values(x, k, largest):
    try:
        return torch.topk(x.cpu(), k, largest=largest)[0]
    except (NotImplementedError, RuntimeError):   # uint16/32/64 on some torch versions
        return stable_ref(x, k, largest)[0]


def check_exact(x, k, largest=True):
    v, i = tk.topk(x, k, largest=largest)
    rv, ri = stable_ref(x, k, largest)
    assert_equal(v.cpu(), rv, signed_zero=False, msg="values")
    assert_equal(i.cpu(), ri, msg="indices")
    # values equal torch.topk's (where torch implements topk for the dtype)
    tv = torch_topk_values(x, k, largest)
    assert_equal(v.cpu(), tv, msg="torch.topk values")


def check_segments(x, offs, k, largest, v, i):
    """segmented_topk's result (v, i) for segments ``offs`` of ``x``: each segment's first min(k, length)
    slots its stable top items (the tile path's tie rule; the items' own bits: -0.0 stays -0.0), the rest value
    0 and index -1."""
    o = offs.tolist()
    for s_, (a, b) in enumerate(zip(o[:-1], o[1:])):
        m = min(k, b - a)
        rv, ri = stable_ref(x[a:b], m, largest)
        assert_equal(v[s_, :m].cpu(), rv, signed_zero=True, msg=f"segment {s_}")
        assert_equal(i[s_, :m].cpu(), ri + a, msg=f"segment {s_}")
        assert (i[s_, m:] == -1).all() and (v[s_, m:] == 0).all()


def check_set(x, k, largest=True, sorted=True):
    """Radix-select path: values equal torch's; indices distinct and pointing at the values."""
    v, i = tk.topk(x, k, largest=largest, sorted=sorted)
    tv = torch_topk_values(x, k, largest)
    if sorted:
        assert_equal(v.cpu(), tv, msg="values")
    else:
        assert_equal(torch.sort(v.cpu(), -1)[0], torch.sort(tv, -1)[0], msg="value set")
    assert_equal(x.cpu().gather(-1, i.cpu()), v.cpu(), msg="indices point at values")
    for row in i.cpu().reshape(-1, k):
        assert len(set(row.tolist())) == k, "indices repeat"


# -- tile path ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_topk_rows_every_dtype(dtype):
    j = ALL_DTYPES.index(dtype)
    x = adversarial_rows(6, 21, dtype, seed=j)
    check_exact(x, 5, largest=j % 2 == 0)


@pytest.mark.parametrize("L,k", [(1, 1), (7, 7), (8, 3), (9, 8), (100, 17), (128, 8)])
def test_topk_rows_sizes(L, k):
    rows = 40 if L == 128 else 5   # 40 rows of 128: several programs
    x = adversarial_rows(rows, L, torch.float32, seed=L)
    check_exact(x, k, largest=True)
    check_exact(x, k, largest=False)


WIDE_DTYPES = [d for d in ALL_DTYPES if d.itemsize == 8]


@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=str)
@pytest.mark.parametrize("L,k,max_keys", [(40, 5, 1 << 24), (33, 33, 1 << 24), (40, 7, 100), (300, 17, 1 << 24)]
                         + ([] if interpreter_active() else [(129, 1, 1 << 24), (4096, 100, 1 << 24), (1000, 9, 2500)]))
@pytest.mark.parametrize("first_k", [False, True], ids=["sort_rows", "first_k"])
def test_topk_wide_rows_by_sort(dtype, L, k, max_keys, first_k, monkeypatch):
    """Rows of 64-bit keys that the block radix sort takes are sorted (stable) and the first k kept: by its
    first-k variant (``first_k``: one sort launch, the rows listed as segments; where it refuses, as below), or
    sorted whole at most max_keys keys a sort (whole rows; 100: two rows of 40 at once): the tile path's tie
    rule, both orders, sorted or not. (The block radix sort faked as taking rows of 33 keys and more: sort_rows
    then takes its CPU path, and a stand-in the first-k kernel's place; on a GPU rows of 129 keys and more go to
    the real kernels, which the GPU-only sizes exercise: their smallest and largest rows, and two rows a sort.)"""
    monkeypatch.setattr(tk, "_WIDE_ROWS_BY_SORT", True)
    monkeypatch.setattr(tk, "_WIDE_ROWS_FIRST_K", first_k)
    monkeypatch.setattr(tk, "_BY_SORT_MAX_KEYS", max_keys)
    really_sorted = tk.block_radix_sorts_rows(L, 64, torch.device(DEVICE))   # (on a GPU: the real kernel's rows)
    monkeypatch.setattr(tk, "block_radix_sorts_rows", lambda length, key_bits, device: length >= 33)
    by_sort = count_calls(monkeypatch, tk, "_stable_topk_rows")
    sorts = count_calls(monkeypatch, tk, "radix_sort_rows")
    x = adversarial_rows(7, L, dtype, seed=L)
    first_k_calls = _recorded_first_k(monkeypatch, x)
    for largest in (True, False):
        check_exact(x, k, largest=largest)
        v, i = tk.topk(x, k, largest=largest, sorted=False)
        rv, ri = stable_ref(x, k, largest)
        assert_equal(v.cpu(), rv, signed_zero=False, msg="values, sorted=False")
        assert_equal(i.cpu(), ri, msg="indices, sorted=False")
    # (a refusal of the first-k kernel, e.g. a block that the policy gives to the tile sort: the whole sort)
    refused = sum(not taken for _, _, taken in first_k_calls)
    assert ([c[:2] for c in first_k_calls] == 4 * [(max(tk.MIN_BLOCK, 1 << (L - 1).bit_length()), 7)]) if first_k \
        else first_k_calls == []
    if interpreter_active() or really_sorted:   # (the stand-in, or rows the real kernel takes: never refused)
        assert refused == 0
    whole = refused if first_k else 4
    assert len(by_sort) == whole
    assert len(sorts) == whole * -(-7 // max(1, max_keys // L))   # (e.g. 7 rows two at a time: 4 sorts a call)
    if first_k:   # a refusal, launching nothing: the rows are sorted whole
        monkeypatch.setattr(tk, "block_radix_first_k", lambda *args, **kwargs: False)
        del by_sort[:]
        check_exact(x, k)
        assert len(by_sort) == 1
    # shorter rows, and 32-bit keys, keep the tile path; so does the constant off
    first_k_calls = _recorded_first_k(monkeypatch, x)
    del by_sort[:]
    check_exact(adversarial_rows(3, 32, dtype, seed=1), 4)
    check_exact(adversarial_rows(3, 40, torch.float32, seed=1), 4)
    monkeypatch.setattr(tk, "_WIDE_ROWS_BY_SORT", False)
    check_exact(x, k)
    assert by_sort == [] and first_k_calls == []


def test_topk_float_specials():
    x = adversarial_rows(4, 12, torch.float32, seed=1)
    x[0] = float("nan")
    x[1, ::2] = -0.0
    x[1, 1::2] = 0.0
    x[2, :6] = torch.tensor([float("nan"), -float("inf"), float("inf"), -0.0, 0.0, float("nan")])
    for k in (1, 4, 12):
        check_exact(x, k, True)
        check_exact(x, k, False)


def test_topk_dims_and_shapes():
    x = make_data("few_unique", 4 * 5 * 6, torch.int32, seed=2).view(4, 5, 6)
    for dim in (0, 1, -1):
        v, i = tk.topk(x, 3, dim=dim)
        rv, _ = torch.topk(x.cpu(), 3, dim=dim)
        assert_equal(v.cpu(), rv)
        assert_equal(x.cpu().gather(dim, i.cpu()), rv)
    v, i = tk.topk(torch.tensor(3.0, device=DEVICE), 1)
    assert v.shape == () and v.item() == 3.0 and i.item() == 0
    v, i = tk.topk(torch.empty(0, 5, device=DEVICE), 2)
    assert v.shape == (0, 2) and i.shape == (0, 2)
    v, i = tk.topk(x, 0)
    assert v.shape == (4, 5, 0) and i.dtype == torch.int64
    v, i = tk.topk(x, 6, sorted=False)   # k = row length
    assert_equal(torch.sort(v.cpu(), -1)[0], torch.sort(x.cpu(), -1)[0])


def test_topk_policy_configs():
    x = adversarial_rows(40, 30, torch.float32, seed=8)
    for cfg in (dict(TILE_ITEMS=1024, num_warps=4), dict(TILE_ITEMS=4096, num_warps=8),
                dict(TILE_ITEMS=64, NETWORK="tl")):
        with policy.override("topk", cfg):
            check_exact(x[:4] if cfg.get("NETWORK") == "tl" else x, 6)   # tl.topk: slow interpreted


# -- long rows: running k-best and radix select ------------------------------------------------------

@pytest.fixture(params=["bitonic", "filter", "filter-words", "filter-fallback", "filter-raised"])
def cand_rounds(request, monkeypatch):
    """The running k-best's rounds: bitonic top-k of each chunk; the group-maxima filter (64-item chunks,
    so rows take several programs, the last round over their candidates), its threshold taken on the
    keys first, or on the packed words only ("filter-words"); the filter with one group
    and one slot per next_pow2(k), so that nearly every chunk has more words at the threshold than slots
    and takes the filter's bitonic fallback; these with 2 items per group at least (the 64-item chunks
    stand). "filter-raised": the shipped fewest items per group, which raises the chunk to 32 next_pow2(k)."""
    from tritoncub.device import topk as T
    if request.param != "filter-raised":
        monkeypatch.setattr(T, "_FILTER_MIN_GROUP_ITEMS", 2)
    if request.param == "filter-words":
        monkeypatch.setattr(T, "_FILTER_KEY_THRESHOLD", False)
    if request.param == "filter-fallback":
        monkeypatch.setattr(T, "_FILTER_GROUPS_PER_K", 1)
        monkeypatch.setattr(T, "_FILTER_CAP_PER_K", 1)
    if request.param == "bitonic":
        return dict(CAND, FILTER=0)
    return dict(CAND, FILTER=1, FILTER_CHUNK=64, FILTER_MAXNREG=64 if request.param == "filter" else 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int8], ids=str)
def test_topk_candidates_path(dtype, cand_rounds):
    x = adversarial_rows(3, 90, dtype, seed=3)
    with policy.override("topk", cand_rounds):
        check_exact(x, 5, True)
        check_exact(x, 8, False)
        check_exact(x, 1, True)    # top 1: the network reduces to a row maximum
    if dtype == torch.float32 and cand_rounds["FILTER"] == 0:
        with policy.override("topk", dict(cand_rounds, NETWORK="tl")):
            check_exact(x, 3, True)


@pytest.mark.parametrize("max_len, path", [(89, "_radix_select"), (90, "_chunk_topk")])
def test_topk_cand_max_len_picks_path(monkeypatch, max_len, path):
    """Rows longer than CAND_MAX_LEN take the radix select even where k fits the running k-best; rows
    of exactly CAND_MAX_LEN keys keep the candidates (the stable top k; the radix select's ties may
    come from any position, as torch.topk's)."""
    calls = []
    real = getattr(tk, path)
    monkeypatch.setattr(tk, path, lambda *a, **kw: (calls.append(path), real(*a, **kw))[1])
    x = adversarial_rows(3, 90, torch.float32, seed=5)
    with policy.override("topk", dict(CAND, CAND_MAX_LEN=max_len)):
        (check_set if path == "_radix_select" else check_exact)(x, 5, True)
    assert calls == [path]


@pytest.mark.parametrize("key_threshold", [True, False])
def test_topk_filter_counts(key_threshold):
    """The filter keeps every word of the chunk's top K2 and at most CAP words per chunk, zeros after them;
    chunks whose threshold admits more than CAP words (data periodic in the group stride) take the
    bitonic fallback and keep exactly the top K2. Row 2 is all-equal keys: the key threshold admits every
    item, the packed words (distinct) exactly the first K2."""
    from tritoncub.device import topk as T
    from tritoncub.device.segmented_sort import key_meta, bits_view
    k2, chunk = 8, 1024
    groups, cap = T._FILTER_GROUPS_PER_K * k2, T._FILTER_CAP_PER_K * k2
    periodic = torch.where(torch.arange(chunk) % groups == 0, 1.0, 0.0)       # 32 large items in one group
    periodic[::groups] += torch.arange(chunk // groups) * 0.5                 # ... and distinct
    rows = torch.stack([torch.randn(2 * chunk + 37), torch.cat([periodic, periodic, torch.randn(37)]),
                        torch.full((2 * chunk + 37,), -1.5)]).to(DEVICE)
    n = rows.shape[1]
    nchunks = -(-n // chunk)
    out = torch.full((3, nchunks * cap), -7, dtype=torch.int64, device=DEVICE)
    meta = key_meta(torch.float32)
    rb = torch.tensor([0, n, 2 * n], device=DEVICE)
    rl = torch.tensor([n, n, n], device=DEVICE)
    T._topk_filter_kernel[(nchunks, 3)](bits_view(rows).view(-1), out, out, rb, rl, 0, CHUNK=chunk, LOG_CHUNK=10,
                                        GROUPS=groups, LOG_GROUPS=groups.bit_length() - 1, CAP=cap, K2=k2,
                                        K_LOG=3, FROM_KEYS=True, ASCENDING=False, KEY_THRESHOLD=key_threshold,
                                        **meta)
    for r in range(3):
        for c in range(nchunks):
            words = out[r, c * cap:(c + 1) * cap].cpu()
            x = rows[r, c * chunk:(c + 1) * chunk].cpu()
            cols = ((0xFFFFFFFF - (words & 0xFFFFFFFF)) - c * chunk)[words != 0]
            kept = set(cols.tolist())
            top = torch.sort(x, descending=True, stable=True)[1][:k2].tolist()
            assert set(top) <= kept, (r, c)
            assert (words[len(cols):] == 0).all() and (words[:len(cols)] != 0).all()
            if (r == 1 and c < 2) or r == 2:   # periodic and all-equal chunks: exactly the top K2
                assert sorted(kept) == sorted(top)


@pytest.fixture(params=["fused", "overflow"])
def radix_finish(request, monkeypatch):
    """The radix select's end: one program per row over the candidates (``_rs_finish_kernel``), or
    (a one-item candidate buffer forced: nearly every row overflows it) the rows finished from the
    keys — a histogram and resolve launch per digit and a compaction rewriting the output — with
    the sorted result through the merge path instead of one tile sort (rows longer than MAX_BLOCK)."""
    from tritoncub.device import topk as T
    if request.param == "overflow":
        monkeypatch.setattr(T, "_RS_FINISH_CAP", 1)
        with policy.override("segmented_sort", {"MAX_BLOCK": 16, "MERGE_TILE": 16, "RADIX_MAX_BLOCK": 0}):
            yield request.param
    else:
        yield request.param


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8, torch.bfloat16, torch.float64],
                         ids=str)
def test_topk_radix_select_path(dtype, radix_finish):
    x = adversarial_rows(4, 70, dtype, seed=4)
    with policy.override("topk", RADIX):
        check_set(x, 9, True)
        if dtype == torch.float32:
            check_set(x, 30, False)
            check_set(x, 70, True, sorted=False)
            check_set(x, 40, True)


@pytest.mark.parametrize("skip_done", [False, True], ids=["walk", "skip_done"])
@pytest.mark.parametrize("finish_cap", [None, 4, 1], ids=["fused", "cap4", "cap1"])
def test_topk_radix_select_one_program_walks_every_tile(monkeypatch, finish_cap, skip_done):
    """One compaction program per row, so each program walks all of its row's tiles and carries what
    its own atomics showed (the tie slots all taken, or the candidate buffer overflowed: later tiles
    skip their equal keys; with ``_RS_SKIP_WHEN_DONE`` the first compaction stops at an overflow, the
    row redone from the keys, and later tiles look only for keys above the prefix): adversarial rows
    and rows of few distinct values (ties across many tiles; 8- and 16-bit keys too), with and without
    overflowing candidates."""
    monkeypatch.setattr(tk, "_rs_programs", lambda *args, **kwargs: 1)
    monkeypatch.setattr(tk, "_RS_SKIP_WHEN_DONE", skip_done)
    if finish_cap is not None:
        monkeypatch.setattr(tk, "_RS_FINISH_CAP", finish_cap)
    with policy.override("topk", RADIX):
        # (small integers: keys one apart in their ordered bits, on both sides of the k-th)
        for x in (adversarial_rows(4, 150, torch.float32, seed=7),
                  torch.randint(0, 5, (3, 150), device=DEVICE).float(),
                  torch.randint(-3, 4, (3, 150), device=DEVICE, dtype=torch.int16),
                  torch.randint(-3, 4, (3, 150), device=DEVICE, dtype=torch.int8)):
            check_set(x, 9, True)
            check_set(x, 40, False)
            check_set(x, 9, True, sorted=False)


def test_topk_radix_ties(radix_finish):
    # all-equal rows: the tie rule only promises distinct indices holding the values
    x = torch.full((3, 50), 2.0, device=DEVICE)
    x[1, ::7] = -0.0
    x[2, ::5] = float("nan")
    with policy.override("topk", RADIX):
        check_set(x, 12, True)
        check_set(x, 12, False)
        check_set(x, 37, True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.uint8]
                         + [d for d in (getattr(torch, "uint32", None),) if d is not None], ids=str)
def test_topk_radix_rows_deterministic_mode(dtype, radix_finish, monkeypatch):
    """Under torch.use_deterministic_algorithms(True) the rows the radix select would take are stably
    sorted instead: the tile path's rule (lowest indices first among equal values), whatever
    ``sorted`` asks, and the same result every call. Rows of ties (all equal, few unique, +-0.0, NaN)
    over several tiles of a row, so the atomics' order would show."""
    x = adversarial_rows(6, 70, dtype, seed=8)
    if dtype.is_floating_point:
        x[0, ::3] = -0.0
        x[3, ::5] = float("nan")
    selects = count_calls(monkeypatch, tk, "_radix_select")
    sorts = count_calls(monkeypatch, tk, "radix_sort_rows")
    with policy.override("topk", RADIX), deterministic_algorithms():
        for k, largest in ((9, True), (30, False), (70, True)):
            check_exact(x, k, largest)
        v, i = tk.topk(x, 12, sorted=False)
        rv, ri = stable_ref(x, 12, True)
        assert_equal(v.cpu(), rv, msg="values")
        assert_equal(i.cpu(), ri, msg="indices")
    # (the interpreter's atomics run in program order, so on the CPU the radix select's ties come out
    # as a stable sort's too: the path taken is what tells the modes apart here)
    assert not selects and len(sorts) == 4
    with policy.override("topk", RADIX):
        tk.topk(x, 9)
    assert len(selects) == 1 and len(sorts) == 4


def test_segmented_topk_radix_deterministic_mode(radix_finish, monkeypatch):
    """segmented_topk's long segments that the radix select would take, under deterministic mode:
    a stable segmented sort's first k (every segment exact, ties included)."""
    lengths = [0, 40, 3, 130, 17, 5]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data("few_unique", sum(lengths), torch.float32, seed=9)
    x[45:60] = -0.0
    x[60:170:2] = 7.0   # (more ties at the k-th value than k, over several of the row's tiles)
    k = 9
    selects = count_calls(monkeypatch, tk, "_radix_select")
    stable = count_calls(monkeypatch, tk, "_all_of_segments")
    with policy.override("topk", RADIX), deterministic_algorithms():
        for largest in (True, False):
            v, i = tk.segmented_topk(x, offs, k, largest)
            o = offs.tolist()
            for s, (a, b) in enumerate(zip(o[:-1], o[1:])):
                m = min(k, b - a)
                rv, ri = stable_ref(x[a:b], m, largest)
                assert_equal(v[s, :m].cpu(), rv)
                assert_equal(i[s, :m].cpu(), ri + a)
                assert (i[s, m:] == -1).all() and (v[s, m:] == 0).all()
    # (the path, as in the rows' test: one stable sort of the long segments per call)
    assert not selects and len(stable) == 2
    with policy.override("topk", RADIX):
        tk.segmented_topk(x, offs, k)
    assert selects   # (one per length class of long segments)


@pytest.mark.parametrize("sort_path", ["radix", "merge"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16], ids=str)
def test_topk_one_long_row_sorted(monkeypatch, dtype, sort_path):
    """One row whose k selected items exceed a tile: sorted by the device radix sort (where it reads
    nothing back: its policy says so from SKIP_PLACES_MIN_N keys on, set past k here) or by the merge
    path."""
    monkeypatch.setattr(tk, "_RADIX_SORT_SELECTED", sort_path == "radix")
    calls = count_calls(monkeypatch, tk, "radix_sort_pairs_recorded")
    for kind, largest in (("special", True), ("few_unique", False)):
        x = make_data(kind, 150, dtype, seed=7)[None]
        with policy.override("topk", RADIX), policy.override("radix_sort", {"SKIP_PLACES_MIN_N": 1 << 30}), \
                policy.override("segmented_sort", {"MAX_BLOCK": 16, "MERGE_TILE": 16, "RADIX_MAX_BLOCK": 0}):
            check_set(x, 40, largest)
    assert len(calls) == (2 if sort_path == "radix" else 0)


@pytest.mark.parametrize("bucket, cfg, shape", [
    ("rows", dict(NETWORK="tl", TILE_ITEMS=64), (2, 100)),          # one row per program (ROWS = 1)
    ("long", dict(CAND, NETWORK="tl", FILTER=0), (2, 90)),          # the running k-best's rounds
])
def test_topk_top1_with_tl_network(bucket, cfg, shape):
    """k = 1 with the ``tl.topk`` network: a program's single row reduces to its maximum (tl.topk of
    one row would be a scalar), on the tile path and the candidate rounds."""
    x = adversarial_rows(shape[0], shape[1], torch.float32, seed=21)
    with policy.override("topk", cfg, bucket=bucket):
        check_exact(x, 1, True)
        check_exact(x, 1, False)
        check_exact(x, 2, True)


@pytest.mark.parametrize("shape, dim", [((3, 0), -1), ((0,), 0), ((2, 0, 3), 1)])
def test_topk_empty_dim_k0(shape, dim):
    """k = 0 over an empty dimension gives torch's empty results (shapes and dtypes)."""
    x = torch.empty(shape, device=DEVICE)
    v, i = torch.ops.tritoncub.topk(x, 0, dim, True, True)
    r = torch.topk(x, 0, dim)
    assert v.shape == r.values.shape and i.shape == r.indices.shape and i.dtype == torch.int64


def test_segmented_topk_k_beyond_every_segment():
    """k far beyond every segment's length: each segment's tile stays its own size (not next_pow2(k))."""
    x = make_data("random", 10, torch.float32, seed=4)
    offs = torch.tensor([0, 3, 10], device=DEVICE)
    k = 5000
    v, i = tk.segmented_topk(x, offs, k)
    assert v.shape == (2, k) and i.shape == (2, k)
    for s_, (a, b) in enumerate([(0, 3), (3, 10)]):
        rv, ri = stable_ref(x[a:b], b - a, True)
        assert_equal(v[s_, :b - a].cpu(), rv)
        assert_equal(i[s_, :b - a].cpu(), ri + a)
        assert (i[s_, b - a:] == -1).all() and (v[s_, b - a:] == 0).all()


def test_topk_autograd():
    x = torch.randn(4, 9, dtype=torch.float32, device=DEVICE, requires_grad=True)
    v, _ = torch.ops.tritoncub.topk(x, 3, 1, True, True)
    g = torch.randn_like(v)
    v.backward(g)
    x2 = x.detach().clone().requires_grad_()
    torch.topk(x2, 3, 1)[0].backward(g)
    assert_equal(x.grad.cpu(), x2.grad.cpu())


def test_topk_bad_input():
    x = torch.zeros(3, 5, device=DEVICE)
    with pytest.raises(ValueError, match="out of range"):
        tk.topk(x, 6)
    with pytest.raises(ValueError, match="non-negative"):
        tk.topk(x, -1)
    with pytest.raises(TypeError, match="k must be an int"):
        tk.topk(x, 2.0)
    with pytest.raises(IndexError, match="Dimension out of range"):   # (torch's error)
        tk.topk(x, 2, dim=2)
    for flag in (None, 1, "no"):   # flags are bools, as torch's (not read as true or false)
        with pytest.raises(TypeError, match="largest must be a bool"):
            tk.topk(x, 2, largest=flag)
        with pytest.raises(TypeError, match="sorted must be a bool"):
            tk.topk(x, 2, sorted=flag)
        with pytest.raises(TypeError, match="largest must be a bool"):
            tk.segmented_topk(x.view(-1), torch.tensor([0, 15], device=DEVICE), 2, largest=flag)
    with pytest.raises(TypeError, match="dtype"):
        tk.topk(torch.zeros(3, dtype=torch.bool, device=DEVICE), 1)


# -- segmented -----------------------------------------------------------------------------------

@pytest.mark.parametrize("long_path", ["candidates", "filter", "radix"])
def test_segmented_topk(long_path):
    lengths = [0, 1, 3, 4, 9, 16, 40, 2]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data("few_unique" if long_path == "radix" else "special", sum(lengths), torch.float32, seed=6)
    x[30:40] = torch.arange(10, device=DEVICE, dtype=torch.float32) + 1000   # distinct top values: exact indices
    k = 4
    cfg = {"candidates": dict(CAND, FILTER=0), "filter": dict(CAND, FILTER=1, FILTER_CHUNK=64), "radix": RADIX}
    with policy.override("topk", cfg[long_path]):   # the 40-item segment is long
        v, i = tk.segmented_topk(x, offs, k)
    check_segments(x, offs, k, True, v, i)
    with pytest.raises(ValueError, match="non-decreasing"):
        tk.segmented_topk(x, torch.tensor([0, 5, 2], device=DEVICE), 2)


@pytest.mark.parametrize("path", ["candidates", "radix"])
def test_segmented_topk_plans_keyed_by_row_batches(path, monkeypatch):
    """The long-row paths' remembered launches are told apart by the most rows one launch takes
    (``MAX_GRID_Y``: the rows' batches fix how many launches run, their grids and their scratch): a
    problem recorded with batches of 2 rows, then the same problem with one batch, then with 2 again,
    each on fresh data, replays nothing recorded under the other (under the interpreter through
    helpers.interpreter_replays)."""
    import tritoncub._utils as U
    from helpers import plan_replays
    monkeypatch.setattr(tk, "_PLANS", {})
    if interpreter_active():
        interpreter_replays(monkeypatch, plans=True)
    replayed = plan_replays(monkeypatch)
    offs = torch.arange(0, 4 * 90 + 1, 90, device=DEVICE)   # four segments of 90: all long
    with policy.override("topk", CAND if path == "candidates" else RADIX):
        for rep, limit in enumerate((2, 65535, 2)):
            monkeypatch.setattr(U, "MAX_GRID_Y", limit)
            replayed.clear()
            x = make_data("random", 360, torch.float32, seed=40 + rep)
            # (five distinct values above the rest in each row, at scattered places: exact indices)
            x.view(4, 90)[:, [3, 17, 40, 61, 88]] = 1000 + torch.randperm(20, generator=torch.Generator().manual_seed(
                rep)).to(device=DEVICE, dtype=torch.float32).view(4, 5)
            v, i = tk.segmented_topk(x, offs, 5)
            for s in range(4):
                rv, ri = stable_ref(x[90 * s:90 * (s + 1)], 5, True)
                assert_equal(v[s].cpu(), rv, signed_zero=False, msg=f"MAX_GRID_Y={limit} row {s}")
                assert_equal(i[s].cpu(), ri + 90 * s, msg=f"MAX_GRID_Y={limit} row {s}")
            # (the third call replays the first's launches; the others record)
            assert replayed and (all(replayed) if rep == 2 else not any(replayed))


@pytest.mark.parametrize("lengths", [[64], [40, 0, 50]])
def test_segmented_topk_only_long_segments(lengths):
    # no segment short enough for the in-register path (nothing to bin there)
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = torch.randperm(sum(lengths), device=DEVICE).to(torch.float32)   # (distinct: exact indices)
    with policy.override("topk", CAND):
        v, i = tk.segmented_topk(x, offs, 5)
    o = offs.tolist()
    for s, (a, b) in enumerate(zip(o[:-1], o[1:])):
        m = min(5, b - a)
        rv, ri = stable_ref(x[a:b], m, True) if m else (x[:0], torch.zeros(0, dtype=torch.int64))
        assert_equal(v[s, :m].cpu(), rv)
        assert_equal(i[s, :m].cpu(), ri + a)
        assert (i[s, m:] == -1).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [10, 30])
@pytest.mark.parametrize("class_bits", [0, 1])
def test_segmented_topk_lengths_around_k(dtype, largest, k, class_bits, monkeypatch):
    """Segments shorter than k, short and long (more than ROW_MAX_BLOCK items): their first ``length``
    slots hold all their items, best first, the rest value 0 / index -1; longer segments give exactly
    the stable top k. Several long segments of different lengths share the launches (class_bits 1:
    the long segments in two length groups, 17-25 and 33-90 items, launched apart)."""
    monkeypatch.setattr(tk, "LONG_CLASS_BITS", class_bits)
    lengths = [0, 3, 20, 25, 47, 33, 17, 90]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data("few_unique", sum(lengths), dtype, seed=12)
    # k = 10: the long segments through a filter round; k = 30: bitonic rounds, and three long segments
    # shorter than k
    with policy.override("topk", dict(CAND, CHUNK=64, FILTER=1, FILTER_CHUNK=128, CAND_K_MAX=32)):
        v, i = tk.segmented_topk(x, offs, k, largest=largest)
    check_segments(x, offs, k, largest, v, i)


def _recorded_first_k(monkeypatch, x):
    """Wraps ``block_radix_first_k`` as segmented_topk (and topk's rows) call it, recording ``(block, num_segs,
    taken)``. Under the interpreter (no block radix sort there) a stand-in keeps its contract: the listed
    segments' first k items by a stable segmented sort with positions (``_all_of_segments``); on a GPU the
    real kernel runs."""
    calls = []
    real = tk.block_radix_first_k

    def first_k(kb, out_kb, out_idx, k, *, block, num_segs, seg_begin, seg_len, seg_list, descending, meta,
                device):
        if interpreter_active():
            segs = seg_list.cpu().numpy()
            assert len(segs) == num_segs and (seg_len.cpu().numpy()[segs] <= block).all()
            tk._all_of_segments(kb.view(x.dtype), seg_begin.cpu().numpy()[segs], seg_len.cpu().numpy()[segs], segs,
                                k, descending, out_kb.view(x.dtype), out_idx)
            taken = True
        else:
            taken = real(kb, out_kb, out_idx, k, block=block, num_segs=num_segs, seg_begin=seg_begin,
                         seg_len=seg_len, seg_list=seg_list, descending=descending, meta=meta, device=device)
        calls.append((block, num_segs, taken))
        return taken
    monkeypatch.setattr(tk, "block_radix_first_k", first_k)
    return calls


@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=str)
@pytest.mark.parametrize("k", [4, 30])
def test_segmented_topk_wide_segments_by_sort(dtype, k, monkeypatch):
    """_WIDE_SEGMENTS_BY_SORT: the bins of short segments of 64-bit keys whose BLOCK the block radix sort takes
    (faked: BLOCK 32 and more) go to ``block_radix_first_k``, one call per bin with its segment list; the other
    bins, and a bin it refuses, keep the tile path. The tile path's results either way: the first
    min(k, length) slots best first (stable), the rest value 0 / index -1."""
    monkeypatch.setattr(tk, "_WIDE_SEGMENTS_BY_SORT", True)
    monkeypatch.setattr(tk, "block_radix_sorts_rows", lambda length, key_bits, device: length >= 32)
    tiles = []
    real_tile = tk._tile_topk

    def tile(*args, **kwargs):
        tiles.append(kwargs["block"])
        return real_tile(*args, **kwargs)
    monkeypatch.setattr(tk, "_tile_topk", tile)
    lengths = [0, 1, 3, 20, 33, 5, 40, 17, 0, 64, 9]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data("few_unique", sum(lengths), dtype, seed=k)
    calls = _recorded_first_k(monkeypatch, x)
    for largest in (True, False):
        del calls[:], tiles[:]
        v, i = tk.segmented_topk(x, offs, k, largest=largest)
        check_segments(x, offs, k, largest, v, i)
        assert sorted(c[:2] for c in calls) == [(32, 2), (64, 3)]   # (20, 17 | 33, 40, 64 keys)
        refused = [block for block, _, taken in calls if not taken]
        assert sorted(tiles) == sorted([2, 4, 8, 16] + refused)      # (1, 3, 5 and 9 keys: the tile path)
    # a bin refused: its segments take the tile path
    monkeypatch.setattr(tk, "block_radix_first_k", lambda *a, **kw: False)
    del tiles[:]
    check_segments(x, offs, k, True, *tk.segmented_topk(x, offs, k))
    assert sorted(tiles) == [2, 4, 8, 16, 32, 64]
    # 32-bit keys, and the constant off: the tile path only
    calls = _recorded_first_k(monkeypatch, x)
    del tiles[:]
    tk.segmented_topk(x.to(torch.float32) if dtype.is_floating_point else x.to(torch.int32), offs, k)
    monkeypatch.setattr(tk, "_WIDE_SEGMENTS_BY_SORT", False)
    tk.segmented_topk(x, offs, k)
    assert calls == [] and sorted(tiles) == sorted(2 * [2, 4, 8, 16, 32, 64])


@pytest.mark.parametrize("seed", range(6))
def test_segmented_topk_wide_segments_by_sort_random_layouts(seed, monkeypatch):
    """_WIDE_SEGMENTS_BY_SORT on random layouts: empty, short and long segments, a random smallest BLOCK the
    sort takes, random k and order."""
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(tk, "_WIDE_SEGMENTS_BY_SORT", True)
    min_block = int(rng.choice([8, 16, 32]))
    monkeypatch.setattr(tk, "block_radix_sorts_rows", lambda length, key_bits, device: length >= min_block)
    lengths = rng.integers(0, 50, size=int(rng.integers(1, 14)))
    lengths[rng.random(lengths.size) < 0.2] = 0
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    dtype = WIDE_DTYPES[seed % len(WIDE_DTYPES)]
    x = make_data(KINDS[seed % len(KINDS)], int(lengths.sum()), dtype, seed=seed)
    calls = _recorded_first_k(monkeypatch, x)
    k, largest = int(rng.integers(1, 12)), bool(seed % 2)
    v, i = tk.segmented_topk(x, offs, k, largest=largest)
    check_segments(x, offs, k, largest, v, i)
    assert all(block >= min_block for block, _, _ in calls)


@pytest.mark.skipif(interpreter_active(), reason="the block radix sort runs on compiled NVIDIA kernels only")
@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["special", "few_unique", "random"])
@pytest.mark.parametrize("warp_rows", [False, True])
def test_segmented_topk_wide_segments_first_k_kernel(dtype, kind, warp_rows, monkeypatch):
    """The real kernel (``block_radix_first_k``, the block radix sort writing each segment's first k) on
    segments of 129 to 4096 64-bit keys (every bin's edges, with short and empty segments between): k of 1,
    a bin's middle, and more than the longest segment, both orders; every bin the block radix sort takes
    here went there; ``warp_rows``: the bins up to 512 keys one segment per warp (four a program: dead warps
    in the last), as a policy may choose."""
    lengths = [129, 0, 200, 256, 3, 257, 511, 512, 513, 1000, 1024, 1, 1025, 2048, 2049, 4095, 4096, 700]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data(kind, sum(lengths), dtype, seed=len(kind))
    monkeypatch.setattr(tk, "_WIDE_SEGMENTS_BY_SORT", True)
    calls = _recorded_first_k(monkeypatch, x)
    warp_cfg = dict(TILE_SORT="radix", RADIX_BITS=8, RADIX_MIN_BLOCK=1024, RADIX_WARP_MIN_BLOCK=256, RADIX_WARP_ROWS=4)
    with policy.override("segmented_sort", warp_cfg) if warp_rows else contextlib.nullcontext():
        sorted_here = {b for b in (256, 512, 1024, 2048, 4096) if tk.block_radix_sorts_rows(b, 64, x.device)}
        assert sorted_here
        for k in (1, 300, 5000):
            for largest in (True, False):
                del calls[:]
                v, i = tk.segmented_topk(x, offs, k, largest=largest)
                check_segments(x, offs, k, largest, v, i)
                assert {block for block, _, taken in calls if taken} == sorted_here


@pytest.mark.skipif(interpreter_active(), reason="segments of up to 4096 64-bit keys: too slow for the interpreter")
@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["special", "random"])
def test_segmented_topk_wide_segments_tile_path(dtype, kind, monkeypatch):
    """The register tile path for 64-bit segments of 129 to 4096 keys (the route when the first-k kernel
    refuses a bin, fails to build, or :data:`_WIDE_SEGMENTS_BY_SORT` is off): the layout of
    ``test_segmented_topk_wide_segments_first_k_kernel``, both orders, no first-k launch."""
    lengths = [129, 0, 200, 256, 3, 257, 511, 512, 513, 1000, 1024, 1, 1025, 2048, 2049, 4095, 4096, 700]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data(kind, sum(lengths), dtype, seed=len(kind) + 1)
    monkeypatch.setattr(tk, "_WIDE_SEGMENTS_BY_SORT", False)
    calls = _recorded_first_k(monkeypatch, x)
    for k in (1, 300):
        for largest in (True, False):
            v, i = tk.segmented_topk(x, offs, k, largest=largest)
            check_segments(x, offs, k, largest, v, i)
    assert calls == []


@pytest.mark.parametrize("dtype", [d for d in (getattr(torch, f"uint{w}", None) for w in (16, 32, 64)) if d],
                         ids=str)
def test_segmented_topk_unsigned_long_segments(dtype):
    """Unsigned 16- to 64-bit keys in long segments (more than ROW_MAX_BLOCK items), through the filter
    rounds (keys of up to 32 bits) and the radix select, and in long segments shorter than k (the
    results are written through signed views of the same width: torch's index_put has no CPU kernel
    for these dtypes)."""
    lengths = [0, 3, 20, 47, 33, 90]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = make_data("few_unique", sum(lengths), dtype, seed=13)
    for k, cfg in ((30, dict(CAND, CHUNK=64, FILTER=1, FILTER_CHUNK=128, CAND_K_MAX=32)), (5, RADIX)):
        with policy.override("topk", cfg):
            v, i = tk.segmented_topk(x, offs, k)
        o = offs.tolist()
        for s_, (a, b) in enumerate(zip(o[:-1], o[1:])):
            m = min(k, b - a)
            rv, ri = stable_ref(x[a:b], m, True)
            assert_equal(v[s_, :m].cpu(), rv, msg=f"k={k} segment {s_}")
            if k == 30 and x.element_size() <= 4:   # (the candidate path's tie rule: exact indices)
                assert_equal(i[s_, :m].cpu(), ri + a, msg=f"k={k} segment {s_}")
            else:   # (radix select, which 64-bit keys always take: distinct indices pointing at the values;
                # through the signed view: CUDA has no indexing kernel for uint16/32 either)
                idx = i[s_, :m]
                assert idx.unique().numel() == m and bool(((idx >= a) & (idx < b)).all())
                assert torch.equal(tk.bits_view(x)[idx], tk.bits_view(v[s_, :m])), f"k={k} segment {s_}"
            assert (i[s_, m:] == -1).all()


def test_segmented_topk_bad_input_and_autograd():
    x = torch.randn(12, device=DEVICE)
    offs = torch.tensor([0, 5, 12], device=DEVICE)
    with pytest.raises(ValueError, match="out of range"):
        tk.segmented_topk(x, torch.tensor([0, 13], device=DEVICE), 2)
    with pytest.raises(ValueError, match="non-negative"):
        tk.segmented_topk(x, offs, -1)
    with pytest.raises(TypeError, match="k must be an int"):
        tk.segmented_topk(x, offs, 1.5)
    xa = x.clone().requires_grad_()
    v, i = torch.ops.tritoncub.segmented_topk(xa, offs, 6, True)   # segment 0 has 5 items: one slot is padding
    g = torch.randn_like(v)
    (v * g).sum().backward()
    ref = torch.zeros(12)
    for s_ in range(2):
        for j in range(6):
            if int(i[s_, j]) >= 0:
                ref[int(i[s_, j])] += float(g[s_, j])
    assert_equal(xa.grad.cpu(), ref)


def test_topk_whole_tensor_and_0d(monkeypatch):
    """A 1-D tensor is one long row (the long-row paths under small thresholds; the filter's 64-item chunks
    at 2 items per group: three chunks, then a second filter round over their 48 candidates); a 0-d tensor
    gives its item and index 0 for k = 0 and k = 1, as torch.topk does."""
    monkeypatch.setattr(tk, "_FILTER_MIN_GROUP_ITEMS", 2)
    x = make_data("special", 150, torch.float32, seed=13)
    with policy.override("topk", dict(CAND, FILTER=1, FILTER_CHUNK=64)):
        check_exact(x, 7, True)
    with policy.override("topk", RADIX):
        check_set(x, 40, False)
    for k in (0, 1):
        v, i = tk.topk(torch.tensor(2.5, device=DEVICE), k)
        tv, ti = torch.topk(torch.tensor(2.5), k)
        assert v.shape == tv.shape and i.shape == ti.shape and float(v) == 2.5 and int(i) == 0


def test_compile_fullgraph():
    """topk (a transposed input) and segmented_topk in one compiled graph, values differentiable."""
    x = make_data("random", 40, torch.float32, seed=4).view(5, 8)
    offs = torch.tensor([0, 10, 10, 40], device=DEVICE)

    def f(a):
        v, i = torch.ops.tritoncub.topk(a.t(), 3, -1, True, True)
        sv, si = torch.ops.tritoncub.segmented_topk(a.reshape(-1), offs, 4, False)
        return v * 2, i, sv + 1, si

    backend = "inductor" if DEVICE == "cuda" else "aot_eager"
    for got, ref in zip(torch.compile(f, fullgraph=True, backend=backend)(x), f(x)):
        assert_equal(got.cpu(), ref.cpu())


def test_opcheck():
    x = make_data("few_unique", 24, torch.float32, seed=9)
    torch.library.opcheck(torch.ops.tritoncub.topk.default, (x.view(4, 6), 3, -1, True, True))
    torch.library.opcheck(torch.ops.tritoncub.topk.default, (x.view(4, 6), 2, 0, False, True))
    offs = torch.tensor([0, 10, 10, 24], device=DEVICE)
    torch.library.opcheck(torch.ops.tritoncub.segmented_topk.default, (x, offs, 3, True))
    torch.library.opcheck(torch.ops.tritoncub.topk.default, (x[0], 0, -1, True, True))   # 0-d


# -- GPU: sizes of the benchmark ------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("shape,k", [((65536, 128), 8), ((65536, 128), 100), ((4096, 1000), 16),
                                     ((16, 1 << 20), 8), ((16, 1 << 20), 1000), ((1 << 24,), 100),
                                     ((1 << 24,), 10000), ((3, 5000), 64), ((64, 128256), 50), ((64, 128256), 100)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.bfloat16], ids=str)
def test_gpu_topk_large(shape, k, dtype):
    x = (torch.randn(shape, device=DEVICE) * 1000).to(dtype)
    for largest in (True, False):
        v, i = tk.topk(x, k, largest=largest)
        rv, _ = torch.topk(x, k, largest=largest)
        assert torch.equal(v, rv)
        assert torch.equal(x.gather(-1, i), v)
        assert (torch.sort(i, -1)[0].diff(dim=-1) > 0).all()


_CPU_REPLAY_CACHES = ("_TILE_REPLAYS", "_LONG_REPLAYS", "_LONG_UNRECORDED")


@pytest.mark.parametrize("path,cfg,shape,k,sorted_,dtype,finish_cap", [
    ("tile", None, (6, 33), 5, True, torch.float32, None),
    ("running k-best", CAND, (3, 90), 5, True, torch.float32, None),
    ("radix select", RADIX, (3, 90), 7, True, torch.float32, None),
    ("radix select", RADIX, (3, 90), 7, False, torch.float32, None),
    ("radix select", RADIX, (3, 90), 7, True, torch.int8, None),          # (8-bit keys: one digit)
    ("radix select", RADIX, (3, 90), 7, True, torch.float32, 4),          # (rows overflowing the candidates)
    # (one row, its sorted result past the tile sort's MAX_BLOCK: sorted by the device radix sort,
    # whose buffers are the result's)
    ("radix select, radix sort", RADIX, (1, 90), 7, True, torch.float32, None),
    ("radix select, radix sort", RADIX, (1, 90), 7, True, torch.int16, 4)])
def test_topk_replays_run_the_recorded_launches(monkeypatch, path, cfg, shape, k, sorted_, dtype, finish_cap):
    """The replays of remembered launches (GPU-only in use), run here by the interpreter: the same
    problem called again, on fresh data, replays the first call's launches on the new call's buffers
    (and fresh scratch: the running k-best's rounds, the radix select's zeroed state and candidate
    buffers, the sorted result's buffers, the device radix sort's buffers and zeroed workspace);
    every result, checked after all the calls, is right. The rows cycle through adversarial kinds,
    all-equal among them (with a small candidate buffer: rows that overflow it, finished from the
    keys)."""
    if DEVICE == "cuda":
        pytest.skip("the GPU tests replay compiled launches (test_gpu_topk_*_replayed)")
    replays = interpreter_replays(monkeypatch, tk, _CPU_REPLAY_CACHES)
    if finish_cap is not None:
        monkeypatch.setattr(tk, "_RS_FINISH_CAP", finish_cap)
    results = []
    radix_sorted = path.endswith("radix sort")
    # (radix sort: the segmented sort's MAX_BLOCK below k, and a device radix sort that reads nothing
    # back, whose launches are then all queued; it reads back from SKIP_PLACES_MIN_N keys on)
    sort_cfg = contextlib.ExitStack()
    if radix_sorted:
        sort_cfg.enter_context(policy.override("segmented_sort", {"MAX_BLOCK": 4, "MERGE_TILE": 4}))
        sort_cfg.enter_context(policy.override("radix_sort", {"SKIP_PLACES_MIN_N": 1 << 30}))
        sorts = count_calls(monkeypatch, tk, "radix_sort_pairs_recorded")
        # (the counting wrapper keeps replays on)
        monkeypatch.setattr(tk, "_RADIX_SORT_PAIRS_RECORDED", tk.radix_sort_pairs_recorded)
    with policy.override("topk", cfg) if cfg is not None else contextlib.nullcontext(), sort_cfg:
        for rep, largest in enumerate((True, True, False, False)):
            x = adversarial_rows(*shape, dtype, seed=10 * rep)
            results.append((x, largest, tk.topk(x, k, largest=largest, sorted=sorted_)))
    assert len(replays) == 2, (path, len(replays))   # (calls 1 and 3 replay calls 0 and 2)
    if radix_sorted:
        assert len(sorts) == 2   # (calls 0 and 2 sorted their results by it)
    for x, largest, (v, i) in results:
        if path.startswith("radix select"):
            tv = torch_topk_values(x, k, largest)
            got = v if sorted_ else torch.sort(v, -1, descending=largest)[0]
            assert_equal(got, tv, msg=f"{path} values largest={largest}")
            assert_equal(x.gather(-1, i), v, msg="indices point at the values")
            assert all(len(set(r.tolist())) == k for r in i), "indices repeat"
        else:
            rv, ri = stable_ref(x, k, largest)
            assert_equal(i, ri, msg=f"{path} indices largest={largest}")
            assert_equal(v, rv, msg=f"{path} values largest={largest}")


def test_topk_long_rows_not_remembered_where_they_cannot_be(monkeypatch):
    """Long rows are not remembered where a replay could not redo the call (their results still
    right): a sorted result sorted by the merge path (launches the recording does not see; marked,
    so later calls keep the radix select's own plan and record nothing), and more rows than one
    launch's grid takes (every batch's scratch would stay allocated at once)."""
    if DEVICE == "cuda":
        pytest.skip("the GPU tests replay compiled launches (test_gpu_topk_*_replayed)")
    replays = interpreter_replays(monkeypatch, tk, _CPU_REPLAY_CACHES)
    sorts = count_calls(monkeypatch, tk, "_sort_long")
    recordings = count_calls(monkeypatch, tk, "record_launches")
    # (one row, a sorted k past the segmented sort's MAX_BLOCK; a device radix sort that would read
    # back, from SKIP_PLACES_MIN_N keys on, is not taken: the merge path sorts the result)
    with policy.override("topk", RADIX), policy.override("segmented_sort", {"MAX_BLOCK": 4, "MERGE_TILE": 4}), \
            policy.override("radix_sort", {"SKIP_PLACES_MIN_N": 0}):
        for rep in range(3):
            check_set(adversarial_rows(1, 90, torch.float32, seed=rep), 7, True)
        assert len(sorts) == 3 and len(recordings) == 1   # (recorded once, then the marked problem is not)
        assert len(replays) == 0 and not tk._LONG_REPLAYS and len(tk._LONG_UNRECORDED) == 1
    with policy.override("topk", RADIX):
        import tritoncub._utils as U
        monkeypatch.setattr(U, "MAX_GRID_Y", 2)
        for rep in range(2):
            check_set(adversarial_rows(3, 90, torch.float32, seed=5 + rep), 7, True, sorted=False)
        assert len(replays) == 0 and not tk._LONG_REPLAYS and len(tk._LONG_UNRECORDED) == 1
        assert len(recordings) == 1


def _repeated_on_fresh_data(rows, L, k, dtype):
    """Four top-k calls of one (rows, L) problem on fresh data (call 1 on an input that is not 16-byte
    aligned), both directions each; every result checked against the stable top k after all the calls
    (so none was overwritten by a later call)."""
    results = []
    for rep in range(4):
        base = make_data("special" if dtype.is_floating_point else "few_unique", rows * L + 1, dtype)
        x = (base[1:] if rep == 1 else base[:-1]).view(rows, L)   # rep 1: not 16-byte aligned
        for largest in (True, False):
            results.append((x, largest, tk.topk(x, k, largest=largest)))
    for x, largest, (v, i) in results:
        rv, ri = stable_ref(x, k, largest)
        assert_equal(i.cpu(), ri, msg=f"indices {rows}x{L} {dtype} largest={largest}")
        assert_equal(v.cpu(), rv, signed_zero=False, msg=f"values {rows}x{L} {dtype}")


@pytest.mark.gpu
def test_gpu_topk_tile_replayed(monkeypatch):
    """A repeated tile top-k replays its remembered launch on the new call's buffers: fresh data each
    call, an input that is not 16-byte aligned (its own launch), both directions, 16-, 32- and 64-bit
    keys; every result (checked after all the calls, so none was overwritten by a later one) is the
    stable top k; a policy change plans afresh, then replays."""
    tk._TILE_REPLAYS.clear()
    replays = count_calls(monkeypatch, tk, "replay")
    for rows, L, k in ((4096, 128, 8), (300, 1000, 16), (7, 33, 33)):
        for dtype in (torch.float32, torch.int16, torch.float64):
            before = len(replays)
            _repeated_on_fresh_data(rows, L, k, dtype)
            # (calls 2 and 3 replay call 0's launches, both directions)
            assert len(replays) - before == 4, (rows, L, dtype, len(replays) - before)
    # 3-d input along the last dim takes the same path, its result shaped as torch's
    x = make_data("random", 6 * 5 * 40, torch.float32).view(6, 5, 40)
    for _ in range(2):
        v, i = tk.topk(x, 4)
        rv, ri = torch.topk(x, 4)
        assert v.shape == rv.shape and i.shape == rv.shape
        assert torch.equal(v, rv) and torch.equal(x.gather(-1, i), v)
    x = make_data("random", 300 * 1000, torch.float32).view(300, 1000)
    ref = stable_ref(x, 8, True)
    for cfg in ({"NETWORK": "own"}, {"NETWORK": "tl"}):
        with policy.override("topk", cfg, bucket="rows"):
            counts = []
            for _ in range(2):
                before = len(replays)
                v, i = tk.topk(x, 8)
                counts.append(len(replays) - before)
                assert_equal(i.cpu(), ref[1], msg=str(cfg))
                assert_equal(v.cpu(), ref[0], msg=str(cfg))
            assert counts == [0, 1], (cfg, counts)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [None, {"FILTER": 0}], ids=["shipped", "bitonic-rounds"])
def test_gpu_topk_running_k_best_replayed(monkeypatch, cfg):
    """A repeated running k-best (rows longer than a tile, small k) replays its remembered launches on
    the new call's buffers and fresh scratch: fresh data each call, an input that is not 16-byte
    aligned (its own launches), both directions, filter or bitonic rounds; every result (checked
    after all the calls, so none was overwritten by a later call) is the stable top k."""
    tk._LONG_REPLAYS.clear()
    tk._LONG_UNRECORDED.clear()
    replays = count_calls(monkeypatch, tk, "replay")
    chunk_calls = count_calls(monkeypatch, tk, "_chunk_topk")
    monkeypatch.setattr(tk, "_CHUNK_TOPK", tk._chunk_topk)   # (the counting wrapper keeps replays on)
    with policy.override("topk", cfg, bucket="long") if cfg is not None else contextlib.nullcontext():
        # (the last case: more than one round, so more than one scratch buffer, with either config)
        for rows, L, k, dtype in ((8, 1 << 18, 8, torch.float32), (5, 30000, 20, torch.int32),
                                  (3, 70000, 1, torch.float16), (2, 1 << 22, 32, torch.float32)):
            before, planned = len(replays), len(chunk_calls)
            _repeated_on_fresh_data(rows, L, k, dtype)
            # (calls 0 and 1 plan, both directions; calls 2 and 3 replay call 0's launches)
            assert (len(chunk_calls) - planned, len(replays) - before) == (4, 4), (rows, L, dtype)


@pytest.mark.gpu
def test_gpu_topk_radix_select_replayed(monkeypatch):
    """A repeated radix select (large k on long rows) replays its remembered launches, the tile sort
    of a sorted result among them, on the new call's buffers and fresh scratch (zeroed where the
    first call zeroed it): fresh data each call, all-equal rows (overflowing the candidate buffer),
    an unaligned input, both directions, sorted or not; every result, checked after all the calls,
    holds torch's values with indices pointing at them. So is a sorted single long row, whose sort
    is the device radix sort's (its buffers, the result's among them, allocated afresh)."""
    tk._LONG_REPLAYS.clear()
    tk._LONG_UNRECORDED.clear()
    replays = count_calls(monkeypatch, tk, "replay")
    for rows, L, k in ((6, 1 << 17, 1000), (2, 50000, 300)):
        for sorted_ in (True, False):
            before = len(replays)
            results = []
            for rep in range(4):
                base = make_data("special", rows * L + 1, torch.float32)
                x = (base[1:] if rep == 1 else base[:-1]).view(rows, L)   # rep 1: not 16-byte aligned
                if rep == 3:
                    x[1].fill_(0.5)
                for largest in (True, False):
                    results.append((x, largest, tk.topk(x, k, largest=largest, sorted=sorted_)))
            for x, largest, (v, i) in results:
                tv = torch_topk_values(x, k, largest)
                got = v.cpu() if sorted_ else torch.sort(v.cpu(), -1, descending=largest)[0]
                assert_equal(got, tv, msg=f"values {rows}x{L} k={k} sorted={sorted_} largest={largest}")
                assert_equal(x.cpu().gather(-1, i.cpu()), v.cpu(), msg="indices point at the values")
                assert all(len(set(r.tolist())) == k for r in i.cpu()), "indices repeat"
            # (reps 2 and 3 replay rep 0's launches, both directions)
            assert len(replays) - before == 4, (rows, L, k, sorted_, len(replays) - before)
    # one long row whose sorted result is the device radix sort's (k past the segmented sort's
    # MAX_BLOCK, a radix sort that reads nothing back: set so on every GPU): its launches and buffers
    # are remembered too (reps 2 and 3 replay rep 0's, both directions)
    sorts = count_calls(monkeypatch, tk, "radix_sort_pairs_recorded")
    monkeypatch.setattr(tk, "_RADIX_SORT_PAIRS_RECORDED", tk.radix_sort_pairs_recorded)   # (replays stay on)
    before, results = len(replays), []
    with policy.override("segmented_sort", {"MAX_BLOCK": 4096, "RADIX_MAX_BLOCK": 0}), \
            policy.override("radix_sort", {"SKIP_PLACES_MIN_N": 1 << 30}):
        for rep in range(4):
            base = make_data("special", (1 << 20) + 1, torch.float32)
            x = base[1:] if rep == 1 else base[:-1]   # rep 1: not 16-byte aligned
            for largest in (True, False):
                results.append((x, largest, tk.topk(x, 6000, largest=largest)))
    assert len(sorts) == 4   # (reps 0 and 1 sorted by it, both directions; 1 is another problem)
    for x, largest, (v, i) in results:
        assert_equal(v.cpu(), torch_topk_values(x, 6000, largest), msg=f"one long row largest={largest}")
        assert_equal(x.cpu().gather(-1, i.cpu()), v.cpu(), msg="indices point at the values")
        assert len(set(i.cpu().tolist())) == 6000, "indices repeat"
    assert len(replays) - before == 4, len(replays) - before


@pytest.mark.gpu
@pytest.mark.parametrize("shape,k", [((1 << 22,), 10000), ((16, 1 << 18), 1000)])
def test_gpu_topk_radix_select_repeated(shape, k):
    """Repeated radix selects of one size replay remembered launches (a new alignment of the input
    records its own): every call on fresh data, the all-equal case (rows overflowing the candidate
    buffer) among them, gives torch's values; then on a side stream, with the running k-best too."""
    base = torch.randn(shape[0] * (shape[-1] if len(shape) > 1 else 1) + 4, device=DEVICE)
    for rep, offset in enumerate((0, 0, 1, 1, 0)):
        x = base[offset:offset + base.numel() - 4].view(shape)
        x.normal_(generator=torch.Generator(device=DEVICE).manual_seed(rep))
        if rep == 3:
            x.fill_(0.5)
        v, i = tk.topk(x, k)
        assert torch.equal(v, torch.topk(x, k)[0]), f"call {rep}"
        assert torch.equal(x.gather(-1, i), v)
        assert (torch.sort(i, -1)[0].diff(dim=-1) > 0).all()
    side = torch.cuda.Stream()   # (on another stream: its own row tables)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for kk in (k, 8):
            v, i = tk.topk(x, kk)
            assert torch.equal(v, torch.topk(x, kk)[0])
            assert torch.equal(x.gather(-1, i), v)
    torch.cuda.current_stream().wait_stream(side)


@pytest.mark.gpu
@pytest.mark.parametrize("shape,k", [((1 << 20,), 3000), ((8, 1 << 17), 8)])
def test_gpu_topk_key_types_of_one_width_do_not_share_launches(shape, k):
    """float32, int32 and uint32 keys have the same int32 bits view: each must run its own remembered
    launches (their key decoding differs), one call after the other at the same size."""
    g = torch.Generator(device=DEVICE).manual_seed(5)
    base = torch.randint(-2**31, 2**31 - 1, shape, device=DEVICE, dtype=torch.int64, generator=g)
    for dtype in (torch.float32, torch.int32, torch.float32, torch.int32):
        x = base.to(torch.int32).view(dtype) if dtype == torch.float32 else base.to(dtype)
        x = torch.where(torch.isnan(x), torch.zeros_like(x), x) if dtype.is_floating_point else x
        v, i = tk.topk(x, k)
        assert torch.equal(v, torch.topk(x, k)[0]), str(dtype)
        assert torch.equal(x.gather(-1, i), v)


def test_plan_keys_tell_key_types_of_one_width_apart():
    keys = []
    for dtype in (torch.float32, torch.int32) + ((torch.uint32,) if hasattr(torch, "uint32") else ()):
        x = torch.zeros(4, 8, dtype=dtype, device=DEVICE)
        kb, meta = tk.bits_view(x), tk.key_meta(dtype)
        rb = torch.zeros(4, dtype=torch.int64, device=DEVICE)
        keys.append(tk._plan_key(kb, kb, rb, 2, rb, rb, 8, meta, False, False, x.device))
    assert len(set(keys)) == len(keys)


@pytest.mark.gpu
def test_gpu_topk_all_equal_and_nan():
    x = torch.ones(4, 1 << 18, device=DEVICE)
    x[1, ::3] = float("nan")
    for k in (8, 500):
        v, i = tk.topk(x, k)
        rv, _ = torch.topk(x, k)
        assert torch.equal(v, rv) or torch.allclose(v, rv, equal_nan=True)
        assert (torch.sort(i, -1)[0].diff(dim=-1) > 0).all()


@pytest.mark.gpu
@pytest.mark.parametrize("shape,k", [((16, 1 << 20), 1), ((16, 1 << 20), 8), ((1 << 24,), 100), ((5, 300001), 33)])
@pytest.mark.parametrize("filter_chunk", [2048, 4096, 8192, 16384])
@pytest.mark.parametrize("kind", ["random", "sorted", "equal", "periodic"])
def test_gpu_topk_filter_rounds(shape, k, filter_chunk, kind):
    """The filter rounds of the running k-best at full size, every chunk of the policy space, on data that
    takes its fast compaction (random, sorted, all-equal) and its bitonic fallback (periodic: the large
    items share one group), exact stable indices."""
    n = shape[-1]
    if kind == "random":
        x = torch.randn(shape, device=DEVICE)
    elif kind == "sorted":
        x = torch.arange(n, device=DEVICE, dtype=torch.float32).expand(shape).contiguous()
    elif kind == "equal":
        x = torch.ones(shape, device=DEVICE)
    else:
        x = (torch.arange(n, device=DEVICE) % 512 == 0).float().expand(shape).contiguous()
    with policy.override("topk", dict(FILTER=1, FILTER_CHUNK=filter_chunk, CAND_K_MAX=256, CHUNK=2048,
                                      FILTER_MAXNREG=80), "long"):
        for largest in (True, False):
            v, i = tk.topk(x, k, largest=largest)
            rv, ri = torch.sort(x, dim=-1, descending=largest, stable=True)
            assert torch.equal(v, rv[..., :k])
            assert torch.equal(i, ri[..., :k])


@pytest.mark.gpu
@pytest.mark.parametrize("k", [8, 100, 3000])
def test_gpu_segmented_topk(k):
    """Ragged segments from empty to 2^20 items (every path: tile, running k-best or radix select, and
    long segments shorter than k), values equal torch.topk's per segment, indices point at them."""
    g = torch.Generator().manual_seed(k)
    lengths = torch.cat([torch.tensor([0, 1, 5, 4095, 4097, 1 << 20]),
                         (torch.rand(200, generator=g) ** 4 * 60000).long()])
    offs = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).to(DEVICE)
    x = torch.randn(int(offs[-1]), device=DEVICE)
    for largest in (True, False):
        v, i = tk.segmented_topk(x, offs, k, largest=largest)
        for s_, (a, b) in enumerate(zip(offs[:-1].tolist(), offs[1:].tolist())):
            m = min(k, b - a)
            rv = torch.topk(x[a:b], m, largest=largest).values
            assert torch.equal(v[s_, :m], rv), s_
            assert torch.equal(x[i[s_, :m]], rv), s_
            assert (i[s_, m:] == -1).all()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float64, torch.int16], ids=str)
@pytest.mark.parametrize("k", [100, 5000])
def test_gpu_topk_radix_select_dtypes(dtype, k):
    """The radix select (forced: CAND_K_MAX 0) on long rows of 8-, 16- and 64-bit keys, largest and
    smallest, floats with NaN and -0.0 among them."""
    x = (torch.randn(3, 1 << 20, device=DEVICE) * 100).to(dtype)
    if dtype.is_floating_point:
        x[0, ::1000] = float("nan")
        x[1, ::7] = -0.0
    for largest in (True, False):
        with policy.override("topk", dict(CAND_K_MAX=0), bucket="long"):
            v, i = tk.topk(x, k, largest=largest)
        rv, _ = torch.topk(x, k, largest=largest)
        assert torch.equal(v, rv) or (dtype.is_floating_point and torch.allclose(v.double(), rv.double(), equal_nan=True))
        assert torch.equal(x.gather(-1, i), v) or torch.allclose(x.gather(-1, i).double(), v.double(), equal_nan=True)
        assert (torch.sort(i, -1)[0].diff(dim=-1) > 0).all()


@pytest.mark.gpu
@pytest.mark.parametrize("shape, k", [((1, 1 << 22), 10000), ((4, 1 << 20), 5000), ((3, 300000), 700)])
def test_gpu_topk_deterministic_mode(shape, k):
    """Long rows with many ties at the k-th value under torch.use_deterministic_algorithms(True):
    every call returns a stable sort's first k (the radix select's atomics would pick ties in any
    order), largest and smallest, NaN and -0.0 among the keys; the same problems unchanged after the
    mode is left (values right, indices distinct and pointing at them)."""
    x = torch.randint(0, 500, shape, device=DEVICE).float()
    x[0, ::1001] = float("nan")
    x[-1, ::3] = -0.0
    with deterministic_algorithms():
        for largest in (True, False):
            for _ in range(2):
                v, i = tk.topk(x, k, largest=largest)
                rv, ri = torch.sort(x, dim=-1, descending=largest, stable=True)
                assert torch.equal(i, ri[:, :k])
                assert_equal(v, rv[:, :k])
    check_set(x, k, True)


@pytest.mark.gpu
@pytest.mark.parametrize("smem_hist, skip_done", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("shape, k", [((1, 1 << 22), 10000), ((3, 300000), 700), ((2, 1 << 20), 4000)])
def test_gpu_topk_overflow_smem_histogram(monkeypatch, smem_hist, skip_done, shape, k):
    """Rows whose candidates overflow the finish buffer (made 256 keys here; keys in [0, 1) leave
    ~1/256 of a row in the k-th key's bucket after the two full passes, integer-valued keys more, as
    ties) count their remaining digits over the keys, by tl.histogram or (``_RS_OVERFLOW_SMEM_HIST``)
    the shared-memory histogram: values equal torch.topk's, indices distinct and pointing at them,
    largest and smallest; the overflow launches are counted, and rows are seen to overflow (a
    candidate count above the buffer). ``skip_done``: compaction programs skip ahead once their row's
    equal keys are done (``_RS_SKIP_WHEN_DONE``)."""
    monkeypatch.setattr(tk, "_RS_OVERFLOW_SMEM_HIST", smem_hist)
    monkeypatch.setattr(tk, "_RS_SKIP_WHEN_DONE", skip_done)
    monkeypatch.setattr(tk, "_RS_FINISH_CAP", 256)
    overflow = []
    counts = []   # (the calls' candidate counts and buffer sizes, as the finish kernel gets them)
    real = tk.LaunchPlan.__call__

    def spy(plan, kernel, grid, *args, **kwargs):
        name = getattr(kernel, "__name__", None) or kernel.fn.__name__
        if kwargs.get("ONLY_OVERFLOW"):
            overflow.append(name)
        if name == "_rs_finish_kernel":
            counts.append((args[4], args[10]))
        return real(plan, kernel, grid, *args, **kwargs)
    monkeypatch.setattr(tk.LaunchPlan, "__call__", spy)
    for x in (torch.rand(shape, device=DEVICE), torch.randint(0, 300, shape, device=DEVICE).float()):
        check_set(x, k, True)
        check_set(x, k, False)
        check_set(x, k, True, sorted=False)
    # (the calls on the second input may replay the first's launches, past the spy: counted over all)
    assert counts and any(bool((c > cap).any()) for c, cap in counts), "no row overflowed"
    hist = "_rs_hist_smem_kernel" if smem_hist else "_rs_hist_kernel"
    assert hist in overflow and ("_rs_hist_kernel" if smem_hist else "_rs_hist_smem_kernel") not in overflow


@pytest.mark.gpu
@pytest.mark.parametrize("k", [700, 5000])
def test_gpu_segmented_topk_deterministic_mode(k):
    """segmented_topk under deterministic mode on the GPU: ragged segments up to 2^20 keys of few
    distinct values (ties at every k-th value), each segment's result a stable sort's first k, the
    same every call."""
    lengths = [0, 5, 3000, 1 << 20, 70000, 1, 300000]
    offs = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), device=DEVICE)
    x = torch.randint(0, 200, (sum(lengths),), device=DEVICE).float()
    x[::997] = -0.0
    with deterministic_algorithms():
        for largest in (True, False):
            v, i = tk.segmented_topk(x, offs, k, largest)
            v2, i2 = tk.segmented_topk(x, offs, k, largest)
            assert torch.equal(i, i2)
            o = offs.tolist()
            for s, (a, b) in enumerate(zip(o[:-1], o[1:])):
                m = min(k, b - a)
                rv, ri = torch.sort(x[a:b], descending=largest, stable=True)
                assert torch.equal(i[s, :m], ri[:m] + a)
                assert_equal(v[s, :m], rv[:m])


def test_fakes_check_arguments_as_the_ops():
    """Under FakeTensorMode (torch.compile's tracing) topk and segmented_topk refuse what the ops refuse."""
    ops = torch.ops.tritoncub
    with torch.device(DEVICE), torch._subclasses.fake_tensor.FakeTensorMode():
        x = torch.empty(2, 5)
        with pytest.raises(ValueError, match="out of range"):
            ops.topk(x, 9, -1, True, True)
        with pytest.raises(ValueError, match="out of range"):
            ops.topk(torch.empty(0), 2, -1, True, True)
        with pytest.raises(IndexError, match="Dimension out of range"):
            ops.topk(torch.empty(()), 1, 5, True, True)
        with pytest.raises(TypeError):
            ops.topk(torch.empty(4, dtype=torch.bool), 1, -1, True, True)
        v, i = ops.topk(x, 3, 0 - 1, True, True)
        assert v.shape == (2, 3) and i.dtype == torch.int64
        offs = torch.zeros(3, dtype=torch.int64)
        with pytest.raises(ValueError, match="1 dimension"):
            ops.segmented_topk(torch.empty(2, 4), offs, 1, True)
        with pytest.raises(ValueError, match="non-negative"):
            ops.segmented_topk(torch.empty(8), offs, -1, True)
        assert ops.segmented_topk(torch.empty(8), offs, 2, True)[0].shape == (2, 2)
