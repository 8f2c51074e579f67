"""DeviceRadixSort on a GPU: the fast (Gluon) kernels at large sizes, every key dtype, the policy
variants, compared with torch.sort and with the portable kernels. Skipped under the interpreter.
(Separate from test_radix_sort.py so that each file's compile time stays within a file's time limit.)"""
import math

import numpy as np
import pytest
import torch

import tritoncub.device.radix_sort as rs
from helpers import ALL_DTYPES, count_calls, make_data
from tritoncub import policy

DTYPES = [torch.bool] + ALL_DTYPES


def _proxy(x: torch.Tensor) -> torch.Tensor:
    """A tensor torch can sort in the same order as x (torch lacks sort kernels for some unsigned types)."""
    if x.dtype == getattr(torch, "uint64", None):
        return x.view(torch.int64) ^ (-2**63)
    if x.dtype in (getattr(torch, "uint16", None), getattr(torch, "uint32", None)):
        return x.to(torch.int64)
    return x


def _long_rows_policy():
    """The segmented sort's policy with rows past ``MAX_BLOCK`` left to the long paths (``RADIX_MAX_BLOCK``
    0): rows of 4097-8192 keys would otherwise go to the block radix sort (tested in test_segmented_sort),
    not to the onesweep rows and segments paths these tests are about."""
    pol = policy.select("segmented_sort", torch.device("cuda"), "large")
    return policy.override("segmented_sort", {**pol.as_dict(), "RADIX_MAX_BLOCK": 0}, "large")


@pytest.mark.gpu
def test_gpu_every_dtype_fast_path():
    for dtype in DTYPES:
        x = make_data("special" if dtype.is_floating_point else "few_unique", 70001, dtype)
        v, i = rs.sort(x)
        rv, ri = torch.sort(_proxy(x), stable=True)
        assert torch.equal(i, ri), dtype
        assert torch.equal(_proxy(v).nan_to_num(7), rv.nan_to_num(7)), dtype
        k = rs.sort_keys(x, True)
        assert torch.equal(_proxy(k).nan_to_num(7), torch.sort(_proxy(x), descending=True).values.nan_to_num(7)), dtype


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_gpu_large_fast_vs_torch_and_portable(dtype):
    x = make_data("random", (1 << 22) + 12345, dtype)
    for desc in (False, True):
        v, i = rs.sort(x, descending=desc)
        r = torch.sort(x, descending=desc, stable=True)
        assert torch.equal(i, r.indices)
        assert torch.equal(v, r.values)
    if dtype == torch.float32:
        x = make_data("special", 300001, dtype)
        a = rs.sort(x)
        rs.FORCE_PORTABLE = True
        try:
            b = rs.sort(x)
        finally:
            rs.FORCE_PORTABLE = False
        assert torch.equal(a[1], b[1])


@pytest.mark.gpu
def test_gpu_2_28_keys_and_distributions():
    n = 1 << 26
    for kind in ("random", "few_unique", "equal", "sorted", "reversed"):
        x = make_data(kind, n, torch.int32)
        assert torch.equal(rs.sort_keys(x), torch.sort(x).values), kind


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [
    {"COUNTS_COLUMNS": 1},
    {"COUNTS_COLUMNS": 1, "RANK_PACK": 4, "EXCHANGE_APART": 1},
    {"COUNTS_COLUMNS": 1, "RANK_PACK": 2, "EXCHANGE_APART": 1, "EXCHANGE_KEYS": 0, "MAXNREG": 80},
    {"RANK_PACK": 4, "WINDOW": 8, "WARPS": 4, "ITEMS": 16, "num_warps": 4},
    {"RANK_PACK": 2, "WARPS": 16, "ITEMS": 8, "num_warps": 16, "MAXNREG": 0, "COUNTS_COLUMNS": 1},
    {"EARLY_COUNTS": 0, "RANK_MATCH": 0, "FUSED_EXCHANGE": 0},
    {"EARLY_COUNTS": 0, "RANK_MATCH": 1, "EXCHANGE_APART": 0, "FUSED_EXCHANGE": 0},
    {"EARLY_COUNTS": 1, "RANK_MATCH": 0, "RANK_PACK": 4, "COUNTS_COLUMNS": 0, "FUSED_EXCHANGE": 0},
    {"EARLY_COUNTS": 1, "RANK_MATCH": 1, "EXCHANGE_APART": 0, "EXCHANGE_KEYS": 0, "WARPS": 4, "num_warps": 4,
     "FUSED_EXCHANGE": 0, "RECOMPUTE_WORD": 0},
    {"FUSED_EXCHANGE": 1, "RECOMPUTE_WORD": 0, "MAXNREG": 48, "COUNTS_COLUMNS": 0},
    {"FUSED_EXCHANGE": 1, "RECOMPUTE_WORD": 1, "MAXNREG": 40, "EXCHANGE_KEYS": 0},
    {"HIST_WARPS": 16, "HIST_ITEMS": 16, "HIST_PER_SM": 2},
    {"HIST_WARPS": 4, "HIST_ITEMS": 8, "HIST_PER_SM": 8},
], ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_gpu_fast_path_variants(cfg):
    with policy.override("radix_sort", cfg):
        for dtype in (torch.float32, torch.uint8):
            x = make_data("special" if dtype.is_floating_point else "few_unique", (1 << 20) + 333, dtype)
            for desc in (False, True):
                v, i = rs.sort(x, descending=desc)
                r = torch.sort(x, descending=desc, stable=True)
                assert torch.equal(i, r.indices), (dtype, desc)
                assert torch.equal(rs.sort_keys(x, desc).view(torch.uint8) if dtype == torch.uint8 else
                                   _proxy(rs.sort_keys(x, desc)).nan_to_num(7.0), _proxy(r.values).nan_to_num(7.0))
        x = make_data("random", 3 << 20, torch.int32)
        k, v = rs.sort_pairs(x, x.to(torch.float64), False, 3, 21)
        sub = ((x.to(torch.int64) & 0xFFFFFFFF) ^ 0x80000000) >> 3 & ((1 << 18) - 1)
        idx = torch.sort(sub, stable=True).indices
        assert torch.equal(k, x[idx]) and torch.equal(v, x.to(torch.float64)[idx])


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [
    {"HIST_WARPS": 4, "HIST_ITEMS": 8, "HIST_SMS_PER_PROGRAM": 2, "HIST_MIN_TILES": 4, "SKIP_PLACES_MIN_N": 1 << 30},
    {"HIST_WARPS": 4, "HIST_ITEMS": 8, "HIST_SMS_PER_PROGRAM": 2, "HIST_MIN_TILES": 16, "SKIP_PLACES_MIN_N": 0},
    {"HIST_WARPS": 8, "HIST_ITEMS": 16, "HIST_SMS_PER_PROGRAM": 1, "HIST_MIN_TILES": 8, "SKIP_PLACES_MIN_N": 1 << 30},
    # the places split between the programs (groups of 1-8 places; a 3-place bit range: groups of 1 or 3)
    {"HIST_WARPS": 4, "HIST_ITEMS": 8, "HIST_SMS_PER_PROGRAM": 2, "HIST_MIN_TILES": 4, "HIST_SPLIT_PLACES": 1,
     "SKIP_PLACES_MIN_N": 1 << 30},
    {"HIST_WARPS": 4, "HIST_ITEMS": 8, "HIST_SMS_PER_PROGRAM": 2, "HIST_MIN_TILES": 1, "HIST_SPLIT_PLACES": 2,
     "SKIP_PLACES_MIN_N": 0},
    {"HIST_WARPS": 8, "HIST_ITEMS": 16, "HIST_SMS_PER_PROGRAM": 4, "HIST_MIN_TILES": 16, "HIST_SPLIT_PLACES": 4,
     "SKIP_PLACES_MIN_N": 1 << 30},
], ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_gpu_histogram_program_counts(cfg, monkeypatch):
    # the upfront histogram's programs for small inputs (one program to many, each of several tiles): a
    # ragged last tile, one digit place (uint8) to eight (int64), a bit range, rows sorted as one problem,
    # the counts read back (SKIP_PLACES_MIN_N 0) or the launches queued; torch's results. (Rows of up to
    # 4096 keys go to the segmented sort: there sort_keys and sort_pairs take the device sort)
    groups = []   # the place groups each planned histogram launch took
    split = rs._hist_place_groups
    monkeypatch.setattr(rs, "_hist_place_groups", lambda *a: groups.append(split(*a)) or groups[-1])
    with policy.override("radix_sort", cfg):
        rows = make_data("special", 8 * 9001, torch.float32).view(8, 9001)
        v, i = rs.sort(rows, descending=True)
        r = torch.sort(rows, descending=True, stable=True)
        assert torch.equal(i, r.indices) and torch.equal(v.nan_to_num(7), r.values.nan_to_num(7))
        for n in (2, 4095, 70001, (1 << 20) + 333, (1 << 22) + 5):
            for dtype in (torch.float32, torch.uint8, torch.int64):
                x = make_data("special" if dtype.is_floating_point else "few_unique", n, dtype)
                v, i = rs.sort(x, descending=n % 2 == 0)
                r = torch.sort(x, descending=n % 2 == 0, stable=True)
                assert torch.equal(i, r.indices), (n, dtype)
                assert torch.equal(v.nan_to_num(7), r.values.nan_to_num(7)), (n, dtype)
                assert torch.equal(rs.sort_keys(x).nan_to_num(7), torch.sort(x).values.nan_to_num(7)), (n, dtype)
            x = make_data("random", n, torch.int32)
            k, v = rs.sort_pairs(x, x.to(torch.float64), False, 3, 21)
            sub = ((x.to(torch.int64) & 0xFFFFFFFF) ^ 0x80000000) >> 3 & ((1 << 18) - 1)
            idx = torch.sort(sub, stable=True).indices
            assert torch.equal(k, x[idx]) and torch.equal(v, x.to(torch.float64)[idx]), n
    # (a split config really split: 8 groups for a one-program histogram of 64-bit keys; the portable path,
    # off NVIDIA GPUs, has no groups)
    if rs._use_fast_path(torch.device("cuda")):
        assert groups and (max(groups) == 8 if cfg.get("HIST_SPLIT_PLACES") else set(groups) == {1}), groups


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [
    {"EXCHANGE_WIDE": 1},
    {"EXCHANGE_WIDE": 0},
    {"EXCHANGE_WIDE": 1, "EXCHANGE_SRC": 1},
    {"EXCHANGE_WIDE": 0, "EXCHANGE_SRC": 1},
    {"EXCHANGE_WIDE": 1, "FUSED_EXCHANGE": 0, "RECOMPUTE_WORD": 0},
    {"EXCHANGE_WIDE": 1, "EXCHANGE_SRC": 1, "FUSED_EXCHANGE": 0, "EARLY_COUNTS": 0, "RANK_MATCH": 1,
     "EXCHANGE_APART": 0},
    {"EXCHANGE_WIDE": 1, "EXCHANGE_SRC": 1, "FUSED_EXCHANGE": 0, "EARLY_COUNTS": 0, "RANK_MATCH": 0,
     "RANK_PACK": 2},
    {"EXCHANGE_WIDE": 1, "EXCHANGE_SRC": 1, "WARPS": 16, "ITEMS": 16, "num_warps": 16, "MAXNREG_WIDE": 0},
], ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_gpu_wide_exchange(cfg):
    # keys moved through shared memory (64-bit keys and packed key-position words: EXCHANGE_WIDE;
    # with their source positions beside them where a pass needs those: EXCHANGE_SRC) or gathered
    # back by source index, on every ranking form: keys-only sorts of 64-bit keys, torch's sort
    # (packed words in its middle and last passes; 64-bit keys with int32 positions), rows, pairs,
    # and segments (whose passes need the positions)
    with policy.override("radix_sort", cfg):
        for dtype in (torch.int64, torch.float64, getattr(torch, "uint64", torch.int64)):
            x = make_data("special" if dtype.is_floating_point else "random", (1 << 20) + 4099, dtype)
            for desc in (False, True):
                ref = torch.sort(_proxy(x), descending=desc, stable=True)
                k = rs.sort_keys(x, desc)
                assert torch.equal(_proxy(k).nan_to_num(7.0), ref.values.nan_to_num(7.0)), (dtype, desc)
                v, i = rs.sort(x, descending=desc)
                assert torch.equal(i, ref.indices), (dtype, desc)
        x = make_data("random", (1 << 20) + 77, torch.int64)
        k = rs.sort_keys(x, False, 8, 40)
        assert torch.equal(k, x[torch.sort((x >> 8) & ((1 << 32) - 1), stable=True).indices])
        k, v = rs.sort_pairs(x, x.to(torch.float64))
        assert torch.equal(k, torch.sort(x).values) and torch.equal(v, k.to(torch.float64))
        x = make_data("special", (1 << 21) + 5, torch.float32)
        for desc in (False, True):
            v, i = rs.sort(x, descending=desc)
            r = torch.sort(x, descending=desc, stable=True)
            assert torch.equal(i, r.indices) and torch.equal(v.view(torch.int32), r.values.view(torch.int32)), desc
        x = make_data("random", (64, 40000), torch.float32)
        v, i = rs.sort(x)
        r = torch.sort(x, stable=True)
        assert torch.equal(i, r.indices) and torch.equal(v, r.values)
        for dtype in (torch.float32, torch.int64):
            keys = make_data("special", 3 * 40000 + 9000, dtype)
            offsets = np.array([0, 40000, 49000, 89000, keys.numel()], dtype=np.int64)
            k, pos = rs.sort_segments(keys, offsets, segment_positions=True)
            for a, b in zip(offsets[:-1], offsets[1:]):
                r = torch.sort(keys[a:b], stable=True)
                assert torch.equal(pos[a:b], r.indices), (dtype, a)
                assert torch.equal(k[a:b].nan_to_num(7), r.values.nan_to_num(7)), (dtype, a)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 1},
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 0},
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 1, "EXCHANGE_KEYS": 0},
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 1, "FUSED_EXCHANGE": 0, "RECOMPUTE_WORD": 0},
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 1, "FUSED_EXCHANGE": 0, "EARLY_COUNTS": 0, "RANK_MATCH": 1,
     "EXCHANGE_APART": 0},
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 1, "WARPS": 16, "ITEMS": 8, "num_warps": 16},
    {"EXCHANGE_VALUES": 1, "EXCHANGE_WIDE": 1, "MAXNREG_WIDE": 80},
    {"EXCHANGE_VALUES": 0, "EXCHANGE_WIDE": 1},
], ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_gpu_exchange_values(cfg):
    # values carried through shared memory by their keys' ranks (EXCHANGE_VALUES), or gathered back by
    # position: 64- and 32-bit keys with 64- and 32-bit values (each width of the exchange buffer;
    # 64-bit keys cross shared memory only with EXCHANGE_WIDE, which the built-in fallback these
    # settings are merged over leaves off), values of other widths (gathered), both directions, a bit
    # range, ragged tails, and torch's sort of 64-bit keys (whose passes after the first carry the
    # positions as values); the settings' choice is checked first, so a path cannot go untested
    g = torch.Generator(device="cuda").manual_seed(3)
    pol = {**policy.op_policy("radix_sort").fallback_for("default"), **cfg}
    tile = pol["WARPS"] * pol["ITEMS"] * 32
    kw = rs._pass_kwargs(pol, torch.empty(8, dtype=torch.int64, device="cuda"), 1, pol["RADIX_BITS"], False, False,
                         tile, 1 << 20, True, 0, vin=torch.empty(8, dtype=torch.int64, device="cuda"))
    assert kw["VALUES_IN_SMEM"] == bool(cfg["EXCHANGE_VALUES"] and cfg["EXCHANGE_WIDE"]), kw
    with policy.override("radix_sort", cfg):
        for kdt, vdt, n in ((torch.int64, torch.int64, (1 << 20) + 4099), (torch.int64, torch.float32, 70001),
                            (torch.float32, torch.int64, (1 << 20) + 1), (torch.int32, torch.float32, 3 * 4096 + 5),
                            (torch.float64, torch.int32, 100003), (torch.int32, torch.int16, 50001),
                            (torch.uint8, torch.int64, 65537)):
            x = make_data("special" if kdt.is_floating_point else "few_unique", n, kdt)
            vals = torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", generator=g).to(vdt)
            for desc in (False, True):
                idx = torch.sort(_proxy(x), descending=desc, stable=True).indices
                out_k, out_v = rs.sort_pairs(x, vals, desc)
                assert torch.equal(out_k.view(torch.uint8) if kdt == torch.uint8 else out_k.nan_to_num(7.0),
                                   x[idx].view(torch.uint8) if kdt == torch.uint8 else x[idx].nan_to_num(7.0)), \
                    (kdt, vdt, desc)
                assert torch.equal(out_v.view(torch.uint8), vals[idx].view(torch.uint8)), (kdt, vdt, desc)
        x = make_data("random", (1 << 20) + 77, torch.int64)
        vals = torch.arange(x.numel(), device="cuda")
        k, v = rs.sort_pairs(x, vals, False, 8, 40)
        idx = torch.sort((x >> 8) & ((1 << 32) - 1), stable=True).indices
        assert torch.equal(k, x[idx]) and torch.equal(v, idx)
        for dtype in (torch.int64, torch.float64):
            x = make_data("special" if dtype.is_floating_point else "random", (1 << 20) + 4099, dtype)
            for desc in (False, True):
                v, i = rs.sort(x, descending=desc)
                assert torch.equal(i, torch.sort(x, descending=desc, stable=True).indices), (dtype, desc)


@pytest.mark.gpu
def test_gpu_single_program_small_path():
    with policy.override("radix_sort", {"SMALL_N": 4096}):
        for dtype in (torch.float32, torch.uint8, torch.bfloat16, torch.int32):
            for n in (2, 1000, 4096):
                x = make_data("special" if dtype.is_floating_point else "few_unique", n, dtype)
                for desc in (False, True):
                    v, i = rs.sort(x, descending=desc)
                    r = torch.sort(x, descending=desc, stable=True)
                    assert torch.equal(i, r.indices), (dtype, n, desc)


#: per float dtype: the bits (as the signed int of its width) of the canonical quiet NaN with the sign
#: bit set and of a NaN with a payload
_ODD_NANS = {torch.float16: (-512, 0x7C01), torch.bfloat16: (-64, 0x7F81), torch.float32: (-0x400000, 0x7F800001),
             torch.float64: (-(1 << 51), 0x7FF0000000000001)}


@pytest.mark.gpu
@pytest.mark.parametrize("read_back", [False, True], ids=["queued", "read-back"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_gpu_float_keys_with_and_without_special_values(dtype, read_back, monkeypatch):
    # the upfront histogram counts the keys whose bits the canonicalisation changes (-0.0, NaNs but the
    # canonical +qNaN); when the counts are read back and there is none, the passes after the first
    # skip the canonicalisation. One such key anywhere (first, middle, last) must switch it back on.
    n = (1 << 20) + 17
    canonical_flags = []
    if read_back:
        select = policy.select
        monkeypatch.setattr(policy, "select", lambda op, *a, **kw: (
            {**select(op, *a, **kw).as_dict(), "SKIP_PLACES_MIN_N": 0} if op == "radix_sort" else select(op, *a, **kw)))
        real_launch = rs.launch
        monkeypatch.setattr(rs, "launch", lambda k, *a, **kw: (
            canonical_flags.append(kw["CANONICAL"]) if k is rs._onesweep_gluon_kernel else None,
            real_launch(k, *a, **kw))[1])
    base = torch.randn(n, device="cuda").to(dtype)
    base = torch.where(base == 0, torch.ones_like(base), base)   # no -0.0 (nor +0.0)
    int_type = {2: torch.int16, 4: torch.int32, 8: torch.int64}[base.element_size()]
    cases = {"none": base}
    for name, pos, val in (("-0.0 last", n - 1, -0.0), ("NaN first", 0, float("nan")), ("-NaN middle", n // 2, None),
                           ("payload NaN middle", n // 2, None)):
        x = base.clone()
        if val is None:   # (set through the bits: a Python float NaN would be made canonical)
            bits = _ODD_NANS[dtype][0 if name.startswith("-") else 1]
            x.view(int_type)[pos] = bits
        else:
            x[pos] = val
        x[pos // 3] = 0.0   # a +0.0 earlier: -0.0 and +0.0 must stay in input order
        cases[name] = x
    for name, x in cases.items():
        for desc in (False, True):
            # reference: torch's CPU sort (every NaN after +inf, as documented); torch's CUDA sort puts
            # a NaN with the sign bit set first
            r = torch.sort(x.cpu(), descending=desc, stable=True)
            canonical_flags.clear()
            v, i = rs.sort(x, descending=desc)
            assert torch.equal(i.cpu(), r.indices), (name, desc)
            canonical_flags.clear()
            k = rs.sort_keys(x, desc)
            # the original bits, in torch's order
            assert torch.equal(k.cpu().view(int_type), x.cpu()[r.indices].view(int_type)), (name, desc)
            if read_back:   # the keys-only passes after the early first one: plain flip iff nothing changes
                assert len(canonical_flags) >= 2 and canonical_flags[0], (name, canonical_flags)
                plain = name in ("none", "NaN first")
                assert all(f is (not plain) for f in canonical_flags[1:]), (name, canonical_flags)


@pytest.mark.gpu
def test_gpu_queued_sorts_repeated_calls(monkeypatch):
    # sorts below SKIP_PLACES_MIN_N re-launch remembered kernels (per size, dtypes, alignment and
    # policy): fresh data on every call, an unaligned input, and policy changes in between
    rs._QUEUED_PLANS.clear()
    rs._SORT_REPLAYS.clear()
    replays = count_calls(monkeypatch, rs, "_replay_sort")
    for n in ((1 << 20) + 1, 3 * 4096 + 5):
        for dtype in (torch.float32, torch.int32, torch.float16):
            for rep in range(3):
                x = make_data("special" if dtype.is_floating_point else "random", n + 1, dtype)
                x = x[1:] if rep == 1 else x[:n]      # rep 1: not 16-byte aligned
                for desc in (False, True):
                    v, i = rs.sort(x, descending=desc)
                    r = torch.sort(x, descending=desc, stable=True)
                    assert torch.equal(i, r.indices), (n, dtype, rep, desc)
                    assert torch.equal(v.nan_to_num(7), r.values.nan_to_num(7)), (n, dtype, rep, desc)
                k, pv = rs.sort_pairs(x, x.to(torch.float64))
                r = torch.sort(x, stable=True)
                assert torch.equal(pv.nan_to_num(7), r.values.to(torch.float64).nan_to_num(7)), (n, dtype, rep)
    assert rs._QUEUED_PLANS, "no sort took the queued path"
    assert rs._SORT_REPLAYS, "no sort with positions was remembered for replay"
    assert replays, "no remembered sort was replayed"
    # replays write their own fresh buffers and read the new input: earlier results stay intact; rows
    # sorted as one problem (e.g. the vocabulary rows of a batch of logits) replay too
    for shape in ((1 << 20) + 1,), (32, 32000), (3, 5001):
        xs = [make_data("special", math.prod(shape), torch.float32).view(shape) for _ in range(3)]
        outs = [rs.sort(x, descending=True) for x in xs]
        for x, (v, i) in zip(xs, outs):
            r = torch.sort(x, descending=True, stable=True)
            assert torch.equal(i, r.indices) and torch.equal(v.nan_to_num(7), r.values.nan_to_num(7)), shape
    assert any(key[1] is not None for key in rs._SORT_REPLAYS), "no rows sort was remembered"
    for rep in range(2):   # (the first call records, the second replays)
        before = len(replays)
        x = make_data("random", 32 * 32000, torch.float32).view(32, 32000)
        v, i = rs.sort(x)
        r = torch.sort(x, stable=True)
        assert torch.equal(i, r.indices) and torch.equal(v, r.values)
    assert len(replays) == before + 1
    x = make_data("random", (1 << 20) + 1, torch.int32)
    r = torch.sort(x, stable=True)
    for cfg in ({"ITEMS": 8}, {"SKIP_PLACES_MIN_N": 0}, {}):
        with policy.override("radix_sort", cfg):
            for _ in range(2):
                v, i = rs.sort(x)
                assert torch.equal(i, r.indices) and torch.equal(v, r.values), cfg


@pytest.mark.gpu
def test_gpu_segmented_sorts_replayed(monkeypatch):
    # segmented sorts (many long rows; ragged segments) replay their remembered launches: rows keep
    # their tables, ragged segments of the same count but other offsets compute theirs afresh; fresh
    # data and an unaligned input every time; then rows and ragged segments of one size and count
    # alternate (the kept tables are those of the rows: the ragged ones must not take them)
    rs._SORT_REPLAYS.clear()
    replays = count_calls(monkeypatch, rs, "_replay_sort")
    pol = policy.select("radix_sort", torch.device("cuda"), "small")
    tile = pol["WARPS"] * pol["ITEMS"] * 32   # (keys per pass tile: every segment holds one or more)
    for rep in range(3):
        x = make_data("special", 300 * (tile + 3) + 1, torch.float32)
        x = (x[1:] if rep == 1 else x[:-1]).view(300, tile + 3)
        for desc in (False, True):
            with _long_rows_policy():
                v, i = rs.sort(x, dim=-1, descending=desc)
            r = torch.sort(x, dim=-1, descending=desc, stable=True)
            assert torch.equal(i, r.indices) and torch.equal(v.nan_to_num(7), r.values.nan_to_num(7)), (rep, desc)
    assert len(replays) == 2   # (rep 2 replays rep 0, both directions; rep 1, unaligned, records)
    g = np.random.default_rng(5)
    for rep in range(4):
        lengths = tile + g.multinomial(7 * tile + 5, [1 / 7] * 7)   # (the same total: one size, other offsets)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        x = make_data("few_unique", int(offsets[-1]), torch.int32)
        v, i = rs.sort_segments(x, offsets, segment_positions=rep % 2 == 1)
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            r = torch.sort(x[a:b], stable=True)
            assert torch.equal(v[a:b], r.values) and torch.equal(i[a:b], r.indices + (0 if rep % 2 else a)), rep
    assert len(replays) == 2 + 2   # (reps 2 and 3 replay 0 and 1: other tables, computed afresh)
    rows = make_data("random", 8 * 2 * tile, torch.int32)
    for rep in range(2):
        v, i = rs.sort_segments(rows, np.arange(9, dtype=np.int64) * 2 * tile, segment_positions=True)
        r = torch.sort(rows.view(8, 2 * tile), dim=-1, stable=True)
        assert torch.equal(v.view(8, -1), r.values) and torch.equal(i.view(8, -1), r.indices), rep
        offsets = np.concatenate([[0], np.cumsum(tile + g.multinomial(8 * tile, [1 / 8] * 8))]).astype(np.int64)
        v, i = rs.sort_segments(rows, offsets, segment_positions=True)
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            r = torch.sort(rows[a:b], stable=True)
            assert torch.equal(v[a:b], r.values) and torch.equal(i[a:b], r.indices), rep
    assert len(replays) == 4 + 3


@pytest.mark.gpu
@pytest.mark.parametrize("b,length", [(16, (1 << 20) + 3), (256, 5000), (300, 4099)])
def test_gpu_long_rows(b, length):
    # rows past the segmented sort's tiles: up to 256 rows as one problem with a pass over the row
    # ids, more by a second sort of the row ids
    for dtype in (torch.float32, torch.int16):
        x = make_data("special" if dtype.is_floating_point else "few_unique", b * length, dtype).view(b, length)
        for desc in (False, True):
            with _long_rows_policy():
                v, i = rs.sort(x, dim=-1, descending=desc)
            r = torch.sort(x, dim=-1, descending=desc, stable=True)
            assert torch.equal(i, r.indices), (dtype, desc)
            assert torch.equal(v.nan_to_num(7), r.values.nan_to_num(7)), (dtype, desc)


@pytest.mark.gpu
@pytest.mark.parametrize("read_back", [True, False], ids=["read-back", "no-read-back"])
def test_gpu_no_uninitialised_buffer_read(monkeypatch, read_back):
    # every buffer a large sort allocates uninitialised comes poisoned here (all bits set: in a
    # look-back word, the flags of an inclusive word of either parity): none may be read before it
    # is written (the look-back words and tile counters must be zeroed)
    real_empty = torch.empty

    def poisoned_empty(*args, **kwargs):
        t = real_empty(*args, **kwargs)
        if t.numel():
            t.reshape(-1).view(torch.uint8).fill_(255)
        return t

    monkeypatch.setattr(rs, "_STATUS_ONCE_WORDS", 0)
    pol = policy.select("radix_sort", torch.device("cuda"), "small")
    tile = pol["WARPS"] * pol["ITEMS"] * 32
    x = make_data("random", 37 * tile + 123, torch.int32)
    ref = torch.sort(x, stable=True)
    with policy.override("radix_sort", {**pol.as_dict(), "SKIP_PLACES_MIN_N": 0 if read_back else 1 << 30}):
        monkeypatch.setattr(torch, "empty", poisoned_empty)
        keys = rs.sort_keys(x)
        v, i = rs.sort(x)
        monkeypatch.setattr(torch, "empty", real_empty)
    assert torch.equal(keys, ref.values)
    assert torch.equal(v, ref.values) and torch.equal(i, ref.indices)
